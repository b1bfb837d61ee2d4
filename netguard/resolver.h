/*
 * netguard's resolver: the only DNS server a sandbox may reach.  One
 * listener (udp and tcp) per attached sandbox, bound to the sandbox's
 * gateway address inside the uplink namespace.  It answers only names
 * the sandbox's policy allows (NXDOMAIN otherwise), forwards them to the
 * policy's upstreams, and pins each A/AAAA answer in the sandbox's nft
 * set before the answer reaches the sandbox.  Queries are untrusted
 * input: parsed with libldns only, sizes and rates capped.  Runs on the
 * daemon's event loop and never blocks it.
 */
#ifndef NETGUARD_RESOLVER_H
#define NETGUARD_RESOLVER_H

#include <netinet/in.h>

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "policy.h"

struct resolver_conf {
	uint32_t	ttl_min;	/* pins last at least this (s) */
	uint32_t	ttl_max;	/* and at most this (s) */
	/* exfil_score() at or above this: NXDOMAIN and an alert; 0: never. */
	unsigned	tunnel_threshold;
	/* Queries per second per sandbox, beyond: dropped; 0: no cap. */
	unsigned	qps_max;
	unsigned	timeout_ms;	/* per upstream and attempt */
};

/*
 * Pins addr (network order, AF_INET or AF_INET6), an answer for name (the
 * question's, presentation form), in group's set for ttl seconds (already
 * clamped); 0 or -1.  A failed pin fails the query
 * (SERVFAIL): an answer is never sent before its address is allowed.
 */
typedef int resolver_pin_fn(void *owner, unsigned group, int family,
    const void *addr, uint32_t ttl, const char *name);
/*
 * An audit event about one query (stolen).  It carries "event" and the
 * query's fields; the owner adds session, sandbox and principal.  Keys
 * are ASCII, values strings, integers and arrays of strings:
 *   dns_allowed:  name, qtype, decision "allow", group, pinned [addr],
 *                 unpinned [addr] (only when not empty), ttl (of the
 *                 pins; 0 if none), rcode (the upstream's: "NOERROR",
 *                 "NXDOMAIN")
 *   dns_refused:  name, qtype, decision "deny", reason ("not_allowed",
 *                 "tunnelling", "upstream", "pin_failed", "malformed",
 *                 "unsupported"), rcode ("NXDOMAIN", "SERVFAIL",
 *                 "FORMERR", "REFUSED", "NOTIMP")
 *   dns_tunnel_suspected: name, qtype, score, signals [exfil names]
 * name is the presentation form (non-printables escaped), at most
 * DNS_NAME_MAX characters; name and qtype are absent when the packet
 * had no readable question.  Any event may carry "suppressed": queries
 * (and TCP connections) dropped by the rate, in-flight and connection
 * caps since the previous event.
 * A tunnelling refusal emits dns_tunnel_suspected, then dns_refused.
 */
typedef void resolver_event_fn(void *owner, json_t *event);

struct resolver;
struct resolver_client;

/*
 * Sockets (listeners, upstream queries) are made inside uplink_nsfd (-1:
 * this namespace); it stays borrowed until resolver_free.  conf is copied.
 */
struct resolver	*resolver_new(struct event_base *, int uplink_nsfd,
		    const struct resolver_conf *, resolver_pin_fn *,
		    resolver_event_fn *);
/* Closes every client still open; not from inside a callback. */
void		 resolver_free(struct resolver *);
/*
 * Listens on addr:port (udp and tcp) for one sandbox under policy
 * (borrowed until resolver_set_policy or resolver_close).  NULL with err,
 * also for a policy at L0/L1 (no resolver there).  Both sockets are bound
 * to the device that holds addr, so only the sandbox behind that veth
 * reaches them, not its neighbours through their own gateways.
 */
struct resolver_client *resolver_listen(struct resolver *, struct in_addr addr,
		    uint16_t port, const struct policy *, void *owner,
		    char *err, size_t errlen);
/* Later queries, and answers still in flight, are decided by policy;
 * at L0/L1 everything is REFUSED. */
void		 resolver_set_policy(struct resolver_client *,
		    const struct policy *);
/*
 * Closes the listeners and drops every query in flight; no callback for
 * this client follows.  Safe from inside its own pin or event callback.
 */
void		 resolver_close(struct resolver_client *);

#endif
