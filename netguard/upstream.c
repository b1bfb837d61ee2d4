/*
 * netguard's resolver, upstream side: each allowed query goes to the
 * policy's upstreams in turn, over UDP (a fresh socket, port and id per
 * attempt) or TCP, and its answer is pinned before the sandbox sees it.
 * Upstream replies are untrusted: matched by id and question, parsed by
 * dnsmsg.c, and only the question's CNAME chain is believed.
 */
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "netns.h"
#include "resolver_int.h"
#include "util.h"

#define UPSTREAM_INFLIGHT_MAX	64	/* queries per sandbox */
#define UPSTREAM_RECV_MAX	4096	/* UDP reply, at most */
#define UPSTREAM_READ_BATCH	16	/* datagrams read per wakeup */

static void	upstream_attempt(struct resolver_query *);
static void	upstream_io_cb(evutil_socket_t, short, void *);

/* Ends the current attempt: socket, events, buffers. */
static void
upstream_attempt_end(struct resolver_query *rq)
{
	if (rq->ev != NULL)
		event_free(rq->ev);
	if (rq->timer != NULL)
		event_free(rq->timer);
	if (rq->fd != -1)
		close(rq->fd);
	free(rq->msg);
	buf_free(&rq->in);
	rq->ev = rq->timer = NULL;
	rq->fd = -1;
	rq->msg = NULL;
	rq->msglen = rq->sent = 0;
}

void
upstream_query_free(struct resolver_query *rq)
{
	struct resolver_client	*c = rq->c;
	struct resolver_tcp	*conn = rq->conn;

	upstream_attempt_end(rq);
	dnsmsg_query_free(&rq->q);
	TAILQ_REMOVE(&c->queries, rq, entry);
	c->nqueries--;
	free(rq);
	if (conn != NULL) {
		conn->inflight--;
		resolver_tcp_maybe_close(conn);
	}
}

/* Gives up on rq with rcode: reply, forget, report. */
static void
upstream_fail(struct resolver_query *rq, uint8_t rcode,
    const char *reason)
{
	struct resolver_client	*c = rq->c;
	uint8_t			*wire;
	size_t			 len;
	json_t			*ev;

	if (dnsmsg_reply_error(&rq->q, rcode, &wire, &len) == 0) {
		resolver_send(c, rq->conn, &rq->from, rq->fromlen, wire, len);
		free(wire);
	}
	ev = resolver_event_refused(c, &rq->q, reason, rcode);
	upstream_query_free(rq);
	resolver_emit(c, ev);
}

/* The next upstream, over the transport the query came by. */
static void
upstream_next(struct resolver_query *rq)
{
	rq->upi++;
	rq->tcp = rq->conn != NULL;
	upstream_attempt(rq);
}

/*
 * The policy may have been swapped while the query was upstream: decide
 * again under the current one.  0, or -1 after refusing the query.
 */
static int
upstream_redecide(struct resolver_query *rq)
{
	struct resolver_client	*c = rq->c;
	const struct policy	*p = c->policy;

	if (rq->policy_gen == c->policy_gen)
		return 0;
	if (p->level < LEVEL_L2) {
		upstream_fail(rq, LDNS_RCODE_REFUSED, "not_allowed");
		return -1;
	}
	if (p->level == LEVEL_L3) {
		rq->group = -1;
		return 0;
	}
	if ((rq->group = policy_match_name(p, rq->q.name)) < 0) {
		upstream_fail(rq, LDNS_RCODE_NXDOMAIN, "not_allowed");
		return -1;
	}
	return 0;
}

/*
 * A matching answer: pin every safe address, then (and only then) reply.
 * Consumes a.
 */
static void
upstream_answered(struct resolver_query *rq, struct dnsmsg_answer *a)
{
	struct resolver_client	*c = rq->c;
	struct resolver		*r = c->r;
	const struct dnsmsg_addr *d;
	json_t			*ev, *pinned, *unpinned;
	char			 str[INET6_ADDRSTRLEN];
	uint32_t		 ttl = a->ttl;
	uint8_t			*wire;
	size_t			 i, len;
	bool			 failed = false;

	if (upstream_redecide(rq) == -1) {
		dnsmsg_answer_free(a);
		return;
	}
	if (ttl < r->conf.ttl_min)
		ttl = r->conf.ttl_min;
	if (ttl > r->conf.ttl_max)
		ttl = r->conf.ttl_max;

	pinned = json_array();
	unpinned = json_array();
	for (i = 0; i < a->naddrs && !failed; i++) {
		d = &a->addrs[i];
		if (inet_ntop(d->family, d->addr, str, sizeof(str)) == NULL)
			fatal("inet_ntop");
		if (!d->pinnable) {
			json_array_append_new(unpinned, json_string(str));
			continue;
		}
		if (rq->group < 0)
			continue;	/* L3: nothing is pinned */
		if (r->pin(c->owner, (unsigned)rq->group, d->family, d->addr,
		    ttl, rq->q.name) == -1)
			failed = true;
		else
			json_array_append_new(pinned, json_string(str));
		if (c->closed)
			goto out;
	}
	if (failed) {
		dnsmsg_answer_free(a);
		json_decref(pinned);
		json_decref(unpinned);
		upstream_fail(rq, LDNS_RCODE_SERVFAIL, "pin_failed");
		return;
	}

	if (dnsmsg_reply_answer(&rq->q, a,
	    json_array_size(pinned) > 0 ? ttl : 0,
	    rq->conn != NULL ? DNSMSG_TCP_MAX : rq->q.udp_max, &wire,
	    &len) == -1) {
		dnsmsg_answer_free(a);
		json_decref(pinned);
		json_decref(unpinned);
		upstream_fail(rq, LDNS_RCODE_SERVFAIL, "upstream");
		return;
	}
	resolver_send(c, rq->conn, &rq->from, rq->fromlen, wire, len);
	free(wire);

	ev = resolver_event(c, "dns_allowed", &rq->q);
	json_object_set_new(ev, "decision", json_string("allow"));
	json_object_set_new(ev, "group", json_integer(rq->group));
	json_object_set_new(ev, "pinned", pinned);
	if (json_array_size(unpinned) > 0)
		json_object_set_new(ev, "unpinned", unpinned);
	else
		json_decref(unpinned);
	json_object_set_new(ev, "ttl",
	    json_integer(json_array_size(pinned) > 0 ? ttl : 0));
	json_object_set_new(ev, "rcode",
	    json_string(dnsmsg_rcode_name(a->rcode)));
	dnsmsg_answer_free(a);
	upstream_query_free(rq);
	resolver_emit(c, ev);
	return;
out:
	/* Closed by the owner mid-way: the client's release frees rq. */
	dnsmsg_answer_free(a);
	json_decref(pinned);
	json_decref(unpinned);
}

/* A reply that matched our query; consumes a. */
static void
upstream_reply(struct resolver_query *rq, struct dnsmsg_answer *a)
{
	if (a->tc && !rq->tcp) {
		/* Truncated over UDP: the same upstream over TCP. */
		dnsmsg_answer_free(a);
		rq->tcp = true;
		upstream_attempt(rq);
		return;
	}
	if (a->rcode != LDNS_RCODE_NOERROR &&
	    a->rcode != LDNS_RCODE_NXDOMAIN) {
		/* SERVFAIL, REFUSED...: another upstream may do better. */
		dnsmsg_answer_free(a);
		upstream_next(rq);
		return;
	}
	upstream_answered(rq, a);
}

static void
upstream_udp_read(struct resolver_query *rq)
{
	uint8_t			 buf[UPSTREAM_RECV_MAX];
	struct dnsmsg_answer	 a;
	ssize_t			 n;
	unsigned		 i;

	/* Bounded: spoofed junk must not keep the loop here. */
	for (i = 0; i < UPSTREAM_READ_BATCH; i++) {
		/* Connected: the kernel drops datagrams from anyone else. */
		if ((n = recv(rq->fd, buf, sizeof(buf), 0)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			/* ECONNREFUSED and the like: nobody there. */
			upstream_next(rq);
			return;
		}
		if (dnsmsg_answer_parse(buf, (size_t)n, &rq->q, rq->id,
		    &a) == -1)
			continue;	/* not ours: keep waiting */
		upstream_reply(rq, &a);
		return;
	}
}

static void
upstream_tcp_io(struct resolver_query *rq, short what)
{
	struct resolver		*r = rq->c->r;
	struct dnsmsg_answer	 a;
	ssize_t			 n;
	size_t			 mlen;

	if (rq->sent < rq->msglen) {
		if (!(what & EV_WRITE))
			return;
		n = send(rq->fd, rq->msg + rq->sent, rq->msglen - rq->sent,
		    MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR)
				return;
			upstream_next(rq);
			return;
		}
		if ((rq->sent += (size_t)n) < rq->msglen)
			return;
		/* Sent: now wait for the reply only. */
		event_free(rq->ev);
		if ((rq->ev = event_new(r->base, rq->fd, EV_READ | EV_PERSIST,
		    upstream_io_cb, rq)) == NULL ||
		    event_add(rq->ev, NULL) == -1)
			fatalx("event_new: out of memory");
		return;
	}
	if (buf_reserve(&rq->in, 1) == -1) {
		upstream_next(rq);
		return;
	}
	n = recv(rq->fd, rq->in.data + rq->in.len, rq->in.cap - rq->in.len, 0);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (n <= 0) {
		upstream_next(rq);
		return;
	}
	rq->in.len += (size_t)n;
	if (rq->in.len < 2)
		return;
	mlen = (size_t)rq->in.data[0] << 8 | rq->in.data[1];
	if (rq->in.len < 2 + mlen)
		return;
	/* One query per connection: anything but its reply is a failure. */
	if (dnsmsg_answer_parse(rq->in.data + 2, mlen, &rq->q, rq->id,
	    &a) == -1) {
		upstream_next(rq);
		return;
	}
	upstream_reply(rq, &a);
}

static void
upstream_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver_query	*rq = arg;
	struct resolver_client	*c = rq->c;

	resolver_hold(c);
	if (rq->tcp)
		upstream_tcp_io(rq, what);
	else
		upstream_udp_read(rq);
	resolver_release(c);
}

static void
upstream_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver_query	*rq = arg;
	struct resolver_client	*c = rq->c;

	resolver_hold(c);
	upstream_next(rq);
	resolver_release(c);
}

static socklen_t
upstream_salen(const struct sockaddr_storage *ss)
{
	switch (ss->ss_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

/* Opens one attempt at upstream rq->upi; 0, or -1 to try the next. */
static int
upstream_open(struct resolver_query *rq)
{
	struct resolver		*r = rq->c->r;
	const struct sockaddr_storage *ss = &rq->ups[rq->upi];
	struct timeval		 tv;
	socklen_t		 salen;
	uint8_t			*wire;
	size_t			 len;
	short			 what;

	if ((salen = upstream_salen(ss)) == 0)
		return -1;
	/* A fresh id and, through a fresh socket, a fresh source port:
	 * an off-path spoofer has to guess both. */
	rq->id = (uint16_t)arc4random_uniform(UINT16_MAX + 1);
	if (dnsmsg_upstream_query(&rq->q, rq->id, &wire, &len) == -1) {
		log_warnx("resolver: cannot build the upstream query");
		return -1;
	}
	if (rq->tcp) {
		rq->msg = xmalloc(2 + len);
		rq->msg[0] = (uint8_t)(len >> 8);
		rq->msg[1] = (uint8_t)len;
		memcpy(rq->msg + 2, wire, len);
		rq->msglen = 2 + len;
		free(wire);
		buf_init(&rq->in, 2 + DNSMSG_TCP_MAX);
	} else {
		rq->msg = wire;
		rq->msglen = len;
	}
	rq->fd = netns_socket(r->nsfd, ss->ss_family,
	    (rq->tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK, 0);
	if (rq->fd == -1) {
		log_warn("resolver: upstream socket");
		return -1;
	}
	if (connect(rq->fd, (const struct sockaddr *)ss, salen) == -1 &&
	    errno != EINPROGRESS) {
		log_warn("resolver: connect to upstream");
		return -1;
	}
	if (!rq->tcp) {
		if (send(rq->fd, rq->msg, rq->msglen, 0) == -1) {
			log_warn("resolver: send to upstream");
			return -1;
		}
		rq->sent = rq->msglen;
		what = EV_READ | EV_PERSIST;
	} else
		what = EV_WRITE | EV_PERSIST;
	if ((rq->ev = event_new(r->base, rq->fd, what, upstream_io_cb,
	    rq)) == NULL ||
	    (rq->timer = evtimer_new(r->base, upstream_timeout_cb,
	    rq)) == NULL)
		fatalx("event_new: out of memory");
	resolver_timeval(r->conf.timeout_ms, &tv);
	if (event_add(rq->ev, NULL) == -1 || evtimer_add(rq->timer, &tv) == -1)
		fatalx("event_add failed");
	return 0;
}

/* Starts the attempt rq->upi/rq->tcp say, or the first that opens. */
static void
upstream_attempt(struct resolver_query *rq)
{
	upstream_attempt_end(rq);
	while (rq->upi < rq->nups) {
		if (upstream_open(rq) == 0)
			return;
		upstream_attempt_end(rq);
		rq->upi++;
		rq->tcp = rq->conn != NULL;
	}
	upstream_fail(rq, LDNS_RCODE_SERVFAIL, "upstream");
}

/* Forwards an allowed query; consumes q. */
void
upstream_forward(struct resolver_client *c, struct resolver_tcp *conn,
    const struct sockaddr_storage *from, socklen_t fromlen,
    struct dnsmsg_query *q, int group)
{
	const struct policy	*p = c->policy;
	struct resolver_query	*rq;

	if (c->nqueries >= UPSTREAM_INFLIGHT_MAX) {
		c->suppressed++;
		dnsmsg_query_free(q);
		return;
	}
	rq = xcalloc(1, sizeof(*rq));
	rq->c = c;
	rq->conn = conn;
	if (from != NULL) {
		memcpy(&rq->from, from, fromlen);
		rq->fromlen = fromlen;
	}
	rq->q = *q;
	q->pkt = NULL;		/* now rq's */
	rq->policy_gen = c->policy_gen;
	rq->group = group;
	rq->nups = p->nupstreams < POLICY_UPSTREAMS_MAX ? p->nupstreams :
	    POLICY_UPSTREAMS_MAX;
	memcpy(rq->ups, p->upstreams, rq->nups * sizeof(rq->ups[0]));
	rq->tcp = conn != NULL;
	rq->fd = -1;
	buf_init(&rq->in, 0);
	TAILQ_INSERT_TAIL(&c->queries, rq, entry);
	c->nqueries++;
	if (conn != NULL)
		conn->inflight++;
	upstream_attempt(rq);
}
