/*
 * The event base every daemon's loop runs on, and the loop itself.
 *
 * libevent's default monotonic clock on Linux is CLOCK_MONOTONIC_COARSE
 * (a jiffy, 4 ms here), so a timer could fire that much before the
 * duration its own caller measured: a call's timeout, a resolver's
 * per-upstream timeout.  evbase_new's base uses CLOCK_MONOTONIC.
 *
 * Busy polling: a loop asleep in epoll_wait on an idle CPU pays a wake-up
 * for the next event, 35-100 us on a VM without halt-polling, as much as
 * an fdatasync.  Where a reply is due within microseconds (an audit ack,
 * a short call's result), the code that sent the request calls
 * evbase_poll_for, and evbase_dispatch polls (epoll_wait without a
 * timeout, yielding the CPU to anyone runnable on it between polls)
 * until then instead of sleeping.  Every event is served as it would be.
 * With one CPU to run on, polling would only keep the peer from running:
 * it is off.  One loop per process polls (the main thread's).
 */
#ifndef STOCKADE_EVBASE_H
#define STOCKADE_EVBASE_H

#include <stdint.h>

#include <event2/event.h>

/* A base with precise timers and npriorities priorities (0: libevent's
 * one); NULL on failure. */
struct event_base	*evbase_new(int npriorities);
/* event_base_dispatch, polling while evbase_poll_for asked it to. */
int			 evbase_dispatch(struct event_base *);
/* Poll rather than sleep for the next us microseconds (or longer, if
 * asked before). */
void			 evbase_poll_for(unsigned us);
/* 1 while the loop polls. */
int			 evbase_polling(void);
/* 0 with one CPU to run on: evbase_poll_for does nothing. */
int			 evbase_can_poll(void);
/* Polls begun (asked for while not polling), and the time spent in them,
 * the events served meanwhile included: the most polling cost in CPU. */
struct evbase_stats {
	uint64_t	polls;
	uint64_t	poll_ns;
};
void			 evbase_stats(struct evbase_stats *);

#endif
