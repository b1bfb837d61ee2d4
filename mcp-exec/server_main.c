/*
 * mcp-exec-server: the MCP server (stdio by default, Streamable HTTP with
 * --http), which `mcp-exec` execs for every command but `run`.  It is a
 * program of its own so that a one-shot `mcp-exec run` never loads the
 * HTTP, TLS and OAuth libraries only the server uses (docs/benchmarks.md).
 * Runs as root; trusts its command line and the rules directory, nothing
 * clients or sandboxed code send it.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "drain.h"
#include "evbase.h"
#include "log.h"
#include "usage.h"
#include "ops/status.h"
#include "preflight.h"
#include "protocol/listen.h"
#include "protocol/task.h"
#include "reload.h"
#include "run.h"
#include "sessions/fleet.h"
#include "sessions/fleet_quota.h"
#include "sessions/profile.h"
#include "sessions/quota.h"
#include "tools/authz.h"
#include "sessions/inflight.h"
#include "sessions/persist.h"
#include "sessions/pool.h"
#include "sessions/server.h"
#include "sessions/session.h"
#include "transport/http.h"
#include "transport/stdio.h"
#include "util.h"
#include "version.h"

/* How long the loop runs on at a stop so closing results go out. */
#define LISTEN_FLUSH_US	200000

/* A sandbox a dead mcp-exec left behind was removed. */
static void
note_swept(void *arg, const char *id)
{
	json_array_append_new(arg, json_string(id));
}

/*
 * What dead mcp-execs left: at start, for a server that died before us;
 * then at every reap, for what was still busy then (a cgroup whose
 * processes were dying) and for an `mcp-exec run` killed meanwhile.
 */
static void
sweep_remains(struct server *srv)
{
	json_t	*swept = json_array();

	if (sandbox_sweep(srv->conf.state_dir, &srv->conf.cgroup, note_swept,
	    swept) > 0)
		server_audit(srv, json_pack("{s:s, s:s, s:o}", "event",
		    "cleanup", "program", "mcp-exec", "removed", swept));
	else
		json_decref(swept);
}

static void
reap_cb(evutil_socket_t fd, short ev, void *arg)
{
	sessions_reap(arg);
	sweep_remains(arg);
}

/* Every session ends with reason; then the loop, soon. */
static void
stop(struct server *srv, const char *reason)
{
	struct timeval	 flush = { 0, LISTEN_FLUSH_US };
	int		 drained = srv->draining;

	srv->stopping = 1;
	pool_free(srv);
	sessions_close_all(srv, reason);
	/* Open subscriptions get their closing result, and a moment for
	 * it to reach the client before the streams are torn down; so do
	 * the last answers of a drain. */
	event_base_loopexit(srv->base, listen_shutdown() > 0 || drained ?
	    &flush : NULL);
}

static void
signal_cb(evutil_socket_t sig, short ev, void *arg)
{
	struct server	*srv = arg;

	/* A node a router feeds lets its calls finish (drain.c). */
	if (sig == SIGTERM && drain_begin(srv, stop) == 0)
		return;
	log_info("%s: stopping", strsignal((int)sig));
	stop(srv, "mcp-exec stopped");
}

/* The node a fleet knows this server as, on its start and stop records. */
static json_t *
with_node(const struct server *srv, json_t *ev)
{
	if (ev != NULL && srv->conf.fleet.node_id[0] != '\0')
		json_object_set_new(ev, "node",
		    json_string(srv->conf.fleet.node_id));
	return ev;
}

/* A hangup reloads the rules; sessions keep going with their own profile. */
static void
hup_cb(evutil_socket_t sig, short ev, void *arg)
{
	(void)server_reload(arg);
}

static int
cmd_serve(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "stdio", no_argument, NULL, 'i' },
		{ "http", required_argument, NULL, 'H' },
		{ "rules", required_argument, NULL, 'r' },
		{ "profile", required_argument, NULL, 'p' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "audit-socket", required_argument, NULL, 'A' },
		{ "netguard-socket", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ "node-id", required_argument, NULL, 'I' },
		{ NULL, 0, NULL, 0 }
	};
	struct server	 srv;
	struct server_opts *o = &srv.opts;
	struct event	*sigs[3] = { NULL, NULL, NULL };
	struct timeval	 tv;
	char		 err[1024];
	int		 ch, check_only = 0, verbose = 0, i, st = 1;
	struct http_tr	*http = NULL;
	const char	*http_listen = NULL;
	int		 use_stdio = 0;

	memset(&srv, 0, sizeof(srv));
	o->rules_dir = MCPEXEC_DEFAULT_RULES;
	while ((ch = getopt_long(argc, argv, "dhnv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			break;
		case 'h':
			mcpexec_help();
		case 'i':
			use_stdio = 1;
			break;
		case 'H':
			http_listen = optarg;
			break;
		case 'n':
			check_only = 1;
			break;
		case 'v':
			verbose++;
			break;
		case 'r':
			o->rules_dir = optarg;
			break;
		case 'p':
			o->profile = optarg;
			break;
		case 's':
			o->state_dir = optarg;
			break;
		case 'A':
			o->audit_socket = optarg;
			break;
		case 'N':
			o->netguard_socket = optarg;
			break;
		case 'I':
			o->node_id = optarg;
			break;
		default:
			mcpexec_usage();
		}
	}
	if (optind != argc || (use_stdio && http_listen != NULL))
		mcpexec_usage();
	if ((o->state_dir && o->state_dir[0] != '/') ||
	    (o->audit_socket && o->audit_socket[0] != '/') ||
	    (o->netguard_socket && o->netguard_socket[0] != '/')) {
		fprintf(stderr, "mcp-exec: --state-dir, --audit-socket and "
		    "--netguard-socket take absolute paths\n");
		return 1;
	}
	if (o->node_id != NULL && !fleet_node_ok(o->node_id)) {
		fprintf(stderr, "mcp-exec: --node-id %s: a DNS label (a-z, "
		    "0-9, '-'; 1 to %d; no '-' at either end)\n", o->node_id,
		    FLEET_NODE_MAX - 1);
		return 1;
	}
	/* stdout is the protocol's: logs go to stderr. */
	log_init("mcp-exec", 1, verbose);
	o->http = http_listen != NULL;
	if (server_load(&srv) == -1) {
		if (!check_only)
			server_audit_load_failed();
		goto out;
	}
	/* --http: stdin is not read; the server runs until SIGTERM. */
	if (http_listen != NULL &&
	    (http = transport_http_new(&srv, http_listen)) == NULL)
		goto out;
	/* Every path it will need, now rather than at the first call. */
	for (i = 0; i < (int)srv.nprofiles; i++)
		if (preflight_check(&srv.conf, &srv.profiles[i], verbose ||
		    check_only) > 0) {
			fprintf(stderr, "mcp-exec: %s: not usable as "
			    "configured\n", srv.conf.path);
			goto out;
		}
	if (check_only) {
		fprintf(stderr, "configuration OK\n");
		st = 0;
		goto out;
	}
	if (mcpexec_need_root() == -1)
		goto out;
	/* Cgroups once, here: each session's sandboxes go beside the others. */
	if (run_state_init(&srv.conf, err, sizeof(err)) == -1 ||
	    cgroup_init(&srv.conf.cgroup, err, sizeof(err)) == -1) {
		fprintf(stderr, "mcp-exec: %s\n", err);
		goto out;
	}
	/* Quota usage so far, from before a restart too. */
	srv.quota = quota_open(srv.conf.state_dir);
	authz_configure_quotas(srv.authz, srv.quota);
	signal(SIGPIPE, SIG_IGN);
	sandbox_seccomp_builtin(&srv.seccomp);
	sandbox_seccomp_builtin_wasm(&srv.seccomp_wasm);
	srv.caller_argv = argv;
	LIST_INIT(&srv.sessions);
	if ((srv.base = evbase_new(0)) == NULL)
		fatalx("event_base_new");
	audit_link_init(&srv.audit, srv.base, srv.conf.server.audit_socket,
	    "mcp-exec");
	/* Like netguard's: a reviewer sees when calls could have happened. */
	server_audit(&srv, with_node(&srv, json_pack("{s:s, s:s, s:s, s:s, "
	    "s:s}", "event", "daemon_start", "program", "mcp-exec", "version",
	    STOCKADE_VERSION, "transport", http != NULL ? "http" : "stdio",
	    "rules_dir", o->rules_dir)));
	server_audit_loaded(&srv);
	/* fleet.redis: quotas shared with the other nodes; unset: nothing
	 * connects. */
	srv.fleet = fleet_quota_open(&srv, &srv.conf.fleet);
	sweep_remains(&srv);
	srv.reaper = event_new(srv.base, -1, EV_PERSIST, reap_cb, &srv);
	tv.tv_sec = srv.conf.server.reap_interval_s;
	tv.tv_usec = 0;
	event_add(srv.reaper, &tv);
	sigs[0] = evsignal_new(srv.base, SIGTERM, signal_cb, &srv);
	sigs[1] = evsignal_new(srv.base, SIGINT, signal_cb, &srv);
	sigs[2] = evsignal_new(srv.base, SIGHUP, hup_cb, &srv);
	for (i = 0; i < 3; i++)
		event_add(sigs[i], NULL);
	/* Tasks of an earlier run: what was still working is failed. */
	if (task_init(&srv, err, sizeof(err)) == -1) {
		fprintf(stderr, "mcp-exec: tasks: %s\n", err);
		goto out;
	}
	if (status_sweep(&srv) > 0)
		log_info("sessions of a server that died recorded as closed");
	/* Executions a server that died left without an end get theirs. */
	if (inflight_open(&srv, err, sizeof(err)) == -1) {
		fprintf(stderr, "mcp-exec: in-flight journal: %s\n", err);
		goto out;
	}
	/* What sessions publish goes to state_dir for `stockade status`. */
	srv.published = status_publish;
	status_publish(&srv);
	pool_init(&srv);	/* builds from the loop, once it runs */
	if ((http != NULL ? transport_http_start(http) :
	    transport_stdio_start(&srv)) == 0) {
		evbase_dispatch(srv.base);
		st = 0;
	}
	srv.stopping = 1;
	pool_free(&srv);
	(void)listen_shutdown();
	task_shutdown();
	sessions_close_all(&srv, "mcp-exec stopped");
	if (http == NULL)
		transport_stdio_stop();
	persist_flush(&srv);	/* the usage the timer had not written yet */
	status_unpublish(&srv);
	server_audit(&srv, drain_record(with_node(&srv, json_pack("{s:s, s:s, "
	    "s:s, s:s}", "event", "daemon_stop", "program", "mcp-exec",
	    "version", STOCKADE_VERSION, "transport", http != NULL ? "http" :
	    "stdio"))));
out:
	transport_http_free(http);
	for (i = 0; i < 3; i++)
		if (sigs[i] != NULL)
			event_free(sigs[i]);
	if (srv.reaper != NULL)
		event_free(srv.reaper);
	drain_free();
	if (srv.base != NULL) {
		fleet_quota_close(srv.fleet);	/* leases go to the others */
		audit_link_shutdown(&srv.audit);
		inflight_close(&srv);	/* after the last end's ack */
		sandbox_seccomp_free(&srv.seccomp);
		sandbox_seccomp_free(&srv.seccomp_wasm);
		event_base_free(srv.base);
	}
	server_unload(&srv);
	quota_close(srv.quota);
	json_decref(srv.live);
	return st;
}

int
main(int argc, char *argv[])
{
	log_init("mcp-exec", 1, 0);
	return cmd_serve(argc, argv);
}
