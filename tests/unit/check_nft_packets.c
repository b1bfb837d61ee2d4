/*
 * netguard/nft.c against the kernel, with real packets: what each level
 * drops and counts, what L2 lets through, and the conntrack flush.
 */
#include "nft_fixture.h"

/* ---------------------------------------------------------------- helpers */

/*
 * A veth pair inside the test's namespace, both ends here: a route for
 * the addresses the tests send to, and packets that never leave.  No
 * IPv6 on the pair: its own router and neighbour solicitations and MLD
 * reports would be counted as denials and make the counts race.  The
 * IPv6 destination is routed through loopback instead (the output hook
 * sees the packet all the same).
 */
static void
links_up(void)
{
	ck_assert_int_eq(sh("ip link add ngt0 type veth peer name ngt1 && "
	    "sysctl -qw net.ipv6.conf.ngt0.disable_ipv6=1 "
	    "net.ipv6.conf.ngt1.disable_ipv6=1 && "
	    "ip addr add 192.0.2.1/24 dev ngt0 && "
	    "ip addr add 169.254.0.1/16 dev ngt0 && "
	    "ip link set ngt0 up && ip link set ngt1 up && "
	    "ip link set lo up && ip route add default dev ngt0 && "
	    "ip -6 route add fd00:ec2::/64 dev lo"), 0);
}

/* One UDP datagram: 0, or the errno sendto failed with. */
static int
udp_send(const char *addr, uint16_t port)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 sl;
	int			 fd, rc = 0;

	memset(&ss, 0, sizeof(ss));
	if (strchr(addr, ':') != NULL) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		ck_assert_int_eq(inet_pton(AF_INET6, addr, &sin6->sin6_addr), 1);
		sl = sizeof(*sin6);
	} else {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		ck_assert_int_eq(inet_pton(AF_INET, addr, &sin->sin_addr), 1);
		sl = sizeof(*sin);
	}
	ck_assert_int_ne(fd = socket(ss.ss_family, SOCK_DGRAM, 0), -1);
	if (sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, sl) == -1)
		rc = errno;
	close(fd);
	return rc;
}

static json_int_t
counter(struct nft_handle *h, const char *reason)
{
	char		 err[512];
	json_t		*o;
	json_int_t	 n;

	o = nft_counters(h, err, sizeof(err));
	ck_assert_msg(o != NULL, "nft_counters: %s", err);
	ck_assert_int_eq(json_object_size(o), 6);
	ck_assert_ptr_nonnull(json_object_get(o, reason));
	n = json_integer_value(json_object_get(o, reason));
	json_decref(o);
	return n;
}

/* ---------------------------------------------------------------- tests */

/* Real packets at L1: each reason's counter goes up by what it dropped,
 * loopback works, and a TCP connect to the metadata address never does. */
START_TEST(test_l1_drops_packets_and_counts_them)
{
	struct fixture		 f;
	struct nft_handle	*h;
	struct sockaddr_in	 sin;
	struct pollfd		 pfd;
	int			 fd;

	fresh_netns();
	links_up();
	h = open_here();
	fixture_init(&f, LEVEL_L1);
	apply_ok(h, &f);
	ck_assert_int_eq(counter(h, "metadata"), 0);

	ck_assert_int_eq(udp_send("169.254.169.254", 80), EPERM);
	ck_assert_int_eq(udp_send("fd00:ec2::254", 80), EPERM);
	ck_assert_int_eq(counter(h, "metadata"), 2);
	ck_assert_int_eq(udp_send("169.254.1.1", 80), EPERM);
	ck_assert_int_eq(counter(h, "linklocal"), 1);
	ck_assert_int_eq(udp_send("192.0.2.10", 53), EPERM);
	ck_assert_int_eq(udp_send("192.0.2.10", 853), EPERM);
	ck_assert_int_eq(counter(h, "dns"), 2);
	ck_assert_int_eq(udp_send("10.200.3.4", 80), EPERM);
	ck_assert_int_eq(counter(h, "internal"), 1);
	ck_assert_int_eq(udp_send("192.0.2.10", 80), EPERM);
	ck_assert_int_eq(counter(h, "policy"), 1);
	ck_assert_int_eq(counter(h, "mapped"), 0);
	ck_assert_int_eq(udp_send("127.0.0.1", 9), 0);

	/* The SYN is dropped: connect stays in progress, counted once more. */
	ck_assert_int_ne(fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0),
	    -1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(80);
	inet_pton(AF_INET, "169.254.169.254", &sin.sin_addr);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), -1);
	ck_assert_int_eq(errno, EINPROGRESS);
	pfd.fd = fd;
	pfd.events = POLLOUT;
	ck_assert_int_eq(poll(&pfd, 1, 300), 0);
	close(fd);
	ck_assert_int_eq(counter(h, "metadata"), 3);
	nft_close(h);
}
END_TEST

/* Real packets at L2: only listed destinations and ports, and pinned
 * names once pinned. */
START_TEST(test_l2_allows_listed_and_pinned_only)
{
	struct fixture		 f;
	struct nft_handle	*h;
	struct in_addr		 a4;
	char			 err[512];

	fresh_netns();
	links_up();
	h = open_here();
	l2_policy(&f);
	apply_ok(h, &f);
	ck_assert_int_eq(udp_send("192.0.2.10", 80), 0);
	ck_assert_int_eq(udp_send("192.0.2.11", 443), 0);
	ck_assert_int_eq(udp_send("198.51.100.7", 443), 0);
	ck_assert_int_eq(udp_send("10.0.1.200", 80), 0);
	ck_assert_int_eq(udp_send("203.0.113.9", 12345), 0);
	ck_assert_int_eq(udp_send("192.0.2.10", 81), EPERM);
	ck_assert_int_eq(udp_send("192.0.2.12", 80), EPERM);
	ck_assert_int_eq(udp_send("10.0.2.1", 80), EPERM);
	ck_assert_int_eq(counter(h, "policy"), 3);
	/* The resolver, on 53 only; other pool addresses never. */
	ck_assert_int_eq(sh("ip addr add 10.200.0.2/16 dev ngt0"), 0);
	ck_assert_int_eq(udp_send("10.200.0.1", 53), 0);
	ck_assert_int_eq(udp_send("10.200.0.1", 80), EPERM);
	ck_assert_int_eq(udp_send("10.200.0.3", 53), EPERM);
	ck_assert_int_eq(counter(h, "internal"), 1);
	ck_assert_int_eq(counter(h, "dns"), 1);

	ck_assert_int_eq(udp_send("192.0.2.20", 443), EPERM);
	inet_pton(AF_INET, "192.0.2.20", &a4);
	ck_assert_msg(nft_pin(h, 1, AF_INET, &a4, 30000, err,
	    sizeof(err)) == 0, "nft_pin: %s", err);
	ck_assert_int_eq(udp_send("192.0.2.20", 443), 0);
	ck_assert_int_eq(udp_send("192.0.2.20", 80), EPERM);
	nft_close(h);
}
END_TEST

START_TEST(test_conntrack_flush_forgets_connections)
{
	struct fixture		 f;
	struct nft_handle	*h;
	char			 err[512], *n;

	fresh_netns();
	links_up();
	h = open_here();
	ck_assert_msg(nft_conntrack_flush(h, err, sizeof(err)) == 0, "%s", err);
	fixture_init(&f, LEVEL_L1);
	apply_ok(h, &f);
	ck_assert_int_eq(udp_send("127.0.0.1", 9), 0);
	ck_assert_int_eq(udp_send("::1", 9), 0);
	n = capture("cat /proc/sys/net/netfilter/nf_conntrack_count");
	ck_assert_ptr_nonnull(n);
	ck_assert_int_ge(atoi(n), 2);
	free(n);
	ck_assert_msg(nft_conntrack_flush(h, err, sizeof(err)) == 0, "%s", err);
	n = capture("cat /proc/sys/net/netfilter/nf_conntrack_count");
	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(atoi(n), 0);
	free(n);
	nft_close(h);
}
END_TEST

static Suite *
nft_packets_suite(void)
{
	Suite	*s = suite_create("nft_packets");
	TCase	*tc = tcase_create("packets");

	/* The same limit as check_nft.c: the tests run nft many times. */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_l1_drops_packets_and_counts_them);
	tcase_add_test(tc, test_l2_allows_listed_and_pinned_only);
	tcase_add_test(tc, test_conntrack_flush_forgets_connections);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(nft_packets_suite)
