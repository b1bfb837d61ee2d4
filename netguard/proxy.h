/*
 * The HTTPS egress proxy (Squid, Debian's squid-openssl) for policies'
 * "http" destinations: its configuration, generated from the loaded
 * policies, and the certificates it shows sandboxes, issued by the
 * deployment CA that only sandboxes trust.
 *
 * Each destination gets a port of its own (port_base + its index over
 * every policy, in the set's order), where Squid is a TLS accelerator for
 * that one name only: it checks each request against the destination's
 * rules, adds the credential and connects onward to the real server,
 * verifying its certificate.  A sandbox reaches that port because its
 * namespace's nat output turns connections to the destination's pinned
 * addresses into connections to it (nft.c).
 */
#ifndef NETGUARD_PROXY_H
#define NETGUARD_PROXY_H

#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>

#include "policy.h"

#define PROXY_CONF_NAME		"squid.conf"
#define PROXY_LOG_DIR		"log"		/* Squid's user's */
#define PROXY_LOG_NAME		"access.log"
#define PROXY_TLS_DIR		"tls"
#define PROXY_ERRORS_DIR	"errors"
#define PROXY_CERT_DAYS		365	/* issued again at each start and reload */
#define PROXY_PORTS_MAX		256	/* destinations over all policies */
#define PROXY_PORT_BASE		15080	/* in the uplink namespace */
#define PROXY_DIR_DEFAULT	"/run/stockade/netguard-proxy"

/* Why the proxy refused a request: X-Squid-Error names the page
 * (ERR_STOCKADE_RULE, ...), the 403's body says "stockade-egress: REASON". */
#define PROXY_REASONS	"rule", "host", "path", "upgrade", "credential-echo"

struct proxy_conf {
	char			 ca_cert[4096];	/* PEM, the deployment CA */
	char			 ca_key[4096];	/* its key: root's, 0600 */
	char			 dir[4096];	/* Squid's conf, certs, log/ */
	uint16_t		 port_base;
	struct policy_cidr	 pool;		/* sandboxes' addresses */
};

/* Whether any policy of set has an http destination. */
int	proxy_wanted(const struct policy_set *);
/* The Squid port of p's destination i (p is in set). */
uint16_t proxy_port(const struct policy_set *, const struct policy *,
	    size_t i);
/*
 * Writes dir/PROXY_CONF_NAME (mode 0600: it holds the credentials),
 * dir/PROXY_ERRORS_DIR's pages and, unless certs is 0, one certificate and
 * key per destination under dir/PROXY_TLS_DIR (0700).  dir must exist,
 * root's, and reachable by Squid's user, who writes dir/PROXY_LOG_DIR.
 * -1 with err, and nothing usable written.
 */
int	proxy_conf_write(const struct policy_set *, const struct proxy_conf *,
	    const char *dir, int certs, char *err, size_t errlen);

/* One line of the access log, parsed (proxy_log.c). */
#define PROXY_LOG_FIELDS	11
struct proxy_record {
	struct in_addr		 client;	/* the sandbox's address */
	uint16_t		 port;		/* Squid's: the destination */
	char			 method[16];
	unsigned		 status;
	uint64_t		 bytes_out;	/* from the sandbox */
	uint64_t		 bytes_in;	/* to it */
	uint64_t		 duration_ms;
	char			 error[48];	/* "-" or Squid's page name */
	char			 rule[16];	/* "-" or "rN": which allowed */
	char			 path[4096];
};
/* 0, or -1 when line is not exactly what the logformat writes. */
int	proxy_log_parse(const char *line, struct proxy_record *);

/* proxy_cert.c: a certificate for host, signed by the CA, its key new. */
int	proxy_cert_issue(const char *ca_cert, const char *ca_key,
	    const char *host, const char *cert_out, const char *key_out,
	    char *err, size_t errlen);

#endif
