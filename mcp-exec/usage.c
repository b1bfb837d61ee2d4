/*
 * The usage text and root check `mcp-exec` and `mcp-exec-server` share.
 * Trusts nothing; reads only getuid().
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "usage.h"

void
mcpexec_usage(void)
{
	fprintf(stderr,
	    "usage: mcp-exec [-dnv] [--stdio | --http [ADDR:]PORT] "
	    "[--rules DIR]\n"
	    "                [--profile NAME] [--state-dir DIR] "
	    "[--audit-socket PATH]\n"
	    "                [--netguard-socket PATH] [--node-id ID]\n"
	    "       mcp-exec run [--rules DIR] [--profile NAME] [--file PATH]...\n"
	    "                    [--timeout-ms N] [--state-dir DIR] "
	    "[--artifacts DIR]\n"
	    "                    [--audit-socket PATH] -- CMD [ARG...]\n");
	exit(2);
}

int
mcpexec_need_root(void)
{
	if (getuid() == 0)
		return 0;
	fprintf(stderr, "mcp-exec: must run as root (it creates user "
	    "namespaces, cgroups and uid maps)\n");
	return -1;
}
