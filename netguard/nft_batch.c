/*
 * The nf_tables netlink socket and its batches: begin, messages with ACK,
 * end, one send; every ACK read with recvmmsg, kernel errors mapped back to
 * the message and element that caused them.  Trusts no answer unchecked.
 */
#include <sys/socket.h>
#include <arpa/inet.h>

#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnftnl/common.h>

#include "netns.h"
#include "nft_int.h"
#include "util.h"

#define NFT_BATCH_INIT		(64u << 10)
#define NFT_BATCH_MAX		(64u << 20)	/* POLICY_CIDRS_MAX IPv6 fit */
#define NFT_BATCH_KEEP		(1u << 20)	/* kept between calls */
#define NFT_ACK_COST		1024	/* receive buffer per ACK (truesize) */
#define NFT_SOCKBUF_MAX		(256 << 20)
#define NFT_ACK_WAIT_MS		2000	/* the kernel answers during send */
#define NFT_RECV_SIZE		32768
#define NFT_ACK_SLOT		1024	/* an ACK, or an error with TLVs */
#define NFT_ACK_SLOTS		(NFT_RECV_SIZE / NFT_ACK_SLOT)
#define NFT_WHAT_LEN		64

/* A message of the batch, for mapping its answer back. */
struct nft_msg {
	size_t		 off;			/* in the batch */
	char		 what[NFT_WHAT_LEN];	/* for errors */
};

/* ------------------------------------------------------------ socket */

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

/* ------------------------------------------------------------ batch */

void
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
struct nlmsghdr *
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

void
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

/* ------------------------------------------------------------ send, answers */

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

int
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

/* ------------------------------------------------------------ requests */

/* Sends one request (not a batch) and runs cb on each answer until the
 * ACK or the end of the dump. */
int
nft_request(struct nft_handle *h, struct nlmsghdr *nlh, mnl_cb_t cb,
    void *arg, char *err, size_t errlen)
{
	ssize_t	 n;
	int	 rc;

	/* Answers left over from a refused batch would fail the sequence
	 * check below.  A pending ENOBUFS is reported before the answers
	 * queued behind it: consume it and go on draining. */
	while ((n = recv(mnl_socket_get_fd(h->nl), h->rbuf, NFT_RECV_SIZE,
	    MSG_DONTWAIT)) > 0 || (n == -1 && (errno == ENOBUFS ||
	    errno == EINTR)))
		;
	nlh->nlmsg_seq = h->seq++;
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
