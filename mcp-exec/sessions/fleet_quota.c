/*
 * Fleet quotas in Redis (fleet_quota.h).  Trusts the Redis it is pointed at
 * to count (it is the operator's); its replies are still checked for
 * shape, and anything unexpected counts as the store being unreachable,
 * which on_unreachable decides.  Every change between reachable and not
 * is a fleet_degraded or fleet_restored record.
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet_quota.h"
#include "fleet_redis.h"
#include "log.h"
#include "server.h"
#include "util.h"

#define PASSWORD_MAX	512
#define EVAL_ARGS_MAX	(3 + 2 * QUOTA_N * QUOTA_BILL_MAX + 3)
#define CHARGE_CHUNK	32	/* usage keys per charge_lua call */
#define PENDING_MAX	1024	/* usage not yet in the store */

/*
 * KEYS: per subject, one key per quota in quota.h's order (Lua's k is
 * the kind + 1): the sessions and concurrent_calls lease sets, the
 * calls_per_minute counter, and the CPU and wall milliseconds and
 * artifact bytes of the current hour or day.  ARGV: the session lease's
 * member, the call lease's, lease ms, then per subject a limit per quota
 * (-1: none or not counted).  All are checked, in that order, before any
 * write, so a refusal counts nothing.  Usage (CPU, wall, bytes) is only
 * read here: it is added when a call ends (charge_lua).  The lease clock
 * is Redis's own: nodes' clocks may disagree.
 */
static const char acquire_lua[] =
    "local t = redis.call('TIME')\n"
    "local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"
    "local ms = tonumber(ARGV[3])\n"
    "local K = 8\n"
    "local lease = { [1] = ARGV[1], [3] = ARGV[2] }\n"
    "local unit = { [4] = 1000, [5] = 1000, [6] = 1000, [7] = 1000, [8] = 1 }\n"
    "local function lim(i, k) return tonumber(ARGV[3 + K * (i - 1) + k]) end\n"
    "for i = 1, #KEYS / K do\n"
    "  for k = 1, K do\n"
    "    local key, used = KEYS[K * (i - 1) + k], 0\n"
    "    if lim(i, k) >= 0 then\n"
    "      if lease[k] then\n"
    "        redis.call('ZREMRANGEBYSCORE', key, '-inf', now)\n"
    "        used = redis.call('ZCARD', key)\n"
    "      else\n"
    "        used = math.floor(tonumber(redis.call('GET', key) or '0') /\n"
    "            (unit[k] or 1))\n"
    "      end\n"
    "      if used >= lim(i, k) then return {i, k, used} end\n"
    "    end\n"
    "  end\n"
    "end\n"
    "for i = 1, #KEYS / K do\n"
    "  for k, member in pairs(lease) do\n"
    "    if lim(i, k) >= 0 then\n"
    "      redis.call('ZADD', KEYS[K * (i - 1) + k], now + ms, member)\n"
    "      redis.call('PEXPIRE', KEYS[K * (i - 1) + k], 2 * ms)\n"
    "    end\n"
    "  end\n"
    "  if lim(i, 2) >= 0 then\n"
    "    redis.call('INCR', KEYS[K * (i - 1) + 2])\n"
    "    redis.call('EXPIRE', KEYS[K * (i - 1) + 2], 120)\n"
    "  end\n"
    "end\n"
    "return {0, 0, 0}\n";
_Static_assert(QUOTA_N == 8 && QUOTA_SESSIONS == 0 &&
    QUOTA_CALLS_MINUTE == 1 && QUOTA_CONCURRENT == 2 &&
    QUOTA_ARTIFACT_DAY == 7, "acquire_lua's K and tables follow quota.h");

/* KEYS: usage counters; ARGV: per key its amount and seconds to live. */
static const char charge_lua[] =
    "for i = 1, #KEYS do\n"
    "  redis.call('INCRBY', KEYS[i], ARGV[2 * i - 1])\n"
    "  redis.call('EXPIRE', KEYS[i], ARGV[2 * i])\n"
    "end\n"
    "return 0\n";

/* KEYS: lease sets; ARGV: member, lease ms.  Only leases still held. */
static const char renew_lua[] =
    "local t = redis.call('TIME')\n"
    "local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"
    "local ms = tonumber(ARGV[2])\n"
    "for i = 1, #KEYS do\n"
    "  redis.call('ZADD', KEYS[i], 'XX', now + ms, ARGV[1])\n"
    "  redis.call('PEXPIRE', KEYS[i], 2 * ms)\n"
    "end\n"
    "return 0\n";

struct lease {
	LIST_ENTRY(lease) entry;
	uint64_t	 id;
	unsigned	 n;
	char		 keys[QUOTA_BILL_MAX][FLEET_KEY_MAX];
};

/* Usage of one subject, quota and window, not yet added in the store. */
struct charge {
	char		 subject[QUOTA_SUBJECT_MAX];
	enum quota_kind	 kind;
	time_t		 at;		/* in the window it counts in */
	uint64_t	 amount;
};

struct fleet_quota {
	struct server	*srv;
	struct fleet_conf c;
	struct fleet_redis *rc;
	char		 sha_acquire[48], sha_renew[48], sha_charge[48];
	struct charge	*pend;		/* PENDING_MAX of them */
	size_t		 npend;
	int		 pend_full;	/* logged once until it drains */
	int		 up;		/* -1: not yet known */
	uint64_t	 retry_at;	/* mono_ms of the next connect */
	uint64_t	 nonce;		/* this run's, in lease members */
	uint64_t	 next_id;
	struct event	*renew;
	LIST_HEAD(, lease) held;
};

int
fleet_quota_key(char *buf, size_t len, const char *subject, enum quota_kind k,
    time_t now)
{
	time_t	 wlen, start = quota_window(k, now, &wlen);
	int	 n;

	if (wlen != 0)
		n = xsnprintf(buf, len, FLEET_KEY_PREFIX "%s:%s:%lld",
		    subject, quota_names[k], (long long)start);
	else
		n = xsnprintf(buf, len, FLEET_KEY_PREFIX "%s:%s", subject,
		    quota_names[k]);
	return n == -1 ? -1 : 0;
}

const char *
fleet_quota_store(const struct fleet_quota *f)
{
	return f->c.redis;
}

/* A lease's member: node, this run, lease; unique across restarts. */
static void
member_of(const struct fleet_quota *f, uint64_t id, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%llx:%llu", f->c.node_id,
	    (unsigned long long)f->nonce, (unsigned long long)id);
}

static void
record(struct fleet_quota *f, const char *event, const char *error)
{
	server_audit(f->srv, json_pack("{s:s, s:s, s:s, s:s, s:s*}", "event",
	    event, "node_id", f->c.node_id, "store", f->c.redis,
	    "on_unreachable", f->c.on_unreachable == FLEET_UNREACHABLE_LOCAL ? "local" :
	    "refuse", "error", error));
}

static void
drop_leases(struct fleet_quota *f)
{
	struct lease	*l;

	while ((l = LIST_FIRST(&f->held)) != NULL) {
		LIST_REMOVE(l, entry);
		free(l);
	}
}

/* The store went away: leases it held expire there on their own. */
static void
went_down(struct fleet_quota *f, const char *reason)
{
	char	 why[256];

	/* reason may be a reply's string, freed by the caller. */
	snprintf(why, sizeof(why), "%s", reason);
	fleet_redis_close(f->rc);
	f->rc = NULL;
	f->retry_at = mono_ms() + FLEET_RETRY_MS;
	drop_leases(f);
	if (f->up != 0) {
		log_warnx("fleet quota store %s unreachable (%s): %s",
		    f->c.redis, why, f->c.on_unreachable == FLEET_UNREACHABLE_LOCAL ?
		    "per-node quotas decide" : "calls refused");
		record(f, "fleet_degraded", why);
	}
	f->up = 0;
}

/* A command's reply; NULL with why when the connection failed. */
static redisReply *
command(struct fleet_quota *f, int argc, const char **argv, char *why,
    size_t len)
{
	return fleet_redis_argv(f->rc, argc, argv, why, len);
}

static int
load_script(struct fleet_quota *f, const char *lua, char *sha, size_t len,
    char *why, size_t whylen)
{
	const char	*av[] = { "SCRIPT", "LOAD", lua };
	redisReply	*r;
	int		 rv = -1;

	if ((r = command(f, 3, av, why, whylen)) == NULL)
		return -1;
	if (r->type == REDIS_REPLY_STRING && r->len < len) {
		snprintf(sha, len, "%s", r->str);
		rv = 0;
	} else
		snprintf(why, whylen, "SCRIPT LOAD: %.128s",
		    r->type == REDIS_REPLY_ERROR ? r->str : "refused");
	freeReplyObject(r);
	return rv;
}

static int
auth(struct fleet_quota *f, char *why, size_t len)
{
	const char	*av[2] = { "AUTH" };
	redisReply	*r;
	char		*pw;
	size_t		 n;
	int		 rv = -1;

	if (f->c.password_file[0] == '\0')
		return 0;
	if (read_file(f->c.password_file, PASSWORD_MAX, &pw, &n) == -1) {
		snprintf(why, len, "%.128s: %s", f->c.password_file,
		    strerror(errno));
		return -1;
	}
	pw[strcspn(pw, "\r\n")] = '\0';
	av[1] = pw;
	r = command(f, 2, av, why, len);
	explicit_bzero(pw, n);
	free(pw);
	if (r == NULL)
		return -1;
	if (r->type == REDIS_REPLY_STATUS)
		rv = 0;
	else
		snprintf(why, len, "AUTH refused");
	freeReplyObject(r);
	return rv;
}

/* 0 when connected (now or already); throttled to one try a second. */
static int
connect_store(struct fleet_quota *f)
{
	char		 why[256];

	if (f->rc != NULL)
		return 0;
	if (f->up == 0 && mono_ms() < f->retry_at)
		return -1;
	if ((f->rc = fleet_redis_open(f->c.redis, &f->c.tls, FLEET_TIMEOUT_MS,
	    why, sizeof(why))) == NULL || auth(f, why, sizeof(why)) == -1 ||
	    load_script(f, acquire_lua, f->sha_acquire, sizeof(f->sha_acquire),
	    why, sizeof(why)) == -1 ||
	    load_script(f, renew_lua, f->sha_renew, sizeof(f->sha_renew), why,
	    sizeof(why)) == -1 ||
	    load_script(f, charge_lua, f->sha_charge, sizeof(f->sha_charge),
	    why, sizeof(why)) == -1)
		goto bad;
	if (f->up == 0) {
		log_info("fleet quota store %s reachable again", f->c.redis);
		record(f, "fleet_restored", NULL);
	}
	f->up = 1;
	return 0;
bad:
	went_down(f, why);
	return -1;
}

/* EVALSHA with argv after the sha; NULL (store down) on any failure. */
static redisReply *
eval(struct fleet_quota *f, const char *sha, int nkeys, int argc,
    const char **argv)
{
	const char	*av[EVAL_ARGS_MAX];
	char		 nk[16], why[256];
	redisReply	*r;
	int		 i;

	if (connect_store(f) == -1)
		return NULL;
	snprintf(nk, sizeof(nk), "%d", nkeys);
	av[0] = "EVALSHA";
	av[1] = sha;
	av[2] = nk;
	for (i = 0; i < argc && i + 3 < (int)(sizeof(av) / sizeof(av[0]));
	    i++)
		av[i + 3] = argv[i];
	if ((r = command(f, i + 3, av, why, sizeof(why))) == NULL) {
		went_down(f, why);
		return NULL;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		went_down(f, r->str);
		freeReplyObject(r);
		return NULL;
	}
	return r;
}

/*
 * Adds pending usage in the store, CHARGE_CHUNK keys a script; what it
 * could not add stays pending, in order, for the next try.
 */
static void
flush_charges(struct fleet_quota *f)
{
	const char	*av[2 * CHARGE_CHUNK + CHARGE_CHUNK];
	char		 keys[CHARGE_CHUNK][FLEET_KEY_MAX];
	char		 num[CHARGE_CHUNK][2][24];
	struct charge	*c;
	redisReply	*r;
	time_t		 wlen;
	size_t		 i, n;

	_Static_assert(3 * CHARGE_CHUNK <= EVAL_ARGS_MAX - 3, "eval's argv");
	while (f->npend > 0 && connect_store(f) == 0) {
		n = f->npend < CHARGE_CHUNK ? f->npend : CHARGE_CHUNK;
		for (i = 0; i < n; i++) {
			c = &f->pend[i];
			(void)fleet_quota_key(keys[i], FLEET_KEY_MAX,
			    c->subject, c->kind, c->at);
			(void)quota_window(c->kind, c->at, &wlen);
			snprintf(num[i][0], sizeof(num[i][0]), "%llu",
			    (unsigned long long)c->amount);
			snprintf(num[i][1], sizeof(num[i][1]), "%lld",
			    2 * (long long)wlen);
			av[i] = keys[i];
			av[n + 2 * i] = num[i][0];
			av[n + 2 * i + 1] = num[i][1];
		}
		if ((r = eval(f, f->sha_charge, (int)n, (int)(3 * n), av)) ==
		    NULL)
			return;
		freeReplyObject(r);
		memmove(f->pend, f->pend + n, (f->npend - n) * sizeof(*c));
		f->npend -= n;
	}
	if (f->npend == 0)
		f->pend_full = 0;
}

static void
pend_add(struct fleet_quota *f, const char *subject, enum quota_kind k,
    time_t now, uint64_t amount)
{
	struct charge	*c;
	time_t		 wlen, w = quota_window(k, now, &wlen);
	size_t		 i;

	for (i = 0; i < f->npend; i++) {
		c = &f->pend[i];
		if (c->kind == k && quota_window(k, c->at, &wlen) == w &&
		    strcmp(c->subject, subject) == 0) {
			c->amount += amount;
			return;
		}
	}
	if (f->npend == PENDING_MAX) {
		if (!f->pend_full)
			log_warnx("fleet quota store %s: %d usage counts "
			    "waiting for it; more are counted on this node "
			    "only", f->c.redis, PENDING_MAX);
		f->pend_full = 1;
		return;
	}
	c = &f->pend[f->npend++];
	snprintf(c->subject, sizeof(c->subject), "%s", subject);
	c->kind = k;
	c->at = now;
	c->amount = amount;
}

void
fleet_quota_charge(struct fleet_quota *f, const struct quota_bill *b,
    uint64_t wall_ms, uint64_t cpu_ms, uint64_t artifact_bytes)
{
	time_t		 now = quota_now();
	uint64_t	 amount;
	unsigned	 i;
	int		 k;

	if (f == NULL)
		return;
	for (i = 0; i < b->n; i++)
		for (k = QUOTA_CPU_HOUR; k <= QUOTA_ARTIFACT_DAY; k++) {
			amount = k <= QUOTA_CPU_DAY ? cpu_ms : k <=
			    QUOTA_WALL_DAY ? wall_ms : artifact_bytes;
			if (amount > 0 && b->a[i].lim.max[k] != QUOTA_UNLIMITED)
				pend_add(f, b->a[i].subject, k, now, amount);
		}
	flush_charges(f);
}

static void
renew_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct fleet_quota	*f = arg;
	struct lease	*l;
	const char	*av[2 + QUOTA_BILL_MAX];
	char		 member[128], ms[32];
	redisReply	*r;
	unsigned	 i;

	flush_charges(f);
	snprintf(ms, sizeof(ms), "%u", f->c.lease_s * 1000);
	LIST_FOREACH(l, &f->held, entry) {
		for (i = 0; i < l->n; i++)
			av[i] = l->keys[i];
		member_of(f, l->id, member, sizeof(member));
		av[l->n] = member;
		av[l->n + 1] = ms;
		if ((r = eval(f, f->sha_renew, (int)l->n, (int)l->n + 2,
		    av)) == NULL)
			return;	/* down: the list was dropped */
		freeReplyObject(r);
	}
}

struct fleet_quota *
fleet_quota_open(struct server *srv, const struct fleet_conf *c)
{
	struct fleet_quota	*f;
	struct timeval	 tv;

	if (c->redis[0] == '\0')
		return NULL;
	f = xcalloc(1, sizeof(*f));
	f->srv = srv;
	f->c = *c;
	f->up = -1;
	f->nonce = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
	f->pend = xcalloc(PENDING_MAX, sizeof(*f->pend));
	LIST_INIT(&f->held);
	/* Renewed three times a lease: one lost renewal does not free it. */
	tv.tv_sec = c->lease_s / 3;
	tv.tv_usec = (c->lease_s % 3) * 333333;
	f->renew = event_new(srv->base, -1, EV_PERSIST, renew_cb, f);
	event_add(f->renew, &tv);
	(void)connect_store(f);
	log_info("fleet quotas in %s as node %s (on_unreachable: %s)",
	    c->redis, c->node_id, c->on_unreachable == FLEET_UNREACHABLE_LOCAL ? "local" :
	    "refuse");
	return f;
}

void
fleet_quota_release(struct fleet_quota *f, uint64_t id)
{
	const char	*av[3] = { "ZREM" };
	struct lease	*l;
	redisReply	*r;
	char		 member[128], why[256];
	unsigned	 i;

	if (f == NULL || id == 0)
		return;
	LIST_FOREACH(l, &f->held, entry)
		if (l->id == id)
			break;
	if (l == NULL)
		return;	/* dropped when the store went down */
	LIST_REMOVE(l, entry);
	member_of(f, l->id, member, sizeof(member));
	for (i = 0; i < l->n && f->rc != NULL; i++) {
		av[1] = l->keys[i];
		av[2] = member;
		if ((r = command(f, 3, av, why, sizeof(why))) == NULL) {
			went_down(f, why);
			break;
		}
		freeReplyObject(r);
	}
	free(l);
}

void
fleet_quota_close(struct fleet_quota *f)
{
	struct lease	*l;

	if (f == NULL)
		return;
	while ((l = LIST_FIRST(&f->held)) != NULL)
		fleet_quota_release(f, l->id);
	if (f->rc != NULL)
		flush_charges(f);
	if (f->npend > 0)
		log_warnx("fleet quota store %s: %zu usage counts never "
		    "reached it", f->c.redis, f->npend);
	free(f->pend);
	if (f->renew != NULL)
		event_free(f->renew);
	fleet_redis_close(f->rc);
	free(f);
}

/* A lease on the sets keys[k] of the subjects whose limit k counts. */
static uint64_t
hold(struct fleet_quota *f, uint64_t id, unsigned n, char keys[][FLEET_KEY_MAX],
    char lim[][24], unsigned k)
{
	struct lease	*l = xcalloc(1, sizeof(*l));
	unsigned	 i;

	l->id = id;
	for (i = 0; i < n; i++)
		if (strcmp(lim[QUOTA_N * i + k], "-1") != 0)
			snprintf(l->keys[l->n++], FLEET_KEY_MAX, "%s",
			    keys[QUOTA_N * i + k]);
	if (l->n == 0) {
		free(l);
		return 0;
	}
	LIST_INSERT_HEAD(&f->held, l, entry);
	return id;
}

enum fleet_answer
fleet_quota_acquire(struct fleet_quota *f, const struct quota_bill *b,
    int new_session, uint64_t *call_lease, uint64_t *session_lease,
    struct quota_verdict *v)
{
	const char	*av[EVAL_ARGS_MAX - 3];
	char		 keys[QUOTA_N * QUOTA_BILL_MAX][FLEET_KEY_MAX];
	char		 lim[QUOTA_N * QUOTA_BILL_MAX][24];
	char		 smember[128], cmember[128], ms[32];
	unsigned	 idx[QUOTA_BILL_MAX], i, k, n = 0, any;
	time_t		 now = quota_now(), wlen;
	uint64_t	 max;
	redisReply	*r;
	long long	 which, kind;

	*call_lease = *session_lease = 0;
	flush_charges(f);
	for (i = 0; i < b->n; i++) {
		any = 0;
		for (k = 0; k < QUOTA_N; k++) {
			max = b->a[i].lim.max[k];
			if (k == QUOTA_SESSIONS && !new_session)
				max = QUOTA_UNLIMITED;
			any |= max != QUOTA_UNLIMITED;
			snprintf(lim[QUOTA_N * n + k], sizeof(lim[0]),
			    "%lld", max == QUOTA_UNLIMITED ? -1LL :
			    (long long)max);
			if (fleet_quota_key(keys[QUOTA_N * n + k],
			    FLEET_KEY_MAX, b->a[i].subject, k, now) == -1)
				any = 0;	/* bounded by QUOTA_SUBJECT_MAX */
		}
		if (any)
			idx[n++] = i;
	}
	if (n == 0)
		return FLEET_OK;	/* nothing the fleet counts */
	member_of(f, f->next_id + 1, smember, sizeof(smember));
	member_of(f, f->next_id + 2, cmember, sizeof(cmember));
	snprintf(ms, sizeof(ms), "%u", f->c.lease_s * 1000);
	for (i = 0; i < QUOTA_N * n; i++) {
		av[i] = keys[i];
		av[QUOTA_N * n + 3 + i] = lim[i];
	}
	av[QUOTA_N * n] = smember;
	av[QUOTA_N * n + 1] = cmember;
	av[QUOTA_N * n + 2] = ms;
	if ((r = eval(f, f->sha_acquire, (int)(QUOTA_N * n),
	    (int)(2 * QUOTA_N * n + 3), av)) == NULL)
		goto down;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[1]->type != REDIS_REPLY_INTEGER ||
	    r->element[2]->type != REDIS_REPLY_INTEGER ||
	    (which = r->element[0]->integer) < 0 || which > (long long)n ||
	    (kind = r->element[1]->integer) < 0 || kind > QUOTA_N ||
	    (which != 0) != (kind != 0)) {
		freeReplyObject(r);
		went_down(f, "unexpected reply to the quota script");
		goto down;
	}
	if (which != 0) {
		i = idx[which - 1];
		memset(v, 0, sizeof(*v));
		v->kind = (enum quota_kind)(kind - 1);
		v->limit = b->a[i].lim.max[v->kind];
		v->used = (uint64_t)(r->element[2]->integer < 0 ? 0 :
		    r->element[2]->integer);
		v->resets = quota_window(v->kind, now, &wlen);
		if (wlen != 0)
			v->resets += wlen;
		snprintf(v->subject, sizeof(v->subject), "%s",
		    b->a[i].subject);
		freeReplyObject(r);
		return FLEET_OVER;
	}
	freeReplyObject(r);
	*session_lease = hold(f, f->next_id + 1, n, keys, lim,
	    QUOTA_SESSIONS);
	*call_lease = hold(f, f->next_id + 2, n, keys, lim, QUOTA_CONCURRENT);
	f->next_id += 2;
	return FLEET_OK;
down:
	return f->c.on_unreachable == FLEET_UNREACHABLE_LOCAL ? FLEET_LOCAL :
	    FLEET_DOWN;
}
