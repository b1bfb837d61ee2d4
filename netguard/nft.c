/*
 * nf_tables and ctnetlink for netguard: each change is one batch built
 * with libnftnl and libmnl, sent on a NETLINK_NETFILTER socket that lives
 * in the target namespace, and every ACK is read.  Trusts the policy to be
 * validated (policy.c) but still checks what would make a message wrong.
 */
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>

#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>

#include "log.h"
#include "netns.h"
#include "nft.h"
#include "util.h"

#define NFT_BATCH_INIT		(64u << 10)
#define NFT_BATCH_MAX		(64u << 20)	/* POLICY_CIDRS_MAX IPv6 fit */
#define NFT_BATCH_KEEP		(1u << 20)	/* kept between calls */
/* Elements per message: the list is one attribute, and nla_len has 16
 * bits.  Every message fits in NFT_MSG_ROOM. */
#define NFT_ELEMS_MAX		(32u << 10)
#define NFT_MSG_ROOM		(NFT_ELEMS_MAX + 4096)
#define NFT_ACK_COST		1024	/* receive buffer per ACK (truesize) */
#define NFT_SOCKBUF_MAX		(256 << 20)
#define NFT_ACK_WAIT_MS		2000	/* the kernel answers during send */
#define NFT_RECV_SIZE		32768
#define NFT_ACK_SLOT		1024	/* an ACK, or an error with TLVs */
#define NFT_ACK_SLOTS		(NFT_RECV_SIZE / NFT_ACK_SLOT)
#define NFT_WHAT_LEN		64
#define NFT_LOOPBACK		1	/* lo's ifindex in every namespace */
#define NFT_ANON_SET		"__set%d"	/* kernel picks the number */

/* nftables' datatype numbers: `nft list` prints keys by them. */
#define NFT_TYPE_IPADDR		7
#define NFT_TYPE_IP6ADDR	8
#define NFT_TYPE_INET_PROTO	12
#define NFT_TYPE_INET_SERVICE	13

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

struct nft_msg {
	size_t		 off;			/* in the batch */
	char		 what[NFT_WHAT_LEN];	/* for errors */
};

struct nft_handle {
	struct mnl_socket	*nl;
	uint32_t		 portid;
	uint32_t		 seq;
	int			 sndbuf, rcvbuf;	/* as the kernel says */
	/* The batch being built, kept between calls so that a pin allocates
	 * nothing.  A batch over NFT_BATCH_MAX is marked failed and its
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
	char			*rbuf;		/* NFT_RECV_SIZE */
};

/* An interval, both ends included, network order. */
struct nft_range {
	uint8_t		 lo[16], hi[16];
};

/* One NEWSETELEM/DELSETELEM stream, cut into messages as they fill. */
struct nft_elems {
	struct nft_handle	*h;
	struct nlmsghdr		*nlh;
	struct nlattr		*list;
	uint16_t		 type;
	const char		*set;
	uint32_t		 set_id;
	const char		*what;
};

/* ------------------------------------------------------------ batch */

static void
nft_batch_reset(struct nft_handle *h, uint16_t family, const char *table)
{
	h->family = family;
	h->table = table;
	h->len = 0;
	h->nmsgs = 0;
	h->failed = 0;
	h->set_id = 0;
	h->seq0 = h->seq;
	h->len += NLMSG_ALIGN(nftnl_batch_begin(h->buf, h->seq++)->nlmsg_len);
}

/* Room for one more message; marks the batch failed at the ceiling. */
static int
nft_batch_room(struct nft_handle *h)
{
	size_t	 cap;

	if (h->failed)
		return -1;
	if (h->cap - h->len >= NFT_MSG_ROOM)
		return 0;
	if (h->len + NFT_MSG_ROOM > NFT_BATCH_MAX) {
		h->failed = 1;
		return -1;
	}
	cap = h->cap * 2;
	if (cap > NFT_BATCH_MAX)
		cap = NFT_BATCH_MAX;
	h->buf = xrealloc(h->buf, cap);
	h->cap = cap;
	return 0;
}

/* Starts a message in the batch; what names it in errors. */
static struct nlmsghdr * __attribute__((format(printf, 5, 6)))
nft_msg_begin(struct nft_handle *h, uint16_t type, uint16_t family,
    uint16_t flags, const char *fmt, ...)
{
	struct nft_msg	*m;
	va_list		 ap;

	if (nft_batch_room(h) == -1) {
		if (h->scratch == NULL)
			h->scratch = xmalloc(NFT_MSG_ROOM);
		return nftnl_nlmsg_build_hdr(h->scratch, type, family, flags,
		    0);
	}
	if (h->nmsgs == h->msgcap) {
		h->msgcap = h->msgcap ? h->msgcap * 2 : 64;
		h->msgs = xrealloc(h->msgs, h->msgcap * sizeof(*h->msgs));
	}
	m = &h->msgs[h->nmsgs++];
	m->off = h->len;
	va_start(ap, fmt);
	(void)vsnprintf(m->what, sizeof(m->what), fmt, ap);
	va_end(ap);
	return nftnl_nlmsg_build_hdr(h->buf + h->len, type, family,
	    flags | NLM_F_ACK, h->seq++);
}

static void
nft_msg_end(struct nft_handle *h, struct nlmsghdr *nlh)
{
	if ((char *)nlh != h->scratch)
		h->len += NLMSG_ALIGN(nlh->nlmsg_len);
}

/* Grows a socket buffer to at least want bytes as the kernel counts. */
static int
nft_sockbuf(struct nft_handle *h, int opt, int force, int *cur, size_t want)
{
	socklen_t	 sl = sizeof(*cur);
	int		 fd = mnl_socket_get_fd(h->nl), v;

	if (want <= (size_t)*cur)
		return 0;
	if (want > NFT_SOCKBUF_MAX)
		want = NFT_SOCKBUF_MAX;
	v = (int)want;
	/* FORCE passes net.core.[rw]mem_max: we hold CAP_NET_ADMIN. */
	if (setsockopt(fd, SOL_SOCKET, force, &v, sizeof(v)) == -1 &&
	    setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v)) == -1)
		return -1;
	return getsockopt(fd, SOL_SOCKET, opt, cur, &sl);
}

/* The key of the element an extended ACK points at, as text, or "". */
static void
nft_err_elem(const struct nlmsghdr *orig, uint32_t offs, char *out,
    size_t outlen)
{
	const struct nlattr	*a, *key = NULL, *v;
	size_t			 klen;

	out[0] = '\0';
	if (offs < sizeof(*orig) || offs + sizeof(*a) > orig->nlmsg_len)
		return;
	a = (const struct nlattr *)((const char *)orig + offs);
	if (mnl_attr_get_type(a) != NFTA_LIST_ELEM ||
	    a->nla_len < sizeof(*a) || offs + a->nla_len > orig->nlmsg_len)
		return;
	mnl_attr_for_each_nested(v, a)
		if (mnl_attr_get_type(v) == NFTA_SET_ELEM_KEY)
			key = v;
	if (key == NULL || mnl_attr_get_payload_len(key) < sizeof(*v))
		return;
	v = mnl_attr_get_payload(key);
	if (v->nla_len < sizeof(*v) ||
	    v->nla_len > mnl_attr_get_payload_len(key))
		return;
	klen = mnl_attr_get_payload_len(v);
	if (klen == 4 || klen == 16) {
		if (inet_ntop(klen == 4 ? AF_INET : AF_INET6,
		    mnl_attr_get_payload(v), out, outlen) == NULL)
			out[0] = '\0';
	} else if (klen == 2)
		(void)snprintf(out, outlen, "port %u",
		    ntohs(mnl_attr_get_u16(v)));
}

/* err for a kernel refusal: the message's what, the element the kernel
 * pointed at (extended ACK offset) if any, and the errno. */
static void
nft_explain(struct nft_handle *h, const struct nlmsghdr *nlh, char *err,
    size_t errlen)
{
	const struct nlmsgerr	*e = mnl_nlmsg_get_payload(nlh);
	const struct nlattr	*a;
	const char		*what = "batch", *msg = "";
	char			 elem[INET6_ADDRSTRLEN] = "";
	size_t			 off, idx = 0;
	uint32_t		 offs = 0;

	if (nlh->nlmsg_seq != h->seq0) {
		idx = nlh->nlmsg_seq - h->seq0 - 1;
		what = h->msgs[idx].what;
	}
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		off = sizeof(*e);
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += NLMSG_ALIGN(e->msg.nlmsg_len) - sizeof(e->msg);
		mnl_attr_for_each(a, nlh, off) {
			if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
			    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
				msg = mnl_attr_get_str(a);
			else if (mnl_attr_get_type(a) == NLMSGERR_ATTR_OFFS &&
			    mnl_attr_validate(a, MNL_TYPE_U32) == 0)
				offs = mnl_attr_get_u32(a);
		}
	}
	if (offs != 0 && nlh->nlmsg_seq != h->seq0)
		nft_err_elem((const struct nlmsghdr *)(h->buf +
		    h->msgs[idx].off), offs, elem, sizeof(elem));
	/* nf_tables says a set is full with ENFILE, whose text misleads. */
	if (e->error == -ENFILE && *msg == '\0')
		msg = "set full";
	(void)snprintf(err, errlen, "%s: %s%s%s%s%s%s", what,
	    elem[0] ? "element " : "", elem, elem[0] ? ": " : "",
	    strerror(-e->error), *msg ? ": " : "", msg);
}

/* Counts one answer; the first refusal goes to err. */
static void
nft_ack(struct nft_handle *h, const struct nlmsghdr *nlh, size_t *got,
    int *failed, char *err, size_t errlen)
{
	const struct nlmsgerr	*e = mnl_nlmsg_get_payload(nlh);

	/* Answers to an earlier batch are stale: skip. */
	if (nlh->nlmsg_type != NLMSG_ERROR ||
	    nlh->nlmsg_seq - h->seq0 > h->nmsgs ||
	    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return;
	(*got)++;
	if (e->error == 0)
		return;
	if (!*failed)
		nft_explain(h, nlh, err, errlen);
	*failed = 1;
	/* The batch itself refused: no more answers come. */
	if (nlh->nlmsg_seq == h->seq0)
		*got = h->nmsgs;
}

/*
 * Reads the answer to every message of the batch just sent, many per
 * system call.  The kernel handles a batch inside sendmsg, so the answers
 * are queued already; the wait is a safety net.  *lost: the receive
 * buffer overflowed and some answers are gone.
 */
static int
nft_acks(struct nft_handle *h, int *lost, char *err, size_t errlen)
{
	struct mmsghdr		 mm[NFT_ACK_SLOTS];
	struct iovec		 iov[NFT_ACK_SLOTS];
	const struct nlmsghdr	*nlh;
	struct pollfd		 pfd;
	size_t			 got = 0;
	int			 failed = 0, fd = mnl_socket_get_fd(h->nl);
	int			 i, n, len;

	*lost = 0;
	pfd.fd = fd;
	pfd.events = POLLIN;
	memset(mm, 0, sizeof(mm));
	for (i = 0; i < NFT_ACK_SLOTS; i++) {
		iov[i].iov_base = h->rbuf + i * NFT_ACK_SLOT;
		iov[i].iov_len = NFT_ACK_SLOT;
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	while (got < h->nmsgs) {
		if ((n = recvmmsg(fd, mm, NFT_ACK_SLOTS, MSG_DONTWAIT,
		    NULL)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				*lost = 1;
				continue;
			}
			if (errno == EAGAIN && !*lost &&
			    poll(&pfd, 1, NFT_ACK_WAIT_MS) == 1)
				continue;
			if (errno == EAGAIN || errno == EINTR)
				break;
			(void)snprintf(err, errlen, "recvmmsg(netlink): %s",
			    strerror(errno));
			return -1;
		}
		for (i = 0; i < n; i++) {
			len = (int)mm[i].msg_len;
			for (nlh = iov[i].iov_base; mnl_nlmsg_ok(nlh, len);
			    nlh = mnl_nlmsg_next(nlh, &len))
				nft_ack(h, nlh, &got, &failed, err, errlen);
		}
	}
	if (*lost || failed)
		return -1;
	if (got < h->nmsgs) {
		(void)snprintf(err, errlen, "kernel answered %zu of %zu "
		    "messages", got, h->nmsgs);
		return -1;
	}
	return 0;
}

/*
 * Ends the batch, sends it in one sendmsg and reads every answer.  Each
 * batch built here is idempotent (replace, refresh, delete-if-present), so
 * when answers were lost to a full receive buffer it is sent again, once,
 * with room for all of them.
 */
static int
nft_batch_xfer(struct nft_handle *h, char *err, size_t errlen)
{
	struct nlmsghdr	*nlh;
	size_t		 want;
	int		 attempt, lost;

	if (h->failed) {
		(void)snprintf(err, errlen, "batch over %u bytes",
		    NFT_BATCH_MAX);
		return -1;
	}
	nlh = nftnl_batch_end(h->buf + h->len, h->seq++);
	h->len += NLMSG_ALIGN(nlh->nlmsg_len);
	/* netlink refuses a message longer than the send buffer. */
	if (nft_sockbuf(h, SO_SNDBUF, SO_SNDBUFFORCE, &h->sndbuf,
	    h->len + 4096) == -1) {
		(void)snprintf(err, errlen, "setsockopt(SO_SNDBUF): %s",
		    strerror(errno));
		return -1;
	}
	want = h->nmsgs * NFT_ACK_COST;
	for (attempt = 0;; attempt++) {
		if (nft_sockbuf(h, SO_RCVBUF, SO_RCVBUFFORCE, &h->rcvbuf,
		    want) == -1) {
			(void)snprintf(err, errlen, "setsockopt(SO_RCVBUF): %s",
			    strerror(errno));
			return -1;
		}
		if (mnl_socket_sendto(h->nl, h->buf, h->len) == -1) {
			(void)snprintf(err, errlen, "sendto(netlink, %zu "
			    "bytes): %s", h->len, strerror(errno));
			return -1;
		}
		if (nft_acks(h, &lost, err, errlen) == 0)
			return 0;
		if (!lost)
			return -1;
		if (attempt == 1) {
			(void)snprintf(err, errlen, "answers to %zu messages "
			    "lost with a %d-byte receive buffer", h->nmsgs,
			    h->rcvbuf);
			return -1;
		}
		want = (size_t)h->rcvbuf * 4 > want ? (size_t)h->rcvbuf * 4 :
		    want * 2;
	}
}

static int
nft_batch_send(struct nft_handle *h, char *err, size_t errlen)
{
	int	 rc;

	rc = nft_batch_xfer(h, err, errlen);
	/* A big policy's batch is not kept for the pins that follow. */
	if (h->cap > NFT_BATCH_KEEP) {
		free(h->buf);
		h->cap = NFT_BATCH_INIT;
		h->buf = xmalloc(h->cap);
		h->len = 0;
	}
	return rc;
}

/* ------------------------------------------------------------ objects */

static void
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
static void
nft_table_replace(struct nft_handle *h)
{
	nft_table(h, NFT_MSG_NEWTABLE);
	nft_table(h, NFT_MSG_DELTABLE);
	nft_table(h, NFT_MSG_NEWTABLE);
}

/* A set in the batch's table; anonymous when name is NULL.  Returns its
 * batch id, by which rules and elements find an anonymous set. */
static uint32_t
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

static void
nft_elems_close(struct nft_elems *e)
{
	if (e->nlh == NULL)
		return;
	mnl_attr_nest_end(e->nlh, e->list);
	nft_msg_end(e->h, e->nlh);
	e->nlh = NULL;
}

static void
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
static void
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

/* ------------------------------------------------------------ ranges */

static int
nft_addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

/* memcmp for addresses, without a call: this runs for every CIDR. */
static int
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

static void
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
static size_t
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
static void
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

static struct nftnl_expr *
nft_expr(struct nftnl_rule *r, const char *name)
{
	struct nftnl_expr	*e;

	if ((e = nftnl_expr_alloc(name)) == NULL)
		fatalx("nftnl_expr_alloc(%s): out of memory", name);
	nftnl_rule_add_expr(r, e);
	return e;
}

static struct nftnl_rule *
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
static void
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

static void
nft_r_lookup(struct nftnl_rule *r, const char *set, uint32_t set_id)
{
	struct nftnl_expr	*e = nft_expr(r, "lookup");

	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set ? set : NFT_ANON_SET);
	if (set == NULL)
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, set_id);
}

static void
nft_r_counter(struct nftnl_rule *r)
{
	(void)nft_expr(r, "counter");
}

/* Terminal: NF_ACCEPT, NF_DROP, or NFT_JUMP to chain. */
static void
nft_r_verdict(struct nftnl_rule *r, int verdict, const char *chain)
{
	struct nftnl_expr	*e = nft_expr(r, "immediate");

	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	if (chain != NULL)
		nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
}

/* ct state established,related */
static void
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

/* meta iif/oif lo */
static void
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
static void
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
static void
nft_r_daddr_in(struct nftnl_rule *r, int family, const char *set)
{
	nft_r_nfproto(r, family);
	nft_r_payload(r, NFT_PAYLOAD_NETWORK_HEADER, nft_addr_off(family, 1),
	    nft_addr_len(family));
	nft_r_lookup(r, set, 0);
}

/* An anonymous constant set for one rule, with its elements. */
static uint32_t
nft_set_anon(struct nft_handle *h, uint32_t keytype, uint32_t keylen,
    const void *keys, size_t n, const char *what)
{
	struct nft_elems	 e;
	uint32_t		 id;
	size_t			 i;

	id = nft_set(h, NULL, 0, keytype, keylen, (uint32_t)n, what);
	nft_elems_begin(&e, h, NFT_MSG_NEWSETELEM, NULL, id, what);
	for (i = 0; i < n; i++)
		nft_elem(&e, (const uint8_t *)keys + i * keylen, keylen, 0, 0,
		    0);
	nft_elems_close(&e);
	return id;
}

/* meta l4proto { tcp, udp }: guards every th dport, so that no other
 * protocol's bytes are read as a port. */
static void
nft_r_tcp_udp(struct nft_handle *h, struct nftnl_rule *r, const char *what)
{
	static const uint8_t	 protos[] = { IPPROTO_TCP, IPPROTO_UDP };
	uint32_t		 id;

	id = nft_set_anon(h, NFT_TYPE_INET_PROTO, 1, protos, nitems(protos),
	    what);
	nft_r_meta(r, NFT_META_L4PROTO);
	nft_r_lookup(r, NULL, id);
}

/* th dport: the transport header's destination port, 2 bytes at 2. */
static void
nft_r_dport(struct nftnl_rule *r)
{
	nft_r_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
}

/* meta l4proto { tcp, udp } th dport 53 */
static void
nft_r_dns(struct nft_handle *h, struct nftnl_rule *r, const char *what)
{
	uint16_t	 port = htons(53);

	nft_r_tcp_udp(h, r, what);
	nft_r_dport(r);
	nft_r_cmp(r, NFT_CMP_EQ, &port, sizeof(port));
}

static void
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
	if (spec->pool.family != AF_INET || spec->pool.prefix == 0 ||
	    spec->pool.prefix > 32) {
		(void)snprintf(err, errlen, "pool: IPv4, prefix 1..32 only");
		return -1;
	}
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
	struct nft_range	*r, *hosts;
	struct nft_elems	 e;
	size_t			 i, k, n, nh, alen = nft_addr_len(family);
	char			 name[32], what[32];
	char			 f = family == AF_INET ? '4' : '6';
	uint32_t		 id;

	has[0] = has[1] = 0;
	/* r[0..n): the ranges; hosts, after them: the single addresses. */
	r = xcalloc(g->ncidrs ? 2 * g->ncidrs : 1, sizeof(*r));
	hosts = r + g->ncidrs;
	for (i = n = 0; i < g->ncidrs; i++)
		if (g->cidrs[i].family == family)
			nft_range_from_cidr(&r[n++], &g->cidrs[i]);
	n = nft_ranges_merge(r, n, alen);
	for (i = k = nh = 0; i < n; i++) {
		if (nft_addr_cmp(r[i].lo, r[i].hi, alen) == 0)
			hosts[nh++] = r[i];
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
		id = nft_set(h, name, 0, family == AF_INET ? NFT_TYPE_IPADDR :
		    NFT_TYPE_IP6ADDR, alen, (uint32_t)nh, what);
		nft_elems_begin(&e, h, NFT_MSG_NEWSETELEM, name, id, what);
		for (i = 0; i < nh; i++)
			nft_elem(&e, hosts[i].lo, alen, 0, 0, 0);
		nft_elems_close(&e);
		has[1] = 1;
	}
	free(r);
}

/* One allow group's sets: c/h (CIDRs), n4_i/n6_i (pins), p_i (ports). */
static void
nft_sets_group(struct nft_handle *h, const struct policy_group *g, size_t gi,
    int has[4])
{
	struct nft_elems	 e;
	uint16_t		 ports[POLICY_PORTS_MAX];
	char			 name[32], what[32];
	uint32_t		 id;
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
		for (k = 0; k < n && ports[k] != g->ports[i]; k++)
			;
		if (k == n)
			ports[n++] = g->ports[i];
	}
	(void)snprintf(name, sizeof(name), "p_%zu", gi);
	id = nft_set(h, name, 0, NFT_TYPE_INET_SERVICE, 2, 0, what);
	nft_elems_begin(&e, h, NFT_MSG_NEWSETELEM, name, id, what);
	for (i = 0; i < n; i++) {
		ports[i] = htons(ports[i]);
		nft_elem(&e, &ports[i], 2, 0, 0, 0);
	}
	nft_elems_close(&e);
}

/* ip/ip6 daddr @set [meta l4proto { tcp, udp } th dport @p_i] accept */
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
	nft_r_counter(r);
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

	nft_r_counter(r);
	if (deny >= 0) {
		(void)snprintf(chain, sizeof(chain), "deny_%s",
		    nft_reasons[deny]);
		nft_r_verdict(r, NFT_JUMP, chain);
	} else
		nft_r_verdict(r, NF_ACCEPT, NULL);
	nft_rule_add(h, r, what);
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
		(void)snprintf(chain, sizeof(chain), "deny_%s", nft_reasons[d]);
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
		r = nft_rule_new(h, chain);
		nft_r_counter(r);
		nft_r_verdict(r, NF_DROP, NULL);
		nft_rule_add(h, r, "drop");
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
	nft_r_lookup(r, NULL, nft_set_anon(h, NFT_TYPE_INET_SERVICE, 2, dns,
	    nitems(dns), "dns"));
	nft_rule_out(h, r, DENY_DNS, "dns");
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
	if (p->level == LEVEL_L3)
		nft_rule_out(h, nft_rule_new(h, "output"), -1, "L3");
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

/* ------------------------------------------------------------ API */

struct nft_handle *
nft_open(int nsfd, char *err, size_t errlen)
{
	struct nft_handle	*h;
	struct mnl_socket	*nl;
	socklen_t		 sl1 = sizeof(int), sl2 = sizeof(int);
	int			 fd, on = 1;

	/* The socket is made inside the namespace and stays there. */
	if ((fd = netns_socket(nsfd, AF_NETLINK, SOCK_RAW,
	    NETLINK_NETFILTER)) == -1) {
		(void)snprintf(err, errlen, "socket(NETLINK_NETFILTER) in "
		    "namespace: %s", strerror(errno));
		return NULL;
	}
	if ((nl = mnl_socket_fdopen(fd)) == NULL) {
		(void)snprintf(err, errlen, "mnl_socket_fdopen: %s",
		    strerror(errno));
		close(fd);
		return NULL;
	}
	h = xcalloc(1, sizeof(*h));
	h->nl = nl;
	/* Errors carry only the header of what was refused (an element
	 * list can be 32 KiB), plus the offset of the refused attribute. */
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) == -1 ||
	    mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &on, sizeof(on)) == -1 ||
	    mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &on, sizeof(on)) == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &h->sndbuf, &sl1) == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &h->rcvbuf, &sl2) == -1) {
		(void)snprintf(err, errlen, "netlink socket setup: %s",
		    strerror(errno));
		mnl_socket_close(nl);
		free(h);
		return NULL;
	}
	h->portid = mnl_socket_get_portid(nl);
	h->seq = (uint32_t)mono_ms();
	h->cap = NFT_BATCH_INIT;
	h->buf = xmalloc(h->cap);
	h->rbuf = xmalloc(NFT_RECV_SIZE);
	return h;
}

void
nft_close(struct nft_handle *h)
{
	if (h == NULL)
		return;
	mnl_socket_close(h->nl);
	free(h->buf);
	free(h->rbuf);
	free(h->scratch);
	free(h->msgs);
	free(h);
}

int
nft_apply(struct nft_handle *h, const struct nft_sandbox *spec, char *err,
    size_t errlen)
{
	if (nft_spec_check(spec, err, errlen) == -1)
		return -1;
	nft_batch_reset(h, NFPROTO_INET, NFT_TABLE);
	nft_build_sandbox(h, spec);
	return nft_batch_send(h, err, errlen);
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

int
nft_pin(struct nft_handle *h, unsigned group, int family, const void *addr,
    uint32_t timeout_ms, char *err, size_t errlen)
{
	struct nft_elems	 e;
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
	nft_elems_begin(&e, h, NFT_MSG_NEWSETELEM, set, 0, what);
	nft_elem(&e, addr, alen, 0, timeout_ms, 0);
	nft_elems_close(&e);
	nft_elems_begin(&e, h, NFT_MSG_DELSETELEM, set, 0, what);
	nft_elem(&e, addr, alen, 0, 0, 0);
	nft_elems_close(&e);
	nft_elems_begin(&e, h, NFT_MSG_NEWSETELEM, set, 0, what);
	nft_elem(&e, addr, alen, 0, timeout_ms, 0);
	nft_elems_close(&e);
	return nft_batch_send(h, err, errlen);
}

/* Sends one request (not a batch) and runs cb on each answer until the
 * ACK or the end of the dump. */
static int
nft_request(struct nft_handle *h, struct nlmsghdr *nlh, mnl_cb_t cb,
    void *arg, char *err, size_t errlen)
{
	ssize_t	 n;
	int	 rc;

	/* Answers left over from a refused batch would fail the sequence
	 * check below; a pending ENOBUFS is consumed with them. */
	while (recv(mnl_socket_get_fd(h->nl), h->rbuf, NFT_RECV_SIZE,
	    MSG_DONTWAIT) > 0)
		;
	if (mnl_socket_sendto(h->nl, nlh, nlh->nlmsg_len) == -1) {
		(void)snprintf(err, errlen, "sendto(netlink): %s",
		    strerror(errno));
		return -1;
	}
	for (;;) {
		if ((n = mnl_socket_recvfrom(h->nl, h->rbuf,
		    NFT_RECV_SIZE)) == -1) {
			if (errno == EINTR)
				continue;
			(void)snprintf(err, errlen, "recv(netlink): %s",
			    strerror(errno));
			return -1;
		}
		rc = mnl_cb_run(h->rbuf, (size_t)n, nlh->nlmsg_seq, h->portid,
		    cb, arg);
		if (rc == MNL_CB_STOP)
			return 0;
		if (rc == MNL_CB_ERROR) {
			(void)snprintf(err, errlen, "%s", strerror(errno));
			return -1;
		}
	}
}

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
	nlh->nlmsg_seq = h->seq++;
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
	size_t			 d;

	if ((r = nftnl_rule_alloc()) == NULL)
		fatalx("nftnl_rule_alloc: out of memory");
	if (nftnl_rule_nlmsg_parse(nlh, r) < 0) {
		nftnl_rule_free(r);
		return MNL_CB_ERROR;
	}
	chain = nftnl_rule_get_str(r, NFTNL_RULE_CHAIN);
	for (d = 0; chain != NULL && d < DENY_MAX; d++)
		if (strncmp(chain, "deny_", 5) == 0 &&
		    strcmp(chain + 5, nft_reasons[d]) == 0)
			break;
	if (chain != NULL && d < DENY_MAX)
		n[DENY_MAX]++;
	if (chain != NULL && d < DENY_MAX &&
	    (it = nftnl_expr_iter_create(r)) != NULL) {
		while ((e = nftnl_expr_iter_next(it)) != NULL)
			if (strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME),
			    "counter") == 0)
				n[d] += nftnl_expr_get_u64(e,
				    NFTNL_EXPR_CTR_PACKETS);
		nftnl_expr_iter_destroy(it);
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

	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETRULE, NFPROTO_INET,
	    NLM_F_DUMP, h->seq++);
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

int
nft_uplink_apply(struct nft_handle *h, const struct policy_cidr *pool,
    char *err, size_t errlen)
{
	struct nftnl_rule	*r;

	if (pool->family != AF_INET || pool->prefix == 0 ||
	    pool->prefix > 32) {
		(void)snprintf(err, errlen, "pool: IPv4, prefix 1..32 only");
		return -1;
	}
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
	nft_r_counter(r);
	nft_r_verdict(r, NF_DROP, NULL);
	nft_rule_add(h, r, "pool to pool");
	/* and reach the uplink only for the resolver. */
	r = nft_rule_new(h, "input");
	nft_r_addr(r, pool, 0, NFT_CMP_EQ);
	nft_r_dns(h, r, "dns");
	nft_r_counter(r);
	nft_r_verdict(r, NF_ACCEPT, NULL);
	nft_rule_add(h, r, "dns");
	r = nft_rule_new(h, "input");
	nft_r_addr(r, pool, 0, NFT_CMP_EQ);
	nft_r_counter(r);
	nft_r_verdict(r, NF_DROP, NULL);
	nft_rule_add(h, r, "pool");
	return nft_batch_send(h, err, errlen);
}

int
nft_uplink_remove(struct nft_handle *h, char *err, size_t errlen)
{
	return nft_table_remove(h, NFPROTO_IPV4, NFT_NAT_TABLE, err, errlen);
}
