/*
 * Builders of nf_tables objects in the handle's batch (libnftnl): tables,
 * sets and their elements, chains, rules and expressions.  Trusts callers
 * for names and keys; the kernel judges the batch when it is sent.
 */
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>

#include "log.h"
#include "nft_int.h"
#include "util.h"

#define NFT_LOOPBACK		1	/* lo's ifindex in every namespace */
#define NFT_ANON_SET		"__set%d"	/* kernel picks the number */

/* ------------------------------------------------------------ objects */

/* The batch's table: NFT_MSG_NEWTABLE (create if absent) or DELTABLE. */
void
nft_table(struct nft_handle *h, uint16_t cmd)
{
	struct nftnl_table	*t;
	struct nlmsghdr		*nlh;

	if ((t = nftnl_table_alloc()) == NULL)
		fatalx("nftnl_table_alloc: out of memory");
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, h->table);
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, h->family);
	nlh = nft_msg_begin(h, cmd, h->family,
	    cmd == NFT_MSG_NEWTABLE ? NLM_F_CREATE : 0, "table %s (%s)",
	    h->table, cmd == NFT_MSG_NEWTABLE ? "create" : "delete");
	nftnl_table_nlmsg_build_payload(nlh, t);
	nft_msg_end(h, nlh);
	nftnl_table_free(t);
}

/* Create if absent, delete, create: the delete never fails, and the
 * kernel swaps the old table for the new one at commit. */
void
nft_table_replace(struct nft_handle *h)
{
	nft_table(h, NFT_MSG_NEWTABLE);
	nft_table(h, NFT_MSG_DELTABLE);
	nft_table(h, NFT_MSG_NEWTABLE);
}

/* A chain; a base chain (hooked, with a policy) when type is set. */
void
nft_chain(struct nft_handle *h, const char *name, const char *type, int hook,
    int prio, int policy)
{
	struct nftnl_chain	*c;
	struct nlmsghdr		*nlh;

	if ((c = nftnl_chain_alloc()) == NULL)
		fatalx("nftnl_chain_alloc: out of memory");
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, h->table);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, h->family);
	if (type != NULL) {
		nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, type);
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, (uint32_t)hook);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
		nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, (uint32_t)policy);
	}
	nlh = nft_msg_begin(h, NFT_MSG_NEWCHAIN, h->family, NLM_F_CREATE,
	    "chain %s", name);
	nftnl_chain_nlmsg_build_payload(nlh, c);
	nft_msg_end(h, nlh);
	nftnl_chain_free(c);
}

/* A set in the batch's table; anonymous when name is NULL.  Returns its
 * batch id, by which rules and elements find an anonymous set. */
uint32_t
nft_set(struct nft_handle *h, const char *name, uint32_t flags,
    uint32_t keytype, uint32_t keylen, uint32_t size, const char *what)
{
	struct nftnl_set	*s;
	struct nlmsghdr		*nlh;
	uint32_t		 id = ++h->set_id;

	if ((s = nftnl_set_alloc()) == NULL)
		fatalx("nftnl_set_alloc: out of memory");
	nftnl_set_set_str(s, NFTNL_SET_TABLE, h->table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, name ? name : NFT_ANON_SET);
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, h->family);
	nftnl_set_set_u32(s, NFTNL_SET_FLAGS, name ? flags :
	    flags | NFT_SET_ANONYMOUS | NFT_SET_CONSTANT);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, keytype);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, keylen);
	nftnl_set_set_u32(s, NFTNL_SET_ID, id);
	if (size != 0)
		nftnl_set_set_u32(s, NFTNL_SET_DESC_SIZE, size);
	nlh = nft_msg_begin(h, NFT_MSG_NEWSET, h->family,
	    NLM_F_CREATE | NLM_F_EXCL, "%s: set %s", what,
	    name ? name : "(anonymous)");
	nftnl_set_nlmsg_build_payload(nlh, s);
	nft_msg_end(h, nlh);
	nftnl_set_free(s);
	return id;
}

static void
nft_elems_open(struct nft_elems *e)
{
	struct nlmsghdr	*nlh;

	nlh = nft_msg_begin(e->h, e->type, e->h->family,
	    e->type == NFT_MSG_NEWSETELEM ? NLM_F_CREATE : 0,
	    "%s: elements of %s", e->what, e->set ? e->set : "(anonymous)");
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, e->h->table);
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, e->set ? e->set :
	    NFT_ANON_SET);
	if (e->set_id != 0)
		mnl_attr_put_u32(nlh, NFTA_SET_ELEM_LIST_SET_ID,
		    htonl(e->set_id));
	e->list = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	e->nlh = nlh;
}

void
nft_elems_close(struct nft_elems *e)
{
	if (e->nlh == NULL)
		return;
	mnl_attr_nest_end(e->nlh, e->list);
	nft_msg_end(e->h, e->nlh);
	e->nlh = NULL;
}

/* Starts a stream of elements of set (or, NULL, the set of set_id) in
 * the batch; nft_elems_close ends it. */
void
nft_elems_begin(struct nft_elems *e, struct nft_handle *h, uint16_t type,
    const char *set, uint32_t set_id, const char *what)
{
	memset(e, 0, sizeof(*e));
	e->h = h;
	e->type = type;
	e->set = set;
	e->set_id = set_id;
	e->what = what;
}

/* Appends one attribute header and payload at the message's tail; the
 * caller has checked the room (NFT_MSG_ROOM holds any element). */
static struct nlattr *
nft_attr(struct nlmsghdr *nlh, uint16_t type, const void *data, size_t len)
{
	struct nlattr	*a = (struct nlattr *)((char *)nlh +
			    NLMSG_ALIGN(nlh->nlmsg_len));
	size_t		 pad = NLA_ALIGN(len) - len;

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (len > 0)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	if (pad > 0)
		memset((char *)a + NLA_HDRLEN + len, 0, pad);
	nlh->nlmsg_len = NLMSG_ALIGN(nlh->nlmsg_len) + NLA_HDRLEN +
	    NLA_ALIGN(len);
	return a;
}

/*
 * One element, written straight into the message: a policy may carry
 * POLICY_CIDRS_MAX of them and this is the hot loop of an attach.  open:
 * a range up to the last address, which has no end element; nft reads
 * the note in its user data to print it as a range.
 */
void
nft_elem(struct nft_elems *e, const void *key, size_t keylen, uint32_t flags,
    uint64_t timeout_ms, int open)
{
	uint8_t			 ud[6] = { NFTNL_UDATA_SET_ELEM_FLAGS, 4 };
	struct nlattr		*el, *k;
	uint32_t		 f;
	uint64_t		 t;

	if (e->nlh != NULL && e->nlh->nlmsg_len > NFT_ELEMS_MAX)
		nft_elems_close(e);
	if (e->nlh == NULL)
		nft_elems_open(e);
	el = nft_attr(e->nlh, NLA_F_NESTED | NFTA_LIST_ELEM, NULL, 0);
	k = nft_attr(e->nlh, NLA_F_NESTED | NFTA_SET_ELEM_KEY, NULL, 0);
	(void)nft_attr(e->nlh, NFTA_DATA_VALUE, key, keylen);
	k->nla_len = (uint16_t)((char *)e->nlh + e->nlh->nlmsg_len - (char *)k);
	if (flags != 0) {
		f = htonl(flags);
		(void)nft_attr(e->nlh, NFTA_SET_ELEM_FLAGS, &f, sizeof(f));
	}
	if (timeout_ms != 0) {
		t = htobe64(timeout_ms);
		(void)nft_attr(e->nlh, NFTA_SET_ELEM_TIMEOUT, &t, sizeof(t));
	}
	if (open) {
		/* A host-order u32, as libnftnl's udata has it. */
		f = NFTNL_SET_ELEM_F_INTERVAL_OPEN;
		memcpy(ud + 2, &f, sizeof(f));
		(void)nft_attr(e->nlh, NFTA_SET_ELEM_USERDATA, ud, sizeof(ud));
	}
	el->nla_len = (uint16_t)((char *)e->nlh + e->nlh->nlmsg_len -
	    (char *)el);
}

/* A set with one element per key (n keys of keylen bytes, one after the
 * other); anonymous and constant when name is NULL.  size: the set's size
 * hint, 0 for none.  Returns its batch id. */
uint32_t
nft_set_keys(struct nft_handle *h, const char *name, uint32_t keytype,
    uint32_t keylen, uint32_t size, const void *keys, size_t n,
    const char *what)
{
	struct nft_elems	 e;
	uint32_t		 id;
	size_t			 i;

	id = nft_set(h, name, 0, keytype, keylen, size, what);
	nft_elems_begin(&e, h, NFT_MSG_NEWSETELEM, name, id, what);
	for (i = 0; i < n; i++)
		nft_elem(&e, (const uint8_t *)keys + i * keylen, keylen, 0, 0,
		    0);
	nft_elems_close(&e);
	return id;
}

/* ------------------------------------------------------------ ranges */

size_t
nft_addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

/* memcmp for addresses, without a call: this runs for every CIDR. */
int
nft_addr_cmp(const uint8_t *a, const uint8_t *b, size_t alen)
{
	uint32_t	 x, y;
	size_t		 i;

	for (i = 0; i < alen; i += 4) {
		memcpy(&x, a + i, 4);
		memcpy(&y, b + i, 4);
		if (x != y)
			return ntohl(x) < ntohl(y) ? -1 : 1;
	}
	return 0;
}

static int
nft_range_cmp(const void *a, const void *b)
{
	return nft_addr_cmp(((const struct nft_range *)a)->lo,
	    ((const struct nft_range *)b)->lo, 16);
}

/* a + 1 in place; -1 when a was the last address. */
static int
nft_addr_inc(uint8_t *a, size_t len)
{
	while (len-- > 0)
		if (++a[len] != 0)
			return 0;
	return -1;
}

void
nft_range_from_cidr(struct nft_range *r, const struct policy_cidr *c)
{
	size_t	 i, alen = nft_addr_len(c->family);
	unsigned bits;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < alen; i++) {
		bits = c->prefix > i * 8 ? c->prefix - i * 8 : 0;
		r->lo[i] = bits >= 8 ? c->addr[i] :
		    c->addr[i] & (uint8_t)(0xff00 >> bits);
		r->hi[i] = bits >= 8 ? c->addr[i] :
		    r->lo[i] | (uint8_t)(0xff >> bits);
	}
}

/* Sorts and merges overlapping and adjacent ranges (the kernel refuses
 * overlaps in an interval set); returns how many are left. */
size_t
nft_ranges_merge(struct nft_range *r, size_t n, size_t alen)
{
	uint8_t	 next[16];
	size_t	 i, out = 0;
	int	 last;

	if (n == 0)
		return 0;
	/* Policies list addresses in order more often than not. */
	for (i = 1; i < n && nft_addr_cmp(r[i - 1].lo, r[i].lo, alen) <= 0; i++)
		;
	if (i < n)
		qsort(r, n, sizeof(*r), nft_range_cmp);
	for (i = 1; i < n; i++) {
		memcpy(next, r[out].hi, alen);
		last = nft_addr_inc(next, alen) == -1;
		if (last || nft_addr_cmp(r[i].lo, next, alen) <= 0) {
			if (nft_addr_cmp(r[i].hi, r[out].hi, alen) > 0)
				memcpy(r[out].hi, r[i].hi, alen);
		} else
			r[++out] = r[i];
	}
	return out + 1;
}

/* Interval elements as nft writes them: an end at zero unless the first
 * range starts there, then each start and the address after its end. */
static void
nft_elems_ranges(struct nft_elems *e, const struct nft_range *r, size_t n,
    size_t alen)
{
	static const uint8_t	 zero[16];
	uint8_t			 end[16];
	size_t			 i;
	int			 open;

	if (n > 0 && memcmp(r[0].lo, zero, alen) != 0)
		nft_elem(e, zero, alen, NFT_SET_ELEM_INTERVAL_END, 0, 0);
	for (i = 0; i < n; i++) {
		memcpy(end, r[i].hi, alen);
		open = nft_addr_inc(end, alen) == -1;
		nft_elem(e, r[i].lo, alen, 0, 0, open);
		if (!open)
			nft_elem(e, end, alen, NFT_SET_ELEM_INTERVAL_END, 0, 0);
	}
}

/* A named interval set of addresses, with its elements. */
void
nft_set_ranges(struct nft_handle *h, const char *name, int family,
    struct nft_range *r, size_t n, const char *what)
{
	struct nft_elems	 e;
	size_t			 alen = nft_addr_len(family);
	uint32_t		 id;

	id = nft_set(h, name, NFT_SET_INTERVAL, family == AF_INET ?
	    NFT_TYPE_IPADDR : NFT_TYPE_IP6ADDR, alen, 0, what);
	n = nft_ranges_merge(r, n, alen);
	nft_elems_begin(&e, h, NFT_MSG_NEWSETELEM, name, id, what);
	nft_elems_ranges(&e, r, n, alen);
	nft_elems_close(&e);
}

/* ------------------------------------------------------------ rules */

struct nftnl_expr *
nft_expr(struct nftnl_rule *r, const char *name)
{
	struct nftnl_expr	*e;

	if ((e = nftnl_expr_alloc(name)) == NULL)
		fatalx("nftnl_expr_alloc(%s): out of memory", name);
	nftnl_rule_add_expr(r, e);
	return e;
}

struct nftnl_rule *
nft_rule_new(struct nft_handle *h, const char *chain)
{
	struct nftnl_rule	*r;

	if ((r = nftnl_rule_alloc()) == NULL)
		fatalx("nftnl_rule_alloc: out of memory");
	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, h->table);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, h->family);
	return r;
}

/* Appends the rule to the batch and frees it. */
void
nft_rule_add(struct nft_handle *h, struct nftnl_rule *r, const char *what)
{
	struct nlmsghdr	*nlh;

	nlh = nft_msg_begin(h, NFT_MSG_NEWRULE, h->family,
	    NLM_F_CREATE | NLM_F_APPEND, "rule %s: %s",
	    nftnl_rule_get_str(r, NFTNL_RULE_CHAIN), what);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	nft_msg_end(h, nlh);
	nftnl_rule_free(r);
}

/* Ends a rule with a counter and verdict (NFT_JUMP: to chain), and
 * appends it to the batch. */
void
nft_rule_end(struct nft_handle *h, struct nftnl_rule *r, int verdict,
    const char *chain, const char *what)
{
	nft_r_counter(r);
	nft_r_verdict(r, verdict, chain);
	nft_rule_add(h, r, what);
}

static void
nft_r_meta(struct nftnl_rule *r, uint32_t key)
{
	struct nftnl_expr	*e = nft_expr(r, "meta");

	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
}

static void
nft_r_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr	*e = nft_expr(r, "cmp");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
}

static void
nft_r_payload(struct nftnl_rule *r, uint32_t base, uint32_t off, uint32_t len)
{
	struct nftnl_expr	*e = nft_expr(r, "payload");

	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
}

/* reg1 = reg1 & mask */
static void
nft_r_mask(struct nftnl_rule *r, const void *mask, uint32_t len)
{
	static const uint8_t	 zero[16];
	struct nftnl_expr	*e = nft_expr(r, "bitwise");

	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, len);
}

void
nft_r_lookup(struct nftnl_rule *r, const char *set, uint32_t set_id)
{
	struct nftnl_expr	*e = nft_expr(r, "lookup");

	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set ? set : NFT_ANON_SET);
	if (set == NULL)
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, set_id);
}

void
nft_r_counter(struct nftnl_rule *r)
{
	(void)nft_expr(r, "counter");
}

/* Terminal: NF_ACCEPT, NF_DROP, or NFT_JUMP to chain. */
void
nft_r_verdict(struct nftnl_rule *r, int verdict, const char *chain)
{
	struct nftnl_expr	*e = nft_expr(r, "immediate");

	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	if (chain != NULL)
		nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
}

/* ct state established,related */
void
nft_r_ct_established(struct nftnl_rule *r)
{
	struct nftnl_expr	*e = nft_expr(r, "ct");
	uint32_t		 mask, zero = 0;

	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	mask = NF_CT_STATE_BIT(IP_CT_ESTABLISHED) |
	    NF_CT_STATE_BIT(IP_CT_RELATED);
	nft_r_mask(r, &mask, sizeof(mask));
	nft_r_cmp(r, NFT_CMP_NEQ, &zero, sizeof(zero));
}

/* ct mark set mark: the rule that let a connection out, for flow.c */
void
nft_r_ct_mark_set(struct nftnl_rule *r, uint32_t mark)
{
	struct nftnl_expr	*e = nft_expr(r, "immediate");

	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
	nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &mark, sizeof(mark));
	e = nft_expr(r, "ct");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_MARK);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_SREG, NFT_REG_1);
}

/* meta iif/oif lo */
void
nft_r_loopback(struct nftnl_rule *r, uint32_t key)
{
	uint32_t	 lo = NFT_LOOPBACK;

	nft_r_meta(r, key);
	nft_r_cmp(r, NFT_CMP_EQ, &lo, sizeof(lo));
}

/* In table inet, a match on an ip or ip6 field needs the family first. */
static void
nft_r_nfproto(struct nftnl_rule *r, int family)
{
	uint8_t	 p = family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6;

	if (nftnl_rule_get_u32(r, NFTNL_RULE_FAMILY) != NFPROTO_INET)
		return;
	nft_r_meta(r, NFT_META_NFPROTO);
	nft_r_cmp(r, NFT_CMP_EQ, &p, sizeof(p));
}

/* Offsets of saddr and daddr in the IPv4 and IPv6 headers. */
static uint32_t
nft_addr_off(int family, int dst)
{
	if (family == AF_INET)
		return dst ? 16 : 12;
	return dst ? 24 : 8;
}

/* ip/ip6 saddr or daddr [!=] cidr: whole bytes compared as they are, a
 * partial byte under a mask over the whole address (as nft does it). */
void
nft_r_addr(struct nftnl_rule *r, const struct policy_cidr *c, int dst,
    uint32_t op)
{
	struct nft_range	 rg;
	uint8_t			 mask[16];
	uint32_t		 alen = nft_addr_len(c->family), i;

	nft_r_nfproto(r, c->family);
	nft_range_from_cidr(&rg, c);
	if (c->prefix % 8 == 0) {
		nft_r_payload(r, NFT_PAYLOAD_NETWORK_HEADER,
		    nft_addr_off(c->family, dst), c->prefix / 8);
		nft_r_cmp(r, op, rg.lo, c->prefix / 8);
		return;
	}
	for (i = 0; i < alen; i++)
		mask[i] = (uint8_t)~(rg.lo[i] ^ rg.hi[i]);
	nft_r_payload(r, NFT_PAYLOAD_NETWORK_HEADER,
	    nft_addr_off(c->family, dst), alen);
	nft_r_mask(r, mask, alen);
	nft_r_cmp(r, op, rg.lo, alen);
}

/* ip/ip6 daddr @set */
void
nft_r_daddr_in(struct nftnl_rule *r, int family, const char *set)
{
	nft_r_nfproto(r, family);
	nft_r_payload(r, NFT_PAYLOAD_NETWORK_HEADER, nft_addr_off(family, 1),
	    nft_addr_len(family));
	nft_r_lookup(r, set, 0);
}

/* meta l4proto { tcp, udp }: guards every th dport, so that no other
 * protocol's bytes are read as a port. */
void
nft_r_tcp_udp(struct nft_handle *h, struct nftnl_rule *r, const char *what)
{
	static const uint8_t	 protos[] = { IPPROTO_TCP, IPPROTO_UDP };
	uint32_t		 id;

	id = nft_set_keys(h, NULL, NFT_TYPE_INET_PROTO, 1, nitems(protos),
	    protos, nitems(protos), what);
	nft_r_meta(r, NFT_META_L4PROTO);
	nft_r_lookup(r, NULL, id);
}

/* th dport: the transport header's destination port, 2 bytes at 2. */
void
nft_r_dport(struct nftnl_rule *r)
{
	nft_r_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
}

/* meta l4proto { tcp, udp } th dport 53 */
void
nft_r_dns(struct nft_handle *h, struct nftnl_rule *r, const char *what)
{
	uint16_t	 port = htons(53);

	nft_r_tcp_udp(h, r, what);
	nft_r_dport(r);
	nft_r_cmp(r, NFT_CMP_EQ, &port, sizeof(port));
}

void
nft_r_dport_eq(struct nftnl_rule *r, uint16_t port)
{
	uint16_t	 p = htons(port);

	nft_r_dport(r);
	nft_r_cmp(r, NFT_CMP_EQ, &p, sizeof(p));
}

void
nft_r_tcp_dport(struct nftnl_rule *r, uint16_t port)
{
	uint8_t		 tcp = IPPROTO_TCP;

	nft_r_meta(r, NFT_META_L4PROTO);
	nft_r_cmp(r, NFT_CMP_EQ, &tcp, sizeof(tcp));
	nft_r_dport_eq(r, port);
}

void
nft_r_tcp_dport_range(struct nftnl_rule *r, uint16_t lo, uint16_t hi)
{
	uint8_t		 tcp = IPPROTO_TCP;
	uint16_t	 l = htons(lo), u = htons(hi);

	nft_r_meta(r, NFT_META_L4PROTO);
	nft_r_cmp(r, NFT_CMP_EQ, &tcp, sizeof(tcp));
	/* Network order compares as the numbers do. */
	nft_r_dport(r);
	nft_r_cmp(r, NFT_CMP_GTE, &l, sizeof(l));
	nft_r_cmp(r, NFT_CMP_LTE, &u, sizeof(u));
}

void
nft_r_dnat4(struct nftnl_rule *r, const struct in_addr *to, uint16_t port)
{
	struct nftnl_expr	*e;
	uint16_t		 p = htons(port);

	e = nft_expr(r, "immediate");
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
	nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &to->s_addr, 4);
	e = nft_expr(r, "immediate");
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_2);
	nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &p, sizeof(p));
	e = nft_expr(r, "nat");
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_TYPE, NFT_NAT_DNAT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_FAMILY, NFPROTO_IPV4);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_REG_ADDR_MIN, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_REG_PROTO_MIN, NFT_REG_2);
}
