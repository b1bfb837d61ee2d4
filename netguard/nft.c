/*
 * netguard's rulesets (the API of nft.h): a sandbox's table inet netguard,
 * DNS pins, the uplink's table ip netguard_nat, conntrack flush, counters.
 * Trusts policy.c's validation but re-checks what would make a message wrong.
 */
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "log.h"
#include "nft_int.h"
#include "util.h"

/* Cloud metadata services: AWS/GCP/Azure IMDS, ECS, Alibaba, Oracle NAT64
 * base addresses and Azure's wireserver. */
static const char *const nft_meta4[] = {
	"169.254.169.254", "169.254.170.2", "100.100.100.200",
	"192.0.0.192", "168.63.129.16",
};
static const char *const nft_meta6[] = { "fd00:ec2::254", "fd20:ce::254" };

/* Deny chains, in counter order; prefix "ng:<reason>". */
static const char *const nft_reasons[] = {
	"metadata", "linklocal", "mapped", "dns", "internal", "policy",
};
enum { DENY_METADATA, DENY_LINKLOCAL, DENY_MAPPED, DENY_DNS, DENY_INTERNAL,
	DENY_POLICY, DENY_MAX };

/* The address pool, for the sandbox's table and the uplink's alike. */
static int
nft_pool_check(const struct policy_cidr *pool, char *err, size_t errlen)
{
	if (pool->family != AF_INET || pool->prefix == 0 ||
	    pool->prefix > 32) {
		(void)snprintf(err, errlen, "pool: IPv4, prefix 1..32 only");
		return -1;
	}
	return 0;
}

/* "deny_<reason>" */
static void
nft_deny_chain(char *chain, size_t len, int deny)
{
	(void)snprintf(chain, len, "deny_%s", nft_reasons[deny]);
}

/* ------------------------------------------------------------ sandbox */

static int
nft_cidr_ok(const struct policy_cidr *c)
{
	return (c->family == AF_INET && c->prefix <= 32) ||
	    (c->family == AF_INET6 && c->prefix <= 128);
}

static int
nft_spec_check(const struct nft_sandbox *spec, char *err, size_t errlen)
{
	const struct policy		*p = spec->policy;
	const struct policy_group	*g;
	size_t				 i, j;

	if (p == NULL || p->level < LEVEL_L0 || p->level > LEVEL_L3) {
		(void)snprintf(err, errlen, "no policy or bad level");
		return -1;
	}
	if (nft_pool_check(&spec->pool, err, errlen) == -1)
		return -1;
	if (spec->nflog_group > UINT16_MAX || spec->log_rate == 0) {
		(void)snprintf(err, errlen, "nflog group over 65535 or log "
		    "rate 0");
		return -1;
	}
	if (p->level != LEVEL_L2)
		return 0;
	if (p->ngroups > POLICY_GROUPS_MAX) {
		(void)snprintf(err, errlen, "policy %s: %zu groups (at most "
		    "%d)", p->name, p->ngroups, POLICY_GROUPS_MAX);
		return -1;
	}
	for (i = 0; i < p->ngroups; i++) {
		g = &p->groups[i];
		if (g->nports > POLICY_PORTS_MAX) {
			(void)snprintf(err, errlen, "policy %s: group %zu: %u "
			    "ports", p->name, i, g->nports);
			return -1;
		}
		for (j = 0; j < g->ncidrs; j++)
			if (!nft_cidr_ok(&g->cidrs[j])) {
				(void)snprintf(err, errlen, "policy %s: group "
				    "%zu: CIDR %zu: bad family or prefix",
				    p->name, i, j);
				return -1;
			}
	}
	return 0;
}

static void
nft_ranges_parse(struct nft_range *r, int family, const char *text,
    unsigned prefix)
{
	struct policy_cidr	 c = { .family = family, .prefix = prefix };

	if (inet_pton(family, text, c.addr) != 1)
		fatalx("%s: %s is no address", __func__, text);
	nft_range_from_cidr(r, &c);
}

/* meta4/meta6, ll4/ll6, mapped6: the destinations dropped at every level. */
static void
nft_sets_fixed(struct nft_handle *h)
{
	static const uint8_t	 mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t	 nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	struct nft_range	 r[nitems(nft_meta4) * 3 + nitems(nft_meta6)];
	size_t			 i, n;

	for (i = 0; i < nitems(nft_meta4); i++)
		nft_ranges_parse(&r[i], AF_INET, nft_meta4[i], 32);
	nft_set_ranges(h, "meta4", AF_INET, r, nitems(nft_meta4), "metadata");
	/* The same services through IPv4-mapped and NAT64 addresses. */
	for (i = n = 0; i < nitems(nft_meta4); i++) {
		nft_ranges_parse(&r[n], AF_INET, nft_meta4[i], 32);
		memmove(r[n].lo + 12, r[n].lo, 4);
		memcpy(r[n].lo, mapped, 12);
		memcpy(r[n].hi, r[n].lo, 16);
		r[n + 1] = r[n];
		memcpy(r[n + 1].lo, nat64, 12);
		memcpy(r[n + 1].hi, r[n + 1].lo, 16);
		n += 2;
	}
	for (i = 0; i < nitems(nft_meta6); i++)
		nft_ranges_parse(&r[n++], AF_INET6, nft_meta6[i], 128);
	nft_set_ranges(h, "meta6", AF_INET6, r, n, "metadata");

	nft_ranges_parse(&r[0], AF_INET, "169.254.0.0", 16);
	nft_set_ranges(h, "ll4", AF_INET, r, 1, "link-local");
	nft_ranges_parse(&r[0], AF_INET6, "fe80::", 10);
	nft_ranges_parse(&r[1], AF_INET6, "::ffff:169.254.0.0", 112);
	nft_ranges_parse(&r[2], AF_INET6, "64:ff9b::169.254.0.0", 112);
	nft_set_ranges(h, "ll6", AF_INET6, r, 3, "link-local");
	/* IPv4-mapped addresses never belong on the wire. */
	nft_ranges_parse(&r[0], AF_INET6, "::ffff:0:0", 96);
	nft_set_ranges(h, "mapped6", AF_INET6, r, 1, "mapped");
}

/*
 * A group's addresses of one family: single addresses in hash set
 * h<f>_<i> (one element each, and the kernel inserts into a hash in a
 * third of the time it takes an interval tree), the rest, merged, in
 * interval set c<f>_<i>.  Which sets were made goes to has[].
 */
static void
nft_sets_cidrs(struct nft_handle *h, const struct policy_group *g, size_t gi,
    int family, int has[2])
{
	struct nft_range	*r;
	uint8_t			*hosts;
	size_t			 i, k, n, nh, alen = nft_addr_len(family);
	char			 name[32], what[32];
	char			 f = family == AF_INET ? '4' : '6';

	has[0] = has[1] = 0;
	/* r[0..n): the ranges; hosts, after them: the single addresses as
	 * keys, alen bytes each (a range holds two). */
	r = xcalloc(g->ncidrs ? 2 * g->ncidrs : 1, sizeof(*r));
	hosts = (uint8_t *)(r + g->ncidrs);
	for (i = n = 0; i < g->ncidrs; i++)
		if (g->cidrs[i].family == family)
			nft_range_from_cidr(&r[n++], &g->cidrs[i]);
	n = nft_ranges_merge(r, n, alen);
	for (i = k = nh = 0; i < n; i++) {
		if (nft_addr_cmp(r[i].lo, r[i].hi, alen) == 0)
			memcpy(hosts + alen * nh++, r[i].lo, alen);
		else
			r[k++] = r[i];
	}
	n = k;
	(void)snprintf(what, sizeof(what), "group %zu", gi);
	if (n > 0) {
		(void)snprintf(name, sizeof(name), "c%c_%zu", f, gi);
		nft_set_ranges(h, name, family, r, n, what);
		has[0] = 1;
	}
	if (nh > 0) {
		(void)snprintf(name, sizeof(name), "h%c_%zu", f, gi);
		(void)nft_set_keys(h, name, family == AF_INET ?
		    NFT_TYPE_IPADDR : NFT_TYPE_IP6ADDR, alen, (uint32_t)nh,
		    hosts, nh, what);
		has[1] = 1;
	}
	free(r);
}

/* One allow group's sets: c/h (CIDRs), n4_i/n6_i (pins), p_i (ports). */
static void
nft_sets_group(struct nft_handle *h, const struct policy_group *g, size_t gi,
    int has[4])
{
	uint16_t		 ports[POLICY_PORTS_MAX];
	char			 name[32], what[32];
	size_t			 i, k, n;

	nft_sets_cidrs(h, g, gi, AF_INET, has);
	nft_sets_cidrs(h, g, gi, AF_INET6, has + 2);
	(void)snprintf(what, sizeof(what), "group %zu", gi);
	for (k = 0; k < 2 && g->nnames > 0; k++) {
		(void)snprintf(name, sizeof(name), "n%c_%zu", k ? '6' : '4',
		    gi);
		(void)nft_set(h, name, NFT_SET_TIMEOUT, k ? NFT_TYPE_IP6ADDR :
		    NFT_TYPE_IPADDR, k ? 16 : 4, NFT_PIN_MAX, what);
	}
	if (g->nports == 0)
		return;
	/* One element per port, however often the policy lists it. */
	for (i = n = 0; i < g->nports; i++) {
		for (k = 0; k < n && ports[k] != htons(g->ports[i]); k++)
			;
		if (k == n)
			ports[n++] = htons(g->ports[i]);
	}
	(void)snprintf(name, sizeof(name), "p_%zu", gi);
	(void)nft_set_keys(h, name, NFT_TYPE_INET_SERVICE, 2, 0, ports, n,
	    what);
}

/* ip/ip6 daddr @set [meta l4proto { tcp, udp } th dport @p_i]
 * ct mark set NFT_MARK_GROUP(i) accept */
static void
nft_rule_group(struct nft_handle *h, const struct policy_group *g, size_t gi,
    int family, char kind)
{
	struct nftnl_rule	*r;
	char			 set[32], ports[32], what[64];

	(void)snprintf(set, sizeof(set), "%c%c_%zu", kind,
	    family == AF_INET ? '4' : '6', gi);
	(void)snprintf(what, sizeof(what), "group %zu: allow @%s", gi, set);
	r = nft_rule_new(h, "output");
	nft_r_daddr_in(r, family, set);
	if (g->nports > 0) {
		(void)snprintf(ports, sizeof(ports), "p_%zu", gi);
		nft_r_tcp_udp(h, r, what);
		nft_r_dport(r);
		nft_r_lookup(r, ports, 0);
	}
	/* Only a connection's first packet gets here (established ones
	 * were accepted above): the mark names the rule for its life. */
	nft_r_counter(r);
	nft_r_ct_mark_set(r, NFT_MARK_GROUP(gi));
	nft_r_verdict(r, NF_ACCEPT, NULL);
	nft_rule_add(h, r, what);
}

/* Ends a rule of chain output: counter, then accept or a jump to the
 * deny chain of reason deny (>= 0). */
static void
nft_rule_out(struct nft_handle *h, struct nftnl_rule *r, int deny,
    const char *what)
{
	char	 chain[16];

	if (deny >= 0) {
		nft_deny_chain(chain, sizeof(chain), deny);
		nft_rule_end(h, r, NFT_JUMP, chain, what);
	} else
		nft_rule_end(h, r, NF_ACCEPT, NULL, what);
}

/* deny_<reason>: a rate-limited log whose prefix names the reason (the
 * drop itself is never limited), then counter drop. */
static void
nft_chains_deny(struct nft_handle *h, const struct nft_sandbox *spec)
{
	struct nftnl_rule	*r;
	struct nftnl_expr	*e;
	char			 chain[16], prefix[32];
	int			 d;

	for (d = 0; d < DENY_MAX; d++) {
		nft_deny_chain(chain, sizeof(chain), d);
		(void)snprintf(prefix, sizeof(prefix), NFT_LOG_PREFIX "%s",
		    nft_reasons[d]);
		nft_chain(h, chain, NULL, 0, 0, 0);
		r = nft_rule_new(h, chain);
		e = nft_expr(r, "limit");
		nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, spec->log_rate);
		nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);	/* s */
		nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_BURST, spec->log_rate);
		nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
		e = nft_expr(r, "log");
		nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP,
		    (uint16_t)spec->nflog_group);
		nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix);
		/* Headers only, sent at once: a denial reaches the audit
		 * trail without the kernel's one-second batching, and a
		 * batch stays far below the reader's buffer (nflog.c). */
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_SNAPLEN, NFT_LOG_SNAPLEN);
		nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_QTHRESHOLD, 1);
		nft_rule_add(h, r, "log");
		nft_rule_end(h, nft_rule_new(h, chain), NF_DROP, NULL, "drop");
	}
}

/*
 * The egress proxy's destinations: their connections, turned to the
 * proxy by chain nat_out, are accepted there; any other packet to them
 * on that port (UDP such as QUIC, IPv6, which the proxy does not take)
 * is denied before the group's own rule could accept it.
 */
static void
nft_rules_redirect(struct nft_handle *h, const struct nft_sandbox *spec)
{
	struct nftnl_rule	*r;
	struct policy_cidr	 gw = { .family = AF_INET, .prefix = 32 };
	char			 set[32], what[64];
	size_t			 i;
	int			 fam;

	if (spec->nredirects == 0 || spec->resolver.s_addr == 0)
		return;
	memcpy(gw.addr, &spec->resolver, 4);
	for (i = 0; i < spec->nredirects; i++) {
		const struct nft_redirect	*rd = &spec->redirects[i];

		(void)snprintf(what, sizeof(what), "proxy %u", rd->to_port);
		r = nft_rule_new(h, "output");
		nft_r_addr(r, &gw, 1, NFT_CMP_EQ);
		nft_r_tcp_dport(r, rd->to_port);
		nft_r_ct_mark_set(r, NFT_MARK_GROUP(rd->group));
		nft_rule_out(h, r, -1, what);
		for (fam = 0; fam < 2; fam++) {
			(void)snprintf(set, sizeof(set), "n%c_%zu",
			    fam ? '6' : '4', rd->group);
			(void)snprintf(what, sizeof(what), "past the proxy @%s",
			    set);
			r = nft_rule_new(h, "output");
			nft_r_daddr_in(r, fam ? AF_INET6 : AF_INET, set);
			nft_r_tcp_udp(h, r, what);
			nft_r_dport_eq(r, rd->port);
			nft_rule_out(h, r, DENY_POLICY, what);
		}
	}
	nft_chain(h, "nat_out", "nat", NF_INET_LOCAL_OUT, NFT_NAT_PRIO,
	    NF_ACCEPT);
	for (i = 0; i < spec->nredirects; i++) {
		const struct nft_redirect	*rd = &spec->redirects[i];

		(void)snprintf(set, sizeof(set), "n4_%zu", rd->group);
		(void)snprintf(what, sizeof(what), "to the proxy @%s", set);
		r = nft_rule_new(h, "nat_out");
		nft_r_daddr_in(r, AF_INET, set);
		nft_r_tcp_dport(r, rd->port);
		nft_r_dnat4(r, &spec->resolver, rd->to_port);
		nft_rule_add(h, r, what);
	}
}

/* Chain output's rules, in order; has[i]: group i's c4, h4, c6, h6. */
static void
nft_rules_output(struct nft_handle *h, const struct nft_sandbox *spec,
    int (*has)[4])
{
	/* Metadata before link-local: 169.254.169.254 is both, and the log
	 * should say which. */
	static const struct {
		int		 family;
		const char	*set;
		int		 deny;
	} always[] = {
		{ AF_INET, "meta4", DENY_METADATA },
		{ AF_INET6, "meta6", DENY_METADATA },
		{ AF_INET, "ll4", DENY_LINKLOCAL },
		{ AF_INET6, "ll6", DENY_LINKLOCAL },
		{ AF_INET6, "mapped6", DENY_MAPPED },
	};
	const struct policy	*p = spec->policy;
	struct nftnl_rule	*r;
	struct policy_cidr	 res = { .family = AF_INET, .prefix = 32 };
	uint16_t		 dns[2] = { htons(53), htons(853) };
	size_t			 i;
	int			 d;

	r = nft_rule_new(h, "output");
	nft_r_ct_established(r);
	nft_rule_out(h, r, -1, "ct state established,related");
	for (i = 0; i < nitems(always); i++) {
		r = nft_rule_new(h, "output");
		nft_r_daddr_in(r, always[i].family, always[i].set);
		nft_rule_out(h, r, always[i].deny, always[i].set);
	}
	if (p->level >= LEVEL_L2 && spec->resolver.s_addr != 0) {
		memcpy(res.addr, &spec->resolver, 4);
		r = nft_rule_new(h, "output");
		nft_r_addr(r, &res, 1, NFT_CMP_EQ);
		nft_r_dns(h, r, "resolver");
		nft_rule_out(h, r, -1, "resolver");
	}
	/* Any other DNS, DoT included, whatever the destination. */
	r = nft_rule_new(h, "output");
	nft_r_tcp_udp(h, r, "dns");
	nft_r_dport(r);
	nft_r_lookup(r, NULL, nft_set_keys(h, NULL, NFT_TYPE_INET_SERVICE, 2,
	    nitems(dns), dns, nitems(dns), "dns"));
	nft_rule_out(h, r, DENY_DNS, "dns");
	nft_rules_redirect(h, spec);
	r = nft_rule_new(h, "output");
	nft_r_addr(r, &spec->pool, 1, NFT_CMP_EQ);
	nft_rule_out(h, r, DENY_INTERNAL, "pool");
	if (p->level >= LEVEL_L1) {
		r = nft_rule_new(h, "output");
		nft_r_loopback(r, NFT_META_OIF);
		nft_rule_out(h, r, -1, "oif lo");
	}
	for (i = 0; p->level == LEVEL_L2 && i < p->ngroups; i++) {
		for (d = 0; d < 4; d++)
			if (has[i][d])
				nft_rule_group(h, &p->groups[i], i, d < 2 ?
				    AF_INET : AF_INET6, d % 2 ? 'h' : 'c');
		if (p->groups[i].nnames > 0) {
			nft_rule_group(h, &p->groups[i], i, AF_INET, 'n');
			nft_rule_group(h, &p->groups[i], i, AF_INET6, 'n');
		}
	}
	if (p->level == LEVEL_L3) {
		r = nft_rule_new(h, "output");
		nft_r_counter(r);
		nft_r_ct_mark_set(r, NFT_MARK_L3);
		nft_r_verdict(r, NF_ACCEPT, NULL);
		nft_rule_add(h, r, "L3");
	}
	nft_rule_out(h, nft_rule_new(h, "output"), DENY_POLICY, "policy");
}

static void
nft_build_sandbox(struct nft_handle *h, const struct nft_sandbox *spec)
{
	const struct policy	*p = spec->policy;
	struct nftnl_rule	*r;
	int			(*has)[4];
	size_t			 i;

	nft_table_replace(h);
	nft_sets_fixed(h);
	has = xcalloc(p->ngroups ? p->ngroups : 1, sizeof(*has));
	for (i = 0; p->level == LEVEL_L2 && i < p->ngroups; i++)
		nft_sets_group(h, &p->groups[i], i, has[i]);
	nft_chains_deny(h, spec);
	nft_chain(h, "output", "filter", NF_INET_LOCAL_OUT, 0, NF_DROP);
	nft_chain(h, "input", "filter", NF_INET_LOCAL_IN, 0, NF_DROP);
	nft_rules_output(h, spec, has);
	free(has);

	/* Inbound is not egress: dropped without a log. */
	r = nft_rule_new(h, "input");
	nft_r_ct_established(r);
	nft_r_verdict(r, NF_ACCEPT, NULL);
	nft_rule_add(h, r, "ct state established,related");
	if (p->level >= LEVEL_L1) {
		r = nft_rule_new(h, "input");
		nft_r_loopback(r, NFT_META_IIF);
		nft_r_verdict(r, NF_ACCEPT, NULL);
		nft_rule_add(h, r, "iif lo");
	}
}

/* ------------------------------------------------------------ sandbox API */

/* What nft_applied_sha256 reports: the batch as built, minus its numbering. */
static void
nft_digest(const struct nft_handle *h, char out[SHA256_HEX + 8])
{
	struct nlmsghdr	*hdr;
	char		*copy = xmalloc(h->len ? h->len : 1), hex[SHA256_HEX + 1];
	size_t		 off = 0;

	memcpy(copy, h->buf, h->len);
	while (h->len - off >= sizeof(*hdr)) {
		hdr = (struct nlmsghdr *)(void *)(copy + off);
		if (hdr->nlmsg_len < sizeof(*hdr) || hdr->nlmsg_len > h->len - off)
			break;
		hdr->nlmsg_seq = 0;
		hdr->nlmsg_pid = 0;
		off += NLMSG_ALIGN(hdr->nlmsg_len);
	}
	sha256_hex(copy, h->len, hex);
	free(copy);
	snprintf(out, SHA256_HEX + 8, "sha256:%s", hex);
}

int
nft_apply(struct nft_handle *h, const struct nft_sandbox *spec, char *err,
    size_t errlen)
{
	char	 digest[SHA256_HEX + 8];

	if (nft_spec_check(spec, err, errlen) == -1)
		return -1;
	nft_batch_reset(h, NFPROTO_INET, NFT_TABLE);
	nft_build_sandbox(h, spec);
	nft_digest(h, digest);
	if (nft_batch_send(h, err, errlen) == -1)
		return -1;
	snprintf(h->applied, sizeof(h->applied), "%s", digest);
	return 0;
}

const char *
nft_applied_sha256(const struct nft_handle *h)
{
	return h->applied;
}

static int
nft_table_remove(struct nft_handle *h, uint16_t family, const char *name,
    char *err, size_t errlen)
{
	nft_batch_reset(h, family, name);
	/* Created first, so that the delete finds it: no ENOENT. */
	nft_table(h, NFT_MSG_NEWTABLE);
	nft_table(h, NFT_MSG_DELTABLE);
	return nft_batch_send(h, err, errlen);
}

int
nft_remove(struct nft_handle *h, char *err, size_t errlen)
{
	return nft_table_remove(h, NFPROTO_INET, NFT_TABLE, err, errlen);
}

/* ------------------------------------------------------------ pins */

/* One message of a pin: type NEWSETELEM or DELSETELEM, one address. */
static void
nft_pin_elem(struct nft_handle *h, uint16_t type, const char *set,
    const void *addr, size_t alen, uint32_t timeout_ms, const char *what)
{
	struct nft_elems	 e;

	nft_elems_begin(&e, h, type, set, 0, what);
	nft_elem(&e, addr, alen, 0, timeout_ms, 0);
	nft_elems_close(&e);
}

int
nft_pin(struct nft_handle *h, unsigned group, int family, const void *addr,
    uint32_t timeout_ms, char *err, size_t errlen)
{
	char			 set[16], what[16];
	size_t			 alen;

	if ((family != AF_INET && family != AF_INET6) ||
	    group >= POLICY_GROUPS_MAX || timeout_ms == 0) {
		(void)snprintf(err, errlen, "pin: bad family, group %u or "
		    "timeout 0", group);
		return -1;
	}
	alen = nft_addr_len(family);
	(void)snprintf(set, sizeof(set), "n%c_%u",
	    family == AF_INET ? '4' : '6', group);
	(void)snprintf(what, sizeof(what), "group %u", group);
	nft_batch_reset(h, NFPROTO_INET, NFT_TABLE);
	/*
	 * Adding an element that exists succeeds without touching its
	 * timeout on older kernels (6.1), so: add (a no-op if present),
	 * delete, add with a fresh timeout, in one transaction.  No packet
	 * ever sees the address out of the set.
	 */
	nft_pin_elem(h, NFT_MSG_NEWSETELEM, set, addr, alen, timeout_ms, what);
	nft_pin_elem(h, NFT_MSG_DELSETELEM, set, addr, alen, 0, what);
	nft_pin_elem(h, NFT_MSG_NEWSETELEM, set, addr, alen, timeout_ms, what);
	return nft_batch_send(h, err, errlen);
}

/* ------------------------------------------------------------ state */

int
nft_conntrack_flush(struct nft_handle *h, char *err, size_t errlen)
{
	struct nlmsghdr	*nlh;
	struct nfgenmsg	*nfg;
	char		 buf[MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(*nfg))];
	size_t		 off;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	/* No tuple and AF_UNSPEC: every entry of every family goes. */
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	if (nft_request(h, nlh, NULL, NULL, err, errlen) == -1) {
		off = strlen(err);
		(void)snprintf(err + off, errlen - off, " (conntrack flush)");
		return -1;
	}
	return 0;
}

static int
nft_counter_cb(const struct nlmsghdr *nlh, void *arg)
{
	uint64_t		*n = arg;	/* DENY_MAX, then rules */
	struct nftnl_rule	*r;
	struct nftnl_expr_iter	*it;
	struct nftnl_expr	*e;
	const char		*chain;
	char			 name[16];
	int			 d;

	if ((r = nftnl_rule_alloc()) == NULL)
		fatalx("nftnl_rule_alloc: out of memory");
	if (nftnl_rule_nlmsg_parse(nlh, r) < 0) {
		nftnl_rule_free(r);
		return MNL_CB_ERROR;
	}
	if ((chain = nftnl_rule_get_str(r, NFTNL_RULE_CHAIN)) == NULL)
		chain = "";
	for (d = 0; d < DENY_MAX; d++) {
		nft_deny_chain(name, sizeof(name), d);
		if (strcmp(chain, name) == 0)
			break;
	}
	if (d < DENY_MAX) {
		n[DENY_MAX]++;
		if ((it = nftnl_expr_iter_create(r)) != NULL) {
			while ((e = nftnl_expr_iter_next(it)) != NULL)
				if (strcmp(nftnl_expr_get_str(e,
				    NFTNL_EXPR_NAME), "counter") == 0)
					n[d] += nftnl_expr_get_u64(e,
					    NFTNL_EXPR_CTR_PACKETS);
			nftnl_expr_iter_destroy(it);
		}
	}
	nftnl_rule_free(r);
	return MNL_CB_OK;
}

json_t *
nft_counters(struct nft_handle *h, char *err, size_t errlen)
{
	struct nlmsghdr	*nlh;
	json_t		*o;
	uint64_t	 n[DENY_MAX + 1] = { 0 };
	char		 buf[256];
	size_t		 d;

	/* nft_request numbers it. */
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETRULE, NFPROTO_INET,
	    NLM_F_DUMP, 0);
	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, NFT_TABLE);
	if (nft_request(h, nlh, nft_counter_cb, n, err, errlen) == -1) {
		d = strlen(err);
		(void)snprintf(err + d, errlen - d, " (rules of table inet "
		    NFT_TABLE ")");
		return NULL;
	}
	/* A dump of a table that is not there is empty, not an error. */
	if (n[DENY_MAX] == 0) {
		(void)snprintf(err, errlen, "table inet " NFT_TABLE " has no "
		    "deny chains");
		return NULL;
	}
	o = json_object();
	for (d = 0; d < DENY_MAX; d++)
		json_object_set_new(o, nft_reasons[d],
		    json_integer((json_int_t)n[d]));
	return o;
}

/* ------------------------------------------------------------ uplink */

int
nft_uplink_apply(struct nft_handle *h, const struct policy_cidr *pool,
    uint16_t proxy_lo, unsigned proxy_n, char *err, size_t errlen)
{
	struct nftnl_rule	*r;

	if (nft_pool_check(pool, err, errlen) == -1)
		return -1;
	nft_batch_reset(h, NFPROTO_IPV4, NFT_NAT_TABLE);
	nft_table_replace(h);
	nft_chain(h, "postrouting", "nat",
	    NF_INET_POST_ROUTING, 100, NF_ACCEPT);
	nft_chain(h, "forward", "filter",
	    NF_INET_FORWARD, 0, NF_ACCEPT);
	nft_chain(h, "input", "filter",
	    NF_INET_LOCAL_IN, 0, NF_ACCEPT);

	r = nft_rule_new(h, "postrouting");
	nft_r_addr(r, pool, 0, NFT_CMP_EQ);
	nft_r_addr(r, pool, 1, NFT_CMP_NEQ);
	nft_r_counter(r);
	(void)nft_expr(r, "masq");
	nft_rule_add(h, r, "masquerade");
	/* Sandboxes never reach each other, */
	r = nft_rule_new(h, "forward");
	nft_r_addr(r, pool, 0, NFT_CMP_EQ);
	nft_r_addr(r, pool, 1, NFT_CMP_EQ);
	nft_rule_end(h, r, NF_DROP, NULL, "pool to pool");
	/* and reach the uplink only for the resolver. */
	r = nft_rule_new(h, "input");
	nft_r_addr(r, pool, 0, NFT_CMP_EQ);
	nft_r_dns(h, r, "dns");
	nft_rule_end(h, r, NF_ACCEPT, NULL, "dns");
	if (proxy_n > 0) {
		r = nft_rule_new(h, "input");
		nft_r_addr(r, pool, 0, NFT_CMP_EQ);
		nft_r_tcp_dport_range(r, proxy_lo,
		    (uint16_t)(proxy_lo + proxy_n - 1));
		nft_rule_end(h, r, NF_ACCEPT, NULL, "egress proxy");
	}
	r = nft_rule_new(h, "input");
	nft_r_addr(r, pool, 0, NFT_CMP_EQ);
	nft_rule_end(h, r, NF_DROP, NULL, "pool");
	return nft_batch_send(h, err, errlen);
}

int
nft_uplink_remove(struct nft_handle *h, char *err, size_t errlen)
{
	return nft_table_remove(h, NFPROTO_IPV4, NFT_NAT_TABLE, err, errlen);
}
