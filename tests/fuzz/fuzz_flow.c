/*
 * Fuzz target for netguard's conntrack event parse, on what a sandbox
 * controls: the values in a DESTROY event (addresses, ports, protocol,
 * counters; the mark and timestamps too, for good measure), laid out
 * as the kernel lays them out, with any attribute left out.  The layout
 * itself comes from the kernel, and flow.c takes datagrams from it only:
 * libnetfilter_conntrack exit()s on a malformed attribute (its
 * __abi_breakage), so raw bytes would only fuzz that exit.
 */
#include <sys/socket.h>
#include <netinet/in.h>

#include <endian.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>

#include "flow.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The input, byte for byte (packed); what is missing is zero. */
struct __attribute__((packed)) in {
	uint8_t		 present;	/* bit i: attribute group i is there */
	uint8_t		 v6, proto;
	uint8_t		 src[16], dst[16];
	uint16_t	 sport, dport;
	uint64_t	 c[4];		/* packets and bytes, each way */
	uint32_t	 mark;
	uint64_t	 start, stop;
};

static void
counters(struct nlmsghdr *nlh, uint16_t type, uint64_t p, uint64_t b)
{
	struct nlattr	*n = mnl_attr_nest_start(nlh, type);

	mnl_attr_put_u64(nlh, CTA_COUNTERS_PACKETS, htobe64(p));
	mnl_attr_put_u64(nlh, CTA_COUNTERS_BYTES, htobe64(b));
	mnl_attr_nest_end(nlh, n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t	 buf[1024] __attribute__((aligned(8)));
	struct in	 in;
	struct nlmsghdr	*nlh;
	struct nfgenmsg	*nfg;
	struct nlattr	*t, *n;
	struct flow	 f;
	size_t		 alen;

	memset(&in, 0, sizeof(in));
	memcpy(&in, data, size < sizeof(in) ? size : sizeof(in));
	alen = in.v6 & 1 ? 16 : 4;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = alen == 16 ? AF_INET6 : AF_INET;
	nfg->version = NFNETLINK_V0;
	if (in.present & 1) {
		t = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
		n = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
		mnl_attr_put(nlh, alen == 16 ? CTA_IP_V6_SRC : CTA_IP_V4_SRC,
		    alen, in.src);
		if (in.present & 2)
			mnl_attr_put(nlh, alen == 16 ? CTA_IP_V6_DST :
			    CTA_IP_V4_DST, alen, in.dst);
		mnl_attr_nest_end(nlh, n);
		n = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
		mnl_attr_put_u8(nlh, CTA_PROTO_NUM, in.proto);
		if (in.present & 4) {
			mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, in.sport);
			mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, in.dport);
		}
		mnl_attr_nest_end(nlh, n);
		mnl_attr_nest_end(nlh, t);
	}
	if (in.present & 8) {
		counters(nlh, CTA_COUNTERS_ORIG, in.c[0], in.c[1]);
		counters(nlh, CTA_COUNTERS_REPLY, in.c[2], in.c[3]);
	}
	if (in.present & 16)
		mnl_attr_put_u32(nlh, CTA_MARK, in.mark);
	if (in.present & 32) {
		n = mnl_attr_nest_start(nlh, CTA_TIMESTAMP);
		mnl_attr_put_u64(nlh, CTA_TIMESTAMP_START, in.start);
		mnl_attr_put_u64(nlh, CTA_TIMESTAMP_STOP, in.stop);
		mnl_attr_nest_end(nlh, n);
	}
	if (flow_parse(nlh, nlh->nlmsg_len, &f) == 1 && f.end_ns < f.start_ns)
		abort();
	return 0;
}
