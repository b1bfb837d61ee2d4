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
static unsigned	pool_ready(struct server *);

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
	srv->counters.pool_ready = pool_ready(srv);
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

/* A call runs or is about to: a build now would hold up its answer. */
static int
pool_calls_in_flight(struct server *srv)
{
	struct session	*s;

	LIST_FOREACH(s, &srv->sessions, entry)
		if (session_busy(s))
			return 1;
	return 0;
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

/* Sandboxes in the pool that a session may take now. */
static unsigned
pool_ready(struct server *srv)
{
	struct session	*s;
	unsigned	 n = 0;

	LIST_FOREACH(s, &srv->pool, entry)
		n += !s->warming;
	return n;
}

static void
pool_remove(struct server *srv, struct session *s)
{
	LIST_REMOVE(s, entry);
	srv->npool--;
	session_discard(s);
	srv->counters.pool_ready = pool_ready(srv);
}

/*
 * A waiting driver says nothing: its control socket readable is its end
 * (killed, OOM) or a driver gone wrong.  Thrown away now and built again,
 * so the next session is not the one to find it dead (a miss).
 */
static void
pool_dead_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct session	*s = arg;
	struct server	*srv = s->srv;

	log_warnx("pool: sandbox %s died waiting", s->spec.id);
	srv->counters.pool_discarded++;
	pool_remove(srv, s);
	pool_published(srv);
	/* Not at once: a profile whose drivers keep dying is no reason to
	 * build in a loop. */
	pool_schedule(srv, 1000);
}

/* The driver of a sandbox built ahead spoke, or its time is up. */
static void
pool_ready_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct session	*s = arg;
	struct server	*srv = s->srv;

	event_free(s->ctl_ev);
	s->ctl_ev = NULL;
	/* Readable: the frame is there or coming whole (blocking read). */
	if ((ev & EV_TIMEOUT) || session_ready(s, DRIVER_READY_MS) == -1) {
		/* init's own word when its checklist failed. */
		log_warnx("pool: profile %s: %s", s->prof.name, ev &
		    EV_TIMEOUT ? DRIVER_NOT_STARTED : session_start_failure(s));
		srv->counters.pool_discarded++;
		pool_remove(srv, s);
		pool_published(srv);
		pool_schedule(srv, 1000);
		return;
	}
	s->warming = 0;
	if ((s->ctl_ev = event_new(srv->base, s->ctl, EV_READ, pool_dead_cb,
	    s)) == NULL || event_add(s->ctl_ev, NULL) == -1)
		fatalx("pool: event_new");
	pool_published(srv);
	pool_schedule(srv, 0);
}

/*
 * One build per turn of the loop, as long as a session_create's sandbox
 * build; the driver's start (and the profile's pre-imports) is awaited
 * from the loop, and the next build waits for it.
 */
static void
pool_refill_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct server		*srv = arg;
	const struct profile	*p;
	struct session		*s;
	struct timeval		 tv = { DRIVER_READY_MS / 1000,
				    (DRIVER_READY_MS % 1000) * 1000 };
	char			 err[512];

	/* Memory held by nobody's sandboxes is bounded on its own. */
	if (srv->stopping || srv->npool > pool_ready(srv) ||
	    (p = pool_short(srv)) == NULL ||
	    srv->nsessions + srv->npool >= srv->conf.server.max_sessions ||
	    (srv->conf.server.pool_memory > 0 && srv->npool > 0 &&
	    pool_memory(srv) >= srv->conf.server.pool_memory)) {
		srv->pool_deferred = 0;		/* no build waits */
		/* Nothing warming and nothing more to build: as warm as it
		 * gets (said once, for readiness). */
		if (!srv->stopping && srv->npool == pool_ready(srv) &&
		    !srv->counters.pool_warm) {
			srv->counters.pool_warm = 1;
			pool_published(srv);
		}
		return;
	}
	if (pool_calls_in_flight(srv)) {
		if (srv->pool_deferred == 0)
			srv->pool_deferred = mono_ms();
		if (mono_ms() - srv->pool_deferred < POOL_DEFER_MAX_MS) {
			pool_schedule(srv, POOL_REFILL_MS);
			return;
		}
	}
	srv->pool_deferred = 0;
	if ((s = session_build(srv, NULL, p, err, sizeof(err))) == NULL) {
		/* Not in a hurry: a request builds its own meanwhile. */
		log_warnx("pool: profile %s: %s", p->name, err);
		pool_schedule(srv, 1000);
		return;
	}
	s->warming = 1;
	LIST_INSERT_HEAD(&srv->pool, s, entry);
	srv->npool++;
	if ((s->ctl_ev = event_new(srv->base, s->ctl, EV_READ, pool_ready_cb,
	    s)) == NULL || event_add(s->ctl_ev, &tv) == -1)
		fatalx("pool: event_new");
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
	srv->pool_deferred = 0;
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
		if (s->warming || strcmp(s->prof.name, p->name) != 0)
			continue;
		/* Died since the loop last looked: no session to hand out. */
		if (session_dead(s)) {
			log_warnx("pool: sandbox %s died waiting", s->spec.id);
			srv->counters.pool_discarded++;
			pool_remove(srv, s);
			continue;
		}
		LIST_REMOVE(s, entry);
		srv->npool--;
		event_free(s->ctl_ev);		/* the hand-out makes its own */
		s->ctl_ev = NULL;
		/* Not published here: the hand-out that follows publishes it
		 * all (a status file write less on the request path). */
		srv->counters.pool_hits++;
		srv->counters.pool_ready = pool_ready(srv);
		pool_schedule(srv, POOL_REFILL_MS);
		return s;
	}
	srv->counters.pool_misses++;
	srv->counters.pool_ready = pool_ready(srv);
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
	pool_remove(srv, s);
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
