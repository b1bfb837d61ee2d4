/*
 * The `issuers:` section of rules/principals.yaml: which OAuth
 * authorization servers' tokens we take, for which audience and scopes,
 * and which claims name the principal and its groups.  Operator input,
 * validated whole; nothing is fetched here (jwks.c does, at load).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjose/cjose.h>

#include "conf.h"
#include "log.h"
#include "oauth.h"
#include "principals.h"
#include "utf8.h"

static const struct {
	const char	*name;
	unsigned	 bit;
} oauth_algs[] = {
	{ "RS256", OAUTH_RS256 }, { "RS384", OAUTH_RS384 },
	{ "RS512", OAUTH_RS512 }, { "PS256", OAUTH_PS256 },
	{ "PS384", OAUTH_PS384 }, { "PS512", OAUTH_PS512 },
	{ "ES256", OAUTH_ES256 }, { "ES384", OAUTH_ES384 },
	{ "ES512", OAUTH_ES512 }, { NULL, 0 }
};

unsigned
oauth_alg_bit(const char *name)
{
	size_t	 i;

	for (i = 0; name != NULL && oauth_algs[i].name != NULL; i++)
		if (strcmp(name, oauth_algs[i].name) == 0)
			return oauth_algs[i].bit;
	return 0;
}

/* An https URL (http only with insecure_http_loopback), no fragment. */
static int
url_ok(const char *s, int insecure)
{
	if (strncmp(s, "https://", 8) != 0 && !(insecure &&
	    strncmp(s, "http://", 7) == 0))
		return 0;
	return strchr(s, '#') == NULL && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?[]@!$&'()*+,;=%") ==
	    strlen(s);
}

/* A claim name or a scope: printable ASCII without spaces or quotes. */
static int
word_ok(const char *s, size_t max)
{
	size_t	 i;

	for (i = 0; s[i] != '\0'; i++)
		if (i >= max - 1 || s[i] <= ' ' || s[i] > '~' || s[i] == '"' ||
		    s[i] == '\\')
			return 0;
	return i > 0;
}

static void
get_word(struct conf_ctx *ctx, const json_t *o, const char *key, char *out,
    size_t max)
{
	const char	*s;

	if (conf_get_string(ctx, o, key, &s) != 1)
		return;
	if (word_ok(s, max))
		snprintf(out, max, "%s", s);
	else
		conf_error(ctx, json_object_get(o, key), "%s: 1 to %zu bytes of "
		    "printable ASCII without spaces or quotes", key, max - 1);
}

/*
 * What every principal from this issuer starts with.  The only issuer
 * may leave it to the default; beside another, each names its own, and
 * principals_load refuses two that could make one name.
 */
static void
get_prefix(struct conf_ctx *ctx, const json_t *o, size_t idx,
    size_t nissuers, struct oauth_issuer *is)
{
	if (json_object_get(o, "principal_prefix") == NULL) {
		if (nissuers > 1)
			conf_error(ctx, o, "issuer %zu: principal_prefix is "
			    "required beside another issuer: a distinct one "
			    "each, e.g. \"idp-a:\" (docs/policy.md)", idx + 1);
		snprintf(is->principal_prefix, sizeof(is->principal_prefix),
		    OAUTH_PREFIX_DEFAULT);
		return;
	}
	get_word(ctx, o, "principal_prefix", is->principal_prefix,
	    sizeof(is->principal_prefix));
}

static void
get_url(struct conf_ctx *ctx, const json_t *o, const char *key, char *out,
    int insecure)
{
	const char	*s;

	if (conf_get_string(ctx, o, key, &s) != 1)
		return;
	if (strlen(s) >= OAUTH_URL_MAX || !url_ok(s, insecure))
		conf_error(ctx, json_object_get(o, key), "%s: an https:// URL "
		    "of at most %d bytes%s", key, OAUTH_URL_MAX - 1, insecure ?
		    "" : " (http:// only with insecure_http_loopback, for "
		    "tests)");
	else
		snprintf(out, OAUTH_URL_MAX, "%s", s);
}

static void
get_algs(struct conf_ctx *ctx, const json_t *o, struct oauth_issuer *is)
{
	json_t		*arr;
	const json_t	*v;
	const char	*s;
	size_t		 i;
	unsigned	 bit;

	is->algs = OAUTH_ALGS_DEFAULT;
	if (conf_get_array(ctx, o, "algorithms", &arr) != 1)
		return;
	is->algs = 0;
	json_array_foreach(arr, i, v) {
		s = json_string_value(v);
		if ((bit = oauth_alg_bit(s)) != 0) {
			is->algs |= bit;
			continue;
		}
		if (s != NULL && strcmp(s, "EdDSA") == 0)
			conf_error(ctx, v, "algorithms: EdDSA cannot be "
			    "verified by libcjose 0.6.2 (Debian 12); ask the "
			    "provider for RS256, PS256 or ES256");
		else
			conf_error(ctx, v, "algorithms: one of RS256, RS384, "
			    "RS512, PS256, PS384, PS512, ES256, ES384, ES512 "
			    "(never none or HS*: a public key is no secret)");
	}
	if (is->algs == 0 && json_array_size(arr) == 0)
		conf_error(ctx, arr, "algorithms: at least one");
}

static void
get_scopes(struct conf_ctx *ctx, const json_t *o, struct oauth_issuer *is)
{
	json_t		*arr;
	const json_t	*v;
	const char	*s;
	size_t		 i;

	if (conf_get_array(ctx, o, "scopes", &arr) != 1)
		return;
	if (json_array_size(arr) > OAUTH_SCOPES_MAX) {
		conf_error(ctx, arr, "scopes: at most %d", OAUTH_SCOPES_MAX);
		return;
	}
	json_array_foreach(arr, i, v) {
		if ((s = json_string_value(v)) == NULL ||
		    !word_ok(s, OAUTH_SCOPE_LEN)) {
			conf_error(ctx, v, "scopes: each a scope name of 1 to "
			    "%d bytes, no spaces", OAUTH_SCOPE_LEN - 1);
			continue;
		}
		snprintf(is->scopes[is->nscopes++], OAUTH_SCOPE_LEN, "%s", s);
	}
}

/*
 * groups: which of the issuer's groups count here, and as which group of
 * ours.  A group its tokens name that is not listed grants nothing; the
 * names are the provider's (Keycloak paths, Entra object ids), compared
 * byte for byte.  At most CLIENT_GROUPS_MAX groups of ours per issuer, so
 * a caller's are never cut short.
 */
static void
get_groups(struct conf_ctx *ctx, const json_t *o, struct oauth_issuer *is)
{
	json_t		*map, *v;
	const char	*claim, *group;
	size_t		 i, distinct = 0;

	if (conf_get_object(ctx, o, "groups", &map) != 1)
		return;
	if (json_object_size(map) > OAUTH_GROUPS_MAX) {
		conf_error(ctx, map, "groups: at most %d", OAUTH_GROUPS_MAX);
		return;
	}
	json_object_foreach(map, claim, v) {
		group = json_string_value(v);
		if (strlen(claim) >= OAUTH_GROUP_CLAIM_LEN ||
		    utf8_name_check(claim, strlen(claim), NULL) !=
		    UTF8_NAME_OK || *claim == '\0') {
			conf_error(ctx, v, "groups: a token's group of 1 to %d "
			    "bytes without control or invisible characters",
			    OAUTH_GROUP_CLAIM_LEN - 1);
			continue;
		}
		/* A name of ours, as principals.yaml's groups entries are. */
		if (group == NULL || !principal_name_ok(group) ||
		    strlen(group) >= CLIENT_GROUP_MAX) {
			conf_error(ctx, v, "groups: the group of ours each "
			    "stands for: 1 to %d bytes of printable ASCII "
			    "without spaces", CLIENT_GROUP_MAX - 1);
			continue;
		}
		for (i = 0; i < is->ngroups; i++)
			if (strcmp(is->groups[i].group, group) == 0)
				break;
		if (i == is->ngroups && ++distinct > CLIENT_GROUPS_MAX) {
			conf_error(ctx, v, "groups: at most %d groups of ours "
			    "per issuer", CLIENT_GROUPS_MAX);
			return;
		}
		snprintf(is->groups[is->ngroups].claim, OAUTH_GROUP_CLAIM_LEN,
		    "%s", claim);
		snprintf(is->groups[is->ngroups++].group, CLIENT_GROUP_MAX,
		    "%s", group);
	}
	if (is->groups_claim[0] == '\0')
		conf_error(ctx, map, "groups: needs groups_claim, the claim "
		    "that holds them");
}

static void
load_issuer(struct conf_ctx *ctx, const json_t *o, size_t idx,
    size_t nissuers, struct oauth_issuers *set)
{
	static const char *const keys[] = { "issuer", "audience", "scopes",
	    "principal_claim", "principal_prefix", "groups_claim", "groups",
	    "algorithms", "leeway_s", "jwks_uri", "ca_file",
	    "insecure_http_loopback", "refresh_min_s", "description", NULL };
	struct oauth_issuer	*is = &set->v[set->n];
	const char		*s;
	size_t			 i;

	if (conf_expect_object(ctx, o, "issuers entry") == -1)
		return;
	conf_check_keys(ctx, o, keys);
	memset(is, 0, sizeof(*is));
	(void)conf_get_string(ctx, o, "description", &s);
	(void)conf_get_bool(ctx, o, "insecure_http_loopback",
	    &is->insecure_http_loopback);
	get_url(ctx, o, "issuer", is->issuer, is->insecure_http_loopback);
	get_url(ctx, o, "audience", is->audience, 1);
	get_url(ctx, o, "jwks_uri", is->jwks_uri, is->insecure_http_loopback);
	is->jwks_configured = is->jwks_uri[0] != '\0';
	if (is->issuer[0] == '\0' && json_object_get(o, "issuer") == NULL)
		conf_error(ctx, o, "issuer %zu: missing 'issuer' (the `iss` "
		    "its tokens carry)", idx + 1);
	/* RFC 8707: a token for another resource is not for us. */
	if (is->audience[0] == '\0' && json_object_get(o, "audience") == NULL)
		conf_error(ctx, o, "issuer %zu: missing 'audience' (this "
		    "server's resource URI, e.g. https://mcp.example.com/mcp)",
		    idx + 1);
	snprintf(is->principal_claim, sizeof(is->principal_claim), "sub");
	get_word(ctx, o, "principal_claim", is->principal_claim,
	    sizeof(is->principal_claim));
	get_prefix(ctx, o, idx, nissuers, is);
	get_word(ctx, o, "groups_claim", is->groups_claim,
	    sizeof(is->groups_claim));
	get_groups(ctx, o, is);
	if (is->groups_claim[0] != '\0' && is->ngroups == 0 &&
	    json_object_get(o, "groups") == NULL)
		conf_error(ctx, json_object_get(o, "groups_claim"), "groups_"
		    "claim: say which of its groups count here, and as which "
		    "of ours: groups: {TOKEN-GROUP: GROUP} (docs/policy.md)");
	get_scopes(ctx, o, is);
	get_algs(ctx, o, is);
	is->leeway_s = OAUTH_LEEWAY_S;
	(void)conf_get_int(ctx, o, "leeway_s", 0, OAUTH_LEEWAY_MAX_S,
	    &is->leeway_s);
	is->refresh_min_s = OAUTH_REFRESH_MIN_S;
	(void)conf_get_int(ctx, o, "refresh_min_s", 1, 3600,
	    &is->refresh_min_s);
	if (conf_get_string(ctx, o, "ca_file", &s) == 1) {
		if (*s != '/' || strlen(s) >= sizeof(is->ca_file))
			conf_error(ctx, json_object_get(o, "ca_file"),
			    "ca_file: an absolute path");
		else
			snprintf(is->ca_file, sizeof(is->ca_file), "%s", s);
	}
	/* Two entries for one issuer: which audience would hold? */
	for (i = 0; i < set->n; i++)
		if (strcmp(set->v[i].issuer, is->issuer) == 0) {
			conf_error(ctx, json_object_get(o, "issuer"), "issuer "
			    "listed twice");
			return;
		}
	if (is->issuer[0] != '\0' && is->audience[0] != '\0')
		set->n++;
}

void
oauth_conf_load(struct conf_ctx *ctx, const json_t *arr,
    struct oauth_issuers *set)
{
	const json_t	*v;
	size_t		 i;

	set->n = 0;
	if (arr == NULL)
		return;
	if (json_array_size(arr) > OAUTH_ISSUERS_MAX) {
		conf_error(ctx, arr, "issuers: at most %d", OAUTH_ISSUERS_MAX);
		return;
	}
	json_array_foreach(arr, i, v)
		load_issuer(ctx, v, i, json_array_size(arr), set);
}

void
oauth_issuers_clear(struct oauth_issuers *set)
{
	size_t	 i, k;

	for (i = 0; i < set->n; i++) {
		jwks_fetch_cancel(&set->v[i]);
		for (k = 0; k < set->v[i].nkeys; k++)
			cjose_jwk_release(set->v[i].keys[k].jwk);
		set->v[i].nkeys = 0;
	}
	set->n = 0;
}

void
oauth_issuers_inherit(struct oauth_issuers *set,
    const struct oauth_issuers *old)
{
	const struct oauth_issuer	*o;
	struct oauth_issuer		*is;
	cjose_err			 err;
	size_t				 i, k, n;

	for (i = 0; old != NULL && i < set->n; i++) {
		is = &set->v[i];
		if (is->nkeys > 0)
			continue;
		for (k = 0, o = NULL; k < old->n && o == NULL; k++)
			if (strcmp(old->v[k].issuer, is->issuer) == 0)
				o = &old->v[k];
		if (o == NULL || o->nkeys == 0)
			continue;
		for (n = 0; n < o->nkeys; n++) {
			is->keys[n].jwk = cjose_jwk_retain(o->keys[n].jwk, &err);
			snprintf(is->keys[n].kid, sizeof(is->keys[n].kid), "%s",
			    o->keys[n].kid);
			is->keys[n].alg = o->keys[n].alg;
		}
		is->nkeys = o->nkeys;
	}
}
