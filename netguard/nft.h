/*
 * Every netlink message netguard sends to nf_tables (and ctnetlink) goes
 * through this file, built with libnftnl and sent with libmnl.  Each
 * policy change is one batch, one kernel transaction: the kernel applies
 * all of it or none.
 *
 * A handle holds a NETLINK_NETFILTER socket created inside the target
 * namespace (lib/netns.c), so later updates (DNS pins) cost one send and
 * one receive and no thread.
 */
#ifndef NETGUARD_NFT_H
#define NETGUARD_NFT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "policy.h"

#define NFT_TABLE		"netguard"	/* inet, per sandbox netns */
#define NFT_NAT_TABLE		"netguard_nat"	/* ip, in the uplink netns */
#define NFT_LOG_PREFIX		"ng:"		/* every NFLOG prefix's start */
#define NFT_LOG_SNAPLEN		128		/* bytes of a denied packet logged */
#define NFT_PIN_MAX		65536		/* addresses per name set */
#define NFT_NAT_PRIO		(-100)		/* the proxy redirect: dstnat */
/*
 * The conntrack mark of a connection an allow rule let out: group i of
 * an L2 policy, or L3's accept-all.  flow.c reports only marked flows
 * (not loopback, not the resolver) and names the rule from the mark.
 */
#define NFT_MARK_BASE		0x4e470000u	/* "NG" */
#define NFT_MARK_GROUP(i)	(NFT_MARK_BASE | ((uint32_t)(i) + 1))
#define NFT_MARK_L3		(NFT_MARK_BASE | 0xffffu)

/*
 * What a sandbox's table is built from.  The log prefix of each denial is
 * NFT_LOG_PREFIX followed by one of: "metadata", "linklocal", "mapped"
 * (IPv4-mapped IPv6 destinations), "dns", "internal", "policy" (the
 * level's final drop), so nflog.c can name the rule that dropped a packet.
 * Every denial runs through chain "deny_<reason>" of table inet netguard.
 */
struct nft_sandbox {
	const struct policy	*policy;	/* borrowed */
	/* L2/L3: the resolver's address (the veth's uplink end), accepted
	 * for udp and tcp 53 only; zero at L0/L1. */
	struct in_addr		 resolver;
	/* The address pool of every sandbox and gateway (IPv4 for now):
	 * dropped (logged "internal") except the resolver rule above. */
	struct policy_cidr	 pool;
	unsigned		 nflog_group;	/* 0..65535 */
	/* Log entries per second per deny chain, also the burst; >= 1. */
	unsigned		 log_rate;
	/* L2 "http" destinations: new TCP connections to group's pinned
	 * addresses on port go to the egress proxy at resolver:to_port
	 * (DNAT in the sandbox's own namespace); any other packet to them on
	 * that port (UDP, IPv6) is denied "policy".  Borrowed. */
	const struct nft_redirect *redirects;
	size_t			 nredirects;
};

struct nft_redirect {
	size_t			 group;
	uint16_t		 port, to_port;		/* host order */
};

/* A handle is used by one thread at a time. */
struct nft_handle;

/*
 * Opens a handle inside nsfd (-1: this namespace).  NULL with err.  The
 * descriptor is only used during the call; the handle owns its socket.
 */
struct nft_handle	*nft_open(int nsfd, char *err, size_t errlen);
void			 nft_close(struct nft_handle *);

/*
 * Replaces table inet netguard with the one spec describes, in one batch
 * (delete if present, then create), and reads every ACK.  On failure the
 * old table, if any, is unchanged and err names what the kernel refused
 * ("rule output: group 2: allow @c4_2: No such file or directory",
 * "chain output: Argument list too long").  At L2 each group i gets, when
 * it has something to put in them: c4_i/c6_i (its CIDRs merged into
 * intervals), h4_i/h6_i (its single addresses, in a hash: one element
 * each instead of two), n4_i/n6_i (when it has names: what nft_pin adds)
 * and p_i (its ports; none means every port and protocol).
 */
int	nft_apply(struct nft_handle *, const struct nft_sandbox *spec,
	    char *err, size_t errlen);
/*
 * "sha256:<hex>" of the ruleset the last successful nft_apply sent: every
 * message of its batch, sequence number and port id zeroed, so the same
 * policy and addresses give the same digest.  "" before one.
 */
const char *nft_applied_sha256(const struct nft_handle *);
/* Deletes table inet netguard if it exists. */
int	nft_remove(struct nft_handle *, char *err, size_t errlen);
/*
 * Adds (or refreshes the timeout of) one DNS-learned address in group's
 * name set (n4_<group> or n6_<group>): family AF_INET or AF_INET6, addr
 * in network order, timeout_ms at least 1.  One batch: add (a no-op if
 * present), delete, add with the new timeout, since re-adding leaves
 * the old timeout on older kernels (6.1).  Fails ("set full" in err)
 * when the set holds NFT_PIN_MAX other addresses.
 */
int	nft_pin(struct nft_handle *, unsigned group, int family,
	    const void *addr, uint32_t timeout_ms, char *err, size_t errlen);
/*
 * Forgets every connection the namespace's conntrack holds, so that a
 * narrower policy applies to flows already open: TCP picks mid-stream
 * packets up again as new (nf_conntrack_tcp_loose), allowed ones continue.
 */
int	nft_conntrack_flush(struct nft_handle *, char *err, size_t errlen);
/*
 * Packets dropped so far, per log prefix suffix, as {"metadata": n,
 * "linklocal": n, "mapped": n, "dns": n, "internal": n, "policy": n}
 * (new reference), or NULL with err.
 */
json_t	*nft_counters(struct nft_handle *, char *err, size_t errlen);

/*
 * The uplink namespace: table ip netguard_nat masquerading pool sources
 * leaving for anything outside the pool, forward drop between pool
 * addresses, input from the pool only to udp/tcp 53 and, unless
 * proxy_n is 0, to tcp ports proxy_lo .. proxy_lo + proxy_n - 1 (the
 * egress proxy's; each sandbox's own table admits its ports only).
 * Idempotent (one batch replaces it).
 */
int	nft_uplink_apply(struct nft_handle *, const struct policy_cidr *pool,
	    uint16_t proxy_lo, unsigned proxy_n, char *err, size_t errlen);
int	nft_uplink_remove(struct nft_handle *, char *err, size_t errlen);

#endif
