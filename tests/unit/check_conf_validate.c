/*
 * Tests for lib/conf_check.c: the validation context's getters, unknown
 * keys, size and enum parsing, and the error report.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "testutil.h"

#include "conf_fixture.h"

static struct conf_ctx	 ctx;

static struct conf_doc *
ctx_load(const char *yaml)
{
	struct conf_doc	*doc = load_ok(yaml);

	conf_ctx_init(&ctx, doc);
	return doc;
}

START_TEST(test_error_names_line_and_column)
{
	struct conf_doc	*doc = ctx_load("name: web\n\nport: eighty\n");
	int64_t		 port = 7;

	ck_assert_int_eq(conf_get_int(&ctx, conf_doc_root(doc), "port", 1,
	    65535, &port), -1);
	ck_assert_int_eq(port, 7);
	ck_assert_uint_eq(ctx.nerrors, 1);
	ck_assert_str_eq(ctx.errors[0], "t.yaml:3:7: key 'port': expected an "
	    "integer, got a string");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_conf_error_formats_position)
{
	struct conf_doc	*doc = ctx_load("list:\n  - a\n  - b\n");
	json_t		*list = json_object_get(conf_doc_root(doc), "list");

	conf_error(&ctx, json_array_get(list, 1), "bad item %d", 2);
	ck_assert_str_eq(ctx.errors[0], "t.yaml:3:5: bad item 2");
	conf_error(&ctx, json_true(), "no position");
	ck_assert_str_eq(ctx.errors[1], "t.yaml: no position");
	conf_error(&ctx, NULL, "null node");
	ck_assert_str_eq(ctx.errors[2], "t.yaml: null node");
	ck_assert_uint_eq(ctx.nerrors, 3);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_conf_error_long_message_truncated)
{
	struct conf_doc	*doc = ctx_load("a: 1\n");
	char		 big[2 * CONF_ERROR_LEN];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	conf_error(&ctx, conf_doc_root(doc), "%s", big);
	ck_assert_uint_eq(strlen(ctx.errors[0]), CONF_ERROR_LEN - 1);
	ck_assert(strncmp(ctx.errors[0], "t.yaml:1:1: xxx", 15) == 0);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_unknown_key_reported)
{
	static const char *const allowed[] = { "a", "b", "c", NULL };
	struct conf_doc	*doc = ctx_load("a: 1\nfoo: 2\nc: 3\nbar:\n  - x\n");

	ck_assert_int_eq(conf_check_keys(&ctx, conf_doc_root(doc), allowed),
	    -1);
	ck_assert_uint_eq(ctx.nerrors, 2);
	ck_assert_str_eq(ctx.errors[0], "t.yaml:2:6: unknown key 'foo' "
	    "(expected one of: a, b, c)");
	ck_assert_str_eq(ctx.errors[1], "t.yaml:5:3: unknown key 'bar' "
	    "(expected one of: a, b, c)");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_known_keys_pass)
{
	static const char *const allowed[] = { "a", "b", NULL };
	static const char *const none[] = { NULL };
	struct conf_doc	*doc = ctx_load("a: 1\nb: ~\n");

	ck_assert_int_eq(conf_check_keys(&ctx, conf_doc_root(doc), allowed),
	    0);
	ck_assert_uint_eq(ctx.nerrors, 0);
	/* Not a mapping: nothing to check, the type check reports it. */
	ck_assert_int_eq(conf_check_keys(&ctx, json_object_get(
	    conf_doc_root(doc), "a"), allowed), 0);
	ck_assert_int_eq(conf_check_keys(&ctx, NULL, allowed), 0);
	ck_assert_int_eq(conf_check_keys(&ctx, conf_doc_root(doc), none), -1);
	ck_assert_str_eq(ctx.errors[0], "t.yaml:1:4: unknown key 'a' (no keys "
	    "are allowed here)");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_unknown_key_escaped)
{
	static const char *const allowed[] = { "a", NULL };
	struct conf_doc	*doc = ctx_load("\"\\e]0;pwned\\a\": 1\n"
	    "\"caf\\u00e9\": 2\n");

	ck_assert_int_eq(conf_check_keys(&ctx, conf_doc_root(doc), allowed),
	    -1);
	ck_assert_str_eq(ctx.errors[0], "t.yaml:1:17: unknown key "
	    "'\\x1b]0;pwned\\x07' (expected one of: a)");
	ck_assert_str_eq(ctx.errors[1], "t.yaml:2:14: unknown key "
	    "'caf\\xc3\\xa9' (expected one of: a)");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_unknown_key_with_singleton_value_has_position)
{
	static const char *const allowed[] = { "a", NULL };
	struct conf_doc	*doc = ctx_load("a: 1\nx: true\ny: false\nz: ~\n");

	conf_check_keys(&ctx, conf_doc_root(doc), allowed);
	ck_assert_uint_eq(ctx.nerrors, 3);
	ck_assert(strncmp(ctx.errors[0], "t.yaml:2:4: unknown key 'x'",
	    27) == 0);
	ck_assert(strncmp(ctx.errors[1], "t.yaml:3:4: unknown key 'y'",
	    27) == 0);
	ck_assert(strncmp(ctx.errors[2], "t.yaml:4:4: unknown key 'z'",
	    27) == 0);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_null_means_absent)
{
	static const char *const choices[] = { "x", NULL };
	struct conf_doc	*doc = ctx_load("o: ~\na: null\ns:\nb: ~\ni: NULL\n"
	    "e: ~\nz: ~\n");
	json_t		*root = conf_doc_root(doc), *o = NULL, *a = NULL;
	const char	*s = "default";
	int64_t		 i = 5;
	uint64_t	 z = 6;
	int		 b = 3, e = 4;

	ck_assert_int_eq(conf_get_object(&ctx, root, "o", &o), 0);
	ck_assert_int_eq(conf_get_array(&ctx, root, "a", &a), 0);
	ck_assert_int_eq(conf_get_string(&ctx, root, "s", &s), 0);
	ck_assert_int_eq(conf_get_bool(&ctx, root, "b", &b), 0);
	ck_assert_int_eq(conf_get_int(&ctx, root, "i", 0, 10, &i), 0);
	ck_assert_int_eq(conf_get_enum(&ctx, root, "e", choices, &e), 0);
	ck_assert_int_eq(conf_get_size(&ctx, root, "z", 0, 10, &z), 0);
	ck_assert_ptr_null(o);
	ck_assert_ptr_null(a);
	ck_assert_str_eq(s, "default");
	ck_assert_int_eq(b, 3);
	ck_assert_int_eq(i, 5);
	ck_assert_int_eq(e, 4);
	ck_assert_uint_eq(z, 6);
	ck_assert_uint_eq(ctx.nerrors, 0);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_missing_key_and_missing_object_are_absent)
{
	struct conf_doc	*doc = ctx_load("a: 1\n");
	json_t		*sub = NULL;
	int64_t		 i = 9;

	ck_assert_int_eq(conf_get_int(&ctx, conf_doc_root(doc), "nope", 0, 10,
	    &i), 0);
	/* An optional section that was absent: its keys are absent too. */
	ck_assert_int_eq(conf_get_object(&ctx, conf_doc_root(doc), "sub",
	    &sub), 0);
	ck_assert_int_eq(conf_get_int(&ctx, sub, "x", 0, 10, &i), 0);
	ck_assert_int_eq(i, 9);
	ck_assert_uint_eq(ctx.nerrors, 0);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_getters_read_values)
{
	static const char *const modes[] = { "off", "log", "enforce", NULL };
	struct conf_doc	*doc = ctx_load("o: {k: v}\na: [1]\ns: text\nb: false\n"
	    "i: -3\ne: enforce\n");
	json_t		*root = conf_doc_root(doc), *o, *a;
	const char	*s;
	int64_t		 i;
	int		 b, e;

	ck_assert_int_eq(conf_get_object(&ctx, root, "o", &o), 1);
	ck_assert(json_is_object(o));
	ck_assert_int_eq(conf_get_array(&ctx, root, "a", &a), 1);
	ck_assert(json_is_array(a));
	ck_assert_int_eq(conf_get_string(&ctx, root, "s", &s), 1);
	ck_assert_str_eq(s, "text");
	ck_assert_int_eq(conf_get_bool(&ctx, root, "b", &b), 1);
	ck_assert_int_eq(b, 0);
	ck_assert_int_eq(conf_get_int(&ctx, root, "i", -3, -3, &i), 1);
	ck_assert_int_eq(i, -3);
	ck_assert_int_eq(conf_get_enum(&ctx, root, "e", modes, &e), 1);
	ck_assert_int_eq(e, 2);
	ck_assert_uint_eq(ctx.nerrors, 0);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_getters_reject_wrong_type)
{
	static const char *const modes[] = { "off", "on", NULL };
	struct conf_doc	*doc = ctx_load("o: [1]\na: {k: v}\ns: 5\nb: yes\n"
	    "i: 1.5\ne: 1\nz: true\n");
	json_t		*root = conf_doc_root(doc), *j = NULL;
	const char	*s = NULL;
	int64_t		 i = 0;
	uint64_t	 z = 0;
	int		 b = 0, e = 0;

	ck_assert_int_eq(conf_get_object(&ctx, root, "o", &j), -1);
	ck_assert_int_eq(conf_get_array(&ctx, root, "a", &j), -1);
	ck_assert_int_eq(conf_get_string(&ctx, root, "s", &s), -1);
	ck_assert_int_eq(conf_get_bool(&ctx, root, "b", &b), -1);
	ck_assert_int_eq(conf_get_int(&ctx, root, "i", 0, 10, &i), -1);
	ck_assert_int_eq(conf_get_enum(&ctx, root, "e", modes, &e), -1);
	ck_assert_int_eq(conf_get_size(&ctx, root, "z", 0, 10, &z), -1);
	ck_assert_ptr_null(j);
	ck_assert_uint_eq(ctx.nerrors, 7);
	ck_assert_str_eq(ctx.errors[0], "t.yaml:1:4: key 'o': expected a "
	    "mapping, got a sequence");
	ck_assert_str_eq(ctx.errors[1], "t.yaml:2:4: key 'a': expected a "
	    "sequence, got a mapping");
	ck_assert_str_eq(ctx.errors[2], "t.yaml:3:4: key 's': expected a "
	    "string, got an integer");
	ck_assert_str_eq(ctx.errors[3], "t.yaml:4:4: key 'b': expected a "
	    "boolean (true or false), got a string");
	ck_assert_str_eq(ctx.errors[4], "t.yaml:5:4: key 'i': expected an "
	    "integer, got a real number");
	ck_assert_str_eq(ctx.errors[5], "t.yaml:6:4: key 'e': expected one of: "
	    "off, on; got an integer");
	/* A boolean is a shared singleton, yet the error has a place. */
	ck_assert_str_eq(ctx.errors[6], "t.yaml:7:4: key 'z': expected a size "
	    "such as 4096, 64K or 8M, got a boolean");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_int_out_of_range_names_range)
{
	struct conf_doc	*doc = ctx_load("port: 70000\nlow: -1\n");
	int64_t		 i = 0;

	ck_assert_int_eq(conf_get_int(&ctx, conf_doc_root(doc), "port", 1,
	    65535, &i), -1);
	ck_assert_int_eq(conf_get_int(&ctx, conf_doc_root(doc), "low", 0,
	    10, &i), -1);
	ck_assert_int_eq(i, 0);
	ck_assert_str_eq(ctx.errors[0], "t.yaml:1:7: key 'port': 70000 is out "
	    "of range (1 to 65535)");
	ck_assert_str_eq(ctx.errors[1], "t.yaml:2:6: key 'low': -1 is out of "
	    "range (0 to 10)");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_enum_unknown_value_lists_choices)
{
	static const char *const modes[] = { "off", "log", "enforce", NULL };
	struct conf_doc	*doc = ctx_load("mode: enforcing\n");
	int		 e = 7;

	ck_assert_int_eq(conf_get_enum(&ctx, conf_doc_root(doc), "mode", modes,
	    &e), -1);
	ck_assert_int_eq(e, 7);
	ck_assert_str_eq(ctx.errors[0], "t.yaml:1:7: key 'mode': unknown value "
	    "'enforcing' (expected one of: off, log, enforce)");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_enum_long_choice_list_cut_between_names)
{
	static char	 names[100][24];
	const char	*choices[101];
	struct conf_doc	*doc = ctx_load("mode: none\n");
	const char	*list, *last;
	int		 e, i;

	for (i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "choice%02d", i);
		choices[i] = names[i];
	}
	choices[100] = NULL;
	ck_assert_int_eq(conf_get_enum(&ctx, conf_doc_root(doc), "mode",
	    choices, &e), -1);
	list = strstr(ctx.errors[0], "(expected one of: choice00, choice01");
	ck_assert_ptr_nonnull(list);
	/* Cut after a whole name, never inside one. */
	last = strrchr(ctx.errors[0], ',');
	ck_assert_ptr_nonnull(last);
	ck_assert_msg(strlen(last) == strlen(", choice00)") &&
	    strncmp(last, ", choice", 8) == 0, "%s", ctx.errors[0]);
	ck_assert_ptr_null(strstr(ctx.errors[0], "choice99"));
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_expect_object_on_null_value)
{
	struct conf_doc	*doc = ctx_load("limits: ~\n");

	ck_assert_int_eq(conf_expect_object(&ctx, json_object_get(
	    conf_doc_root(doc), "limits"), "limits"), -1);
	ck_assert_str_eq(ctx.errors[0], "t.yaml: limits: expected a mapping, "
	    "got null");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_long_document_name_fills_error)
{
	char		 name[CONF_ERROR_LEN + 100];
	struct conf_doc	*doc;

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	doc = conf_doc_load_buf(name, "a: 1\n", 5, err, sizeof(err));
	ck_assert_ptr_nonnull(doc);
	conf_ctx_init(&ctx, doc);
	conf_error(&ctx, conf_doc_root(doc), "lost");
	ck_assert_uint_eq(ctx.nerrors, 1);
	ck_assert_uint_eq(strlen(ctx.errors[0]), CONF_ERROR_LEN - 1);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_size_suffixes)
{
	static const struct {
		const char	*text;
		uint64_t	 want;
	} cases[] = {
		{ "512", 512 },
		{ "'512'", 512 },
		{ "512B", 512 },
		{ "64K", 64ULL << 10 },
		{ "64k", 64ULL << 10 },
		{ "64KiB", 64ULL << 10 },
		{ "8M", 8ULL << 20 },
		{ "8MiB", 8ULL << 20 },
		{ "8MB", 8ULL << 20 },
		{ "1G", 1ULL << 30 },
		{ "2T", 2ULL << 40 },
		{ "0", 0 },
		{ "0x10", 16 },
		{ "0K", 0 },
		{ "16777215T", 16777215ULL << 40 },
		{ "'18446744073709551615'", UINT64_MAX },
	};
	struct conf_doc	*doc;
	char		 yaml[64];
	uint64_t	 n;
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(yaml, sizeof(yaml), "size: %s\n", cases[i].text);
		doc = ctx_load(yaml);
		n = 1;
		ck_assert_msg(conf_get_size(&ctx, conf_doc_root(doc), "size",
		    0, UINT64_MAX, &n) == 1, "%s: %s", cases[i].text,
		    ctx.errors[0]);
		ck_assert_msg(n == cases[i].want, "%s = %llu", cases[i].text,
		    (unsigned long long)n);
		conf_doc_free(doc);
	}
}
END_TEST

START_TEST(test_size_rejects_malformed)
{
	static const struct {
		const char	*text;
		const char	*want;
	} cases[] = {
		{ "'-1'", "invalid size '-1': expected digits" },
		{ "-1", "a size cannot be negative" },
		{ "12Q", "invalid size '12Q': unknown unit" },
		{ "K", "invalid size 'K': expected digits" },
		{ "''", "invalid size '': expected digits" },
		{ "8 M", "unknown unit" },
		{ "8Mb", "unknown unit" },
		{ "8iB", "unknown unit" },
		{ "8KK", "unknown unit" },
		{ "' 8K'", "expected digits" },
		{ "1.5G", "invalid size '1.5G': fractions are not supported" },
		{ "1.5", "got a real number" },
		{ "[1]", "got a sequence" },
		{ "16777216T", "too large" },
		{ "99999999999999999999", "too large" },
		{ "'99999999999999999999'", "too large" },
	};
	struct conf_doc	*doc;
	char		 yaml[64];
	uint64_t	 n = 77;
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(yaml, sizeof(yaml), "size: %s\n", cases[i].text);
		doc = load(yaml);
		if (doc == NULL) {	/* a plain integer beyond int64 */
			ck_assert_msg(strstr(err, "integer out of range") !=
			    NULL, "%s: %s", cases[i].text, err);
			continue;
		}
		conf_ctx_init(&ctx, doc);
		ck_assert_msg(conf_get_size(&ctx, conf_doc_root(doc), "size",
		    0, UINT64_MAX, &n) == -1, "%s accepted", cases[i].text);
		ck_assert_msg(strstr(ctx.errors[0], cases[i].want) != NULL &&
		    strncmp(ctx.errors[0], "t.yaml:1:7: key 'size': ", 24) == 0,
		    "%s: \"%s\" lacks \"%s\"", cases[i].text, ctx.errors[0],
		    cases[i].want);
		ck_assert_uint_eq(n, 77);
		conf_doc_free(doc);
	}
}
END_TEST

START_TEST(test_size_out_of_range_names_range)
{
	struct conf_doc	*doc = ctx_load("a: 2M\nb: 10\n");
	uint64_t	 n = 0;

	ck_assert_int_eq(conf_get_size(&ctx, conf_doc_root(doc), "a", 0,
	    1 << 20, &n), -1);
	ck_assert_int_eq(conf_get_size(&ctx, conf_doc_root(doc), "b", 4096,
	    8192, &n), -1);
	ck_assert_str_eq(ctx.errors[0], "t.yaml:1:4: key 'a': size 2097152 is "
	    "out of range (0 to 1048576 bytes)");
	ck_assert_str_eq(ctx.errors[1], "t.yaml:2:4: key 'b': size 10 is out "
	    "of range (4096 to 8192 bytes)");
	ck_assert_uint_eq(n, 0);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_expect_object)
{
	struct conf_doc	*doc = ctx_load("rotation: [1]\nok: {}\n");
	json_t		*root = conf_doc_root(doc);

	ck_assert_int_eq(conf_expect_object(&ctx, json_object_get(root, "ok"),
	    "ok"), 0);
	ck_assert_int_eq(conf_expect_object(&ctx, json_object_get(root,
	    "rotation"), "rotation"), -1);
	ck_assert_int_eq(conf_expect_object(&ctx, NULL, "limits"), -1);
	ck_assert_uint_eq(ctx.nerrors, 2);
	ck_assert_str_eq(ctx.errors[0], "t.yaml:1:11: rotation: expected a "
	    "mapping, got a sequence");
	ck_assert_str_eq(ctx.errors[1], "t.yaml: limits: missing");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_scalar_root_is_not_object)
{
	struct conf_doc	*doc = ctx_load("just a string\n");

	ck_assert_int_eq(conf_expect_object(&ctx, conf_doc_root(doc),
	    "policy"), -1);
	ck_assert_str_eq(ctx.errors[0], "t.yaml:1:1: policy: expected a "
	    "mapping, got a string");
	conf_doc_free(doc);
}
END_TEST

/* Runs conf_ctx_report with stderr captured into out. */
static unsigned
report_captured(char *out, size_t outlen)
{
	FILE		*f = tmpfile();
	unsigned	 n;
	size_t		 len;
	int		 saved;

	ck_assert_ptr_nonnull(f);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fileno(f), STDERR_FILENO), 0);
	n = conf_ctx_report(&ctx);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	len = fread(out, 1, outlen - 1, f);
	out[len] = '\0';
	fclose(f);
	return n;
}

START_TEST(test_report_prints_each_error)
{
	struct conf_doc	*doc = ctx_load("a: x\nb: y\n");
	char		 out[4096];
	int64_t		 i;

	conf_get_int(&ctx, conf_doc_root(doc), "a", 0, 1, &i);
	conf_get_int(&ctx, conf_doc_root(doc), "b", 0, 1, &i);
	ck_assert_uint_eq(report_captured(out, sizeof(out)), 2);
	ck_assert_str_eq(out, "t.yaml:1:4: key 'a': expected an integer, got a "
	    "string\nt.yaml:2:4: key 'b': expected an integer, got a string\n");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_errors_beyond_cap_counted_not_kept)
{
	struct conf_doc	*doc = ctx_load("a: 1\n");
	char		 out[CONF_ERRORS_MAX * CONF_ERROR_LEN + 256];
	char		*last;
	unsigned	 i;

	for (i = 0; i < CONF_ERRORS_MAX + 5; i++)
		conf_error(&ctx, conf_doc_root(doc), "error %u", i);
	ck_assert_uint_eq(ctx.nerrors, CONF_ERRORS_MAX + 5);
	ck_assert_str_eq(ctx.errors[CONF_ERRORS_MAX - 1], "t.yaml:1:1: error "
	    "19");
	ck_assert_uint_eq(report_captured(out, sizeof(out)),
	    CONF_ERRORS_MAX + 5);
	last = strstr(out, "t.yaml:1:1: error 19\n");
	ck_assert_ptr_nonnull(last);
	ck_assert_str_eq(last, "t.yaml:1:1: error 19\n... and 5 more\n");
	ck_assert_ptr_null(strstr(out, "error 20"));
	conf_doc_free(doc);
}
END_TEST

/* What a daemon puts in policy_load: the lines as printed, bounded. */
START_TEST(test_report_text_kept_for_the_record)
{
	struct conf_doc	*doc = ctx_load("a: x\nb: y\n");
	char		 out[4096];
	int64_t		 i;

	conf_errors_clear();
	conf_get_int(&ctx, conf_doc_root(doc), "a", 0, 1, &i);
	conf_get_int(&ctx, conf_doc_root(doc), "b", 0, 1, &i);
	report_captured(out, sizeof(out));
	conf_report("%s: path too long", "rules");
	ck_assert_str_eq(conf_errors_text(), "t.yaml:1:4: key 'a': expected an "
	    "integer, got a string\nt.yaml:2:4: key 'b': expected an integer, "
	    "got a string\nrules: path too long");
	conf_errors_clear();
	ck_assert_str_eq(conf_errors_text(), "");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_report_text_capped)
{
	char		 line[CONF_ERROR_LEN];
	const char	*t;
	size_t		 n;
	unsigned	 i;

	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	conf_errors_clear();
	fflush(stderr);
	for (i = 0; i < 20; i++)
		conf_report("%s", line);
	t = conf_errors_text();
	n = strlen(t);
	ck_assert_uint_lt(n, CONF_ERRORS_TEXT_MAX);
	ck_assert_str_eq(t + n - strlen(CONF_ERRORS_TEXT_CUT),
	    CONF_ERRORS_TEXT_CUT);
	conf_errors_clear();
}
END_TEST

START_TEST(test_report_with_no_errors_is_silent)
{
	struct conf_doc	*doc = ctx_load("a: 1\n");
	char		 out[64];

	ck_assert_uint_eq(report_captured(out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
	conf_doc_free(doc);
}
END_TEST

static Suite *
conf_validate_suite(void)
{
	Suite	*s = suite_create("conf_validate");
	TCase	*tc;

	tc = tcase_create("validate");
	tcase_add_test(tc, test_error_names_line_and_column);
	tcase_add_test(tc, test_conf_error_formats_position);
	tcase_add_test(tc, test_conf_error_long_message_truncated);
	tcase_add_test(tc, test_unknown_key_reported);
	tcase_add_test(tc, test_known_keys_pass);
	tcase_add_test(tc, test_unknown_key_escaped);
	tcase_add_test(tc, test_unknown_key_with_singleton_value_has_position);
	tcase_add_test(tc, test_null_means_absent);
	tcase_add_test(tc, test_missing_key_and_missing_object_are_absent);
	tcase_add_test(tc, test_getters_read_values);
	tcase_add_test(tc, test_getters_reject_wrong_type);
	tcase_add_test(tc, test_int_out_of_range_names_range);
	tcase_add_test(tc, test_enum_unknown_value_lists_choices);
	tcase_add_test(tc, test_enum_long_choice_list_cut_between_names);
	tcase_add_test(tc, test_expect_object_on_null_value);
	tcase_add_test(tc, test_long_document_name_fills_error);
	tcase_add_test(tc, test_size_suffixes);
	tcase_add_test(tc, test_size_rejects_malformed);
	tcase_add_test(tc, test_size_out_of_range_names_range);
	tcase_add_test(tc, test_expect_object);
	tcase_add_test(tc, test_scalar_root_is_not_object);
	tcase_add_test(tc, test_report_prints_each_error);
	tcase_add_test(tc, test_errors_beyond_cap_counted_not_kept);
	tcase_add_test(tc, test_report_text_kept_for_the_record);
	tcase_add_test(tc, test_report_text_capped);
	tcase_add_test(tc, test_report_with_no_errors_is_silent);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(conf_validate_suite)
