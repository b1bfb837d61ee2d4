/*
 * mcp-exec's side of netguard: one attach per sandbox whose profile names
 * a netguard policy, made while the sandbox's init waits to be released,
 * so no code runs in a namespace without its policy.  netguard is trusted
 * to enforce; what it answers is still checked before it reaches a
 * sandbox's /etc/resolv.conf.
 */
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "network.h"
#include "ng_client.h"

static int
network_attach(void *arg, pid_t init, char *resolver, size_t resolverlen,
    char *err, size_t errlen)
{
	struct net_link	*nl = arg;
	struct in6_addr	 a6;
	struct in_addr	 a4;
	char		 path[64], e[512];
	const char	*r;
	json_t		*msg, *reply;
	int		 nsfd;

	snprintf(path, sizeof(path), "/proc/%ld/ns/net", (long)init);
	if ((nsfd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	msg = json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "attach",
	    "policy", nl->policy, "sandbox", nl->sandbox, "session_id",
	    nl->session, "principal", nl->principal);
	reply = ngc_call(nl->socket, msg, nsfd, NGC_TIMEOUT_MS, e, sizeof(e));
	json_decref(msg);
	close(nsfd);
	if (reply == NULL || !json_is_true(json_object_get(reply, "ok"))) {
		snprintf(err, errlen, "network policy '%s' not attached: %s",
		    nl->policy, reply == NULL ? e : json_string_value(
		    json_object_get(reply, "error")) ? json_string_value(
		    json_object_get(reply, "error")) : "netguard refused");
		json_decref(reply);
		return -1;
	}
	nl->attached = 1;
	/* L2 and L3 have a resolver; L0 and L1 none. */
	if ((r = json_string_value(json_object_get(reply, "resolver"))) !=
	    NULL) {
		if ((inet_pton(AF_INET, r, &a4) != 1 &&
		    inet_pton(AF_INET6, r, &a6) != 1) ||
		    strlen(r) >= resolverlen) {
			snprintf(err, errlen, "netguard gave a resolver that is "
			    "not an address");
			json_decref(reply);
			return -1;
		}
		snprintf(resolver, resolverlen, "%s", r);
	}
	json_decref(reply);
	return 0;
}

void
network_prepare(struct net_link *nl, struct sandbox_spec *spec,
    const struct profile *p, const char *netguard_socket,
    const char *session, const char *principal)
{
	memset(nl, 0, sizeof(*nl));
	if (p->tls_on) {
		nl->trust.system = p->tls_system;
		nl->trust.extra_ca = p->tls_extra_ca[0] != '\0' ?
		    p->tls_extra_ca : NULL;
		spec->trust = &nl->trust;
		spec->env_extra = trust_env;
	}
	if (!p->netguard)
		return;
	snprintf(nl->socket, sizeof(nl->socket), "%s", netguard_socket);
	snprintf(nl->policy, sizeof(nl->policy), "%s", p->network);
	snprintf(nl->sandbox, sizeof(nl->sandbox), "%s", spec->id);
	snprintf(nl->session, sizeof(nl->session), "%s", session);
	snprintf(nl->principal, sizeof(nl->principal), "%s", principal);
	spec->before_go = network_attach;
	spec->before_go_arg = nl;
}

void
network_detach(struct net_link *nl)
{
	json_t	*msg, *reply;
	char	 e[512];

	if (!nl->attached)
		return;
	nl->attached = 0;
	msg = json_pack("{s:s, s:s}", "type", "detach", "sandbox", nl->sandbox);
	reply = ngc_call(nl->socket, msg, -1, NGC_TIMEOUT_MS, e, sizeof(e));
	json_decref(msg);
	if (reply == NULL || !json_is_true(json_object_get(reply, "ok")))
		log_warnx("sandbox %s: netguard detach: %s", nl->sandbox,
		    reply == NULL ? e : json_string_value(json_object_get(reply,
		    "error")) ? json_string_value(json_object_get(reply,
		    "error")) : "refused");
	json_decref(reply);
}
