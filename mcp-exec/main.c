/*
 * mcp-exec: runs untrusted code in sandboxes.  `mcp-exec run` runs one
 * command in a fresh sandbox and prints one JSON object; every other
 * command line is the MCP server's, which lives in mcp-exec-server (exec'd
 * from here) so that a one-shot run links none of its HTTP, TLS and OAuth
 * libraries.  Runs as root (namespaces, cgroups, uid maps); trusts its
 * command line and the rules directory, nothing sandboxed code sends it.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "preflight.h"
#include "run.h"
#include "run_audit.h"
#include "sessions/profile.h"
#include "usage.h"
#include "util.h"

/* Loads mcp-exec.yaml, applies --state-dir, loads the profile. */
static int
load_settings(const char *rules, const char *state, const char *profile,
    struct mcpexec_conf *conf, struct profile *prof)
{
	if (mcpexec_conf_load(rules, conf) == -1)
		return -1;
	if (state != NULL && (state[0] != '/' ||
	    xsnprintf(conf->state_dir, sizeof(conf->state_dir), "%s", state) ==
	    -1 || xsnprintf(conf->idmap.lock_dir, sizeof(conf->idmap.lock_dir),
	    "%s/uids", state) == -1)) {
		fprintf(stderr, "mcp-exec: --state-dir must be an absolute "
		    "path\n");
		return -1;
	}
	return profile_load(rules, profile ? profile : conf->default_profile,
	    prof);
}

/* The run's hooks: the audit's ack gates the command; its result is sent
 * while the sandbox is torn down. */
struct run_hooks {
	struct run_audit	*ra;
	struct run_request	*rq;
};

static int
run_ready(void *arg, char *err, size_t errlen)
{
	struct run_hooks	*h = arg;

	return run_audit_confirm(h->ra, h->rq, err, errlen);
}

static void
run_done(void *arg, const json_t *result)
{
	struct run_hooks	*h = arg;

	run_audit_result(h->ra, h->rq, result, NULL);
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
		{ "audit-socket", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct run_audit	 ra;
	struct run_hooks	 hooks = { &ra, NULL };
	struct mcpexec_conf	 conf;
	struct profile		 prof;
	struct run_request	 rq;
	struct seccomp_prog	 filter;
	const char		*rules = MCPEXEC_DEFAULT_RULES, *profile = NULL;
	const char		*state = NULL, *sock = NULL;
	char			 err[1024], id[SANDBOX_ID_HEX + 1];
	char			 session[SANDBOX_ID_HEX + 8];
	uint64_t		 v;
	json_t			*result;
	int			 ch;

	memset(&rq, 0, sizeof(rq));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			mcpexec_help();
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
				mcpexec_usage();
			rq.timeout_ms = (unsigned)v;
			break;
		case 's':
			state = optarg;
			break;
		case 'a':
			rq.artifacts_dir = optarg;
			break;
		case 'A':
			if (optarg[0] != '/') {
				fprintf(stderr, "mcp-exec: --audit-socket takes "
				    "an absolute path\n");
				return 2;
			}
			sock = optarg;
			break;
		default:
			mcpexec_usage();
		}
	}
	if (optind >= argc || argc - optind > SANDBOX_ARGS_MAX)
		mcpexec_usage();
	if (mcpexec_need_root() == -1 ||
	    load_settings(rules, state, profile, &conf, &prof) == -1)
		return 1;
	if (run_state_init(&conf, err, sizeof(err)) == -1 ||
	    cgroup_init(&conf.cgroup, err, sizeof(err)) == -1) {
		fprintf(stderr, "mcp-exec: %s\n", err);
		return 1;
	}
	(void)sandbox_sweep(conf.state_dir, &conf.cgroup, NULL, NULL);
	if (prof.runtime == SANDBOX_WASM)
		sandbox_seccomp_builtin_wasm(&filter);
	else
		sandbox_seccomp_builtin(&filter);
	rq.conf = &conf;
	rq.profile = &prof;
	rq.seccomp = &filter;
	rq.argv = (const char *const *)argv + optind;
	rq.caller_argv = argv;
	/* Audited under the sandbox's id, before anything runs. */
	sandbox_new_id(id);
	rq.id = id;
	snprintf(session, sizeof(session), "run-%s", id);
	if (run_audit_start(&ra, &rq, sock ? sock :
	    conf.server.audit_socket, session, err, sizeof(err)) == -1) {
		sandbox_seccomp_free(&filter);
		fprintf(stderr, "mcp-exec: not run: the audit trail is "
		    "unavailable (%s)\n", err);
		return 1;
	}
	hooks.rq = &rq;
	rq.ready = run_ready;
	rq.done = run_done;
	rq.hook_arg = &hooks;
	result = run_once(&rq, err, sizeof(err));
	run_audit_end(&ra, &rq, result, result ? NULL : err);
	sandbox_seccomp_free(&filter);
	if (result == NULL && ra.refused) {
		fprintf(stderr, "mcp-exec: not run: the audit trail is "
		    "unavailable (%s)\n", err);
		return 1;
	}
	if (result == NULL) {
		fprintf(stderr, "mcp-exec: %s\n", err);
		return 1;
	}
	json_dumpf(result, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(result);
	return fflush(stdout) == 0 ? 0 : 1;
}

/*
 * Every command but `run` is the server's: exec mcp-exec-server from this
 * program's own directory, opened once and checked (a regular file that
 * neither group nor others may write) before the exec of that very
 * descriptor, so a path swapped in between is never run.
 */
static int
exec_server(char *argv[])
{
	extern char	**environ;
	struct stat	 st;
	char		 exe[PATH_MAX], path[PATH_MAX], *slash;
	ssize_t		 n;
	int		 fd;

	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) == -1) {
		log_warn("/proc/self/exe");
		return 1;
	}
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) != NULL)
		*slash = '\0';
	if (xsnprintf(path, sizeof(path), "%s/%s", exe, MCPEXEC_SERVER) == -1) {
		log_warnx("%s: path too long", exe);
		return 1;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		log_warn("%s (install it beside mcp-exec)", path);
		return 1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_warnx("%s: not a regular file, or writable by group or "
		    "others", path);
		close(fd);
		return 1;
	}
	fexecve(fd, argv, environ);
	log_warn("exec %s", path);
	close(fd);
	return 1;
}

int
main(int argc, char *argv[])
{
	log_init("mcp-exec", 1, 0);
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	return exec_server(argv);
}
