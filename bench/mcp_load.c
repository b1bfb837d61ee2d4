/*
 * Latency and throughput of mcp-exec's execute_python, measured by a
 * minimal MCP client over stdio (so that no client library's cost is in
 * the figures), against starting a bare Python in the same run:
 *
 *   bare       /usr/bin/python3 -I -S -c pass, spawned and reaped
 *   existing   `1+1` in a session that already exists
 *   new        `1+1` with no session_id: a new sandbox and driver
 *   parallel   `1+1` with one call in flight in each of N sessions
 *   beside     `1+1` in an existing session, one call after another,
 *              while a new session starts beside it (is the server's
 *              loop free while a sandbox is built and its driver starts?)
 *
 * Prints one "name p50_ns p99_ns" line per latency and one "calls_per_sec"
 * line; bench/run.sh turns them into ratios.  For the warm pool: --only-new
 * measures new sessions alone, each after --pause-ms (untimed: the pool
 * refills), with --code as the call and --bare-code as the baseline's
 * `python3 -c` (instead of python3 -I -S -c pass); the baseline, and an
 * existing session's call ("paused"), are measured after the same pause.
 */
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bench.h"
#include "buf.h"
#include "util.h"

#define SESSIONS_MAX	64

static const char	*code = "1+1";
static const char	*bare_code;	/* NULL: python3 -I -S -c pass */

extern char **environ;

struct server {
	pid_t		 pid;
	int		 in, out;
	struct buf	 rbuf;		/* bytes read, not yet a whole line */
	long long	 next_id;
};

/* Sorts v and prints "name p50 p99 max". */
static void
report(const char *name, uint64_t *v, size_t n)
{
	stats_sort(v, n);
	printf("%s %llu %llu %llu\n", name, (unsigned long long)v[(n - 1) / 2],
	    (unsigned long long)v[(n * 99 + 99) / 100 - 1],
	    (unsigned long long)v[n - 1]);
	fflush(stdout);
}

static void
server_start(struct server *s, char *const argv[])
{
	posix_spawn_file_actions_t	 fa;
	int				 in[2], out[2];

	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1)
		err(1, "pipe");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	if ((errno = posix_spawn(&s->pid, argv[0], &fa, NULL, argv,
	    environ)) != 0)
		err(1, "%s", argv[0]);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	s->in = in[1];
	s->out = out[0];
	buf_init(&s->rbuf, 1 << 24);
	s->next_id = 1;
}

static void
send_msg(struct server *s, json_t *msg)
{
	char	*text;

	if ((text = json_dumps(msg, JSON_COMPACT)) == NULL)
		errx(1, "json_dumps");
	if (write_all(s->in, text, strlen(text)) == -1 ||
	    write_all(s->in, "\n", 1) == -1)
		err(1, "write to mcp-exec");
	free(text);
	json_decref(msg);
}

/* The next message from the server that is a response (has an "id"). */
static json_t *
recv_response(struct server *s)
{
	json_error_t	 jerr;
	json_t		*msg;
	char		*nl;
	size_t		 len;
	ssize_t		 n;

	for (;;) {
		/* memchr of an empty buffer's NULL data is undefined. */
		while (s->rbuf.len > 0 && (nl = memchr(s->rbuf.data, '\n',
		    s->rbuf.len)) != NULL) {
			len = (size_t)(nl - (char *)s->rbuf.data);
			msg = json_loadb((char *)s->rbuf.data, len, 0, &jerr);
			buf_consume(&s->rbuf, len + 1);
			if (msg == NULL)
				errx(1, "bad JSON from mcp-exec: %s", jerr.text);
			if (json_object_get(msg, "id") != NULL)
				return msg;
			json_decref(msg);
		}
		if (buf_reserve(&s->rbuf, 65536) == -1)
			err(1, "buf_reserve");
		n = read(s->out, (char *)s->rbuf.data + s->rbuf.len, 65536);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			errx(1, "mcp-exec closed its output");
		s->rbuf.len += (size_t)n;
	}
}

static long long
call_python(struct server *s, const char *sid)
{
	json_t	*args;
	long long id = s->next_id++;

	args = json_pack("{s:s}", "code", code);
	if (sid != NULL)
		json_object_set_new(args, "session_id", json_string(sid));
	send_msg(s, json_pack("{s:s, s:I, s:s, s:{s:s, s:o}}", "jsonrpc",
	    "2.0", "id", (json_int_t)id, "method", "tools/call", "params",
	    "name", "execute_python", "arguments", args));
	return id;
}

/* Checks a tools/call result; returns its session id (to be freed). */
static char *
result_session(json_t *msg)
{
	json_t		*r = json_object_get(msg, "result");
	const char	*sid;
	char		*copy;

	if (r == NULL || json_is_true(json_object_get(r, "isError"))) {
		char *t = json_dumps(msg, JSON_COMPACT);
		errx(1, "call failed: %s", t ? t : "?");
	}
	sid = json_string_value(json_object_get(json_object_get(r,
	    "structuredContent"), "session_id"));
	if (sid == NULL || (copy = strdup(sid)) == NULL)
		errx(1, "no session_id in the result");
	return copy;
}

static void
close_session(struct server *s, const char *sid)
{
	send_msg(s, json_pack("{s:s, s:I, s:s, s:{s:s, s:{s:s}}}", "jsonrpc",
	    "2.0", "id", (json_int_t)s->next_id++, "method", "tools/call",
	    "params", "name", "close_session", "arguments", "session_id", sid));
	json_decref(recv_response(s));
}

/* n calls in session sid, one after another, each after pause: into lat. */
static void
time_calls(struct server *s, const char *sid, uint64_t *lat, size_t n,
    const struct timespec *pause)
{
	uint64_t	 t0;
	size_t		 i;

	for (i = 0; i < n; i++) {
		(void)nanosleep(pause, NULL);
		t0 = bench_now_ns();
		call_python(s, sid);
		free(result_session(recv_response(s)));
		lat[i] = bench_now_ns() - t0;
	}
}

/*
 * fresh times: a new session's call goes out, and calls in session sid
 * follow one after another until its answer is in.  Reports their
 * latencies: a loop held up by the new session's start shows here.
 */
static void
beside_new(struct server *s, const char *sid, size_t fresh)
{
	uint64_t	*lat = NULL, t0;
	size_t		 n = 0, cap = 0, i;
	long long	 nid;
	json_t		*msg;
	char		*nsid;

	for (i = 0; i < fresh; i++) {
		nid = call_python(s, NULL);
		nsid = NULL;
		while (nsid == NULL) {
			t0 = bench_now_ns();
			(void)call_python(s, sid);
			for (;;) {
				msg = recv_response(s);
				if (json_integer_value(json_object_get(msg,
				    "id")) == nid) {
					nsid = result_session(msg);
					continue;
				}
				free(result_session(msg));
				break;
			}
			if (n == cap) {
				cap = cap ? cap * 2 : 1024;
				lat = xrealloc(lat, cap * sizeof(*lat));
			}
			lat[n++] = bench_now_ns() - t0;
		}
		close_session(s, nsid);
		free(nsid);
	}
	report("beside", lat, n);
	free(lat);
}

static uint64_t
bare_python(void)
{
	char *const	 argv[] = { "/usr/bin/python3", "-I", "-S", "-c", "pass",
			    NULL };
	char *const	 argv_code[] = { "/usr/bin/python3", "-c",
			    (char *)bare_code, NULL };
	uint64_t	 t0 = bench_now_ns();
	pid_t		 pid;
	int		 status;

	if ((errno = posix_spawn(&pid, argv[0], NULL, NULL, bare_code ?
	    argv_code : argv, environ)) != 0)
		err(1, "%s", argv[0]);
	if (waitpid(pid, &status, 0) == -1 || status != 0)
		errx(1, "python3 failed");
	return bench_now_ns() - t0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: mcp_load [--calls N] [--new N] [--sessions N] "
	    "[--only-new] [--pause-ms N] [--code CODE] [--bare-code CODE] "
	    "-- MCP-EXEC [ARG...]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "calls",	required_argument,	NULL, 'c' },
		{ "new",	required_argument,	NULL, 'n' },
		{ "sessions",	required_argument,	NULL, 's' },
		{ "only-new",	no_argument,		NULL, 'o' },
		{ "pause-ms",	required_argument,	NULL, 'p' },
		{ "code",	required_argument,	NULL, 'C' },
		{ "bare-code",	required_argument,	NULL, 'B' },
		{ NULL, 0, NULL, 0 }
	};
	struct server	 s;
	uint64_t	*lat, t0;
	char		*sid, *sids[SESSIONS_MAX];
	size_t		*owner;		/* request id - base -> session */
	long long	 base, id;
	size_t		 calls = 2000, fresh = 40, nsess = 8, i, done;
	struct timespec	 pause = { 0, 0 };
	unsigned long	 ms;
	int		 ch, only_new = 0;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			calls = strtoul(optarg, NULL, 10);
			break;
		case 'n':
			fresh = strtoul(optarg, NULL, 10);
			break;
		case 's':
			nsess = strtoul(optarg, NULL, 10);
			break;
		case 'o':
			only_new = 1;
			break;
		case 'p':
			ms = strtoul(optarg, NULL, 10);
			pause.tv_sec = (time_t)(ms / 1000);
			pause.tv_nsec = (long)(ms % 1000) * 1000000;
			break;
		case 'C':
			code = optarg;
			break;
		case 'B':
			bare_code = optarg;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || calls < 1 || fresh < 1 || nsess < 1 ||
	    nsess > SESSIONS_MAX)
		usage();
	signal(SIGPIPE, SIG_IGN);
	lat = xcalloc(calls > fresh ? calls : fresh, sizeof(*lat));

	server_start(&s, argv);
	send_msg(&s, json_pack("{s:s, s:i, s:s, s:{s:s, s:{}, s:{s:s, s:s}}}",
	    "jsonrpc", "2.0", "id", 0, "method", "initialize", "params",
	    "protocolVersion", "2025-11-25", "capabilities", "clientInfo",
	    "name", "mcp_load", "version", "1"));
	json_decref(recv_response(&s));
	send_msg(&s, json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method",
	    "notifications/initialized"));

	/* Each after the same pause as the calls: a process woken after an
	 * idle spell pays for it (caches, the idle CPU's wake-up, the disk),
	 * bare Python as much as a call. */
	for (i = 0; i < fresh; i++) {
		(void)nanosleep(&pause, NULL);
		lat[i] = bare_python();
	}
	report("bare", lat, fresh);

	/* New sessions: each call starts a sandbox; closing is not timed. */
	for (i = 0; i < fresh; i++) {
		(void)nanosleep(&pause, NULL);
		t0 = bench_now_ns();
		call_python(&s, NULL);
		sid = result_session(recv_response(&s));
		lat[i] = bench_now_ns() - t0;
		close_session(&s, sid);
		free(sid);
	}
	report("new", lat, fresh);

	call_python(&s, NULL);
	sid = result_session(recv_response(&s));
	if (only_new) {
		/* The same call in a session that exists, after the same
		 * pause: what the hand-out adds is the difference. */
		time_calls(&s, sid, lat, fresh, &pause);
		report("paused", lat, fresh);
		close_session(&s, sid);
		free(sid);
		goto out;
	}
	time_calls(&s, sid, lat, calls, &(struct timespec){ 0, 0 });
	report("existing", lat, calls);
	beside_new(&s, sid, fresh);
	close_session(&s, sid);
	free(sid);

	/* N sessions, one call in flight in each, `calls` calls in all. */
	for (i = 0; i < nsess; i++) {
		call_python(&s, NULL);
		sids[i] = result_session(recv_response(&s));
	}
	owner = xcalloc(calls + nsess, sizeof(*owner));
	base = s.next_id;
	t0 = bench_now_ns();
	for (i = 0; i < nsess; i++)
		owner[call_python(&s, sids[i]) - base] = i;
	for (done = 0; done < calls; done++) {
		json_t	*msg = recv_response(&s);

		id = json_integer_value(json_object_get(msg, "id"));
		if (id < base || id >= s.next_id)
			errx(1, "response to an unknown request");
		free(result_session(msg));
		if (done + nsess < calls) {
			i = owner[id - base];
			owner[call_python(&s, sids[i]) - base] = i;
		}
	}
	printf("calls_per_sec %.0f\n", (double)calls * 1e9 /
	    (double)(bench_now_ns() - t0));
	for (i = 0; i < nsess; i++) {
		close_session(&s, sids[i]);
		free(sids[i]);
	}
	free(owner);
out:
	close(s.in);
	waitpid(s.pid, NULL, 0);
	free(lat);
	buf_free(&s.rbuf);
	return 0;
}
