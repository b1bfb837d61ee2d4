/*
 * netguard/resolver.c and dnsmsg.c end to end.  Each test runs in its own
 * network namespace: fake upstreams (built with ldns) on 127.0.0.2:53 and
 * 127.0.0.3:53, the resolver on 127.0.0.1:5353, and a client, all on one
 * event loop.  Also the rebinding table on its own.
 */
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

static const struct zone *
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
static int
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

static void
fake_late_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fake_late	*l = arg;

	(void)sendto(l->fd, l->wire, l->len, 0, (struct sockaddr *)&l->to,
	    l->tolen);
	free(l->wire);
	event_free(l->ev);
	free(l);
}

static void
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

static void
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

static void
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

static void
t_sin(struct sockaddr_in *sin, const char *addr, uint16_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	ck_assert_int_eq(inet_pton(AF_INET, addr, &sin->sin_addr), 1);
}

static void
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

static void
fake_stop(struct fake *f)
{
	event_free(f->uev);
	event_free(f->tev);
	close(f->udp);
	close(f->tcp);
}

/* ------------------------------------------------------------ harness */

static int
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

static void
t_event(void *owner, json_t *ev)
{
	ck_assert_ptr_eq(owner, &T);
	json_array_append_new(T.events, ev);
	if (T.close_on_event) {
		resolver_close(T.c);
		T.c = NULL;
	}
}

static void
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
static void
t_group(struct policy_group *g, const char *const *names)
{
	memset(g, 0, sizeof(*g));
	g->names = (char **)names;
	while (names != NULL && names[g->nnames] != NULL)
		g->nnames++;
}

static void
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

static void
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
static void
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
static void
t_init(enum policy_level level, const char *const *g0, const char *const *g1)
{
	memset(&T, 0, sizeof(T));
	T.client_fd = -1;
	T.addr = "127.0.0.1";
	if (unshare(CLONE_NEWNET) == -1)
		t_userns();
	t_lo_up();
	ck_assert_ptr_nonnull(T.base = event_base_new());
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

static void
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
static void
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

static void
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

static void
t_noop(evutil_socket_t fd, short what, void *arg)
{
}

/*
 * One turn of the loop, waking by end (mono_ms) at the latest: the timer
 * is re-armed each turn, as libevent's clock and ours may disagree by a
 * millisecond and a spent timer would leave the loop waiting forever.
 */
static void
t_turn(struct event *tm, uint64_t end)
{
	uint64_t	 now = mono_ms(), left = end > now ? end - now : 0;
	struct timeval	 tv = { (time_t)(left / 1000),
			    (suseconds_t)(left % 1000) * 1000 + 1000 };

	evtimer_add(tm, &tv);
	event_base_loop(T.base, EVLOOP_ONCE);
}

/* Runs the loop for ms. */
static void
t_run(unsigned ms)
{
	struct event	*tm = evtimer_new(T.base, t_noop, NULL);
	uint64_t	 end = mono_ms() + ms;

	while (mono_ms() < end)
		t_turn(tm, end);
	event_free(tm);
}

static ldns_pkt *
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
static void
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

static void
t_send_pkt(const ldns_pkt *q, bool tcp)
{
	uint8_t	*wire;
	size_t	 len;

	ck_assert_int_eq(ldns_pkt2wire(&wire, q, &len), LDNS_STATUS_OK);
	t_send(wire, len, tcp);
	free(wire);
}

/* The next reply on T.client_fd within ms, or NULL. */
static ldns_pkt *
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
static ldns_pkt *
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

static ldns_pkt *
t_ask(const char *name, ldns_rr_type type, bool tcp)
{
	ldns_pkt	*q = t_query(name, type, false), *r;

	r = t_ask_pkt(q, tcp);
	ldns_pkt_free(q);
	ck_assert_msg(r != NULL, "no reply for %s", name);
	return r;
}

/* The last event of type, or NULL. */
static json_t *
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

static const char *
t_str(const json_t *ev, const char *key)
{
	const char	*s = json_string_value(json_object_get(ev, key));

	ck_assert_msg(s != NULL, "no string %s", key);
	return s;
}

static bool
t_has(const json_t *arr, const char *s)
{
	json_t	*e;
	size_t	 i;

	json_array_foreach(arr, i, e)
		if (strcmp(json_string_value(e), s) == 0)
			return true;
	return false;
}

static void
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

static char *
t_rdf(const ldns_rdf *r)
{
	char	*s = ldns_rdf2str(r);

	ck_assert_ptr_nonnull(s);
	return s;
}

/* ------------------------------------------------------------- tests */

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

/* 40 addresses: more than 512 bytes without EDNS. */
static const struct zone big_zone[] = {
	{ "big.test.", 0, {
#define BIG(n)	"big.test. 60 IN A 198.51.100." #n
	    BIG(1), BIG(2), BIG(3), BIG(4), BIG(5), BIG(6), BIG(7), BIG(8),
	    BIG(9), BIG(10), BIG(11), BIG(12), BIG(13), BIG(14), BIG(15),
	    BIG(16), BIG(17), BIG(18), BIG(19), BIG(20), BIG(21), BIG(22),
	    BIG(23), BIG(24), BIG(25), BIG(26), BIG(27), BIG(28), BIG(29),
	    BIG(30), BIG(31), BIG(32), BIG(33), BIG(34), BIG(35), BIG(36),
	    BIG(37), BIG(38), BIG(39), BIG(40), NULL } },
#undef BIG
	{ NULL, 0, { NULL } },
};

START_TEST(test_allowed_name_is_pinned_before_answer)
{
	ldns_pkt	*r;
	json_t		*ev;
	char		*s;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	t_listen();
	/* Mixed case: the question comes back exactly as asked. */
	r = t_ask("PyPI.Org", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_ancount(r), 2);
	s = t_rdf(ldns_rr_owner(ldns_rr_list_rr(ldns_pkt_question(r), 0)));
	ck_assert_str_eq(s, "PyPI.Org.");
	free(s);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.npins, 2);
	t_pin_is(0, 0, "151.101.0.223", 60);
	t_pin_is(1, 0, "2a04:4e42::223", 60);
	ck_assert_uint_eq(T.up[0].nudp, 1);

	ck_assert_ptr_nonnull(ev = t_last("dns_allowed"));
	ck_assert_str_eq(t_str(ev, "name"), "pypi.org");
	ck_assert_str_eq(t_str(ev, "qtype"), "A");
	ck_assert_str_eq(t_str(ev, "rcode"), "NOERROR");
	ck_assert_str_eq(t_str(ev, "decision"), "allow");
	ck_assert_int_eq(json_integer_value(json_object_get(ev, "group")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(ev, "ttl")), 60);
	ck_assert_uint_eq(json_array_size(json_object_get(ev, "pinned")), 2);
	ck_assert(t_has(json_object_get(ev, "pinned"), "151.101.0.223"));
	ck_assert(t_has(json_object_get(ev, "pinned"), "2a04:4e42::223"));
	ck_assert_ptr_null(json_object_get(ev, "unpinned"));
	t_end();
}
END_TEST

START_TEST(test_not_allowed_is_nxdomain_without_upstream)
{
	ldns_pkt	*r;
	json_t		*ev;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	t_listen();
	r = t_ask("anything.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NXDOMAIN);
	ck_assert_uint_eq(ldns_pkt_ancount(r), 0);
	ck_assert_uint_eq(ldns_pkt_qdcount(r), 1);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.up[0].nudp + T.up[0].ntcp, 0);
	ck_assert_uint_eq(T.npins, 0);
	ck_assert_ptr_nonnull(ev = t_last("dns_refused"));
	ck_assert_str_eq(t_str(ev, "name"), "anything.test");
	ck_assert_str_eq(t_str(ev, "reason"), "not_allowed");
	ck_assert_str_eq(t_str(ev, "rcode"), "NXDOMAIN");
	ck_assert_str_eq(t_str(ev, "decision"), "deny");
	ck_assert_ptr_null(t_last("dns_allowed"));
	t_end();
}
END_TEST

START_TEST(test_wildcard_matches_one_label_only)
{
	ldns_pkt	*r;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	t_listen();
	r = t_ask("a.wild.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NOERROR);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.npins, 1);
	t_pin_is(0, 1, "93.184.216.34", 100);

	r = t_ask("a.b.wild.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NXDOMAIN);
	ldns_pkt_free(r);
	r = t_ask("wild.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NXDOMAIN);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.npins, 1);
	ck_assert_uint_eq(T.up[0].nudp, 1);
	t_end();
}
END_TEST

START_TEST(test_cname_chain_lowest_ttl_clamped)
{
	ldns_pkt	*r;
	json_t		*ev;
	size_t		 i;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	t_listen();
	r = t_ask("www.chain.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NOERROR);
	/* Everything stays in the answer, no TTL above the pin's. */
	ck_assert_uint_eq(ldns_pkt_ancount(r), 4);
	for (i = 0; i < 4; i++)
		ck_assert_uint_le(ldns_rr_ttl(ldns_rr_list_rr(
		    ldns_pkt_answer(r), i)), 5);
	ldns_pkt_free(r);
	/* Only the chain's address; TTL 2 raised to ttl_min. */
	ck_assert_uint_eq(T.npins, 1);
	t_pin_is(0, 0, "93.184.216.34", 5);
	ev = t_last("dns_allowed");
	ck_assert_int_eq(json_integer_value(json_object_get(ev, "ttl")), 5);
	ck_assert_uint_eq(json_array_size(json_object_get(ev, "pinned")), 1);

	/* A day lowered to ttl_max, in the pin and in the answer. */
	r = t_ask("big.chain.test", LDNS_RR_TYPE_A, false);
	ck_assert_uint_eq(ldns_rr_ttl(ldns_rr_list_rr(ldns_pkt_answer(r), 0)),
	    300);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.npins, 2);
	t_pin_is(1, 0, "8.8.4.4", 300);
	t_end();
}
END_TEST

START_TEST(test_private_and_metadata_answers_not_pinned)
{
	static const char *const bad[] = { "169.254.169.254", "10.1.2.3",
	    "100.100.100.200", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe",
	    "fd00:ec2::254" };
	ldns_pkt	*r;
	json_t		*ev, *un;
	size_t		 i;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	t_listen();
	r = t_ask("rebind.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_ancount(r), 7);	/* left in the answer */
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.npins, 1);
	t_pin_is(0, 0, "8.8.8.8", 60);
	ev = t_last("dns_allowed");
	ck_assert_uint_eq(json_array_size(json_object_get(ev, "pinned")), 1);
	un = json_object_get(ev, "unpinned");
	ck_assert_uint_eq(json_array_size(un), nitems(bad));
	for (i = 0; i < nitems(bad); i++)
		ck_assert_msg(t_has(un, bad[i]), "%s not listed", bad[i]);
	t_end();
}
END_TEST

static bool
t_pinnable(const char *addr)
{
	uint8_t	 a[16];
	int	 af = strchr(addr, ':') != NULL ? AF_INET6 : AF_INET;

	ck_assert_int_eq(inet_pton(af, addr, a), 1);
	return dnsmsg_addr_pinnable(af, a);
}

START_TEST(test_rebinding_table)
{
	static const char *const bad[] = {
		"0.0.0.0", "0.255.255.255", "10.0.0.1", "100.64.0.1",
		"100.127.255.255", "100.100.100.200", "127.0.0.1",
		"127.255.255.254", "169.254.169.254", "169.254.170.2",
		"172.16.0.1", "172.31.255.255", "192.168.1.1", "192.0.0.192",
		"168.63.129.16", "224.0.0.1", "239.255.255.250",
		"255.255.255.255", "240.0.0.1",
		"::", "::1", "fe80::1", "febf::1", "fc00::1", "fd00:ec2::254",
		"fd20:ce::254", "ff02::1", "fec0::1", "::ffff:169.254.169.254",
		"::ffff:10.0.0.1", "::ffff:127.0.0.1", "::ffff:0.0.0.0",
		"64:ff9b::a9fe:a9fe", "64:ff9b::10.0.0.1",
		"64:ff9b::127.0.0.1", "64:ff9b:1::1", "::10.0.0.1",
	};
	static const char *const good[] = {
		"1.1.1.1", "8.8.8.8", "151.101.0.223", "100.63.255.255",
		"100.128.0.0", "172.15.255.255", "172.32.0.0", "169.253.1.1",
		"168.63.129.17", "192.0.1.1", "192.169.0.1", "11.0.0.1",
		"223.255.255.255", "2a04:4e42::223", "2001:4860:4860::8888",
		"::ffff:8.8.8.8", "64:ff9b::808:808", "fe00::1", "fbff::1",
	};
	size_t	 i;

	for (i = 0; i < nitems(bad); i++)
		ck_assert_msg(!t_pinnable(bad[i]), "%s pinnable", bad[i]);
	for (i = 0; i < nitems(good); i++)
		ck_assert_msg(t_pinnable(good[i]), "%s not pinnable", good[i]);
	ck_assert(!dnsmsg_addr_pinnable(AF_UNIX, (const uint8_t *)"xxxx"));
}
END_TEST

START_TEST(test_pin_failure_is_servfail)
{
	ldns_pkt	*r;
	json_t		*ev;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	T.fail_pins = true;
	t_listen();
	r = t_ask("pypi.org", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_SERVFAIL);
	ck_assert_uint_eq(ldns_pkt_ancount(r), 0);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.npins, 1);		/* stopped at the first */
	ck_assert_ptr_null(t_last("dns_allowed"));
	ev = t_last("dns_refused");
	ck_assert_str_eq(t_str(ev, "reason"), "pin_failed");
	ck_assert_str_eq(t_str(ev, "rcode"), "SERVFAIL");
	t_end();
}
END_TEST

START_TEST(test_tunnel_label_is_refused_and_flagged)
{
	ldns_pkt	*r;
	json_t		*ev, *sig;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	t_listen();
	/* Allowed by "*.t.allowed.test", refused all the same. */
	r = t_ask(RANDOM_LABEL ".t.allowed.test", LDNS_RR_TYPE_TXT, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NXDOMAIN);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.up[0].nudp + T.up[0].ntcp, 0);
	ck_assert_ptr_nonnull(ev = t_last("dns_tunnel_suspected"));
	ck_assert_str_eq(t_str(ev, "name"), RANDOM_LABEL ".t.allowed.test");
	ck_assert_str_eq(t_str(ev, "qtype"), "TXT");
	ck_assert_int_ge(json_integer_value(json_object_get(ev, "score")), 60);
	sig = json_object_get(ev, "signals");
	ck_assert(t_has(sig, "long_label"));
	ck_assert(t_has(sig, "entropy"));
	ck_assert(t_has(sig, "rare_type"));
	ck_assert(!t_has(sig, "unique_rate"));
	ev = t_last("dns_refused");
	ck_assert_str_eq(t_str(ev, "reason"), "tunnelling");
	ck_assert_str_eq(t_str(ev, "rcode"), "NXDOMAIN");

	/* The same domain with an ordinary label goes through. */
	r = t_ask("www.t.allowed.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NXDOMAIN);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.up[0].nudp, 1);	/* forwarded this time */
	t_end();
}
END_TEST

/* A 12-byte header: id 0x1234, flags, counts. */
static void
t_header(uint8_t h[12], uint8_t flags, uint16_t qd)
{
	memset(h, 0, 12);
	h[0] = 0x12;
	h[1] = 0x34;
	h[2] = flags;
	h[4] = (uint8_t)(qd >> 8);
	h[5] = (uint8_t)qd;
}

START_TEST(test_malformed_is_formerr_and_serving_goes_on)
{
	uint8_t		 h[12];
	ldns_pkt	*q, *r;
	json_t		*ev;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	t_listen();

	/* Shorter than a header: nothing to answer. */
	t_send((const uint8_t *)"hello", 5, false);
	ck_assert_ptr_null(t_recv(false, T_QUIET_MS));
	/* A response: never answered. */
	t_header(h, 0x80, 0);
	t_send(h, sizeof(h), false);
	ck_assert_ptr_null(t_recv(false, T_QUIET_MS));

	/* Two questions announced, none there: FORMERR, the id kept. */
	t_header(h, 0x01, 2);
	t_send(h, sizeof(h), false);
	ck_assert_ptr_nonnull(r = t_recv(false, T_WAIT_MS));
	ck_assert_uint_eq(ldns_pkt_id(r), 0x1234);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_FORMERR);
	ldns_pkt_free(r);
	ev = t_last("dns_refused");
	ck_assert_str_eq(t_str(ev, "reason"), "malformed");
	ck_assert_str_eq(t_str(ev, "rcode"), "FORMERR");
	ck_assert_ptr_null(json_object_get(ev, "name"));

	/* No question at all. */
	t_header(h, 0x01, 0);
	t_send(h, sizeof(h), false);
	ck_assert_ptr_nonnull(r = t_recv(false, T_WAIT_MS));
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_FORMERR);
	ldns_pkt_free(r);

	/* Another opcode: NOTIMP. */
	q = t_query("pypi.org", LDNS_RR_TYPE_A, false);
	ldns_pkt_set_opcode(q, LDNS_PACKET_STATUS);
	ck_assert_ptr_nonnull(r = t_ask_pkt(q, false));
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NOTIMPL);
	ldns_pkt_free(r);
	ldns_pkt_free(q);
	ev = t_last("dns_refused");
	ck_assert_str_eq(t_str(ev, "reason"), "unsupported");
	ck_assert_str_eq(t_str(ev, "rcode"), "NOTIMP");

	/* Class CH (version.bind and friends) and zone transfers. */
	q = ldns_pkt_query_new(ldns_dname_new_frm_str("version.bind"),
	    LDNS_RR_TYPE_TXT, LDNS_RR_CLASS_CH, LDNS_RD);
	ck_assert_ptr_nonnull(r = t_ask_pkt(q, false));
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_REFUSED);
	ldns_pkt_free(r);
	ldns_pkt_free(q);
	q = t_query("pypi.org", LDNS_RR_TYPE_AXFR, false);
	ck_assert_ptr_nonnull(r = t_ask_pkt(q, false));
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_REFUSED);
	ldns_pkt_free(r);
	ldns_pkt_free(q);

	/* Garbage on TCP closes that connection only. */
	t_send((const uint8_t *)"\xff\xff\xff", 3, true);
	ck_assert_ptr_null(t_recv(true, T_QUIET_MS));

	r = t_ask("pypi.org", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NOERROR);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.up[0].nudp, 1);
	t_end();
}
END_TEST

START_TEST(test_tcp_query_goes_upstream_over_tcp)
{
	ldns_pkt	*r;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	t_listen();
	r = t_ask("pypi.org", LDNS_RR_TYPE_AAAA, true);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_ancount(r), 2);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.up[0].ntcp, 1);
	ck_assert_uint_eq(T.up[0].nudp, 0);
	ck_assert_uint_eq(T.npins, 2);
	ck_assert(!T.pins[0].early && !T.pins[1].early);
	/* The name each pin answered, for netguard's flow records. */
	ck_assert_str_eq(T.pins[0].name, "pypi.org");
	ck_assert_str_eq(T.pins[1].name, "pypi.org");
	t_end();
}
END_TEST

START_TEST(test_truncated_upstream_answer_retried_over_tcp)
{
	ldns_pkt	*r;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	t_listen();
	r = t_ask("tc.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NOERROR);
	ck_assert(!ldns_pkt_tc(r));
	ck_assert_uint_eq(ldns_pkt_ancount(r), 1);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.up[0].nudp, 1);
	ck_assert_uint_eq(T.up[0].ntcp, 1);
	t_pin_is(0, 0, "9.9.9.9", 60);
	t_end();
}
END_TEST

START_TEST(test_long_answer_truncated_without_edns)
{
	ldns_pkt	*q, *r;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = big_zone;
	t_listen();
	r = t_ask("big.test", LDNS_RR_TYPE_A, false);
	ck_assert(ldns_pkt_tc(r));
	ck_assert_uint_eq(ldns_pkt_ancount(r), 0);
	ck_assert_uint_eq(ldns_pkt_qdcount(r), 1);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.npins, 40);		/* pinned all the same */

	q = t_query("big.test", LDNS_RR_TYPE_A, true);
	ck_assert_ptr_nonnull(r = t_ask_pkt(q, false));
	ck_assert(!ldns_pkt_tc(r));
	ck_assert_uint_eq(ldns_pkt_ancount(r), 40);
	ck_assert_uint_eq(ldns_pkt_edns_udp_size(r), DNSMSG_UDP_MAX);
	ldns_pkt_free(r);
	ldns_pkt_free(q);

	r = t_ask("big.test", LDNS_RR_TYPE_A, true);
	ck_assert_uint_eq(ldns_pkt_ancount(r), 40);
	ldns_pkt_free(r);
	t_end();
}
END_TEST

START_TEST(test_upstream_timeout_then_next_then_servfail)
{
	struct sockaddr_in	*up1 = (struct sockaddr_in *)&T.pol.upstreams[1];
	ldns_pkt		*r;
	json_t			*ev;
	uint64_t		 start;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	T.conf.timeout_ms = 150;
	t_sin(up1, "127.0.0.3", 53);
	T.pol.nupstreams = 2;
	t_listen();
	start = mono_ms();
	r = t_ask("slow.test", LDNS_RR_TYPE_A, false);
	ck_assert_uint_ge(mono_ms() - start, 300);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_SERVFAIL);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.up[0].nudp, 1);
	ck_assert_uint_eq(T.up[1].nudp, 1);
	ev = t_last("dns_refused");
	ck_assert_str_eq(t_str(ev, "reason"), "upstream");
	ck_assert_str_eq(t_str(ev, "rcode"), "SERVFAIL");

	/* An upstream's SERVFAIL is a failure too. */
	r = t_ask("fail.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_SERVFAIL);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.up[1].nudp, 2);
	t_end();
}
END_TEST

START_TEST(test_dead_upstream_skipped_without_waiting)
{
	struct sockaddr_in	*up0 = (struct sockaddr_in *)&T.pol.upstreams[0];
	struct sockaddr_in	*up1 = (struct sockaddr_in *)&T.pol.upstreams[1];
	ldns_pkt		*r;
	uint64_t		 start;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	T.conf.timeout_ms = 2000;
	t_sin(up0, "127.0.0.9", 53);	/* nobody: port unreachable */
	t_sin(up1, "127.0.0.2", 53);
	T.pol.nupstreams = 2;
	t_listen();
	start = mono_ms();
	r = t_ask("pypi.org", LDNS_RR_TYPE_A, false);
	ck_assert_uint_lt(mono_ms() - start, 1000);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NOERROR);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.up[0].nudp, 1);
	t_end();
}
END_TEST

START_TEST(test_rate_limit_drops_and_reports)
{
	ldns_pkt	*q, *r;
	json_t		*ev;
	uint8_t		*wire;
	size_t		 len;
	unsigned	 i, answered = 0;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	T.conf.qps_max = 5;
	t_listen();
	q = t_query("denied.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt2wire(&wire, q, &len), LDNS_STATUS_OK);
	ldns_pkt_free(q);
	t_send(wire, len, false);
	for (i = 1; i < 20; i++)
		ck_assert_int_eq(write_all(T.client_fd, wire, len), 0);
	free(wire);
	while ((r = t_recv(false, T_QUIET_MS)) != NULL) {
		answered++;
		ldns_pkt_free(r);
	}
	ck_assert_uint_ge(answered, 5);
	ck_assert_uint_le(answered, 7);
	ck_assert_uint_eq(json_array_size(T.events), answered);
	ck_assert_ptr_null(json_object_get(t_last("dns_refused"),
	    "suppressed"));

	/* A second later the bucket is full again; the next event says
	 * how many were dropped. */
	usleep(1100 * 1000);
	r = t_ask("denied.test", LDNS_RR_TYPE_A, false);
	ldns_pkt_free(r);
	ev = t_last("dns_refused");
	ck_assert_int_eq(json_integer_value(json_object_get(ev,
	    "suppressed")), 20 - answered);
	t_end();
}
END_TEST

START_TEST(test_policy_swap_applies_to_answers_in_flight)
{
	static const char *const none[] = { NULL };
	struct policy	 narrow;
	ldns_pkt	*q, *r;
	json_t		*ev;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	t_listen();
	q = t_query("late.test", LDNS_RR_TYPE_A, false);
	t_send_pkt(q, false);
	while (T.up[0].nudp == 0)
		event_base_loop(T.base, EVLOOP_ONCE);
	/* Narrowed while the answer is on its way. */
	narrow = T.pol;
	narrow.groups = xcalloc(1, sizeof(*narrow.groups));
	t_group(narrow.groups, none);
	narrow.ngroups = 1;
	resolver_set_policy(T.c, &narrow);
	ck_assert_ptr_nonnull(r = t_recv(false, T_WAIT_MS));
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NXDOMAIN);
	ldns_pkt_free(r);
	ldns_pkt_free(q);
	ck_assert_uint_eq(T.npins, 0);
	ev = t_last("dns_refused");
	ck_assert_str_eq(t_str(ev, "reason"), "not_allowed");
	ck_assert_ptr_null(t_last("dns_allowed"));
	resolver_close(T.c);
	T.c = NULL;
	free(narrow.groups);
	t_end();
}
END_TEST

START_TEST(test_close_with_query_in_flight)
{
	ldns_pkt	*q;
	size_t		 nev;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	T.conf.timeout_ms = 100;
	t_listen();
	q = t_query("slow.test", LDNS_RR_TYPE_A, false);
	t_send_pkt(q, false);
	ldns_pkt_free(q);
	while (T.up[0].nudp == 0)
		event_base_loop(T.base, EVLOOP_ONCE);
	nev = json_array_size(T.events);
	resolver_close(T.c);
	T.c = NULL;
	t_run(400);		/* past every timeout */
	ck_assert_uint_eq(json_array_size(T.events), nev);
	ck_assert_ptr_null(t_recv(false, 10));
	t_end();
}
END_TEST

START_TEST(test_close_from_callbacks)
{
	ldns_pkt	*q, *r;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	t_listen();
	/* From the event callback of a refusal. */
	T.close_on_event = true;
	q = t_query("denied.test", LDNS_RR_TYPE_A, false);
	t_send_pkt(q, false);
	ldns_pkt_free(q);
	/* The reply goes out before the event that closes. */
	ck_assert_ptr_nonnull(r = t_recv(false, T_WAIT_MS));
	ldns_pkt_free(r);
	ck_assert_ptr_null(T.c);
	ck_assert_uint_eq(json_array_size(T.events), 1);
	/* Nobody listens any more. */
	q = t_query("pypi.org", LDNS_RR_TYPE_A, false);
	t_send_pkt(q, false);
	ck_assert_ptr_null(t_recv(false, T_QUIET_MS));
	ck_assert_uint_eq(T.up[0].nudp, 0);
	ldns_pkt_free(q);
	resolver_free(T.r);

	/* From the pin callback, with a second pin still to come. */
	json_array_clear(T.events);
	T.close_on_event = false;
	T.close_on_pin = true;
	t_listen();
	q = t_query("pypi.org", LDNS_RR_TYPE_A, false);
	t_send_pkt(q, false);
	ldns_pkt_free(q);
	ck_assert_ptr_null(t_recv(false, T_QUIET_MS));
	ck_assert_uint_eq(T.npins, 1);
	ck_assert_uint_eq(json_array_size(T.events), 0);
	t_end();
}
END_TEST

START_TEST(test_l1_has_no_listener)
{
	struct in_addr	 lo = { htonl(INADDR_LOOPBACK) };
	char		 err[256];

	t_init(LEVEL_L1, g_pypi, g_wild);
	T.r = resolver_new(T.base, -1, &T.conf, t_pin, t_event);
	ck_assert_ptr_null(resolver_listen(T.r, lo, T_PORT, &T.pol, &T, err,
	    sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "no resolver"));
	T.pol.level = LEVEL_L0;
	ck_assert_ptr_null(resolver_listen(T.r, lo, T_PORT, &T.pol, &T, err,
	    sizeof(err)));
	t_end();
}
END_TEST

START_TEST(test_l3_answers_everything_pins_nothing)
{
	struct policy	 l1;
	ldns_pkt	*r;
	json_t		*ev;

	t_init(LEVEL_L3, NULL, NULL);
	T.zones = zones;
	t_listen();
	r = t_ask("anything.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NOERROR);
	ck_assert_uint_eq(ldns_pkt_ancount(r), 1);
	ldns_pkt_free(r);
	ck_assert_uint_eq(T.npins, 0);
	ev = t_last("dns_allowed");
	ck_assert_int_eq(json_integer_value(json_object_get(ev, "group")), -1);
	ck_assert_uint_eq(json_array_size(json_object_get(ev, "pinned")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(ev, "ttl")), 0);
	/* Tunnelling is refused at L3 too. */
	r = t_ask(RANDOM_LABEL ".t.example", LDNS_RR_TYPE_TXT, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_NXDOMAIN);
	ldns_pkt_free(r);
	ck_assert_ptr_nonnull(t_last("dns_tunnel_suspected"));

	/* Swapped down to L1: REFUSED until the owner closes it. */
	l1 = T.pol;
	l1.level = LEVEL_L1;
	resolver_set_policy(T.c, &l1);
	r = t_ask("anything.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt_get_rcode(r), LDNS_RCODE_REFUSED);
	ldns_pkt_free(r);
	resolver_close(T.c);
	T.c = NULL;
	t_end();
}
END_TEST

START_TEST(test_names_in_events_are_escaped_and_capped)
{
	static const char *const star[] = { "*.esc.test", NULL };
	ldns_pkt	*r;
	json_t		*ev;
	char		 name[800];
	size_t		 i;

	t_init(LEVEL_L2, star, NULL);
	T.zones = zones;
	t_listen();
	/* A label with a space and a control byte. */
	r = t_ask("a\\032b\\001.esc.test", LDNS_RR_TYPE_A, false);
	ldns_pkt_free(r);
	ev = t_last("dns_allowed");
	ck_assert_ptr_nonnull(ev);
	ck_assert_str_eq(t_str(ev, "name"), "a\\032b\\001.esc.test");

	/* 63 bytes of \255 per label: 759 characters escaped. */
	name[0] = '\0';
	for (i = 0; i < 3; i++) {
		char	 label[63 * 4 + 2];
		size_t	 j;

		for (j = 0; j < 63; j++)
			memcpy(label + 4 * j, "\\255", 4);
		label[63 * 4] = '.';
		label[63 * 4 + 1] = '\0';
		ck_assert_int_lt(strlen(name) + strlen(label), sizeof(name));
		memcpy(name + strlen(name), label, strlen(label) + 1);
	}
	ck_assert_int_lt(strlen(name) + 5, sizeof(name));
	memcpy(name + strlen(name), "test", 5);
	r = t_ask(name, LDNS_RR_TYPE_A, false);
	ldns_pkt_free(r);
	ev = t_last("dns_refused");
	ck_assert_uint_eq(strlen(t_str(ev, "name")), DNS_NAME_MAX);
	t_end();
}
END_TEST

START_TEST(test_tcp_pipelined_queries)
{
	ldns_pkt	*q1, *q2, *r;
	uint8_t		*w1, *w2, buf[1024];
	size_t		 l1, l2;

	t_init(LEVEL_L2, g_pypi, g_wild);
	T.zones = zones;
	t_listen();
	q1 = t_query("pypi.org", LDNS_RR_TYPE_A, false);
	q2 = t_query("denied.test", LDNS_RR_TYPE_A, false);
	ck_assert_int_eq(ldns_pkt2wire(&w1, q1, &l1), LDNS_STATUS_OK);
	ck_assert_int_eq(ldns_pkt2wire(&w2, q2, &l2), LDNS_STATUS_OK);
	/* Both frames in one write. */
	buf[0] = (uint8_t)(l1 >> 8);
	buf[1] = (uint8_t)l1;
	memcpy(buf + 2, w1, l1);
	buf[2 + l1] = (uint8_t)(l2 >> 8);
	buf[3 + l1] = (uint8_t)l2;
	memcpy(buf + 4 + l1, w2, l2);
	t_send(buf + 2, l1, true);		/* sends the first frame */
	ck_assert_int_eq(write_all(T.client_fd, buf + 2 + l1, 2 + l2), 0);
	/* The refusal comes first: it needs no upstream. */
	ck_assert_ptr_nonnull(r = t_recv(true, T_WAIT_MS));
	ck_assert_uint_eq(ldns_pkt_id(r), ldns_pkt_id(q2));
	ldns_pkt_free(r);
	ck_assert_ptr_nonnull(r = t_recv(true, T_WAIT_MS));
	ck_assert_uint_eq(ldns_pkt_id(r), ldns_pkt_id(q1));
	ldns_pkt_free(r);
	free(w1);
	free(w2);
	ldns_pkt_free(q1);
	ldns_pkt_free(q2);
	t_end();
}
END_TEST

/*
 * A neighbour: in a namespace of its own behind veth dev (the peer of
 * dev's "...0" end here), with address addr and gateway gw, it asks
 * 10.99.0.1 once and says on fd whether an answer came.
 */
static void __attribute__((noreturn))
t_neighbour(int fd, const char *dev, const char *addr, const char *gw)
{
	struct sockaddr_in	 sin;
	struct timeval		 tv = { 2, 0 };
	ldns_pkt		*q, *r = NULL;
	uint8_t			*wire, buf[1024];
	char			 cmd[256], c = 'n';
	size_t			 len;
	ssize_t			 n;
	int			 s;

	if (unshare(CLONE_NEWNET) == -1 || write(fd, "r", 1) != 1 ||
	    read(fd, &c, 1) != 1)
		_exit(1);
	snprintf(cmd, sizeof(cmd), "ip link set lo up && ip addr add %s/24 "
	    "dev %s && ip link set %s up && ip route add default via %s",
	    addr, dev, dev, gw);
	if (system(cmd) != 0)
		_exit(1);
	c = 'n';
	t_sin(&sin, "10.99.0.1", T_PORT);
	q = t_query("denied.test", LDNS_RR_TYPE_A, false);
	/* Connected, so a port unreachable ends the wait at once. */
	if (ldns_pkt2wire(&wire, q, &len) == LDNS_STATUS_OK &&
	    (s = socket(AF_INET, SOCK_DGRAM, 0)) != -1 &&
	    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0 &&
	    connect(s, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    send(s, wire, len, 0) == (ssize_t)len &&
	    (n = recv(s, buf, sizeof(buf), 0)) > 0 &&
	    ldns_wire2pkt(&r, buf, (size_t)n) == LDNS_STATUS_OK &&
	    ldns_pkt_id(r) == ldns_pkt_id(q) &&
	    ldns_pkt_get_rcode(r) == LDNS_RCODE_NXDOMAIN)
		c = 'y';
	if (write(fd, &c, 1) != 1)
		_exit(1);
	_exit(0);
}

/* Runs a neighbour behind the veth pair "<pair>0"/"<pair>1"; its answer. */
static char
t_neighbour_asks(const char *pair, const char *addr, const char *gw)
{
	struct event	*ev;
	char		 cmd[256], dev[IFNAMSIZ], c = 0;
	int		 sp[2], st;
	ssize_t		 n;
	pid_t		 pid;

	snprintf(dev, sizeof(dev), "%s1", pair);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sp), 0);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		close(sp[0]);
		t_neighbour(sp[1], dev, addr, gw);
	}
	close(sp[1]);
	ck_assert_int_eq(read(sp[0], &c, 1), 1);
	snprintf(cmd, sizeof(cmd), "ip link set %s netns %d", dev, (int)pid);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(write(sp[0], "g", 1), 1);
	/* Serve while it asks. */
	ev = event_new(T.base, sp[0], EV_READ | EV_PERSIST, t_noop, NULL);
	event_add(ev, NULL);
	c = 0;
	while ((n = recv(sp[0], &c, 1, MSG_DONTWAIT)) == -1 &&
	    errno == EAGAIN)
		event_base_loop(T.base, EVLOOP_ONCE);
	event_free(ev);
	close(sp[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(n == 1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "neighbour failed (%#x)", (unsigned)st);
	return c;
}

START_TEST(test_only_the_gateway_device_reaches_the_resolver)
{
	t_init(LEVEL_L2, g_pypi, g_wild);
	/* Two sandboxes' links, as netguard makes them in the uplink
	 * namespace: this resolver serves the first. */
	ck_assert_int_eq(system("ip link add nga0 type veth peer name nga1 && "
	    "ip addr add 10.99.0.1/24 dev nga0 && ip link set nga0 up && "
	    "ip link add ngb0 type veth peer name ngb1 && "
	    "ip addr add 10.98.0.1/24 dev ngb0 && ip link set ngb0 up"), 0);
	T.addr = "10.99.0.1";
	t_listen();
	ck_assert_int_eq(t_neighbour_asks("nga", "10.99.0.2", "10.99.0.1"),
	    'y');
	/* The other sandbox reaches 10.99.0.1 through its own gateway,
	 * but not this resolver. */
	ck_assert_int_eq(t_neighbour_asks("ngb", "10.98.0.2", "10.98.0.1"),
	    'n');
	ck_assert_uint_eq(json_array_size(T.events), 1);
	t_end();
}
END_TEST

static Suite *
resolver_suite(void)
{
	Suite	*s = suite_create("resolver");
	TCase	*tc = tcase_create("resolver");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_allowed_name_is_pinned_before_answer);
	tcase_add_test(tc, test_not_allowed_is_nxdomain_without_upstream);
	tcase_add_test(tc, test_wildcard_matches_one_label_only);
	tcase_add_test(tc, test_cname_chain_lowest_ttl_clamped);
	tcase_add_test(tc, test_private_and_metadata_answers_not_pinned);
	tcase_add_test(tc, test_rebinding_table);
	tcase_add_test(tc, test_pin_failure_is_servfail);
	tcase_add_test(tc, test_tunnel_label_is_refused_and_flagged);
	tcase_add_test(tc, test_malformed_is_formerr_and_serving_goes_on);
	tcase_add_test(tc, test_tcp_query_goes_upstream_over_tcp);
	tcase_add_test(tc, test_truncated_upstream_answer_retried_over_tcp);
	tcase_add_test(tc, test_long_answer_truncated_without_edns);
	tcase_add_test(tc, test_upstream_timeout_then_next_then_servfail);
	tcase_add_test(tc, test_dead_upstream_skipped_without_waiting);
	tcase_add_test(tc, test_rate_limit_drops_and_reports);
	tcase_add_test(tc, test_policy_swap_applies_to_answers_in_flight);
	tcase_add_test(tc, test_close_with_query_in_flight);
	tcase_add_test(tc, test_close_from_callbacks);
	tcase_add_test(tc, test_l1_has_no_listener);
	tcase_add_test(tc, test_l3_answers_everything_pins_nothing);
	tcase_add_test(tc, test_names_in_events_are_escaped_and_capped);
	tcase_add_test(tc, test_tcp_pipelined_queries);
	tcase_add_test(tc, test_only_the_gateway_device_reaches_the_resolver);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(resolver_suite)
