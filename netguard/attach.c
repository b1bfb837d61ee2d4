/*
 * Attaching a policy to a sandbox's network namespace, changing it on
 * reload, and taking it away.  The order is fail-closed: the drop-all
 * table goes in before any link comes up, and an attach that fails
 * half-way is undone before the error is returned.  Namespace descriptors
 * come from trusted clients (SO_PEERCRED); everything else they send is
 * checked in control.c.
 */
#include <sys/socket.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit_fit.h"
#include "conf.h"
#include "flow.h"
#include "flowlog.h"
#include "log.h"
#include "netguard.h"
#include "netns.h"
#include "nflog.h"
#include "nft.h"
#include "util.h"

#define POOL_SLOT_SIZE	4	/* a /30: network, gateway, sandbox, broadcast */
#define POOL_SLOT_PREFIX 30

static int
needs_link(enum policy_level l)
{
	return l == LEVEL_L2 || l == LEVEL_L3;
}

/* An event about one attachment: who, which sandbox, which policy. */
static json_t *
att_event(const struct attachment *att, const char *name)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "event", name,
	    "session_id", att->session, "sandbox", att->sandbox, "principal",
	    att->principal, "policy", att->policy->name, "level",
	    policy_level_name(att->policy->level));
}

static void
att_audit(struct attachment *att, json_t *fields, const char *name)
{
	json_t	*ev = att_event(att, name);

	if (fields != NULL) {
		json_object_update_missing(ev, fields);
		json_decref(fields);
	}
	audit_link_send(&att->ng->audit, ev);
}

void
ng_audit(struct attachment *att, json_t *fields, const char *name)
{
	att_audit(att, fields, name);
}

static void
denied_cb(void *owner, json_t *d)
{
	struct attachment	*att = owner;
	json_t			*ev;

	att->denied++;
	/* nflog's names, in the audit schema's words. */
	ev = json_pack("{s:O, s:O, s:O, s:O, s:O}", "rule",
	    json_object_get(d, "rule"), "protocol", json_object_get(d,
	    "protocol"), "family", json_object_get(d, "family"), "src_ip",
	    json_object_get(d, "src"), "dst_ip", json_object_get(d, "dst"));
	if (json_object_get(d, "dport") != NULL)
		json_object_set(ev, "dst_port", json_object_get(d, "dport"));
	json_decref(d);
	att_audit(att, ev, "egress_denied");
}

/* Flow records and summaries (flowlog.c) go out as the sandbox's. */
static void
flow_emit_cb(void *owner, json_t *fields, const char *name)
{
	att_audit(owner, fields, name);
}

static uint64_t
flow_lost_cb(void *owner)
{
	struct attachment	*att = owner;

	return att->flows != NULL ? flow_overruns(att->flows) : 0;
}

static void
flow_cb(void *owner, const struct flow *f)
{
	struct attachment	*att = owner;

	flowlog_flow(att->flowlog, f);
}

static int
pin_cb(void *owner, unsigned group, int family, const void *addr,
    uint32_t ttl, const char *name)
{
	struct attachment	*att = owner;
	char			 err[256];

	if (nft_pin(att->nft, group, family, addr, ttl * 1000, err,
	    sizeof(err)) == -1) {
		log_warnx("%s: pin: %s", att->sandbox, err);
		return -1;
	}
	flowlog_pin(att->flowlog, family, addr, name);
	return 0;
}

/*
 * The resolver's events in the audit schema's words: every answered or
 * refused query is one dns_query with its decision.
 */
static void
dns_event_cb(void *owner, json_t *ev)
{
	struct attachment	*att = owner;
	const char		*name;

	/* A literal: the event's own string goes with json_object_del. */
	name = json_string_value(json_object_get(ev, "event"));
	name = name != NULL && strcmp(name, "dns_tunnel_suspected") == 0 ?
	    "dns_tunnel_suspected" : "dns_query";
	/* A packet with no readable question still has a record. */
	if (json_object_get(ev, "name") == NULL)
		json_object_set_new(ev, "name", json_string("(unreadable)"));
	if (json_object_get(ev, "qtype") == NULL)
		json_object_set_new(ev, "qtype", json_string("(unreadable)"));
	json_object_del(ev, "event");
	att_audit(att, ev, name);
}

/* A free /30: hint if it is free (a restored sandbox keeps its address). */
static int
slot_alloc(struct netguard *ng, int hint)
{
	unsigned	 i;

	if (hint >= 0 && (unsigned)hint < ng->nslots && !ng->slots[hint]) {
		ng->slots[hint] = 1;
		ng->nslots_used++;
		return hint;
	}
	for (i = 0; i < ng->nslots; i++)
		if (!ng->slots[i]) {
			ng->slots[i] = 1;
			ng->nslots_used++;
			return (int)i;
		}
	return -1;
}

static void
slot_addrs(const struct netguard *ng, int slot, struct in_addr *gw,
    struct in_addr *addr)
{
	uint32_t	 base;

	memcpy(&base, ng->conf.pool.addr, 4);
	base = ntohl(base) + (uint32_t)slot * POOL_SLOT_SIZE;
	gw->s_addr = htonl(base + 1);
	addr->s_addr = htonl(base + 2);
}

static int
att_lo(struct attachment *att, int up, char *err, size_t errlen)
{
	struct link_ns	 sb;
	int		 idx, rc = -1;

	if (link_open(&sb, att->nsfd) == -1)
		goto out;
	if ((idx = link_index(&sb, "lo")) > 0 && link_set_up(&sb, idx, up) == 0)
		rc = 0;
out:
	if (rc == -1)
		snprintf(err, errlen, "loopback: %s", sb.err[0] ? sb.err :
		    "no lo");
	link_close(&sb);
	return rc;
}

/*
 * Sandboxes get IPv4 only: without this the kernel's own IPv6 chatter
 * (MLD reports, router and neighbour solicitations) on eth0 would be
 * logged as denials on every attach.
 */
static int
ipv6_off(void *arg)
{
	char	 path[128];
	int	 fd, rc;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
	    (const char *)arg);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;	/* no IPv6 at all */
	rc = write_all(fd, "1\n", 2);
	close(fd);
	return rc;
}

/* The veth pair, its addresses and the sandbox's default route. */
static int
att_link_up(struct attachment *att, char *err, size_t errlen)
{
	struct netguard	*ng = att->ng;
	struct link_ns	 sb;
	int		 hidx, sidx, rc = -1;

	memset(&sb, 0, sizeof(sb));
	snprintf(att->host_if, sizeof(att->host_if), "%s%d", NG_VETH_PREFIX,
	    att->slot);
	/* A restored sandbox's old pair, from before the restart: rebuilt. */
	if ((hidx = link_index(&ng->uplink, att->host_if)) > 0 &&
	    link_del(&ng->uplink, hidx) == -1) {
		snprintf(err, errlen, "%s: %s", att->host_if, ng->uplink.err);
		att->host_if[0] = '\0';
		return -1;
	}
	if (link_veth_add(&ng->uplink, att->host_if, NG_VETH_PEER,
	    att->nsfd) == -1) {
		snprintf(err, errlen, "%s: %s", att->host_if, ng->uplink.err);
		att->host_if[0] = '\0';
		return -1;
	}
	if ((hidx = link_index(&ng->uplink, att->host_if)) <= 0 ||
	    link_addr4_add(&ng->uplink, hidx, att->gw, POOL_SLOT_PREFIX) == -1 ||
	    link_set_up(&ng->uplink, hidx, 1) == -1) {
		snprintf(err, errlen, "%s: %s", att->host_if, ng->uplink.err);
		return -1;
	}
	if (netns_call(att->nsfd, ipv6_off, NG_VETH_PEER) == -1) {
		snprintf(err, errlen, "sandbox %s: disable_ipv6: %s",
		    NG_VETH_PEER, strerror(errno));
		return -1;
	}
	if (link_open(&sb, att->nsfd) == -1 ||
	    (sidx = link_index(&sb, NG_VETH_PEER)) <= 0 ||
	    link_addr4_add(&sb, sidx, att->addr, POOL_SLOT_PREFIX) == -1 ||
	    link_set_up(&sb, sidx, 1) == -1 ||
	    link_route4_default(&sb, sidx, att->gw) == -1)
		snprintf(err, errlen, "sandbox %s: %s", NG_VETH_PEER, sb.err);
	else
		rc = 0;
	link_close(&sb);
	return rc;
}

/* Deleting one end of a veth deletes both; the slot is free again. */
static void
att_link_down(struct attachment *att)
{
	struct netguard	*ng = att->ng;
	int		 idx;

	if (att->host_if[0] != '\0' &&
	    (idx = link_index(&ng->uplink, att->host_if)) > 0 &&
	    link_del(&ng->uplink, idx) == -1)
		log_warnx("%s: %s", att->host_if, ng->uplink.err);
	att->host_if[0] = '\0';
	if (att->slot >= 0) {
		ng->slots[att->slot] = 0;
		ng->nslots_used--;
	}
	att->slot = -1;
	att->addr.s_addr = att->gw.s_addr = 0;
}

/*
 * Puts att under pol: table first (so nothing leaves while links change),
 * then loopback, veth and resolver as the level wants.  Flows already
 * open are re-judged on a change (conntrack flush).
 */
static int
att_configure(struct attachment *att, const struct policy *pol, int change,
    int slot_hint, char *err, size_t errlen)
{
	struct netguard		*ng = att->ng;
	struct nft_sandbox	 spec;
	struct nft_redirect	 rd[POLICY_HTTP_MAX];
	char			 e[256];
	size_t			 i;

	if (needs_link(pol->level) && uplink_ready(ng, err, errlen) == -1)
		return -1;
	if (needs_link(pol->level) && att->slot < 0) {
		if ((att->slot = slot_alloc(ng, slot_hint)) < 0) {
			snprintf(err, errlen, "the address pool is exhausted "
			    "(%u sandboxes)", ng->nslots);
			return -1;
		}
		slot_addrs(ng, att->slot, &att->gw, &att->addr);
	}
	memset(&spec, 0, sizeof(spec));
	spec.policy = pol;
	if (needs_link(pol->level))
		spec.resolver = att->gw;
	spec.pool = ng->conf.pool;
	spec.nflog_group = ng->conf.nflog_group;
	spec.log_rate = ng->conf.log_rate;
	/* The policy's http destinations, to the egress proxy's ports. */
	for (i = 0; pol->level == LEVEL_L2 && i < pol->nhttp; i++) {
		rd[i].group = pol->http[i].group;
		rd[i].port = pol->http[i].port;
		rd[i].to_port = (uint16_t)(ng->conf.proxy.port_base +
		    proxy_port(ng->policies, pol, i));
		spec.nredirects = i + 1;
	}
	spec.redirects = rd;
	if (nft_apply(att->nft, &spec, e, sizeof(e)) == -1) {
		snprintf(err, errlen, "nftables: %s", e);
		return -1;
	}
	att->policy = pol;
	if (att_lo(att, pol->level != LEVEL_L0, err, errlen) == -1)
		return -1;
	if (!needs_link(pol->level)) {
		if (att->dns != NULL)
			resolver_close(att->dns);
		att->dns = NULL;
		att_link_down(att);
	} else {
		if (att->host_if[0] == '\0' &&
		    att_link_up(att, err, errlen) == -1)
			return -1;
		if (att->dns != NULL)
			resolver_set_policy(att->dns, pol);
		else if ((att->dns = resolver_listen(ng->resolver, att->gw,
		    ng->conf.resolver_port, pol, att, e, sizeof(e))) == NULL) {
			snprintf(err, errlen, "resolver: %s", e);
			return -1;
		}
	}
	if (change && nft_conntrack_flush(att->nft, e, sizeof(e)) == -1)
		log_warnx("%s: conntrack: %s", att->sandbox, e);
	return 0;
}

/* What this process holds for att; the namespace keeps its setup. */
static void
att_release(struct attachment *att)
{
	if (att->dns != NULL)
		resolver_close(att->dns);
	nflog_close(att->nflog);
	flowlog_free(att->flowlog);	/* its last summary asks flows */
	flow_close(att->flows);
	if (att->nft != NULL)
		nft_close(att->nft);
	if (att->nsfd != -1)
		close(att->nsfd);
	free(att);
}

/* Takes everything away: table, veth, address, record. */
static void
att_free(struct attachment *att)
{
	char	 err[256];

	if (att->dns != NULL)
		resolver_close(att->dns);
	att->dns = NULL;
	att_link_down(att);
	if (att->nft != NULL && nft_remove(att->nft, err, sizeof(err)) == -1)
		log_warnx("%s: %s", att->sandbox, err);
	att_release(att);
}

struct attachment *
ng_find(struct netguard *ng, int nsfd, const char *sandbox)
{
	struct attachment	*att;
	dev_t			 dev = 0;
	ino_t			 ino = 0;

	if (nsfd != -1 && netns_id(nsfd, &dev, &ino) == -1)
		return NULL;
	LIST_FOREACH(att, &ng->attached, entry) {
		if (nsfd != -1 && att->dev == dev && att->ino == ino)
			return att;
		if (sandbox != NULL && strcmp(att->sandbox, sandbox) == 0)
			return att;
	}
	return NULL;
}

static json_t *
att_describe(const struct attachment *att)
{
	char	 a[INET_ADDRSTRLEN], g[INET_ADDRSTRLEN];
	json_t	*o;

	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I}", "sandbox",
	    att->sandbox, "session_id", att->session, "principal",
	    att->principal, "policy", att->policy->name, "level",
	    policy_level_name(att->policy->level), "since", att->since,
	    "denied", (json_int_t)att->denied);
	if (att->slot >= 0) {
		inet_ntop(AF_INET, &att->addr, a, sizeof(a));
		inet_ntop(AF_INET, &att->gw, g, sizeof(g));
		json_object_set_new(o, "address", json_string(a));
		json_object_set_new(o, "gateway", json_string(g));
		json_object_set_new(o, "resolver", json_string(g));
		json_object_set_new(o, "prefix", json_integer(POOL_SLOT_PREFIX));
		json_object_set_new(o, "interface", json_string(NG_VETH_PEER));
	}
	return o;
}

json_t *
ng_attach(struct netguard *ng, int nsfd, const char *sandbox,
    const char *session, const char *principal, const char *policy,
    int slot, int restored, char *err, size_t errlen)
{
	struct attachment	*att;
	const struct policy	*pol;
	struct flowlog_conf	 fc;
	json_t			*reply, *ev;
	char			 e[256];

	if (netns_check(nsfd) == -1) {
		snprintf(err, errlen, "the descriptor is not a network "
		    "namespace");
		close(nsfd);
		return NULL;
	}
	if ((pol = policy_find(ng->policies, policy)) == NULL) {
		snprintf(err, errlen, "no policy '%s' in %s/network", policy,
		    ng->rules_dir);
		close(nsfd);
		return NULL;
	}
	if (ng_find(ng, nsfd, sandbox) != NULL) {
		snprintf(err, errlen, "this namespace or sandbox id is already "
		    "attached");
		close(nsfd);
		return NULL;
	}
	att = xcalloc(1, sizeof(*att));
	att->ng = ng;
	att->nsfd = nsfd;
	att->slot = -1;
	att->policy = pol;
	(void)netns_id(nsfd, &att->dev, &att->ino);
	snprintf(att->sandbox, sizeof(att->sandbox), "%s", sandbox);
	snprintf(att->session, sizeof(att->session), "%s", session);
	snprintf(att->principal, sizeof(att->principal), "%s", principal);
	ts_now(att->since);
	fc.rate = ng->conf.flow_rate;
	fc.summary_s = ng->conf.flow_summary_s;
	att->flowlog = flowlog_new(ng->base, &fc, flow_emit_cb, flow_lost_cb,
	    att);
	/* Before any link comes up: accounting holds for flows made after. */
	if ((att->flows = flow_open(ng->base, nsfd, flow_cb, att, e,
	    sizeof(e))) == NULL) {
		snprintf(err, errlen, "flows: %s", e);
		goto fail;
	}
	if ((att->nft = nft_open(nsfd, e, sizeof(e))) == NULL) {
		snprintf(err, errlen, "nftables: %s", e);
		goto fail;
	}
	if (att_configure(att, pol, 0, slot, err, errlen) == -1)
		goto fail;
	if ((att->nflog = nflog_open(ng->base, nsfd, ng->conf.nflog_group,
	    denied_cb, att, e, sizeof(e))) == NULL) {
		snprintf(err, errlen, "nflog: %s", e);
		goto fail;
	}
	if (state_save(att, e, sizeof(e)) == -1) {
		snprintf(err, errlen, "state: %s", e);
		goto fail;
	}
	LIST_INSERT_HEAD(&ng->attached, att, entry);
	ng->nattached++;
	reply = att_describe(att);
	ev = json_object();
	if (att->slot >= 0)
		json_object_set(ev, "address", json_object_get(reply,
		    "address"));
	if (restored)
		json_object_set_new(ev, "restored", json_true());
	/* Which ruleset confines it, for evidence bundles. */
	json_object_set_new(ev, "nft_sha256", json_string(
	    nft_applied_sha256(att->nft)));
	att_audit(att, ev, "egress_attached");
	log_info("attached %s (%s) to %s", att->sandbox, att->session,
	    pol->name);
	return reply;
fail:
	/* The refusal is on record as well as in the reply. */
	att_audit(att, json_pack("{s:s}", "reason", err), "egress_refused");
	att_free(att);
	return NULL;
}

void
ng_detach(struct attachment *att, const char *reason)
{
	struct netguard	*ng = att->ng;
	char		 e[256];

	/* Flows still open end here: the flush makes conntrack report each
	 * (queued on our socket before the ACK), read before the close. */
	if (att->flows != NULL && att->nft != NULL) {
		if (nft_conntrack_flush(att->nft, e, sizeof(e)) == -1)
			log_warnx("%s: conntrack: %s", att->sandbox, e);
		flow_drain(att->flows);
	}
	if (att->flowlog != NULL)
		flowlog_summary(att->flowlog);
	LIST_REMOVE(att, entry);
	ng->nattached--;
	state_remove(att);
	att_audit(att, json_pack("{s:s, s:I}", "reason", reason, "denied",
	    (json_int_t)att->denied), "egress_detached");
	log_info("detached %s: %s", att->sandbox, reason);
	att_free(att);
	uplink_release(ng);	/* the last L2/L3 sandbox: the host as it was */
}

json_t *
ng_status(struct netguard *ng)
{
	struct attachment	*att;
	json_t			*list = json_array(), *pols = json_array(), *o;
	size_t			 i;
	char			 e[256];

	LIST_FOREACH(att, &ng->attached, entry) {
		o = att_describe(att);
		json_object_set_new(o, "dropped", nft_counters(att->nft, e,
		    sizeof(e)));
		json_array_append_new(list, o);
	}
	for (i = 0; i < ng->policies->npolicies; i++) {
		const struct policy	*p = &ng->policies->policies[i];

		json_array_append_new(pols, json_pack("{s:s, s:s, s:s}", "name",
		    p->name, "level", policy_level_name(p->level), "sha256",
		    p->sha256));
	}
	return json_pack("{s:s, s:o, s:o, s:I, s:o}", "program", "netguard",
	    "policies", pols, "attached", list, "pool_free",
	    (json_int_t)(ng->nslots - ng->nslots_used), "host_changes",
	    uplink_host_changes(ng));
}

void
ng_audit_policy_load(struct netguard *ng, const struct policy_set *set,
    const char *error)
{
	json_t	*files = json_array(), *ev;
	size_t	 i;

	for (i = 0; set != NULL && i < set->npolicies; i++)
		json_array_append_new(files, json_pack("{s:s, s:s}", "path",
		    set->policies[i].path, "sha256", set->policies[i].sha256));
	if (error == NULL)
		audit_policy_content(files);
	ev = json_pack("{s:s, s:s, s:o, s:b}", "event", "policy_load",
	    "program", "netguard", "files", files, "ok", error == NULL);
	if (error != NULL)
		json_object_set_new(ev, "error", json_string(error));
	audit_link_send(&ng->audit, ev);
}

int
ng_reload(struct netguard *ng, char *err, size_t errlen)
{
	struct policy_set	*set, *old;
	struct attachment	*att, *next;
	const struct policy	*pol;
	struct ng_conf		 conf;

	conf_errors_clear();
	if (ng_conf_load(ng->rules_dir, &conf) == -1 ||
	    (set = policy_set_load(ng->rules_dir)) == NULL) {
		/* The record carries the loaders' file:line:column lines. */
		snprintf(err, errlen, "the rules do not load: %s",
		    conf_errors_text()[0] != '\0' ? conf_errors_text() :
		    "(see the log)");
		ng_audit_policy_load(ng, NULL, conf_errors_text()[0] != '\0' ?
		    conf_errors_text() : err);
		return -1;
	}
	/* A policy in use that went away would leave sandboxes without one. */
	LIST_FOREACH(att, &ng->attached, entry)
		if (policy_find(set, att->policy->name) == NULL) {
			snprintf(err, errlen, "policy '%s' is attached to "
			    "sandbox %s and is gone from the rules",
			    att->policy->name, att->sandbox);
			ng_audit_policy_load(ng, set, err);
			policy_set_free(set);
			return -1;
		}
	old = ng->policies;
	ng->policies = set;
	/* Squid starts again on the new rules; none when none has http. */
	proxy_stop(ng);
	if (proxy_start(ng, err, errlen) == -1)
		log_warnx("egress proxy: %s", err);
	for (att = LIST_FIRST(&ng->attached); att != NULL; att = next) {
		next = LIST_NEXT(att, entry);
		pol = policy_find(set, att->policy->name);
		if (att_configure(att, pol, 1, -1, err, errlen) == -1) {
			/* Fail closed: this sandbox loses its network. */
			log_warnx("%s: %s; detached", att->sandbox, err);
			att->policy = pol;
			ng_detach(att, "reload failed");
		}
	}
	policy_set_free(old);
	ng_audit_policy_load(ng, set, NULL);
	log_info("policies reloaded: %zu", set->npolicies);
	return 0;
}

static void
reap_cb(evutil_socket_t fd, short ev, void *arg)
{
	state_reap(arg);
}

int
ng_init(struct netguard *ng, char *err, size_t errlen)
{
	struct timeval	 tv = { NG_REAP_INTERVAL_S, 0 };
	json_t		*removed = json_array();
	int		 rc = -1;

	LIST_INIT(&ng->attached);
	ng->nslots = 1u << (32 - ng->conf.pool.prefix) >> 2;
	if (ng->nslots > NG_SLOTS_MAX)
		ng->nslots = NG_SLOTS_MAX;
	ng->slots = xcalloc(ng->nslots, 1);
	if (state_init(ng, err, errlen) == -1 ||
	    uplink_open(ng, err, errlen) == -1 ||
	    proxy_start(ng, err, errlen) == -1)
		goto out;
	ng->resolver = resolver_new(ng->base, ng->uplink_fd, &ng->conf.resolver,
	    pin_cb, dns_event_cb);
	/* What a previous netguard left: restored if alive, else removed;
	 * with no L2/L3 sandbox restored, the host as it was. */
	state_restore(ng, removed);
	uplink_sweep(ng, removed);
	uplink_release(ng);
	if ((ng->reaper = event_new(ng->base, -1, EV_PERSIST, reap_cb, ng)) ==
	    NULL || event_add(ng->reaper, &tv) == -1)
		fatalx("reaper event");
	rc = 0;
out:
	if (json_array_size(removed) > 0)
		audit_link_send(&ng->audit, json_pack("{s:s, s:s, s:O}",
		    "event", "cleanup", "program", "netguard", "removed",
		    removed));
	json_decref(removed);
	return rc;
}

/*
 * Stopping keeps every attachment: the tables stay in the namespaces,
 * the veths and the NAT table stay up, the records stay in state_dir,
 * and the next netguard restores them.  Only what lives in this process
 * goes: resolver listeners, NFLOG readers, descriptors.
 */
void
ng_shutdown(struct netguard *ng)
{
	struct attachment	*att;

	/* First: Squid's last log lines still find their sandboxes. */
	proxy_stop(ng);
	while ((att = LIST_FIRST(&ng->attached)) != NULL) {
		LIST_REMOVE(att, entry);
		ng->nattached--;
		log_info("%s stays attached to %s for the next netguard",
		    att->sandbox, att->policy->name);
		att_release(att);
	}
	if (ng->reaper != NULL)
		event_free(ng->reaper);
	resolver_free(ng->resolver);
	uplink_close(ng);
	free(ng->slots);
	policy_set_free(ng->policies);
}
