/*
 * What netguard's nf_tables files share; only nft*.c include it (the API is
 * nft.h).  nft_batch.c owns the socket and the batch, nft_build.c writes
 * tables, sets, chains and rules into it, nft.c builds the rulesets.
 */
#ifndef NETGUARD_NFT_INT_H
#define NETGUARD_NFT_INT_H

#include <linux/netlink.h>
#include <netinet/in.h>

#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "hash.h"
#include "nft.h"
#include "policy.h"

/* Elements per message: the list is one attribute, and nla_len has 16
 * bits.  Every message fits in NFT_MSG_ROOM. */
#define NFT_ELEMS_MAX		(32u << 10)
#define NFT_MSG_ROOM		(NFT_ELEMS_MAX + 4096)

/* nftables' datatype numbers: `nft list` prints keys by them. */
#define NFT_TYPE_IPADDR		7
#define NFT_TYPE_IP6ADDR	8
#define NFT_TYPE_INET_PROTO	12
#define NFT_TYPE_INET_SERVICE	13

struct nft_msg;

struct nft_handle {
	struct mnl_socket	*nl;
	uint32_t		 portid;
	uint32_t		 seq;
	int			 sndbuf, rcvbuf;	/* as the kernel says */
	/* The batch being built, kept between calls so that a pin allocates
	 * nothing.  A batch over its ceiling is marked failed and its
	 * further messages land in scratch, never sent. */
	char			*buf;
	size_t			 len, cap;
	struct nft_msg		*msgs;
	size_t			 nmsgs, msgcap;
	uint32_t		 seq0;
	uint32_t		 set_id;
	/* Every object of a batch is in this one table. */
	uint16_t		 family;
	const char		*table;
	int			 failed;
	char			*scratch;	/* NFT_MSG_ROOM, on failure */
	char			*rbuf;		/* receive buffer */
	/* sha256 of the last nft_apply's batch, "" before one. */
	char			 applied[SHA256_HEX + 8];
};

/* An interval, both ends included, network order. */
struct nft_range {
	uint8_t		 lo[16], hi[16];
};

/* One NEWSETELEM/DELSETELEM stream, cut into messages as they fill.  set
 * and what are borrowed until nft_elems_close. */
struct nft_elems {
	struct nft_handle	*h;
	struct nlmsghdr		*nlh;
	struct nlattr		*list;
	uint16_t		 type;
	const char		*set;
	uint32_t		 set_id;
	const char		*what;
};

/* nft_batch.c: one batch at a time per handle; table is borrowed until
 * nft_batch_send, what is copied. */
void	nft_batch_reset(struct nft_handle *, uint16_t family,
	    const char *table);
struct nlmsghdr *nft_msg_begin(struct nft_handle *, uint16_t type,
	    uint16_t family, uint16_t flags, const char *fmt, ...)
	    __attribute__((format(printf, 5, 6)));
void	nft_msg_end(struct nft_handle *, struct nlmsghdr *);
int	nft_batch_send(struct nft_handle *, char *err, size_t errlen);
/* One request outside a batch (it gets the next sequence number); cb runs
 * on each answer until the ACK or the end of the dump. */
int	nft_request(struct nft_handle *, struct nlmsghdr *, mnl_cb_t cb,
	    void *arg, char *err, size_t errlen);

/* nft_build.c: objects of the batch's table.  Out of memory is fatal;
 * what the kernel refuses is reported by nft_batch_send. */
void	nft_table(struct nft_handle *, uint16_t cmd);
void	nft_table_replace(struct nft_handle *);
uint32_t nft_set(struct nft_handle *, const char *name, uint32_t flags,
	    uint32_t keytype, uint32_t keylen, uint32_t size, const char *what);
uint32_t nft_set_keys(struct nft_handle *, const char *name,
	    uint32_t keytype, uint32_t keylen, uint32_t size, const void *keys,
	    size_t n, const char *what);
void	nft_set_ranges(struct nft_handle *, const char *name, int family,
	    struct nft_range *, size_t n, const char *what);
void	nft_chain(struct nft_handle *, const char *name, const char *type,
	    int hook, int prio, int policy);
void	nft_elems_begin(struct nft_elems *, struct nft_handle *,
	    uint16_t type, const char *set, uint32_t set_id, const char *what);
void	nft_elem(struct nft_elems *, const void *key, size_t keylen,
	    uint32_t flags, uint64_t timeout_ms, int open);
void	nft_elems_close(struct nft_elems *);

size_t	nft_addr_len(int family);
int	nft_addr_cmp(const uint8_t *, const uint8_t *, size_t alen);
void	nft_range_from_cidr(struct nft_range *, const struct policy_cidr *);
size_t	nft_ranges_merge(struct nft_range *, size_t n, size_t alen);

struct nftnl_rule *nft_rule_new(struct nft_handle *, const char *chain);
void	nft_rule_add(struct nft_handle *, struct nftnl_rule *,
	    const char *what);
void	nft_rule_end(struct nft_handle *, struct nftnl_rule *, int verdict,
	    const char *chain, const char *what);
struct nftnl_expr *nft_expr(struct nftnl_rule *, const char *name);
void	nft_r_counter(struct nftnl_rule *);
void	nft_r_verdict(struct nftnl_rule *, int verdict, const char *chain);
void	nft_r_lookup(struct nftnl_rule *, const char *set, uint32_t set_id);
void	nft_r_ct_established(struct nftnl_rule *);
void	nft_r_ct_mark_set(struct nftnl_rule *, uint32_t mark);
void	nft_r_loopback(struct nftnl_rule *, uint32_t key);
void	nft_r_addr(struct nftnl_rule *, const struct policy_cidr *, int dst,
	    uint32_t op);
void	nft_r_daddr_in(struct nftnl_rule *, int family, const char *set);
void	nft_r_tcp_udp(struct nft_handle *, struct nftnl_rule *,
	    const char *what);
void	nft_r_dport(struct nftnl_rule *);
/* meta l4proto tcp th dport port (host order) */
void	nft_r_tcp_dport(struct nftnl_rule *, uint16_t port);
/* meta l4proto tcp th dport lo-hi (host order) */
void	nft_r_tcp_dport_range(struct nftnl_rule *, uint16_t lo, uint16_t hi);
/* th dport port, after nft_r_tcp_udp */
void	nft_r_dport_eq(struct nftnl_rule *, uint16_t port);
/* dnat ip to addr:port (host order port) */
void	nft_r_dnat4(struct nftnl_rule *, const struct in_addr *,
	    uint16_t port);
void	nft_r_dns(struct nft_handle *, struct nftnl_rule *, const char *what);

#endif
