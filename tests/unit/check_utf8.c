/*
 * Tests for lib/utf8.c's name classification: which code points a name
 * shown to people may hold.  Each case is one code point inside a plain
 * name, so the offset of the problem is known too.
 */
#include "testutil.h"
#include "utf8.h"

struct cp_case {
	uint32_t	 cp;
	enum utf8_name	 want;
	const char	*what;
};

static const struct cp_case cases[] = {
	{ 0x0041, UTF8_NAME_OK, "A" },
	{ 0x0020, UTF8_NAME_OK, "space" },
	{ 0x00e9, UTF8_NAME_OK, "e acute" },
	{ 0x4e2d, UTF8_NAME_OK, "CJK" },
	{ 0x1f600, UTF8_NAME_OK, "emoji" },
	{ 0x0301, UTF8_NAME_OK, "combining acute (Mn)" },
	{ 0x0009, UTF8_NAME_CONTROL, "tab" },
	{ 0x000a, UTF8_NAME_CONTROL, "newline" },
	{ 0x001b, UTF8_NAME_CONTROL, "escape" },
	{ 0x007f, UTF8_NAME_CONTROL, "DEL" },
	{ 0x0085, UTF8_NAME_CONTROL, "NEL (C1)" },
	{ 0x009b, UTF8_NAME_CONTROL, "CSI (C1)" },
	/* Bidi_Control, every one. */
	{ 0x061c, UTF8_NAME_INVISIBLE, "ARABIC LETTER MARK" },
	{ 0x200e, UTF8_NAME_INVISIBLE, "LRM" },
	{ 0x200f, UTF8_NAME_INVISIBLE, "RLM" },
	{ 0x202a, UTF8_NAME_INVISIBLE, "LRE" },
	{ 0x202b, UTF8_NAME_INVISIBLE, "RLE" },
	{ 0x202c, UTF8_NAME_INVISIBLE, "PDF" },
	{ 0x202d, UTF8_NAME_INVISIBLE, "LRO" },
	{ 0x202e, UTF8_NAME_INVISIBLE, "RLO" },
	{ 0x2066, UTF8_NAME_INVISIBLE, "LRI" },
	{ 0x2067, UTF8_NAME_INVISIBLE, "RLI" },
	{ 0x2068, UTF8_NAME_INVISIBLE, "FSI" },
	{ 0x2069, UTF8_NAME_INVISIBLE, "PDI" },
	/* Other Cf. */
	{ 0x00ad, UTF8_NAME_INVISIBLE, "soft hyphen" },
	{ 0x200b, UTF8_NAME_INVISIBLE, "ZWSP" },
	{ 0x200d, UTF8_NAME_INVISIBLE, "ZWJ" },
	{ 0x2060, UTF8_NAME_INVISIBLE, "word joiner" },
	{ 0xfeff, UTF8_NAME_INVISIBLE, "BOM / ZWNBSP" },
	{ 0xfff9, UTF8_NAME_INVISIBLE, "interlinear annotation" },
	{ 0xe0001, UTF8_NAME_INVISIBLE, "language tag" },
	{ 0xe0041, UTF8_NAME_INVISIBLE, "tag A" },
	/* Separators and look-alike spaces. */
	{ 0x2028, UTF8_NAME_INVISIBLE, "line separator" },
	{ 0x2029, UTF8_NAME_INVISIBLE, "paragraph separator" },
	{ 0x00a0, UTF8_NAME_INVISIBLE, "no-break space" },
	{ 0x2003, UTF8_NAME_INVISIBLE, "em space" },
	{ 0x3000, UTF8_NAME_INVISIBLE, "ideographic space" },
	/* Default ignorables that are not Cf. */
	{ 0x034f, UTF8_NAME_INVISIBLE, "combining grapheme joiner" },
	{ 0x115f, UTF8_NAME_INVISIBLE, "hangul choseong filler" },
	{ 0x3164, UTF8_NAME_INVISIBLE, "hangul filler" },
	{ 0xfe0f, UTF8_NAME_INVISIBLE, "variation selector 16" },
	{ 0xe0100, UTF8_NAME_INVISIBLE, "variation selector 17" },
	/* Noncharacters, private use, unassigned. */
	{ 0xfdd0, UTF8_NAME_INVISIBLE, "noncharacter FDD0" },
	{ 0xfffe, UTF8_NAME_INVISIBLE, "noncharacter FFFE" },
	{ 0x10ffff, UTF8_NAME_INVISIBLE, "noncharacter 10FFFF" },
	{ 0xe000, UTF8_NAME_INVISIBLE, "private use" },
	{ 0xf0000, UTF8_NAME_INVISIBLE, "plane 15 private use" },
	{ 0x0378, UTF8_NAME_INVISIBLE, "unassigned (Greek block)" },
};

static size_t
encode(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

START_TEST(test_name_code_point_classes)
{
	const struct cp_case	*c = &cases[_i];
	char			 name[32];
	size_t			 n, off = 99;
	enum utf8_name		 got;

	memcpy(name, "ab", 2);
	n = 2 + encode(c->cp, name + 2);
	memcpy(name + n, ".txt", 4);
	n += 4;
	got = utf8_name_check(name, n, &off);
	ck_assert_msg(got == c->want, "U+%04X (%s): got %d, want %d",
	    (unsigned)c->cp, c->what, (int)got, (int)c->want);
	if (c->want != UTF8_NAME_OK)
		ck_assert_uint_eq(off, 2);
}
END_TEST

START_TEST(test_name_ill_formed)
{
	size_t	 off;

	ck_assert_int_eq(utf8_name_check("a\xff", 2, &off),
	    UTF8_NAME_ILLFORMED);
	ck_assert_uint_eq(off, 1);
	ck_assert_int_eq(utf8_name_check("a\0b", 3, &off),
	    UTF8_NAME_ILLFORMED);
	/* Overlong '/' and an encoded surrogate. */
	ck_assert_int_eq(utf8_name_check("\xc0\xaf", 2, NULL),
	    UTF8_NAME_ILLFORMED);
	ck_assert_int_eq(utf8_name_check("\xed\xa0\x80", 3, NULL),
	    UTF8_NAME_ILLFORMED);
	ck_assert_int_eq(utf8_name_check("\xe2\x80", 2, NULL),
	    UTF8_NAME_ILLFORMED);
	ck_assert_int_eq(utf8_name_check("", 0, NULL), UTF8_NAME_OK);
}
END_TEST

START_TEST(test_name_reasons_are_words)
{
	ck_assert_str_eq(utf8_name_why(UTF8_NAME_CONTROL),
	    "control character");
	ck_assert_str_eq(utf8_name_why(UTF8_NAME_ILLFORMED), "not UTF-8");
	ck_assert_ptr_nonnull(strstr(utf8_name_why(UTF8_NAME_INVISIBLE),
	    "unsafe character"));
}
END_TEST

static Suite *
utf8_suite(void)
{
	Suite	*s = suite_create("utf8");
	TCase	*tc = tcase_create("names");

	tcase_add_loop_test(tc, test_name_code_point_classes, 0,
	    (int)nitems(cases));
	tcase_add_test(tc, test_name_ill_formed);
	tcase_add_test(tc, test_name_reasons_are_words);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(utf8_suite)
