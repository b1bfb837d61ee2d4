/*
 * A sandbox's network policy through netguard: attached to the sandbox's
 * namespace before anything runs in it (sandbox_spec.before_go), detached
 * when the sandbox is gone.  Fail closed: no attach, no sandbox.
 *
 * Ownership: a net_link holds copies of its strings.
 */
#ifndef STOCKADE_NETWORK_H
#define STOCKADE_NETWORK_H

#include <limits.h>
#include <sys/types.h>

#include "profile.h"
#include "sandbox/sandbox.h"

struct net_link {
	char	 socket[PATH_MAX];
	char	 policy[PROFILE_NAME_MAX];
	char	 sandbox[SANDBOX_ID_HEX + 1];
	char	 session[64];
	char	 principal[PRINCIPAL_MAX];
	int	 attached;
	struct sandbox_trust trust;	/* spec->trust, when the profile has one */
};

/*
 * Fills link and points spec's before_go at it when p names a policy;
 * gives spec the profile's trust store and its environment (link holds
 * them: it must outlive spec).
 */
void	network_prepare(struct net_link *, struct sandbox_spec *,
	    const struct profile *p, const char *netguard_socket,
	    const char *session, const char *principal);
/* Takes the policy away again (logged when netguard cannot). */
void	network_detach(struct net_link *);

#endif
