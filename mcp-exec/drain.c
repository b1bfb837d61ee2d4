/*
 * Draining (fleet.drain_grace_s), for a node a router feeds: SIGTERM
 * stops new sessions and new calls at once (the HTTP transport answers
 * 503 to a request that holds nothing here, so the router sends it to
 * another node; the tools refuse new code with typed errors), lets the
 * calls already running finish within the grace, then closes every
 * session with its reason on the record and stops.  Runs on the loop;
 * trusts only its configuration.
 */
#include <stdint.h>
#include <stdio.h>

#include <event2/event.h>

#include "drain.h"
#include "log.h"
#include "sessions/fleet.h"
#include "sessions/pool.h"
#include "sessions/session.h"
#include "util.h"

#define DRAIN_POLL_MS	100	/* how often the calls in flight are counted */

static struct {
	struct event	*ev;
	drain_stop_fn	*stop;
	uint64_t	 t0;		/* mono ms, at SIGTERM */
	uint64_t	 deadline;
	unsigned	 grace_s;
	unsigned	 cut;		/* calls the grace ended */
	uint64_t	 waited_ms;	/* SIGTERM to the sessions' close */
	int		 done;
} drain;

static void
drain_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct server	*srv = arg;

	if (srv->ncalls > 0 && mono_ms() < drain.deadline)
		return;
	evtimer_del(drain.ev);
	drain.cut = srv->ncalls;
	drain.done = 1;
	drain.waited_ms = mono_ms() - drain.t0;
	log_info("drained after %llu ms%s", (unsigned long long)
	    drain.waited_ms, drain.cut > 0 ? ": the grace ended the calls "
	    "left" : "");
	drain.stop(srv, drain.cut > 0 ? FLEET_DRAIN_CUT : FLEET_DRAINED);
}

int
drain_begin(struct server *srv, drain_stop_fn *stop)
{
	struct timeval	 tv = { 0, DRAIN_POLL_MS * 1000 };

	if (srv->conf.fleet.drain_grace_s == 0 || srv->draining)
		return -1;
	srv->draining = 1;
	drain.stop = stop;
	drain.grace_s = srv->conf.fleet.drain_grace_s;
	drain.t0 = mono_ms();
	drain.deadline = drain.t0 + drain.grace_s * 1000ULL;
	/* Nothing is built ahead for sessions that will not come. */
	pool_free(srv);
	log_info("SIGTERM: draining node %s: %u call%s running, %u s of "
	    "grace; SIGTERM again or SIGINT stops at once",
	    FLEET_SELF(srv->conf.fleet.node_id), srv->ncalls,
	    srv->ncalls == 1 ? "" : "s", drain.grace_s);
	if ((drain.ev = event_new(srv->base, -1, EV_PERSIST, drain_tick,
	    srv)) == NULL || event_add(drain.ev, &tv) == -1)
		fatalx("drain timer");
	return 0;
}

json_t *
drain_record(json_t *ev)
{
	if (ev != NULL && drain.ev != NULL)
		json_object_set_new(ev, "drain", json_pack("{s:I, s:I, s:I, "
		    "s:b}", "grace_s", (json_int_t)drain.grace_s, "waited_ms",
		    (json_int_t)(mono_ms() - drain.t0), "calls_cut",
		    (json_int_t)drain.cut, "completed", drain.done));
	return ev;
}

void
drain_free(void)
{
	if (drain.ev != NULL)
		event_free(drain.ev);
	drain.ev = NULL;
}
