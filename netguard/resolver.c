/*
 * netguard's resolver, sandbox side: listeners, the decision on each
 * query, events, on the daemon's event loop (upstream.c forwards what is
 * allowed).  Trusts no byte from a sandbox (dnsmsg.c parses with
 * libldns); trusts its owner's callbacks, which may even close the
 * client they are called for.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "netns.h"
#include "resolver_int.h"
#include "util.h"

#define RESOLVER_TCP_CLIENTS_MAX 16	/* connections per listener */
#define RESOLVER_TCP_BACKLOG	16
#define RESOLVER_TCP_IDLE_MS	10000	/* a TCP client saying nothing */
/* Replies queued for one TCP client that does not read them. */
#define RESOLVER_TCP_OUT_MAX	(4 * (2 + DNSMSG_TCP_MAX))
#define RESOLVER_UDP_BATCH	32	/* datagrams read per wakeup */
#define RESOLVER_IFCONF_MAX	(1024 * 1024)	/* SIOCGIFCONF answer */
#define RESOLVER_MILLI		1000	/* rate tokens, in 1/1000 */

static void	resolver_destroy(struct resolver_client *);
static void	resolver_tcp_close(struct resolver_tcp *);
static void	resolver_tcp_reply(struct resolver_tcp *, const uint8_t *,
		    size_t);

/* ------------------------------------------------------------ helpers */

void
resolver_hold(struct resolver_client *c)
{
	c->busy++;
}

void
resolver_release(struct resolver_client *c)
{
	if (--c->busy == 0 && c->closed)
		resolver_destroy(c);
}

/* Token bucket: qps_max per second, bursts of qps_max. */
static bool
resolver_admit(struct resolver_client *c)
{
	uint64_t	 now = mono_ms(), cap, qps = c->r->conf.qps_max;

	if (qps == 0)
		return true;
	cap = qps * RESOLVER_MILLI;
	if (now - c->refill_ms >= RESOLVER_MILLI)
		c->tokens = cap;
	else
		c->tokens += (now - c->refill_ms) * qps;
	if (c->tokens > cap)
		c->tokens = cap;
	c->refill_ms = now;
	if (c->tokens < RESOLVER_MILLI)
		return false;
	c->tokens -= RESOLVER_MILLI;
	return true;
}

/* ------------------------------------------------------------- events */

json_t *
resolver_event(struct resolver_client *c, const char *type,
    const struct dnsmsg_query *q)
{
	json_t	*ev = json_object();
	char	 name[DNS_NAME_MAX + 1], qtype[32];
	size_t	 len;

	if (ev == NULL)
		fatalx("json_object: out of memory");
	json_object_set_new(ev, "event", json_string(type));
	if (q->named) {
		/* Presentation form, cut to what an audit record holds. */
		len = strlen(q->name);
		if (len == 0) {
			name[0] = '.';
			len = 1;
		} else {
			if (len > DNS_NAME_MAX)
				len = DNS_NAME_MAX;
			memcpy(name, q->name, len);
		}
		name[len] = '\0';
		str_ascii(name);
		dnsmsg_type_name(q->qtype, qtype, sizeof(qtype));
		str_ascii(qtype);
		json_object_set_new(ev, "name", json_string(name));
		json_object_set_new(ev, "qtype", json_string(qtype));
	}
	if (c->suppressed > 0) {
		json_object_set_new(ev, "suppressed",
		    json_integer(c->suppressed));
		c->suppressed = 0;
	}
	return ev;
}

json_t *
resolver_event_refused(struct resolver_client *c,
    const struct dnsmsg_query *q, const char *reason, uint8_t rcode)
{
	json_t	*ev = resolver_event(c, "dns_refused", q);

	json_object_set_new(ev, "decision", json_string("deny"));
	json_object_set_new(ev, "reason", json_string(reason));
	json_object_set_new(ev, "rcode", json_string(dnsmsg_rcode_name(rcode)));
	return ev;
}

void
resolver_emit(struct resolver_client *c, json_t *ev)
{
	if (c->closed || c->r->emit == NULL) {
		json_decref(ev);
		return;
	}
	c->r->emit(c->owner, ev);
}

/* ------------------------------------------------------------ replies */

void
resolver_send(struct resolver_client *c, struct resolver_tcp *conn,
    const struct sockaddr_storage *from, socklen_t fromlen,
    const uint8_t *wire, size_t len)
{
	if (conn != NULL) {
		resolver_tcp_reply(conn, wire, len);
		return;
	}
	/* A full socket buffer loses the reply; the stub asks again. */
	if (sendto(c->udp_fd, wire, len, MSG_DONTWAIT,
	    (const struct sockaddr *)from, fromlen) == -1 &&
	    errno != EAGAIN && errno != EWOULDBLOCK)
		log_warn("resolver: sendto");
}

/* Answers q with rcode and no records; then reports why. */
static void
resolver_refuse(struct resolver_client *c, struct resolver_tcp *conn,
    const struct sockaddr_storage *from, socklen_t fromlen,
    const struct dnsmsg_query *q, uint8_t rcode, const char *reason)
{
	uint8_t	*wire;
	size_t	 len;

	if (dnsmsg_reply_error(q, rcode, &wire, &len) == 0) {
		resolver_send(c, conn, from, fromlen, wire, len);
		free(wire);
	} else
		log_warnx("resolver: cannot build a %s reply",
		    dnsmsg_rcode_name(rcode));
	resolver_emit(c, resolver_event_refused(c, q, reason, rcode));
}

void
resolver_tcp_maybe_close(struct resolver_tcp *conn)
{
	if (conn->busy)
		return;
	if (conn->broken ||
	    (conn->eof && conn->inflight == 0 && conn->out.len == 0))
		resolver_tcp_close(conn);
}

/* ------------------------------------------------------------ queries */
/* Scores q; true (after refusing it and raising the alert) if it looks
 * like a tunnel. */
static bool
resolver_tunnel(struct resolver_client *c, struct resolver_tcp *conn,
    const struct sockaddr_storage *from, socklen_t fromlen,
    const struct dnsmsg_query *q)
{
	unsigned	 score, sig, bit, threshold;
	json_t		*ev, *names;

	threshold = c->r->conf.tunnel_threshold;
	/* Scored even when not acted on: the unique-name rate must see
	 * every name. */
	score = exfil_score(c->exfil, q->name, q->qtype, mono_ms(), &sig);
	if (threshold == 0 || score < threshold)
		return false;
	ev = resolver_event(c, "dns_tunnel_suspected", q);
	json_object_set_new(ev, "score", json_integer(score));
	names = json_array();
	for (bit = 1; bit <= EXFIL_SIG_ALL; bit <<= 1)
		if (sig & bit)
			json_array_append_new(names,
			    json_string(exfil_signal_name(bit)));
	json_object_set_new(ev, "signals", names);
	resolver_emit(c, ev);
	if (!c->closed)
		resolver_refuse(c, conn, from, fromlen, q,
		    LDNS_RCODE_NXDOMAIN, "tunnelling");
	return true;
}

/* One message from the sandbox (UDP datagram or TCP frame). */
static void
resolver_input(struct resolver_client *c, struct resolver_tcp *conn,
    const struct sockaddr_storage *from, socklen_t fromlen,
    const uint8_t *wire, size_t len)
{
	const struct policy	*p = c->policy;
	struct dnsmsg_query	 q;
	int			 group = -1;

	if (!resolver_admit(c)) {
		c->suppressed++;
		return;
	}
	switch (dnsmsg_query_parse(wire, len, &q)) {
	case DNSMSG_OK:
		break;
	case DNSMSG_IGNORE:
		goto out;
	case DNSMSG_MALFORMED:
		resolver_refuse(c, conn, from, fromlen, &q,
		    LDNS_RCODE_FORMERR, "malformed");
		goto out;
	case DNSMSG_NOTIMP:
		resolver_refuse(c, conn, from, fromlen, &q,
		    LDNS_RCODE_NOTIMPL, "unsupported");
		goto out;
	case DNSMSG_REFUSED:
		resolver_refuse(c, conn, from, fromlen, &q,
		    LDNS_RCODE_REFUSED, "unsupported");
		goto out;
	}

	if (p->level < LEVEL_L2) {
		resolver_refuse(c, conn, from, fromlen, &q,
		    LDNS_RCODE_REFUSED, "not_allowed");
		goto out;
	}
	/* Before the allowlist: an allowed domain can still carry a
	 * tunnel in the labels left of it. */
	if (resolver_tunnel(c, conn, from, fromlen, &q))
		goto out;
	if (p->level == LEVEL_L2 &&
	    (group = policy_match_name(p, q.name)) < 0) {
		/* NXDOMAIN, not REFUSED: musl gives up its whole search
		 * list on REFUSED. */
		resolver_refuse(c, conn, from, fromlen, &q,
		    LDNS_RCODE_NXDOMAIN, "not_allowed");
		goto out;
	}
	if (p->nupstreams == 0) {
		resolver_refuse(c, conn, from, fromlen, &q,
		    LDNS_RCODE_SERVFAIL, "upstream");
		goto out;
	}
	upstream_forward(c, conn, from, fromlen, &q, group);
out:
	dnsmsg_query_free(&q);
}

static void
resolver_udp_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver_client	*c = arg;
	struct sockaddr_storage	 from;
	socklen_t		 fromlen;
	uint8_t			 buf[DNSMSG_QUERY_MAX + 1];
	ssize_t			 n;
	unsigned		 i;

	resolver_hold(c);
	for (i = 0; i < RESOLVER_UDP_BATCH && !c->closed; i++) {
		fromlen = sizeof(from);
		/* MSG_TRUNC: the real length, so an oversized query is
		 * seen as such rather than as its first bytes. */
		n = recvfrom(c->udp_fd, buf, sizeof(buf), MSG_TRUNC,
		    (struct sockaddr *)&from, &fromlen);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				log_warn("resolver: recvfrom");
			break;
		}
		resolver_input(c, NULL, &from, fromlen, buf,
		    (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf));
	}
	resolver_release(c);
}

/* --------------------------------------------------- TCP from sandbox */

static void
resolver_tcp_close(struct resolver_tcp *conn)
{
	struct resolver_client	*c = conn->c;
	struct resolver_query	*rq, *next;

	/* Its queries die with it; busy keeps their frees from coming
	 * back here. */
	conn->busy = true;
	for (rq = TAILQ_FIRST(&c->queries); rq != NULL; rq = next) {
		next = TAILQ_NEXT(rq, entry);
		if (rq->conn == conn)
			upstream_query_free(rq);
	}
	event_free(conn->rev);
	event_free(conn->wev);
	event_free(conn->idle);
	close(conn->fd);
	buf_free(&conn->in);
	buf_free(&conn->out);
	TAILQ_REMOVE(&c->conns, conn, entry);
	c->nconns--;
	free(conn);
}

static void
resolver_tcp_flush(struct resolver_tcp *conn)
{
	ssize_t	 n;

	while (conn->out.len > 0) {
		n = send(conn->fd, conn->out.data, conn->out.len,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				conn->broken = true;
			break;
		}
		buf_consume(&conn->out, (size_t)n);
	}
	if (conn->out.len > 0 && !conn->broken)
		event_add(conn->wev, NULL);
	else
		event_del(conn->wev);
}

static void
resolver_tcp_reply(struct resolver_tcp *conn, const uint8_t *wire,
    size_t len)
{
	uint8_t	 hdr[2] = { (uint8_t)(len >> 8), (uint8_t)len };

	if (conn->broken)
		return;
	/* A client that does not read its replies loses the connection. */
	if (len > DNSMSG_TCP_MAX || buf_reserve(&conn->out, 2 + len) == -1) {
		conn->broken = true;
		return;
	}
	buf_add(&conn->out, hdr, 2);
	buf_add(&conn->out, wire, len);
	resolver_tcp_flush(conn);
}

static void
resolver_tcp_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver_tcp	*conn = arg;

	resolver_tcp_flush(conn);
	resolver_tcp_maybe_close(conn);
}

static void
resolver_tcp_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver_tcp	*conn = arg;
	struct timeval		 tv;

	if (conn->inflight > 0) {
		/* Upstream timeouts bound these; wait for them. */
		resolver_timeval(RESOLVER_TCP_IDLE_MS, &tv);
		evtimer_add(conn->idle, &tv);
		return;
	}
	resolver_tcp_close(conn);
}

static void
resolver_tcp_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver_tcp	*conn = arg;
	struct resolver_client	*c = conn->c;
	struct timeval		 tv;
	ssize_t			 n;
	size_t			 mlen;

	resolver_hold(c);
	conn->busy = true;
	if (buf_reserve(&conn->in, 1) == -1) {
		conn->broken = true;
		goto out;
	}
	n = recv(conn->fd, conn->in.data + conn->in.len,
	    conn->in.cap - conn->in.len, 0);
	if (n == -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			conn->broken = true;
		goto out;
	}
	if (n == 0) {
		conn->eof = true;
		event_del(conn->rev);
		goto out;
	}
	conn->in.len += (size_t)n;
	resolver_timeval(RESOLVER_TCP_IDLE_MS, &tv);
	evtimer_add(conn->idle, &tv);
	while (conn->in.len >= 2 && !conn->broken && !c->closed) {
		mlen = (size_t)conn->in.data[0] << 8 | conn->in.data[1];
		if (mlen < LDNS_HEADER_SIZE || mlen > DNSMSG_QUERY_MAX) {
			conn->broken = true;
			break;
		}
		if (conn->in.len < 2 + mlen)
			break;
		resolver_input(c, conn, NULL, 0, conn->in.data + 2, mlen);
		buf_consume(&conn->in, 2 + mlen);
	}
out:
	conn->busy = false;
	if (!c->closed)
		resolver_tcp_maybe_close(conn);
	resolver_release(c);
}

static void
resolver_accept_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver_client	*c = arg;
	struct event_base	*base = c->r->base;
	struct resolver_tcp	*conn;
	struct timeval		 tv;
	int			 s;

	if ((s = accept4(c->tcp_fd, NULL, NULL,
	    SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR && errno != ECONNABORTED)
			log_warn("resolver: accept");
		return;
	}
	if (c->nconns >= RESOLVER_TCP_CLIENTS_MAX) {
		close(s);
		c->suppressed++;
		return;
	}
	conn = xcalloc(1, sizeof(*conn));
	conn->c = c;
	conn->fd = s;
	buf_init(&conn->in, 2 + DNSMSG_QUERY_MAX);
	buf_init(&conn->out, RESOLVER_TCP_OUT_MAX);
	if ((conn->rev = event_new(base, s, EV_READ | EV_PERSIST,
	    resolver_tcp_read_cb, conn)) == NULL ||
	    (conn->wev = event_new(base, s, EV_WRITE | EV_PERSIST,
	    resolver_tcp_write_cb, conn)) == NULL ||
	    (conn->idle = evtimer_new(base, resolver_tcp_idle_cb,
	    conn)) == NULL)
		fatalx("event_new: out of memory");
	resolver_timeval(RESOLVER_TCP_IDLE_MS, &tv);
	if (event_add(conn->rev, NULL) == -1 ||
	    evtimer_add(conn->idle, &tv) == -1)
		fatalx("event_add failed");
	TAILQ_INSERT_TAIL(&c->conns, conn, entry);
	c->nconns++;
}

/* ------------------------------------------------------------- setup */

/*
 * Binds fd to the device that holds addr in fd's namespace.  Every
 * gateway address lives in the uplink namespace, so without this a
 * sandbox could reach a neighbour's resolver (and have its answers
 * pinned in the neighbour's sets) through its own veth.
 */
static int
resolver_bind_device(int fd, struct in_addr addr, char *err, size_t errlen)
{
	struct ifconf		 ifc;
	struct ifreq		*ifr;
	struct sockaddr_in	 sin;
	char			 name[IFNAMSIZ], *colon;
	size_t			 i, n;
	int			 rc = -1;

	memset(&ifc, 0, sizeof(ifc));
	if (ioctl(fd, SIOCGIFCONF, &ifc) == -1) {
		snprintf(err, errlen, "SIOCGIFCONF: %s", strerror(errno));
		return -1;
	}
	if (ifc.ifc_len <= 0 || ifc.ifc_len > RESOLVER_IFCONF_MAX) {
		snprintf(err, errlen, "SIOCGIFCONF: %d bytes", ifc.ifc_len);
		return -1;
	}
	ifc.ifc_buf = xcalloc(1, (size_t)ifc.ifc_len);
	if (ioctl(fd, SIOCGIFCONF, &ifc) == -1) {
		snprintf(err, errlen, "SIOCGIFCONF: %s", strerror(errno));
		goto out;
	}
	n = (size_t)ifc.ifc_len / sizeof(struct ifreq);
	for (i = 0; i < n; i++) {
		ifr = &ifc.ifc_req[i];
		if (ifr->ifr_addr.sa_family != AF_INET)
			continue;
		memcpy(&sin, &ifr->ifr_addr, sizeof(sin));
		if (sin.sin_addr.s_addr != addr.s_addr)
			continue;
		memcpy(name, ifr->ifr_name, IFNAMSIZ);
		name[IFNAMSIZ - 1] = '\0';
		/* An alias label ("veth0:1") names its device before ':'. */
		if ((colon = strchr(name, ':')) != NULL)
			*colon = '\0';
		if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, name,
		    (socklen_t)strlen(name) + 1) == -1) {
			snprintf(err, errlen, "SO_BINDTODEVICE %s: %s", name,
			    strerror(errno));
			goto out;
		}
		rc = 0;
		goto out;
	}
	snprintf(err, errlen, "no device holds %s", inet_ntoa(addr));
out:
	free(ifc.ifc_buf);
	return rc;
}

static int
resolver_socket(struct resolver *r, int type, struct in_addr addr,
    uint16_t port, char *err, size_t errlen)
{
	struct sockaddr_in	 sin;
	int			 fd, one = 1;

	if ((fd = netns_socket(r->nsfd, AF_INET, type | SOCK_NONBLOCK,
	    0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (resolver_bind_device(fd, addr, err, errlen) == -1)
		goto fail;
	if (type == SOCK_STREAM &&
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1) {
		snprintf(err, errlen, "SO_REUSEADDR: %s", strerror(errno));
		goto fail;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr = addr;
	sin.sin_port = htons(port);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		snprintf(err, errlen, "bind %s:%u: %s", inet_ntoa(addr), port,
		    strerror(errno));
		goto fail;
	}
	if (type == SOCK_STREAM && listen(fd, RESOLVER_TCP_BACKLOG) == -1) {
		snprintf(err, errlen, "listen: %s", strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

struct resolver *
resolver_new(struct event_base *base, int uplink_nsfd,
    const struct resolver_conf *conf, resolver_pin_fn *pin,
    resolver_event_fn *emit)
{
	struct resolver	*r = xcalloc(1, sizeof(*r));

	r->base = base;
	r->nsfd = uplink_nsfd;
	r->conf = *conf;
	r->pin = pin;
	r->emit = emit;
	LIST_INIT(&r->clients);
	return r;
}

void
resolver_free(struct resolver *r)
{
	struct resolver_client	*c;

	if (r == NULL)
		return;
	while ((c = LIST_FIRST(&r->clients)) != NULL)
		resolver_destroy(c);
	free(r);
}

struct resolver_client *
resolver_listen(struct resolver *r, struct in_addr addr, uint16_t port,
    const struct policy *policy, void *owner, char *err, size_t errlen)
{
	struct resolver_client	*c;

	if (policy->level < LEVEL_L2) {
		snprintf(err, errlen, "policy %s is %s: no resolver",
		    policy->name, policy_level_name(policy->level));
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->r = r;
	c->policy = policy;
	c->owner = owner;
	c->udp_fd = c->tcp_fd = -1;
	TAILQ_INIT(&c->conns);
	TAILQ_INIT(&c->queries);
	c->tokens = (uint64_t)r->conf.qps_max * RESOLVER_MILLI;
	c->refill_ms = mono_ms();
	if ((c->udp_fd = resolver_socket(r, SOCK_DGRAM, addr, port, err,
	    errlen)) == -1 ||
	    (c->tcp_fd = resolver_socket(r, SOCK_STREAM, addr, port, err,
	    errlen)) == -1)
		goto fail;
	if ((c->udp_ev = event_new(r->base, c->udp_fd, EV_READ | EV_PERSIST,
	    resolver_udp_cb, c)) == NULL ||
	    (c->tcp_ev = event_new(r->base, c->tcp_fd, EV_READ | EV_PERSIST,
	    resolver_accept_cb, c)) == NULL)
		fatalx("event_new: out of memory");
	if (event_add(c->udp_ev, NULL) == -1 ||
	    event_add(c->tcp_ev, NULL) == -1)
		fatalx("event_add failed");
	c->exfil = exfil_new();
	LIST_INSERT_HEAD(&r->clients, c, entry);
	return c;
fail:
	if (c->udp_fd != -1)
		close(c->udp_fd);
	free(c);
	return NULL;
}

void
resolver_set_policy(struct resolver_client *c, const struct policy *policy)
{
	c->policy = policy;
	c->policy_gen++;
}

static void
resolver_destroy(struct resolver_client *c)
{
	struct resolver_tcp	*conn;
	struct resolver_query	*rq;

	TAILQ_FOREACH(conn, &c->conns, entry)
		conn->busy = true;
	while ((rq = TAILQ_FIRST(&c->queries)) != NULL)
		upstream_query_free(rq);
	while ((conn = TAILQ_FIRST(&c->conns)) != NULL)
		resolver_tcp_close(conn);
	if (c->udp_ev != NULL)
		event_free(c->udp_ev);
	if (c->tcp_ev != NULL)
		event_free(c->tcp_ev);
	if (c->udp_fd != -1)
		close(c->udp_fd);
	if (c->tcp_fd != -1)
		close(c->tcp_fd);
	exfil_free(c->exfil);
	LIST_REMOVE(c, entry);
	free(c);
}

void
resolver_close(struct resolver_client *c)
{
	if (c == NULL || c->closed)
		return;
	c->closed = true;
	/* Inside one of its callbacks: the callback's release frees. */
	if (c->busy == 0)
		resolver_destroy(c);
}
