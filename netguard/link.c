/*
 * rtnetlink requests, one at a time, each acknowledged: netguard trusts
 * the kernel's replies but still checks every message's size and type
 * through libmnl.  Every failure leaves its reason in ln->err.
 */
#include <sys/socket.h>
#include <arpa/inet.h>
#include <net/if.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include <errno.h>
#include <libmnl/libmnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "link.h"
#include "netns.h"

#define LINK_BUF	4096	/* one request */
#define LINK_RECV_BUF	32768	/* one read of replies */

int
link_open(struct link_ns *ln, int nsfd)
{
	int	 fd;

	memset(ln, 0, sizeof(*ln));
	ln->seq = (uint32_t)time(NULL);
	if ((fd = netns_socket(nsfd, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)) == -1) {
		snprintf(ln->err, sizeof(ln->err), "rtnetlink socket: %s",
		    strerror(errno));
		return -1;
	}
	if ((ln->nl = mnl_socket_fdopen(fd)) == NULL ||
	    mnl_socket_bind(ln->nl, 0, MNL_SOCKET_AUTOPID) == -1) {
		snprintf(ln->err, sizeof(ln->err), "rtnetlink bind: %s",
		    strerror(errno));
		if (ln->nl != NULL)
			mnl_socket_close(ln->nl);
		else
			close(fd);
		ln->nl = NULL;
		return -1;
	}
	return 0;
}

void
link_close(struct link_ns *ln)
{
	if (ln->nl != NULL)
		mnl_socket_close(ln->nl);
	ln->nl = NULL;
}

/* Sends nlh and reads replies (through cb, if any) up to the ACK or DONE. */
static int
link_talk(struct link_ns *ln, struct nlmsghdr *nlh, mnl_cb_t cb, void *arg,
    const char *what)
{
	char		 buf[LINK_RECV_BUF];
	uint32_t	 portid = mnl_socket_get_portid(ln->nl);
	ssize_t		 n;
	int		 rc;

	nlh->nlmsg_seq = ++ln->seq;
	nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_sendto(ln->nl, nlh, nlh->nlmsg_len) == -1)
		goto fail;
	do {
		if ((n = mnl_socket_recvfrom(ln->nl, buf, sizeof(buf))) == -1)
			goto fail;
		rc = mnl_cb_run(buf, (size_t)n, ln->seq, portid, cb, arg);
	} while (rc > 0);
	if (rc == -1)
		goto fail;
	return 0;
fail:
	snprintf(ln->err, sizeof(ln->err), "%s: %s", what, strerror(errno));
	return -1;
}

static struct nlmsghdr *
link_msg(char *buf, uint16_t type, uint16_t flags)
{
	struct nlmsghdr	*nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	return nlh;
}

static int
index_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct ifinfomsg	*ifi = mnl_nlmsg_get_payload(nlh);

	*(int *)arg = ifi->ifi_index;
	return MNL_CB_OK;
}

int
link_index(struct link_ns *ln, const char *name)
{
	char			 buf[LINK_BUF];
	struct nlmsghdr		*nlh = link_msg(buf, RTM_GETLINK, 0);
	struct ifinfomsg	*ifi;
	int			 idx = 0;

	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	if (link_talk(ln, nlh, index_cb, &idx, name) == -1)
		return errno == ENODEV ? 0 : -1;
	return idx;
}

int
link_set_up(struct link_ns *ln, int ifindex, int up)
{
	char			 buf[LINK_BUF];
	struct nlmsghdr		*nlh = link_msg(buf, RTM_NEWLINK, 0);
	struct ifinfomsg	*ifi;

	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	ifi->ifi_change = IFF_UP;
	ifi->ifi_flags = up ? IFF_UP : 0;
	return link_talk(ln, nlh, NULL, NULL, up ? "link up" : "link down");
}

int
link_veth_add(struct link_ns *ln, const char *name, const char *peer,
    int peer_nsfd)
{
	char			 buf[LINK_BUF];
	struct nlmsghdr		*nlh = link_msg(buf, RTM_NEWLINK,
				    NLM_F_CREATE | NLM_F_EXCL);
	struct ifinfomsg	*ifi, *pifi;
	struct nlattr		*info, *data, *pinfo;

	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	pinfo = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
	/* The peer's attributes follow its own ifinfomsg. */
	pifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*pifi));
	memset(pifi, 0, sizeof(*pifi));
	pifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, peer);
	mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)peer_nsfd);
	mnl_attr_nest_end(nlh, pinfo);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	return link_talk(ln, nlh, NULL, NULL, "veth");
}

int
link_del(struct link_ns *ln, int ifindex)
{
	char			 buf[LINK_BUF];
	struct nlmsghdr		*nlh = link_msg(buf, RTM_DELLINK, 0);
	struct ifinfomsg	*ifi;

	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return link_talk(ln, nlh, NULL, NULL, "link delete");
}

int
link_addr4_add(struct link_ns *ln, int ifindex, struct in_addr addr,
    unsigned prefix)
{
	char			 buf[LINK_BUF];
	struct nlmsghdr		*nlh = link_msg(buf, RTM_NEWADDR,
				    NLM_F_CREATE | NLM_F_REPLACE);
	struct ifaddrmsg	*ifa;

	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = (uint8_t)prefix;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (uint32_t)ifindex;
	mnl_attr_put(nlh, IFA_LOCAL, sizeof(addr), &addr);
	mnl_attr_put(nlh, IFA_ADDRESS, sizeof(addr), &addr);
	return link_talk(ln, nlh, NULL, NULL, "address");
}

int
link_route4_default(struct link_ns *ln, int ifindex, struct in_addr gw)
{
	char		 buf[LINK_BUF];
	struct nlmsghdr	*nlh = link_msg(buf, RTM_NEWROUTE,
			    NLM_F_CREATE | NLM_F_REPLACE);
	struct rtmsg	*rtm;

	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = 0;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put(nlh, RTA_GATEWAY, sizeof(gw), &gw);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)ifindex);
	return link_talk(ln, nlh, NULL, NULL, "default route");
}

struct link_walk {
	const char	*prefix;
	void		(*fn)(void *, int, const char *);
	void		*arg;
	int		 idx[256];
	char		 name[256][IFNAMSIZ];
	unsigned	 n;
};

static int
walk_attr_cb(const struct nlattr *a, void *arg)
{
	if (mnl_attr_get_type(a) == IFLA_IFNAME &&
	    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
		*(const char **)arg = mnl_attr_get_str(a);
	return MNL_CB_OK;
}

static int
walk_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct link_walk	*w = arg;
	struct ifinfomsg	*ifi = mnl_nlmsg_get_payload(nlh);
	const char		*name = NULL;

	mnl_attr_parse(nlh, sizeof(*ifi), walk_attr_cb, &name);
	if (name != NULL && strncmp(name, w->prefix, strlen(w->prefix)) == 0 &&
	    w->n < 256 && strlen(name) < IFNAMSIZ) {
		w->idx[w->n] = ifi->ifi_index;
		snprintf(w->name[w->n++], IFNAMSIZ, "%s", name);
	}
	return MNL_CB_OK;
}

int
link_foreach_prefix(struct link_ns *ln, const char *prefix,
    void (*fn)(void *, int, const char *), void *arg)
{
	char			 buf[LINK_BUF];
	struct nlmsghdr		*nlh = link_msg(buf, RTM_GETLINK, NLM_F_DUMP);
	struct ifinfomsg	*ifi;
	struct link_walk	*w = calloc(1, sizeof(*w));
	unsigned		 i;

	if (w == NULL)
		return -1;
	w->prefix = prefix;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	/* Collected first: fn may change links while the dump runs. */
	if (link_talk(ln, nlh, walk_cb, w, "link dump") == -1) {
		free(w);
		return -1;
	}
	for (i = 0; i < w->n; i++)
		fn(arg, w->idx[i], w->name[i]);
	free(w);
	return 0;
}
