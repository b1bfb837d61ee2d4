/*
 * DNS messages for the resolver, with libldns doing every byte of
 * parsing and building.  Trusts neither side: a query comes from the
 * sandbox, a reply from an upstream that answers whatever it likes, so
 * only the chain that starts at our own question is ever believed.
 */
#include <sys/socket.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsmsg.h"
#include "log.h"
#include "util.h"

static const char *const dnsmsg_rcodes[] = {
	"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
	"YXDOMAIN", "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE",
};

const char *
dnsmsg_rcode_name(uint8_t rcode)
{
	return rcode < nitems(dnsmsg_rcodes) ? dnsmsg_rcodes[rcode] : "RCODE";
}

void
dnsmsg_type_name(uint16_t type, char *buf, size_t len)
{
	char	*s = ldns_rr_type2str((ldns_rr_type)type);

	snprintf(buf, len, "%s", s != NULL ? s : "?");
	free(s);
}

static const ldns_rr *
dnsmsg_question(const ldns_pkt *p)
{
	if (p == NULL || ldns_pkt_qdcount(p) != 1 ||
	    ldns_rr_list_rr_count(ldns_pkt_question(p)) != 1)
		return NULL;
	return ldns_rr_list_rr(ldns_pkt_question(p), 0);
}

/* name's lowercase presentation form without the final dot, into out. */
static int
dnsmsg_name(const ldns_rdf *name, char *out, size_t outlen)
{
	ldns_rdf	*canon;
	char		*s;
	size_t		 len;
	int		 rc = -1;

	if (name == NULL || ldns_rdf_get_type(name) != LDNS_RDF_TYPE_DNAME)
		return -1;
	if ((canon = ldns_rdf_clone(name)) == NULL)
		fatalx("ldns_rdf_clone: out of memory");
	ldns_dname2canonical(canon);
	s = ldns_rdf2str(canon);
	ldns_rdf_deep_free(canon);
	if (s == NULL)
		return -1;
	len = strlen(s);
	if (len > 0 && s[len - 1] == '.')
		s[--len] = '\0';
	if (len < outlen) {
		memcpy(out, s, len + 1);
		rc = 0;
	}
	free(s);
	return rc;
}

enum dnsmsg_status
dnsmsg_query_parse(const uint8_t *wire, size_t len, struct dnsmsg_query *q)
{
	const ldns_rr	*rr;
	uint16_t	 size;

	memset(q, 0, sizeof(*q));
	q->udp_max = DNSMSG_UDP_MIN;
	/* Never answer a response: two resolvers could ping-pong. */
	if (len < LDNS_HEADER_SIZE || LDNS_QR_WIRE(wire))
		return DNSMSG_IGNORE;
	q->id = LDNS_ID_WIRE(wire);
	if (len > DNSMSG_QUERY_MAX ||
	    ldns_wire2pkt(&q->pkt, wire, len) != LDNS_STATUS_OK) {
		q->pkt = NULL;
		return DNSMSG_MALFORMED;
	}
	if (ldns_pkt_edns(q->pkt)) {
		size = ldns_pkt_edns_udp_size(q->pkt);
		if (size > DNSMSG_UDP_MAX)
			size = DNSMSG_UDP_MAX;
		if (size > DNSMSG_UDP_MIN)
			q->udp_max = size;
	}
	if (ldns_pkt_get_opcode(q->pkt) != LDNS_PACKET_QUERY)
		return DNSMSG_NOTIMP;
	if ((rr = dnsmsg_question(q->pkt)) == NULL)
		return DNSMSG_MALFORMED;
	q->qtype = (uint16_t)ldns_rr_get_type(rr);
	if (dnsmsg_name(ldns_rr_owner(rr), q->name, sizeof(q->name)) == -1)
		return DNSMSG_MALFORMED;
	q->named = true;
	if (ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN)
		return DNSMSG_REFUSED;
	switch (q->qtype) {
	case LDNS_RR_TYPE_AXFR:
	case LDNS_RR_TYPE_IXFR:
	case LDNS_RR_TYPE_MAILA:
	case LDNS_RR_TYPE_MAILB:
	case LDNS_RR_TYPE_OPT:
	case LDNS_RR_TYPE_TSIG:
	case LDNS_RR_TYPE_TKEY:
		/* Zone transfers and meta types are not questions a
		 * sandbox needs answered. */
		return DNSMSG_REFUSED;
	default:
		return DNSMSG_OK;
	}
}

void
dnsmsg_query_free(struct dnsmsg_query *q)
{
	if (q->pkt != NULL)
		ldns_pkt_free(q->pkt);
	q->pkt = NULL;
}

static int
dnsmsg_wire(const ldns_pkt *p, uint8_t **wire, size_t *len)
{
	*wire = NULL;
	if (ldns_pkt2wire(wire, p, len) != LDNS_STATUS_OK) {
		free(*wire);
		*wire = NULL;
		return -1;
	}
	return 0;
}

/* A reply header for q: its id, opcode and RD/CD, EDNS if it had it. */
static ldns_pkt *
dnsmsg_reply_new(const struct dnsmsg_query *q, uint8_t rcode)
{
	ldns_pkt	*r;
	const ldns_rr	*rr;
	ldns_rr		*c;

	if ((r = ldns_pkt_new()) == NULL)
		fatalx("ldns_pkt_new: out of memory");
	ldns_pkt_set_id(r, q->id);
	ldns_pkt_set_qr(r, true);
	ldns_pkt_set_ra(r, true);
	ldns_pkt_set_rcode(r, rcode);
	if (q->pkt == NULL) {
		ldns_pkt_set_opcode(r, LDNS_PACKET_QUERY);
		return r;
	}
	ldns_pkt_set_opcode(r, ldns_pkt_get_opcode(q->pkt));
	ldns_pkt_set_rd(r, ldns_pkt_rd(q->pkt));
	ldns_pkt_set_cd(r, ldns_pkt_cd(q->pkt));
	/* The question exactly as asked: stubs compare it byte for byte. */
	if ((rr = dnsmsg_question(q->pkt)) != NULL) {
		if ((c = ldns_rr_clone(rr)) == NULL)
			fatalx("ldns_rr_clone: out of memory");
		ldns_pkt_push_rr(r, LDNS_SECTION_QUESTION, c);
	}
	if (ldns_pkt_edns(q->pkt))
		ldns_pkt_set_edns_udp_size(r, DNSMSG_UDP_MAX);
	return r;
}

int
dnsmsg_reply_error(const struct dnsmsg_query *q, uint8_t rcode,
    uint8_t **wire, size_t *len)
{
	ldns_pkt	*r = dnsmsg_reply_new(q, rcode);
	int		 rc;

	rc = dnsmsg_wire(r, wire, len);
	ldns_pkt_free(r);
	return rc;
}

int
dnsmsg_upstream_query(const struct dnsmsg_query *q, uint16_t id,
    uint8_t **wire, size_t *len)
{
	const ldns_rr	*rr;
	ldns_rdf	*name;
	ldns_pkt	*p;
	uint16_t	 flags = LDNS_RD;
	int		 rc;

	if ((rr = dnsmsg_question(q->pkt)) == NULL)
		return -1;
	if ((name = ldns_rdf_clone(ldns_rr_owner(rr))) == NULL)
		fatalx("ldns_rdf_clone: out of memory");
	if (ldns_pkt_cd(q->pkt))
		flags |= LDNS_CD;
	if ((p = ldns_pkt_query_new(name, ldns_rr_get_type(rr),
	    LDNS_RR_CLASS_IN, flags)) == NULL)
		fatalx("ldns_pkt_query_new: out of memory");
	ldns_pkt_set_id(p, id);
	ldns_pkt_set_edns_udp_size(p, DNSMSG_UDP_MAX);
	ldns_pkt_set_edns_do(p, ldns_pkt_edns_do(q->pkt));
	rc = dnsmsg_wire(p, wire, len);
	ldns_pkt_free(p);
	return rc;
}

/* An IN record of type with one rdata field, owned by name. */
static bool
dnsmsg_rr_is(const ldns_rr *rr, ldns_rr_type type, const ldns_rdf *name)
{
	return ldns_rr_get_type(rr) == type &&
	    ldns_rr_get_class(rr) == LDNS_RR_CLASS_IN &&
	    ldns_rr_rd_count(rr) == 1 &&
	    ldns_dname_compare(ldns_rr_owner(rr), name) == 0;
}

static void
dnsmsg_addr_add(struct dnsmsg_answer *a, int family, const ldns_rdf *rd)
{
	struct dnsmsg_addr	*d;
	size_t			 i, len = family == AF_INET ? 4 : 16;

	if (ldns_rdf_size(rd) != len)
		return;
	for (i = 0; i < a->naddrs; i++)
		if (a->addrs[i].family == family &&
		    memcmp(a->addrs[i].addr, ldns_rdf_data(rd), len) == 0)
			return;
	if (a->naddrs == DNSMSG_ADDRS_MAX)
		return;
	d = &a->addrs[a->naddrs++];
	memset(d, 0, sizeof(*d));
	d->family = family;
	memcpy(d->addr, ldns_rdf_data(rd), len);
	d->pinnable = dnsmsg_addr_pinnable(family, d->addr);
}

/*
 * From the question name, follow CNAMEs in the answer section, then take
 * the A/AAAA of the name the chain ends at.  Everything else in the
 * answer (records for owners off the chain) is ignored: an upstream
 * could otherwise get any address pinned under an allowed name.
 */
static void
dnsmsg_walk(struct dnsmsg_answer *a, const ldns_rdf *qname)
{
	const ldns_rr_list	*ans = ldns_pkt_answer(a->pkt);
	const ldns_rdf		*cur = qname;
	const ldns_rr		*rr, *next;
	uint32_t		 ttl = UINT32_MAX;
	size_t			 i, n = ldns_rr_list_rr_count(ans), hops;
	bool			 any = false;

	for (hops = 0; hops < DNSMSG_CHAIN_MAX; hops++) {
		next = NULL;
		for (i = 0; i < n && next == NULL; i++) {
			rr = ldns_rr_list_rr(ans, i);
			if (dnsmsg_rr_is(rr, LDNS_RR_TYPE_CNAME, cur) &&
			    ldns_rdf_get_type(ldns_rr_rdf(rr, 0)) ==
			    LDNS_RDF_TYPE_DNAME)
				next = rr;
		}
		if (next == NULL)
			break;
		if (ldns_rr_ttl(next) < ttl)
			ttl = ldns_rr_ttl(next);
		any = true;
		cur = ldns_rr_rdf(next, 0);
	}
	for (i = 0; i < n; i++) {
		rr = ldns_rr_list_rr(ans, i);
		if (dnsmsg_rr_is(rr, LDNS_RR_TYPE_A, cur))
			dnsmsg_addr_add(a, AF_INET, ldns_rr_rdf(rr, 0));
		else if (dnsmsg_rr_is(rr, LDNS_RR_TYPE_AAAA, cur))
			dnsmsg_addr_add(a, AF_INET6, ldns_rr_rdf(rr, 0));
		else
			continue;
		if (ldns_rr_ttl(rr) < ttl)
			ttl = ldns_rr_ttl(rr);
		any = true;
	}
	a->ttl = any ? ttl : 0;
}

int
dnsmsg_answer_parse(const uint8_t *wire, size_t len,
    const struct dnsmsg_query *q, uint16_t id, struct dnsmsg_answer *a)
{
	const ldns_rr	*mine, *theirs;
	ldns_pkt	*p = NULL;

	memset(a, 0, sizeof(*a));
	if ((mine = dnsmsg_question(q->pkt)) == NULL ||
	    len < LDNS_HEADER_SIZE || len > DNSMSG_TCP_MAX ||
	    ldns_wire2pkt(&p, wire, len) != LDNS_STATUS_OK)
		return -1;
	if (!ldns_pkt_qr(p) || ldns_pkt_id(p) != id ||
	    ldns_pkt_get_opcode(p) != LDNS_PACKET_QUERY ||
	    (theirs = dnsmsg_question(p)) == NULL ||
	    ldns_rr_get_type(theirs) != ldns_rr_get_type(mine) ||
	    ldns_rr_get_class(theirs) != LDNS_RR_CLASS_IN ||
	    ldns_dname_compare(ldns_rr_owner(theirs),
	    ldns_rr_owner(mine)) != 0) {
		ldns_pkt_free(p);
		return -1;
	}
	a->pkt = p;
	a->rcode = (uint8_t)ldns_pkt_get_rcode(p);
	a->tc = ldns_pkt_tc(p);
	dnsmsg_walk(a, ldns_rr_owner(mine));
	return 0;
}

void
dnsmsg_answer_free(struct dnsmsg_answer *a)
{
	if (a->pkt != NULL)
		ldns_pkt_free(a->pkt);
	a->pkt = NULL;
}

static void
dnsmsg_copy_section(ldns_pkt *to, ldns_pkt_section s, const ldns_rr_list *list,
    uint32_t ttl_cap)
{
	ldns_rr		*c;
	size_t		 i;

	for (i = 0; i < ldns_rr_list_rr_count(list); i++) {
		if ((c = ldns_rr_clone(ldns_rr_list_rr(list, i))) == NULL)
			fatalx("ldns_rr_clone: out of memory");
		if (ttl_cap != 0 && ldns_rr_ttl(c) > ttl_cap)
			ldns_rr_set_ttl(c, ttl_cap);
		ldns_pkt_push_rr(to, s, c);
	}
}

int
dnsmsg_reply_answer(const struct dnsmsg_query *q,
    const struct dnsmsg_answer *a, uint32_t ttl_cap, size_t max,
    uint8_t **wire, size_t *len)
{
	ldns_pkt	*r;
	int		 rc;

	r = dnsmsg_reply_new(q, a->rcode);
	ldns_pkt_set_aa(r, ldns_pkt_aa(a->pkt));
	ldns_pkt_set_ra(r, ldns_pkt_ra(a->pkt));
	ldns_pkt_set_ad(r, ldns_pkt_ad(a->pkt));
	ldns_pkt_set_tc(r, a->tc);
	if (ldns_pkt_edns(r))
		ldns_pkt_set_edns_do(r, ldns_pkt_edns_do(a->pkt));
	/* The TTLs the sandbox caches must not outlive the pins. */
	dnsmsg_copy_section(r, LDNS_SECTION_ANSWER,
	    ldns_pkt_answer(a->pkt), ttl_cap);
	dnsmsg_copy_section(r, LDNS_SECTION_AUTHORITY,
	    ldns_pkt_authority(a->pkt), 0);
	dnsmsg_copy_section(r, LDNS_SECTION_ADDITIONAL,
	    ldns_pkt_additional(a->pkt), 0);
	rc = dnsmsg_wire(r, wire, len);
	ldns_pkt_free(r);
	if (rc == -1 || *len <= max)
		return rc;

	/* Too long for the client's UDP: TC, so it asks again over TCP. */
	free(*wire);
	r = dnsmsg_reply_new(q, a->rcode);
	ldns_pkt_set_tc(r, true);
	rc = dnsmsg_wire(r, wire, len);
	ldns_pkt_free(r);
	return rc;
}

/* addr within prefix/bits (both network order). */
static bool
dnsmsg_in(const uint8_t *addr, const uint8_t *prefix, unsigned bits)
{
	unsigned	 full = bits / 8, rest = bits % 8;
	uint8_t		 mask;

	if (memcmp(addr, prefix, full) != 0)
		return false;
	if (rest == 0)
		return true;
	mask = (uint8_t)(0xff << (8 - rest));
	return (addr[full] & mask) == (prefix[full] & mask);
}

struct dnsmsg_net {
	uint8_t		 prefix[16];
	unsigned	 bits;
};

/* IPv4 a rebinding answer could aim at.  The metadata addresses sit in
 * these too: 169.254.169.254 and 169.254.170.2 (link-local), 100.100.
 * 100.200 (CGNAT), 192.0.0.192 (192.0.0/24); 168.63.129.16 on its own. */
static const struct dnsmsg_net dnsmsg_bad4[] = {
	{ { 0 }, 8 },			/* this network */
	{ { 10 }, 8 },			/* private */
	{ { 100, 64 }, 10 },		/* CGNAT */
	{ { 127 }, 8 },			/* loopback */
	{ { 169, 254 }, 16 },		/* link-local */
	{ { 172, 16 }, 12 },		/* private */
	{ { 192, 0, 0 }, 24 },		/* IETF protocol assignments */
	{ { 192, 168 }, 16 },		/* private */
	{ { 224 }, 4 },			/* multicast */
	{ { 240 }, 4 },			/* reserved, broadcast */
	{ { 168, 63, 129, 16 }, 32 },	/* Azure wireserver */
};

/* IPv6 the same; fd00:ec2::254 and fd20:ce::254 are in fc00::/7. */
static const struct dnsmsg_net dnsmsg_bad6[] = {
	{ { 0 }, 96 },			/* ::, ::1, IPv4-compatible */
	{ { 0, 0x64, 0xff, 0x9b, 0, 1 }, 48 },	/* local-use NAT64 */
	{ { 0xfc }, 7 },		/* unique local */
	{ { 0xfe, 0x80 }, 10 },		/* link-local */
	{ { 0xfe, 0xc0 }, 10 },		/* site-local, deprecated */
	{ { 0xff }, 8 },		/* multicast */
};

/* Prefixes whose last 32 bits are an IPv4 address that is reached. */
static const struct dnsmsg_net dnsmsg_embed6[] = {
	{ { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff }, 96 },	/* v4-mapped */
	{ { 0, 0x64, 0xff, 0x9b }, 96 },		/* NAT64 */
};

bool
dnsmsg_addr_pinnable(int family, const uint8_t *addr)
{
	size_t	 i;

	if (family == AF_INET) {
		for (i = 0; i < nitems(dnsmsg_bad4); i++)
			if (dnsmsg_in(addr, dnsmsg_bad4[i].prefix,
			    dnsmsg_bad4[i].bits))
				return false;
		return true;
	}
	if (family != AF_INET6)
		return false;
	for (i = 0; i < nitems(dnsmsg_embed6); i++)
		if (dnsmsg_in(addr, dnsmsg_embed6[i].prefix,
		    dnsmsg_embed6[i].bits))
			return dnsmsg_addr_pinnable(AF_INET, addr + 12);
	for (i = 0; i < nitems(dnsmsg_bad6); i++)
		if (dnsmsg_in(addr, dnsmsg_bad6[i].prefix,
		    dnsmsg_bad6[i].bits))
			return false;
	return true;
}
