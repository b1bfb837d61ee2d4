/*
 * Coalesced writes of what calls change in state_dir.  Each write is a
 * whole file renamed over the old one, and on ext4 a rename over a file
 * flushes the new one's data first (auto_da_alloc): 0.4-1 ms a write on
 * this disk, once for the status file and once (fsync too) for the quota
 * usage, at each call's start and end.  Here a burst of calls costs one
 * write of each per PERSIST_DELAY_MS, from a timer.  Writes only our own
 * state; trusts nothing it reads (it reads nothing).
 */
#include <event2/event.h>

#include "log.h"
#include "persist.h"
#include "quota.h"
#include "server.h"

static void
persist_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct server	*srv = arg;

	if (srv->quota != NULL)
		quota_flush(srv->quota);
	if (srv->published != NULL)
		srv->published(srv);
}

void
persist_soon(struct server *srv)
{
	struct timeval	 tv = { PERSIST_DELAY_MS / 1000,
			    (PERSIST_DELAY_MS % 1000) * 1000 };

	/* Stopping: the status file is about to go, and the usage is
	 * written now rather than on a timer that will not fire. */
	if (srv->stopping || srv->base == NULL) {
		if (srv->quota != NULL)
			quota_flush(srv->quota);
		return;
	}
	if (srv->persist_ev == NULL && (srv->persist_ev = evtimer_new(srv->base,
	    persist_cb, srv)) == NULL)
		fatalx("evtimer_new");
	/* Already due: that write will carry this change too. */
	if (!evtimer_pending(srv->persist_ev, NULL))
		evtimer_add(srv->persist_ev, &tv);
}

void
persist_flush(struct server *srv)
{
	if (srv->persist_ev == NULL)
		return;
	if (evtimer_pending(srv->persist_ev, NULL))
		persist_cb(-1, 0, srv);
	event_free(srv->persist_ev);
	srv->persist_ev = NULL;
}
