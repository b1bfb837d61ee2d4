/*
 * OAuth tokens' signatures and the issuer's keys: a token signed by the
 * issuer's key passes and nothing else does (another key, another
 * algorithm, none, a crit we do not know, a signature of the wrong
 * length); a JWKS key is used only for what it says it is for; an
 * unknown kid waits for a fetch under way.
 */
#include <cjose/cjose.h>

#include "oauth_fixture.h"
#include "testutil.h"

/* A compact JWS of claims signed with jwk under alg. */
static char *
sign(const cjose_jwk_t *jwk, const char *alg, const char *kid,
    const char *claims)
{
	cjose_header_t	*h = cjose_header_new(NULL);
	cjose_jws_t	*jws;
	cjose_err	 err;
	const char	*out;
	char		*s;

	cjose_header_set(h, CJOSE_HDR_ALG, alg, &err);
	if (kid != NULL)
		cjose_header_set(h, CJOSE_HDR_KID, kid, &err);
	jws = cjose_jws_sign(jwk, h, (const uint8_t *)claims, strlen(claims),
	    &err);
	ck_assert_msg(jws != NULL, "sign: %s", err.message);
	ck_assert(cjose_jws_export(jws, &out, &err));
	s = xstrdup(out);
	cjose_jws_release(jws);
	cjose_header_release(h);
	return s;
}

/* oauth_verify of t as a server would, at NOW. */
static enum oauth_verdict
verify(struct oauth_issuers *set, const char *t, struct oauth_ident *id)
{
	char	 why[256];

	return oauth_verify(set, t, strlen(t), NOW, OAUTH_FETCH, id, why,
	    sizeof(why));
}

/* The issuer's JWKS: the public half of jwk, as kid. */
static void
publish(struct oauth_issuer *is, const cjose_jwk_t *jwk, const char *kid)
{
	cjose_err	 err;
	char		*pub = cjose_jwk_to_json(jwk, false, &err);
	json_t		*k = json_loads(pub, 0, NULL), *set;

	json_object_set_new(k, "kid", json_string(kid));
	set = json_pack("{s:[o]}", "keys", k);
	ck_assert_uint_eq(jwks_set_keys(is, set), 1);
	json_decref(set);
	free(pub);
}

#define CLAIMS	"{\"iss\":\"" ISS "\",\"sub\":\"svc\",\"aud\":\"" AUD "\"," \
		"\"exp\":4000000000,\"scope\":\"mcp:tools\"}"

START_TEST(test_signatures)
{
	static const uint8_t	 e[] = { 1, 0, 1 };
	struct oauth_issuers	 set;
	struct oauth_ident	 id;
	cjose_jwk_t		*rsa, *other, *ec, *oct;
	cjose_err		 err;
	char			*t, why[256], *dot, none[2048];
	size_t			 n;

	memset(&set, 0, sizeof(set));
	issuer_init(&set.v[0]);
	set.v[0].refreshed_ms = mono_ms();	/* no refetch from here */
	set.n = 1;
	rsa = cjose_jwk_create_RSA_random(2048, e, sizeof(e), &err);
	other = cjose_jwk_create_RSA_random(2048, e, sizeof(e), &err);
	ec = cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, &err);
	oct = cjose_jwk_create_oct_random(32, &err);
	ck_assert(rsa && other && ec && oct);
	publish(&set.v[0], rsa, "k1");

	t = sign(rsa, "RS256", "k1", CLAIMS);
	ck_assert_int_eq(verify(&set, t, &id), OAUTH_OK);
	ck_assert_str_eq(id.principal, "oidc:svc");
	/* The same signature spelled with its pad bits set: cjose decodes it
	 * to the same bytes; a strict decoder refuses the second spelling. */
	{
		static const char	 url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789-_";
		char	*u = xstrdup(t), *last = u + strlen(u) - 1;

		ck_assert_uint_eq(strlen(strrchr(u, '.') + 1) % 4, 2);
		*last = url[(strchr(url, *last) - url) | 1];
		ck_assert_int_eq(oauth_verify(&set, u, strlen(u), NOW, OAUTH_FETCH, &id,
		    why, sizeof(why)), OAUTH_INVALID);
		ck_assert_msg(strstr(why, "base64url") != NULL, "%s", why);
		free(u);
	}
	/* Tampered: one byte of the payload. */
	dot = strchr(t, '.') + 5;
	*dot = *dot == 'A' ? 'B' : 'A';
	ck_assert_int_eq(verify(&set, t, &id), OAUTH_INVALID);
	free(t);
	t = sign(rsa, "PS256", "k1", CLAIMS);
	ck_assert_int_eq(verify(&set, t, &id), OAUTH_OK);
	free(t);
	/* Not in the issuer's algorithms: RS512. */
	t = sign(rsa, "RS512", "k1", CLAIMS);
	ck_assert_int_eq(oauth_verify(&set, t, strlen(t), NOW, OAUTH_FETCH,
	    &id, why, sizeof(why)), OAUTH_INVALID);
	ck_assert_msg(strstr(why, "alg RS512") != NULL, "%s", why);
	free(t);
	/* Another key under the same kid; an unknown kid. */
	t = sign(other, "RS256", "k1", CLAIMS);
	ck_assert_int_eq(verify(&set, t, &id), OAUTH_INVALID);
	free(t);
	t = sign(other, "RS256", "k2", CLAIMS);
	ck_assert_int_eq(oauth_verify(&set, t, strlen(t), NOW, OAUTH_FETCH,
	    &id, why, sizeof(why)), OAUTH_INVALID);
	ck_assert_msg(strstr(why, "kid k2") != NULL, "%s", why);
	free(t);
	/* HMAC, with any secret: never. */
	t = sign(oct, "HS256", "k1", CLAIMS);
	ck_assert_int_eq(verify(&set, t, &id), OAUTH_INVALID);
	free(t);
	/* An ES256 token where the issuer publishes only RSA. */
	t = sign(ec, "ES256", "k1", CLAIMS);
	ck_assert_int_eq(verify(&set, t, &id), OAUTH_INVALID);
	free(t);
	/* alg none, unsigned. */
	snprintf(none, sizeof(none), "eyJhbGciOiJub25lIn0.");
	n = strlen(none);
	ck_assert(cjose_base64url_encode((const uint8_t *)CLAIMS,
	    strlen(CLAIMS), &dot, &n, &err));
	snprintf(none + strlen(none), sizeof(none) - strlen(none), "%s.",
	    dot);
	cjose_get_dealloc()(dot);
	ck_assert_int_eq(verify(&set, none, &id), OAUTH_INVALID);
	/* No kid: each fitting key is tried (two published, the second signs). */
	{
		char	*a = cjose_jwk_to_json(other, false, &err);
		char	*b = cjose_jwk_to_json(rsa, false, &err);
		json_t	*jwks = json_pack("{s:[o,o]}", "keys",
		    json_loads(a, 0, NULL), json_loads(b, 0, NULL));

		ck_assert_uint_eq(jwks_set_keys(&set.v[0], jwks), 2);
		json_decref(jwks);
		free(a);
		free(b);
	}
	t = sign(rsa, "RS256", NULL, CLAIMS);
	ck_assert_int_eq(verify(&set, t, &id), OAUTH_OK);
	free(t);
	t = sign(ec, "ES256", NULL, CLAIMS);
	ck_assert_int_eq(verify(&set, t, &id), OAUTH_INVALID);
	free(t);
	/* Junk; a '=' inside a part (libcjose 0.6.2 would abort on it). */
	ck_assert_int_eq(verify(&set, "a.b.c", &id), OAUTH_INVALID);
	t = xstrdup("eyJhbGciOiJSUzI1NiIsImtpZCRS2=6I6ImsxIn0.e30.c2ln");
	ck_assert_int_eq(verify(&set, t, &id), OAUTH_INVALID);
	free(t);
	/* A reload that could not fetch keeps the keys fetched before. */
	{
		struct oauth_issuers	 next;

		memset(&next, 0, sizeof(next));
		issuer_init(&next.v[0]);
		next.n = 1;
		oauth_issuers_inherit(&next, &set);
		ck_assert_uint_eq(next.v[0].nkeys, 2);
		oauth_issuers_clear(&set);
		t = sign(rsa, "RS256", NULL, CLAIMS);
		ck_assert_int_eq(verify(&next, t, &id), OAUTH_OK);
		free(t);
		oauth_issuers_clear(&next);
	}
	cjose_jwk_release(rsa);
	cjose_jwk_release(other);
	cjose_jwk_release(ec);
	cjose_jwk_release(oct);
}
END_TEST

/* A compact JWS of claims under a protected header given as JSON. */
static char *
sign_hdr(const cjose_jwk_t *jwk, const char *hdr, const char *claims)
{
	json_t		*h = json_loads(hdr, 0, NULL);
	cjose_jws_t	*jws;
	cjose_err	 err;
	const char	*out;
	char		*s;

	ck_assert_ptr_nonnull(h);
	jws = cjose_jws_sign(jwk, (cjose_header_t *)h, (const uint8_t *)claims,
	    strlen(claims), &err);
	ck_assert_msg(jws != NULL, "sign: %s", err.message);
	ck_assert(cjose_jws_export(jws, &out, &err));
	s = xstrdup(out);
	cjose_jws_release(jws);
	json_decref(h);
	return s;
}

/* The token with its signature's bytes replaced by n bytes of sig. */
static char *
with_sig(const char *t, const uint8_t *sig, size_t n)
{
	cjose_err	 err;
	char		*enc, *out;
	size_t		 elen, head = (size_t)(strrchr(t, '.') - t) + 1;

	ck_assert(cjose_base64url_encode(sig, n, &enc, &elen, &err));
	out = xcalloc(1, head + elen + 1);
	memcpy(out, t, head);
	memcpy(out + head, enc, elen);
	cjose_get_dealloc()(enc);
	return out;
}

/* The token's signature bytes (caller frees with cjose's dealloc). */
static uint8_t *
sig_of(const char *t, size_t *n)
{
	cjose_err	 err;
	uint8_t		*sig;
	const char	*p = strrchr(t, '.') + 1;

	ck_assert(cjose_base64url_decode(p, strlen(p), &sig, n, &err));
	return sig;
}

static struct oauth_issuers	 vset;

/* One issuer publishing jwk (its public half, as JSON k with extras). */
static size_t
vset_publish(const cjose_jwk_t *jwk, const char *extra)
{
	cjose_err	 err;
	char		*pub = cjose_jwk_to_json(jwk, false, &err);
	json_t		*k = json_loads(pub, 0, NULL), *x, *set;
	size_t		 n;

	oauth_issuers_clear(&vset);
	memset(&vset, 0, sizeof(vset));
	issuer_init(&vset.v[0]);
	vset.v[0].algs = OAUTH_ALGS_DEFAULT | OAUTH_RS512 | OAUTH_ES384;
	vset.v[0].refreshed_ms = mono_ms();	/* no refetch from here */
	vset.n = 1;
	json_object_set_new(k, "kid", json_string("k1"));
	if (extra != NULL) {
		x = json_loads(extra, 0, NULL);
		ck_assert_ptr_nonnull(x);
		json_object_update(k, x);
		json_decref(x);
	}
	set = json_pack("{s:[o]}", "keys", k);
	n = jwks_set_keys(&vset.v[0], set);
	json_decref(set);
	free(pub);
	return n;
}

static enum oauth_verdict
vset_verify(const char *t)
{
	struct oauth_ident	 id;

	return verify(&vset, t, &id);
}

/* The verdict on t with its signature's bytes replaced by n of sig. */
static enum oauth_verdict
vset_verify_sig(const char *t, const uint8_t *sig, size_t n)
{
	char			*u = with_sig(t, sig, n);
	enum oauth_verdict	 v = vset_verify(u);

	free(u);
	return v;
}

/* RFC 7515 section 4.1.11: a crit we do not understand is refused. */
START_TEST(test_crit_refused)
{
	static const uint8_t	 e[] = { 1, 0, 1 };
	cjose_jwk_t		*rsa;
	cjose_err		 err;
	char			*t;

	rsa = cjose_jwk_create_RSA_random(2048, e, sizeof(e), &err);
	ck_assert_uint_eq(vset_publish(rsa, NULL), 1);
	t = sign_hdr(rsa, "{\"alg\":\"RS256\",\"kid\":\"k1\"}", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_OK);
	free(t);
	t = sign_hdr(rsa, "{\"alg\":\"RS256\",\"kid\":\"k1\",\"crit\":"
	    "[\"x-must\"],\"x-must\":1}", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_INVALID);
	free(t);
	/* crit naming b64 (RFC 7797), which cjose does not implement. */
	t = sign_hdr(rsa, "{\"alg\":\"RS256\",\"kid\":\"k1\",\"crit\":"
	    "[\"b64\"],\"b64\":true}", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_INVALID);
	free(t);
	/* Not even a list. */
	t = sign_hdr(rsa, "{\"alg\":\"RS256\",\"kid\":\"k1\",\"crit\":"
	    "\"x-must\"}", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_INVALID);
	free(t);
	/* An empty list asks nothing of us (docs/policy.md). */
	t = sign_hdr(rsa, "{\"alg\":\"RS256\",\"kid\":\"k1\",\"crit\":[]}",
	    CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_OK);
	free(t);
	oauth_issuers_clear(&vset);
	cjose_jwk_release(rsa);
}
END_TEST

/*
 * RFC 7518 sections 3.4 and 3.3: an ES256 signature is exactly 64 bytes,
 * an RSA one exactly the modulus' length, in canonical base64url: no
 * other string carries the same signature.
 */
START_TEST(test_signature_length_exact)
{
	static const uint8_t	 e[] = { 1, 0, 1 };
	cjose_jwk_t		*ec, *ec384, *rsa;
	cjose_err		 err;
	uint8_t			*sig, buf[600];
	char			*t, *u, *last;
	size_t			 n, i;
	int			 found = 0;

	ec = cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, &err);
	ck_assert_uint_eq(vset_publish(ec, NULL), 1);
	t = sign(ec, "ES256", "k1", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_OK);
	sig = sig_of(t, &n);
	ck_assert_uint_eq(n, 64);
	/* 65 and 66 bytes: zero-padded, and zeros put before r and s. */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, sig, 64);
	for (i = 65; i <= 66; i++)
		ck_assert_msg(vset_verify_sig(t, buf, i) == OAUTH_INVALID,
		    "%zu bytes", i);
	buf[0] = 0;
	memcpy(buf + 1, sig, 32);
	buf[33] = 0;
	memcpy(buf + 34, sig + 32, 32);
	ck_assert_int_eq(vset_verify_sig(t, buf, 66), OAUTH_INVALID);
	ck_assert_int_eq(vset_verify_sig(t, sig, 63), OAUTH_INVALID);
	/* The same 64 bytes, spelled with the last character's unused bits
	 * set: another token string for one signature. */
	u = xstrdup(t);
	last = u + strlen(u) - 1;
	*last = *last == 'A' ? 'B' : *last == 'Q' ? 'R' : *last == 'g' ? 'h' :
	    *last == 'w' ? 'x' : *last;
	ck_assert_int_eq(vset_verify(u), OAUTH_INVALID);
	free(u);
	cjose_get_dealloc()(sig);
	free(t);

	/* ES384 on P-384: 96 bytes. */
	ec384 = cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_384, &err);
	ck_assert_uint_eq(vset_publish(ec384, NULL), 1);
	t = sign(ec384, "ES384", "k1", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_OK);
	sig = sig_of(t, &n);
	ck_assert_uint_eq(n, 96);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, sig, n);
	ck_assert_int_eq(vset_verify_sig(t, buf, 97), OAUTH_INVALID);
	cjose_get_dealloc()(sig);
	free(t);

	/* PS256 whose signature starts with a zero byte: the 255 bytes
	 * after it are the same number, and must not verify. */
	rsa = cjose_jwk_create_RSA_random(2048, e, sizeof(e), &err);
	ck_assert_uint_eq(vset_publish(rsa, NULL), 1);
	for (i = 0; i < 4000 && !found; i++) {
		t = sign(rsa, "PS256", "k1", CLAIMS);
		sig = sig_of(t, &n);
		ck_assert_uint_eq(n, 256);
		if (sig[0] == 0) {
			found = 1;
			ck_assert_int_eq(vset_verify(t), OAUTH_OK);
			ck_assert_int_eq(vset_verify_sig(t, sig + 1, 255),
			    OAUTH_INVALID);
		}
		cjose_get_dealloc()(sig);
		free(t);
	}
	ck_assert(found);
	/* RS256 with a zero byte put before it. */
	t = sign(rsa, "RS256", "k1", CLAIMS);
	sig = sig_of(t, &n);
	buf[0] = 0;
	memcpy(buf + 1, sig, n);
	ck_assert_int_eq(vset_verify_sig(t, buf, n + 1), OAUTH_INVALID);
	cjose_get_dealloc()(sig);
	free(t);
	oauth_issuers_clear(&vset);
	cjose_jwk_release(ec);
	cjose_jwk_release(ec384);
	cjose_jwk_release(rsa);
}
END_TEST

/* RFC 7517 section 4: a key's alg and key_ops bind it; RFC 7518 3.3: RSA
 * keys of 2048 bits or more. */
START_TEST(test_key_restrictions)
{
	static const uint8_t	 e[] = { 1, 0, 1 };
	cjose_jwk_t		*rsa, *small, *odd, *ec;
	cjose_err		 err;
	char			*t;

	rsa = cjose_jwk_create_RSA_random(2048, e, sizeof(e), &err);
	ck_assert_uint_eq(vset_publish(rsa, "{\"alg\":\"PS256\"}"), 1);
	t = sign(rsa, "PS256", "k1", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_OK);
	free(t);
	t = sign(rsa, "RS256", "k1", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_INVALID);
	free(t);
	ck_assert_uint_eq(vset_publish(rsa, "{\"alg\":\"RS256\"}"), 1);
	t = sign(rsa, "PS256", "k1", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_INVALID);
	free(t);
	t = sign(rsa, "RS512", "k1", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_INVALID);
	free(t);
	/* An alg we do not verify with: the key is for something else. */
	ck_assert_uint_eq(vset_publish(rsa, "{\"alg\":\"RSA-OAEP\"}"), 0);
	/* key_ops: verify, or the key is not for verifying. */
	ck_assert_uint_eq(vset_publish(rsa, "{\"key_ops\":[\"verify\"]}"), 1);
	t = sign(rsa, "RS256", "k1", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_OK);
	ck_assert_uint_eq(vset_publish(rsa, "{\"key_ops\":[\"encrypt\"]}"),
	    0);
	ck_assert_int_eq(vset_verify(t), OAUTH_INVALID);
	ck_assert_uint_eq(vset_publish(rsa, "{\"key_ops\":\"verify\"}"), 0);
	ck_assert_uint_eq(vset_publish(rsa, "{\"use\":\"enc\"}"), 0);
	free(t);
	/* 1024 and 2047 bits: too small, whatever they sign. */
	small = cjose_jwk_create_RSA_random(1024, e, sizeof(e), &err);
	ck_assert_uint_eq(vset_publish(small, NULL), 0);
	t = sign(small, "RS256", "k1", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_INVALID);
	free(t);
	odd = cjose_jwk_create_RSA_random(2047, e, sizeof(e), &err);
	ck_assert_uint_eq(vset_publish(odd, NULL), 0);
	/* An EC key whose alg names another curve's. */
	ec = cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, &err);
	ck_assert_uint_eq(vset_publish(ec, "{\"alg\":\"ES384\"}"), 1);
	t = sign(ec, "ES256", "k1", CLAIMS);
	ck_assert_int_eq(vset_verify(t), OAUTH_INVALID);
	free(t);
	oauth_issuers_clear(&vset);
	cjose_jwk_release(rsa);
	cjose_jwk_release(small);
	cjose_jwk_release(odd);
	cjose_jwk_release(ec);
}
END_TEST

/*
 * A kid the issuer lacks: a token waits for a fetch under way (and only a
 * token that may start one starts one); one that may not wait is refused.
 */
START_TEST(test_unknown_kid_waits)
{
	static const uint8_t	 e[] = { 1, 0, 1 };
	struct oauth_ident	 id;
	cjose_jwk_t		*rsa;
	cjose_err		 err;
	char			*t, why[256];
	int			 underway;

	rsa = cjose_jwk_create_RSA_random(2048, e, sizeof(e), &err);
	ck_assert_uint_eq(vset_publish(rsa, NULL), 1);
	t = sign(rsa, "RS256", "k-new", CLAIMS);
	/* Rate-limited, nothing under way: refused whatever it may do. */
	ck_assert_int_eq(oauth_verify(&vset, t, strlen(t), NOW, OAUTH_FETCH,
	    &id, why, sizeof(why)), OAUTH_INVALID);
	ck_assert_int_eq(oauth_verify(&vset, t, strlen(t), NOW, OAUTH_WAIT,
	    &id, why, sizeof(why)), OAUTH_INVALID);
	/* A fetch under way (a stand-in: nothing runs it here). */
	vset.v[0].fetch = (struct jwks_fetch *)&underway;
	ck_assert_int_eq(oauth_verify(&vset, t, strlen(t), NOW, OAUTH_FETCH,
	    &id, why, sizeof(why)), OAUTH_PENDING);
	ck_assert_int_eq(oauth_verify(&vset, t, strlen(t), NOW, OAUTH_WAIT,
	    &id, why, sizeof(why)), OAUTH_PENDING);
	ck_assert_int_eq(oauth_verify(&vset, t, strlen(t), NOW, OAUTH_NOWAIT,
	    &id, why, sizeof(why)), OAUTH_INVALID);
	/* A kid it has needs no wait. */
	free(t);
	t = sign(rsa, "RS256", "k1", CLAIMS);
	ck_assert_int_eq(oauth_verify(&vset, t, strlen(t), NOW, OAUTH_NOWAIT,
	    &id, why, sizeof(why)), OAUTH_OK);
	vset.v[0].fetch = NULL;
	free(t);
	oauth_issuers_clear(&vset);
	cjose_jwk_release(rsa);
}
END_TEST

static Suite *
oauth_keys_suite(void)
{
	Suite	*s = suite_create("oauth_keys");
	TCase	*tc = tcase_create("core");

	/* test_signature_length_exact signs until a PS256 one starts with 0. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_signatures);
	tcase_add_test(tc, test_crit_refused);
	tcase_add_test(tc, test_signature_length_exact);
	tcase_add_test(tc, test_key_restrictions);
	tcase_add_test(tc, test_unknown_kid_waits);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(oauth_keys_suite)
