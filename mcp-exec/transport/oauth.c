/*
 * Verifies a JWT access token (RFC 9068) for this resource server.  The
 * token is the client's and untrusted: libcjose parses and verifies it,
 * after the checks it lacks (crit, the signature's exact length); its
 * claims are read before that only to pick the issuer whose keys must
 * verify it, and trusted only after.  Then iss, aud (RFC 8707), exp/nbf
 * with leeway, the required scopes, and who it names: taken exactly, in
 * the issuer's own names and groups, or refused.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjose/cjose.h>

#include "hash.h"
#include "oauth.h"
#include "principals.h"
#include "utf8.h"
#include "util.h"

#define WHY(...)	snprintf(why, whylen, __VA_ARGS__)

/*
 * A claim that names someone, copied exactly into out (max bytes): 1, or
 * 0 when absent, -1 when it is no string, holds a NUL, does not fit, or
 * is no clean name (utf8.h: no control, invisible or bidi characters).
 * Never rewritten: two names that differ stay two, or are refused.
 */
static int
claim_text(const json_t *claims, const char *name, char *out, size_t max)
{
	const json_t	*v = json_object_get(claims, name);
	const char	*s = json_string_value(v);
	size_t		 len = json_string_length(v);

	if (v == NULL)
		return 0;
	if (s == NULL || len == 0 || len >= max || strlen(s) != len ||
	    utf8_name_check(s, len, NULL) != UTF8_NAME_OK)
		return -1;
	memcpy(out, s, len + 1);
	return 1;
}

static int
aud_ok(const json_t *aud, const char *want)
{
	const json_t	*v;
	size_t		 i;

	if (json_is_string(aud))
		return strcmp(json_string_value(aud), want) == 0;
	json_array_foreach(aud, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), want) == 0)
			return 1;
	return 0;
}

/* Whether the token grants scope: `scope` (RFC 9068) or `scp` (Entra, Okta). */
static int
scope_granted(const json_t *claims, const char *scope)
{
	const json_t	*v, *e;
	const char	*s, *p;
	size_t		 n = strlen(scope), i;

	if ((s = json_string_value(json_object_get(claims, "scope"))) != NULL)
		for (p = s; *p != '\0'; p += strcspn(p, " ")) {
			p += strspn(p, " ");
			if (strncmp(p, scope, n) == 0 && (p[n] == ' ' ||
			    p[n] == '\0'))
				return 1;
		}
	v = json_object_get(claims, "scp");
	if (json_is_string(v))
		return strcmp(json_string_value(v), scope) == 0;
	json_array_foreach(v, i, e)
		if (json_is_string(e) && strcmp(json_string_value(e), scope) ==
		    0)
			return 1;
	return 0;
}

/*
 * A time claim: an integer, or a number (some providers send 1.7e9), in
 * [0, OAUTH_TIME_MAX]: 1, 0 absent, -1 otherwise.  Bounded so that the
 * checks below add the leeway without overflow: an exp of INT64_MAX is
 * no promise of forever but a token to refuse.
 */
static int
claim_time(const json_t *claims, const char *name, int64_t *out)
{
	const json_t	*v = json_object_get(claims, name);

	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) <= OAUTH_TIME_MAX)
		*out = json_integer_value(v);
	else if (json_is_real(v) && json_real_value(v) >= 0 &&
	    json_real_value(v) <= OAUTH_TIME_MAX)
		*out = (int64_t)json_real_value(v);
	else
		return v == NULL ? 0 : -1;
	return 1;
}

/* Adds the groups of ours that the issuer's group g stands for. */
static void
group_map(const struct oauth_issuer *is, const json_t *g,
    struct oauth_ident *id)
{
	size_t	 i, k;

	for (i = 0; i < is->ngroups; i++) {
		if (strlen(is->groups[i].claim) != json_string_length(g) ||
		    memcmp(is->groups[i].claim, json_string_value(g),
		    json_string_length(g)) != 0)
			continue;
		for (k = 0; k < id->ngroups; k++)
			if (strcmp(id->groups[k], is->groups[i].group) == 0)
				break;
		/* The issuer maps to at most CLIENT_GROUPS_MAX (oauth_conf.c). */
		if (k == id->ngroups && k < CLIENT_GROUPS_MAX)
			snprintf(id->groups[id->ngroups++], CLIENT_GROUP_MAX,
			    "%s", is->groups[i].group);
	}
}

/*
 * The groups claim: a string or a list of strings, each a clean name
 * (utf8.h), or the token is refused.  Only those the issuer's groups:
 * lists count, as the groups of ours they map to; the rest grant
 * nothing, so no issuer can assert a group another was given.
 */
static int
claim_groups(const struct oauth_issuer *is, const json_t *claims,
    struct oauth_ident *id)
{
	const json_t	*g, *v;
	size_t		 i;

	id->ngroups = 0;
	if (is->groups_claim[0] == '\0' ||
	    (g = json_object_get(claims, is->groups_claim)) == NULL)
		return 0;
	if (!json_is_array(g) && !json_is_string(g))
		return -1;
	for (i = 0; i < (json_is_array(g) ? json_array_size(g) : 1); i++) {
		v = json_is_array(g) ? json_array_get(g, i) : g;
		if (!json_is_string(v) || strlen(json_string_value(v)) !=
		    json_string_length(v) || utf8_name_check(json_string_value(
		    v), json_string_length(v), NULL) != UTF8_NAME_OK)
			return -1;
		group_map(is, v, id);
	}
	return 0;
}

enum oauth_verdict
oauth_claims_check(const struct oauth_issuer *is, const json_t *claims,
    int64_t now, struct oauth_ident *id, char *why, size_t whylen)
{
	const json_t	*jti;
	char		 value[PRINCIPAL_MAX];
	int64_t		 exp, nbf;
	size_t		 i, off = 0;
	int		 r;

	if (!json_is_object(claims)) {
		WHY("claims are not a JSON object");
		return OAUTH_INVALID;
	}
	snprintf(id->issuer, sizeof(id->issuer), "%s", is->issuer);
	/* The proof beside the principal, exactly as the token says it. */
	if (claim_text(claims, "sub", id->subject, sizeof(id->subject)) ==
	    -1 || (r = claim_text(claims, "client_id", id->client_id,
	    sizeof(id->client_id))) == -1 || (r == 0 && claim_text(claims,
	    "azp", id->client_id, sizeof(id->client_id)) == -1)) {
		WHY("sub, client_id or azp is no clean name of its size");
		return OAUTH_INVALID;
	}
	if ((jti = json_object_get(claims, "jti")) != NULL &&
	    json_is_string(jti))
		sha256_hex(json_string_value(jti), json_string_length(jti),
		    id->jti_sha256);
	if (claim_time(claims, "exp", &exp) != 1) {
		WHY("no exp claim, or not a time");
		return OAUTH_INVALID;
	}
	if (now > exp + is->leeway_s) {
		WHY("expired %lld s ago", (long long)(now - exp));
		return OAUTH_INVALID;
	}
	if ((r = claim_time(claims, "nbf", &nbf)) == -1 || (r == 1 &&
	    now + is->leeway_s < nbf)) {
		WHY("not valid before %lld", (long long)nbf);
		return OAUTH_INVALID;
	}
	if (!aud_ok(json_object_get(claims, "aud"), is->audience)) {
		WHY("audience is not %s", is->audience);
		return OAUTH_INVALID;
	}
	/* Printable ASCII only: no look-alikes, nothing to normalise. */
	if (claim_text(claims, is->principal_claim, value, sizeof(value)) !=
	    1 || !principal_name_ok(value) || xsnprintf(id->principal,
	    sizeof(id->principal), "%s%s", is->principal_prefix, value) ==
	    -1) {
		WHY("claim %s is missing or no principal name (printable "
		    "ASCII without spaces)", is->principal_claim);
		return OAUTH_INVALID;
	}
	if (claim_groups(is, claims, id) == -1) {
		WHY("claim %s is neither a string nor a list of strings, each "
		    "without control or invisible characters", is->groups_claim);
		return OAUTH_INVALID;
	}
	id->scope_needed[0] = '\0';
	for (i = 0; i < is->nscopes; i++)
		if (!scope_granted(claims, is->scopes[i]))
			off += (size_t)snprintf(id->scope_needed + off,
			    sizeof(id->scope_needed) - off, "%s%s", off ? " " :
			    "", is->scopes[i]);
	if (off > 0) {
		WHY("scope %s not granted", id->scope_needed);
		return OAUTH_SCOPE;
	}
	return OAUTH_OK;
}

/*
 * Whether the key may verify alg: RSA for RS/PS, EC on alg's curve, and
 * only the alg the JWK names when it names one (RFC 7517 section 4.4).
 */
static int
key_fits(const struct oauth_key *k, unsigned alg)
{
	cjose_err	 err;
	cjose_jwk_ec_curve crv;

	if (k->alg != 0 && k->alg != alg)
		return 0;
	switch (cjose_jwk_get_kty(k->jwk, &err)) {
	case CJOSE_JWK_KTY_RSA:
		return (alg & (OAUTH_RS256 | OAUTH_RS384 | OAUTH_RS512 |
		    OAUTH_PS256 | OAUTH_PS384 | OAUTH_PS512)) != 0;
	case CJOSE_JWK_KTY_EC:
		crv = cjose_jwk_EC_get_curve(k->jwk, &err);
		return (alg == OAUTH_ES256 && crv == CJOSE_JWK_EC_P_256) ||
		    (alg == OAUTH_ES384 && crv == CJOSE_JWK_EC_P_384) ||
		    (alg == OAUTH_ES512 && crv == CJOSE_JWK_EC_P_521);
	default:
		return 0;	/* oct: HMAC with a "public" key, never */
	}
}

/*
 * The one length a signature of alg by the key has (RFC 7518): R and S
 * of the curve's size each for ES (3.4), the modulus' length for RS and
 * PS (3.3, 3.5).  Any other length is another string for the same
 * signature, or none; cjose 0.6.2 and OpenSSL take some of them.
 */
static size_t
sig_len(const struct oauth_key *k, unsigned alg)
{
	cjose_err	 err;

	switch (alg) {
	case OAUTH_ES256:
		return 64;
	case OAUTH_ES384:
		return 96;
	case OAUTH_ES512:
		return 132;
	default:
		return (cjose_jwk_get_keysize(k->jwk, &err) + 7) / 8;
	}
}

/*
 * Verifies jws with the key named kid, or with each fitting key when the
 * token names none: 1 verified, 0 no such key, -1 no key verifies it.
 */
static int
key_verify(const struct oauth_issuer *is, cjose_jws_t *jws, const char *kid,
    unsigned alg, size_t siglen)
{
	cjose_err	 err;
	size_t		 i;
	int		 found = 0;

	for (i = 0; i < is->nkeys; i++) {
		if ((kid != NULL && strcmp(is->keys[i].kid, kid) != 0) ||
		    !key_fits(&is->keys[i], alg))
			continue;
		found = 1;
		if (siglen == sig_len(&is->keys[i], alg) &&
		    cjose_jws_verify(jws, is->keys[i].jwk, &err))
			return 1;
	}
	return found ? -1 : 0;
}

/*
 * RFC 7515 compact form: three base64url parts, no padding, each strictly
 * base64 (lib/hash.h).  Checked before libcjose sees the bytes: cjose
 * 0.6.2 asserts (aborts the process) on a '=' inside a part, which a
 * client could send, and decodes pad bits it should refuse, so that one
 * signature had sixteen spellings.
 */
static int
compact_ok(const char *t, size_t len)
{
	const char	*part = t, *dot;
	size_t		 parts = 0;

	if (memchr(t, '\0', len) != NULL)
		return 0;
	for (;;) {
		dot = memchr(part, '.', len - (size_t)(part - t));
		if (base64_check(BASE64_URL, part, dot != NULL ?
		    (size_t)(dot - part) : len - (size_t)(part - t)) == -1)
			return 0;
		parts++;
		if (dot == NULL)
			break;
		part = dot + 1;
	}
	return parts == 3;
}

/*
 * The signature's length in bytes.  t is compact_ok's: its parts are
 * canonical unpadded base64url (pad bits zero, never one character left
 * over), so the length follows from the part's: one signature, one
 * spelling.
 */
static size_t
sig_bytes(const char *t, size_t len)
{
	const char	*p = (const char *)memrchr(t, '.', len) + 1;
	size_t		 plen = len - (size_t)(p - t);

	return plen / 4 * 3 + (plen % 4 != 0 ? plen % 4 - 1 : 0);
}

/*
 * RFC 7515 section 4.1.11: every name in crit must be understood, and we
 * implement no extension (cjose 0.6.2 neither, b64 included).  An empty
 * list asks nothing (producers must not send it; docs/policy.md).
 */
static int
crit_ok(const json_t *hdr)
{
	const json_t	*crit = json_object_get(hdr, "crit");

	return crit == NULL || (json_is_array(crit) &&
	    json_array_size(crit) == 0);
}

static struct oauth_issuer *
issuer_find(struct oauth_issuers *set, const char *iss)
{
	size_t	 i;

	for (i = 0; iss != NULL && i < set->n; i++)
		if (strcmp(set->v[i].issuer, iss) == 0)
			return &set->v[i];
	return NULL;
}

/*
 * A kid the issuer lacks: 1 when the keys may have changed since (look
 * again), 0 when the token must wait for a fetch, -1 to refuse.
 */
static int
key_missing(struct oauth_issuer *is, enum oauth_wait wait)
{
	if (wait == OAUTH_NOWAIT || (wait == OAUTH_WAIT && is->fetch == NULL))
		return -1;
	if (wait == OAUTH_WAIT)
		return 0;
	/* Keys rotate: an unknown kid looks again, rarely (see jwks.c). */
	switch (jwks_refresh(is, mono_ms())) {
	case 1:
		return 0;
	case 0:
		return 1;
	default:
		return -1;
	}
}

enum oauth_verdict
oauth_verify(struct oauth_issuers *set, const char *token, size_t len,
    int64_t now, enum oauth_wait wait, struct oauth_ident *id, char *why,
    size_t whylen)
{
	enum oauth_verdict	 v = OAUTH_INVALID;
	struct oauth_issuer	*is;
	cjose_jws_t		*jws = NULL;
	cjose_err		 err;
	json_t			*hdr, *claims = NULL;
	json_error_t		 je;
	const char		*alg, *kid;
	uint8_t			*payload;
	size_t			 plen, siglen;
	unsigned		 bit;
	int			 r;

	memset(id, 0, sizeof(*id));
	if (len > OAUTH_TOKEN_MAX) {
		WHY("token longer than %d bytes", OAUTH_TOKEN_MAX);
		return OAUTH_INVALID;
	}
	if (!compact_ok(token, len)) {
		WHY("not a compact JWS (three base64url parts)");
		return OAUTH_INVALID;
	}
	if ((jws = cjose_jws_import(token, len, &err)) == NULL) {
		WHY("not a JWS: %s", err.message);
		return OAUTH_INVALID;
	}
	hdr = (json_t *)cjose_jws_get_protected(jws);
	alg = json_string_value(json_object_get(hdr, "alg"));
	kid = json_string_value(json_object_get(hdr, "kid"));
	if (!crit_ok(hdr)) {
		WHY("crit names an extension we do not implement");
		goto out;
	}
	/* The payload picks the issuer; it is trusted once verified. */
	if (!cjose_jws_get_plaintext(jws, &payload, &plen, &err) ||
	    (claims = json_loadb((const char *)payload, plen,
	    JSON_REJECT_DUPLICATES, &je)) == NULL || !json_is_object(claims)) {
		WHY("payload is not a JSON object");
		goto out;
	}
	if ((is = issuer_find(set, json_string_value(json_object_get(claims,
	    "iss")))) == NULL) {
		WHY("issuer %.128s is not trusted", json_is_string(
		    json_object_get(claims, "iss")) ? json_string_value(
		    json_object_get(claims, "iss")) : "(none)");
		goto out;
	}
	snprintf(id->issuer, sizeof(id->issuer), "%s", is->issuer);
	if ((bit = oauth_alg_bit(alg)) == 0 || (is->algs & bit) == 0) {
		WHY("alg %.16s is not accepted from this issuer", alg ? alg :
		    "(none)");
		goto out;
	}
	siglen = sig_bytes(token, len);
	if ((r = key_verify(is, jws, kid, bit, siglen)) == 0) {
		switch (key_missing(is, wait)) {
		case 0:
			WHY("waiting for %s's keys", is->issuer);
			v = OAUTH_PENDING;
			goto out;
		case 1:
			r = key_verify(is, jws, kid, bit, siglen);
			break;
		}
	}
	if (r == 0) {
		WHY("no %s key with kid %.64s", alg, kid ? kid : "(none)");
		goto out;
	}
	if (r == -1) {
		WHY("signature does not verify");
		goto out;
	}
	v = oauth_claims_check(is, claims, now, id, why, whylen);
out:
	json_decref(claims);
	cjose_jws_release(jws);
	return v;
}
