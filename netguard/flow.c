/*
 * Reads conntrack's DESTROY events inside a sandbox's namespace.  The
 * messages come from the kernel, but describe traffic the sandbox chose:
 * libnetfilter_conntrack parses them, and a flow lacking what a record
 * needs (addresses, a mark) is skipped.  Only datagrams the kernel sent
 * (port id 0) are read: the library exit()s on a malformed attribute.
 * The sockets are non-blocking.
 */
#include <sys/socket.h>
#include <netinet/in.h>

#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>

#include "flow.h"
#include "log.h"
#include "netns.h"
#include "nft.h"
#include "util.h"

#define FLOW_RECV_SIZE	16384		/* one datagram of events */
#define FLOW_REQ_SIZE	1024		/* one DELETE request, its ACK */
#define NS_PER_S	1000000000ull

struct flow_reader {
	int		 fd;		/* events: DESTROY and UPDATE */
	int		 req;		/* DELETE requests */
	struct event	*ev;
	flow_fn		*fn;
	void		*owner;
	uint64_t	 overruns;
	uint32_t	 seq;
	uint8_t		 buf[FLOW_RECV_SIZE];
};

struct flow_open_job {
	int		 fd, req;
	char		 err[128];
};

/* A sysctl of the calling thread's namespace (its /proc/sys/net view). */
static int
flow_sysctl(const char *name, unsigned value, char *err, size_t errlen)
{
	char	 path[128], v[16];
	int	 fd, n, rc;

	(void)snprintf(path, sizeof(path), "/proc/sys/net/netfilter/%s", name);
	n = snprintf(v, sizeof(v), "%u\n", value);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1) {
		(void)snprintf(err, errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	if ((rc = write_all(fd, v, (size_t)n)) == -1)
		(void)snprintf(err, errlen, "%s: %s", name, strerror(errno));
	close(fd);
	return rc;
}

static int
flow_socket(struct flow_open_job *j, uint32_t groups)
{
	struct sockaddr_nl	 sa;
	int			 fd;

	if ((fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    NETLINK_NETFILTER)) == -1) {
		(void)snprintf(j->err, sizeof(j->err), "socket: %s",
		    strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = groups;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		(void)snprintf(j->err, sizeof(j->err), "bind conntrack "
		    "events: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Inside the namespace: the sysctls first (accounting and timestamps are
 * taken at a connection's creation, so they hold for flows made after),
 * then the sockets, made there.
 */
static int
flow_activate(void *arg)
{
	struct flow_open_job	*j = arg;
	int			 size = FLOW_RCVBUF;

	if (flow_sysctl("nf_conntrack_acct", 1, j->err, sizeof(j->err)) ==
	    -1 || flow_sysctl("nf_conntrack_timestamp", 1, j->err,
	    sizeof(j->err)) == -1)
		return -1;
	if ((j->fd = flow_socket(j, (1u << (NFNLGRP_CONNTRACK_DESTROY - 1)) |
	    (1u << (NFNLGRP_CONNTRACK_UPDATE - 1)))) == -1)
		return -1;
	/* FORCE: root may pass rmem_max; else the kernel's limit holds. */
	if (setsockopt(j->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size,
	    sizeof(size)) == -1)
		(void)setsockopt(j->fd, SOL_SOCKET, SO_RCVBUF, &size,
		    sizeof(size));
	if ((j->req = flow_socket(j, 0)) == -1) {
		close(j->fd);
		j->fd = -1;
		return -1;
	}
	return 0;
}

static int
flow_from_ct(const struct nf_conntrack *ct, struct flow *f)
{
	uint64_t	 stop;

	memset(f, 0, sizeof(*f));
	if (!nfct_attr_is_set(ct, ATTR_MARK) ||
	    !nfct_attr_is_set(ct, ATTR_ORIG_L3PROTO) ||
	    !nfct_attr_is_set(ct, ATTR_ORIG_L4PROTO))
		return 0;
	f->mark = nfct_get_attr_u32(ct, ATTR_MARK);
	if ((f->mark & 0xffff0000u) != NFT_MARK_BASE ||
	    f->mark == NFT_MARK_BASE)
		return 0;
	f->proto = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);
	switch (nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO)) {
	case AF_INET:
		if (!nfct_attr_is_set(ct, ATTR_ORIG_IPV4_SRC) ||
		    !nfct_attr_is_set(ct, ATTR_ORIG_IPV4_DST))
			return -1;
		f->family = AF_INET;
		memcpy(f->src, nfct_get_attr(ct, ATTR_ORIG_IPV4_SRC), 4);
		memcpy(f->dst, nfct_get_attr(ct, ATTR_ORIG_IPV4_DST), 4);
		break;
	case AF_INET6:
		if (!nfct_attr_is_set(ct, ATTR_ORIG_IPV6_SRC) ||
		    !nfct_attr_is_set(ct, ATTR_ORIG_IPV6_DST))
			return -1;
		f->family = AF_INET6;
		memcpy(f->src, nfct_get_attr(ct, ATTR_ORIG_IPV6_SRC), 16);
		memcpy(f->dst, nfct_get_attr(ct, ATTR_ORIG_IPV6_DST), 16);
		break;
	default:
		return -1;
	}
	if ((f->proto == IPPROTO_TCP || f->proto == IPPROTO_UDP ||
	    f->proto == IPPROTO_SCTP) &&
	    nfct_attr_is_set(ct, ATTR_ORIG_PORT_SRC) &&
	    nfct_attr_is_set(ct, ATTR_ORIG_PORT_DST)) {
		f->ports = true;
		f->sport = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC));
		f->dport = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST));
	}
	if (nfct_attr_is_set(ct, ATTR_ORIG_COUNTER_BYTES)) {
		f->bytes_out = nfct_get_attr_u64(ct, ATTR_ORIG_COUNTER_BYTES);
		f->packets_out = nfct_get_attr_u64(ct,
		    ATTR_ORIG_COUNTER_PACKETS);
	}
	if (nfct_attr_is_set(ct, ATTR_REPL_COUNTER_BYTES)) {
		f->bytes_in = nfct_get_attr_u64(ct, ATTR_REPL_COUNTER_BYTES);
		f->packets_in = nfct_get_attr_u64(ct,
		    ATTR_REPL_COUNTER_PACKETS);
	}
	if (nfct_attr_is_set(ct, ATTR_TIMESTAMP_START) &&
	    nfct_attr_is_set(ct, ATTR_TIMESTAMP_STOP)) {
		f->start_ns = nfct_get_attr_u64(ct, ATTR_TIMESTAMP_START);
		stop = nfct_get_attr_u64(ct, ATTR_TIMESTAMP_STOP);
		f->end_ns = stop > f->start_ns ? stop : f->start_ns;
	}
	return 1;
}

int
flow_parse(const void *nlmsg, size_t len, struct flow *f)
{
	const struct nlmsghdr	*nlh = nlmsg;
	struct nf_conntrack	*ct;
	int			 rc;

	if (len < sizeof(*nlh) || nlh->nlmsg_len < NLMSG_HDRLEN +
	    sizeof(struct nfgenmsg) || nlh->nlmsg_len > len)
		return -1;
	if (nlh->nlmsg_type != ((NFNL_SUBSYS_CTNETLINK << 8) |
	    IPCTNL_MSG_CT_DELETE))
		return 0;
	if ((ct = nfct_new()) == NULL)
		fatal("nfct_new");
	if (nfct_nlmsg_parse(nlh, ct) < 0)
		rc = -1;
	else
		rc = flow_from_ct(ct, f);
	nfct_destroy(ct);
	return rc;
}

/*
 * A marked TCP connection reached TIME_WAIT or CLOSE: every packet of it
 * is counted.  conntrack would keep it for that state's timeout (120 s,
 * 10 s) and its garbage collector report it up to a minute after that;
 * deleting it now makes the DESTROY event, counters and all, come at once.
 * A late packet of it (a retransmitted FIN) is then judged as new: the
 * input chain drops it, the output chain applies the policy again.
 */
static void
flow_update(struct flow_reader *fr, const struct nlmsghdr *nlh)
{
	struct nf_conntrack	*ct, *del;
	struct nlmsghdr		*req;
	struct nfgenmsg		*nfg;
	uint8_t			 st, buf[FLOW_REQ_SIZE], ack[FLOW_REQ_SIZE];
	uint32_t		 mark;

	if ((ct = nfct_new()) == NULL || (del = nfct_new()) == NULL)
		fatal("nfct_new");
	if (nfct_nlmsg_parse(nlh, ct) < 0 ||
	    !nfct_attr_is_set(ct, ATTR_MARK) ||
	    !nfct_attr_is_set(ct, ATTR_TCP_STATE) ||
	    !nfct_attr_is_set(ct, ATTR_ID) ||
	    nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO) != IPPROTO_TCP)
		goto out;
	mark = nfct_get_attr_u32(ct, ATTR_MARK);
	st = nfct_get_attr_u8(ct, ATTR_TCP_STATE);
	if ((mark & 0xffff0000u) != NFT_MARK_BASE ||
	    (st != TCP_CONNTRACK_TIME_WAIT && st != TCP_CONNTRACK_CLOSE))
		goto out;
	/* The original tuple and the id: this entry and no later one. */
	nfct_copy(del, ct, NFCT_CP_ORIG);
	nfct_set_attr_u32(del, ATTR_ID, nfct_get_attr_u32(ct, ATTR_ID));
	req = mnl_nlmsg_put_header(buf);
	req->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE;
	req->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req->nlmsg_seq = ++fr->seq;
	nfg = mnl_nlmsg_put_extra_header(req, sizeof(*nfg));
	nfg->nfgen_family = nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO);
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	if (nfct_nlmsg_build(req, del) < 0 || req->nlmsg_len > sizeof(buf))
		fatalx("flow: delete request");
	/* The kernel answers inside send(); the ACK (or ENOENT: it went
	 * already) is read and dropped, never waited for. */
	if (send(fr->req, req, req->nlmsg_len, 0) == -1)
		log_warn("conntrack delete");
	else
		while (recv(fr->req, ack, sizeof(ack), MSG_DONTWAIT) > 0)
			;
out:
	nfct_destroy(del);
	nfct_destroy(ct);
}

static int
flow_msg_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct flow_reader	*fr = arg;
	struct flow		 f;

	if (nlh->nlmsg_type == ((NFNL_SUBSYS_CTNETLINK << 8) |
	    IPCTNL_MSG_CT_NEW))
		flow_update(fr, nlh);
	else if (flow_parse(nlh, nlh->nlmsg_len, &f) == 1)
		fr->fn(fr->owner, &f);
	return MNL_CB_OK;
}

/* Up to FLOW_DISPATCH_MAX datagrams, so the loop's other work goes on;
 * 1 when more may be queued. */
static int
flow_read(struct flow_reader *fr)
{
	struct sockaddr_nl	 from;
	socklen_t		 fromlen;
	ssize_t			 n;
	int			 i;

	for (i = 0; i < FLOW_DISPATCH_MAX; i++) {
		fromlen = sizeof(from);
		n = recvfrom(fr->fd, fr->buf, sizeof(fr->buf), MSG_DONTWAIT,
		    (struct sockaddr *)&from, &fromlen);
		if (n == -1) {
			if (errno == ENOBUFS) {
				fr->overruns++;
				continue;
			}
			if (errno != EAGAIN && errno != EINTR)
				log_warn("conntrack events: recv");
			return 0;
		}
		if (n == 0)
			return 0;
		if (fromlen != sizeof(from) || from.nl_pid != 0)
			continue;	/* not the kernel's */
		/* seq 0, portid 0: events, no request to match. */
		(void)mnl_cb_run(fr->buf, (size_t)n, 0, 0, flow_msg_cb, fr);
	}
	return 1;
}

static void
flow_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)flow_read(arg);
}

struct flow_reader *
flow_open(struct event_base *base, int nsfd, flow_fn *fn, void *owner,
    char *err, size_t errlen)
{
	struct flow_open_job	 j;
	struct flow_reader	*fr;

	memset(&j, 0, sizeof(j));
	j.fd = j.req = -1;
	if (netns_call(nsfd, flow_activate, &j) == -1) {
		(void)snprintf(err, errlen, "conntrack: %s", j.err[0] ? j.err :
		    strerror(errno));
		return NULL;
	}
	fr = xcalloc(1, sizeof(*fr));
	fr->fd = j.fd;
	fr->req = j.req;
	fr->fn = fn;
	fr->owner = owner;
	if ((fr->ev = event_new(base, fr->fd, EV_READ | EV_PERSIST,
	    flow_read_cb, fr)) == NULL || event_add(fr->ev, NULL) == -1)
		fatalx("flow: event");
	return fr;
}

void
flow_drain(struct flow_reader *fr)
{
	/* Bounded too: the receive buffer holds at most FLOW_RCVBUF. */
	size_t	 i, max = FLOW_RCVBUF / FLOW_DISPATCH_MAX / 64 + 1;

	for (i = 0; fr != NULL && i < max && flow_read(fr); i++)
		;
}

uint64_t
flow_overruns(struct flow_reader *fr)
{
	uint64_t	 n = fr->overruns;

	fr->overruns = 0;
	return n;
}

void
flow_close(struct flow_reader *fr)
{
	if (fr == NULL)
		return;
	event_free(fr->ev);
	close(fr->fd);
	close(fr->req);
	free(fr);
}
