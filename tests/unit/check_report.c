/*
 * Tests for cli/report*.c: the one escaper (markup, bidi and zero-width
 * characters, controls, bytes that are not UTF-8, cuts), and pages of
 * hostile records: inert, the same bytes twice, bounded at 10,000 calls
 * and 1 MiB strings.
 */
#include <sys/stat.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hash.h"
#include "report.h"
#include "testutil.h"

static int
write_file(const char *path, const char *text)
{
	FILE	*f = fopen(path, "w");

	if (f == NULL)
		return -1;
	fputs(text, f);
	return fclose(f);
}

#define BIG		(1024 * 1024)
#define MANY_CALLS	10000
#define BIG_CALLS	(REPORT_CALLS_DETAIL + 10)
#define PAGE_BOUND	(8 * 1024 * 1024)	/* far below 10,000 x 1 MiB */

/* report_esc of s into a new string. */
static char *
esc(const char *s, size_t len)
{
	char	*buf = NULL;
	size_t	 n = 0;
	FILE	*f = open_memstream(&buf, &n);

	ck_assert_ptr_nonnull(f);
	report_esc(f, s, len);
	fclose(f);
	return buf;
}

static void
assert_esc(const char *in, const char *want)
{
	char	*got = esc(in, strlen(in));

	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_esc_markup_becomes_entities)
{
	assert_esc("<script>alert('x')&\"</script>",
	    "&lt;script&gt;alert(&#39;x&#39;)&amp;&quot;&lt;/script&gt;");
	assert_esc("<img src=x onerror=alert(1)>",
	    "&lt;img src=x onerror=alert(1)&gt;");
	assert_esc("caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93");
}
END_TEST

START_TEST(test_esc_bidi_and_zero_width_are_named)
{
	assert_esc("invoice\xe2\x80\xaegnp.exe",
	    "invoice\u27e8U+202E\u27e9gnp.exe");
	assert_esc("a\xe2\x80\x8b" "b\xe2\x81\xa6" "c\xef\xbb\xbf" "d\xe2\x80\x8f",
	    "a\u27e8U+200B\u27e9b\u27e8U+2066\u27e9c\u27e8U+FEFF\u27e9"
	    "d\u27e8U+200F\u27e9");
}
END_TEST

START_TEST(test_esc_controls_and_bad_bytes_are_named)
{
	assert_esc("a\x01" "b\x1b[2Jc\x7f", "a\u27e8U+0001\u27e9b"
	    "\u27e8U+001B\u27e9[2Jc\u27e8U+007F\u27e9");
	assert_esc("line1\nline2\tx", "line1\nline2\tx");
	assert_esc("\xc2\x85", "\u27e8U+0085\u27e9");		/* C1 NEL */
	assert_esc("\xff" "a\xc0\xaf" "b", "\u27e80xFF\u27e9a\u27e80xC0\u27e9"
	    "\u27e80xAF\u27e9b");				/* overlong '/' */
	assert_esc("\xed\xa0\x80", "\u27e80xED\u27e9\u27e80xA0\u27e9"
	    "\u27e80x80\u27e9");				/* a surrogate */
}
END_TEST

START_TEST(test_esc_cap_cuts_on_a_character)
{
	char	*buf = NULL;
	size_t	 n = 0;
	FILE	*f = open_memstream(&buf, &n);

	report_esc_cap(f, "ab\xc3\xa9" "cd", 6, 3);	/* cap inside é */
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "ab"));
	ck_assert_ptr_null(strstr(buf, "\xc3"));
	ck_assert_ptr_nonnull(strstr(buf, "4 more bytes not shown"));
	free(buf);
}
END_TEST

/* A call of session s: execution_started and code_execution. */
static void
add_call(json_t *recs, json_int_t seq, const char *s, const json_t *arts,
    const char *blob)
{
	json_array_append_new(recs, json_pack("{s:I, s:s, s:s, s:s, s:s, "
	    "s:s, s:i, s:s, s:s}", "seq", seq, "ts",
	    "2026-12-04T10:00:00.000Z", "event", "execution_started",
	    "session_id", s, "principal", "p", "code_hash", "sha256:00",
	    "code_size", 3, "code_retention", "sample", "code_head", blob));
	json_array_append_new(recs, json_pack("{s:I, s:s, s:s, s:s, s:s, "
	    "s:s, s:i, s:i, s:i, s:O, s:s}", "seq", seq + 1, "ts",
	    "2026-12-04T10:00:01.000Z", "event", "code_execution",
	    "session_id", s, "principal", "p", "code_hash", "sha256:00",
	    "exit_code", 0, "duration_ms", 1000, "stdout_bytes", BIG,
	    "artifacts", arts, "reason", blob));
}

static char *
render(const json_t *recs, enum report_state st)
{
	struct report_verdict	 v = { st, "verify said so", "", "/log",
	    "everything", NULL, 0 };
	json_t			*loads = json_array();
	char			*buf = NULL;
	size_t			 n = 0;
	FILE			*f = open_memstream(&buf, &n);

	ck_assert_int_eq(report_render(f, &v, recs, loads, NULL, NULL), 0);
	fclose(f);
	json_decref(loads);
	return buf;
}

static json_t *
hostile(void)
{
	json_t	*recs = json_array(), *arts;

	arts = json_pack("[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}]",
	    "name", "<script>alert(1)</script>", "sha256", "sha256:aa",
	    "name", "javascript:alert(2)", "sha256", "sha256:bb",
	    "name", "invoice\xe2\x80\xaegnp.exe\xe2\x80\x8b", "sha256",
	    "sha256:cc");
	add_call(recs, 1, "<b onmouseover=alert(3)>s</b>", arts,
	    "</pre><script>alert(4)</script>");
	json_array_append_new(recs, json_pack("{s:I, s:s, s:s, s:s, s:s, "
	    "s:s}", "seq", 3, "ts", "2026-12-04T10:00:02.000Z", "event",
	    "x\"><script>alert(5)</script>", "session_id", "s",
	    "reason", "<iframe src=javascript:alert(6)>"));
	json_decref(arts);
	return recs;
}

START_TEST(test_render_hostile_records_are_inert)
{
	json_t	*recs = hostile();
	char	*page = render(recs, REPORT_INTACT);

	ck_assert_ptr_null(strstr(page, "<script"));
	ck_assert_ptr_null(strstr(page, "<iframe"));
	ck_assert_ptr_null(strstr(page, "<b "));
	ck_assert_ptr_null(strstr(page, "href"));
	ck_assert_ptr_null(strstr(page, "src="));
	ck_assert_ptr_nonnull(strstr(page, "&lt;script&gt;alert(1)"));
	ck_assert_ptr_nonnull(strstr(page, "invoice\u27e8U+202E\u27e9gnp.exe"
	    "\u27e8U+200B\u27e9"));
	ck_assert_ptr_nonnull(strstr(page, "Content-Security-Policy\" "
	    "content=\"default-src 'none'; style-src 'unsafe-inline'; "
	    "img-src data:"));
	free(page);
	json_decref(recs);
}
END_TEST

START_TEST(test_render_is_deterministic)
{
	json_t	*recs = hostile();
	char	*a = render(recs, REPORT_INTACT), *b = render(recs,
	    REPORT_INTACT);

	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	json_decref(recs);
}
END_TEST

START_TEST(test_render_tampered_says_so)
{
	json_t	*recs = hostile();
	char	*page = render(recs, REPORT_TAMPERED);

	ck_assert_ptr_nonnull(strstr(page, "class=\"verdict tampered\""));
	ck_assert_ptr_nonnull(strstr(page, "Nothing below is authenticated"));
	free(page);
	json_decref(recs);
}
END_TEST

START_TEST(test_render_10000_calls_and_1mib_strings_stay_bounded)
{
	json_t	*recs = json_array(), *arts;
	char	*big = xmalloc(BIG + 1), *page;
	size_t	 i, details = 0;
	const char *p;

	memset(big, '<', BIG);
	big[BIG] = '\0';
	arts = json_pack("[{s:s, s:s}]", "name", big, "sha256", "sha256:aa");
	/* 1 MiB strings in the calls shown in full and in some listed only
	 * (all 10,000 would take 20 GiB to build, not to render). */
	for (i = 0; i < MANY_CALLS; i++)
		add_call(recs, (json_int_t)(2 * i + 1), "s", arts,
		    i < BIG_CALLS || i % 1000 == 0 ? big : "x");
	page = render(recs, REPORT_INTACT);
	ck_assert_uint_lt(strlen(page), PAGE_BOUND);
	for (p = page; (p = strstr(p, "<details")) != NULL; p++)
		details++;
	ck_assert_uint_eq(details, REPORT_CALLS_DETAIL);
	ck_assert_ptr_nonnull(strstr(page, "9000 more calls not listed"));
	ck_assert_ptr_nonnull(strstr(page, "more bytes not shown"));
	free(page);
	free(big);
	json_decref(arts);
	json_decref(recs);
}
END_TEST

/* Lines cost their newline: 1 MiB of empty lines is not 1 MiB of page. */
START_TEST(test_render_code_of_empty_lines_stays_bounded)
{
	json_t	*recs = json_array(), *arts = json_array();
	char	*nl = xmalloc(BIG + 1), *page;

	memset(nl, '\n', BIG);
	nl[BIG] = '\0';
	add_call(recs, 1, "s", arts, nl);
	page = render(recs, REPORT_INTACT);
	ck_assert_uint_lt(strlen(page), 64 * 1024);
	free(page);
	free(nl);
	json_decref(arts);
	json_decref(recs);
}
END_TEST

/* Each part within its cap, all together past the page's: details stop. */
START_TEST(test_render_page_budget_stops_details)
{
	json_t	*recs = json_array(), *arts = json_array();
	char	*name = xmalloc(REPORT_TEXT_MAX + 1), *page, sid[16];
	size_t	 i;

	memset(name, 'n', REPORT_TEXT_MAX);
	name[REPORT_TEXT_MAX] = '\0';
	for (i = 0; i < 100; i++)
		json_array_append_new(arts, json_pack("{s:s, s:s}", "name",
		    name, "sha256", "sha256:aa"));
	for (i = 0; i < 5 * REPORT_CALLS_DETAIL; i++) {
		snprintf(sid, sizeof(sid), "s%zu", i / REPORT_CALLS_DETAIL);
		add_call(recs, (json_int_t)(2 * i + 1), sid, arts, "x");
	}
	page = render(recs, REPORT_INTACT);
	ck_assert_uint_lt(strlen(page), REPORT_PAGE_MAX + 1024 * 1024);
	ck_assert_ptr_nonnull(strstr(page, "not shown in full"));
	free(page);
	free(name);
	json_decref(arts);
	json_decref(recs);
}
END_TEST

/* A bundle's policy file is shown only while it hashes as recorded. */
START_TEST(test_render_policy_file_only_when_it_hashes)
{
	struct report_verdict	 v = { REPORT_INTACT, "s", "", "src", "all",
	    NULL, 0 };
	char			 dir[PATH_MAX], path[PATH_MAX];
	char			 good[SHA256_HEX + 1], bad[SHA256_HEX + 1];
	char			*buf = NULL;
	size_t			 n = 0;
	json_t			*recs = json_array(), *loads;
	FILE			*f;

	tu_tmpdir(dir, sizeof(dir));
	sha256_hex("level: L0\n", 10, good);
	sha256_hex("level: L1\n", 10, bad);
	tu_path(path, sizeof(path), dir, good);
	ck_assert_int_eq(write_file(path, "level: L0\n"), 0);
	tu_path(path, sizeof(path), dir, bad);	/* its name, other bytes */
	ck_assert_int_eq(write_file(path, "level: L2 <b>\n"), 0);
	loads = json_pack("[{s:i, s:{s:s, s:s, s:[{s:s, s:s}, {s:s, s:s}]}}]",
	    "seq", 1, "rec", "program", "netguard", "ts",
	    "2026-12-04T10:00:00.000Z", "files", "path", "/a.yaml", "sha256",
	    good, "path", "/b.yaml", "sha256", bad);
	json_array_append_new(recs, json_pack("{s:i, s:s, s:s}", "seq", 2,
	    "ts", "2026-12-04T10:00:01.000Z", "event", "operator_note"));
	f = open_memstream(&buf, &n);
	ck_assert_int_eq(report_render(f, &v, recs, loads, NULL, dir), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "level: L0"));
	ck_assert_ptr_null(strstr(buf, "level: L2"));
	free(buf);
	json_decref(loads);
	json_decref(recs);
}
END_TEST

/* report_diff of two texts into a new string. */
static char *
diff(const char *a, const char *b)
{
	char	*buf = NULL;
	size_t	 n = 0;
	FILE	*f = open_memstream(&buf, &n);

	ck_assert_ptr_nonnull(f);
	report_diff(f, a, strlen(a), b, strlen(b));
	fclose(f);
	return buf;
}

START_TEST(test_diff_marks_changed_lines_escaped)
{
	char	*d = diff("a\nb\nc\nd\ne\nf\ng\nh\n",
	    "a\nb\nc\nd\n<script>x\nf\ng\nh\nnew \xe2\x80\xae\n");

	ck_assert_ptr_nonnull(strstr(d, "<del>- e</del>\n"
	    "<ins>+ &lt;script&gt;x</ins>\n"));
	ck_assert_ptr_nonnull(strstr(d, "<ins>+ new \u27e8U+202E\u27e9</ins>"));
	/* Context: two lines around each change, the rest left out. */
	ck_assert_ptr_nonnull(strstr(d, "  c\n  d\n<del>"));
	ck_assert_ptr_null(strstr(d, "  b\n"));
	ck_assert_ptr_nonnull(strstr(d, "\u2026"));
	ck_assert_ptr_null(strstr(d, "<script"));
	free(d);
	d = diff("same\n", "same\n");
	ck_assert_ptr_null(strstr(d, "<del>"));
	ck_assert_ptr_null(strstr(d, "<ins>"));
	free(d);
}
END_TEST

/* Two 5,000-line texts with nothing in common: no 25M-cell table, said so;
 * many small changes: the output stops at its bound. */
START_TEST(test_diff_is_bounded)
{
	char	*a = malloc(5000 * 8 + 1), *b = malloc(5000 * 8 + 1), *d;
	size_t	 i;

	for (i = 0; i < 5000; i++) {
		snprintf(a + i * 8, 9, "a%06zu\n", i);
		snprintf(b + i * 8, 9, "b%06zu\n", i);
	}
	d = diff(a, b);
	ck_assert_ptr_nonnull(strstr(d, "too many to diff here"));
	ck_assert_uint_lt(strlen(d), 1024);
	free(d);
	for (i = 0; i < 1000; i++)	/* every other line changed */
		b[i * 8] = i % 2 ? 'a' : 'b';
	a[1000 * 8] = b[1000 * 8] = '\0';
	d = diff(a, b);
	ck_assert_ptr_nonnull(strstr(d, "the rest of the diff"));
	ck_assert_uint_lt(strlen(d), 64 * 1024);
	free(d);
	free(a);
	free(b);
}
END_TEST

/* Two loads of one file: the versions auditd kept beside the log give a
 * diff; a kept blob whose bytes changed is not shown. */
START_TEST(test_render_policy_diff_from_kept_versions)
{
	struct report_verdict	 v = { REPORT_INTACT, "s", "", "src", "all",
	    NULL, 0 };
	static const char	 v1[] = "level: L0\nallow: []\nports: [443]\n";
	static const char	 v2[] = "level: L2\nallow: [pypi.org]\n"
	    "ports: [443]\n";
	char			 dir[PATH_MAX], top[PATH_MAX], sub[PATH_MAX];
	char			 path[PATH_MAX];
	char			 h1[SHA256_HEX + 1], h2[SHA256_HEX + 1];
	char			*buf = NULL;
	size_t			 n = 0;
	json_t			*recs = json_array(), *loads;
	FILE			*f;

	tu_tmpdir(dir, sizeof(dir));
	sha256_hex(v1, strlen(v1), h1);
	sha256_hex(v2, strlen(v2), h2);
	tu_path(top, sizeof(top), dir, "blobs");
	ck_assert_int_eq(mkdir(top, 0755), 0);
	tu_path(sub, sizeof(sub), top, "audit-1.log");
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	tu_path(path, sizeof(path), sub, h1);
	ck_assert_int_eq(write_file(path, v1), 0);
	tu_path(path, sizeof(path), sub, h2);
	ck_assert_int_eq(write_file(path, v2), 0);
	loads = json_pack("[{s:i, s:{s:s, s:s, s:[{s:s, s:s, s:b}]}},"
	    "{s:i, s:{s:s, s:s, s:[{s:s, s:s, s:b}]}}]",
	    "seq", 1, "rec", "program", "netguard", "ts",
	    "2026-12-04T10:00:00.000Z", "files", "path", "/n/web.yaml",
	    "sha256", h1, "kept", 1,
	    "seq", 3, "rec", "program", "netguard", "ts",
	    "2026-12-04T10:00:02.000Z", "files", "path", "/n/web.yaml",
	    "sha256", h2, "kept", 1);
	json_array_append_new(recs, json_pack("{s:i, s:s, s:s}", "seq", 2,
	    "ts", "2026-12-04T10:00:01.000Z", "event", "operator_note"));
	json_array_append_new(recs, json_pack("{s:i, s:s, s:s}", "seq", 4,
	    "ts", "2026-12-04T10:00:03.000Z", "event", "operator_note"));
	f = open_memstream(&buf, &n);
	ck_assert_int_eq(report_render(f, &v, recs, loads, dir, NULL), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "<del>- level: L0</del>\n"
	    "<del>- allow: []</del>\n<ins>+ level: L2</ins>\n"
	    "<ins>+ allow: [pypi.org]</ins>\n  ports: [443]\n"));
	free(buf);
	/* The older version's bytes changed: no diff against a forgery. */
	tu_path(path, sizeof(path), sub, h1);
	ck_assert_int_eq(write_file(path, "level: L3\n"), 0);
	buf = NULL;
	f = open_memstream(&buf, &n);
	ck_assert_int_eq(report_render(f, &v, recs, loads, dir, NULL), 0);
	fclose(f);
	ck_assert_ptr_null(strstr(buf, "L3"));
	ck_assert_ptr_nonnull(strstr(buf, "the version before was not kept"));
	free(buf);
	json_decref(loads);
	json_decref(recs);
}
END_TEST

static Suite *
report_suite(void)
{
	Suite	*s = suite_create("report");
	TCase	*tc = tcase_create("escape");

	tcase_add_test(tc, test_esc_markup_becomes_entities);
	tcase_add_test(tc, test_esc_bidi_and_zero_width_are_named);
	tcase_add_test(tc, test_esc_controls_and_bad_bytes_are_named);
	tcase_add_test(tc, test_esc_cap_cuts_on_a_character);
	tcase_add_test(tc, test_diff_marks_changed_lines_escaped);
	tcase_add_test(tc, test_diff_is_bounded);
	suite_add_tcase(s, tc);
	tc = tcase_create("page");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_render_hostile_records_are_inert);
	tcase_add_test(tc, test_render_is_deterministic);
	tcase_add_test(tc, test_render_tampered_says_so);
	tcase_add_test(tc, test_render_10000_calls_and_1mib_strings_stay_bounded);
	tcase_add_test(tc, test_render_code_of_empty_lines_stays_bounded);
	tcase_add_test(tc, test_render_page_budget_stops_details);
	tcase_add_test(tc, test_render_policy_file_only_when_it_hashes);
	tcase_add_test(tc, test_render_policy_diff_from_kept_versions);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(report_suite)
