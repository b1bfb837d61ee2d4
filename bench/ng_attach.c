/*
 * Attach time of an egress policy: nft_open + nft_apply of an L2 policy
 * with N allowlisted /32s (one group, ports 80 and 443) in a fresh network
 * namespace, against `nft -f` of the same ruleset as text in another fresh
 * namespace, interleaved, median of each.  The text is generated from the
 * same policy, and both tables are listed and compared once, so the two
 * sides do the same work.  Namespaces exist only as descriptors: closing
 * them removes them.
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "nft.h"
#include "util.h"

#define RUNS_MAX	1000
#define LIST_MAX	(4 << 20)	/* bytes of `nft list` output */
#define SETTLE_MS	20
#define ADDRESSES_MAX	65535	/* every other address of 198.18.0.0/15 */

/* The addresses netguard always drops (nft.c), in nft's syntax. */
static const char *const meta4[] = {
	"169.254.169.254", "169.254.170.2", "100.100.100.200", "192.0.0.192",
	"168.63.129.16",
};
static const char *const reasons[] = {
	"metadata", "linklocal", "mapped", "dns", "internal", "policy",
};

/* Lets the kernel's workers finish what creating the namespaces left
 * them (sysctl and device registration). */
static void
settle(void)
{
	struct timespec	 ts = { 0, SETTLE_MS * 1000000L };

	nanosleep(&ts, NULL);
}

/* A new network namespace, as a descriptor; this thread stays where it
 * was. */
static int
ns_new(void)
{
	int	 self, fd;

	if ((self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) == -1 ||
	    unshare(CLONE_NEWNET) == -1 ||
	    (fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) == -1 ||
	    setns(self, CLONE_NEWNET) == -1) {
		perror("ng_attach: new namespace");
		exit(1);
	}
	close(self);
	return fd;
}

/* Runs argv inside nsfd with stdout to outfd (-1: /dev/null); its exit
 * status. */
static int
ns_run(int nsfd, char *const argv[], int outfd)
{
	pid_t	 pid;
	int	 st, null;

	if ((pid = fork()) == -1) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		if (setns(nsfd, CLONE_NEWNET) == -1)
			_exit(126);
		null = open("/dev/null", O_WRONLY);
		dup2(outfd != -1 ? outfd : null, STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR) {
			perror("waitpid");
			exit(1);
		}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void
put_cidr(FILE *f, const struct policy_cidr *c)
{
	char	 a[INET6_ADDRSTRLEN];

	inet_ntop(c->family, c->addr, a, sizeof(a));
	fprintf(f, "%s/%u", a, c->prefix);
}

static int
is_host(const struct policy_cidr *c)
{
	return c->prefix == (c->family == AF_INET ? 32 : 128);
}

/* Group gi's CIDRs of one family as nft_apply splits them: single
 * addresses in hash set h<f>_<gi>, prefixes in interval set c<f>_<gi>.
 * has[0], has[1]: whether each was written. */
static void
put_cidr_sets(FILE *f, const struct policy_group *g, size_t gi, int family,
    int has[2])
{
	const char	*sep;
	size_t		 i, n[2] = { 0, 0 };
	int		 k;
	char		 fc = family == AF_INET ? '4' : '6';
	char		 a[INET6_ADDRSTRLEN];

	for (i = 0; i < g->ncidrs; i++)
		if (g->cidrs[i].family == family)
			n[is_host(&g->cidrs[i])]++;
	for (k = 0; k < 2; k++) {
		has[k] = n[k] > 0;
		if (n[k] == 0)
			continue;
		fprintf(f, "\tset %c%c_%zu { type %s; ", k ? 'h' : 'c', fc, gi,
		    family == AF_INET ? "ipv4_addr" : "ipv6_addr");
		if (k)
			fprintf(f, "size %zu; ", n[k]);
		else
			fputs("flags interval; ", f);
		fputs("elements = {", f);
		for (i = 0, sep = " "; i < g->ncidrs; i++) {
			if (g->cidrs[i].family != family ||
			    is_host(&g->cidrs[i]) != k)
				continue;
			fputs(sep, f);
			sep = ", ";
			if (k) {
				inet_ntop(family, g->cidrs[i].addr, a, sizeof(a));
				fputs(a, f);
			} else
				put_cidr(f, &g->cidrs[i]);
		}
		fputs(" } }\n", f);
	}
}

/* 64:ff9b::a.b.c.d in the hexadecimal form nft's parser takes (static
 * buffer). */
static const char *
nat64(const char *v4)
{
	static char	 out[INET6_ADDRSTRLEN];
	uint8_t		 a[16] = { 0x00, 0x64, 0xff, 0x9b };

	inet_pton(AF_INET, v4, a + 12);
	inet_ntop(AF_INET6, a, out, sizeof(out));
	return out;
}

/* ip/ip6 daddr @set [meta l4proto { tcp, udp } th dport @p_i]
 * ct mark set NFT_MARK_GROUP(i) accept */
static void
put_group_rule(FILE *f, const struct policy_group *g, size_t gi, int family,
    char kind)
{
	fprintf(f, "\t\t%s daddr @%c%c_%zu ", family == AF_INET ? "ip" : "ip6",
	    kind, family == AF_INET ? '4' : '6', gi);
	if (g->nports > 0)
		fprintf(f, "meta l4proto { tcp, udp } th dport @p_%zu ", gi);
	fprintf(f, "counter ct mark set 0x%08x accept\n", NFT_MARK_GROUP(gi));
}

/*
 * The ruleset nft_apply builds for spec, as nft text; it replaces any
 * table of that name, as nft_apply does.  The CIDRs must not overlap or
 * touch: nft_apply merges those, this does not.
 */
static void
ruleset_text(FILE *f, const struct nft_sandbox *spec)
{
	const struct policy		*p = spec->policy;
	const struct policy_group	*g;
	char				 res[INET_ADDRSTRLEN];
	size_t				 i, j;
	int				 (*has)[4];

	fputs("table inet netguard {}\ndelete table inet netguard\n"
	    "table inet netguard {\n\tset meta4 { type ipv4_addr; flags "
	    "interval; elements = { ", f);
	for (i = 0; i < nitems(meta4); i++)
		fprintf(f, "%s%s", i ? ", " : "", meta4[i]);
	fputs(" } }\n\tset meta6 { type ipv6_addr; flags interval; "
	    "elements = { fd00:ec2::254, fd20:ce::254", f);
	for (i = 0; i < nitems(meta4); i++)
		fprintf(f, ", ::ffff:%s, %s", meta4[i], nat64(meta4[i]));
	fprintf(f, " } }\n"
	    "\tset ll4 { type ipv4_addr; flags interval; elements = { "
	    "169.254.0.0/16 } }\n"
	    "\tset ll6 { type ipv6_addr; flags interval; elements = { "
	    "fe80::/10, ::ffff:169.254.0.0/112, %s/112 } }\n"
	    "\tset mapped6 { type ipv6_addr; flags interval; elements = { "
	    "::ffff:0:0/96 } }\n", nat64("169.254.0.0"));
	has = xcalloc(p->ngroups ? p->ngroups : 1, sizeof(*has));
	for (i = 0; p->level == LEVEL_L2 && i < p->ngroups; i++) {
		g = &p->groups[i];
		put_cidr_sets(f, g, i, AF_INET, has[i]);
		put_cidr_sets(f, g, i, AF_INET6, has[i] + 2);
		if (g->nnames > 0)
			fprintf(f, "\tset n4_%zu { type ipv4_addr; flags timeout; "
			    "size %d; }\n\tset n6_%zu { type ipv6_addr; flags "
			    "timeout; size %d; }\n", i, NFT_PIN_MAX, i,
			    NFT_PIN_MAX);
		if (g->nports == 0)
			continue;
		fprintf(f, "\tset p_%zu { type inet_service; elements = { ", i);
		for (j = 0; j < g->nports; j++)
			fprintf(f, "%s%u", j ? ", " : "", g->ports[j]);
		fputs(" } }\n", f);
	}
	for (i = 0; i < nitems(reasons); i++)
		fprintf(f, "\tchain deny_%s {\n\t\tlimit rate %u/second burst "
		    "%u packets log prefix \"" NFT_LOG_PREFIX "%s\" group %u "
		    "snaplen %u queue-threshold 1\n"
		    "\t\tcounter drop\n\t}\n", reasons[i], spec->log_rate,
		    spec->log_rate, reasons[i], spec->nflog_group,
		    NFT_LOG_SNAPLEN);
	fputs("\tchain output {\n"
	    "\t\ttype filter hook output priority 0; policy drop;\n"
	    "\t\tct state established,related counter accept\n"
	    "\t\tip daddr @meta4 counter jump deny_metadata\n"
	    "\t\tip6 daddr @meta6 counter jump deny_metadata\n"
	    "\t\tip daddr @ll4 counter jump deny_linklocal\n"
	    "\t\tip6 daddr @ll6 counter jump deny_linklocal\n"
	    "\t\tip6 daddr @mapped6 counter jump deny_mapped\n", f);
	if (p->level >= LEVEL_L2 && spec->resolver.s_addr != 0) {
		inet_ntop(AF_INET, &spec->resolver, res, sizeof(res));
		fprintf(f, "\t\tip daddr %s meta l4proto { tcp, udp } th dport "
		    "53 counter accept\n", res);
	}
	fputs("\t\tmeta l4proto { tcp, udp } th dport { 53, 853 } counter "
	    "jump deny_dns\n\t\tip daddr ", f);
	put_cidr(f, &spec->pool);
	fputs(" counter jump deny_internal\n", f);
	if (p->level >= LEVEL_L1)
		fputs("\t\toif lo counter accept\n", f);
	for (i = 0; p->level == LEVEL_L2 && i < p->ngroups; i++) {
		g = &p->groups[i];
		for (j = 0; j < 4; j++)
			if (has[i][j])
				put_group_rule(f, g, i, j < 2 ? AF_INET :
				    AF_INET6, j % 2 ? 'h' : 'c');
		if (g->nnames > 0) {
			put_group_rule(f, g, i, AF_INET, 'n');
			put_group_rule(f, g, i, AF_INET6, 'n');
		}
	}
	free(has);
	if (p->level == LEVEL_L3)
		fprintf(f, "\t\tcounter ct mark set 0x%08x accept\n",
		    NFT_MARK_L3);
	fputs("\t\tcounter jump deny_policy\n\t}\n"
	    "\tchain input {\n"
	    "\t\ttype filter hook input priority 0; policy drop;\n"
	    "\t\tct state established,related accept\n", f);
	if (p->level >= LEVEL_L1)
		fputs("\t\tiif lo accept\n", f);
	fputs("\t}\n}\n", f);
}

/* `nft list table inet netguard` inside nsfd, NUL-terminated (caller
 * frees). */
static char *
ns_list(int nsfd)
{
	char *const	 argv[] = { "nft", "list", "table", "inet", "netguard",
			    NULL };
	char		*out;
	ssize_t		 n;
	int		 fd;

	if ((fd = memfd_create("nft-list", MFD_CLOEXEC)) == -1) {
		perror("memfd_create");
		exit(1);
	}
	if (ns_run(nsfd, argv, fd) != 0) {
		fprintf(stderr, "ng_attach: nft list failed\n");
		exit(1);
	}
	out = xmalloc(LIST_MAX + 1);
	n = pread(fd, out, LIST_MAX, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	return out;
}

static void
usage(void)
{
	fprintf(stderr, "usage: ng_attach [--addresses N] [--runs N] "
	    "[--print-ruleset]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "addresses",		required_argument,	NULL, 'a' },
		{ "runs",		required_argument,	NULL, 'r' },
		{ "print-ruleset",	no_argument,		NULL, 'p' },
		{ NULL,			0,			NULL, 0 }
	};
	struct policy		 pol;
	struct policy_group	 g;
	struct nft_sandbox	 spec;
	struct nft_handle	*h;
	uint64_t		 naddr = 1000, runs = 20, t0, *tg, *to, *tn;
	char			 err[512], fdpath[64], *a, *b;
	char			*nftargv[] = { "nft", "-f", fdpath, NULL };
	FILE			*f;
	size_t			 i, j;
	int			 ch, print = 0, memfd, *nsg, *nsn;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			if (parse_u64(optarg, 1, ADDRESSES_MAX, &naddr) == -1)
				usage();
			break;
		case 'r':
			if (parse_u64(optarg, 1, RUNS_MAX, &runs) == -1)
				usage();
			break;
		case 'p':
			print = 1;
			break;
		default:
			usage();
		}
	}

	/* One group: naddr /32s from 198.18.0.0/15 (benchmarking space),
	 * every other address so that none are adjacent (nft_apply would
	 * merge those into one range), tcp and udp ports 80 and 443. */
	memset(&pol, 0, sizeof(pol));
	memset(&g, 0, sizeof(g));
	snprintf(pol.name, sizeof(pol.name), "bench");
	pol.level = LEVEL_L2;
	pol.groups = &g;
	pol.ngroups = 1;
	g.ports[0] = 80;
	g.ports[1] = 443;
	g.nports = 2;
	g.cidrs = xcalloc(naddr, sizeof(*g.cidrs));
	g.ncidrs = naddr;
	for (i = 0; i < naddr; i++) {
		uint32_t	 v = htonl(0xc6120000u + 2 + 2 * (uint32_t)i);

		g.cidrs[i].family = AF_INET;
		g.cidrs[i].prefix = 32;
		memcpy(g.cidrs[i].addr, &v, 4);
	}
	memset(&spec, 0, sizeof(spec));
	spec.policy = &pol;
	spec.pool.family = AF_INET;
	spec.pool.prefix = 16;
	inet_pton(AF_INET, "10.200.0.0", spec.pool.addr);
	inet_pton(AF_INET, "10.200.0.1", &spec.resolver);
	spec.nflog_group = 1;
	spec.log_rate = 10;

	if ((memfd = memfd_create("ruleset", MFD_CLOEXEC)) == -1 ||
	    (f = fdopen(memfd, "w")) == NULL) {
		perror("memfd_create");
		return 1;
	}
	ruleset_text(f, &spec);
	fflush(f);
	if (print) {
		f = fdopen(dup(memfd), "r");
		rewind(f);
		while ((ch = getc(f)) != EOF)
			putchar(ch);
		return 0;
	}
	/* nft opens this process's descriptor by path: a new open, which
	 * reads the memfd from the start. */
	snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd/%d", (int)getpid(),
	    memfd);

	tg = xcalloc(runs, sizeof(*tg));
	to = xcalloc(runs, sizeof(*to));
	tn = xcalloc(runs, sizeof(*tn));
	/* All namespaces first: tearing one down is work the kernel does
	 * later, in a worker, and it must not land in a timed section. */
	nsg = xcalloc(runs, sizeof(*nsg));
	nsn = xcalloc(runs, sizeof(*nsn));
	for (i = 0; i < runs; i++) {
		nsg[i] = ns_new();
		nsn[i] = ns_new();
	}
	settle();
	for (i = 0; i < runs; i++) {
		t0 = bench_now_ns();
		if ((h = nft_open(nsg[i], err, sizeof(err))) == NULL) {
			fprintf(stderr, "ng_attach: nft_open: %s\n", err);
			return 1;
		}
		to[i] = bench_now_ns() - t0;
		if (nft_apply(h, &spec, err, sizeof(err)) == -1) {
			fprintf(stderr, "ng_attach: nft_apply: %s\n", err);
			return 1;
		}
		tg[i] = bench_now_ns() - t0;
		nft_close(h);

		t0 = bench_now_ns();
		if (ns_run(nsn[i], nftargv, -1) != 0) {
			fprintf(stderr, "ng_attach: nft -f failed\n");
			return 1;
		}
		tn[i] = bench_now_ns() - t0;
	}
	/* The same table on both sides, or the comparison means nothing. */
	a = ns_list(nsg[0]);
	b = ns_list(nsn[0]);
	if (strcmp(a, b) != 0) {
		for (j = 0; a[j] == b[j]; j++)
			;
		while (j > 0 && a[j - 1] != '\n')
			j--;
		fprintf(stderr, "ng_attach: the tables differ from here:\n"
		    "--- netguard\n%.300s\n--- nft -f\n%.300s\n", a + j, b + j);
		return 1;
	}
	for (i = 0; i < runs; i++) {
		close(nsg[i]);
		close(nsn[i]);
	}
	printf("addresses %llu runs %llu netguard_ns %llu open_ns %llu "
	    "nft_ns %llu identical 1\n", (unsigned long long)naddr,
	    (unsigned long long)runs, (unsigned long long)stats_median(tg, runs),
	    (unsigned long long)stats_median(to, runs),
	    (unsigned long long)stats_median(tn, runs));
	return 0;
}
