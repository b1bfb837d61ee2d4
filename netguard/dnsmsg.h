/*
 * DNS messages for the resolver, parsed and built with libldns only:
 * a sandbox's query checked, the query sent upstream, an upstream reply
 * matched and its CNAME chain walked, and the replies a sandbox gets.
 * No I/O here; both the sandbox and the upstream are untrusted.
 */
#ifndef NETGUARD_DNSMSG_H
#define NETGUARD_DNSMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ldns/ldns.h>

#define DNSMSG_QUERY_MAX	1232	/* longest query read at all */
#define DNSMSG_UDP_MIN		512	/* UDP reply size without EDNS */
#define DNSMSG_UDP_MAX		1232	/* whatever EDNS says */
#define DNSMSG_TCP_MAX		65535	/* by its 2-byte length */
#define DNSMSG_CHAIN_MAX	16	/* CNAMEs followed */
#define DNSMSG_ADDRS_MAX	64	/* A/AAAA of one answer considered */
/* Presentation form of a wire name: 255 octets, each at most "\DDD". */
#define DNSMSG_NAME_BUF		1280

enum dnsmsg_status {
	DNSMSG_OK,
	DNSMSG_IGNORE,		/* not a query (short, or QR set): drop */
	DNSMSG_MALFORMED,	/* FORMERR */
	DNSMSG_NOTIMP,		/* an opcode other than QUERY */
	DNSMSG_REFUSED,		/* a class or type we do not serve */
};

/* A sandbox's query. */
struct dnsmsg_query {
	ldns_pkt	*pkt;		/* owned; NULL when unparseable */
	uint16_t	 id;
	uint16_t	 qtype;		/* 0 when unknown */
	uint16_t	 udp_max;	/* UDP reply the client takes */
	bool		 named;		/* name, qtype: the question's */
	/* Lowercase presentation form, no final dot ("" for the root, and
	 * when unknown). */
	char		 name[DNSMSG_NAME_BUF];
};

struct dnsmsg_addr {
	int		 family;	/* AF_INET or AF_INET6 */
	uint8_t		 addr[16];	/* network order */
	bool		 pinnable;	/* dnsmsg_addr_pinnable() */
};

/* An upstream's reply to one of our queries. */
struct dnsmsg_answer {
	ldns_pkt		*pkt;		/* owned */
	uint8_t			 rcode;
	bool			 tc;
	/* Lowest TTL of the chain's CNAMEs and addresses; 0 if none. */
	uint32_t		 ttl;
	/* A/AAAA owned by the end of the chain that starts at the
	 * question name, deduplicated; records of other owners are not
	 * here (they stay in the reply, unpinned). */
	struct dnsmsg_addr	 addrs[DNSMSG_ADDRS_MAX];
	size_t			 naddrs;
};

/*
 * Parses and checks a query: exactly one question, class IN, opcode
 * QUERY, not a zone transfer.  On anything but DNSMSG_IGNORE, q->id is
 * the query's and q->pkt is set if the packet parsed at all; the caller
 * calls dnsmsg_query_free() whatever the status.
 */
enum dnsmsg_status	 dnsmsg_query_parse(const uint8_t *, size_t,
			    struct dnsmsg_query *q);
void			 dnsmsg_query_free(struct dnsmsg_query *);

/* A reply of rcode with no records (and q's question when it has one).
 * *wire is malloc'd; 0 or -1. */
int	dnsmsg_reply_error(const struct dnsmsg_query *, uint8_t rcode,
	    uint8_t **wire, size_t *len);
/* The query we send upstream: q's question, a fresh id, RD, EDNS. */
int	dnsmsg_upstream_query(const struct dnsmsg_query *, uint16_t id,
	    uint8_t **wire, size_t *len);
/*
 * Checks that wire is the reply to the upstream query (id, QR, opcode,
 * question) and walks its answer.  -1 when it is not (ignore it); on 0
 * the caller calls dnsmsg_answer_free().
 */
int	dnsmsg_answer_parse(const uint8_t *, size_t,
	    const struct dnsmsg_query *, uint16_t id, struct dnsmsg_answer *);
void	dnsmsg_answer_free(struct dnsmsg_answer *);
/*
 * The reply the sandbox gets: the upstream's sections and flags under
 * the sandbox's id and question, every answer TTL lowered to ttl_cap
 * (0: unchanged).  A reply longer than max is cut to the question with
 * TC set.  *wire is malloc'd; 0 or -1.
 */
int	dnsmsg_reply_answer(const struct dnsmsg_query *,
	    const struct dnsmsg_answer *, uint32_t ttl_cap, size_t max,
	    uint8_t **wire, size_t *len);

/*
 * Whether an address may be pinned: false for what a rebinding answer
 * would aim at (private, loopback, link-local, CGNAT, this-network,
 * multicast, reserved, the cloud metadata addresses, and IPv4-mapped or
 * NAT64 addresses embedding one of those).
 */
bool		 dnsmsg_addr_pinnable(int family, const uint8_t *addr);
/* "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"...;
 * "RCODE" for the rest. */
const char	*dnsmsg_rcode_name(uint8_t rcode);
/* ldns's name of a type ("A", "TYPE65534"). */
void		 dnsmsg_type_name(uint16_t, char *buf, size_t len);

#endif
