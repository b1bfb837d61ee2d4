/*
 * Loads rules/principals.yaml and maps bearer tokens to principals.  The
 * file holds SHA-256 hashes only, so reading it gives away no token; the
 * tokens clients present are hashed and compared with every entry in
 * constant time, whether one matched or not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "conf.h"
#include "hash.h"
#include "mtls.h"
#include "oauth.h"
#include "principals.h"
#include "util.h"

struct token {
	uint8_t		 hash[SHA256_LEN];
	char		 principal[PRINCIPAL_MAX];
	/* The groups the token's holder is in (tools/authz.c's groups). */
	char		 groups[CLIENT_GROUPS_MAX][CLIENT_GROUP_MAX];
	unsigned	 ngroups;
};

struct principals {
	struct token	 tokens[PRINCIPALS_TOKENS_MAX];
	size_t		 n;
	struct oauth_issuers issuers;	/* issuers: (oauth_conf.c) */
	struct mtls_conf mtls;		/* mtls: (mtls.c) */
};

int
principal_name_ok(const char *s)
{
	size_t	 i;

	for (i = 0; s[i] != '\0'; i++)
		if (i >= PRINCIPAL_MAX - 1 || s[i] <= ' ' || s[i] > '~')
			return 0;
	return i > 0;
}

static int
hash_hex_ok(const char *s)
{
	return strlen(s) == SHA256_HEX && hex_lower(s, SHA256_HEX);
}

static void
load_groups(struct conf_ctx *ctx, const json_t *o, struct token *t)
{
	json_t		*arr, *v;
	const char	*g;
	size_t		 i;

	t->ngroups = 0;
	if (conf_get_array(ctx, o, "groups", &arr) != 1)
		return;
	if (json_array_size(arr) > CLIENT_GROUPS_MAX) {
		conf_error(ctx, arr, "groups: at most %d", CLIENT_GROUPS_MAX);
		return;
	}
	json_array_foreach(arr, i, v) {
		if ((g = json_string_value(v)) == NULL ||
		    !principal_name_ok(g) || strlen(g) >= CLIENT_GROUP_MAX) {
			conf_error(ctx, v, "groups: names of 1 to %d bytes of "
			    "printable ASCII without spaces",
			    CLIENT_GROUP_MAX - 1);
			continue;
		}
		snprintf(t->groups[t->ngroups++], CLIENT_GROUP_MAX, "%s", g);
	}
}

static void
load_token(struct conf_ctx *ctx, const json_t *o, size_t idx,
    struct principals *p)
{
	static const char *const keys[] = { "sha256", "principal",
	    "description", "groups", NULL };
	struct token	*t = &p->tokens[p->n];
	const char	*hex = NULL, *name = NULL, *s;
	size_t		 i;

	if (conf_expect_object(ctx, o, "tokens entry") == -1)
		return;
	conf_check_keys(ctx, o, keys);
	(void)conf_get_string(ctx, o, "description", &s);
	if (conf_get_string(ctx, o, "sha256", &hex) == 0)
		conf_error(ctx, o, "token %zu: missing 'sha256'", idx + 1);
	else if (hex != NULL && !hash_hex_ok(hex)) {
		conf_error(ctx, json_object_get(o, "sha256"), "sha256: 64 "
		    "lowercase hex digits (printf %%s \"$TOKEN\" | sha256sum)");
		hex = NULL;
	}
	if (conf_get_string(ctx, o, "principal", &name) == 0)
		conf_error(ctx, o, "token %zu: missing 'principal'", idx + 1);
	else if (name != NULL && !principal_name_ok(name)) {
		conf_error(ctx, json_object_get(o, "principal"), "principal: "
		    "1 to %d bytes of printable ASCII without spaces, e.g. "
		    "user:alice@example.com", PRINCIPAL_MAX - 1);
		name = NULL;
	}
	load_groups(ctx, o, t);
	if (hex == NULL || name == NULL)
		return;
	if (hex_decode(hex, SHA256_HEX, t->hash) == -1) {
		conf_error(ctx, json_object_get(o, "sha256"), "sha256: not "
		    "hex");
		return;
	}
	/* One token, one principal: a second entry would be ambiguous. */
	for (i = 0; i < p->n; i++) {
		if (memcmp(p->tokens[i].hash, t->hash, SHA256_LEN) == 0) {
			conf_error(ctx, json_object_get(o, "sha256"), "sha256: "
			    "the same token is listed twice");
			return;
		}
	}
	snprintf(t->principal, sizeof(t->principal), "%s", name);
	p->n++;
}

/*
 * Group g of issuer i's groups: no other issuer, and no static token,
 * may give it (its entry's node takes the error).
 */
static void
group_once(struct conf_ctx *ctx, const json_t *iss, const struct principals *p,
    size_t i, const char *g)
{
	const json_t	*at;
	const char	*claim;
	json_t		*v;
	size_t		 j, k;
	unsigned	 t;

	at = json_object_get(json_array_get(iss, i), "groups");
	json_object_foreach((json_t *)at, claim, v)
		if (strcmp(json_string_value(v), g) == 0) {
			at = v;
			break;
		}
	for (j = 0; j < i; j++)
		for (k = 0; k < p->issuers.v[j].ngroups; k++)
			if (strcmp(p->issuers.v[j].groups[k].group, g) == 0) {
				conf_error(ctx, at, "groups: %s is issuer %zu's "
				    "already: each group of ours comes from one "
				    "issuer", g, j + 1);
				return;
			}
	for (k = 0; k < p->n; k++)
		for (t = 0; t < p->tokens[k].ngroups; t++)
			if (strcmp(p->tokens[k].groups[t], g) == 0) {
				conf_error(ctx, at, "groups: %s is given by "
				    "static tokens (%s): an issuer may not "
				    "assert it", g, p->tokens[k].principal);
				return;
			}
}

/* Whether a name that starts with a could start with b, or the reverse. */
static int
overlap(const char *a, const char *b)
{
	size_t	 la = strlen(a), lb = strlen(b);

	return strncmp(a, b, la < lb ? la : lb) == 0;
}

/*
 * An issuer speaks only for its own users: no name one issuer's tokens
 * can make may be made by another issuer's, a static token's or a client
 * certificate's, and no group of ours may be asserted by two of them.
 * Run on a file without other errors, so entry i is issuer i.
 */
static void
principals_namespaces(struct conf_ctx *ctx, const json_t *root,
    const struct principals *p)
{
	const json_t			*iss = json_object_get(root, "issuers");
	const json_t			*toks = json_object_get(root, "tokens");
	const struct oauth_issuer	*a;
	const struct mtls_rule		*r;
	const json_t			*at;
	char				 ns[MTLS_PREFIX_LEN + MTLS_MATCH_LEN];
	size_t				 i, j, g, k;

	for (i = 0; i < p->issuers.n; i++) {
		a = &p->issuers.v[i];
		at = json_object_get(json_array_get(iss, i), "principal_prefix");
		if (at == NULL)
			at = json_array_get(iss, i);
		for (j = 0; j < i; j++)
			if (overlap(a->principal_prefix,
			    p->issuers.v[j].principal_prefix))
				conf_error(ctx, at, "principal_prefix \"%s\": "
				    "issuer %zu's is \"%s\", and one name could "
				    "stand for a user of each: give each issuer "
				    "a prefix no other starts with",
				    a->principal_prefix, j + 1,
				    p->issuers.v[j].principal_prefix);
		for (k = 0; k < p->n; k++)
			if (strncmp(p->tokens[k].principal, a->principal_prefix,
			    strlen(a->principal_prefix)) == 0)
				conf_error(ctx, json_object_get(json_array_get(
				    toks, k), "principal"), "principal %s: "
				    "issuer %zu's tokens can make this name "
				    "(principal_prefix \"%s\")",
				    p->tokens[k].principal, i + 1,
				    a->principal_prefix);
		for (k = 0; p->mtls.enabled && k < p->mtls.nrules; k++) {
			r = &p->mtls.rules[k];
			snprintf(ns, sizeof(ns), "%s%s", r->prefix, r->match);
			if (overlap(a->principal_prefix, ns))
				conf_error(ctx, at, "principal_prefix \"%s\": "
				    "client certificates can make such names too "
				    "(mtls rule %zu: its prefix, then a value "
				    "that starts with its match)",
				    a->principal_prefix, k + 1);
		}
	}
	for (i = 0; i < p->issuers.n; i++)
		for (g = 0; g < p->issuers.v[i].ngroups; g++)
			group_once(ctx, iss, p, i, p->issuers.v[i].groups[g].group);
}

static void
principals_doc(struct conf_ctx *ctx, const json_t *root, struct principals *p)
{
	/* principals: and groups: are tools/authz.c's. */
	static const char *const top[] = { "tokens", "issuers", "mtls",
	    "principals", "groups", "unlisted", NULL };
	const json_t	*v;
	json_t		*arr;
	size_t		 i;

	if (conf_expect_object(ctx, root, PRINCIPALS_FILE) == -1)
		return;
	conf_check_keys(ctx, root, top);
	if (conf_get_array(ctx, root, "issuers", &arr) == 1)
		oauth_conf_load(ctx, arr, &p->issuers);
	mtls_conf_load(ctx, json_object_get(root, "mtls"), &p->mtls);
	if (conf_get_array(ctx, root, "tokens", &arr) != 1)
		return;
	if (json_array_size(arr) > PRINCIPALS_TOKENS_MAX) {
		conf_error(ctx, arr, "tokens: at most %d",
		    PRINCIPALS_TOKENS_MAX);
		return;
	}
	json_array_foreach(arr, i, v)
		load_token(ctx, v, i, p);
}

struct principals *
principals_load(const char *rules_dir)
{
	struct principals	*p = xcalloc(1, sizeof(*p));
	struct conf_doc		*doc;
	struct conf_ctx		 ctx;
	char			 path[PATH_MAX], err[CONF_ERROR_LEN];

	if (xsnprintf(path, sizeof(path), "%s/%s", rules_dir,
	    PRINCIPALS_FILE) == -1) {
		conf_report("%s: path too long", rules_dir);
		goto fail;
	}
	if (access(path, F_OK) == -1)
		return p;
	if ((doc = conf_doc_load_file(path, err, sizeof(err))) == NULL) {
		conf_report("%s", err);
		goto fail;
	}
	conf_ctx_init(&ctx, doc);
	principals_doc(&ctx, conf_doc_root(doc), p);
	if (ctx.nerrors == 0)
		principals_namespaces(&ctx, conf_doc_root(doc), p);
	conf_doc_free(doc);
	if (ctx.nerrors == 0)
		return p;
	conf_ctx_report(&ctx);
fail:
	principals_free(p);
	return NULL;
}

void
principals_free(struct principals *p)
{
	if (p == NULL)
		return;
	oauth_issuers_clear(&p->issuers);
	mtls_clear(&p->mtls);
	explicit_bzero(p, sizeof(*p));
	free(p);
}

size_t
principals_count(const struct principals *p)
{
	return p->n;
}

int
principals_auth_required(const struct principals *p)
{
	return p->n > 0 || p->issuers.n > 0 || p->mtls.enabled;
}

int
principals_prepare(struct principals *p)
{
	jwks_load_all(&p->issuers);
	return mtls_prepare(&p->mtls);
}

struct oauth_issuers *
principals_issuers(struct principals *p)
{
	return &p->issuers;
}

struct mtls_conf *
principals_mtls(struct principals *p)
{
	return &p->mtls;
}

unsigned
principals_groups(const struct principals *p, const char *principal,
    char out[][CLIENT_GROUP_MAX], unsigned max)
{
	unsigned	 n = 0, i, j, k;

	/* Every token of the principal: its groups, each once. */
	for (i = 0; i < p->n; i++) {
		if (strcmp(p->tokens[i].principal, principal) != 0)
			continue;
		for (j = 0; j < p->tokens[i].ngroups && n < max; j++) {
			for (k = 0; k < n; k++)
				if (strcmp(out[k], p->tokens[i].groups[j]) == 0)
					break;
			if (k == n)
				snprintf(out[n++], CLIENT_GROUP_MAX, "%s",
				    p->tokens[i].groups[j]);
		}
	}
	return n;
}

const char *
principals_lookup(const struct principals *p, const char *token, size_t len)
{
	uint8_t		 h[SHA256_LEN];
	const char	*found = NULL;
	size_t		 i;

	if (len == 0 || len > PRINCIPALS_TOKEN_LEN_MAX)
		return NULL;
	sha256(token, len, h);
	/* Every entry is compared: the time tells nothing of a match. */
	for (i = 0; i < p->n; i++)
		if (CRYPTO_memcmp(h, p->tokens[i].hash, SHA256_LEN) == 0)
			found = p->tokens[i].principal;
	explicit_bzero(h, sizeof(h));
	return found;
}
