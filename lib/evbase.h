/*
 * The event base every daemon's loop runs on.  libevent's default
 * monotonic clock on Linux is CLOCK_MONOTONIC_COARSE (a jiffy, 4 ms
 * here), so a timer could fire that much before the duration its own
 * caller measured: a call's timeout, a resolver's per-upstream timeout.
 * EVENT_BASE_FLAG_PRECISE_TIMER makes it CLOCK_MONOTONIC.
 */
#ifndef STOCKADE_EVBASE_H
#define STOCKADE_EVBASE_H

#include <event2/event.h>

/* A base with precise timers and npriorities priorities (0: libevent's
 * one); NULL on failure. */
struct event_base	*evbase_new(int npriorities);

#endif
