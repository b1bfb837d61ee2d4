/*
 * Egress policies from rules/network/NAME.yaml, parsed and validated into
 * plain structures that nft.c and resolver.c read.  A loaded policy set
 * is immutable: a reload builds a new one and swaps it in whole.
 *
 * Ownership: a policy_set owns its policies and everything they point
 * to; pointers into it are borrowed until policy_set_free().
 */
#ifndef NETGUARD_POLICY_H
#define NETGUARD_POLICY_H

#include <sys/socket.h>
#include <netinet/in.h>

#include <stddef.h>
#include <stdint.h>

#define POLICY_NAME_MAX		63	/* file name without .yaml */
#define POLICY_FILES_MAX	256
#define POLICY_GROUPS_MAX	32	/* allow entries per policy */
#define POLICY_PORTS_MAX	32	/* ports per allow entry */
#define POLICY_CIDRS_MAX	100000	/* CIDRs per policy, all entries */
#define POLICY_NAMES_MAX	1024	/* names per policy, all entries */
#define POLICY_UPSTREAMS_MAX	4
#define DNS_NAME_MAX		253	/* presentation form, no final dot */

enum policy_level {
	LEVEL_L0,	/* no network; loopback down */
	LEVEL_L1,	/* loopback only */
	LEVEL_L2,	/* allowlisted names and CIDRs, with ports */
	LEVEL_L3,	/* everything but the always-dropped set */
};

struct policy_cidr {
	int		family;		/* AF_INET or AF_INET6 */
	uint8_t		addr[16];	/* network order, host bits zero */
	uint8_t		prefix;		/* 0..32 or 0..128 */
};

/*
 * One allow entry.  Its index in policy->groups names its nft sets and
 * its log prefix; names and cidrs share its ports (tcp and udp).
 */
struct policy_group {
	uint16_t		 ports[POLICY_PORTS_MAX];	/* host order */
	unsigned		 nports;	/* 0: every port */
	struct policy_cidr	*cidrs;
	size_t			 ncidrs;
	/* Lowercase, no final dot; "*.example.org" matches exactly one
	 * label in place of the star. */
	char			**names;
	size_t			 nnames;
};

struct policy {
	char			 name[POLICY_NAME_MAX + 1];
	char			 path[4096];
	char			 sha256[65];
	enum policy_level	 level;
	struct policy_group	*groups;
	size_t			 ngroups;
	/* DNS servers the resolver forwards allowed names to (port 53). */
	struct sockaddr_storage	 upstreams[POLICY_UPSTREAMS_MAX];
	size_t			 nupstreams;
};

struct policy_set {
	struct policy		*policies;
	size_t			 npolicies;
};

/*
 * Loads every rules_dir/network/NAME.yaml; NULL after printing each error as
 * file:line:column (conf_ctx_report) when any file is wrong.
 */
struct policy_set	*policy_set_load(const char *rules_dir);
void			 policy_set_free(struct policy_set *);
const struct policy	*policy_find(const struct policy_set *, const char *name);
const char		*policy_level_name(enum policy_level);
/* "192.0.2.0/24", "2001:db8::/32" or a bare address; -1 when host bits
 * are set or it does not parse. */
int			 policy_parse_cidr(const char *, struct policy_cidr *);

/*
 * Which group allows name (lowercase, no final dot): its index, or -1.
 * Exact names first, then "*." wildcards.
 */
int	policy_match_name(const struct policy *, const char *name);

#endif
