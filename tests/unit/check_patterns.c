/*
 * Tests for mcp-exec/patterns.c.  Each case in tests/unit/data/patterns is a
 * code sample (NAME.py) beside NAME.expect: the verdict ("allow" or
 * "deny") on the first line, then the ids of the shipped rules that hit,
 * sorted, one per line.  NAME_near.py cases are near misses and must stay
 * clean.  The rest: loader errors with their positions, and the limits
 * that keep a bad regex from hanging the server.
 */
#include <dirent.h>
#include <time.h>

#include <jansson.h>

#include "testutil.h"
#include "tools/patterns.h"

/* Relative to the repository root, where the tests run. */
#define DATA_DIR	"tests/unit/data/patterns"
#define SHIPPED_RULES	"rules"
#define SHIPPED_COUNT	18
#define CASES_MAX	256
#define CASE_NAME_MAX	64
#define EXPECT_MAX	4096
#define NEAR_SUFFIX	"_near"
/* Generous: the scanner's own budget is one second. */
#define SLOW_MS		5000

static char	 case_names[CASES_MAX][CASE_NAME_MAX];
static int	 ncases;

static struct patterns *
shipped(void)
{
	struct patterns	*p = patterns_load(SHIPPED_RULES);

	ck_assert_ptr_nonnull(p);
	return p;
}

static int
is_near(const char *name)
{
	size_t	 n = strlen(name), s = strlen(NEAR_SUFFIX);

	return n > s && strcmp(name + n - s, NEAR_SUFFIX) == 0;
}

/* "id\n" for each hit, sorted, as an .expect file lists them. */
static void
hit_ids(json_t *hits, char *out, size_t outlen)
{
	const char	*ids[PATTERNS_MAX + 1], *t;
	json_t		*h;
	size_t		 i, j, n = 0, off = 0;
	int		 w;

	json_array_foreach(hits, i, h) {
		ck_assert_uint_lt(n, nitems(ids));
		ids[n++] = json_string_value(json_object_get(h, "id"));
	}
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(ids[j - 1], ids[j]) > 0; j--) {
			t = ids[j];
			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		w = snprintf(out + off, outlen - off, "%s\n", ids[i]);
		ck_assert(w > 0 && (size_t)w < outlen - off);
		off += (size_t)w;
	}
}

/* Every hit is {id, severity, action, line}, line within the code. */
static void
assert_hit_shape(json_t *hits, const char *code, size_t len)
{
	json_int_t	 lines = 1, line;
	json_t		*h;
	size_t		 i;

	for (i = 0; i < len; i++)
		if (code[i] == '\n')
			lines++;
	json_array_foreach(hits, i, h) {
		ck_assert_uint_eq(json_object_size(h), 4);
		ck_assert(json_is_string(json_object_get(h, "id")));
		ck_assert(json_is_string(json_object_get(h, "severity")));
		ck_assert(json_is_string(json_object_get(h, "action")));
		line = json_integer_value(json_object_get(h, "line"));
		ck_assert(line >= 1 && line <= lines);
	}
}

START_TEST(test_sample_verdict_and_ids)
{
	const char	*name = case_names[_i];
	struct patterns	*p = shipped();
	char		 path[PATH_MAX], got[EXPECT_MAX], *code, *expect, *ids;
	size_t		 len, elen;
	json_t		*hits;
	int		 rc;

	ck_assert_int_ne(snprintf(path, sizeof(path), "%s/%s.py", DATA_DIR,
	    name), -1);
	code = tu_read(path, &len);
	ck_assert_int_ne(snprintf(path, sizeof(path), "%s/%s.expect",
	    DATA_DIR, name), -1);
	expect = tu_read(path, &elen);
	ck_assert_msg((ids = strchr(expect, '\n')) != NULL, "%s: no verdict",
	    path);
	*ids++ = '\0';
	ck_assert_msg(strcmp(expect, "allow") == 0 ||
	    strcmp(expect, "deny") == 0, "%s: verdict '%s'", path, expect);

	rc = patterns_scan(p, code, len, &hits);
	hit_ids(hits, got, sizeof(got));
	ck_assert_msg(strcmp(got, ids) == 0, "%s: hits\n%swant\n%s", name,
	    got, ids);
	ck_assert_msg(rc == (strcmp(expect, "deny") == 0), "%s: rc %d, want "
	    "%s", name, rc, expect);
	assert_hit_shape(hits, code, len);
	if (is_near(name))
		ck_assert_msg(rc == 0 && json_array_size(hits) == 0,
		    "%s: a near miss must be clean", name);
	json_decref(hits);
	free(code);
	free(expect);
	patterns_free(p);
}
END_TEST

/* Every shipped rule has a sample that hits it, and a near miss each. */
START_TEST(test_every_shipped_rule_has_samples)
{
	struct patterns	*p = shipped();
	json_t		*seen = json_object(), *hits, *h;
	char		 path[PATH_MAX], *code;
	size_t		 len, i;
	int		 c, nnear = 0;

	ck_assert_uint_eq(patterns_count(p), SHIPPED_COUNT);
	for (c = 0; c < ncases; c++) {
		nnear += is_near(case_names[c]);
		ck_assert_int_ne(snprintf(path, sizeof(path), "%s/%s.py",
		    DATA_DIR, case_names[c]), -1);
		code = tu_read(path, &len);
		patterns_scan(p, code, len, &hits);
		json_array_foreach(hits, i, h)
			json_object_set(seen, json_string_value(
			    json_object_get(h, "id")), json_true());
		json_decref(hits);
		free(code);
	}
	ck_assert_uint_eq(json_object_size(seen), SHIPPED_COUNT);
	ck_assert_int_ge(nnear, SHIPPED_COUNT);
	json_decref(seen);
	patterns_free(p);
}
END_TEST

START_TEST(test_hit_lines_and_fields)
{
	static const char code[] = "import os\n\n\nos.popen('id')\nx = 1\n"
	    "open('/etc/shadow')";
	struct patterns	*p = shipped();
	json_t		*hits, *h;

	ck_assert_int_eq(patterns_scan(p, code, strlen(code), &hits), 1);
	ck_assert_uint_eq(json_array_size(hits), 2);
	/* Rule order, which is file order: PY-SHELL-001 comes first. */
	h = json_array_get(hits, 0);
	ck_assert_str_eq(json_string_value(json_object_get(h, "id")),
	    "PY-SHELL-001");
	ck_assert_str_eq(json_string_value(json_object_get(h, "severity")),
	    "high");
	ck_assert_str_eq(json_string_value(json_object_get(h, "action")),
	    "flag");
	ck_assert_int_eq(json_integer_value(json_object_get(h, "line")), 4);
	h = json_array_get(hits, 1);
	ck_assert_str_eq(json_string_value(json_object_get(h, "id")),
	    "FS-SHADOW-001");
	ck_assert_str_eq(json_string_value(json_object_get(h, "action")),
	    "deny");
	/* The last line has no newline after it. */
	ck_assert_int_eq(json_integer_value(json_object_get(h, "line")), 6);
	json_decref(hits);
	patterns_free(p);
}
END_TEST

/* Only the first match of a rule is reported. */
START_TEST(test_first_match_per_rule)
{
	static const char code[] = "a = 1\nos.system('a')\nos.system('b')\n";
	struct patterns	*p = shipped();
	json_t		*hits;

	ck_assert_int_eq(patterns_scan(p, code, strlen(code), &hits), 0);
	ck_assert_uint_eq(json_array_size(hits), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(
	    json_array_get(hits, 0), "line")), 2);
	json_decref(hits);
	patterns_free(p);
}
END_TEST

/*
 * Matches are found, and lookbehinds see the bytes before, wherever a
 * pattern falls against the scanner's internal slices of start positions,
 * also when the padding puts a slice start inside a UTF-8 character.
 */
START_TEST(test_matches_across_slice_boundaries)
{
	struct patterns	*p = shipped();
	char		*code;
	size_t		 pad, i;
	json_t		*hits;

	code = xmalloc(4096 + 64);
	for (pad = 0; pad < 4096; pad++) {
		/* "é" (2 bytes) repeated, plus a space for odd lengths. */
		for (i = 0; i + 1 < pad; i += 2)
			memcpy(code + i, "\xc3\xa9", 2);
		if (i < pad)
			code[i++] = ' ';
		memcpy(code + pad, "\nos.system(1)", 13);
		ck_assert_int_eq(patterns_scan(p, code, pad + 13, &hits), 0);
		ck_assert_msg(json_array_size(hits) == 1, "padding %zu", pad);
		json_decref(hits);
		/* A digit before makes it another address; a space does not. */
		memset(code, 'x', pad);
		memcpy(code + pad, "1169.254.169.254", 16);
		ck_assert_int_eq(patterns_scan(p, code, pad + 16, &hits), 0);
		ck_assert_msg(json_array_size(hits) == 0, "padding %zu", pad);
		json_decref(hits);
		code[pad] = ' ';
		ck_assert_int_eq(patterns_scan(p, code, pad + 16, &hits), 1);
		json_decref(hits);
	}
	free(code);
	patterns_free(p);
}
END_TEST

/* A megabyte of ordinary code stays far from every limit. */
START_TEST(test_large_benign_code_scans_clean)
{
	struct patterns	*p = shipped();
	char		 path[PATH_MAX], *code, *sample;
	size_t		 len = 0, slen;
	uint64_t	 t0;
	json_t		*hits;
	int		 c;

	code = xmalloc(PATTERNS_CODE_MAX);
	while (len < PATTERNS_CODE_MAX)
		for (c = 0; c < ncases; c++) {
			if (!is_near(case_names[c]))
				continue;
			ck_assert_int_ne(snprintf(path, sizeof(path),
			    "%s/%s.py", DATA_DIR, case_names[c]), -1);
			sample = tu_read(path, &slen);
			if (slen > PATTERNS_CODE_MAX - len)
				slen = PATTERNS_CODE_MAX - len;
			memcpy(code + len, sample, slen);
			len += slen;
			free(sample);
		}
	t0 = mono_ms();
	ck_assert_int_eq(patterns_scan(p, code, len, &hits), 0);
	ck_assert_uint_eq(json_array_size(hits), 0);
	ck_assert_uint_lt(mono_ms() - t0, SLOW_MS);
	json_decref(hits);
	free(code);
	patterns_free(p);
}
END_TEST

START_TEST(test_code_over_limit_refused)
{
	struct patterns	*p = shipped();
	char		*code = xcalloc(1, PATTERNS_CODE_MAX + 1);
	json_t		*hits, *h;

	ck_assert_int_eq(patterns_scan(p, code, PATTERNS_CODE_MAX + 1, &hits),
	    -1);
	ck_assert_uint_eq(json_array_size(hits), 1);
	h = json_array_get(hits, 0);
	ck_assert_str_eq(json_string_value(json_object_get(h, "id")),
	    "scanner_error");
	ck_assert_str_eq(json_string_value(json_object_get(h, "action")),
	    "deny");
	ck_assert_ptr_null(json_object_get(h, "rule"));
	json_decref(hits);
	/* At the limit it is scanned. */
	ck_assert_int_eq(patterns_scan(p, code, PATTERNS_CODE_MAX, &hits), 0);
	json_decref(hits);
	free(code);
	patterns_free(p);
}
END_TEST

/* ------------------------------------------------------------ loader */

struct rules_dir {
	char	 dir[PATH_MAX];
};

static void
rules_with(struct rules_dir *rd, const char *yaml)
{
	char	 p[PATH_MAX];

	tu_tmpdir(rd->dir, sizeof(rd->dir));
	tu_path(p, sizeof(p), rd->dir, PATTERNS_FILE);
	tu_write(p, yaml, strlen(yaml));
}

/* Loads rd with stderr captured; returns what was printed (caller frees). */
static char *
load_captured(struct rules_dir *rd, struct patterns **out)
{
	char	 path[PATH_MAX];
	size_t	 len;
	int	 fd, saved;

	tu_path(path, sizeof(path), rd->dir, "stderr");
	fflush(stderr);
	ck_assert_int_ge(saved = dup(STDERR_FILENO), 0);
	ck_assert_int_ge(fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600),
	    0);
	ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
	close(fd);
	*out = patterns_load(rd->dir);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	return tu_read(path, &len);
}

#define RULE(id, extra)							\
	"  - id: " id "\n"						\
	"    description: d\n"						\
	"    severity: low\n"						\
	"    action: flag\n" extra

static const struct {
	const char	*yaml;
	const char	*want[3];	/* substrings of the errors */
} bad[] = {
	/* pcre2's message and offset, at the regex value's line:column. */
	{ "rules:\n" RULE("A-1", "    regex: '(abc'\n"),
	    { "patterns.yaml:6:12: ", "missing closing parenthesis",
	    "at offset 4" } },
	{ "rules:\n" RULE("A-1", "    regex: 'a{2,1}'\n"),
	    { "patterns.yaml:6:12: ", "numbers out of order", "offset 5" } },
	{ "rules:\n" RULE("A-1", "    regex: 'x\\C'\n"),
	    { "patterns.yaml:6:12: ", "\\C is disabled", NULL } },
	{ "rules:\n" RULE("A-1", "    regex: a\n") RULE("A-1",
	    "    regex: b\n"),
	    { "patterns.yaml:7:9: ", "duplicate id 'A-1' (first at line 2)",
	    NULL } },
	{ "rules:\n" RULE("A-1", "    regex: a\n    flavour: x\n"),
	    { "patterns.yaml:7:14: ", "unknown key 'flavour'", NULL } },
	{ "rules:\n  - id: A-1\n    description: d\n    severity: low\n"
	    "    regex: a\n", { "patterns.yaml:2:5: ", "missing 'action'",
	    NULL } },
	{ "rules:\n  - id: A-1\n    description: d\n    severity: severe\n"
	    "    action: flag\n    regex: a\n",
	    { "patterns.yaml:4:15: ", "unknown value 'severe'", NULL } },
	{ "rules:\n  - id: A-1\n    description: d\n    severity: low\n"
	    "    action: block\n    regex: a\n",
	    { "patterns.yaml:5:13: ", "unknown value 'block'", NULL } },
	{ "rules:\n  - id: A-1\n    severity: low\n    action: flag\n"
	    "    regex: a\n", { "missing 'description'", NULL } },
	{ "rules:\n  - id: A-1\n    description: d\n    severity: low\n"
	    "    action: flag\n", { "missing 'regex'", NULL } },
	{ "rules:\n  - description: d\n    severity: low\n    action: flag\n"
	    "    regex: a\n", { "missing 'id'", NULL } },
	{ "rules:\n" RULE("py-lower", "    regex: a\n"),
	    { "patterns.yaml:2:9: ", "id: 1 to 32", NULL } },
	{ "rules:\n" RULE("A-1", "    regex: 'x*'\n"),
	    { "patterns.yaml:6:12: ", "matches empty code", NULL } },
	{ "rules:\n" RULE("A-1", "    regex: ''\n"),
	    { "1 to 4096 bytes", NULL } },
	{ "rules:\n" RULE("A-1", "    regex: [a]\n"),
	    { "patterns.yaml:6:12: ", "regex", NULL } },
	{ "rules:\n  - just a string\n", { "patterns.yaml:2:5: ", NULL } },
	{ "rules: {}\n", { "patterns.yaml:1:8: ", NULL } },
	{ "rule: []\n", { "unknown key 'rule'", "missing 'rules'", NULL } },
	{ "- a\n- b\n", { "patterns.yaml:1:1: ", NULL } },
	/* Invalid YAML: the document does not load. */
	{ "rules:\n  - id: [A-1\n", { "patterns.yaml:", NULL } },
	{ "rules: [\n", { "patterns.yaml:", NULL } },
	/* Two errors in two rules: both reported in one pass. */
	{ "rules:\n" RULE("A-1", "    regex: '('\n") RULE("B-2",
	    "    regex: ok\n    extra: 1\n"),
	    { "patterns.yaml:6:12: ", "patterns.yaml:12:12: ", NULL } },
};

START_TEST(test_bad_rules_refused_with_position)
{
	struct rules_dir	 rd;
	struct patterns		*p;
	char			*errs;
	size_t			 i;

	rules_with(&rd, bad[_i].yaml);
	errs = load_captured(&rd, &p);
	ck_assert_msg(p == NULL, "case %d loaded", _i);
	for (i = 0; i < nitems(bad[_i].want) && bad[_i].want[i] != NULL; i++)
		ck_assert_msg(strstr(errs, bad[_i].want[i]) != NULL,
		    "case %d: errors\n%slack \"%s\"", _i, errs,
		    bad[_i].want[i]);
	free(errs);
}
END_TEST

/* A YAML document of n rules, each valid. */
static char *
many_rules(size_t n)
{
	size_t	 cap = 64 + n * 128, off, i;
	char	*y = xmalloc(cap);
	int	 w;

	off = (size_t)snprintf(y, cap, "rules:\n");
	for (i = 0; i < n; i++) {
		w = snprintf(y + off, cap - off, "  - {id: R-%zu, description: "
		    "d, severity: low, action: flag, regex: 'tok%zu'}\n", i, i);
		ck_assert(w > 0 && (size_t)w < cap - off);
		off += (size_t)w;
	}
	return y;
}

START_TEST(test_rule_count_limit)
{
	struct rules_dir	 rd;
	struct patterns		*p;
	char			*y, *errs;

	y = many_rules(PATTERNS_MAX);
	rules_with(&rd, y);
	free(y);
	errs = load_captured(&rd, &p);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(patterns_count(p), PATTERNS_MAX);
	patterns_free(p);
	free(errs);

	y = many_rules(PATTERNS_MAX + 1);
	rules_with(&rd, y);
	free(y);
	errs = load_captured(&rd, &p);
	ck_assert_ptr_null(p);
	ck_assert_msg(strstr(errs, "at most 256 (got 257)") != NULL, "%s",
	    errs);
	free(errs);
}
END_TEST

/* PATTERNS_REGEX_MAX bytes load; one more is refused. */
START_TEST(test_regex_length_limit)
{
	static const char head[] = "rules:\n- {id: A, description: d, "
	    "severity: low, action: flag, regex: ";
	struct rules_dir	 rd;
	struct patterns		*p;
	size_t			 n = PATTERNS_REGEX_MAX + (size_t)_i;
	char			*y, *errs;

	y = xmalloc(sizeof(head) + n + 3);
	memcpy(y, head, sizeof(head) - 1);
	memset(y + sizeof(head) - 1, 'a', n);
	memcpy(y + sizeof(head) - 1 + n, "}\n", 3);
	rules_with(&rd, y);
	errs = load_captured(&rd, &p);
	if (_i == 0)
		ck_assert_msg(p != NULL, "%s", errs);
	else {
		ck_assert_ptr_null(p);
		ck_assert_msg(strstr(errs, "1 to 4096 bytes") != NULL, "%s",
		    errs);
	}
	patterns_free(p);
	free(errs);
	free(y);
}
END_TEST

START_TEST(test_missing_file_is_no_rules)
{
	struct rules_dir	 rd;
	struct patterns		*p;
	json_t			*hits;

	tu_tmpdir(rd.dir, sizeof(rd.dir));
	p = patterns_load(rd.dir);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(patterns_count(p), 0);
	ck_assert_int_eq(patterns_scan(p, "os.system('x')", 14, &hits), 0);
	ck_assert_uint_eq(json_array_size(hits), 0);
	json_decref(hits);
	patterns_free(p);

	rules_with(&rd, "rules: []\n");
	ck_assert_ptr_nonnull(p = patterns_load(rd.dir));
	ck_assert_uint_eq(patterns_count(p), 0);
	patterns_free(p);
}
END_TEST

/* ------------------------------------------------------------ limits */

static struct patterns *
load_ok(struct rules_dir *rd, const char *yaml)
{
	struct patterns	*p;
	char		*errs;

	rules_with(rd, yaml);
	errs = load_captured(rd, &p);
	ck_assert_msg(p != NULL, "%s", errs);
	free(errs);
	return p;
}

/*
 * The classic catastrophic regex, JIT-compiled and interpreted ((*NO_JIT)
 * turns JIT off for that regex): the match limit stops it at once, as a
 * scanner_error naming the rule, and the rules after it still run.
 */
static const char *const redos[] = {
	"rules:\n"
	"- {id: T-REDOS, description: d, severity: low, action: flag, "
	"regex: '(a+)+$'}\n"
	"- {id: T-AFTER, description: d, severity: low, action: deny, "
	"regex: 'a!'}\n",
	"rules:\n"
	"- {id: T-REDOS, description: d, severity: low, action: flag, "
	"regex: '(*NO_JIT)(a+)+$'}\n"
	"- {id: T-AFTER, description: d, severity: low, action: deny, "
	"regex: 'a!'}\n",
};

START_TEST(test_pathological_regex_hits_match_limit)
{
	static const char code[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!";
	struct rules_dir	 rd;
	struct patterns		*p = load_ok(&rd, redos[_i]);
	uint64_t		 t0 = mono_ms();
	json_t			*hits, *h;

	ck_assert_int_eq(patterns_scan(p, code, strlen(code), &hits), -1);
	ck_assert_uint_lt(mono_ms() - t0, SLOW_MS);
	ck_assert_uint_eq(json_array_size(hits), 2);
	h = json_array_get(hits, 0);
	ck_assert_str_eq(json_string_value(json_object_get(h, "id")),
	    "scanner_error");
	ck_assert_str_eq(json_string_value(json_object_get(h, "rule")),
	    "T-REDOS");
	ck_assert_str_eq(json_string_value(json_object_get(h, "severity")),
	    "critical");
	ck_assert_str_eq(json_string_value(json_object_get(h, "action")),
	    "deny");
	ck_assert_msg(strstr(json_string_value(json_object_get(h, "error")),
	    "match limit") != NULL, "%s",
	    json_string_value(json_object_get(h, "error")));
	ck_assert_ptr_null(json_object_get(h, "line"));
	h = json_array_get(hits, 1);
	ck_assert_str_eq(json_string_value(json_object_get(h, "id")),
	    "T-AFTER");
	json_decref(hits);
	patterns_free(p);
}
END_TEST

/*
 * Under the match limit at every position but slow over a megabyte (JIT
 * alone takes some fifteen seconds): the scan's clock stops it.
 */
START_TEST(test_slow_regex_stopped_by_scan_budget)
{
	static const char block[] = "aaaaaaaaaaaaaaa!";
	struct rules_dir	 rd;
	struct patterns		*p;
	uint64_t		 t0;
	json_t			*hits, *h;
	char			*code;
	size_t			 len;

	p = load_ok(&rd, "rules:\n"
	    "- {id: T-SLOW, description: d, severity: low, action: flag, "
	    "regex: '(a+)+$'}\n"
	    "- {id: T-NEVER, description: d, severity: low, action: flag, "
	    "regex: 'a'}\n");
	code = xmalloc(PATTERNS_CODE_MAX);
	for (len = 0; len + sizeof(block) - 1 <= PATTERNS_CODE_MAX;
	    len += sizeof(block) - 1)
		memcpy(code + len, block, sizeof(block) - 1);
	t0 = mono_ms();
	ck_assert_int_eq(patterns_scan(p, code, len, &hits), -1);
	ck_assert_uint_lt(mono_ms() - t0, SLOW_MS);
	/* Stopped at T-SLOW: the rules after it are not run. */
	ck_assert_uint_eq(json_array_size(hits), 1);
	h = json_array_get(hits, 0);
	ck_assert_str_eq(json_string_value(json_object_get(h, "id")),
	    "scanner_error");
	ck_assert_str_eq(json_string_value(json_object_get(h, "rule")),
	    "T-SLOW");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(h,
	    "error")), "time limit"));
	json_decref(hits);
	free(code);
	patterns_free(p);
}
END_TEST

/* Invalid UTF-8 is scanned around, not refused; an empty scan is clean. */
START_TEST(test_invalid_utf8_and_empty_code)
{
	static const char code[] = "\xff\xfe\x80os.system(1)\xc3";
	struct patterns	*p = shipped();
	json_t		*hits;

	ck_assert_int_eq(patterns_scan(p, code, sizeof(code) - 1, &hits), 0);
	ck_assert_uint_eq(json_array_size(hits), 1);
	json_decref(hits);
	ck_assert_int_eq(patterns_scan(p, NULL, 0, &hits), 0);
	ck_assert_uint_eq(json_array_size(hits), 0);
	json_decref(hits);
	patterns_free(p);
}
END_TEST

/* ------------------------------------------------------------- suite */

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* NAME for each NAME.py in DATA_DIR, sorted. */
static void
find_cases(void)
{
	struct dirent	*de;
	DIR		*d;
	size_t		 n;

	if ((d = opendir(DATA_DIR)) == NULL) {
		perror(DATA_DIR);
		exit(1);
	}
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (n <= 3 || strcmp(de->d_name + n - 3, ".py") != 0)
			continue;
		if (ncases == CASES_MAX || n - 3 >= CASE_NAME_MAX) {
			fprintf(stderr, "%s: too many cases or too long a "
			    "name\n", DATA_DIR);
			exit(1);
		}
		memcpy(case_names[ncases], de->d_name, n - 3);
		case_names[ncases++][n - 3] = '\0';
	}
	closedir(d);
	qsort(case_names, (size_t)ncases, sizeof(case_names[0]), name_cmp);
}

static Suite *
patterns_suite(void)
{
	Suite	*s = suite_create("patterns");
	TCase	*tc = tcase_create("samples");
	TCase	*ld = tcase_create("loader");
	TCase	*lim = tcase_create("limits");

	find_cases();
	tcase_add_loop_test(tc, test_sample_verdict_and_ids, 0, ncases);
	tcase_add_test(tc, test_every_shipped_rule_has_samples);
	tcase_add_test(tc, test_hit_lines_and_fields);
	tcase_add_test(tc, test_first_match_per_rule);
	tcase_add_test(tc, test_invalid_utf8_and_empty_code);
	suite_add_tcase(s, tc);

	tcase_add_loop_test(ld, test_bad_rules_refused_with_position, 0,
	    (int)nitems(bad));
	tcase_add_test(ld, test_rule_count_limit);
	tcase_add_loop_test(ld, test_regex_length_limit, 0, 2);
	tcase_add_test(ld, test_missing_file_is_no_rules);
	suite_add_tcase(s, ld);

	tcase_add_test(lim, test_matches_across_slice_boundaries);
	tcase_add_test(lim, test_large_benign_code_scans_clean);
	tcase_add_test(lim, test_code_over_limit_refused);
	tcase_add_loop_test(lim, test_pathological_regex_hits_match_limit, 0,
	    (int)nitems(redos));
	tcase_add_test(lim, test_slow_regex_stopped_by_scan_budget);
	tcase_set_timeout(lim, 60);
	suite_add_tcase(s, lim);
	return s;
}

CHECK_MAIN(patterns_suite)
