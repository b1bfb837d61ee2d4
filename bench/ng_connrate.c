/*
 * New-connection rate through an L2 policy whose group holds N addresses,
 * N = 10 against N = 10,000 in the same run: set lookups must cost the
 * same.  A closed topology of two fresh namespaces joined by a veth
 * (192.0.2.1 and 192.0.2.2, documentation addresses), a TCP listener in
 * one, the policy and a blocking C client in the other; nothing is linked
 * to the host's namespace, and closing the descriptors removes it all.
 */
#include <sys/socket.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "log.h"
#include "netns.h"
#include "nft.h"
#include "util.h"

#define CLIENT_ADDR	"192.0.2.1"
#define SERVER_ADDR	"192.0.2.2"
#define SERVER_PORT	8080
#define WARMUP_CONNS	2000
#define ROUNDS_MAX	100
#define SIZES		2

static const unsigned	 sizes[SIZES] = { 10, 10000 };

struct client {
	unsigned	 conns;
	unsigned	 failed;
	int		 err;
};

static int
ns_new(void)
{
	int	 self, fd;

	if ((self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) == -1 ||
	    unshare(CLONE_NEWNET) == -1 ||
	    (fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) == -1 ||
	    setns(self, CLONE_NEWNET) == -1)
		fatal("new namespace");
	close(self);
	return fd;
}

/* `ip` with the given arguments inside nsfd; fatal unless it succeeds. */
static void
ip(int nsfd, const char *args)
{
	char	 cmd[512];
	pid_t	 pid;
	int	 st;

	if (xsnprintf(cmd, sizeof(cmd), "exec ip %s", args) == -1)
		fatalx("ip: arguments too long");
	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid == 0) {
		if (setns(nsfd, CLONE_NEWNET) == -1)
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) == -1 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		fatalx("ip %s: failed", args);
}

/* Client and server each on a CPU of their own, when there are two:
 * fewer migrations, steadier figures. */
static void
pin(int cpu)
{
	cpu_set_t	 set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

static void *
server(void *arg)
{
	int	 lfd = *(int *)arg, fd;

	pin(1);
	/* Accept and close: the client measures the handshake. */
	for (;;) {
		if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) != -1)
			close(fd);
		else if (errno != EINTR && errno != ECONNABORTED)
			break;
	}
	return NULL;
}

/* Runs on a thread inside the sandbox namespace. */
static int
client(void *arg)
{
	struct client		*c = arg;
	struct sockaddr_in	 sin;
	struct linger		 lg = { 1, 0 };
	unsigned		 i;
	int			 fd;

	pin(0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(SERVER_PORT);
	inet_pton(AF_INET, SERVER_ADDR, &sin.sin_addr);
	for (i = 0; i < c->conns; i++) {
		if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
			c->err = errno;
			return -1;
		}
		/* Reset on close: no TIME_WAIT, so ports never run out. */
		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
			c->failed++;
			c->err = errno;
		}
		close(fd);
	}
	return 0;
}

/*
 * The policy: one group with n entries on tcp/udp 8080, the server's
 * address among them.  hosts: /32s (hash set h4_0); otherwise /24s
 * (interval set c4_0).
 */
static void
policy_make(struct policy *p, struct policy_group *g, unsigned n, int hosts)
{
	uint32_t	 v;
	unsigned	 i;

	free(g->cidrs);
	memset(p, 0, sizeof(*p));
	memset(g, 0, sizeof(*g));
	snprintf(p->name, sizeof(p->name), "connrate");
	p->level = LEVEL_L2;
	p->groups = g;
	p->ngroups = 1;
	g->ports[0] = SERVER_PORT;
	g->nports = 1;
	g->cidrs = xcalloc(n, sizeof(*g->cidrs));
	g->ncidrs = n;
	for (i = 0; i < n; i++) {
		g->cidrs[i].family = AF_INET;
		g->cidrs[i].prefix = hosts ? 32 : 24;
		if (i == n / 2)
			inet_pton(AF_INET, hosts ? SERVER_ADDR : "192.0.2.0", &v);
		else if (hosts)		/* 198.18.0.0/15, never adjacent */
			v = htonl(0xc6120000u + 2 + 2 * i);
		else			/* 10.0.0.0/9, never adjacent */
			v = htonl(0x0a000000u + (2 * i << 8));
		memcpy(g->cidrs[i].addr, &v, 4);
	}
}

/* Connections per second for c->conns connects under the current table. */
static uint64_t
measure(struct nft_handle *h, int nsfd, struct client *c)
{
	struct timespec	 settle = { 0, 20 * 1000000L };
	char		 err[512];
	uint64_t	 t0, dt;

	/* Every round starts with an empty conntrack table, and after the
	 * kernel's worker has freed the table the last apply replaced. */
	if (nft_conntrack_flush(h, err, sizeof(err)) == -1)
		fatalx("conntrack flush: %s", err);
	nanosleep(&settle, NULL);
	c->failed = 0;
	t0 = bench_now_ns();
	if (netns_call(nsfd, client, c) == -1)
		fatalx("client: %s", strerror(c->err));
	dt = bench_now_ns() - t0;
	if (c->failed > 0)
		fatalx("client: %u of %u connects failed (last: %s)",
		    c->failed, c->conns, strerror(c->err));
	return (uint64_t)c->conns * 1000000000 / dt;
}

static void
usage(void)
{
	fprintf(stderr, "usage: ng_connrate [--connections N] [--rounds N]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "connections",	required_argument,	NULL, 'c' },
		{ "rounds",		required_argument,	NULL, 'r' },
		{ NULL,			0,			NULL, 0 }
	};
	static const char *const modes[2] = { "networks", "hosts" };
	struct policy		 pol;
	struct policy_group	 g;
	struct nft_sandbox	 spec;
	struct nft_handle	*h;
	struct client		 c;
	struct sockaddr_in	 sin;
	pthread_t		 srv;
	uint64_t		 conns = 3000, rounds = 31;
	uint64_t		 rate[2][SIZES][ROUNDS_MAX], base[ROUNDS_MAX];
	uint64_t		 med[2][SIZES], ratio[ROUNDS_MAX];
	char			 err[512], args[256];
	unsigned		 r, k, m;
	int			 ch, nsa, nsb, lfd, on = 1;

	log_init("ng_connrate", 1, 0);
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			if (parse_u64(optarg, 1, 1000000, &conns) == -1)
				usage();
			break;
		case 'r':
			if (parse_u64(optarg, 1, ROUNDS_MAX, &rounds) == -1)
				usage();
			break;
		default:
			usage();
		}
	}

	/* a: the sandbox (client, policy); b: the far end (server). */
	nsa = ns_new();
	nsb = ns_new();
	if (xsnprintf(args, sizeof(args), "link add ngb0 type veth peer name "
	    "ngb1 netns /proc/%d/fd/%d", (int)getpid(), nsb) == -1)
		fatalx("args");
	ip(nsa, args);
	ip(nsa, "addr add " CLIENT_ADDR "/24 dev ngb0");
	ip(nsa, "link set ngb0 up");
	ip(nsa, "link set lo up");
	ip(nsb, "addr add " SERVER_ADDR "/24 dev ngb1");
	ip(nsb, "link set ngb1 up");
	ip(nsb, "link set lo up");

	if ((lfd = netns_socket(nsb, AF_INET, SOCK_STREAM, 0)) == -1)
		fatal("server socket");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(SERVER_PORT);
	inet_pton(AF_INET, SERVER_ADDR, &sin.sin_addr);
	(void)setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(lfd, 4096) == -1)
		fatal("server bind/listen");
	if ((errno = pthread_create(&srv, NULL, server, &lfd)) != 0)
		fatal("pthread_create");

	if ((h = nft_open(nsa, err, sizeof(err))) == NULL)
		fatalx("nft_open: %s", err);
	memset(&spec, 0, sizeof(spec));
	memset(&g, 0, sizeof(g));
	spec.policy = &pol;
	spec.pool.family = AF_INET;
	spec.pool.prefix = 16;
	inet_pton(AF_INET, "10.200.0.0", spec.pool.addr);
	spec.nflog_group = 1;
	spec.log_rate = 10;
	c.conns = (unsigned)conns;

	/* Warm up: neighbour entries, the listener's queue, the caches. */
	c.conns = WARMUP_CONNS;
	(void)measure(h, nsa, &c);
	c.conns = (unsigned)conns;
	/* Interleaved: no table, then each mode and size in turn. */
	for (r = 0; r < rounds; r++) {
		if (nft_remove(h, err, sizeof(err)) == -1)
			fatalx("nft_remove: %s", err);
		base[r] = measure(h, nsa, &c);
		for (m = 0; m < 2; m++)
			for (k = 0; k < SIZES; k++) {
				policy_make(&pol, &g, sizes[k], m);
				if (nft_apply(h, &spec, err, sizeof(err)) == -1)
					fatalx("nft_apply: %s", err);
				rate[m][k][r] = measure(h, nsa, &c);
			}
	}
	printf("connections %llu rounds %llu no_table %llu\n",
	    (unsigned long long)conns, (unsigned long long)rounds,
	    (unsigned long long)stats_median(base, rounds));
	for (m = 0; m < 2; m++) {
		for (k = 0; k < SIZES; k++)
			med[m][k] = stats_median(rate[m][k], rounds);
		/* Each round's two sizes ran back to back: the median of
		 * their ratios cancels the machine's slower drifts. */
		for (r = 0; r < rounds; r++)
			ratio[r] = rate[m][1][r] * 1000000 / rate[m][0][r];
		printf("mode %s", modes[m]);
		for (k = 0; k < SIZES; k++)
			printf(" n%u %llu", sizes[k],
			    (unsigned long long)med[m][k]);
		printf(" paired_ratio %.4f\n",
		    (double)stats_median(ratio, rounds) / 1e6);
	}

	/* Tear down: the listener first, so the server thread ends. */
	shutdown(lfd, SHUT_RDWR);
	pthread_join(srv, NULL);
	close(lfd);
	nft_close(h);
	free(g.cidrs);
	close(nsa);
	close(nsb);
	return 0;
}
