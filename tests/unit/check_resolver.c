/*
 * netguard/resolver.c and dnsmsg.c end to end, what is answered and pinned:
 * allow lists, wildcards, CNAME chains, rebinding, tunnels, policy levels and
 * swaps, the events, and who reaches the listener.  Harness: resolver_harness.h.
 */
#include "resolver_harness.h"

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
	tcase_add_test(tc, test_policy_swap_applies_to_answers_in_flight);
	tcase_add_test(tc, test_l1_has_no_listener);
	tcase_add_test(tc, test_l3_answers_everything_pins_nothing);
	tcase_add_test(tc, test_names_in_events_are_escaped_and_capped);
	tcase_add_test(tc, test_only_the_gateway_device_reaches_the_resolver);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(resolver_suite)
