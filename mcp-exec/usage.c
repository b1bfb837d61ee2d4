/*
 * The usage text and root check `mcp-exec` and `mcp-exec-server` share.
 * Trusts nothing; reads only getuid().
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "usage.h"

static void
usage_print(FILE *f)
{
	fprintf(f,
	    "usage: mcp-exec [-dhnv] [--stdio | --http [ADDR:]PORT] "
	    "[--rules DIR]\n"
	    "                [--profile NAME] [--state-dir DIR] "
	    "[--audit-socket PATH]\n"
	    "                [--netguard-socket PATH] [--node-id ID]\n"
	    "       mcp-exec run [-h] [--rules DIR] [--profile NAME] "
	    "[--file PATH]...\n"
	    "                    [--timeout-ms N] [--state-dir DIR] "
	    "[--artifacts DIR]\n"
	    "                    [--audit-socket PATH] -- CMD [ARG...]\n");
}

void
mcpexec_usage(void)
{
	usage_print(stderr);
	exit(2);
}

void
mcpexec_help(void)
{
	usage_print(stdout);
	exit(fflush(stdout) == 0 ? 0 : 1);
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
