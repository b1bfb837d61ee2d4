/*
 * The warm pool (pool.h).  A pooled sandbox is a session built with no
 * principal (session_build): its own exec, ASLR, host uid and empty
 * workspace, like any other; the driver touches no random state before
 * its first call (driver.py reseeds then).  Nothing principal-specific is
 * written until session_handout.  Trusts what session_build trusts.
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "pool.h"
#include "session.h"
#include "session_int.h"

static void	pool_schedule(struct server *, unsigned ms);

static unsigned
pool_count(struct server *srv, const char *profile)
{
	struct session	*s;
	unsigned	 n = 0;

	LIST_FOREACH(s, &srv->pool, entry)
		n += strcmp(s->prof.name, profile) == 0;
	return n;
}

static void
pool_published(struct server *srv)
{
	srv->counters.pool_ready = srv->npool;
	if (srv->published != NULL)
		srv->published(srv);
}

/* What the pooled sandboxes hold now, as their cgroups count it. */
static uint64_t
pool_memory(struct server *srv)
{
	struct session	*s;
	uint64_t	 sum = 0;

	LIST_FOREACH(s, &srv->pool, entry)
		if (s->sb.cg != NULL)
			sum += cgroup_memory_peak(s->sb.cg);
	return sum;
}

/* The first profile short of its pool.size, or NULL. */
static const struct profile *
pool_short(struct server *srv)
{
	size_t	 i;

	if (srv->profile.pool_size > pool_count(srv, srv->profile.name))
		return &srv->profile;
	for (i = 0; i < srv->nprofiles; i++)
		if (srv->profiles[i].pool_size > pool_count(srv,
		    srv->profiles[i].name))
			return &srv->profiles[i];
	return NULL;
}

/* One build per turn of the loop: no longer than a session_create. */
static void
pool_refill_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct server		*srv = arg;
	const struct profile	*p;
	struct session		*s;
	char			 err[512];

	if (srv->stopping || (p = pool_short(srv)) == NULL ||
	    srv->nsessions + srv->npool >= srv->conf.server.max_sessions)
		return;
	/* Memory held by nobody's sandboxes is bounded on its own. */
	if (srv->conf.server.pool_memory > 0 && srv->npool > 0 &&
	    pool_memory(srv) >= srv->conf.server.pool_memory)
		return;
	if ((s = session_build(srv, NULL, p, err, sizeof(err))) == NULL) {
		/* Not in a hurry: a request builds its own meanwhile. */
		log_warnx("pool: profile %s: %s", p->name, err);
		pool_schedule(srv, 1000);
		return;
	}
	LIST_INSERT_HEAD(&srv->pool, s, entry);
	srv->npool++;
	pool_published(srv);
	pool_schedule(srv, 0);
}

static void
pool_schedule(struct server *srv, unsigned ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	if (srv->pool_ev != NULL && !srv->stopping &&
	    !evtimer_pending(srv->pool_ev, NULL))
		evtimer_add(srv->pool_ev, &tv);
}

void
pool_init(struct server *srv)
{
	LIST_INIT(&srv->pool);
	srv->npool = 0;
	if ((srv->pool_ev = evtimer_new(srv->base, pool_refill_cb, srv)) ==
	    NULL)
		fatalx("evtimer_new");
	pool_schedule(srv, 0);
}

struct session *
pool_take(struct server *srv, const struct profile *p)
{
	struct session	*s, *next;

	if (p->pool_size == 0 || srv->pool_ev == NULL)
		return NULL;
	for (s = LIST_FIRST(&srv->pool); s != NULL; s = next) {
		next = LIST_NEXT(s, entry);
		if (strcmp(s->prof.name, p->name) != 0)
			continue;
		LIST_REMOVE(s, entry);
		srv->npool--;
		/* A driver that died waiting is no session to hand out. */
		if (session_dead(s)) {
			log_warnx("pool: sandbox %s died waiting", s->spec.id);
			session_discard(s);
			continue;
		}
		/* Not published here: the hand-out that follows publishes it
		 * all (a status file write less on the request path). */
		srv->counters.pool_hits++;
		srv->counters.pool_ready = srv->npool;
		pool_schedule(srv, POOL_REFILL_MS);
		return s;
	}
	srv->counters.pool_misses++;
	srv->counters.pool_ready = srv->npool;
	pool_schedule(srv, POOL_REFILL_MS);
	return NULL;
}

void
pool_kick(struct server *srv)
{
	pool_schedule(srv, POOL_REFILL_MS);
}

int
pool_evict(struct server *srv)
{
	struct session	*s;

	if ((s = LIST_FIRST(&srv->pool)) == NULL)
		return 0;
	LIST_REMOVE(s, entry);
	srv->npool--;
	session_discard(s);
	pool_published(srv);
	return 1;
}

void
pool_drain(struct server *srv)
{
	if (srv->pool_ev == NULL)
		return;
	while (pool_evict(srv))
		;
	pool_schedule(srv, 0);
}

void
pool_free(struct server *srv)
{
	if (srv->pool_ev == NULL)
		return;
	event_free(srv->pool_ev);
	srv->pool_ev = NULL;
	while (pool_evict(srv))
		;
}
