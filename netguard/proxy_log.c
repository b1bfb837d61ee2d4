/*
 * The egress proxy's access log (proxy_conf.c's "stockade" logformat),
 * read as Squid appends to it, one egress_http audit record per request,
 * tied to its sandbox by the client address netguard gave it.  Squid
 * writes the lines, but from requests the sandboxes made: each line is
 * parsed strictly and bounded, and a line that does not parse is counted,
 * never half-used.  The credential's value is never in the log (Squid
 * adds the header after logging what the client sent, and the format has
 * no request headers); the record names the credential only.
 */
#include <sys/stat.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"
#include "log.h"
#include "netguard.h"
#include "util.h"

#define PLOG_TICK_MS		200		/* how often the log is read */
#define PLOG_READ_MAX		(256 * 1024)	/* bytes per tick */
#define PLOG_LINE_MAX		8192		/* longer lines are dropped */
#define PLOG_ROTATE_BYTES	(16 * 1024 * 1024)

struct proxy_log {
	struct netguard	*ng;
	struct event	*tick;
	char		 path[PATH_MAX], old[PATH_MAX];
	int		 fd;
	int		 rotating;	/* reading old to its end */
	char		 line[PLOG_LINE_MAX + 1];
	size_t		 len;
	int		 skipping;	/* inside an overlong line */
	uint64_t	 bad;
};

/* "tok tok ... path": exactly PLOG_FIELDS fields, the path last. */
int
proxy_log_parse(const char *s, struct proxy_record *r)
{
	char		 buf[PLOG_LINE_MAX + 1], *f[PROXY_LOG_FIELDS], *save;
	uint64_t	 v;
	size_t		 n = 0;
	char		*p;

	memset(r, 0, sizeof(*r));
	if (strlen(s) > PLOG_LINE_MAX)
		return -1;
	snprintf(buf, sizeof(buf), "%s", s);
	for (p = strtok_r(buf, " ", &save); p != NULL;
	    p = strtok_r(NULL, " ", &save)) {
		if (n == PROXY_LOG_FIELDS)
			return -1;
		f[n++] = p;
	}
	if (n != PROXY_LOG_FIELDS)
		return -1;
	/* 0 time, 1 client, 2 local port, 3 method, 4 status, 5 bytes from
	 * the client, 6 bytes to it, 7 ms, 8 error page, 9 rule note,
	 * 10 path */
	if (inet_pton(AF_INET, f[1], &r->client) != 1 ||
	    parse_u64(f[2], 1, 65535, &v) == -1)
		return -1;
	r->port = (uint16_t)v;
	if (strlen(f[3]) > sizeof(r->method) - 1 ||
	    strspn(f[3], "ABCDEFGHIJKLMNOPQRSTUVWXYZ-_") != strlen(f[3]))
		return -1;
	snprintf(r->method, sizeof(r->method), "%s", f[3]);
	if (parse_u64(f[4], 0, 999, &v) == -1)
		return -1;
	r->status = (unsigned)v;
	if (parse_u64(f[5], 0, UINT64_MAX / 2, &r->bytes_out) == -1 ||
	    parse_u64(f[6], 0, UINT64_MAX / 2, &r->bytes_in) == -1 ||
	    parse_u64(f[7], 0, UINT64_MAX / 2, &r->duration_ms) == -1)
		return -1;
	/* "-" or ERR_STOCKADE_RULE etc.; Squid's own names too. */
	if (strlen(f[8]) > sizeof(r->error) - 1 ||
	    strspn(f[8], "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
	    strlen(f[8]))
		return -1;
	snprintf(r->error, sizeof(r->error), "%s", f[8]);
	if (strlen(f[9]) > sizeof(r->rule) - 1 ||
	    strspn(f[9], "abcdefghijklmnopqrstuvwxyz0123456789-") !=
	    strlen(f[9]))
		return -1;
	snprintf(r->rule, sizeof(r->rule), "%s", f[9]);
	/* Squid escapes what is not printable; keep it ASCII regardless. */
	if (strlen(f[10]) > sizeof(r->path) - 1)
		return -1;
	for (p = f[10]; *p != '\0'; p++)
		if (*p < 0x21 || *p > 0x7e)
			return -1;
	snprintf(r->path, sizeof(r->path), "%s", f[10]);
	return 0;
}

/*
 * Why the proxy refused: the reason its page names, or "proxy" when Squid
 * refused by itself (CONNECT, a malformed request: no page of ours).
 */
static const char *
refusal(const char *error)
{
	static const char *const map[][2] = {
		{ "ERR_STOCKADE_RULE", "rule" },
		{ "ERR_STOCKADE_HOST", "host" },
		{ "ERR_STOCKADE_PATH", "path" },
		{ "ERR_STOCKADE_UPGRADE", "upgrade" },
		{ "ERR_STOCKADE_CREDENTIAL_ECHO", "credential-echo" },
	};
	size_t	 i;

	for (i = 0; i < nitems(map); i++)
		if (strcmp(error, map[i][0]) == 0)
			return map[i][1];
	return "proxy";
}

/* The destination a Squid port stands for, in the sandbox's policy. */
static const struct policy_http *
dest_of(struct netguard *ng, const struct policy *p, uint16_t port)
{
	size_t	 i;

	for (i = 0; i < p->nhttp; i++)
		if ((uint16_t)(ng->conf.proxy.port_base +
		    proxy_port(ng->policies, p, i)) == port)
			return &p->http[i];
	return NULL;
}

static void
plog_record(struct proxy_log *pl, const char *line)
{
	struct netguard			*ng = pl->ng;
	const struct policy_http	*h;
	struct proxy_record		 r;
	struct attachment		*att;
	const char			*why;
	char				 hex[SHA256_HEX + 1];
	json_t				*ev;

	if (proxy_log_parse(line, &r) == -1) {
		pl->bad++;
		return;
	}
	LIST_FOREACH(att, &ng->attached, entry)
		if (att->slot >= 0 && att->addr.s_addr == r.client.s_addr)
			break;
	/* A sandbox gone since, or a port not its own: nothing to tie. */
	if (att == NULL || (h = dest_of(ng, att->policy, r.port)) == NULL) {
		pl->bad++;
		return;
	}
	/* Allowed means a rule matched (its note is set) and no refusal
	 * of ours came after it (a reply echoing the secret). */
	why = strcmp(r.rule, "-") == 0 || strncmp(r.error, "ERR_STOCKADE_",
	    13) == 0 ? refusal(r.error) : NULL;
	ev = json_pack("{s:s, s:s, s:i, s:s, s:i, s:I, s:I, s:I, s:s}",
	    "method", r.method, "host", h->host, "port", (int)h->port,
	    "decision", why != NULL ? "deny" : "allow", "status",
	    (int)r.status, "bytes_out", (json_int_t)r.bytes_out, "bytes_in",
	    (json_int_t)r.bytes_in, "duration_ms", (json_int_t)r.duration_ms,
	    "rule", why != NULL ? why : r.rule);
	if (h->paths_sensitive) {
		sha256_hex(r.path, strlen(r.path), hex);
		json_object_set_new(ev, "path_sha256", json_string(hex));
	} else
		json_object_set_new(ev, "path", json_string(r.path));
	/* Sent whenever a rule let the request on to the server (also when
	 * the reply was then refused); its name only, never its value. */
	if (h->has_credential && strcmp(r.rule, "-") != 0)
		json_object_set_new(ev, "credential", json_string(h->cred.name));
	if (strcmp(r.error, "-") != 0 && strncmp(r.error, "ERR_STOCKADE_",
	    13) != 0)
		json_object_set_new(ev, "error", json_string(r.error));
	ng_audit(att, ev, "egress_http");
}

/* Splits what was read into lines; an overlong one is dropped whole. */
static void
plog_feed(struct proxy_log *pl, const char *b, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if (b[i] != '\n') {
			if (pl->len < PLOG_LINE_MAX)
				pl->line[pl->len++] = b[i];
			else
				pl->skipping = 1;
			continue;
		}
		pl->line[pl->len] = '\0';
		if (pl->skipping)
			pl->bad++;
		else if (pl->len > 0)
			plog_record(pl, pl->line);
		pl->len = 0;
		pl->skipping = 0;
	}
}

static void
plog_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct proxy_log	*pl = arg;
	char			 buf[16384];
	size_t			 total = 0;
	struct stat		 st;
	ssize_t			 n;

	if (pl->fd == -1 && (pl->fd = open(pl->path, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return;		/* Squid has not made it yet */
	while (total < PLOG_READ_MAX &&
	    (n = read(pl->fd, buf, sizeof(buf))) > 0) {
		plog_feed(pl, buf, (size_t)n);
		total += (size_t)n;
	}
	if (total >= PLOG_READ_MAX)
		return;		/* more next tick */
	if (pl->rotating) {
		/* The old file is read to its end; Squid writes the new. */
		if (access(pl->path, F_OK) == -1)
			return;
		close(pl->fd);
		pl->fd = -1;
		(void)unlink(pl->old);
		pl->rotating = 0;
		return;
	}
	/* Keep the log small: rename it, and Squid (SIGUSR1, with
	 * logfile_rotate 0) opens a new one; the rest of this one is read
	 * first. */
	if (fstat(pl->fd, &st) == 0 && st.st_size > PLOG_ROTATE_BYTES &&
	    pl->ng->proxy_pid > 0 && rename(pl->path, pl->old) == 0) {
		pl->rotating = 1;
		(void)kill(pl->ng->proxy_pid, SIGUSR1);
	}
}

struct proxy_log *
proxy_log_open(struct netguard *ng, const char *dir)
{
	struct proxy_log	*pl = xcalloc(1, sizeof(*pl));
	struct timeval		 tv = { 0, PLOG_TICK_MS * 1000 };

	pl->ng = ng;
	pl->fd = -1;
	if (xsnprintf(pl->path, sizeof(pl->path), "%s/%s/%s", dir,
	    PROXY_LOG_DIR, PROXY_LOG_NAME) == -1 ||
	    xsnprintf(pl->old, sizeof(pl->old), "%s.old", pl->path) == -1) {
		free(pl);
		return NULL;
	}
	/* What an earlier Squid wrote was audited by an earlier netguard,
	 * or is lost with it: start afresh. */
	(void)unlink(pl->path);
	(void)unlink(pl->old);
	if ((pl->tick = event_new(ng->base, -1, EV_PERSIST, plog_tick, pl)) ==
	    NULL || event_add(pl->tick, &tv) == -1)
		fatalx("proxy log event");
	return pl;
}

void
proxy_log_close(struct proxy_log *pl)
{
	if (pl == NULL)
		return;
	plog_tick(-1, 0, pl);	/* the last lines Squid wrote */
	if (pl->bad > 0)
		log_warnx("egress proxy: %llu access log lines not audited",
		    (unsigned long long)pl->bad);
	event_free(pl->tick);
	if (pl->fd != -1)
		close(pl->fd);
	free(pl);
}
