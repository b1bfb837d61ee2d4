/*
 * The daemons' event base and loop: precise timers, busy polling.  The
 * why of both is in evbase.h.
 */
#include <sched.h>

#include <event2/event.h>

#include "evbase.h"
#include "util.h"

static uint64_t		poll_until;	/* mono ns */
static int		can_poll = -1;
static struct evbase_stats	stats;

struct event_base *
evbase_new(int npriorities)
{
	struct event_config	*cfg;
	struct event_base	*base = NULL;

	if ((cfg = event_config_new()) == NULL)
		return NULL;
	if (event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER) == 0)
		base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (base != NULL && npriorities > 0 &&
	    event_base_priority_init(base, npriorities) == -1) {
		event_base_free(base);
		base = NULL;
	}
	return base;
}

int
evbase_can_poll(void)
{
	if (can_poll == -1)
		can_poll = cpus_usable() > 1;
	return can_poll;
}

void
evbase_poll_for(unsigned us)
{
	uint64_t	 until;

	if (us == 0 || !evbase_can_poll())
		return;
	until = mono_ns() + (uint64_t)us * 1000;
	if (!evbase_polling())
		stats.polls++;
	if (until > poll_until)
		poll_until = until;
}

int
evbase_polling(void)
{
	return poll_until != 0 && mono_ns() < poll_until;
}

void
evbase_stats(struct evbase_stats *st)
{
	*st = stats;
}

int
evbase_dispatch(struct event_base *base)
{
	uint64_t	 t0 = 0;
	int		 polling, r;

	for (;;) {
		if ((polling = evbase_polling()))
			t0 = mono_ns();
		r = event_base_loop(base, polling ? EVLOOP_NONBLOCK :
		    EVLOOP_ONCE);
		if (r != 0)
			return r == 1 ? 0 : -1;	/* 1: no events left */
		if (event_base_got_exit(base) || event_base_got_break(base))
			return 0;
		if (polling) {
			(void)sched_yield();
			stats.poll_ns += mono_ns() - t0;
		}
	}
}
