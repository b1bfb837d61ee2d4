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

#include <jansson.h>

#define POLICY_NAME_MAX		63	/* file name without .yaml */
#define POLICY_FILES_MAX	256
#define POLICY_GROUPS_MAX	32	/* allow entries per policy */
#define POLICY_PORTS_MAX	32	/* ports per allow entry */
#define POLICY_CIDRS_MAX	100000	/* CIDRs per policy, all entries */
#define POLICY_NAMES_MAX	1024	/* names per policy, all entries */
#define POLICY_UPSTREAMS_MAX	4
#define DNS_NAME_MAX		253	/* presentation form, no final dot */
#define POLICY_HTTP_MAX		16	/* HTTP destinations per policy */
#define POLICY_HTTP_RULES_MAX	32	/* rules per destination */
#define POLICY_HTTP_PATHS_MAX	32	/* path patterns per rule */
#define HTTP_PATH_MAX		256	/* one path pattern */
#define HTTP_HEADER_MAX		64	/* a credential's header name */
#define HTTP_PREFIX_MAX		32	/* "Bearer " and the like */
#define CRED_NAME_MAX		63
#define CRED_SECRET_MAX		4096	/* bytes of a secret file */

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

/* Methods a rule may allow (CONNECT and TRACE never). */
enum http_method {
	HTTP_GET	= 1 << 0,
	HTTP_HEAD	= 1 << 1,
	HTTP_POST	= 1 << 2,
	HTTP_PUT	= 1 << 3,
	HTTP_PATCH	= 1 << 4,
	HTTP_DELETE	= 1 << 5,
	HTTP_OPTIONS	= 1 << 6,
};
#define HTTP_METHODS_N	7

/* Methods on paths: "/v1/status" exactly (a query may follow), or a
 * prefix and a final star ("/v1/reports/" and anything after it). */
struct policy_http_rule {
	unsigned		 methods;	/* enum http_method bits */
	char			**paths;
	size_t			 npaths;
};

/*
 * A header added to every allowed request.  The secret is never in the
 * policy: file names a file of root's that no one else may read, checked
 * (not read) when the policy loads; the proxy's configuration reads it.
 */
struct policy_credential {
	char			 name[CRED_NAME_MAX + 1];	/* audited */
	char			 header[HTTP_HEADER_MAX + 1];
	char			 prefix[HTTP_PREFIX_MAX + 1];
	char			 file[4096];
};

/*
 * One destination (name and port, allowed by an allow entry of its own)
 * whose traffic goes through the HTTPS egress proxy: requests must match
 * a rule, and get the credential.
 */
struct policy_http {
	char			 host[DNS_NAME_MAX + 1];
	uint16_t		 port;
	size_t			 group;		/* its allow entry */
	struct policy_http_rule	*rules;
	size_t			 nrules;
	int			 has_credential;
	struct policy_credential cred;
	int			 paths_sensitive;	/* audit a hash */
	char			 ca_file[4096];	/* "": the system's */
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
	struct policy_http	*http;
	size_t			 nhttp;
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

/* policy_http.c: the policy's "http" list, checked against its allow
 * entries; errors go to ctx.  policy_http_clear frees what it kept. */
struct conf_ctx;
void	policy_http_load(struct conf_ctx *, const json_t *list,
	    struct policy *);
void	policy_http_clear(struct policy *);
/* "GET", ... for one enum http_method bit; NULL for anything else. */
const char *policy_http_method_name(unsigned bit);
/*
 * 0 when path is a regular file owned by root that only root may read
 * (mode 0600 or 0400, following a Secret mount's symlinks), at most
 * CRED_SECRET_MAX bytes; else -1 with why in err.
 */
int	policy_secret_check(const char *path, char *err, size_t errlen);

#endif
