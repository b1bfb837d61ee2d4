/*
 * lib/audit_fit.c: lists cut to their byte budgets with their true count,
 * names cut at character boundaries, shared lists left alone, and the
 * largest record mcp-exec writes (every fixed field at its limit, every
 * list grown far past its budget) within AUDIT_RECORD_MAX.
 */
#include "audit_fit.h"
#include "sandbox/artifacts.h"
#include "sessions/profile.h"
#include "sessions/session.h"
#include "tools/tools.h"
#include "testutil.h"

/* A list of n objects of about size bytes each. */
static json_t *
list_of(size_t n, size_t size)
{
	json_t	*a = json_array();
	char	*s = xmalloc(size + 1);
	size_t	 i;

	memset(s, 'x', size);
	s[size] = '\0';
	for (i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:I, s:s}", "i",
		    (json_int_t)i, "s", s));
	free(s);
	return a;
}

/* A string of n copies of the UTF-8 character c. */
static char *
repeat(const char *c, size_t n)
{
	size_t	 l = strlen(c), i;
	char	*s = xmalloc(n * l + 1);

	for (i = 0; i < n; i++)
		memcpy(s + i * l, c, l);
	s[n * l] = '\0';
	return s;
}

START_TEST(test_list_within_budget_is_untouched)
{
	json_t	*ev = json_object(), *a = list_of(3, 10);

	json_object_set(ev, "artifacts", a);
	audit_fit_list(ev, "artifacts", 1024);
	ck_assert_ptr_eq(json_object_get(ev, "artifacts"), a);
	ck_assert_int_eq(json_object_size(ev), 1);
	/* Exactly at the budget is within it. */
	audit_fit_list(ev, "artifacts", audit_json_size(a));
	ck_assert_int_eq(json_object_size(ev), 1);
	/* Not a list: nothing to do. */
	json_object_set_new(ev, "inputs", json_string("no list"));
	audit_fit_list(ev, "inputs", 1);
	audit_fit_list(ev, "absent", 1);
	ck_assert_int_eq(json_object_size(ev), 2);
	json_decref(a);
	json_decref(ev);
}
END_TEST

START_TEST(test_list_cut_keeps_its_head_and_says_how_many)
{
	json_t	*ev = json_object(), *a = list_of(1000, 100), *cut;
	size_t	 i;

	json_object_set(ev, "packages", a);
	audit_fit_list(ev, "packages", 4096);
	cut = json_object_get(ev, "packages");
	ck_assert_uint_le(audit_json_size(cut), 4096);
	/* As many as fit: one more would not. */
	ck_assert_uint_gt(audit_json_size(cut) + audit_json_size(
	    json_array_get(a, 0)) + 1, 4096);
	ck_assert_uint_gt(json_array_size(cut), 0);
	for (i = 0; i < json_array_size(cut); i++)
		ck_assert_ptr_eq(json_array_get(cut, i), json_array_get(a, i));
	ck_assert_int_eq(json_integer_value(json_object_get(ev,
	    "packages_count")), 1000);
	ck_assert(json_is_true(json_object_get(ev, "packages_truncated")));
	/* The list was shared (the session keeps it): never cut in place. */
	ck_assert_int_eq(json_array_size(a), 1000);
	json_decref(a);
	json_decref(ev);
}
END_TEST

/* An item larger than the whole budget leaves the list empty, counted. */
START_TEST(test_item_over_the_budget_is_left_out)
{
	json_t	*ev = json_object();

	json_object_set_new(ev, "inputs", list_of(2, 5000));
	audit_fit_list(ev, "inputs", 2048);
	ck_assert_int_eq(json_array_size(json_object_get(ev, "inputs")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(ev,
	    "inputs_count")), 2);
	ck_assert(json_is_true(json_object_get(ev, "inputs_truncated")));
	json_decref(ev);
}
END_TEST

/* Escapes count as the log writes them: a character may take 12 bytes. */
START_TEST(test_string_cut_at_a_character_boundary)
{
	static const char *const chars[] = { "a", "\"", "\x01", "\xc3\xa9",
	    "\xe2\x82\xac", "\xf0\x9f\x98\x80" };
	const char	*c = chars[_i];
	json_t		*ev = json_object(), *v;
	char		*s = repeat(c, 1000);
	size_t		 len;

	json_object_set_new(ev, "session_id", json_string(s));
	audit_fit_string(ev, "session_id", AUDIT_NAME_MAX);
	v = json_object_get(ev, "session_id");
	len = json_string_length(v);
	ck_assert_uint_le(audit_json_size(v), AUDIT_NAME_MAX);
	ck_assert_uint_gt(len, 0);
	ck_assert_uint_eq(len % strlen(c), 0);
	ck_assert(memcmp(json_string_value(v), s, len) == 0);
	ck_assert(json_is_true(json_object_get(ev, "session_id_truncated")));
	/* A short one stays as it is. */
	json_object_set_new(ev, "session_id", json_string(c));
	json_object_del(ev, "session_id_truncated");
	audit_fit_string(ev, "session_id", AUDIT_NAME_MAX);
	ck_assert_str_eq(json_string_value(json_object_get(ev, "session_id")),
	    c);
	ck_assert_ptr_null(json_object_get(ev, "session_id_truncated"));
	free(s);
	json_decref(ev);
}
END_TEST

/* run_command's argv is the call's: the record cuts a copy. */
START_TEST(test_argv_object_cut_in_a_copy)
{
	json_t	*argv, *ev, *got, *args = json_array();
	char	*big = repeat("z", 4096), *name = repeat("c", 5000);
	size_t	 i;

	for (i = 0; i < 64; i++)
		json_array_append_new(args, json_string(big));
	argv = json_pack("{s:s, s:o}", "command", name, "args", args);
	ev = json_pack("{s:s, s:O}", "event", "call_refused", "argv", argv);
	audit_fit_call(ev);
	got = json_object_get(ev, "argv");
	ck_assert_ptr_ne(got, argv);
	ck_assert_uint_le(audit_json_size(got), AUDIT_ARGS_BUDGET +
	    AUDIT_NAME_MAX + 128);
	ck_assert_int_eq(json_integer_value(json_object_get(got,
	    "args_count")), 64);
	ck_assert(json_is_true(json_object_get(got, "args_truncated")));
	ck_assert(json_is_true(json_object_get(got, "command_truncated")));
	ck_assert_int_eq(json_array_size(json_object_get(argv, "args")), 64);
	ck_assert_str_eq(json_string_value(json_object_get(argv, "command")),
	    name);
	/* `mcp-exec run`'s argv is a plain list. */
	json_object_set_new(ev, "argv", json_incref(args));
	audit_fit_call(ev);
	ck_assert_int_eq(json_integer_value(json_object_get(ev,
	    "argv_count")), 64);
	free(big);
	free(name);
	json_decref(argv);
	json_decref(ev);
}
END_TEST

/* A string of len bytes of the worst character for its field. */
static json_t *
str_max(const char *c, size_t len)
{
	char	*s = repeat(c, len);
	json_t	*v = json_string(s);

	free(s);
	return v;
}

/*
 * The largest code_execution mcp-exec can write (tools.c execution_record,
 * deliver.c tool_with_client): every bounded field at its limit, escaped
 * as badly as its characters allow, and every list far past its budget
 * with items of the largest kind.
 */
START_TEST(test_largest_record_within_the_limit)
{
	json_t	*ev, *client, *groups = json_array(), *l;
	char	*art = repeat("\xc3\xa9", ARTIFACT_NAME_MAX / 2), *out;
	size_t	 i;

	for (i = 0; i < CLIENT_GROUPS_MAX; i++)
		json_array_append_new(groups, str_max("g", CLIENT_GROUP_MAX - 1));
	client = json_pack("{s:o, s:o, s:s, s:o, s:I, s:s, s:o, s:o, s:o, "
	    "s:o, s:o, s:o}", "name", str_max("\"", CLIENT_NAME_MAX - 1),
	    "version", str_max("\"", CLIENT_VERSION_MAX - 1), "transport",
	    "stdio", "remote_addr", str_max("f", CLIENT_ADDR_MAX - 1),
	    "remote_port", (json_int_t)65535, "auth", "bearer", "issuer",
	    str_max("\"", CLIENT_ISSUER_MAX - 1), "subject", str_max("\"",
	    CLIENT_SUBJECT_MAX - 1), "client_id", str_max("\"",
	    CLIENT_ID_MAX - 1), "jti_sha256", str_max("a", 64), "cert_sha256",
	    str_max("a", 64), "groups", groups);
	ev = json_pack("{s:s, s:o, s:o, s:o, s:I, s:{s:s, s:s}, "
	    "s:{s:f, s:I, s:i, s:i}, s:o, s:i, s:I, s:I, s:I, s:o, s:s, s:o, "
	    "s:o, s:b, s:b, s:b, s:s, s:b, s:I, s:i, s:o, s:s}",
	    "event", "code_execution",
	    "principal", str_max("\"", PRINCIPAL_MAX - 1),
	    "session_id", str_max("a", SESSION_ID_MAX - 1),
	    "code_hash", str_max("a", 7 + 64),
	    "code_size", (json_int_t)INT64_MAX,
	    "sandbox", "runtime", "gvisor", "image", "host-usr",
	    "limits", "cpu", 1e300, "mem_mb", (json_int_t)INT64_MAX, "pids",
	    INT32_MIN, "timeout_ms", INT32_MIN,
	    "network", str_max("a", PROFILE_NAME_MAX - 1),
	    "exit_code", INT32_MIN,
	    "duration_ms", (json_int_t)INT64_MAX,
	    "stdout_bytes", (json_int_t)INT64_MAX,
	    "stderr_bytes", (json_int_t)INT64_MAX,
	    "artifacts", json_array(),
	    "decision", "allow",
	    "pattern_hits", json_array(),
	    "profile", str_max("a", PROFILE_NAME_MAX - 1),
	    "timed_out", 1, "cancelled", 1, "session_lost", 1,
	    "end", "driver_failed",
	    "oom_killed", 1,
	    "memory_limit_mb", (json_int_t)INT64_MAX,
	    "crash_status", INT32_MIN,
	    "reason", str_max("\"", 256),
	    "tool", "execute_python");
	ck_assert_ptr_nonnull(ev);
	/* The lists, each far past its budget. */
	l = json_object_get(ev, "artifacts");
	for (i = 0; i < 1000; i++)
		json_array_append_new(l, json_pack("{s:s, s:o, s:I, s:s}",
		    "name", art, "sha256", str_max("a", 64), "size",
		    (json_int_t)INT64_MAX, "mime", "application/vnd.openxml"
		    "formats-officedocument.spreadsheetml.sheet"));
	l = json_object_get(ev, "pattern_hits");
	for (i = 0; i < 256; i++)
		json_array_append_new(l, json_pack("{s:o, s:s, s:s, s:I, s:o}",
		    "id", str_max("A", 32), "severity", "critical", "action",
		    "flag", "line", (json_int_t)INT64_MAX, "error",
		    str_max("\"", 256)));
	json_object_set_new(ev, "packages", l = json_array());
	for (i = 0; i < 1024; i++)
		json_array_append_new(l, json_pack("{s:o, s:o, s:o, s:o}",
		    "name", str_max("a", 127), "version", str_max("1", 127),
		    "sha256", str_max("a", 64), "url", str_max("\xf0\x9f\x98\x80",
		    1023 / 4)));
	json_object_set_new(ev, "package_index", str_max("a", PROFILE_URL_MAX -
	    1));
	json_object_set_new(ev, "inputs", l = json_array());
	for (i = 0; i < TOOL_FILES_MAX; i++)
		json_array_append_new(l, json_pack("{s:s, s:I, s:o}", "name",
		    art, "size", (json_int_t)INT64_MAX, "sha256", str_max("a",
		    7 + 64)));
	json_object_set_new(ev, "argv", json_pack("{s:o, s:o}", "command",
	    str_max("\xf0\x9f\x98\x80", 10000), "args", l = json_array()));
	for (i = 0; i < 64; i++)
		json_array_append_new(l, str_max("\x01", 4096));
	/* Output samples of control characters, each escaped six-fold, and
	 * the profile's retention that goes with them. */
	out = repeat("\x01", 64 * 1024);
	audit_output_sample(ev, out, out);
	free(out);
	json_object_set_new(ev, "code_retention_min", json_string("sample"));
	/* tool_with_client's part: the lists are cut there. */
	audit_fit_call(ev);
	json_object_set_new(ev, "client", client);
	json_object_set_new(ev, "request", str_max("\"", TOOL_REQUEST_ID_MAX -
	    1));
	json_object_set_new(ev, "task_id", str_max("a", 32));
	json_object_set_new(ev, "trace", json_pack("{s:o, s:o}", "traceparent",
	    str_max("a", TOOL_TRACEPARENT_MAX - 1), "tracestate",
	    str_max("\"", TOOL_TRACESTATE_MAX - 1)));
	printf("largest code_execution: %zu bytes of %d\n",
	    audit_json_size(ev), AUDIT_RECORD_MAX);
	ck_assert_uint_le(audit_json_size(ev), AUDIT_RECORD_MAX);
	ck_assert(json_is_true(json_object_get(ev, "packages_truncated")));
	ck_assert(json_is_true(json_object_get(ev, "artifacts_truncated")));
	ck_assert(json_is_true(json_object_get(ev, "pattern_hits_truncated")));
	ck_assert(json_is_true(json_object_get(ev, "inputs_truncated")));
	ck_assert(json_is_true(json_object_get(ev, "stdout_sample_truncated")));
	ck_assert_uint_le(audit_json_size(json_object_get(ev,
	    "stderr_sample")), AUDIT_OUTPUT_SAMPLE_MAX);
	free(art);
	json_decref(ev);
}
END_TEST

static Suite *
audit_fit_suite(void)
{
	Suite	*s = suite_create("audit_fit");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_list_within_budget_is_untouched);
	tcase_add_test(tc, test_list_cut_keeps_its_head_and_says_how_many);
	tcase_add_test(tc, test_item_over_the_budget_is_left_out);
	tcase_add_loop_test(tc, test_string_cut_at_a_character_boundary, 0, 6);
	tcase_add_test(tc, test_argv_object_cut_in_a_copy);
	tcase_add_test(tc, test_largest_record_within_the_limit);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(audit_fit_suite)
