/*
 * stockade: the administrator's command line.  Reads logs and policy,
 * talks to the daemons' sockets; needs no privilege beyond read access to
 * what it is pointed at.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "log.h"
#include "version.h"

static void
usage_print(FILE *f)
{
	fprintf(f,
	    "usage: stockade audit keygen DIR\n"
	    "       stockade audit verify DIR [--pubkey FILE] [--checkpoints DIR]\n"
	    "       stockade audit verify --bundle DIR|TAR [--pubkey FILE]\n"
	    "       stockade audit verify --fleet --witness DIR|FILE ... "
	    "[--pubkey FILE ...]\n"
	    "                           [--json] DIR ...\n"
	    "       stockade audit verify --fleet --bundle DIR|TAR "
	    "[--pubkey FILE ...]\n"
	    "       stockade audit evidence [DIR ...] -o DIR|TAR [--session ID]\n"
	    "                           [--principal P] [--since TS] [--until TS]\n"
	    "                           [--pubkey FILE ...]\n"
	    "       stockade audit send [--socket PATH] [--async] [--window N]\n"
	    "       stockade audit tail [DIR] [-n N] [-f] [--session ID] [--event TYPE]\n"
	    "                           [--since SEQ]\n"
	    "       stockade audit export [DIR] --format ecs|ocsf|hec [--since SEQ]\n"
	    "                           [--session ID] [--event TYPE]\n"
	    "       stockade audit status [--socket PATH]\n"
	    "       stockade net attach [--socket PATH] --netns PATH|NAME --policy NAME\n"
	    "                           [--sandbox ID] [--session ID] [--principal P]\n"
	    "       stockade net detach [--socket PATH] (--netns PATH|NAME | --sandbox ID)\n"
	    "       stockade net status [--socket PATH]\n"
	    "       stockade rules check DIR\n"
	    "       stockade status [--audit-socket PATH] [--netguard-socket PATH]\n"
	    "                       [--mcp-state DIR] [--json]\n"
	    "       stockade fleet status --witness DIR|FILE ... [--log DIR ...]\n"
	    "                       [--mcp-state DIR ...] [--json]\n"
	    "       stockade version\n");
}

static int
usage(void)
{
	usage_print(stderr);
	return EXIT_USAGE;
}

/*
 * -h or --help anywhere before "--": the usage on stdout, and nothing
 * done.  Asked here, once, so that no subcommand can take it for an
 * argument (keygen made a folder named --help).
 */
static int
help_asked(int argc, char *argv[])
{
	int	 i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	return 0;
}

int
main(int argc, char *argv[])
{
	log_init("stockade", 1, 0);
	if (argc < 2)
		return usage();
	if (help_asked(argc, argv)) {
		usage_print(stdout);
		return fflush(stdout) == 0 ? 0 : EXIT_USAGE;
	}
	if (strcmp(argv[1], "audit") == 0)
		return cmd_audit(argc - 1, argv + 1);
	if (strcmp(argv[1], "net") == 0)
		return cmd_net(argc - 1, argv + 1);
	if (strcmp(argv[1], "rules") == 0)
		return cmd_rules(argc - 1, argv + 1);
	if (strcmp(argv[1], "status") == 0)
		return cmd_status(argc - 1, argv + 1);
	if (strcmp(argv[1], "fleet") == 0)
		return cmd_fleet(argc - 1, argv + 1);
	if (strcmp(argv[1], "version") == 0) {
		printf("stockade %s\n", STOCKADE_VERSION);
		return 0;
	}
	return usage();
}
