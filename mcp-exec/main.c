/*
 * mcp-exec: runs untrusted code in sandboxes.  `mcp-exec run` runs one
 * command in a fresh sandbox and prints one JSON object describing what
 * happened.  Runs as root (it creates namespaces, cgroups and uid maps);
 * trusts its command line and the rules directory, nothing the sandboxed
 * code produces.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "profile.h"
#include "run.h"
#include "util.h"

#define DEFAULT_RULES	"/etc/stockade/rules"

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr,
	    "usage: mcp-exec run [--rules DIR] [--profile NAME] [--file PATH]...\n"
	    "                    [--timeout-ms N] [--state-dir DIR] "
	    "[--artifacts DIR] -- CMD [ARG...]\n");
	exit(2);
}

static int
cmd_run(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "rules", required_argument, NULL, 'r' },
		{ "profile", required_argument, NULL, 'p' },
		{ "file", required_argument, NULL, 'f' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "artifacts", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 }
	};
	struct mcpexec_conf	 conf;
	struct profile		 prof;
	struct run_request	 rq;
	struct seccomp_prog	 filter;
	const char		*rules = DEFAULT_RULES, *profile = NULL;
	const char		*state = NULL;
	char			 err[1024];
	uint64_t		 v;
	json_t			*result;
	int			 ch;

	memset(&rq, 0, sizeof(rq));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			rules = optarg;
			break;
		case 'p':
			profile = optarg;
			break;
		case 'f':
			if (rq.nfiles == RUN_FILES_MAX) {
				fprintf(stderr, "mcp-exec: at most %d --file\n",
				    RUN_FILES_MAX);
				return 2;
			}
			rq.files[rq.nfiles++] = optarg;
			break;
		case 't':
			if (parse_u64(optarg, 1, 3600000, &v) == -1)
				usage();
			rq.timeout_ms = (unsigned)v;
			break;
		case 's':
			state = optarg;
			break;
		case 'a':
			rq.artifacts_dir = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || argc - optind > SANDBOX_ARGS_MAX)
		usage();
	if (getuid() != 0) {
		fprintf(stderr, "mcp-exec: must run as root (it creates user "
		    "namespaces, cgroups and uid maps)\n");
		return 1;
	}
	if (mcpexec_conf_load(rules, &conf) == -1)
		return 1;
	if (state != NULL) {
		if (state[0] != '/' || xsnprintf(conf.state_dir,
		    sizeof(conf.state_dir), "%s", state) == -1 ||
		    xsnprintf(conf.idmap.lock_dir, sizeof(conf.idmap.lock_dir),
		    "%s/uids", state) == -1) {
			fprintf(stderr, "mcp-exec: --state-dir must be an "
			    "absolute path\n");
			return 2;
		}
	}
	if (profile_load(rules, profile ? profile : conf.default_profile,
	    &prof) == -1)
		return 1;
	if (run_state_init(&conf, err, sizeof(err)) == -1) {
		fprintf(stderr, "mcp-exec: %s\n", err);
		return 1;
	}
	sandbox_seccomp_builtin(&filter);
	rq.conf = &conf;
	rq.profile = &prof;
	rq.seccomp = &filter;
	rq.argv = (const char *const *)argv + optind;
	rq.caller_argv = argv;
	result = run_once(&rq, err, sizeof(err));
	sandbox_seccomp_free(&filter);
	if (result == NULL) {
		fprintf(stderr, "mcp-exec: %s\n", err);
		return 1;
	}
	json_dumpf(result, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(result);
	return fflush(stdout) == 0 ? 0 : 1;
}

int
main(int argc, char *argv[])
{
	log_init("mcp-exec", 1, 0);
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	usage();
}
