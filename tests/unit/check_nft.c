/*
 * netguard/nft.c against the kernel, the tables it makes: each test unshares
 * a network namespace, applies, pins, removes, and compares `nft list` with
 * nft's listing of the expected ruleset written by hand below.
 */
#include "nft_fixture.h"

/* ---------------------------------------------------------------- expected */

#define T_SETS								\
"	set meta4 { type ipv4_addr; flags interval; elements = { "	\
"169.254.169.254, 169.254.170.2, 100.100.100.200, 192.0.0.192, "	\
"168.63.129.16 } }\n"							\
"	set meta6 { type ipv6_addr; flags interval; elements = { "	\
"fd00:ec2::254, fd20:ce::254, ::ffff:169.254.169.254, "			\
"::ffff:169.254.170.2, ::ffff:100.100.100.200, ::ffff:192.0.0.192, "	\
"::ffff:168.63.129.16, 64:ff9b::a9fe:a9fe, 64:ff9b::a9fe:aa02, "	\
"64:ff9b::6464:64c8, 64:ff9b::c000:c0, 64:ff9b::a83f:8110 } }\n"	\
"	set ll4 { type ipv4_addr; flags interval; elements = { "		\
"169.254.0.0/16 } }\n"							\
"	set ll6 { type ipv6_addr; flags interval; elements = { "		\
"fe80::/10, ::ffff:169.254.0.0/112, 64:ff9b::a9fe:0/112 } }\n"		\
"	set mapped6 { type ipv6_addr; flags interval; elements = { "	\
"::ffff:0:0/96 } }\n"

#define T_DENY(r)							\
"	chain deny_" r " {\n"						\
"		limit rate 10/second burst 10 packets log prefix \"ng:" r	\
"\" group 5 snaplen 128 queue-threshold 1\n"				\
"		counter drop\n"						\
"	}\n"
#define T_DENIES							\
	T_DENY("metadata") T_DENY("linklocal") T_DENY("mapped")		\
	T_DENY("dns") T_DENY("internal") T_DENY("policy")

#define T_OUT_HEAD							\
"	chain output {\n"						\
"		type filter hook output priority 0; policy drop;\n"	\
"		ct state established,related counter accept\n"		\
"		ip daddr @meta4 counter jump deny_metadata\n"		\
"		ip6 daddr @meta6 counter jump deny_metadata\n"		\
"		ip daddr @ll4 counter jump deny_linklocal\n"		\
"		ip6 daddr @ll6 counter jump deny_linklocal\n"		\
"		ip6 daddr @mapped6 counter jump deny_mapped\n"
#define T_RESOLVER							\
"		ip daddr 10.200.0.1 meta l4proto { tcp, udp } th dport 53 "	\
"counter accept\n"
#define T_DNS_POOL							\
"		meta l4proto { tcp, udp } th dport { 53, 853 } counter "	\
"jump deny_dns\n"							\
"		ip daddr 10.200.0.0/16 counter jump deny_internal\n"
#define T_LO	"		oif lo counter accept\n"
#define T_OUT_TAIL							\
"		counter jump deny_policy\n"				\
"	}\n"
#define T_INPUT(lo)							\
"	chain input {\n"						\
"		type filter hook input priority 0; policy drop;\n"	\
"		ct state established,related accept\n"			\
	lo								\
"	}\n"

static const char t_l0[] =
"table inet netguard {\n" T_SETS T_DENIES T_OUT_HEAD T_DNS_POOL T_OUT_TAIL
    T_INPUT("") "}\n";

static const char t_l1[] =
"table inet netguard {\n" T_SETS T_DENIES T_OUT_HEAD T_DNS_POOL T_LO
    T_OUT_TAIL T_INPUT("		iif lo accept\n") "}\n";

static const char t_l3[] =
"table inet netguard {\n" T_SETS T_DENIES T_OUT_HEAD T_RESOLVER T_DNS_POOL
    T_LO "		counter ct mark set 0x4e47ffff accept\n" T_OUT_TAIL
    T_INPUT("		iif lo accept\n") "}\n";

/*
 * The L2 policy of l2_policy(): group 0's CIDRs merged (10.0.0.0/24 and
 * 10.0.1.0/24 touch, 10.0.0.128/25 lies inside, 192.0.2.10 and .11 touch),
 * single addresses in hash sets, duplicate port dropped; group 1 is names
 * only; group 2 has no ports (any port).
 */
static const char t_l2[] =
"table inet netguard {\n" T_SETS
"	set c4_0 { type ipv4_addr; flags interval; elements = { "
"10.0.0.0/23, 192.0.2.10-192.0.2.11 } }\n"
"	set h4_0 { type ipv4_addr; size 1; elements = { 198.51.100.7 } }\n"
"	set c6_0 { type ipv6_addr; flags interval; elements = { "
"2001:db8::/48 } }\n"
"	set h6_0 { type ipv6_addr; size 1; elements = { 2001:db8:1::1 } }\n"
"	set p_0 { type inet_service; elements = { 80, 443 } }\n"
"	set n4_1 { type ipv4_addr; flags timeout; size 65536; }\n"
"	set n6_1 { type ipv6_addr; flags timeout; size 65536; }\n"
"	set p_1 { type inet_service; elements = { 443 } }\n"
"	set c4_2 { type ipv4_addr; flags interval; elements = { "
"203.0.113.0/24 } }\n"
    T_DENIES T_OUT_HEAD T_RESOLVER T_DNS_POOL T_LO
"		ip daddr @c4_0 meta l4proto { tcp, udp } th dport @p_0 counter "
"ct mark set 0x4e470001 accept\n"
"		ip daddr @h4_0 meta l4proto { tcp, udp } th dport @p_0 counter "
"ct mark set 0x4e470001 accept\n"
"		ip6 daddr @c6_0 meta l4proto { tcp, udp } th dport @p_0 counter "
"ct mark set 0x4e470001 accept\n"
"		ip6 daddr @h6_0 meta l4proto { tcp, udp } th dport @p_0 counter "
"ct mark set 0x4e470001 accept\n"
"		ip daddr @n4_1 meta l4proto { tcp, udp } th dport @p_1 counter "
"ct mark set 0x4e470002 accept\n"
"		ip6 daddr @n6_1 meta l4proto { tcp, udp } th dport @p_1 counter "
"ct mark set 0x4e470002 accept\n"
"		ip daddr @c4_2 counter ct mark set 0x4e470003 accept\n"
    T_OUT_TAIL T_INPUT("		iif lo accept\n") "}\n";

static const char t_uplink[] =
"table ip netguard_nat {\n"
"	chain postrouting {\n"
"		type nat hook postrouting priority 100; policy accept;\n"
"		ip saddr 10.200.0.0/16 ip daddr != 10.200.0.0/16 counter "
"masquerade\n"
"	}\n"
"	chain forward {\n"
"		type filter hook forward priority 0; policy accept;\n"
"		ip saddr 10.200.0.0/16 ip daddr 10.200.0.0/16 counter drop\n"
"	}\n"
"	chain input {\n"
"		type filter hook input priority 0; policy accept;\n"
"		ip saddr 10.200.0.0/16 meta l4proto { tcp, udp } th dport 53 "
"counter accept\n"
"		ip saddr 10.200.0.0/16 counter drop\n"
"	}\n"
"}\n";

/* ---------------------------------------------------------------- helpers */

static char *
list_table(const char *family, const char *table)
{
	char	 cmd[128];

	snprintf(cmd, sizeof(cmd), "nft list table %s %s 2>/dev/null", family,
	    table);
	return capture(cmd);
}

/* nft's own listing of ruleset text, loaded in place of the table. */
static char *
list_expected(const char *text, const char *family, const char *table)
{
	char	 dir[PATH_MAX], path[PATH_MAX];

	tu_tmpdir(dir, sizeof(dir));
	tu_path(path, sizeof(path), dir, "expected.nft");
	tu_write(path, text, strlen(text));
	(void)sh("nft delete table %s %s 2>/dev/null", family, table);
	ck_assert_int_eq(sh("nft -f %s", path), 0);
	return list_table(family, table);
}

/* The table nft.c made equals nft's listing of text (and is restored). */
static void
assert_table(const char *text, const char *family, const char *table)
{
	char	*got, *want;

	size_t	 i, line = 1;

	ck_assert_ptr_nonnull(got = list_table(family, table));
	want = list_expected(text, family, table);
	ck_assert_ptr_nonnull(want);
	/* Only the first differing line: Check cannot carry whole tables. */
	for (i = 0; got[i] == want[i] && got[i] != '\0'; i++)
		if (got[i] == '\n')
			line++;
	while (i > 0 && got[i - 1] != '\n')
		i--;
	ck_assert_msg(strcmp(got, want) == 0, "line %zu differs:\n got: "
	    "%.200s\nwant: %.200s", line, got + i, want + i);
	free(got);
	free(want);
}

/* The element of `nft -j list set` for addr: its timeout and expires. */
static int
pin_state(const char *set, const char *addr, json_int_t *timeout,
    json_int_t *expires)
{
	char		 cmd[128], *out;
	json_t		*j, *nft, *o, *elems, *e, *el;
	size_t		 i, k;
	int		 found = 0;

	snprintf(cmd, sizeof(cmd), "nft -j list set inet netguard %s", set);
	ck_assert_ptr_nonnull(out = capture(cmd));
	ck_assert_ptr_nonnull(j = json_loads(out, 0, NULL));
	nft = json_object_get(j, "nftables");
	json_array_foreach(nft, i, o) {
		elems = json_object_get(json_object_get(o, "set"), "elem");
		json_array_foreach(elems, k, e) {
			el = json_object_get(e, "elem");
			if (el == NULL || strcmp(json_string_value(
			    json_object_get(el, "val")) ?: "", addr) != 0)
				continue;
			*timeout = json_integer_value(json_object_get(el,
			    "timeout"));
			*expires = json_integer_value(json_object_get(el,
			    "expires"));
			found = 1;
		}
	}
	json_decref(j);
	free(out);
	return found;
}

/* ---------------------------------------------------------------- tests */

START_TEST(test_apply_each_level_matches_expected_ruleset)
{
	static const char	*const want[] = { t_l0, t_l1, NULL, t_l3 };
	struct fixture		 f;
	struct nft_handle	*h;
	enum policy_level	 l;

	fresh_netns();
	h = open_here();
	for (l = LEVEL_L0; l <= LEVEL_L3; l++) {
		if (l == LEVEL_L2)
			l2_policy(&f);
		else
			fixture_init(&f, l);
		apply_ok(h, &f);
		assert_table(l == LEVEL_L2 ? t_l2 : want[l], "inet", "netguard");
	}
	nft_close(h);
}
END_TEST

START_TEST(test_l1_ignores_resolver_and_l0_has_no_loopback)
{
	struct fixture		 f;
	struct nft_handle	*h;
	char			*got;

	fresh_netns();
	h = open_here();
	fixture_init(&f, LEVEL_L1);
	inet_pton(AF_INET, "10.200.0.1", &f.spec.resolver);
	apply_ok(h, &f);
	assert_table(t_l1, "inet", "netguard");
	fixture_init(&f, LEVEL_L0);
	apply_ok(h, &f);
	ck_assert_ptr_nonnull(got = list_table("inet", "netguard"));
	ck_assert_ptr_null(strstr(got, "if \"lo\""));
	ck_assert_ptr_null(strstr(got, "dport 53 counter"));
	free(got);
	nft_close(h);
}
END_TEST

START_TEST(test_apply_twice_replaces_whole_table)
{
	struct fixture		 f;
	struct nft_handle	*h;

	fresh_netns();
	h = open_here();
	l2_policy(&f);
	apply_ok(h, &f);
	apply_ok(h, &f);
	assert_table(t_l2, "inet", "netguard");
	/* Down to L1: the group sets and rules go with the old table. */
	fixture_init(&f, LEVEL_L1);
	apply_ok(h, &f);
	assert_table(t_l1, "inet", "netguard");
	nft_close(h);
}
END_TEST

/*
 * A kernel refusal in the middle of the batch: every output hook slot is
 * taken (nf_tables allows 1024 per hook), so the new table's chain output
 * cannot register while the old one still holds its slot.
 */
START_TEST(test_failed_apply_keeps_old_table_and_names_the_chain)
{
	struct fixture		 f;
	struct nft_handle	*h;
	char			 err[512], dir[PATH_MAX], path[PATH_MAX];
	char			*before, *after;
	FILE			*fp;
	int			 lo = 0, hi = 1100, mid, i;

	fresh_netns();
	h = open_here();
	fixture_init(&f, LEVEL_L1);
	apply_ok(h, &f);
	ck_assert_ptr_nonnull(before = list_table("inet", "netguard"));

	tu_tmpdir(dir, sizeof(dir));
	tu_path(path, sizeof(path), dir, "filler.nft");
	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		ck_assert_ptr_nonnull(fp = fopen(path, "w"));
		fprintf(fp, "table ip filler {\n");
		for (i = 0; i < mid; i++)
			fprintf(fp, "chain c%d { type filter hook output "
			    "priority 0; }\n", i);
		fprintf(fp, "}\n");
		fclose(fp);
		(void)sh("nft delete table ip filler 2>/dev/null");
		if (sh("nft -f %s 2>/dev/null", path) == 0)
			lo = mid;
		else
			hi = mid;
	}
	ck_assert_int_gt(lo, 0);
	ck_assert_int_lt(lo, 1100);
	/* The last attempt may have been the failing one: fill again. */
	(void)sh("nft delete table ip filler 2>/dev/null");
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	fprintf(fp, "table ip filler {\n");
	for (i = 0; i < lo; i++)
		fprintf(fp, "chain c%d { type filter hook output priority 0; }\n",
		    i);
	fprintf(fp, "}\n");
	fclose(fp);
	ck_assert_int_eq(sh("nft -f %s", path), 0);

	l2_policy(&f);
	ck_assert_int_eq(nft_apply(h, &f.spec, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "chain output") != NULL &&
	    strstr(err, strerror(E2BIG)) != NULL, "err: %s", err);
	ck_assert_ptr_nonnull(after = list_table("inet", "netguard"));
	ck_assert_str_eq(before, after);
	free(after);

	/* With a slot free again the same apply goes through. */
	ck_assert_int_eq(sh("nft delete table ip filler"), 0);
	apply_ok(h, &f);
	assert_table(t_l2, "inet", "netguard");
	free(before);
	nft_close(h);
}
END_TEST

START_TEST(test_bad_spec_refused_before_sending)
{
	struct fixture		 f;
	struct nft_handle	*h;
	char			 err[512];

	fresh_netns();
	h = open_here();
	fixture_init(&f, LEVEL_L1);
	f.spec.pool = cidr("fd00::/64");
	ck_assert_int_eq(nft_apply(h, &f.spec, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "pool"));
	fixture_init(&f, LEVEL_L1);
	f.spec.log_rate = 0;
	ck_assert_int_eq(nft_apply(h, &f.spec, err, sizeof(err)), -1);
	l2_policy(&f);
	f.c[5].prefix = 33;
	ck_assert_int_eq(nft_apply(h, &f.spec, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "group 0"));
	l2_policy(&f);
	f.g[0].nports = POLICY_PORTS_MAX + 1;
	ck_assert_int_eq(nft_apply(h, &f.spec, err, sizeof(err)), -1);
	/* Nothing reached the kernel. */
	ck_assert_int_ne(sh("nft list table inet netguard >/dev/null 2>&1"), 0);
	nft_close(h);
}
END_TEST

START_TEST(test_pin_adds_with_timeout_and_second_pin_refreshes)
{
	struct fixture		 f;
	struct nft_handle	*h;
	struct in_addr		 a4;
	struct in6_addr		 a6;
	json_int_t		 timeout, exp1, exp2;
	char			 err[512];

	fresh_netns();
	h = open_here();
	l2_policy(&f);
	apply_ok(h, &f);
	inet_pton(AF_INET, "198.51.100.20", &a4);
	inet_pton(AF_INET6, "2001:db8:2::20", &a6);
	ck_assert_msg(nft_pin(h, 1, AF_INET, &a4, 30000, err,
	    sizeof(err)) == 0, "nft_pin: %s", err);
	ck_assert_msg(nft_pin(h, 1, AF_INET6, &a6, 60000, err,
	    sizeof(err)) == 0, "nft_pin: %s", err);
	ck_assert(pin_state("n4_1", "198.51.100.20", &timeout, &exp1));
	ck_assert_int_eq(timeout, 30);
	ck_assert(pin_state("n6_1", "2001:db8:2::20", &timeout, &exp1));
	ck_assert_int_eq(timeout, 60);
	ck_assert(!pin_state("n4_1", "198.51.100.21", &timeout, &exp1));

	/* Let the first pin age by a couple of seconds, then refresh it. */
	sleep(3);
	ck_assert(pin_state("n4_1", "198.51.100.20", &timeout, &exp1));
	ck_assert_int_le(exp1, 28);
	ck_assert_msg(nft_pin(h, 1, AF_INET, &a4, 30000, err,
	    sizeof(err)) == 0, "nft_pin: %s", err);
	ck_assert(pin_state("n4_1", "198.51.100.20", &timeout, &exp2));
	ck_assert_int_eq(timeout, 30);
	ck_assert_int_ge(exp2, 29);
	nft_close(h);
}
END_TEST

START_TEST(test_pin_refused_names_group_set_and_element)
{
	struct fixture		 f;
	struct nft_handle	*h;
	struct in_addr		 a4;
	char			 err[512], dir[PATH_MAX], path[PATH_MAX];
	FILE			*fp;
	int			 i;

	fresh_netns();
	h = open_here();
	l2_policy(&f);
	apply_ok(h, &f);
	inet_pton(AF_INET, "198.51.100.20", &a4);
	/* Group 0 has no names, so no name set. */
	ck_assert_int_eq(nft_pin(h, 0, AF_INET, &a4, 30000, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "group 0") && strstr(err, "n4_0"), "err: %s",
	    err);
	ck_assert_int_eq(nft_pin(h, 1, AF_INET, &a4, 0, err, sizeof(err)), -1);
	ck_assert_int_eq(nft_pin(h, 1, AF_UNIX, &a4, 1000, err,
	    sizeof(err)), -1);

	/* A full set: the kernel points at the refused element. */
	tu_tmpdir(dir, sizeof(dir));
	tu_path(path, sizeof(path), dir, "fill.nft");
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	fprintf(fp, "add element inet netguard n4_1 { ");
	for (i = 0; i < NFT_PIN_MAX; i++)
		fprintf(fp, "%s10.%d.%d.%d timeout 1h", i ? ", " : "", i >> 16,
		    (i >> 8) & 255, i & 255);
	fprintf(fp, " }\n");
	fclose(fp);
	ck_assert_int_eq(sh("nft -f %s", path), 0);
	ck_assert_int_eq(nft_pin(h, 1, AF_INET, &a4, 30000, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "n4_1") && strstr(err, "198.51.100.20") &&
	    strstr(err, "set full"), "err: %s", err);
	/* An address already pinned is refreshed even when the set is full. */
	inet_pton(AF_INET, "10.0.1.2", &a4);
	ck_assert_msg(nft_pin(h, 1, AF_INET, &a4, 30000, err,
	    sizeof(err)) == 0, "nft_pin: %s", err);
	nft_close(h);
}
END_TEST

START_TEST(test_remove_deletes_table_and_tolerates_absence)
{
	struct fixture		 f;
	struct nft_handle	*h;
	char			 err[512];

	fresh_netns();
	h = open_here();
	ck_assert_msg(nft_remove(h, err, sizeof(err)) == 0, "%s", err);
	fixture_init(&f, LEVEL_L1);
	apply_ok(h, &f);
	ck_assert_int_eq(sh("nft list table inet netguard >/dev/null"), 0);
	ck_assert_msg(nft_remove(h, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_ne(sh("nft list table inet netguard >/dev/null 2>&1"), 0);
	ck_assert_msg(nft_remove(h, err, sizeof(err)) == 0, "%s", err);
	/* Counters of a table that is not there: an error, not zeros. */
	ck_assert_ptr_null(nft_counters(h, err, sizeof(err)));
	nft_close(h);
}
END_TEST

START_TEST(test_uplink_table_replaced_and_removed)
{
	struct nft_handle	*h;
	struct policy_cidr	 pool = cidr("10.200.0.0/16");
	struct policy_cidr	 bad = cidr("fd00::/64");
	char			 err[512];

	fresh_netns();
	h = open_here();
	ck_assert_msg(nft_uplink_apply(h, &pool, 0, 0, err, sizeof(err)) == 0, "%s",
	    err);
	ck_assert_msg(nft_uplink_apply(h, &pool, 0, 0, err, sizeof(err)) == 0, "%s",
	    err);
	assert_table(t_uplink, "ip", "netguard_nat");
	ck_assert_int_eq(nft_uplink_apply(h, &bad, 0, 0, err, sizeof(err)), -1);
	assert_table(t_uplink, "ip", "netguard_nat");
	ck_assert_msg(nft_uplink_remove(h, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_ne(sh("nft list table ip netguard_nat >/dev/null 2>&1"),
	    0);
	ck_assert_msg(nft_uplink_remove(h, err, sizeof(err)) == 0, "%s", err);
	nft_close(h);
}
END_TEST

/* The handle's own socket: the one NETLINK_NETFILTER socket open here. */
static int
handle_fd(void)
{
	DIR		*d;
	struct dirent	*de;
	socklen_t	 sl;
	int		 fd, proto, found = -1;

	ck_assert_ptr_nonnull(d = opendir("/proc/self/fd"));
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		sl = sizeof(proto);
		if (de->d_name[0] != '.' && fd != dirfd(d) &&
		    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &sl) == 0 &&
		    proto == NETLINK_NETFILTER) {
			sl = sizeof(proto);
			if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &proto,
			    &sl) == 0 && proto == AF_NETLINK)
				found = fd;
		}
	}
	closedir(d);
	ck_assert_int_ne(found, -1);
	return found;
}

/*
 * A batch of thousands of elements: several element messages, a send
 * buffer grown past its default; and with the receive buffer shrunk
 * behind the handle's back the ACKs overflow it, so the handle must grow
 * it and send the (idempotent) batch again.
 */
START_TEST(test_big_batch_and_lost_acks)
{
	struct fixture		 f;
	struct nft_handle	*h;
	struct policy_cidr	*c;
	uint32_t		 v;
	socklen_t		 sl = sizeof(int);
	char			*got;
	int			 fd, small = 1, before, after, i, n = 50000;

	fresh_netns();
	h = open_here();
	fixture_init(&f, LEVEL_L2);
	ck_assert_ptr_nonnull(c = calloc((size_t)n, sizeof(*c)));
	for (i = 0; i < n; i++) {
		c[i].family = AF_INET;
		c[i].prefix = 32;
		v = htonl(0x0a000000u + 2 * (uint32_t)i);
		memcpy(c[i].addr, &v, 4);
	}
	f.g[0].cidrs = c;
	f.g[0].ncidrs = (size_t)n;
	f.p.groups = f.g;
	f.p.ngroups = 1;
	apply_ok(h, &f);
	ck_assert_ptr_nonnull(got = capture("nft list set inet netguard h4_0 "
	    "| tr ',' '\\n' | grep -c '10\\.'"));
	ck_assert_int_eq(atoi(got), n);
	free(got);

	fd = handle_fd();
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small,
	    sizeof(small)), 0);
	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &before, &sl), 0);
	fixture_init(&f, LEVEL_L3);
	apply_ok(h, &f);
	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &after, &sl), 0);
	ck_assert_int_gt(after, before);
	assert_table(t_l3, "inet", "netguard");
	free(c);
	nft_close(h);
}
END_TEST

START_TEST(test_open_in_other_namespace_by_descriptor)
{
	struct fixture		 f;
	struct nft_handle	*h;
	char			 err[512];
	int			 self, other;

	fresh_netns();
	ck_assert_int_ne(self = open("/proc/self/ns/net", O_RDONLY), -1);
	fresh_netns();
	ck_assert_int_ne(other = open("/proc/self/ns/net", O_RDONLY), -1);
	ck_assert_int_eq(setns(self, CLONE_NEWNET), 0);
	/* From here, a handle on the other namespace changes only that one. */
	h = nft_open(other, err, sizeof(err));
	ck_assert_msg(h != NULL, "nft_open: %s", err);
	fixture_init(&f, LEVEL_L1);
	apply_ok(h, &f);
	ck_assert_int_ne(sh("nft list table inet netguard >/dev/null 2>&1"), 0);
	ck_assert_int_eq(setns(other, CLONE_NEWNET), 0);
	assert_table(t_l1, "inet", "netguard");
	/* Not a namespace: refused. */
	ck_assert_ptr_null(nft_open(self == 0 ? 1 : 0, err, sizeof(err)));
	nft_close(h);
	close(self);
	close(other);
}
END_TEST

static Suite *
nft_suite(void)
{
	Suite	*s = suite_create("nft");
	TCase	*tc = tcase_create("core");

	/* The hook-filling and big-batch tests run nft many times. */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_apply_each_level_matches_expected_ruleset);
	tcase_add_test(tc, test_l1_ignores_resolver_and_l0_has_no_loopback);
	tcase_add_test(tc, test_apply_twice_replaces_whole_table);
	tcase_add_test(tc, test_failed_apply_keeps_old_table_and_names_the_chain);
	tcase_add_test(tc, test_bad_spec_refused_before_sending);
	tcase_add_test(tc, test_pin_adds_with_timeout_and_second_pin_refreshes);
	tcase_add_test(tc, test_pin_refused_names_group_set_and_element);
	tcase_add_test(tc, test_remove_deletes_table_and_tolerates_absence);
	tcase_add_test(tc, test_uplink_table_replaced_and_removed);
	tcase_add_test(tc, test_big_batch_and_lost_acks);
	tcase_add_test(tc, test_open_in_other_namespace_by_descriptor);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(nft_suite)
