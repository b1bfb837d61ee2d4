/*
 * What the two halves of netguard's resolver share: resolver.c (the
 * sandbox side: listeners, decisions, events) and upstream.c (queries in
 * flight to the policy's upstreams).  Internal to netguard; the API is
 * resolver.h.
 */
#ifndef NETGUARD_RESOLVER_INT_H
#define NETGUARD_RESOLVER_INT_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <stdbool.h>

#include "buf.h"
#include "dnsmsg.h"
#include "exfil.h"
#include "resolver.h"

struct resolver_tcp;

/* One query forwarded upstream. */
struct resolver_query {
	TAILQ_ENTRY(resolver_query) entry;
	struct resolver_client	*c;
	struct resolver_tcp	*conn;		/* NULL: came over UDP */
	struct sockaddr_storage	 from;		/* UDP: who asked */
	socklen_t		 fromlen;
	struct dnsmsg_query	 q;
	unsigned		 policy_gen;
	int			 group;
	/* Copied: the policy may be swapped while this is in flight. */
	struct sockaddr_storage	 ups[POLICY_UPSTREAMS_MAX];
	size_t			 nups, upi;
	bool			 tcp;		/* this attempt over TCP */
	int			 fd;
	struct event		*ev, *timer;
	uint16_t		 id;
	uint8_t			*msg;		/* what we send (TCP: framed) */
	size_t			 msglen, sent;
	struct buf		 in;		/* TCP reply */
};

struct resolver_tcp {
	TAILQ_ENTRY(resolver_tcp) entry;
	struct resolver_client	*c;
	int			 fd;
	struct event		*rev, *wev, *idle;
	struct buf		 in, out;
	unsigned		 inflight;
	bool			 eof;		/* peer is done sending */
	bool			 broken;	/* close as soon as possible */
	bool			 busy;		/* its read callback is running */
};

struct resolver_client {
	LIST_ENTRY(resolver_client) entry;
	struct resolver		*r;
	const struct policy	*policy;
	unsigned		 policy_gen;
	void			*owner;
	int			 udp_fd, tcp_fd;
	struct event		*udp_ev, *tcp_ev;
	TAILQ_HEAD(, resolver_tcp) conns;
	unsigned		 nconns;
	TAILQ_HEAD(, resolver_query) queries;
	unsigned		 nqueries;
	struct exfil_state	*exfil;
	uint64_t		 tokens;	/* milli-queries */
	uint64_t		 refill_ms;
	unsigned		 suppressed;	/* dropped since the last event */
	/* Callbacks running for this client; a close meanwhile is only
	 * marked, and the last one out frees. */
	unsigned		 busy;
	bool			 closed;
};

struct resolver {
	struct event_base	*base;
	int			 nsfd;
	struct resolver_conf	 conf;
	resolver_pin_fn		*pin;
	resolver_event_fn	*emit;
	LIST_HEAD(, resolver_client) clients;
};

static inline void
resolver_timeval(unsigned ms, struct timeval *tv)
{
	tv->tv_sec = ms / 1000;
	tv->tv_usec = (ms % 1000) * 1000;
}

/* resolver.c */
/* Around every libevent callback: a close meanwhile is only marked, and
 * the release frees. */
void	 resolver_hold(struct resolver_client *);
void	 resolver_release(struct resolver_client *);
/* A new event about q, carrying "suppressed" if anything was dropped. */
json_t	*resolver_event(struct resolver_client *, const char *type,
	    const struct dnsmsg_query *q);
json_t	*resolver_event_refused(struct resolver_client *,
	    const struct dnsmsg_query *, const char *reason, uint8_t rcode);
/* Hands ev to the owner; afterwards the caller checks c->closed. */
void	 resolver_emit(struct resolver_client *, json_t *ev);
/* A reply to the sandbox: over conn, or to from over UDP. */
void	 resolver_send(struct resolver_client *, struct resolver_tcp *conn,
	    const struct sockaddr_storage *from, socklen_t fromlen,
	    const uint8_t *wire, size_t len);
/* Closes conn if it is broken, or done and idle (not from its own
 * read callback). */
void	 resolver_tcp_maybe_close(struct resolver_tcp *);

/* upstream.c */
/* Forwards an allowed query (q is consumed) to the policy's upstreams;
 * the answer, pinned, or a failure, goes back to the sandbox. */
void	 upstream_forward(struct resolver_client *, struct resolver_tcp *conn,
	    const struct sockaddr_storage *from, socklen_t fromlen,
	    struct dnsmsg_query *q, int group);
/* Forgets a query in flight, without a reply or an event. */
void	 upstream_query_free(struct resolver_query *);

#endif
