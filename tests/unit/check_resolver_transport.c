/*
 * netguard/resolver.c and dnsmsg.c end to end, how queries travel: malformed
 * input, TCP and truncation, upstream timeouts and failover, rate limits,
 * closing with queries in flight, pipelining.  Harness: resolver_harness.h.
 */
#include "resolver_harness.h"

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

static Suite *
resolver_transport_suite(void)
{
	Suite	*s = suite_create("resolver_transport");
	TCase	*tc = tcase_create("transport");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_malformed_is_formerr_and_serving_goes_on);
	tcase_add_test(tc, test_tcp_query_goes_upstream_over_tcp);
	tcase_add_test(tc, test_truncated_upstream_answer_retried_over_tcp);
	tcase_add_test(tc, test_long_answer_truncated_without_edns);
	tcase_add_test(tc, test_upstream_timeout_then_next_then_servfail);
	tcase_add_test(tc, test_dead_upstream_skipped_without_waiting);
	tcase_add_test(tc, test_rate_limit_drops_and_reports);
	tcase_add_test(tc, test_close_with_query_in_flight);
	tcase_add_test(tc, test_close_from_callbacks);
	tcase_add_test(tc, test_tcp_pipelined_queries);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(resolver_transport_suite)
