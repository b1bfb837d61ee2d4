/*
 * What the check_oauth*.c tests share: the issuer they test against (its
 * name, audience, group map and scope) and the time they test at.
 */
#ifndef STOCKADE_OAUTH_FIXTURE_H
#define STOCKADE_OAUTH_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "transport/oauth.h"

#define ISS	"https://idp.example.com/realms/r"
#define AUD	"https://mcp.example.com/mcp"
#define NOW	1800000000

/* The issuer as the tests' principals.yaml would load it. */
static inline void
issuer_init(struct oauth_issuer *is)
{
	memset(is, 0, sizeof(*is));
	snprintf(is->issuer, sizeof(is->issuer), ISS);
	snprintf(is->audience, sizeof(is->audience), AUD);
	snprintf(is->principal_claim, sizeof(is->principal_claim), "sub");
	snprintf(is->principal_prefix, sizeof(is->principal_prefix), "oidc:");
	snprintf(is->groups_claim, sizeof(is->groups_claim), "groups");
	/* Its groups a, "b c" and d are ours as grp-a, team-bc and grp-a. */
	snprintf(is->groups[0].claim, OAUTH_GROUP_CLAIM_LEN, "a");
	snprintf(is->groups[0].group, CLIENT_GROUP_MAX, "grp-a");
	snprintf(is->groups[1].claim, OAUTH_GROUP_CLAIM_LEN, "b c");
	snprintf(is->groups[1].group, CLIENT_GROUP_MAX, "team-bc");
	snprintf(is->groups[2].claim, OAUTH_GROUP_CLAIM_LEN, "d");
	snprintf(is->groups[2].group, CLIENT_GROUP_MAX, "grp-a");
	is->ngroups = 3;
	snprintf(is->scopes[0], OAUTH_SCOPE_LEN, "mcp:tools");
	is->nscopes = 1;
	is->algs = OAUTH_ALGS_DEFAULT;
	is->leeway_s = 30;
	is->refresh_min_s = 3600;
}

#endif
