/*
 * An issuer's keys: its metadata (OIDC discovery, else RFC 8414) names the
 * JWKS, fetched with libcurl over HTTPS against the system trust store or
 * the issuer's ca_file.  Both documents are the provider's, trusted only
 * to be JSON of bounded size; each key is imported by libcjose.
 *
 * Fetches are synchronous and bounded in time: at load or SIGHUP (up to
 * OAUTH_LOAD_TIMEOUT_MS each), and on a token whose kid we lack (up to
 * OAUTH_REFRESH_TIMEOUT_MS, at most once per refresh_min_s per issuer), so
 * the event loop stalls at most that long, and only that rarely.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjose/cjose.h>
#include <curl/curl.h>

#include "log.h"
#include "oauth.h"
#include "util.h"

struct jwks_buf {
	char	*data;
	size_t	 len;
	int	 over;
};

static size_t
jwks_write(char *p, size_t size, size_t n, void *arg)
{
	struct jwks_buf	*b = arg;
	size_t		 len = size * n;

	if (b->len + len > OAUTH_DOC_MAX) {
		b->over = 1;
		return 0;	/* curl stops: the document is too big */
	}
	b->data = xrealloc(b->data, b->len + len + 1);
	memcpy(b->data + b->len, p, len);
	b->len += len;
	b->data[b->len] = '\0';
	return len;
}

/* Whether url's host is a loopback address (for insecure_http_loopback). */
static int
url_loopback(const char *url)
{
	CURLU	*u = curl_url();
	char	*host = NULL;
	int	 ok = 0;

	if (u != NULL && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
		ok = strncmp(host, "127.", 4) == 0 || strcmp(host, "[::1]") ==
		    0 || strcmp(host, "localhost") == 0;
	curl_free(host);
	curl_url_cleanup(u);
	return ok;
}

/* GET url as a JSON object (new reference), or NULL after logging. */
static json_t *
jwks_get(const struct oauth_issuer *is, const char *url, long timeout_ms)
{
	static int	 inited;
	struct jwks_buf	 b = { NULL, 0, 0 };
	CURL		*c;
	CURLcode	 rc;
	long		 status = 0;
	json_t		*doc = NULL;
	json_error_t	 je;
	int		 http_ok;

	if (!inited && curl_global_init(CURL_GLOBAL_DEFAULT) == 0)
		inited = 1;
	http_ok = is->insecure_http_loopback && url_loopback(url);
	if (strncmp(url, "https://", 8) != 0 && !http_ok) {
		log_warnx("oauth: %s: not https (insecure_http_loopback allows "
		    "http:// to a loopback address only)", url);
		return NULL;
	}
	if ((c = curl_easy_init()) == NULL)
		fatalx("curl_easy_init");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, http_ok ? "http,https" :
	    "https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	/* No proxy from the environment: the provider is named in the rules. */
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (is->ca_file[0] != '\0')
		curl_easy_setopt(c, CURLOPT_CAINFO, is->ca_file);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, jwks_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "stockade-mcp-exec");
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	if (b.over)
		log_warnx("oauth: %s: larger than %d bytes", url, OAUTH_DOC_MAX);
	else if (rc != CURLE_OK)
		log_warnx("oauth: %s: %s", url, curl_easy_strerror(rc));
	else if (status != 200)
		log_warnx("oauth: %s: HTTP status %ld", url, status);
	else if (b.data == NULL || (doc = json_loadb(b.data, b.len,
	    JSON_REJECT_DUPLICATES, &je)) == NULL || !json_is_object(doc)) {
		log_warnx("oauth: %s: not a JSON object", url);
		json_decref(doc);
		doc = NULL;
	}
	free(b.data);
	return doc;
}

/*
 * The issuer's jwks_uri from its metadata: OpenID discovery appends the
 * well-known path; RFC 8414 inserts its own before the issuer's path.
 * The metadata must name the same issuer (a mix-up is refused).
 */
static int
jwks_discover(struct oauth_issuer *is, long timeout_ms)
{
	const char	*path, *iss, *uri;
	char		 url[OAUTH_URL_MAX + 64];
	json_t		*doc;
	size_t		 hlen;
	int		 try, ok = -1;

	for (try = 0; try < 2 && ok == -1; try++) {
		if (try == 0)
			snprintf(url, sizeof(url), "%s%s.well-known/openid-"
			    "configuration", is->issuer, is->issuer[strlen(
			    is->issuer) - 1] == '/' ? "" : "/");
		else {
			if ((path = strstr(is->issuer, "://")) == NULL)
				break;
			path = strchr(path + 3, '/');
			hlen = path ? (size_t)(path - is->issuer) :
			    strlen(is->issuer);
			snprintf(url, sizeof(url), "%.*s/.well-known/oauth-"
			    "authorization-server%s", (int)hlen, is->issuer,
			    path && strcmp(path, "/") != 0 ? path : "");
		}
		if ((doc = jwks_get(is, url, timeout_ms)) == NULL)
			continue;
		iss = json_string_value(json_object_get(doc, "issuer"));
		uri = json_string_value(json_object_get(doc, "jwks_uri"));
		if (iss == NULL || strcmp(iss, is->issuer) != 0)
			log_warnx("oauth: %s names issuer %.128s, not %s", url,
			    iss ? iss : "(none)", is->issuer);
		else if (uri == NULL || strlen(uri) >= sizeof(is->jwks_uri))
			log_warnx("oauth: %s: no usable jwks_uri", url);
		else {
			snprintf(is->jwks_uri, sizeof(is->jwks_uri), "%s", uri);
			ok = 0;
		}
		json_decref(doc);
	}
	return ok;
}

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

static int
jwks_fetch(struct oauth_issuer *is, long timeout_ms)
{
	json_t	*doc;
	size_t	 n;

	if (!is->jwks_configured && jwks_discover(is, timeout_ms) == -1)
		return -1;
	if ((doc = jwks_get(is, is->jwks_uri, timeout_ms)) == NULL)
		return -1;
	n = jwks_set_keys(is, doc);
	json_decref(doc);
	log_info("oauth: %s: %zu signing key%s from %s", is->issuer, n,
	    n == 1 ? "" : "s", is->jwks_uri);
	return 0;
}

void
jwks_load_all(struct oauth_issuers *set)
{
	size_t	 i;

	for (i = 0; i < set->n; i++)
		if (jwks_fetch(&set->v[i], OAUTH_LOAD_TIMEOUT_MS) == -1)
			log_warnx("oauth: %s: no keys yet; its tokens are "
			    "refused until a refetch succeeds",
			    set->v[i].issuer);
}

int
jwks_refresh(struct oauth_issuer *is, uint64_t now_ms)
{
	if (is->refreshed_ms != 0 && now_ms - is->refreshed_ms <
	    (uint64_t)is->refresh_min_s * 1000)
		return -1;
	is->refreshed_ms = now_ms;
	return jwks_fetch(is, OAUTH_REFRESH_TIMEOUT_MS);
}
