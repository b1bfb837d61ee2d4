/*
 * Load generator for stockade-auditd, used by the benchmark and by the
 * crash and concurrency tests: N writer threads, each with its own
 * connection, append the sample code_execution event with
 * synchronous acks, keeping up to W requests in flight.  Every ack is
 * written to --acked as "writer index seq hash", so a test can check that
 * each acknowledged event is in the log after a crash.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_client.h"
#include "frame.h"
#include "hash.h"
#include "util.h"

#define WRITERS_MAX	256
#define FRAME_LEN	1024
#define CODE_MAX	(1024 * 1024)

struct opts {
	const char	*socket;
	unsigned	 writers;
	uint64_t	 events;	/* per writer */
	unsigned	 window;
	FILE		*acked;
	size_t		 code;		/* > 0: execution_started with code */
};

struct worker {
	pthread_t		 thread;
	const struct opts	*o;
	unsigned		 id;
	uint64_t		 acked, refused;
	int			 broken;	/* the connection died */
	char			 err[512];
};

static pthread_mutex_t	 acked_mu = PTHREAD_MUTEX_INITIALIZER;

/*
 * The sample code_execution event, one distinct session per event,
 * as a ready append frame.  Formatted directly so that the load generator,
 * which shares the machine's cores with the daemon, costs little.
 */
static size_t
sample_frame(char *out, size_t len, unsigned writer, uint64_t i, uint64_t id)
{
	int	 n;

	n = snprintf(out + FRAME_HDR_LEN, len - FRAME_HDR_LEN,
	    "{\"type\":\"append\",\"id\":%llu,\"sync\":true,\"event\":"
	    "{\"event\":\"code_execution\",\"principal\":"
	    "\"user:alice@example.com\",\"session_id\":\"sess_w%u_%llu\","
	    "\"code_hash\":\"sha256:9c1f5e3b0a1d2c4e6f708192a3b4c5d6e7f8091a"
	    "2b3c4d5e6f708192a3b4c5d6\",\"code_size\":2048,\"sandbox\":"
	    "{\"runtime\":\"gvisor\",\"image\":\"py-sandbox:3.12\"},"
	    "\"limits\":{\"cpu\":1.0,\"mem_mb\":512,\"timeout_ms\":10000},"
	    "\"network\":\"none\",\"exit_code\":0,\"duration_ms\":1832,"
	    "\"stdout_bytes\":4096,\"artifacts\":[\"plot.png\"],"
	    "\"decision\":\"allow\"}}", (unsigned long long)id, writer,
	    (unsigned long long)i);
	if (n < 0 || (size_t)n >= len - FRAME_HDR_LEN)
		abort();
	frame_put_header((uint8_t *)out, (size_t)n);
	return FRAME_HDR_LEN + (size_t)n;
}

/*
 * --code N: an execution_started carrying N bytes of code, different for
 * every event (so full retention stores a blob each time), with its hash.
 */
static size_t
code_frame(char *out, size_t len, char *code, size_t clen, unsigned writer,
    uint64_t i, uint64_t id)
{
	char	 hex[SHA256_HEX + 1];
	int	 n, m;

	memset(code, 'x', clen);
	m = snprintf(code, clen, "# w%u e%llu ", writer,
	    (unsigned long long)i);
	if (m > 0 && (size_t)m < clen)
		code[m] = 'x';
	sha256_hex(code, clen, hex);
	n = snprintf(out + FRAME_HDR_LEN, len - FRAME_HDR_LEN,
	    "{\"type\":\"append\",\"id\":%llu,\"sync\":true,\"event\":"
	    "{\"event\":\"execution_started\",\"principal\":"
	    "\"user:alice@example.com\",\"session_id\":\"sess_w%u_%llu\","
	    "\"code_hash\":\"sha256:%s\",\"code_size\":%zu,\"tool\":"
	    "\"execute_python\",\"code\":\"%.*s\"}}", (unsigned long long)id,
	    writer, (unsigned long long)i, hex, clen, (int)clen, code);
	if (n < 0 || (size_t)n >= len - FRAME_HDR_LEN)
		abort();
	frame_put_header((uint8_t *)out, (size_t)n);
	return FRAME_HDR_LEN + (size_t)n;
}

static int
collect(struct worker *w, struct audit_client *ac)
{
	struct audit_ack	 a;

	if (audit_client_recv(ac, &a, w->err, sizeof(w->err)) == -1)
		return -1;
	if (!a.ok) {
		w->refused++;
		snprintf(w->err, sizeof(w->err), "%s: %s", a.code, a.message);
		return 0;
	}
	w->acked++;
	if (w->o->acked != NULL) {
		pthread_mutex_lock(&acked_mu);
		fprintf(w->o->acked, "%u %llu %llu %s\n", w->id,
		    (unsigned long long)a.id, (unsigned long long)a.seq, a.hash);
		pthread_mutex_unlock(&acked_mu);
	}
	return 0;
}

static void *
worker_main(void *arg)
{
	struct worker		*w = arg;
	struct audit_client	 ac;
	uint64_t		 i, inflight = 0;
	size_t			 len, flen = FRAME_LEN + 2 * w->o->code;
	char			*frame = xmalloc(flen), *code = NULL;

	if (audit_client_open(&ac, w->o->socket, w->err, sizeof(w->err)) == -1) {
		w->broken = 1;
		free(frame);
		return NULL;
	}
	if (w->o->code > 0)
		code = xmalloc(w->o->code);
	for (i = 0; i < w->o->events; i++) {
		if (code != NULL)
			len = code_frame(frame, flen, code, w->o->code, w->id,
			    i, ac.next_id++);
		else
			len = sample_frame(frame, flen, w->id, i,
			    ac.next_id++);
		if (write_all(ac.fd, frame, len) == -1) {
			snprintf(w->err, sizeof(w->err), "send: %s",
			    strerror(errno));
			w->broken = 1;
			goto out;
		}
		if (++inflight < w->o->window)
			continue;
		if (collect(w, &ac) == -1) {
			w->broken = 1;
			goto out;
		}
		inflight--;
	}
	for (; inflight > 0; inflight--) {
		if (collect(w, &ac) == -1) {
			w->broken = 1;
			break;
		}
	}
out:
	audit_client_close(&ac);
	free(code);
	free(frame);
	return NULL;
}

static void
usage(void)
{
	fprintf(stderr, "usage: audit_load --socket PATH [--writers N] "
	    "[--events N] [--window N] [--acked FILE] [--code BYTES]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "writers", required_argument, NULL, 'w' },
		{ "events", required_argument, NULL, 'e' },
		{ "window", required_argument, NULL, 'W' },
		{ "acked", required_argument, NULL, 'a' },
		{ "code", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts	 o = { NULL, 8, 10000, 1, NULL, 0 };
	struct worker	*ws;
	struct timespec	 t0, t1;
	uint64_t	 v, acked = 0, refused = 0;
	unsigned	 i, broken = 0;
	double		 secs;
	int		 ch;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			o.socket = optarg;
			break;
		case 'w':
			if (parse_u64(optarg, 1, WRITERS_MAX, &v) == -1)
				usage();
			o.writers = (unsigned)v;
			break;
		case 'e':
			if (parse_u64(optarg, 1, UINT64_MAX, &o.events) == -1)
				usage();
			break;
		case 'W':
			if (parse_u64(optarg, 1, 4096, &v) == -1)
				usage();
			o.window = (unsigned)v;
			break;
		case 'c':
			if (parse_u64(optarg, 16, CODE_MAX, &v) == -1)
				usage();
			o.code = (size_t)v;
			break;
		case 'a':
			if ((o.acked = fopen(optarg, "a")) == NULL) {
				perror(optarg);
				return 2;
			}
			setvbuf(o.acked, NULL, _IOLBF, 0);
			break;
		default:
			usage();
		}
	}
	if (o.socket == NULL || optind != argc)
		usage();
	ws = xcalloc(o.writers, sizeof(*ws));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < o.writers; i++) {
		ws[i].o = &o;
		ws[i].id = i;
		if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]) != 0) {
			perror("pthread_create");
			return 2;
		}
	}
	for (i = 0; i < o.writers; i++) {
		pthread_join(ws[i].thread, NULL);
		acked += ws[i].acked;
		refused += ws[i].refused;
		if (ws[i].broken) {
			broken++;
			fprintf(stderr, "audit_load: writer %u: %s\n", i,
			    ws[i].err);
		} else if (ws[i].refused)
			fprintf(stderr, "audit_load: writer %u: last refusal: "
			    "%s\n", i, ws[i].err);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("writers %u window %u acked %llu refused %llu seconds %.3f "
	    "events_per_sec %.0f\n", o.writers, o.window,
	    (unsigned long long)acked, (unsigned long long)refused, secs,
	    secs > 0 ? (double)acked / secs : 0.0);
	if (o.acked != NULL)
		fclose(o.acked);
	free(ws);
	return broken ? 3 : refused ? 1 : 0;
}
