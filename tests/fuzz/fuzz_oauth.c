/*
 * Fuzz target for what is ours on the way from a bearer token or a client
 * certificate to a principal: the first byte picks the path.  0: the
 * bytes are a token for oauth_verify (cjose parses it; we pick the
 * issuer, alg and key from its header and payload); 1: they are a
 * verified payload for oauth_claims_check; 2: a certificate name for an
 * mtls rule; 3: principals.yaml's issuers and mtls sections (YAML).
 * Nothing is fetched: an unknown kid is refused (OAUTH_NOWAIT).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjose/cjose.h>

#include "conf.h"
#include "transport/mtls.h"
#include "transport/oauth.h"
#include "util.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct oauth_issuers	 set;

static void
setup(void)
{
	static const uint8_t	 e[] = { 1, 0, 1 };
	struct oauth_issuer	*is = &set.v[0];
	cjose_jwk_t		*k;
	cjose_err		 err;

	snprintf(is->issuer, sizeof(is->issuer), "https://idp.example");
	snprintf(is->audience, sizeof(is->audience), "https://mcp.example/mcp");
	snprintf(is->principal_claim, sizeof(is->principal_claim), "sub");
	snprintf(is->principal_prefix, sizeof(is->principal_prefix), "oidc:");
	snprintf(is->groups_claim, sizeof(is->groups_claim), "groups");
	snprintf(is->groups[0].claim, OAUTH_GROUP_CLAIM_LEN, "a");
	snprintf(is->groups[0].group, CLIENT_GROUP_MAX, "grp-a");
	is->ngroups = 1;
	snprintf(is->scopes[0], OAUTH_SCOPE_LEN, "mcp:tools");
	is->nscopes = 1;
	is->algs = OAUTH_ALGS_DEFAULT;
	is->leeway_s = 30;
	is->refresh_min_s = 3600;
	is->refreshed_ms = mono_ms();
	if ((k = cjose_jwk_create_RSA_random(2048, e, sizeof(e), &err)) ==
	    NULL)
		abort();
	is->keys[0].jwk = k;
	snprintf(is->keys[0].kid, sizeof(is->keys[0].kid), "k1");
	is->nkeys = 1;
	set.n = 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oauth_ident	 id;
	struct mtls_rule	 r;
	struct oauth_issuers	*parsed;
	struct mtls_conf	 m;
	struct conf_doc		*doc;
	struct conf_ctx		 ctx;
	json_t			*c;
	char			 why[256], out[PRINCIPAL_MAX];

	if (set.n == 0)
		setup();
	if (size < 1)
		return 0;
	switch (data[0] % 4) {
	case 0:
		(void)oauth_verify(&set, (const char *)data + 1, size - 1,
		    1800000000, OAUTH_NOWAIT, &id, why, sizeof(why));
		break;
	case 1:
		if ((c = json_loadb((const char *)data + 1, size - 1, 0,
		    NULL)) != NULL) {
			(void)oauth_claims_check(&set.v[0], c, 1800000000, &id,
			    why, sizeof(why));
			json_decref(c);
		}
		break;
	case 3:
		if ((doc = conf_doc_load_buf("principals.yaml", (const char *)
		    data + 1, size - 1, why, sizeof(why))) == NULL)
			break;
		conf_ctx_init(&ctx, doc);
		parsed = xcalloc(1, sizeof(*parsed));
		oauth_conf_load(&ctx, json_object_get(conf_doc_root(doc),
		    "issuers"), parsed);
		mtls_conf_load(&ctx, json_object_get(conf_doc_root(doc),
		    "mtls"), &m);
		oauth_issuers_clear(parsed);
		free(parsed);
		conf_doc_free(doc);
		break;
	default:
		memset(&r, 0, sizeof(r));
		snprintf(r.match, sizeof(r.match), "spiffe://");
		snprintf(r.prefix, sizeof(r.prefix), "cert:");
		(void)mtls_rule_apply(&r, (const char *)data + 1, size - 1,
		    out, sizeof(out));
		break;
	}
	return 0;
}
