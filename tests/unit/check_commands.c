/*
 * Tests for mcp-exec/commands.c: run_command's allowlist.  An arg_pattern
 * must match the whole argument (docs/policy.md): a trailing newline, a
 * prefix or a suffix around an allowed value is refused, however the
 * operator wrote the anchors.
 */
#include <jansson.h>

#include "tools/commands.h"
#include "testutil.h"

static struct commands *
load(const char *yaml)
{
	char		 dir[PATH_MAX], path[PATH_MAX];
	FILE		*f;
	struct commands	*cs;

	tu_tmpdir(dir, sizeof(dir));
	tu_path(path, sizeof(path), dir, "commands.yaml");
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(yaml, f);
	ck_assert_int_eq(fclose(f), 0);
	cs = commands_load(dir);
	ck_assert_ptr_nonnull(cs);
	return cs;
}

/* 1 when commands_check lets `arg` through as name's only argument. */
static int
passes(const struct commands *cs, const char *name, const char *arg)
{
	const char	*args[] = { arg };
	char		 err[256];

	return commands_check(cs, name, args, 1, err, sizeof(err)) != NULL;
}
#define PASSES(cs, name, lit)	passes(cs, name, lit)

START_TEST(test_shipped_patterns_refuse_trailing_newline)
{
	struct commands	*cs = commands_load("rules");

	ck_assert_ptr_nonnull(cs);
	ck_assert(PASSES(cs, "wc", "-l"));
	ck_assert(!PASSES(cs, "wc", "-l\n"));
	ck_assert(PASSES(cs, "head", "5"));
	ck_assert(!PASSES(cs, "head", "5\n"));
	ck_assert(!PASSES(cs, "head", "-n\n"));
	ck_assert(PASSES(cs, "sha256sum", "/inputs/a.csv"));
	ck_assert(!PASSES(cs, "sha256sum", "/inputs/a.csv\n"));
	ck_assert(PASSES(cs, "python-version", "--version"));
	ck_assert(!PASSES(cs, "python-version", "--version\n"));
	ck_assert(!PASSES(cs, "python-version", "--version\r\n"));
	commands_free(cs);
}
END_TEST

/* The whole argument, even when the operator forgot the anchors. */
START_TEST(test_unanchored_pattern_matches_whole_argument)
{
	struct commands	*cs = load("commands:\n"
	    "  t:\n    path: /bin/true\n    arg_pattern: '-[lw]+'\n"
	    "  alt:\n    path: /bin/true\n    arg_pattern: '^a|b$'\n"
	    "  z:\n    path: /bin/true\n    arg_pattern: '^x\\Z'\n");

	ck_assert(PASSES(cs, "t", "-l"));
	ck_assert(PASSES(cs, "t", "-lw"));
	ck_assert(!PASSES(cs, "t", "x-l"));
	ck_assert(!PASSES(cs, "t", "-lx"));
	ck_assert(!PASSES(cs, "t", "-l\n"));
	/* Anchors bind to the alternatives; the whole argument still must. */
	ck_assert(PASSES(cs, "alt", "a"));
	ck_assert(PASSES(cs, "alt", "b"));
	ck_assert(!PASSES(cs, "alt", "ab-anything"));
	ck_assert(!PASSES(cs, "alt", "anything-b"));
	/* \Z allows a final newline in PCRE2; the end anchor does not. */
	ck_assert(PASSES(cs, "z", "x"));
	ck_assert(!PASSES(cs, "z", "x\n"));
	commands_free(cs);
}
END_TEST

START_TEST(test_multiline_flag_does_not_reopen_newlines)
{
	struct commands	*cs = load("commands:\n"
	    "  m:\n    path: /bin/true\n    arg_pattern: '(?m)^[a-z]+$'\n");

	ck_assert(PASSES(cs, "m", "abc"));
	ck_assert(!PASSES(cs, "m", "abc\n"));
	ck_assert(!PASSES(cs, "m", "abc\ndef"));
	commands_free(cs);
}
END_TEST

START_TEST(test_no_pattern_allows_any_argument)
{
	struct commands	*cs = load("commands:\n"
	    "  any:\n    path: /bin/true\n");

	ck_assert(PASSES(cs, "any", "anything at all\n"));
	ck_assert(!PASSES(cs, "nope", "x"));
	commands_free(cs);
}
END_TEST

static Suite *
commands_suite(void)
{
	Suite	*s = suite_create("commands");
	TCase	*tc = tcase_create("arg_pattern");

	tcase_add_test(tc, test_shipped_patterns_refuse_trailing_newline);
	tcase_add_test(tc, test_unanchored_pattern_matches_whole_argument);
	tcase_add_test(tc, test_multiline_flag_does_not_reopen_newlines);
	tcase_add_test(tc, test_no_pattern_allows_any_argument);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(commands_suite)
