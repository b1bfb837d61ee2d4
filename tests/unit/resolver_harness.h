/*
 * The harness check_resolver*.c share: fake upstreams (ldns) on 127.0.0.2:53
 * and 127.0.0.3:53, the resolver on 127.0.0.1:5353, a client on one event
 * loop, in a network namespace of the test's own, and the zones they serve.
 */
#ifndef STOCKADE_RESOLVER_HARNESS_H
#define STOCKADE_RESOLVER_HARNESS_H

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <sys/wait.h>

#include <sched.h>
#include <stdbool.h>

#include <ldns/ldns.h>

#include "testutil.h"
#include "dnsmsg.h"
#include "evbase.h"
#include "exfil.h"
#include "policy.h"
#include "resolver.h"

#define T_PORT		5353
#define T_WAIT_MS	3000
#define T_QUIET_MS	200	/* how long "no reply" is waited for */
#define T_PINS_MAX	256
#define T_DELAY_MS	150	/* Z_DELAY answers after this */

/* 60 random base32 characters. */
#define RANDOM_LABEL	"j72ceuvw75efr6edt4sywb5wkh7dnsipzz7fk4zri3r2wyojfljooa7lqsaj"

enum {
	Z_SILENT = 1,		/* never answers */
	Z_TC = 2,		/* UDP: empty and truncated; TCP: full */
	Z_SERVFAIL = 4,
	Z_DELAY = 8,		/* UDP answer T_DELAY_MS late */
};

/* What the fake upstreams answer for one name, whatever the type. */
struct zone {
	const char	*name;		/* lowercase, final dot */
	int		 flags;
	const char	*rr[48];
};

struct pin {
	unsigned	 group;
	int		 family;
	uint8_t		 addr[16];
	uint32_t	 ttl;
	char		 name[256];	/* the question it answered */
	bool		 early;		/* the client had its answer already */
};

struct fake {
	int		 udp, tcp;
	struct event	*uev, *tev;
	unsigned	 nudp, ntcp;
};

struct fake_conn {
	struct fake	*f;
	int		 fd;
	struct event	*ev;
	uint8_t		 buf[2 + 65535];
	size_t		 len;
};

struct fake_late {
	int			 fd;
	struct sockaddr_storage	 to;
	socklen_t		 tolen;
	uint8_t			*wire;
	size_t			 len;
	struct event		*ev;
};

static struct {
	struct event_base	*base;
	struct resolver		*r;
	struct resolver_client	*c;
	struct resolver_conf	 conf;
	struct policy		 pol;
	struct policy_group	 groups[2];
	json_t			*events;
	struct pin		 pins[T_PINS_MAX];
	size_t			 npins;
	bool			 fail_pins;
	bool			 close_on_event;
	bool			 close_on_pin;
	int			 client_fd;
	struct fake		 up[2];
	const struct zone	*zones;
	const char		*addr;		/* the resolver's */
} T;

/* ------------------------------------------------------ fake upstream */

static inline const struct zone *
zone_find(const ldns_pkt *q)
{
	const struct zone	*z;
	ldns_rdf		*name;
	char			*s;

	if (T.zones == NULL || ldns_pkt_qdcount(q) != 1)
		return NULL;
	name = ldns_rdf_clone(ldns_rr_owner(ldns_rr_list_rr(
	    ldns_pkt_question(q), 0)));
	ldns_dname2canonical(name);
	s = ldns_rdf2str(name);
	ldns_rdf_deep_free(name);
	for (z = T.zones; z->name != NULL; z++)
		if (strcmp(z->name, s) == 0)
			break;
	free(s);
	return z->name != NULL ? z : NULL;
}

/* The fake's reply to wire, or -1 to stay silent. */
static inline int
fake_answer(const uint8_t *wire, size_t len, bool tcp, uint8_t **out,
    size_t *outlen, bool *late)
{
	const struct zone	*z;
	ldns_pkt		*q = NULL, *r;
	ldns_rr			*rr;
	size_t			 i;

	*late = false;
	if (ldns_wire2pkt(&q, wire, len) != LDNS_STATUS_OK)
		return -1;
	z = zone_find(q);
	if (z != NULL && (z->flags & Z_SILENT)) {
		ldns_pkt_free(q);
		return -1;
	}
	r = ldns_pkt_new();
	ldns_pkt_set_id(r, ldns_pkt_id(q));
	ldns_pkt_set_qr(r, true);
	ldns_pkt_set_rd(r, ldns_pkt_rd(q));
	ldns_pkt_set_ra(r, true);
	ldns_pkt_push_rr(r, LDNS_SECTION_QUESTION,
	    ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(q), 0)));
	if (z == NULL)
		ldns_pkt_set_rcode(r, LDNS_RCODE_NXDOMAIN);
	else if (z->flags & Z_SERVFAIL)
		ldns_pkt_set_rcode(r, LDNS_RCODE_SERVFAIL);
	else if ((z->flags & Z_TC) && !tcp)
		ldns_pkt_set_tc(r, true);
	else
		for (i = 0; z->rr[i] != NULL; i++) {
			ck_assert_int_eq(ldns_rr_new_frm_str(&rr, z->rr[i], 0,
			    NULL, NULL), LDNS_STATUS_OK);
			ldns_pkt_push_rr(r, LDNS_SECTION_ANSWER, rr);
		}
	*late = z != NULL && (z->flags & Z_DELAY) && !tcp;
	ck_assert_int_eq(ldns_pkt2wire(out, r, outlen), LDNS_STATUS_OK);
	ldns_pkt_free(r);
	ldns_pkt_free(q);
	return 0;
}

static inline void
fake_late_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fake_late	*l = arg;

	(void)sendto(l->fd, l->wire, l->len, 0, (struct sockaddr *)&l->to,
	    l->tolen);
	free(l->wire);
	event_free(l->ev);
	free(l);
}

static inline void
fake_udp_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fake		*f = arg;
	struct fake_late	*l;
	struct sockaddr_storage	 from;
	socklen_t		 fromlen = sizeof(from);
	struct timeval		 tv = { 0, T_DELAY_MS * 1000 };
	uint8_t			 buf[4096], *out;
	size_t			 outlen;
	ssize_t			 n;
	bool			 late;

	n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
	    &fromlen);
	if (n <= 0)
		return;
	f->nudp++;
	if (fake_answer(buf, (size_t)n, false, &out, &outlen, &late) == -1)
		return;
	if (late) {
		l = xcalloc(1, sizeof(*l));
		l->fd = fd;
		l->to = from;
		l->tolen = fromlen;
		l->wire = out;
		l->len = outlen;
		l->ev = evtimer_new(T.base, fake_late_cb, l);
		evtimer_add(l->ev, &tv);
		return;
	}
	(void)sendto(fd, out, outlen, 0, (struct sockaddr *)&from, fromlen);
	free(out);
}

static inline void
fake_conn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fake_conn	*fc = arg;
	uint8_t			*out, hdr[2];
	size_t			 outlen, mlen;
	ssize_t			 n;
	bool			 late;

	n = recv(fd, fc->buf + fc->len, sizeof(fc->buf) - fc->len, 0);
	if (n > 0)
		fc->len += (size_t)n;
	if (n > 0 && fc->len >= 2) {
		mlen = (size_t)fc->buf[0] << 8 | fc->buf[1];
		if (fc->len < 2 + mlen)
			return;
		fc->f->ntcp++;
		if (fake_answer(fc->buf + 2, mlen, true, &out, &outlen,
		    &late) == 0) {
			hdr[0] = (uint8_t)(outlen >> 8);
			hdr[1] = (uint8_t)outlen;
			(void)send(fd, hdr, 2, MSG_NOSIGNAL);
			(void)send(fd, out, outlen, MSG_NOSIGNAL);
			free(out);
		}
	} else if (n == -1 && errno == EAGAIN)
		return;
	event_free(fc->ev);
	close(fc->fd);
	free(fc);
}

static inline void
fake_accept_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fake_conn	*fc;
	int			 s;

	if ((s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1)
		return;
	fc = xcalloc(1, sizeof(*fc));
	fc->f = arg;
	fc->fd = s;
	fc->ev = event_new(T.base, s, EV_READ | EV_PERSIST, fake_conn_cb, fc);
	event_add(fc->ev, NULL);
}

static inline void
t_sin(struct sockaddr_in *sin, const char *addr, uint16_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	ck_assert_int_eq(inet_pton(AF_INET, addr, &sin->sin_addr), 1);
}

static inline void
fake_start(struct fake *f, const char *addr)
{
	struct sockaddr_in	 sin;
	int			 one = 1;

	t_sin(&sin, addr, 53);
	f->udp = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	f->tcp = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ck_assert_int_ne(f->udp, -1);
	ck_assert_int_ne(f->tcp, -1);
	setsockopt(f->tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ck_assert_int_eq(bind(f->udp, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(bind(f->tcp, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(f->tcp, 16), 0);
	f->uev = event_new(T.base, f->udp, EV_READ | EV_PERSIST, fake_udp_cb,
	    f);
	f->tev = event_new(T.base, f->tcp, EV_READ | EV_PERSIST,
	    fake_accept_cb, f);
	event_add(f->uev, NULL);
	event_add(f->tev, NULL);
}

static inline void
fake_stop(struct fake *f)
{
	event_free(f->uev);
	event_free(f->tev);
	close(f->udp);
	close(f->tcp);
}

/* ------------------------------------------------------------ harness */

static inline int
t_pin(void *owner, unsigned group, int family, const void *addr,
    uint32_t ttl, const char *name)
{
	struct pin	*p;
	char		 b;

	ck_assert_ptr_eq(owner, &T);
	ck_assert_uint_lt(T.npins, T_PINS_MAX);
	p = &T.pins[T.npins++];
	p->group = group;
	p->family = family;
	memcpy(p->addr, addr, family == AF_INET ? 4 : 16);
	p->ttl = ttl;
	(void)snprintf(p->name, sizeof(p->name), "%s", name);
	p->early = T.client_fd != -1 &&
	    recv(T.client_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
	if (T.close_on_pin) {
		resolver_close(T.c);
		T.c = NULL;
	}
	return T.fail_pins ? -1 : 0;
}

static inline void
t_event(void *owner, json_t *ev)
{
	ck_assert_ptr_eq(owner, &T);
	json_array_append_new(T.events, ev);
	if (T.close_on_event) {
		resolver_close(T.c);
		T.c = NULL;
	}
}

static inline void
t_lo_up(void)
{
	struct ifreq	 ifr;
	int		 fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ne(fd, -1);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	ck_assert_int_eq(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	ck_assert_int_eq(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
	close(fd);
}

/* names: NULL-terminated, borrowed for the test. */
static inline void
t_group(struct policy_group *g, const char *const *names)
{
	memset(g, 0, sizeof(*g));
	g->names = (char **)names;
	while (names != NULL && names[g->nnames] != NULL)
		g->nnames++;
}

static inline void
t_policy(struct policy *p, enum policy_level level, const char *const *g0,
    const char *const *g1)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "test");
	p->level = level;
	t_group(&T.groups[0], g0);
	t_group(&T.groups[1], g1);
	p->groups = T.groups;
	p->ngroups = 2;
	t_sin((struct sockaddr_in *)&p->upstreams[0], "127.0.0.2", 53);
	p->nupstreams = 1;
}

static inline void
t_map(const char *file, const char *text)
{
	char	 path[64];

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	tu_write(path, text, strlen(text));
}

/*
 * Not root: a user namespace of our own owns the network one, and we are
 * its root, so `ip` keeps the capabilities across exec.
 */
static inline void
t_userns(void)
{
	char	 map[64];
	uid_t	 uid = getuid();
	gid_t	 gid = getgid();

	ck_assert_msg(errno == EPERM && unshare(CLONE_NEWUSER |
	    CLONE_NEWNET) == 0, "unshare: %s", strerror(errno));
	t_map("setgroups", "deny");
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	t_map("uid_map", map);
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	t_map("gid_map", map);
}

/* A namespace of our own, the fakes, the defaults; then t_listen. */
static inline void
t_init(enum policy_level level, const char *const *g0, const char *const *g1)
{
	memset(&T, 0, sizeof(T));
	T.client_fd = -1;
	T.addr = "127.0.0.1";
	if (unshare(CLONE_NEWNET) == -1)
		t_userns();
	t_lo_up();
	ck_assert_ptr_nonnull(T.base = evbase_new(0));
	T.events = json_array();
	fake_start(&T.up[0], "127.0.0.2");
	fake_start(&T.up[1], "127.0.0.3");
	T.conf.ttl_min = 5;
	T.conf.ttl_max = 300;
	T.conf.tunnel_threshold = 60;
	T.conf.qps_max = 1000;
	T.conf.timeout_ms = 500;
	t_policy(&T.pol, level, g0, g1);
}

static inline void
t_listen(void)
{
	struct in_addr	 a;
	char		 err[256];

	ck_assert_int_eq(inet_pton(AF_INET, T.addr, &a), 1);
	T.r = resolver_new(T.base, -1, &T.conf, t_pin, t_event);
	T.c = resolver_listen(T.r, a, T_PORT, &T.pol, &T, err, sizeof(err));
	ck_assert_msg(T.c != NULL, "resolver_listen: %s", err);
}

/* Every event: ASCII keys, strings, integers, arrays of strings. */
static inline void
t_check_events(void)
{
	const char	*k;
	json_t		*ev, *v, *e;
	size_t		 i, j;

	json_array_foreach(T.events, i, ev) {
		ck_assert(json_is_object(ev));
		ck_assert(json_is_string(json_object_get(ev, "event")));
		json_object_foreach(ev, k, v) {
			for (j = 0; k[j] != '\0'; j++)
				ck_assert((unsigned char)k[j] < 0x80);
			if (json_is_array(v)) {
				json_array_foreach(v, j, e)
					ck_assert(json_is_string(e));
			} else
				ck_assert_msg(json_is_string(v) ||
				    json_is_integer(v), "%s: not a string or "
				    "an integer", k);
		}
	}
}

static inline void
t_end(void)
{
	t_check_events();
	resolver_free(T.r);
	fake_stop(&T.up[0]);
	fake_stop(&T.up[1]);
	json_decref(T.events);
	event_base_free(T.base);
	if (T.client_fd != -1)
		close(T.client_fd);
}

static inline void
t_noop(evutil_socket_t fd, short what, void *arg)
{
}

/*
 * One turn of the loop, waking by end (mono_ms) at the latest: the timer
 * is re-armed each turn, as libevent's clock and ours may disagree by a
 * millisecond and a spent timer would leave the loop waiting forever.
 */
static inline void
t_turn(struct event *tm, uint64_t end)
{
	uint64_t	 now = mono_ms(), left = end > now ? end - now : 0;
	struct timeval	 tv = { (time_t)(left / 1000),
			    (suseconds_t)(left % 1000) * 1000 + 1000 };

	evtimer_add(tm, &tv);
	event_base_loop(T.base, EVLOOP_ONCE);
}

/* Runs the loop for ms. */
static inline void
t_run(unsigned ms)
{
	struct event	*tm = evtimer_new(T.base, t_noop, NULL);
	uint64_t	 end = mono_ms() + ms;

	while (mono_ms() < end)
		t_turn(tm, end);
	event_free(tm);
}

static inline ldns_pkt *
t_query(const char *name, ldns_rr_type type, bool edns)
{
	ldns_rdf	*d = NULL;
	ldns_pkt	*p;

	ck_assert_int_eq(ldns_str2rdf_dname(&d, name), LDNS_STATUS_OK);
	p = ldns_pkt_query_new(d, type, LDNS_RR_CLASS_IN, LDNS_RD);
	ck_assert_ptr_nonnull(p);
	ldns_pkt_set_id(p, (uint16_t)arc4random());
	if (edns)
		ldns_pkt_set_edns_udp_size(p, 1232);
	return p;
}

/* TCP bytes read past the last reply (several replies in one read). */
static uint8_t	 t_buf[2 * (2 + 65535)];
static size_t	 t_have;

/* Sends wire to the resolver on a new client socket (T.client_fd). */
static inline void
t_send(const uint8_t *wire, size_t len, bool tcp)
{
	struct sockaddr_in	 sin;
	uint8_t			 hdr[2] = { (uint8_t)(len >> 8), (uint8_t)len };
	int			 fd;

	if (T.client_fd != -1)
		close(T.client_fd);
	t_sin(&sin, T.addr, T_PORT);
	fd = socket(AF_INET, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC,
	    0);
	ck_assert_int_ne(fd, -1);
	/* Loopback: the kernel completes the handshake before accept. */
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	if (tcp)
		ck_assert_int_eq(write_all(fd, hdr, 2), 0);
	ck_assert_int_eq(write_all(fd, wire, len), 0);
	T.client_fd = fd;
	t_have = 0;
}

static inline void
t_send_pkt(const ldns_pkt *q, bool tcp)
{
	uint8_t	*wire;
	size_t	 len;

	ck_assert_int_eq(ldns_pkt2wire(&wire, q, &len), LDNS_STATUS_OK);
	t_send(wire, len, tcp);
	free(wire);
}

/* The next reply on T.client_fd within ms, or NULL. */
static inline ldns_pkt *
t_recv(bool tcp, unsigned ms)
{
	uint8_t		*buf = t_buf;
	struct event	*ev, *tm;
	ldns_pkt	*p = NULL;
	uint64_t	 end = mono_ms() + ms;
	size_t		 have = tcp ? t_have : 0, mlen;
	ssize_t		 n = 0;

	ev = event_new(T.base, T.client_fd, EV_READ | EV_PERSIST, t_noop, NULL);
	tm = evtimer_new(T.base, t_noop, NULL);
	event_add(ev, NULL);
	for (;;) {
		mlen = have >= 2 ? (size_t)buf[0] << 8 | buf[1] : 0;
		if (tcp && have >= 2 && have >= 2 + mlen) {
			ck_assert_int_eq(ldns_wire2pkt(&p, buf + 2, mlen),
			    LDNS_STATUS_OK);
			memmove(buf, buf + 2 + mlen, have - 2 - mlen);
			have -= 2 + mlen;
			break;
		}
		n = recv(T.client_fd, buf + have, sizeof(t_buf) - have,
		    MSG_DONTWAIT);
		if (n > 0 && !tcp) {
			ck_assert_int_eq(ldns_wire2pkt(&p, buf, (size_t)n),
			    LDNS_STATUS_OK);
			break;
		}
		if (n > 0) {
			have += (size_t)n;
			continue;
		}
		if ((n == 0 && tcp) || mono_ms() >= end)
			break;
		t_turn(tm, end);
	}
	if (tcp)
		t_have = have;
	event_free(ev);
	event_free(tm);
	return p;
}

/* Asks and waits: the reply (caller frees), checked to be for q. */
static inline ldns_pkt *
t_ask_pkt(const ldns_pkt *q, bool tcp)
{
	ldns_pkt	*r;

	t_send_pkt(q, tcp);
	if ((r = t_recv(tcp, T_WAIT_MS)) == NULL)
		return NULL;
	ck_assert(ldns_pkt_qr(r));
	ck_assert_uint_eq(ldns_pkt_id(r), ldns_pkt_id(q));
	return r;
}

static inline ldns_pkt *
t_ask(const char *name, ldns_rr_type type, bool tcp)
{
	ldns_pkt	*q = t_query(name, type, false), *r;

	r = t_ask_pkt(q, tcp);
	ldns_pkt_free(q);
	ck_assert_msg(r != NULL, "no reply for %s", name);
	return r;
}

/* The last event of type, or NULL. */
static inline json_t *
t_last(const char *type)
{
	json_t	*ev, *found = NULL;
	size_t	 i;

	json_array_foreach(T.events, i, ev)
		if (strcmp(json_string_value(json_object_get(ev, "event")),
		    type) == 0)
			found = ev;
	return found;
}

static inline const char *
t_str(const json_t *ev, const char *key)
{
	const char	*s = json_string_value(json_object_get(ev, key));

	ck_assert_msg(s != NULL, "no string %s", key);
	return s;
}

static inline bool
t_has(const json_t *arr, const char *s)
{
	json_t	*e;
	size_t	 i;

	json_array_foreach(arr, i, e)
		if (strcmp(json_string_value(e), s) == 0)
			return true;
	return false;
}

static inline void
t_pin_is(size_t i, unsigned group, const char *addr, uint32_t ttl)
{
	uint8_t	 a[16];
	int	 af = strchr(addr, ':') != NULL ? AF_INET6 : AF_INET;

	ck_assert_uint_gt(T.npins, i);
	ck_assert_int_eq(inet_pton(af, addr, a), 1);
	ck_assert_int_eq(T.pins[i].family, af);
	ck_assert_int_eq(memcmp(T.pins[i].addr, a, af == AF_INET ? 4 : 16), 0);
	ck_assert_uint_eq(T.pins[i].group, group);
	ck_assert_uint_eq(T.pins[i].ttl, ttl);
	ck_assert_msg(!T.pins[i].early, "pin %zu came after the answer", i);
}

static inline char *
t_rdf(const ldns_rdf *r)
{
	char	*s = ldns_rdf2str(r);

	ck_assert_ptr_nonnull(s);
	return s;
}

/* ------------------------------------------------------ shared zones */

static const char *const g_pypi[] = { "pypi.org", "*.t.allowed.test",
	"www.chain.test", "big.chain.test", "rebind.test", "slow.test",
	"tc.test", "big.test", "late.test", "fail.test", NULL };
static const char *const g_wild[] = { "*.wild.test", NULL };

static const struct zone zones[] = {
	{ "pypi.org.", 0, { "pypi.org. 60 IN A 151.101.0.223",
	    "pypi.org. 60 IN AAAA 2a04:4e42::223", NULL } },
	{ "a.wild.test.", 0, { "a.wild.test. 100 IN A 93.184.216.34", NULL } },
	{ "a.b.wild.test.", 0, { "a.b.wild.test. 100 IN A 1.1.1.1", NULL } },
	{ "wild.test.", 0, { "wild.test. 100 IN A 1.1.1.1", NULL } },
	/* Out of order, with a record off the chain. */
	{ "www.chain.test.", 0, {
	    "edge.chain.net. 600 IN A 93.184.216.34",
	    "other.chain.net. 600 IN A 1.2.3.4",
	    "cdn.chain.net. 2 IN CNAME edge.chain.net.",
	    "www.chain.test. 300 IN CNAME cdn.chain.net.", NULL } },
	{ "big.chain.test.", 0, { "big.chain.test. 86400 IN A 8.8.4.4",
	    NULL } },
	{ "rebind.test.", 0, {
	    "rebind.test. 60 IN A 169.254.169.254",
	    "rebind.test. 60 IN A 10.1.2.3",
	    "rebind.test. 60 IN A 100.100.100.200",
	    "rebind.test. 60 IN AAAA ::ffff:169.254.169.254",
	    "rebind.test. 60 IN AAAA 64:ff9b::a9fe:a9fe",
	    "rebind.test. 60 IN AAAA fd00:ec2::254",
	    "rebind.test. 60 IN A 8.8.8.8", NULL } },
	{ "slow.test.", Z_SILENT, { NULL } },
	{ "tc.test.", Z_TC, { "tc.test. 60 IN A 9.9.9.9", NULL } },
	{ "late.test.", Z_DELAY, { "late.test. 60 IN A 9.9.9.9", NULL } },
	{ "fail.test.", Z_SERVFAIL, { NULL } },
	{ "anything.test.", 0, { "anything.test. 60 IN A 9.9.9.10", NULL } },
	{ NULL, 0, { NULL } },
};

#endif /* STOCKADE_RESOLVER_HARNESS_H */
