/*
 * Tests for auditd/retention.c's policy texts and output samples: a
 * policy_load's files carry their content to auditd, which keeps each
 * one only under the hash its record names, within AUDIT_POLICY_KEEP_MAX,
 * and never lets a writer claim that a file was kept; a code_execution's
 * output samples are kept only with the code.
 */
#include "testutil.h"
#include "audit_fit.h"
#include "config.h"
#include "retention.h"

static json_t *
load_event(const char *content, const char *hex)
{
	return json_pack("{s:s, s:s, s:b, s:[{s:s, s:s, s:s}, {s:s, s:s}]}",
	    "event", "policy_load", "program", "mcp-exec", "ok", 1, "files",
	    "path", "/r/patterns.yaml", "sha256", hex, "content", content,
	    "path", "/r/commands.yaml", "sha256", "00");
}

static int
apply(json_t *ev, struct retained_code *rc, char *err, size_t len)
{
	struct audit_conf	 c;

	audit_conf_defaults(&c);
	return retention_apply(&c, ev, rc, err, len);
}

START_TEST(test_policy_content_kept_under_its_hash)
{
	struct retained_code	 rc;
	char			 hex[SHA256_HEX + 1], err[256];
	json_t			*ev, *f;

	sha256_hex("rules: []\n", 10, hex);
	ev = load_event("rules: []\n", hex);
	ck_assert_int_eq(apply(ev, &rc, err, sizeof(err)), 0);
	ck_assert_str_eq(rc.hex, hex);
	ck_assert_uint_eq(rc.len, 10);
	ck_assert_int_eq(memcmp(rc.data, "rules: []\n", 10), 0);
	ck_assert_ptr_null(rc.next);
	f = json_array_get(json_object_get(ev, "files"), 0);
	ck_assert_ptr_null(json_object_get(f, "content"));
	ck_assert(json_is_true(json_object_get(f, "kept")));
	/* The file sent without its text is not marked. */
	ck_assert_ptr_null(json_object_get(json_array_get(json_object_get(ev,
	    "files"), 1), "kept"));
	retention_free(&rc);
	json_decref(ev);
}
END_TEST

START_TEST(test_policy_content_refused_when_hash_differs)
{
	struct retained_code	 rc;
	char			 hex[SHA256_HEX + 1], err[256];
	json_t			*ev;

	sha256_hex("rules: []\n", 10, hex);
	ev = load_event("rules: [evil]\n", hex);
	memset(&rc, 0, sizeof(rc));
	ck_assert_int_eq(apply(ev, &rc, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "is not the sha256 of content"));
	retention_free(&rc);
	json_decref(ev);
}
END_TEST

START_TEST(test_policy_kept_is_not_a_writers_word)
{
	struct retained_code	 rc;
	char			 err[256];
	json_t			*ev;

	ev = json_pack("{s:s, s:s, s:b, s:[{s:s, s:s, s:b}]}", "event",
	    "policy_load", "program", "netguard", "ok", 1, "files", "path",
	    "/r/web.yaml", "sha256", "ab", "kept", 1);
	memset(&rc, 0, sizeof(rc));
	ck_assert_int_eq(apply(ev, &rc, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "'kept' is set by stockade-auditd"));
	json_decref(ev);
}
END_TEST

/* Three files whose texts add up past the budget: refused, nothing leaks
 * (the first two are already in the list when the third is read). */
START_TEST(test_policy_content_over_budget_refused)
{
	struct retained_code	 rc;
	char			 hex[SHA256_HEX + 1], err[256], *text;
	json_t			*ev, *files = json_array();
	size_t			 i, n = AUDIT_POLICY_KEEP_MAX / 2 - 1;

	text = malloc(n + 1);
	memset(text, 'x', n);
	text[n] = '\0';
	sha256_hex(text, n, hex);
	for (i = 0; i < 3; i++)
		json_array_append_new(files, json_pack("{s:s, s:s, s:s}",
		    "path", "/r/p.yaml", "sha256", hex, "content", text));
	ev = json_pack("{s:s, s:s, s:b, s:o}", "event", "policy_load",
	    "program", "mcp-exec", "ok", 1, "files", files);
	memset(&rc, 0, sizeof(rc));
	ck_assert_int_eq(apply(ev, &rc, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "exceed"));
	ck_assert_ptr_nonnull(rc.next);
	retention_free(&rc);
	ck_assert_ptr_null(rc.data);
	free(text);
	json_decref(ev);
}
END_TEST

/* Output samples go with the code's retention: dropped under hash, kept
 * under sample (the profile's code_retention_min counts); and only
 * auditd says which. */
START_TEST(test_output_samples_follow_code_retention)
{
	struct audit_conf	 c;
	struct retained_code	 rc;
	char			 err[256];
	json_t			*ev;

	audit_conf_defaults(&c);	/* code.retention: hash */
	ev = json_pack("{s:s, s:s, s:s}", "event", "code_execution",
	    "stdout_sample", "secret\n", "stderr_sample", "");
	ck_assert_int_eq(retention_apply(&c, ev, &rc, err, sizeof(err)), 0);
	ck_assert_ptr_null(json_object_get(ev, "stdout_sample"));
	ck_assert_ptr_null(json_object_get(ev, "stderr_sample"));
	ck_assert_str_eq(json_string_value(json_object_get(ev,
	    "output_retention")), "none");
	json_decref(ev);
	ev = json_pack("{s:s, s:s, s:s}", "event", "code_execution",
	    "stdout_sample", "hi\n", "code_retention_min", "sample");
	ck_assert_int_eq(retention_apply(&c, ev, &rc, err, sizeof(err)), 0);
	ck_assert_str_eq(json_string_value(json_object_get(ev,
	    "stdout_sample")), "hi\n");
	ck_assert_str_eq(json_string_value(json_object_get(ev,
	    "output_retention")), "sample");
	json_decref(ev);
	ev = json_pack("{s:s, s:s}", "event", "code_execution",
	    "output_retention", "sample");
	ck_assert_int_eq(retention_apply(&c, ev, &rc, err, sizeof(err)), -1);
	json_decref(ev);
}
END_TEST

static Suite *
retention_suite(void)
{
	Suite	*s = suite_create("retention");
	TCase	*tc = tcase_create("policy");

	tcase_add_test(tc, test_policy_content_kept_under_its_hash);
	tcase_add_test(tc, test_policy_content_refused_when_hash_differs);
	tcase_add_test(tc, test_policy_kept_is_not_a_writers_word);
	tcase_add_test(tc, test_policy_content_over_budget_refused);
	tcase_add_test(tc, test_output_samples_follow_code_retention);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(retention_suite)
