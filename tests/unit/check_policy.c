/*
 * netguard's policy files (rules/network/NAME.yaml) and its NFLOG record
 * parser: valid policies load with their groups, every malformed one is
 * refused, wildcards stand for exactly one label, and denied-packet
 * records give back the rule and the destination, or nothing.
 */
#include <arpa/inet.h>

#include "testutil.h"
#include "nflog.h"
#include "policy.h"

/* A rules directory with network/NAME.yaml holding yaml. */
static void
rules_with(char *dir, size_t len, const char *name, const char *yaml)
{
	char	 p[PATH_MAX];

	tu_tmpdir(dir, len);
	tu_path(p, sizeof(p), dir, "network");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_ne(xsnprintf(p, sizeof(p), "%s/network/%s.yaml", dir,
	    name), -1);
	tu_write(p, yaml, strlen(yaml));
}

static struct policy_set *
load_one(const char *yaml)
{
	char	 dir[PATH_MAX];

	rules_with(dir, sizeof(dir), "p", yaml);
	return policy_set_load(dir);
}

START_TEST(test_policy_l2_loads_groups_ports_and_upstreams)
{
	struct policy_set	*set;
	const struct policy	*p;

	set = load_one("level: L2\nallow:\n"
	    "  - names: [Allowed.Test, \"*.wild.test\"]\n    ports: [80, 443]\n"
	    "  - cidrs: [203.0.113.0/28, 2001:db8::/32, 198.51.100.7]\n"
	    "resolver:\n  upstreams: [192.0.2.53, \"2001:db8::53\"]\n");
	ck_assert_ptr_nonnull(set);
	p = policy_find(set, "p");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->level, LEVEL_L2);
	ck_assert_uint_eq(p->ngroups, 2);
	ck_assert_uint_eq(p->groups[0].nports, 2);
	ck_assert_uint_eq(p->groups[0].ports[1], 443);
	ck_assert_str_eq(p->groups[0].names[0], "allowed.test");
	ck_assert_uint_eq(p->groups[1].nports, 0);
	ck_assert_uint_eq(p->groups[1].ncidrs, 3);
	ck_assert_int_eq(p->groups[1].cidrs[1].family, AF_INET6);
	ck_assert_uint_eq(p->groups[1].cidrs[2].prefix, 32);
	ck_assert_uint_eq(p->nupstreams, 2);
	ck_assert_uint_eq(strlen(p->sha256), 64);
	ck_assert_ptr_null(policy_find(set, "q"));
	policy_set_free(set);
}
END_TEST

START_TEST(test_policy_wildcard_matches_one_label)
{
	struct policy_set	*set;
	const struct policy	*p;

	set = load_one("level: L2\nallow:\n"
	    "  - names: [exact.test]\n"
	    "  - names: [\"*.wild.test\"]\n"
	    "resolver: {upstreams: [192.0.2.53]}\n");
	ck_assert_ptr_nonnull(set);
	p = policy_find(set, "p");
	ck_assert_int_eq(policy_match_name(p, "exact.test"), 0);
	ck_assert_int_eq(policy_match_name(p, "a.wild.test"), 1);
	ck_assert_int_eq(policy_match_name(p, "a.b.wild.test"), -1);
	ck_assert_int_eq(policy_match_name(p, "wild.test"), -1);
	ck_assert_int_eq(policy_match_name(p, "x.exact.test"), -1);
	ck_assert_int_eq(policy_match_name(p, ".wild.test"), -1);
	ck_assert_int_eq(policy_match_name(p, "exact.test.evil"), -1);
	policy_set_free(set);
}
END_TEST

/* Each of these must be refused: the set does not load at all. */
static const char *const bad_policies[] = {
	"level: L4\n",
	"allow: []\n",					/* no level */
	"level: L2\nsurprise: 1\n",
	"level: L3\n",					/* L3 without upstreams */
	"level: L3\nallow: [{cidrs: [192.0.2.0/24]}]\nresolver: {upstreams: [192.0.2.53]}\n",
	"level: L2\nallow: [{cidrs: [192.0.2.1/24]}]\n",	/* host bits */
	"level: L2\nallow: [{cidrs: [300.0.0.0/8]}]\n",
	"level: L2\nallow: [{cidrs: [192.0.2.0/33]}]\n",
	"level: L2\nallow: [{names: [a.test]}]\n",		/* no upstreams */
	"level: L2\nallow: [{names: [\"a..test\"]}]\nresolver: {upstreams: [192.0.2.53]}\n",
	"level: L2\nallow: [{names: [\"**.test\"]}]\nresolver: {upstreams: [192.0.2.53]}\n",
	"level: L2\nallow: [{names: [\"a.test.\"]}]\nresolver: {upstreams: [192.0.2.53]}\n",
	"level: L2\nallow: [{names: [\"a b.test\"]}]\nresolver: {upstreams: [192.0.2.53]}\n",
	"level: L2\nallow: [{cidrs: [192.0.2.0/24], ports: [0]}]\n",
	"level: L2\nallow: [{cidrs: [192.0.2.0/24], ports: [65536]}]\n",
	"level: L2\nallow: [{cidrs: [192.0.2.0/24], ports: []}]\n",
	"level: L2\nallow: [{ports: [80]}]\n",
	"level: L2\nresolver: {upstreams: [192.0.2.0/24]}\n",
	"level: L2\nresolver: {upstreams: [a.b]}\n",
	"- level: L2\n",
};

START_TEST(test_policy_refuses_malformed)
{
	struct policy_set	*set;

	set = load_one(bad_policies[_i]);
	if (set != NULL)
		ck_abort_msg("accepted: %s", bad_policies[_i]);
}
END_TEST

START_TEST(test_policy_refuses_overlong_name)
{
	char	 dir[PATH_MAX], name[POLICY_NAME_MAX + 2];

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	rules_with(dir, sizeof(dir), name, "level: L0\n");
	ck_assert_ptr_null(policy_set_load(dir));
}
END_TEST

START_TEST(test_policy_shipped_rules_load)
{
	struct policy_set	*set;

	set = policy_set_load("rules");
	ck_assert_ptr_nonnull(set);
	ck_assert_int_eq(policy_find(set, "none")->level, LEVEL_L0);
	ck_assert_int_eq(policy_find(set, "loopback")->level, LEVEL_L1);
	ck_assert_int_eq(policy_find(set, "mirror")->level, LEVEL_L2);
	ck_assert_int_eq(policy_find(set, "open")->level, LEVEL_L3);
	policy_set_free(set);
}
END_TEST

/* ------------------------------------------------------------ nflog */

static size_t
tlv(uint8_t *out, uint16_t type, const void *v, uint16_t len)
{
	uint16_t	 tl = (uint16_t)(len + 4);

	memcpy(out, &tl, 2);
	memcpy(out + 2, &type, 2);
	memcpy(out + 4, v, len);
	return ((size_t)tl + 3) & ~(size_t)3;
}

/* An NFLOG record: header, prefix TLV, payload TLV with an IPv4 packet. */
static size_t
record(uint8_t *buf, const char *prefix, uint8_t proto, const char *dst,
    uint16_t dport, size_t cut)
{
	uint8_t		 ip[28];
	size_t		 n = 4;

	memset(buf, 0, 256);
	buf[0] = AF_INET;
	memset(ip, 0, sizeof(ip));
	ip[0] = 0x45;
	ip[9] = proto;
	inet_pton(AF_INET, "10.231.0.2", ip + 12);
	inet_pton(AF_INET, dst, ip + 16);
	ip[22] = (uint8_t)(dport >> 8);
	ip[23] = (uint8_t)dport;
	if (prefix != NULL)
		n += tlv(buf + n, 10, prefix, (uint16_t)strlen(prefix) + 1);
	n += tlv(buf + n, 9, ip, (uint16_t)(sizeof(ip) - cut));
	return n;
}

START_TEST(test_nflog_parses_rule_and_destination)
{
	uint8_t	 buf[256];
	size_t	 n = record(buf, "ng:metadata", IPPROTO_TCP, "169.254.169.254",
		    80, 0);
	json_t	*d = nflog_parse(buf, n);

	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(json_string_value(json_object_get(d, "rule")),
	    "metadata");
	ck_assert_str_eq(json_string_value(json_object_get(d, "protocol")),
	    "tcp");
	ck_assert_str_eq(json_string_value(json_object_get(d, "family")),
	    "ipv4");
	ck_assert_str_eq(json_string_value(json_object_get(d, "dst")),
	    "169.254.169.254");
	ck_assert_str_eq(json_string_value(json_object_get(d, "src")),
	    "10.231.0.2");
	ck_assert_int_eq(json_integer_value(json_object_get(d, "dport")), 80);
	json_decref(d);
	/* ICMP has no port. */
	n = record(buf, "ng:policy", IPPROTO_ICMP, "203.0.113.10", 0, 0);
	d = nflog_parse(buf, n);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(json_string_value(json_object_get(d, "protocol")),
	    "icmp");
	ck_assert_ptr_null(json_object_get(d, "dport"));
	json_decref(d);
}
END_TEST

START_TEST(test_nflog_ignores_foreign_and_broken_records)
{
	uint8_t	 buf[256];
	size_t	 n, i;
	json_t	*d;

	/* Not netguard's prefix, no prefix, a bare prefix. */
	n = record(buf, "other:x", IPPROTO_TCP, "192.0.2.1", 1, 0);
	ck_assert_ptr_null(nflog_parse(buf, n));
	n = record(buf, NULL, IPPROTO_TCP, "192.0.2.1", 1, 0);
	ck_assert_ptr_null(nflog_parse(buf, n));
	n = record(buf, "ng:", IPPROTO_TCP, "192.0.2.1", 1, 0);
	ck_assert_ptr_null(nflog_parse(buf, n));
	/* A payload too short for an IP header. */
	n = record(buf, "ng:dns", IPPROTO_UDP, "192.0.2.1", 53, 12);
	ck_assert_ptr_null(nflog_parse(buf, n));
	/* Every truncation of a good record: never a read past the end. */
	n = record(buf, "ng:dns", IPPROTO_UDP, "192.0.2.1", 53, 0);
	for (i = 0; i < n; i++) {
		uint8_t	*copy = xmalloc(i + 1);

		memcpy(copy, buf, i);
		d = nflog_parse(copy, i);
		json_decref(d);
		free(copy);
	}
	/* A TLV length that points past the record. */
	buf[4] = 0xff;
	buf[5] = 0x7f;
	ck_assert_ptr_null(nflog_parse(buf, n));
}
END_TEST

static Suite *
policy_suite(void)
{
	Suite	*s = suite_create("policy");
	TCase	*tc = tcase_create("policy");

	tcase_add_test(tc, test_policy_l2_loads_groups_ports_and_upstreams);
	tcase_add_test(tc, test_policy_wildcard_matches_one_label);
	tcase_add_loop_test(tc, test_policy_refuses_malformed, 0,
	    (int)nitems(bad_policies));
	tcase_add_test(tc, test_policy_refuses_overlong_name);
	tcase_add_test(tc, test_policy_shipped_rules_load);
	tcase_add_test(tc, test_nflog_parses_rule_and_destination);
	tcase_add_test(tc, test_nflog_ignores_foreign_and_broken_records);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(policy_suite)
