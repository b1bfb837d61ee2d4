/*
 * Reads NFLOG records through libpcap inside a sandbox's namespace.  The
 * packets come from the sandbox and are untrusted: every length is checked
 * before it is used, and only the headers are read (nft copies no more).
 */
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "netns.h"
#include "nflog.h"
#include "nft.h"
#include "util.h"

/*
 * libpcap sizes its receive buffer from the snap length, and the kernel
 * batches several log messages into one netlink datagram: a buffer
 * smaller than a batch cuts it, and libpcap 1.10 then reads the last
 * message past the end.  So the buffer holds a whole batch; nft's log
 * rules copy only headers (NFT_LOG_SNAPLEN) to keep batches small.
 */
#define NFLOG_SNAPLEN		65535
#define NFLOG_DISPATCH_MAX	64	/* records per wake-up */
#define NFLOG_BUFFER		(256 * 1024)

/* linux/netfilter/nfnetlink_log.h, as DLT_NFLOG carries them. */
#define NFULA_PAYLOAD		9
#define NFULA_PREFIX		10
#define NFLOG_HDR_LEN		4
#define NFLOG_TLV_LEN		4

struct nflog {
	pcap_t		*pcap;
	struct event	*ev;
	nflog_fn	*fn;
	void		*owner;
};

struct nflog_open_job {
	pcap_t		*pcap;
	char		 name[32];
	char		 errbuf[PCAP_ERRBUF_SIZE];
};

/* Runs inside the namespace: pcap_activate makes the netlink socket. */
static int
nflog_activate(void *arg)
{
	struct nflog_open_job	*j = arg;

	if ((j->pcap = pcap_create(j->name, j->errbuf)) == NULL)
		return -1;
	if (pcap_set_snaplen(j->pcap, NFLOG_SNAPLEN) != 0 ||
	    pcap_set_immediate_mode(j->pcap, 1) != 0 ||
	    pcap_set_buffer_size(j->pcap, NFLOG_BUFFER) != 0 ||
	    pcap_activate(j->pcap) < 0 ||
	    pcap_setnonblock(j->pcap, 1, j->errbuf) == -1) {
		snprintf(j->errbuf, sizeof(j->errbuf), "%s",
		    pcap_geterr(j->pcap));
		pcap_close(j->pcap);
		j->pcap = NULL;
		return -1;
	}
	return 0;
}

/* The IP header of a denied packet: family, addresses, protocol, port. */
static int
parse_ip(const uint8_t *p, size_t len, json_t *d)
{
	char		 src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], pb[8];
	const uint8_t	*l4;
	size_t		 hl;
	uint8_t		 proto;

	if (len >= 20 && p[0] >> 4 == 4) {
		hl = (size_t)(p[0] & 0x0f) * 4;
		if (hl < 20 || hl > len)
			return -1;
		proto = p[9];
		inet_ntop(AF_INET, p + 12, src, sizeof(src));
		inet_ntop(AF_INET, p + 16, dst, sizeof(dst));
		json_object_set_new(d, "family", json_string("ipv4"));
	} else if (len >= 40 && p[0] >> 4 == 6) {
		/* The first next-header: extension headers are not followed,
		 * so such a packet reports their number, not tcp/udp. */
		hl = 40;
		proto = p[6];
		inet_ntop(AF_INET6, p + 8, src, sizeof(src));
		inet_ntop(AF_INET6, p + 24, dst, sizeof(dst));
		json_object_set_new(d, "family", json_string("ipv6"));
	} else
		return -1;
	json_object_set_new(d, "protocol", json_string(ip_proto_name(proto, pb,
	    sizeof(pb))));
	json_object_set_new(d, "src", json_string(src));
	json_object_set_new(d, "dst", json_string(dst));
	l4 = p + hl;
	if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) && len - hl >= 4)
		json_object_set_new(d, "dport", json_integer(
		    (l4[2] << 8) | l4[3]));
	return 0;
}

json_t *
nflog_parse(const uint8_t *data, size_t len)
{
	const uint8_t	*payload = NULL;
	size_t		 off = NFLOG_HDR_LEN, plen = 0, tlen;
	char		 rule[64] = "";
	uint16_t	 tl, tt;
	json_t		*d;

	if (len < NFLOG_HDR_LEN)
		return NULL;
	while (off <= len && len - off >= NFLOG_TLV_LEN) {
		/* DLT_NFLOG TLVs are in host byte order. */
		memcpy(&tl, data + off, 2);
		memcpy(&tt, data + off + 2, 2);
		tt &= 0x7fff;
		if (tl < NFLOG_TLV_LEN || tl > len - off)
			return NULL;
		tlen = tl - NFLOG_TLV_LEN;
		if (tt == NFULA_PAYLOAD) {
			payload = data + off + NFLOG_TLV_LEN;
			plen = tlen;
		} else if (tt == NFULA_PREFIX && tlen > 0 &&
		    tlen < sizeof(rule)) {
			memcpy(rule, data + off + NFLOG_TLV_LEN, tlen);
			rule[tlen] = '\0';
		}
		off += ((size_t)tl + 3) & ~(size_t)3;
	}
	/* Only netguard's own rules: "ng:<rule>". */
	if (payload == NULL || strncmp(rule, NFT_LOG_PREFIX,
	    strlen(NFT_LOG_PREFIX)) != 0 || rule[strlen(NFT_LOG_PREFIX)] == '\0')
		return NULL;
	str_ascii(rule);
	d = json_pack("{s:s}", "rule", rule + strlen(NFT_LOG_PREFIX));
	if (parse_ip(payload, plen, d) == -1) {
		json_decref(d);
		return NULL;
	}
	return d;
}

static void
nflog_record(u_char *arg, const struct pcap_pkthdr *h, const u_char *data)
{
	struct nflog	*nl = (struct nflog *)arg;
	json_t		*d;

	if ((d = nflog_parse(data, h->caplen)) != NULL)
		nl->fn(nl->owner, d);
}

static void
nflog_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct nflog	*nl = arg;

	if (pcap_dispatch(nl->pcap, NFLOG_DISPATCH_MAX, nflog_record,
	    (u_char *)nl) == -1)
		log_warnx("nflog: %s", pcap_geterr(nl->pcap));
}

struct nflog *
nflog_open(struct event_base *base, int nsfd, unsigned group, nflog_fn *fn,
    void *owner, char *err, size_t errlen)
{
	struct nflog_open_job	 j;
	struct nflog		*nl;
	int			 fd;

	memset(&j, 0, sizeof(j));
	snprintf(j.name, sizeof(j.name), "nflog:%u", group);
	if (netns_call(nsfd, nflog_activate, &j) == -1) {
		snprintf(err, errlen, "%s: %s", j.name, j.errbuf[0] ?
		    j.errbuf : strerror(errno));
		return NULL;
	}
	if (pcap_datalink(j.pcap) != DLT_NFLOG ||
	    (fd = pcap_get_selectable_fd(j.pcap)) == -1) {
		snprintf(err, errlen, "%s: not an NFLOG capture", j.name);
		pcap_close(j.pcap);
		return NULL;
	}
	nl = xcalloc(1, sizeof(*nl));
	nl->pcap = j.pcap;
	nl->fn = fn;
	nl->owner = owner;
	if ((nl->ev = event_new(base, fd, EV_READ | EV_PERSIST, nflog_read_cb,
	    nl)) == NULL || event_add(nl->ev, NULL) == -1)
		fatalx("nflog: event");
	return nl;
}

void
nflog_close(struct nflog *nl)
{
	if (nl == NULL)
		return;
	event_free(nl->ev);
	pcap_close(nl->pcap);
	free(nl);
}
