/*
 * GET /metrics (Prometheus text format 0.0.4), for operators: the counters
 * sessions and tools publish (sessions/counters.h), the live sessions as
 * they last published them, the audit link's state, and netguard's deny
 * counters for this server's sandboxes, asked at scrape time.  It observes
 * and never calls back into the layers it reports on.
 */
#ifndef STOCKADE_METRICS_H
#define STOCKADE_METRICS_H

/* A scrape waits this long for netguard, on the event loop's thread. */
#define METRICS_NETGUARD_TIMEOUT_MS	200

struct server;
struct evbuffer;

/* Appends the exposition to out; may ask netguard (bounded wait). */
void	metrics_render(struct server *, struct evbuffer *out);

#endif
