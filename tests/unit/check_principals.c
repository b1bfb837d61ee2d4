/*
 * rules/principals.yaml: tokens map to their principals by hash only; a
 * missing or empty file has no tokens; every malformed entry is refused
 * with its position.
 */
#include "testutil.h"
#include "transport/principals.h"

static void
hash_of(const char *token, char out[SHA256_HEX + 1])
{
	sha256_hex(token, strlen(token), out);
}

/* A rules directory holding principals.yaml with yaml. */
static void
rules_with(char *dir, size_t len, const char *yaml)
{
	char	 p[PATH_MAX];

	tu_tmpdir(dir, len);
	tu_path(p, sizeof(p), dir, PRINCIPALS_FILE);
	tu_write(p, yaml, strlen(yaml));
}

static struct principals *
load_two(void)
{
	struct principals	*p;
	char			 dir[PATH_MAX], ha[SHA256_HEX + 1];
	char			 hb[SHA256_HEX + 1], yaml[512];

	hash_of("alice-token", ha);
	hash_of("bob-token", hb);
	snprintf(yaml, sizeof(yaml), "tokens:\n"
	    "  - sha256: %s\n    principal: \"user:alice@example.com\"\n"
	    "  - sha256: %s\n    principal: user:bob@example.com\n"
	    "    description: CI runner\n", ha, hb);
	rules_with(dir, sizeof(dir), yaml);
	p = principals_load(dir);
	ck_assert_ptr_nonnull(p);
	return p;
}

START_TEST(test_tokens_map_to_their_principals)
{
	struct principals	*p = load_two();

	ck_assert_uint_eq(principals_count(p), 2);
	ck_assert_str_eq(principals_lookup(p, "alice-token", 11),
	    "user:alice@example.com");
	ck_assert_str_eq(principals_lookup(p, "bob-token", 9),
	    "user:bob@example.com");
	principals_free(p);
}
END_TEST

START_TEST(test_unknown_tokens_have_no_principal)
{
	struct principals	*p = load_two();
	char			*big, h[SHA256_HEX + 1];

	ck_assert_ptr_null(principals_lookup(p, "alice-tokeN", 11));
	ck_assert_ptr_null(principals_lookup(p, "alice-token", 10));
	ck_assert_ptr_null(principals_lookup(p, "alice-token\n", 12));
	ck_assert_ptr_null(principals_lookup(p, "", 0));
	/* Whoever reads the file learns no token: a hash is not one. */
	hash_of("alice-token", h);
	ck_assert_ptr_null(principals_lookup(p, h, SHA256_HEX));
	big = xmalloc(PRINCIPALS_TOKEN_LEN_MAX + 1);
	memset(big, 'a', PRINCIPALS_TOKEN_LEN_MAX + 1);
	ck_assert_ptr_null(principals_lookup(p, big,
	    PRINCIPALS_TOKEN_LEN_MAX + 1));
	free(big);
	principals_free(p);
}
END_TEST

START_TEST(test_missing_and_empty_files_have_no_tokens)
{
	struct principals	*p;
	char			 dir[PATH_MAX];

	tu_tmpdir(dir, sizeof(dir));
	ck_assert_ptr_nonnull(p = principals_load(dir));
	ck_assert_uint_eq(principals_count(p), 0);
	ck_assert_ptr_null(principals_lookup(p, "x", 1));
	principals_free(p);
	rules_with(dir, sizeof(dir), "");
	ck_assert_ptr_nonnull(p = principals_load(dir));
	ck_assert_uint_eq(principals_count(p), 0);
	principals_free(p);
	rules_with(dir, sizeof(dir), "tokens: []\n");
	ck_assert_ptr_nonnull(p = principals_load(dir));
	ck_assert_uint_eq(principals_count(p), 0);
	principals_free(p);
}
END_TEST

START_TEST(test_shipped_rules_load)
{
	struct principals	*p;

	/* The repository ships no tokens: stdio and loopback HTTP only. */
	ck_assert_ptr_nonnull(p = principals_load("rules"));
	ck_assert_uint_eq(principals_count(p), 0);
	principals_free(p);
}
END_TEST

#define GOOD	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define OTHER	"1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char *const bad[] = {
	"tokens: {sha256: " GOOD ", principal: user:a}\n",
	"tokens:\n  - sha256: " GOOD "\n",
	"tokens:\n  - principal: user:a\n",
	"tokens:\n  - sha256: 0123\n    principal: user:a\n",
	"tokens:\n  - sha256: " GOOD "0\n    principal: user:a\n",
	/* Upper-case hex is refused: sha256sum prints lower case. */
	"tokens:\n  - sha256: 0123456789ABCDEF0123456789abcdef0123456789abcdef"
	    "0123456789abcdef\n    principal: user:a\n",
	"tokens:\n  - sha256: g123456789abcdef0123456789abcdef0123456789abcdef"
	    "0123456789abcdef\n    principal: user:a\n",
	"tokens:\n  - sha256: " GOOD "\n    principal: \"user a\"\n",
	"tokens:\n  - sha256: " GOOD "\n    principal: \"\"\n",
	"tokens:\n  - sha256: " GOOD "\n    principal: 42\n",
	"tokens:\n  - sha256: " GOOD "\n    principal: user:a\n    scope: all\n",
	"tokens:\n  - sha256: " GOOD "\n    principal: user:a\n"
	    "  - sha256: " GOOD "\n    principal: user:b\n",
	"tokens:\n  - just-a-string\n",
	"token:\n  - sha256: " GOOD "\n    principal: user:a\n",
	"- sha256: " GOOD "\n",
	"tokens:\n  - sha256: " GOOD "\n    principal: user:a\n"
	    "  - sha256: " OTHER "\n    principal: user:a\n  - [\n",
};

START_TEST(test_bad_files_refused)
{
	char	 dir[PATH_MAX];

	rules_with(dir, sizeof(dir), bad[_i]);
	ck_assert_msg(principals_load(dir) == NULL, "accepted: %s", bad[_i]);
}
END_TEST

START_TEST(test_errors_name_the_line)
{
	char	 dir[PATH_MAX], errpath[PATH_MAX], *out;
	size_t	 len;
	FILE	*f;

	rules_with(dir, sizeof(dir), "tokens:\n  - sha256: " GOOD "\n"
	    "    principal: user:a\n  - sha256: nothex\n    principal: user:b\n");
	tu_path(errpath, sizeof(errpath), dir, "stderr");
	f = freopen(errpath, "w", stderr);
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_null(principals_load(dir));
	fflush(stderr);
	out = tu_read(errpath, &len);
	ck_assert_msg(strstr(out, "principals.yaml:4:") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "sha256") != NULL, "%s", out);
	free(out);
}
END_TEST

START_TEST(test_too_many_tokens_refused)
{
	char	 dir[PATH_MAX], h[SHA256_HEX + 1], tok[32], *yaml;
	size_t	 cap = 200 * (PRINCIPALS_TOKENS_MAX + 2), off;
	int	 i;

	yaml = xmalloc(cap);
	off = (size_t)snprintf(yaml, cap, "tokens:\n");
	for (i = 0; i <= PRINCIPALS_TOKENS_MAX; i++) {
		snprintf(tok, sizeof(tok), "t%d", i);
		hash_of(tok, h);
		off += (size_t)snprintf(yaml + off, cap - off, "  - {sha256: %s,"
		    " principal: \"user:%d\"}\n", h, i);
	}
	rules_with(dir, sizeof(dir), yaml);
	ck_assert_ptr_null(principals_load(dir));
	free(yaml);
}
END_TEST

START_TEST(test_principal_names)
{
	char	 longname[PRINCIPAL_MAX + 1];

	ck_assert_int_eq(principal_name_ok("user:alice@example.com"), 1);
	ck_assert_int_eq(principal_name_ok("service:ci"), 1);
	ck_assert_int_eq(principal_name_ok(""), 0);
	ck_assert_int_eq(principal_name_ok("user alice"), 0);
	ck_assert_int_eq(principal_name_ok("user:\x01"), 0);
	ck_assert_int_eq(principal_name_ok("user:\xc3\xa9"), 0);
	memset(longname, 'a', PRINCIPAL_MAX);
	longname[PRINCIPAL_MAX - 1] = '\0';
	ck_assert_int_eq(principal_name_ok(longname), 1);
	longname[PRINCIPAL_MAX - 1] = 'a';
	longname[PRINCIPAL_MAX] = '\0';
	ck_assert_int_eq(principal_name_ok(longname), 0);
}
END_TEST

START_TEST(test_token_groups_belong_to_the_principal)
{
	struct principals	*p;
	char			 dir[PATH_MAX], ha[SHA256_HEX + 1];
	char			 hb[SHA256_HEX + 1], yaml[512];
	char			 g[CLIENT_GROUPS_MAX][CLIENT_GROUP_MAX];

	hash_of("a1", ha);
	hash_of("a2", hb);
	snprintf(yaml, sizeof(yaml), "tokens:\n"
	    "  - { sha256: %s, principal: user:a, groups: [ops, dev] }\n"
	    "  - { sha256: %s, principal: user:a, groups: [dev, qa] }\n"
	    "principals: []\ngroups: []\n", ha, hb);
	rules_with(dir, sizeof(dir), yaml);
	ck_assert_ptr_nonnull(p = principals_load(dir));
	ck_assert_uint_eq(principals_groups(p, "user:a", g, CLIENT_GROUPS_MAX),
	    3);
	ck_assert_str_eq(g[0], "ops");
	ck_assert_str_eq(g[2], "qa");
	ck_assert_uint_eq(principals_groups(p, "user:b", g, CLIENT_GROUPS_MAX),
	    0);
	principals_free(p);
	snprintf(yaml, sizeof(yaml), "tokens:\n"
	    "  - { sha256: %s, principal: user:a, groups: [\"a b\"] }\n", ha);
	rules_with(dir, sizeof(dir), yaml);
	ck_assert_ptr_null(principals_load(dir));
}
END_TEST

static Suite *
principals_suite(void)
{
	Suite	*s = suite_create("principals");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_tokens_map_to_their_principals);
	tcase_add_test(tc, test_unknown_tokens_have_no_principal);
	tcase_add_test(tc, test_missing_and_empty_files_have_no_tokens);
	tcase_add_test(tc, test_shipped_rules_load);
	tcase_add_loop_test(tc, test_bad_files_refused, 0, nitems(bad));
	tcase_add_test(tc, test_errors_name_the_line);
	tcase_add_test(tc, test_too_many_tokens_refused);
	tcase_add_test(tc, test_principal_names);
	tcase_add_test(tc, test_token_groups_belong_to_the_principal);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(principals_suite)
