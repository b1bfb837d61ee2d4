/*
 * netguard/flow.c's parse of ctnetlink DESTROY messages (built here with
 * libmnl, as the kernel lays them out) and flowlog.c's records: names
 * from pins, rules from marks, the token bucket and its summaries.
 */
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <endian.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include <libmnl/libmnl.h>

#include <jansson.h>

#include "testutil.h"
#include "flow.h"
#include "flowlog.h"
#include "nft.h"

#define T_BUF		1024

struct t_ct {
	const char	*src, *dst;
	uint8_t		 proto;
	uint16_t	 sport, dport;
	uint64_t	 bytes_out, packets_out, bytes_in, packets_in;
	uint32_t	 mark;		/* 0: no CTA_MARK */
	uint64_t	 start_ns, stop_ns;	/* 0: no CTA_TIMESTAMP */
};

static void
put_counters(struct nlmsghdr *nlh, uint16_t type, uint64_t packets,
    uint64_t bytes)
{
	struct nlattr	*n = mnl_attr_nest_start(nlh, type);

	mnl_attr_put_u64(nlh, CTA_COUNTERS_PACKETS, htobe64(packets));
	mnl_attr_put_u64(nlh, CTA_COUNTERS_BYTES, htobe64(bytes));
	mnl_attr_nest_end(nlh, n);
}

/* A DESTROY event for c (IPv4), into buf. */
static struct nlmsghdr *
t_msg(uint8_t *buf, const struct t_ct *c, uint16_t type)
{
	struct nlmsghdr	*nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg	*nfg;
	struct nlattr	*tup, *ip, *pr, *ts;
	struct in_addr	 a;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_INET;
	nfg->version = NFNETLINK_V0;
	tup = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
	ip = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	ck_assert_int_eq(inet_pton(AF_INET, c->src, &a), 1);
	mnl_attr_put_u32(nlh, CTA_IP_V4_SRC, a.s_addr);
	ck_assert_int_eq(inet_pton(AF_INET, c->dst, &a), 1);
	mnl_attr_put_u32(nlh, CTA_IP_V4_DST, a.s_addr);
	mnl_attr_nest_end(nlh, ip);
	pr = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, c->proto);
	mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(c->sport));
	mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(c->dport));
	mnl_attr_nest_end(nlh, pr);
	mnl_attr_nest_end(nlh, tup);
	put_counters(nlh, CTA_COUNTERS_ORIG, c->packets_out, c->bytes_out);
	put_counters(nlh, CTA_COUNTERS_REPLY, c->packets_in, c->bytes_in);
	if (c->mark != 0)
		mnl_attr_put_u32(nlh, CTA_MARK, htonl(c->mark));
	if (c->start_ns != 0) {
		ts = mnl_attr_nest_start(nlh, CTA_TIMESTAMP);
		mnl_attr_put_u64(nlh, CTA_TIMESTAMP_START, htobe64(c->start_ns));
		mnl_attr_put_u64(nlh, CTA_TIMESTAMP_STOP, htobe64(c->stop_ns));
		mnl_attr_nest_end(nlh, ts);
	}
	return nlh;
}

static const struct t_ct t_web = {
	"10.231.0.2", "203.0.113.10", IPPROTO_TCP, 41822, 443,
	30754, 14, 200840, 16, NFT_MARK_GROUP(0),
	1796006772101000000ull, 1796006773303000000ull,
};

START_TEST(test_parse_reads_tuple_counters_mark_and_times)
{
	uint8_t		 buf[T_BUF];
	struct nlmsghdr	*nlh = t_msg(buf, &t_web, IPCTNL_MSG_CT_DELETE);
	struct flow	 f;
	char		 a[INET_ADDRSTRLEN];

	ck_assert_int_eq(flow_parse(nlh, nlh->nlmsg_len, &f), 1);
	ck_assert_int_eq(f.family, AF_INET);
	ck_assert_uint_eq(f.proto, IPPROTO_TCP);
	inet_ntop(AF_INET, f.src, a, sizeof(a));
	ck_assert_str_eq(a, "10.231.0.2");
	inet_ntop(AF_INET, f.dst, a, sizeof(a));
	ck_assert_str_eq(a, "203.0.113.10");
	ck_assert(f.ports);
	ck_assert_uint_eq(f.sport, 41822);
	ck_assert_uint_eq(f.dport, 443);
	ck_assert_uint_eq(f.bytes_out, 30754);
	ck_assert_uint_eq(f.packets_out, 14);
	ck_assert_uint_eq(f.bytes_in, 200840);
	ck_assert_uint_eq(f.packets_in, 16);
	ck_assert_uint_eq(f.mark, NFT_MARK_GROUP(0));
	ck_assert_uint_eq(f.start_ns, t_web.start_ns);
	ck_assert_uint_eq(f.end_ns, t_web.stop_ns);
}
END_TEST

START_TEST(test_parse_skips_unmarked_foreign_and_other_messages)
{
	uint8_t		 buf[T_BUF];
	struct nlmsghdr	*nlh;
	struct t_ct	 c = t_web;
	struct flow	 f;

	c.mark = 0;		/* loopback, the resolver: no allow rule */
	nlh = t_msg(buf, &c, IPCTNL_MSG_CT_DELETE);
	ck_assert_int_eq(flow_parse(nlh, nlh->nlmsg_len, &f), 0);
	c.mark = 0x12340001;	/* someone else's mark */
	nlh = t_msg(buf, &c, IPCTNL_MSG_CT_DELETE);
	ck_assert_int_eq(flow_parse(nlh, nlh->nlmsg_len, &f), 0);
	c.mark = NFT_MARK_BASE;	/* our prefix, no rule */
	nlh = t_msg(buf, &c, IPCTNL_MSG_CT_DELETE);
	ck_assert_int_eq(flow_parse(nlh, nlh->nlmsg_len, &f), 0);
	nlh = t_msg(buf, &t_web, IPCTNL_MSG_CT_NEW);	/* not an end */
	ck_assert_int_eq(flow_parse(nlh, nlh->nlmsg_len, &f), 0);
}
END_TEST

START_TEST(test_parse_rejects_short_and_overlong_lengths)
{
	uint8_t		 buf[T_BUF];
	struct nlmsghdr	*nlh = t_msg(buf, &t_web, IPCTNL_MSG_CT_DELETE);
	struct flow	 f;
	uint32_t	 len = nlh->nlmsg_len;

	ck_assert_int_eq(flow_parse(nlh, 8, &f), -1);
	ck_assert_int_eq(flow_parse(nlh, len - 1, &f), -1);
	nlh->nlmsg_len = 4;
	ck_assert_int_eq(flow_parse(nlh, len, &f), -1);
}
END_TEST

START_TEST(test_rule_names_from_marks)
{
	char	 b[32];
	int	 g = 99;

	ck_assert_str_eq(flowlog_rule(NFT_MARK_GROUP(0), b, sizeof(b), &g),
	    "allow[0]");
	ck_assert_int_eq(g, 0);
	ck_assert_str_eq(flowlog_rule(NFT_MARK_GROUP(31), b, sizeof(b), &g),
	    "allow[31]");
	ck_assert_str_eq(flowlog_rule(NFT_MARK_L3, b, sizeof(b), &g), "L3");
	ck_assert_int_eq(g, -1);
	ck_assert_ptr_null(flowlog_rule(NFT_MARK_BASE, b, sizeof(b), &g));
	ck_assert_ptr_null(flowlog_rule(1, b, sizeof(b), &g));
}
END_TEST

/* ------------------------------------------------------------ flowlog */

static json_t	*t_events;

static void
t_emit(void *owner, json_t *fields, const char *event)
{
	json_object_set_new(fields, "event", json_string(event));
	json_array_append_new(t_events, fields);
}

static uint64_t
t_lost(void *owner)
{
	return 3;
}

static struct flow
t_flow(const char *dst, uint64_t bytes_in)
{
	struct flow	 f;

	memset(&f, 0, sizeof(f));
	f.family = AF_INET;
	f.proto = IPPROTO_TCP;
	inet_pton(AF_INET, "10.231.0.2", f.src);
	inet_pton(AF_INET, dst, f.dst);
	f.ports = true;
	f.sport = 40000;
	f.dport = 443;
	f.bytes_out = 100;
	f.packets_out = 2;
	f.bytes_in = bytes_in;
	f.packets_in = 3;
	f.mark = NFT_MARK_GROUP(1);
	f.start_ns = 1796006772101000000ull;
	f.end_ns = f.start_ns + 2500000000ull;
	return f;
}

START_TEST(test_records_carry_pinned_name_rule_and_duration)
{
	struct event_base	*base = event_base_new();
	struct flowlog_conf	 c = { 10, 60 };
	struct flowlog		*fl;
	struct flow		 f = t_flow("203.0.113.10", 5000);
	struct in_addr		 a;
	json_t			*r;

	t_events = json_array();
	fl = flowlog_new(base, &c, t_emit, t_lost, NULL);
	inet_pton(AF_INET, "203.0.113.10", &a);
	flowlog_pin(fl, AF_INET, &a, "alias.test");
	flowlog_pin(fl, AF_INET, &a, "allowed.test");	/* the latest */
	flowlog_flow(fl, &f);
	f = t_flow("203.0.113.11", 5000);		/* never resolved */
	flowlog_flow(fl, &f);
	ck_assert_uint_eq(json_array_size(t_events), 2);
	r = json_array_get(t_events, 0);
	ck_assert_str_eq(json_string_value(json_object_get(r, "event")),
	    "egress_flow");
	ck_assert_str_eq(json_string_value(json_object_get(r, "name")),
	    "allowed.test");
	ck_assert_str_eq(json_string_value(json_object_get(r, "rule")),
	    "allow[1]");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "group")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "duration_ms")),
	    2500);
	ck_assert_str_eq(json_string_value(json_object_get(r, "start")),
	    "2026-11-30T02:46:12.101Z");
	ck_assert_str_eq(json_string_value(json_object_get(r, "end")),
	    "2026-11-30T02:46:14.601Z");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "bytes_in")),
	    5000);
	ck_assert_ptr_null(json_object_get(json_array_get(t_events, 1),
	    "name"));
	flowlog_free(fl);
	/* Only the kernel's overruns were left to summarise. */
	ck_assert_uint_eq(json_array_size(t_events), 3);
	r = json_array_get(t_events, 2);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "summarised")),
	    0);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "lost")), 3);
	json_decref(t_events);
	event_base_free(base);
}
END_TEST

START_TEST(test_burst_beyond_rate_is_summarised_with_its_count)
{
	struct event_base	*base = event_base_new();
	struct flowlog_conf	 c = { 3, 60 };
	struct flowlog		*fl;
	struct flow		 f = t_flow("203.0.113.10", 1000);
	json_t			*r;
	int			 i;

	t_events = json_array();
	fl = flowlog_new(base, &c, t_emit, t_lost, NULL);
	for (i = 0; i < 10; i++)
		flowlog_flow(fl, &f);
	/* The bucket's burst (3), and no second passed to refill it. */
	ck_assert_uint_eq(json_array_size(t_events), 3);
	flowlog_summary(fl);
	ck_assert_uint_eq(json_array_size(t_events), 4);
	r = json_array_get(t_events, 3);
	ck_assert_str_eq(json_string_value(json_object_get(r, "event")),
	    "egress_flow_summary");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "summarised")),
	    7);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "bytes_in")),
	    7000);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "packets_out")),
	    14);
	ck_assert_ptr_nonnull(json_object_get(r, "start"));
	ck_assert_ptr_nonnull(json_object_get(r, "end"));
	flowlog_free(fl);
	json_decref(t_events);
	event_base_free(base);
}
END_TEST

START_TEST(test_names_are_capped_and_the_oldest_goes)
{
	struct event_base	*base = event_base_new();
	struct flowlog_conf	 c = { 1000, 60 };
	struct flowlog		*fl;
	struct flow		 f;
	struct in_addr		 a;
	char			 name[32];
	uint32_t		 i;

	t_events = json_array();
	fl = flowlog_new(base, &c, t_emit, t_lost, NULL);
	for (i = 0; i <= FLOWLOG_NAMES_MAX; i++) {
		a.s_addr = htonl(0xcb007100 + i);	/* 203.0.113.0 on */
		(void)snprintf(name, sizeof(name), "n%u.test", i);
		flowlog_pin(fl, AF_INET, &a, name);
		usleep(i == 0 ? 2000 : 0);	/* n0 is the oldest */
	}
	f = t_flow("203.0.113.0", 1);
	flowlog_flow(fl, &f);
	f = t_flow("203.0.113.1", 1);
	flowlog_flow(fl, &f);
	ck_assert_ptr_null(json_object_get(json_array_get(t_events, 0),
	    "name"));
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(t_events, 1), "name")), "n1.test");
	flowlog_free(fl);
	json_decref(t_events);
	event_base_free(base);
}
END_TEST

static Suite *
flow_suite(void)
{
	Suite	*s = suite_create("flow");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_parse_reads_tuple_counters_mark_and_times);
	tcase_add_test(tc, test_parse_skips_unmarked_foreign_and_other_messages);
	tcase_add_test(tc, test_parse_rejects_short_and_overlong_lengths);
	tcase_add_test(tc, test_rule_names_from_marks);
	tcase_add_test(tc, test_records_carry_pinned_name_rule_and_duration);
	tcase_add_test(tc, test_burst_beyond_rate_is_summarised_with_its_count);
	tcase_add_test(tc, test_names_are_capped_and_the_oldest_goes);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(flow_suite)
