/*
 * OAuth access tokens and mTLS rules: the issuers and mtls sections of
 * principals.yaml are validated whole (never none, HS*, or EdDSA, which
 * cjose 0.6.2 cannot verify); each claim check refuses on its own;
 * certificate names map to principals only by their rule.  Signatures
 * and keys: check_oauth_keys.c.
 */
#include "oauth_fixture.h"
#include "testutil.h"
#include "transport/mtls.h"
#include "transport/oauth.h"
#include "transport/principals.h"

static void
rules_with(char *dir, size_t len, const char *yaml)
{
	char	 p[PATH_MAX];

	tu_tmpdir(dir, len);
	tu_path(p, sizeof(p), dir, PRINCIPALS_FILE);
	tu_write(p, yaml, strlen(yaml));
}

START_TEST(test_issuer_loads_with_defaults)
{
	struct principals	*p;
	struct oauth_issuers	*set;
	char			 dir[PATH_MAX];

	rules_with(dir, sizeof(dir), "issuers:\n  - issuer: " ISS "\n"
	    "    audience: " AUD "\n    scopes: [mcp:tools]\n"
	    "    groups_claim: groups\n"
	    "    groups: {\"/Team Leads\": leads, admins: idp-admins}\n");
	ck_assert_ptr_nonnull(p = principals_load(dir));
	set = principals_issuers(p);
	ck_assert_uint_eq(set->n, 1);
	ck_assert_str_eq(set->v[0].principal_claim, "sub");
	/* The only issuer may leave its prefix to the default. */
	ck_assert_str_eq(set->v[0].principal_prefix, "oidc:");
	ck_assert_uint_eq(set->v[0].ngroups, 2);
	ck_assert_str_eq(set->v[0].groups[0].claim, "/Team Leads");
	ck_assert_str_eq(set->v[0].groups[0].group, "leads");
	ck_assert_uint_eq(set->v[0].algs, OAUTH_ALGS_DEFAULT);
	ck_assert_int_eq(principals_auth_required(p), 1);
	principals_free(p);
}
END_TEST

#define ISS_B	"https://login.example.org/b"
#define TWO(pa, pb)							\
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n" pa	\
	"  - issuer: " ISS_B "\n    audience: " AUD "\n" pb
#define STATIC(principal, groups)					\
	"tokens:\n  - sha256: \"" HASH0 "\"\n    principal: " principal	\
	"\n    groups: " groups "\n"
#define HASH0	"0000000000000000000000000000000000000000000000000000000000000000"
#define MTLS	"mtls:\n  cert_file: /c\n  key_file: /k\n  ca_file: /a\n"

/* Two issuers, a static token and certificates, each with names of its own. */
START_TEST(test_issuers_apart_load)
{
	struct principals	*p;
	struct oauth_issuers	*set;
	char			 dir[PATH_MAX];

	rules_with(dir, sizeof(dir), TWO("    principal_prefix: \"a:\"\n"
	    "    groups_claim: groups\n    groups: {admins: a-admins}\n",
	    "    principal_prefix: \"b:\"\n    groups_claim: roles\n"
	    "    groups: {admins: b-admins, ops: b-admins}\n")
	    STATIC("\"user:alice\"", "[analysts]") MTLS);
	ck_assert_ptr_nonnull(p = principals_load(dir));
	set = principals_issuers(p);
	ck_assert_uint_eq(set->n, 2);
	ck_assert_str_eq(set->v[1].principal_prefix, "b:");
	principals_free(p);
}
END_TEST

static const char *const bad[] = {
	"issuers:\n  - audience: " AUD "\n",
	"issuers:\n  - issuer: " ISS "\n",
	"issuers:\n  - issuer: http://idp.example.com\n    audience: " AUD "\n",
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    algorithms: [none]\n",
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    algorithms: [HS256]\n",
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    algorithms: [EdDSA]\n",
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    algorithms: []\n",
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    scopes: [\"a b\"]\n",
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    leeway_s: 3600\n",
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "  - issuer: " ISS "\n    audience: " AUD "\n",
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n    color: red\n",
	"mtls:\n  key_file: /k\n  ca_file: /c\n",
	"mtls:\n  cert_file: c\n  key_file: /k\n  ca_file: /c\n",
	"mtls:\n  cert_file: /c\n  key_file: /k\n  ca_file: /c\n"
	    "  principal: [{from: serial}]\n",
	"mtls:\n  cert_file: /c\n  key_file: /k\n  ca_file: /c\n"
	    "  principal: []\n",
	"mtls:\n  cert_file: /c\n  key_file: /k\n  ca_file: /c\n"
	    "  principal: [{from: cn, prefix: \"a b\"}]\n",
	/* Two sources that could make one principal or one group. */
	/* Two issuers: each must say its prefix; the default is no one's. */
	TWO("", ""),
	TWO("    principal_prefix: \"a:\"\n", ""),
	TWO("    principal_prefix: \"idp:\"\n",
	    "    principal_prefix: \"idp:\"\n"),
	/* One starts the other: a:x:bob is b's x:bob and a's bob. */
	TWO("    principal_prefix: \"a:x:\"\n",
	    "    principal_prefix: \"a:\"\n"),
	TWO("    principal_prefix: \"\"\n",
	    "    principal_prefix: \"b:\"\n"),
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    principal_prefix: \"\"\n",
	/* A static token's principal an issuer's tokens could make. */
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    principal_prefix: \"user:\"\n"
	    STATIC("\"user:alice\"", "[]"),
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    STATIC("\"oidc:alice\"", "[]"),
	/* Client certificates' names (cert: by default). */
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    principal_prefix: \"cert:\"\n" MTLS,
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    principal_prefix: \"spiffe:\"\n" MTLS
	    "  principal: [{from: san_uri, prefix: \"\", match: \"spiffe://\"}]\n",
	/* One group of ours from two issuers, or from an issuer and a token. */
	TWO("    principal_prefix: \"a:\"\n    groups_claim: groups\n"
	    "    groups: {admins: admins}\n",
	    "    principal_prefix: \"b:\"\n    groups_claim: groups\n"
	    "    groups: {root: admins}\n"),
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    groups_claim: groups\n    groups: {analysts: analysts}\n"
	    STATIC("\"user:alice\"", "[analysts]"),
	/* groups_claim says where; groups: which count, as which of ours. */
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    groups_claim: groups\n",
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    groups: {admins: admins}\n",
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    groups_claim: groups\n    groups: {admins: \"a b\"}\n",
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    groups_claim: groups\n    groups: {\"adm\\u202eins\": a}\n",
	"issuers:\n  - issuer: " ISS "\n    audience: " AUD "\n"
	    "    groups_claim: groups\n    groups: [admins]\n",
};

START_TEST(test_bad_files_refused)
{
	char	 dir[PATH_MAX];

	rules_with(dir, sizeof(dir), bad[_i]);
	ck_assert_msg(principals_load(dir) == NULL, "accepted: %s", bad[_i]);
}
END_TEST

static enum oauth_verdict
check(const char *claims, struct oauth_ident *id)
{
	struct oauth_issuer	 is;
	json_t			*c;
	char			 why[256];
	enum oauth_verdict	 v;

	issuer_init(&is);
	c = json_loads(claims, JSON_ALLOW_NUL, NULL);
	ck_assert_ptr_nonnull(c);
	v = oauth_claims_check(&is, c, NOW, id, why, sizeof(why));
	json_decref(c);
	return v;
}

#define BASE	"\"iss\":\"" ISS "\",\"sub\":\"svc-1\",\"exp\":1800000300"

START_TEST(test_claims_accepted_and_refused)
{
	struct oauth_ident	 id;

	memset(&id, 0, sizeof(id));
	ck_assert_int_eq(check("{" BASE ",\"aud\":\"" AUD "\",\"scope\":"
	    "\"openid mcp:tools\",\"azp\":\"cli\",\"jti\":\"x\",\"groups\":"
	    "[\"b c\",\"a\",\"admins\",\"d\",\"A\",\"grp-a\"]}", &id),
	    OAUTH_OK);
	ck_assert_str_eq(id.principal, "oidc:svc-1");
	ck_assert_str_eq(id.client_id, "cli");
	ck_assert_uint_eq(strlen(id.jti_sha256), SHA256_HEX);
	/* Only the issuer's groups it lists count, as ours, each once:
	 * admins, A and grp-a (a name of ours, not of the issuer's) grant
	 * nothing. */
	ck_assert_uint_eq(id.ngroups, 2);
	ck_assert_str_eq(id.groups[0], "team-bc");
	ck_assert_str_eq(id.groups[1], "grp-a");
	ck_assert_int_eq(check("{" BASE ",\"aud\":\"" AUD "\",\"scope\":"
	    "\"mcp:tools\",\"groups\":\"b c\"}", &id), OAUTH_OK);
	ck_assert_uint_eq(id.ngroups, 1);
	ck_assert_str_eq(id.groups[0], "team-bc");
	/* aud as an array, scp as Entra ID and Okta send it. */
	ck_assert_int_eq(check("{" BASE ",\"aud\":[\"x\",\"" AUD "\"],\"scp\":"
	    "[\"mcp:tools\"]}", &id), OAUTH_OK);
	/* Within the leeway, both ways. */
	ck_assert_int_eq(check("{\"sub\":\"s\",\"exp\":1799999980,\"aud\":\""
	    AUD "\",\"scope\":\"mcp:tools\"}", &id), OAUTH_OK);
	ck_assert_int_eq(check("{" BASE ",\"nbf\":1800000020,\"aud\":\"" AUD
	    "\",\"scope\":\"mcp:tools\"}", &id), OAUTH_OK);

	ck_assert_int_eq(check("{\"sub\":\"s\",\"exp\":1799999960,\"aud\":\""
	    AUD "\",\"scope\":\"mcp:tools\"}", &id), OAUTH_INVALID);
	ck_assert_int_eq(check("{\"sub\":\"s\",\"aud\":\"" AUD "\",\"scope\":"
	    "\"mcp:tools\"}", &id), OAUTH_INVALID);
	ck_assert_int_eq(check("{\"sub\":\"s\",\"exp\":\"soon\",\"aud\":\""
	    AUD "\",\"scope\":\"mcp:tools\"}", &id), OAUTH_INVALID);
	ck_assert_int_eq(check("{" BASE ",\"nbf\":1800000060,\"aud\":\"" AUD
	    "\",\"scope\":\"mcp:tools\"}", &id), OAUTH_INVALID);
	ck_assert_int_eq(check("{" BASE ",\"aud\":\"" AUD "/\",\"scope\":"
	    "\"mcp:tools\"}", &id), OAUTH_INVALID);
	ck_assert_int_eq(check("{" BASE ",\"scope\":\"mcp:tools\"}", &id),
	    OAUTH_INVALID);
	ck_assert_int_eq(check("{\"exp\":1800000300,\"aud\":\"" AUD "\","
	    "\"scope\":\"mcp:tools\"}", &id), OAUTH_INVALID);
	ck_assert_int_eq(check("{" BASE ",\"sub\":\"a b\",\"aud\":\"" AUD
	    "\",\"scope\":\"mcp:tools\"}", &id), OAUTH_INVALID);
	/* A scope is a whole word: mcp:toolsX is not mcp:tools. */
	ck_assert_int_eq(check("{" BASE ",\"aud\":\"" AUD "\",\"scope\":"
	    "\"mcp:toolsX mcp:tool\"}", &id), OAUTH_SCOPE);
	ck_assert_str_eq(id.scope_needed, "mcp:tools");
}
END_TEST

#define GOOD	"\"aud\":\"" AUD "\",\"scope\":\"mcp:tools\""

/* An identity is taken exactly or refused, never rewritten. */
static const char *const bad_claims[] = {
	"{\"sub\":\"alice\\nadmin\",\"exp\":1800000300," GOOD "}",
	"{\"sub\":\"alice\\u0000\",\"exp\":1800000300," GOOD "}",
	"{\"sub\":\"al\\u001bice\",\"exp\":1800000300," GOOD "}",
	"{\"sub\":\"m\\u00fcller\",\"exp\":1800000300," GOOD "}",
	"{\"sub\":\"\\u0430lice\",\"exp\":1800000300," GOOD "}",
	"{\"sub\":\"alice\\u202e\",\"exp\":1800000300," GOOD "}",
	"{\"sub\":\"\",\"exp\":1800000300," GOOD "}",
	"{\"sub\":7,\"exp\":1800000300," GOOD "}",
	"{\"sub\":[\"alice\"],\"exp\":1800000300," GOOD "}",
	/* The proof recorded beside the principal, too. */
	"{\"sub\":\"s\",\"client_id\":\"c\\u0007\",\"exp\":1800000300," GOOD
	    "}",
	"{\"sub\":\"s\",\"azp\":\"\\u200fc\",\"exp\":1800000300," GOOD "}",
	/* groups: a string or a list of strings, each a clean name. */
	"{\"sub\":\"s\",\"groups\":\"adm\\nins\",\"exp\":1800000300," GOOD "}",
	"{\"sub\":\"s\",\"groups\":[\"ok\",\"adm\\u0000\"],\"exp\":1800000300,"
	    GOOD "}",
	"{\"sub\":\"s\",\"groups\":[\"ok\",7],\"exp\":1800000300," GOOD "}",
	"{\"sub\":\"s\",\"groups\":{\"a\":1},\"exp\":1800000300," GOOD "}",
	/* Times past what a clock can say: refused on purpose. */
	"{\"sub\":\"s\",\"exp\":9223372036854775807," GOOD "}",
	"{\"sub\":\"s\",\"exp\":1e300," GOOD "}",
	"{\"sub\":\"s\",\"exp\":1800000300,\"nbf\":-9223372036854775807,"
	    GOOD "}",
	"{\"sub\":\"s\",\"exp\":1800000300,\"nbf\":\"now\"," GOOD "}",
};

START_TEST(test_claims_taken_exactly_or_refused)
{
	struct oauth_ident	 id;

	memset(&id, 0, sizeof(id));
	ck_assert_msg(check(bad_claims[_i], &id) == OAUTH_INVALID,
	    "accepted: %s as %s", bad_claims[_i], id.principal);
}
END_TEST

/* A refetch on an unknown kid waits refresh_min_s after the last one. */
START_TEST(test_refresh_is_rate_limited)
{
	struct oauth_issuer	 is;

	issuer_init(&is);
	is.refresh_min_s = 30;
	is.refreshed_ms = 1000000;
	ck_assert_int_eq(jwks_refresh(&is, 1000000 + 29999), -1);
	ck_assert_uint_eq(is.refreshed_ms, 1000000);
}
END_TEST

START_TEST(test_certificate_rules)
{
	struct mtls_rule	 r;
	char			 out[PRINCIPAL_MAX];

	memset(&r, 0, sizeof(r));
	snprintf(r.prefix, sizeof(r.prefix), "spiffe:");
	snprintf(r.match, sizeof(r.match), "spiffe://example.org/");
	ck_assert_int_eq(mtls_rule_apply(&r, "spiffe://example.org/ci", 23,
	    out, sizeof(out)), 0);
	ck_assert_str_eq(out, "spiffe:spiffe://example.org/ci");
	ck_assert_int_eq(mtls_rule_apply(&r, "spiffe://example.com/ci", 23,
	    out, sizeof(out)), -1);
	/* A NUL inside the name, a space, nothing at all. */
	ck_assert_int_eq(mtls_rule_apply(&r, "spiffe://example.org/a\0b", 24,
	    out, sizeof(out)), -1);
	ck_assert_int_eq(mtls_rule_apply(&r, "spiffe://example.org/a b", 24,
	    out, sizeof(out)), -1);
	ck_assert_int_eq(mtls_rule_apply(&r, "", 0, out, sizeof(out)), -1);
}
END_TEST

static Suite *
oauth_suite(void)
{
	Suite	*s = suite_create("oauth");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_issuer_loads_with_defaults);
	tcase_add_loop_test(tc, test_bad_files_refused, 0, nitems(bad));
	tcase_add_test(tc, test_issuers_apart_load);
	tcase_add_test(tc, test_claims_accepted_and_refused);
	tcase_add_test(tc, test_refresh_is_rate_limited);
	tcase_add_test(tc, test_certificate_rules);
	tcase_add_loop_test(tc, test_claims_taken_exactly_or_refused, 0,
	    nitems(bad_claims));
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(oauth_suite)
