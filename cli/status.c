/*
 * `stockade status`: the suite at a glance, for an operator.  Asks each
 * daemon over its socket; a daemon that does not answer is reported as
 * such (and makes the exit status 1), never guessed at.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_client.h"
#include "cli.h"
#include "ng_client.h"
#include "ops/status.h"
#include "util.h"

#define STATUS_AUDIT_SOCKET	"/run/stockade/auditd.sock"
#define STATUS_NG_SOCKET	"/run/stockade/netguard.sock"
#define STATUS_MCP_STATE	"/run/stockade/mcp-exec"
#define STATUS_FILE_MAX		(4 * 1024 * 1024)

static const char *
str(const json_t *o, const char *key)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "-";
}

static long long
num(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static json_t *
audit_status(const char *sock, char *err, size_t errlen)
{
	struct audit_client	 ac;
	json_t			*st;

	if (audit_client_open(&ac, sock, err, errlen) == -1)
		return NULL;
	st = audit_client_status(&ac, err, errlen);
	audit_client_close(&ac);
	return st;
}

static void
print_audit(const json_t *st)
{
	const json_t	*a = json_object_get(st, "audit"), *f;
	size_t		 i;

	printf("stockade-auditd  %s, %lld writers connected", str(a, "state"),
	    num(st, "clients"));
	if (json_object_get(st, "node_id") != NULL)
		printf(", node %s", str(st, "node_id"));
	putchar('\n');
	printf("  head           seq %lld, hash %.16s…, durable to seq %lld\n",
	    num(a, "seq"), str(a, "hash"), num(a, "durable_seq"));
	printf("  checkpoint     seq %lld at %s\n", num(a, "checkpoint_seq"),
	    str(a, "checkpoint_ts"));
	printf("  file           %s\n", str(a, "active_file"));
	json_array_foreach(json_object_get(st, "forward"), i, f) {
		int	 up = json_is_true(json_object_get(f, "connected"));

		printf("  forward        %s  %s  %s, delivered to seq %lld",
		    str(f, "name"), str(f, "address"), up ? "connected" :
		    "DOWN", num(f, "delivered_seq"));
		if (!up && *str(f, "error") != '\0')
			printf(": %s", str(f, "error"));
		putchar('\n');
	}
}

static void
print_netguard(const json_t *st)
{
	const json_t	*att = json_object_get(st, "attached"), *a, *p;
	size_t		 i;

	printf("netguard         %zu policies, %zu sandboxes attached, %lld "
	    "addresses free\n", json_array_size(json_object_get(st,
	    "policies")), json_array_size(att), num(st, "pool_free"));
	json_array_foreach(json_object_get(st, "policies"), i, p)
		printf("  policy         %-16s %s\n", str(p, "name"),
		    str(p, "level"));
	json_array_foreach(att, i, a)
		printf("  sandbox        %s  session %s  %s  %s %s  %s  "
		    "denied %lld\n", str(a, "sandbox"), str(a, "session_id"),
		    str(a, "principal"), str(a, "policy"), str(a, "level"),
		    str(a, "address"), num(a, "denied"));
	/* What netguard changed on the host, put back with the last L2/L3
	 * sandbox. */
	json_array_foreach(json_object_get(st, "host_changes"), i, a)
		printf("  host           %s: %s (was %s)\n", str(a, "setting"),
		    str(a, "now"), str(a, "was"));
	if (json_array_size(json_object_get(st, "host_changes")) == 0)
		printf("  host           nothing changed\n");
}

/*
 * The MCP servers' published sessions (mcp-exec/ops/status.c): one file per
 * server process; a file whose process is gone is stale and skipped.
 */
json_t *
status_mcp_servers(const char *dir)
{
	json_t		*servers = json_array(), *o;
	struct dirent	*de;
	char		 path[PATH_MAX], *data;
	size_t		 len;
	long		 pid;
	DIR		*d;

	if ((d = opendir(dir)) == NULL)
		return servers;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, STATUS_FILE_PREFIX,
		    strlen(STATUS_FILE_PREFIX)) != 0 || strlen(de->d_name) <
		    strlen(STATUS_FILE_PREFIX) + 6 || strcmp(de->d_name +
		    strlen(de->d_name) - 5, ".json") != 0 ||
		    xsnprintf(path, sizeof(path), "%s/%s", dir, de->d_name) ==
		    -1 || read_file(path, STATUS_FILE_MAX, &data, &len) == -1)
			continue;
		o = json_loadb(data, len, 0, NULL);
		free(data);
		pid = (long)json_integer_value(json_object_get(o, "pid"));
		if (!json_is_object(o) || pid <= 0 ||
		    (kill((pid_t)pid, 0) == -1 && errno == ESRCH)) {
			json_decref(o);
			continue;
		}
		json_array_append_new(servers, o);
	}
	closedir(d);
	return servers;
}

/*
 * --ready: 0 only when the node may take traffic (a readiness probe): the
 * audit trail is writing, netguard answers, and an MCP server runs whose
 * warm pool has filled once (mcp-exec/sessions/pool.c).  Prints what is
 * missing, for the probe's event.
 */
static int
ready(const json_t *all)
{
	const json_t	*a = json_object_get(all, "stockade-auditd");
	const json_t	*servers = json_object_get(all, "mcp-exec"), *srv;
	const char	*state = str(json_object_get(a, "audit"), "state");
	size_t		 i;

	if (json_object_get(a, "error") != NULL || strcmp(state, "running")) {
		printf("not ready: audit trail %s\n", json_object_get(a, "error")
		    != NULL ? str(a, "error") : state);
		return EXIT_NEGATIVE;
	}
	if (json_object_get(json_object_get(all, "netguard"), "error") !=
	    NULL) {
		printf("not ready: netguard %s\n", str(json_object_get(all,
		    "netguard"), "error"));
		return EXIT_NEGATIVE;
	}
	if (json_array_size(servers) == 0) {
		printf("not ready: no mcp-exec server\n");
		return EXIT_NEGATIVE;
	}
	json_array_foreach(servers, i, srv)
		if (!json_is_true(json_object_get(json_object_get(srv, "pool"),
		    "warm"))) {
			printf("not ready: mcp-exec pid %lld: pool warming\n",
			    num(srv, "pid"));
			return EXIT_NEGATIVE;
		}
	printf("ready\n");
	return 0;
}

/* One principal's or group's usage: "calls_per_minute 3/3 (resets ...)". */
static void
print_quotas(const json_t *a)
{
	const char	*k;
	json_t		*v;
	time_t		 t;
	struct tm	 tm;
	char		 when[32];

	printf("  quota          %s\n", str(a, "subject"));
	json_object_foreach(json_object_get(a, "quotas"), k, v) {
		t = (time_t)num(v, "resets_at");
		if (t == 0 || gmtime_r(&t, &tm) == NULL ||
		    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
			snprintf(when, sizeof(when), "live");
		printf("    %-24s %lld / %lld  (%s %s)%s\n", k, num(v, "used"),
		    num(v, "limit"), t ? "resets" : "counts", t ? when : "what "
		    "runs now", num(v, "used") >= num(v, "limit") ?
		    "  AT LIMIT" : "");
	}
}

static void
print_mcp(const json_t *servers, const char *dir)
{
	const json_t	*srv, *s;
	size_t		 i, j;

	if (json_array_size(servers) == 0)
		printf("mcp-exec         no server running with state in %s\n",
		    dir);
	json_array_foreach(servers, i, srv) {
		printf("mcp-exec         pid %lld, %s%s%sprofile %s, %zu live "
		    "sessions\n", num(srv, "pid"),
		    json_object_get(srv, "node") != NULL ? "node " : "",
		    json_object_get(srv, "node") != NULL ? str(srv, "node") : "",
		    json_object_get(srv, "node") != NULL ? ", " : "",
		    str(srv, "profile"),
		    json_array_size(json_object_get(srv, "sessions")));
		json_array_foreach(json_object_get(srv, "sessions"), j, s)
			printf("  session        %s  %s  sandbox %s  network %s  "
			    "since %s  idle %llds%s\n", str(s, "session_id"),
			    str(s, "principal"), str(s, "sandbox"),
			    str(s, "network"), str(s, "since"), num(s, "idle_s"),
			    json_is_true(json_object_get(s, "busy")) ?
			    "  busy" : "");
		if ((s = json_object_get(srv, "pool")) != NULL)
			printf("  pool           %lld ready, %lld hits, %lld "
			    "misses\n", num(s, "ready"), num(s, "hits"),
			    num(s, "misses"));
		json_array_foreach(json_object_get(srv, "quotas"), j, s)
			print_quotas(s);
	}
}

int
cmd_status(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "audit-socket", required_argument, NULL, 'a' },
		{ "netguard-socket", required_argument, NULL, 'n' },
		{ "mcp-state", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "ready", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*asock = STATUS_AUDIT_SOCKET, *nsock = STATUS_NG_SOCKET;
	const char	*mstate = STATUS_MCP_STATE;
	json_t		*all = json_object(), *st, *msg;
	char		 err[512];
	int		 ch, as_json = 0, as_probe = 0, rv = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'a': asock = optarg; break;
		case 'n': nsock = optarg; break;
		case 'm': mstate = optarg; break;
		case 'j': as_json = 1; break;
		case 'r': as_json = as_probe = 1; break;
		default:
			fprintf(stderr, "usage: stockade status [--audit-socket "
			    "PATH] [--netguard-socket PATH]\n"
			    "                       [--mcp-state DIR] [--json | "
			    "--ready]\n");
			json_decref(all);
			return EXIT_USAGE;
		}
	}
	if ((st = audit_status(asock, err, sizeof(err))) == NULL) {
		st = json_pack("{s:s}", "error", err);
		rv = EXIT_NEGATIVE;
	} else if (!as_json)
		print_audit(st);
	if (!as_json && json_object_get(st, "error") != NULL)
		printf("stockade-auditd  not answering: %s\n", err);
	json_object_set_new(all, "stockade-auditd", st);
	msg = json_pack("{s:s}", "type", "status");
	if ((st = ngc_call(nsock, msg, -1, NGC_TIMEOUT_MS, err,
	    sizeof(err))) == NULL || !json_is_true(json_object_get(st, "ok"))) {
		if (st != NULL)
			snprintf(err, sizeof(err), "%s", str(st, "error"));
		json_decref(st);
		st = json_pack("{s:s}", "error", err);
		rv = EXIT_NEGATIVE;
		if (!as_json)
			printf("netguard         not answering: %s\n", err);
	} else if (!as_json)
		print_netguard(st);
	json_decref(msg);
	json_object_set_new(all, "netguard", st);
	st = status_mcp_servers(mstate);
	if (!as_json)
		print_mcp(st, mstate);
	json_object_set_new(all, "mcp-exec", st);
	if (as_probe)
		rv = ready(all);
	else if (as_json) {
		json_dumpf(all, stdout, JSON_INDENT(2));
		putchar('\n');
	}
	json_decref(all);
	return rv;
}
