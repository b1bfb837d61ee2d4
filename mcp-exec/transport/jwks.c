/*
 * An issuer's keys: its metadata (OIDC discovery, else RFC 8414) names the
 * JWKS, fetched over HTTPS against the system trust store or the issuer's
 * ca_file (jwks_http.c).  Both documents are the provider's, trusted only
 * to be JSON of bounded size; each key is imported by libcjose, and only
 * if it says it is for verifying.
 *
 * A fetch is a small machine per issuer (discovery, then the JWKS) that
 * runs beside the event loop once the server serves: the loop never waits
 * on a provider.  A token whose kid we lack starts one (at most once per
 * refresh_min_s per issuer) and waits for its end, parked by the HTTP
 * transport; a SIGHUP starts one for every issuer.  Before the loop runs
 * (at start) a load waits for its fetches: nobody is served yet.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjose/cjose.h>

#include "jwks_http.h"
#include "log.h"
#include "oauth.h"
#include "util.h"

enum jwks_step { STEP_OIDC, STEP_RFC8414, STEP_JWKS, STEP_DONE };

struct jwks_fetch {
	struct oauth_issuer	*is;
	struct jwks_get		*get;	/* the document on its way */
	enum jwks_step		 step;
	long			 timeout_ms;
	int			 ok;
};

/* Told, on the loop, each time an issuer's fetch ends (jwks_attach). */
static void	(*jwks_done)(void *);
static void	*jwks_done_arg;

/* The bits of an RSA JWK's modulus n, or 0 when it has none. */
static size_t
rsa_bits(const json_t *k)
{
	const char	*n64 = json_string_value(json_object_get(k, "n"));
	uint8_t		*n = NULL;
	size_t		 len = 0, i = 0, bits = 0;
	cjose_err	 err;

	if (n64 == NULL || !cjose_base64url_decode(n64, strlen(n64), &n, &len,
	    &err))
		return 0;
	while (i < len && n[i] == 0)
		i++;
	if (i < len)
		for (bits = (len - i) * 8; !(n[i] & 0x80); n[i] <<= 1)
			bits--;
	cjose_get_dealloc()(n);
	return bits;
}

/*
 * Whether a JWKS member is a key we may verify with, and for which alg
 * (0: any that fits it): RFC 7517 section 4 lets its use, key_ops and
 * alg restrict it, and RFC 7518 section 3.3 asks RSA keys of 2048 bits
 * or more.  A key that says it is for something else is left out.
 */
static int
key_usable(const struct oauth_issuer *is, const json_t *k, unsigned *alg)
{
	const char	*kty, *use, *kid, *name;
	const json_t	*ops, *op;
	size_t		 i, bits;
	int		 verify = 0;

	kty = json_string_value(json_object_get(k, "kty"));
	use = json_string_value(json_object_get(k, "use"));
	kid = json_string_value(json_object_get(k, "kid"));
	name = json_string_value(json_object_get(k, "alg"));
	/* cjose 0.6.2 has RSA and EC (and oct, which is no public key). */
	if (kty == NULL || (strcmp(kty, "RSA") != 0 && strcmp(kty, "EC") != 0))
		return 0;
	if ((json_object_get(k, "use") != NULL && (use == NULL ||
	    strcmp(use, "sig") != 0)) || (kid != NULL && strlen(kid) >=
	    OAUTH_KID_MAX))
		return 0;
	if ((ops = json_object_get(k, "key_ops")) != NULL) {
		json_array_foreach(ops, i, op)
			if (json_is_string(op) && strcmp(json_string_value(op),
			    "verify") == 0)
				verify = 1;
		if (!verify) {
			log_warnx("oauth: %s: key %.64s: key_ops without verify: "
			    "left out", is->issuer, kid ? kid : "(no kid)");
			return 0;
		}
	}
	*alg = 0;
	if (json_object_get(k, "alg") != NULL && (*alg = oauth_alg_bit(name)) ==
	    0) {
		log_warnx("oauth: %s: key %.64s: alg %.16s is not one we verify: "
		    "left out", is->issuer, kid ? kid : "(no kid)", name ? name :
		    "(not a string)");
		return 0;
	}
	if (strcmp(kty, "RSA") == 0 && (bits = rsa_bits(k)) <
	    OAUTH_RSA_BITS_MIN) {
		log_warnx("oauth: %s: key %.64s: RSA of %zu bits, under %d: left "
		    "out", is->issuer, kid ? kid : "(no kid)", bits,
		    OAUTH_RSA_BITS_MIN);
		return 0;
	}
	return 1;
}

size_t
jwks_set_keys(struct oauth_issuer *is, const json_t *jwks)
{
	struct oauth_key	 keys[OAUTH_KEYS_MAX];
	const json_t		*k;
	const char		*kid;
	cjose_jwk_t		*jwk;
	cjose_err		 err;
	size_t			 i, n = 0;
	unsigned		 alg;

	json_array_foreach(json_object_get(jwks, "keys"), i, k) {
		if (n == OAUTH_KEYS_MAX || !key_usable(is, k, &alg))
			continue;
		if ((jwk = cjose_jwk_import_json((cjose_header_t *)k,
		    &err)) == NULL) {
			log_warnx("oauth: %s: a key does not import: %s",
			    is->issuer, err.message);
			continue;
		}
		kid = json_string_value(json_object_get(k, "kid"));
		keys[n].jwk = jwk;
		keys[n].alg = alg;
		snprintf(keys[n].kid, sizeof(keys[n].kid), "%s", kid ? kid :
		    "");
		n++;
	}
	for (i = 0; i < is->nkeys; i++)
		cjose_jwk_release(is->keys[i].jwk);
	memcpy(is->keys, keys, n * sizeof(keys[0]));
	is->nkeys = n;
	return n;
}

/*
 * Where step's document is: OpenID discovery appends the well-known path
 * to the issuer; RFC 8414 inserts its own before the issuer's path.
 */
static void
step_url(const struct jwks_fetch *f, char *url, size_t len)
{
	const struct oauth_issuer	*is = f->is;
	const char			*path;
	size_t				 hlen;

	switch (f->step) {
	case STEP_OIDC:
		snprintf(url, len, "%s%s.well-known/openid-configuration",
		    is->issuer, is->issuer[strlen(is->issuer) - 1] == '/' ?
		    "" : "/");
		break;
	case STEP_RFC8414:
		path = strchr(strstr(is->issuer, "://") + 3, '/');
		hlen = path ? (size_t)(path - is->issuer) : strlen(is->issuer);
		snprintf(url, len, "%.*s/.well-known/oauth-authorization-server"
		    "%s", (int)hlen, is->issuer, path && strcmp(path, "/") != 0 ?
		    path : "");
		break;
	default:
		snprintf(url, len, "%s", is->jwks_uri);
		break;
	}
}

/* The metadata must name the same issuer (a mix-up is refused). */
static int
metadata_take(struct oauth_issuer *is, const json_t *doc)
{
	const char	*iss, *uri;

	iss = json_string_value(json_object_get(doc, "issuer"));
	uri = json_string_value(json_object_get(doc, "jwks_uri"));
	if (iss == NULL || strcmp(iss, is->issuer) != 0) {
		log_warnx("oauth: %s: its metadata names issuer %.128s",
		    is->issuer, iss ? iss : "(none)");
		return -1;
	}
	if (uri == NULL || strlen(uri) >= sizeof(is->jwks_uri)) {
		log_warnx("oauth: %s: its metadata has no usable jwks_uri",
		    is->issuer);
		return -1;
	}
	snprintf(is->jwks_uri, sizeof(is->jwks_uri), "%s", uri);
	return 0;
}

static void	fetch_doc(void *, enum jwks_get_status, const json_t *);

static void
fetch_end(struct jwks_fetch *f)
{
	struct oauth_issuer	*is = f->is;

	is->fetch = NULL;
	if (!f->ok) {
		/* Discovered: look again next time, it may have moved. */
		if (!is->jwks_configured)
			is->jwks_uri[0] = '\0';
		if (is->nkeys > 0)
			log_warnx("oauth: %s: keeping the %zu keys fetched "
			    "before", is->issuer, is->nkeys);
		else
			log_warnx("oauth: %s: no keys yet; its tokens are "
			    "refused until a refetch succeeds", is->issuer);
	}
	free(f);
	if (jwks_done != NULL)
		jwks_done(jwks_done_arg);
}

/* Starts the step's transfer, or the next step's, or ends the fetch. */
static void
fetch_step(struct jwks_fetch *f)
{
	char	 url[OAUTH_URL_MAX + 64];

	while (f->step != STEP_DONE) {
		step_url(f, url, sizeof(url));
		if ((f->get = jwks_get_start(f->is, url, f->timeout_ms,
		    fetch_doc, f)) != NULL)
			return;
		f->step = f->step == STEP_OIDC ? STEP_RFC8414 : STEP_DONE;
	}
	fetch_end(f);
}

static void
fetch_doc(void *arg, enum jwks_get_status st, const json_t *doc)
{
	struct jwks_fetch	*f = arg;
	struct oauth_issuer	*is = f->is;
	size_t			 n;

	f->get = NULL;
	if (st == JWKS_GET_STOPPED) {
		is->fetch = NULL;
		free(f);
		return;
	}
	if (f->step == STEP_JWKS) {
		if (doc != NULL) {
			n = jwks_set_keys(is, doc);
			log_info("oauth: %s: %zu signing key%s from %s",
			    is->issuer, n, n == 1 ? "" : "s", is->jwks_uri);
			f->ok = 1;
		}
		f->step = STEP_DONE;
	} else if (doc != NULL && metadata_take(is, doc) == 0)
		f->step = STEP_JWKS;
	else
		f->step = f->step == STEP_OIDC ? STEP_RFC8414 : STEP_DONE;
	fetch_step(f);
}

/* Starts is's fetch: discovery first unless its jwks_uri is known. */
static void
fetch_start(struct oauth_issuer *is, long timeout_ms)
{
	struct jwks_fetch	*f = xcalloc(1, sizeof(*f));

	f->is = is;
	f->timeout_ms = timeout_ms;
	f->step = is->jwks_uri[0] != '\0' ? STEP_JWKS : STEP_OIDC;
	is->fetch = f;
	fetch_step(f);
}

void
jwks_fetch_cancel(struct oauth_issuer *is)
{
	if (is->fetch == NULL)
		return;
	jwks_get_cancel(is->fetch->get);
	free(is->fetch);
	is->fetch = NULL;
}

void
jwks_load_all(struct oauth_issuers *set)
{
	size_t	 i;

	for (i = 0; i < set->n; i++)
		if (set->v[i].fetch == NULL)
			fetch_start(&set->v[i], OAUTH_LOAD_TIMEOUT_MS);
	jwks_http_wait();
}

int
jwks_refresh(struct oauth_issuer *is, uint64_t now_ms)
{
	if (is->fetch != NULL)
		return 1;
	if (is->refreshed_ms != 0 && now_ms - is->refreshed_ms <
	    (uint64_t)is->refresh_min_s * 1000)
		return -1;
	is->refreshed_ms = now_ms;
	fetch_start(is, OAUTH_REFRESH_TIMEOUT_MS);
	jwks_http_wait();
	return is->fetch != NULL;
}

void
jwks_attach(struct event_base *base, void (*done)(void *), void *arg)
{
	jwks_done = done;
	jwks_done_arg = arg;
	jwks_http_attach(base);
}

void
jwks_detach(void)
{
	jwks_http_detach();
	jwks_done = NULL;
	jwks_done_arg = NULL;
}
