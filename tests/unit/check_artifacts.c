/*
 * mcp-exec/artifacts.c: type names and MIME types, and types from content
 * (and every way a sniff says no).
 */
#include "artifacts_fixture.h"
#include "sandbox/artifacts.h"
#include "testutil.h"

#define SNIFF(s, c)	artifact_sniff((const uint8_t *)(s), sizeof(s) - 1, (c))

START_TEST(test_type_names_and_mimes)
{
	int	 t;

	for (t = 0; t < ART_NTYPES; t++)
		ck_assert_int_eq(artifact_type_parse(artifact_type_name(t)), t);
	ck_assert_int_eq(artifact_type_parse("PNG"), -1);
	ck_assert_int_eq(artifact_type_parse(""), -1);
	ck_assert_int_eq(artifact_type_parse("exe"), -1);
	ck_assert_str_eq(artifact_mime(ART_PNG), "image/png");
	ck_assert_str_eq(artifact_mime(ART_JPEG), "image/jpeg");
	ck_assert_str_eq(artifact_mime(ART_SVG), "image/svg+xml");
	ck_assert_str_eq(artifact_mime(ART_CSV), "text/csv");
	ck_assert_str_eq(artifact_mime(ART_JSON), "application/json");
	ck_assert_str_eq(artifact_mime(ART_TXT), "text/plain");
	ck_assert_str_eq(artifact_mime(ART_HTML), "text/html");
}
END_TEST

/* A zip of the given entry names, stored (no data), as zipfile writes it:
 * local headers, central directory, end record.  Returns its length. */
static size_t
zip_build(uint8_t *out, size_t cap, const char *const names[])
{
	size_t	 o = 0, cd, n, i, count = 0;
	size_t	 local[8];

	for (i = 0; names[i] != NULL; i++) {
		n = strlen(names[i]);
		ck_assert_uint_lt(o + 30 + n, cap);
		memset(out + o, 0, 30);
		memcpy(out + o, "PK\3\4", 4);
		out[o + 26] = (uint8_t)n;
		memcpy(out + o + 30, names[i], n);
		local[i] = o;
		o += 30 + n;
		count++;
	}
	cd = o;
	for (i = 0; i < count; i++) {
		n = strlen(names[i]);
		ck_assert_uint_lt(o + 46 + n, cap);
		memset(out + o, 0, 46);
		memcpy(out + o, "PK\1\2", 4);
		out[o + 28] = (uint8_t)n;
		out[o + 42] = (uint8_t)local[i];
		memcpy(out + o + 46, names[i], n);
		o += 46 + n;
	}
	ck_assert_uint_lt(o + 22, cap);
	memset(out + o, 0, 22);
	memcpy(out + o, "PK\5\6", 4);
	out[o + 8] = out[o + 10] = (uint8_t)count;
	out[o + 12] = (uint8_t)(o - cd);
	out[o + 13] = (uint8_t)((o - cd) >> 8);
	out[o + 16] = (uint8_t)cd;
	out[o + 17] = (uint8_t)(cd >> 8);
	return o + 22;
}

START_TEST(test_sniff_new_types_by_magic)
{
	ck_assert_int_eq(SNIFF("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", 1), ART_PDF);
	ck_assert_int_eq(SNIFF("\x93NUMPY\x01\0v\0{'descr': '<i8'}", 1),
	    ART_NPY);
	ck_assert_int_eq(SNIFF("PAR1\0\0\0\0PAR1", 1), ART_PARQUET);
	ck_assert_int_eq(SNIFF("PAR1\0\0\0\0", 0), ART_PARQUET);
	/* Parquet that does not end with its magic, whole: not parquet. */
	ck_assert_int_eq(SNIFF("PAR1\0\0\0\0", 1), -1);
	ck_assert_int_eq(SNIFF("PAR1 is a word", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("%PDF", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("\x93NUMP", 1), -1);
	ck_assert_str_eq(artifact_mime(ART_PDF), "application/pdf");
	ck_assert_str_eq(artifact_mime(ART_MD), "text/markdown");
}
END_TEST

START_TEST(test_sniff_zip_kinds_from_central_directory)
{
	static const char *const xlsx[] = { "[Content_Types].xml", "_rels/.rels",
	    "xl/workbook.xml", NULL };
	static const char *const npz[] = { "x.npy", "y.npy", NULL };
	static const char *const zip[] = { "x.npy", "readme.txt", NULL };
	static const char *const none[] = { NULL };
	uint8_t	 buf[1024];
	size_t	 n;

	n = zip_build(buf, sizeof(buf), xlsx);
	ck_assert_int_eq(artifact_sniff(buf, n, 1), ART_XLSX);
	n = zip_build(buf, sizeof(buf), npz);
	ck_assert_int_eq(artifact_sniff(buf, n, 1), ART_NPZ);
	n = zip_build(buf, sizeof(buf), zip);
	ck_assert_int_eq(artifact_sniff(buf, n, 1), ART_ZIP);
	n = zip_build(buf, sizeof(buf), none);
	ck_assert_int_eq(artifact_sniff(buf, n, 1), ART_ZIP);
	/* Only the start at hand: the first entry decides. */
	n = zip_build(buf, sizeof(buf), npz);
	ck_assert_int_eq(artifact_sniff(buf, 40, 0), ART_NPZ);
	/* Names break ties the content leaves open, and only those. */
	ck_assert_int_eq(artifact_refine(ART_ZIP, buf, n, "a.xlsx"), ART_XLSX);
	ck_assert_int_eq(artifact_refine(ART_TXT, buf, n, "notes.md"), ART_MD);
	ck_assert_int_eq(artifact_refine(ART_PNG, buf, n, "a.md"), ART_PNG);
	ck_assert_int_eq(artifact_refine(ART_TXT, buf, n, "md"), ART_TXT);
}
END_TEST

START_TEST(test_sniff_zip_hostile_directories)
{
	static const char *const npz[] = { "x.npy", "y.npy", NULL };
	uint8_t	 buf[1024], bad[1024];
	size_t	 n, e, i;

	n = zip_build(buf, sizeof(buf), npz);
	e = n - 22;
	/* Offsets past the end record, counts past the entries, names past
	 * the directory: each falls back to the first entry, never reads
	 * outside the buffer (ASan watches). */
	memcpy(bad, buf, n);
	bad[e + 16] = 0xff;
	bad[e + 19] = 0xff;
	ck_assert_int_eq(artifact_sniff(bad, n, 1), ART_NPZ);
	memcpy(bad, buf, n);
	bad[e + 10] = 200;
	ck_assert_int_eq(artifact_sniff(bad, n, 1), ART_NPZ);
	memcpy(bad, buf, n);
	bad[e + 12] = 0xff;
	bad[e + 13] = 0xff;
	ck_assert_int_eq(artifact_sniff(bad, n, 1), ART_NPZ);
	/* Every length of every cut: a type, never a crash. */
	for (i = 4; i <= n; i++) {
		ck_assert_int_ne(artifact_sniff(buf, i, 1), -1);
		ck_assert_int_ne(artifact_sniff(buf, i, 0), -1);
	}
	/* An end record alone is an empty zip. */
	ck_assert_int_eq(SNIFF("PK\5\6\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 1),
	    ART_ZIP);
}
END_TEST

START_TEST(test_sniff_images_by_magic)
{
	ck_assert_int_eq(SNIFF(PNG_HEAD, 1), ART_PNG);
	ck_assert_int_eq(SNIFF("\x89PNG\r\n\x1a\n", 0), ART_PNG);
	ck_assert_int_eq(SNIFF("\xff\xd8\xff\xe0\0\x10JFIF", 1), ART_JPEG);
	/* One byte short of, or off, the magic: binary, no type. */
	ck_assert_int_eq(SNIFF("\x89PNG\r\n\x1a", 1), -1);
	ck_assert_int_eq(SNIFF("\x89PNG\r\n\x1a\x0b", 1), -1);
	ck_assert_int_eq(SNIFF("\xff\xd8", 1), -1);
	ck_assert_int_eq(SNIFF("\xff\xd8\xfe", 1), -1);
	ck_assert_int_eq(SNIFF("\x7f" "ELF\x02\x01\x01\0", 1), -1);
}
END_TEST

START_TEST(test_sniff_svg_after_prolog)
{
	ck_assert_int_eq(SNIFF("<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
	    1), ART_SVG);
	ck_assert_int_eq(SNIFF("\xef\xbb\xbf  <?xml version=\"1.0\"?>\n"
	    "<!-- made by matplotlib -->\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD "
	    "SVG 1.1//EN\" \"x.dtd\" [ <!ENTITY a \"b\"> ]>\n<svg>", 1),
	    ART_SVG);
	ck_assert_int_eq(SNIFF("<svg\n width=\"1\"></svg>", 1), ART_SVG);
	ck_assert_int_eq(SNIFF("<svg>", 0), ART_SVG);
}
END_TEST

START_TEST(test_sniff_svg_negatives)
{
	/* Not the first element, not the name, prolog never closed. */
	ck_assert_int_eq(SNIFF("<g><svg></svg></g>", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("<svgx>", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("<SVG>", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("<svg", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("<?xml version=\"1.0\" <svg>", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("<!-- <svg> ", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("<!DOCTYPE svg [ > <svg>", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("text then <svg>", 1), ART_TXT);
	/* Not UTF-8: no text type at all. */
	ck_assert_int_eq(SNIFF("<svg>\xff</svg>", 1), -1);
}
END_TEST

START_TEST(test_sniff_html_any_case)
{
	ck_assert_int_eq(SNIFF("<!DOCTYPE html>\n<title>x</title>", 1),
	    ART_HTML);
	ck_assert_int_eq(SNIFF("<!doctype HTML>", 1), ART_HTML);
	ck_assert_int_eq(SNIFF("\xef\xbb\xbf\n<!-- c --> <HTML lang=en>", 1),
	    ART_HTML);
	ck_assert_int_eq(SNIFF("<html>", 0), ART_HTML);
}
END_TEST

START_TEST(test_sniff_html_negatives)
{
	ck_assert_int_eq(SNIFF("<!DOCTYPE htm>", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("<!DOCTYPEhtml>", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("<!DOCTYPE htmlx>", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("<htmlx>", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("<body>hi</body>", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("<!-- never closed <html>", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("<html>\0", 1), -1);
}
END_TEST

START_TEST(test_sniff_json_parses_when_complete)
{
	ck_assert_int_eq(SNIFF(" {\"a\": [1, 2, {\"b\": null}]}\n", 1),
	    ART_JSON);
	ck_assert_int_eq(SNIFF("[]", 1), ART_JSON);
	/* Broken JSON is not JSON when we have all of it. */
	ck_assert_int_eq(SNIFF("{\"a\": ", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("{\"a\": 1} trailing", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("{'a': 1}", 1), ART_TXT);
	/* A prefix is judged by its first character. */
	ck_assert_int_eq(SNIFF("{\"a\": ", 0), ART_JSON);
	ck_assert_int_eq(SNIFF("\n\t[", 0), ART_JSON);
	/* Scalars are valid JSON but not what we call a JSON artifact. */
	ck_assert_int_eq(SNIFF("42", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("\"s\"", 1), ART_TXT);
}
END_TEST

START_TEST(test_sniff_csv_consistent_commas)
{
	ck_assert_int_eq(SNIFF("a,b\n1,2\n", 1), ART_CSV);
	ck_assert_int_eq(SNIFF("a,b,c\r\n1,2,3\r\n4,5,6", 1), ART_CSV);
	ck_assert_int_eq(SNIFF("\"x,y\",1\n2,3\n", 1), ART_CSV);
	ck_assert_int_eq(SNIFF("\"multi\nline\",1\n2,3\n", 1), ART_CSV);
	ck_assert_int_eq(SNIFF("a,b\n\n1,2\n\n", 1), ART_CSV);
	/* A cut-off last line is not held against a prefix. */
	ck_assert_int_eq(SNIFF("a,b\n1,2\n3", 0), ART_CSV);
}
END_TEST

START_TEST(test_sniff_csv_negatives)
{
	ck_assert_int_eq(SNIFF("a,b\n", 1), ART_TXT);		/* one line */
	ck_assert_int_eq(SNIFF("a,b\n1,2,3\n", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("a\nb\n", 1), ART_TXT);		/* no commas */
	ck_assert_int_eq(SNIFF("a,b\n1,2\n3", 1), ART_TXT);	/* last short */
	ck_assert_int_eq(SNIFF("a,b\n1,\"2\n", 1), ART_TXT);	/* open quote */
	ck_assert_int_eq(SNIFF("a,b\n1,2,3", 0), ART_TXT);	/* 1 full */
	ck_assert_int_eq(SNIFF("\"a,b\"\n\"1,2\"\n", 1), ART_TXT);
}
END_TEST

START_TEST(test_sniff_text_must_be_utf8)
{
	ck_assert_int_eq(SNIFF("", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("caf\xc3\xa9 \xe2\x82\xac\n", 1), ART_TXT);
	ck_assert_int_eq(SNIFF("nul\0inside", 1), -1);
	ck_assert_int_eq(SNIFF("\xc0\xaf", 1), -1);		/* overlong */
	ck_assert_int_eq(SNIFF("\xed\xa0\x80", 1), -1);		/* surrogate */
	ck_assert_int_eq(SNIFF("\xf4\x90\x80\x80", 1), -1);	/* > 10FFFF */
	ck_assert_int_eq(SNIFF("a\x80" "b", 1), -1);		/* stray */
	ck_assert_int_eq(SNIFF("\xfe\xff", 1), -1);
	/* Cut mid-character: fine for a prefix, not for a whole file. */
	ck_assert_int_eq(SNIFF("caf\xc3", 0), ART_TXT);
	ck_assert_int_eq(SNIFF("x\xf0\x9f\x98", 0), ART_TXT);
	ck_assert_int_eq(SNIFF("caf\xc3", 1), -1);
	/* Ill-formed already, however the file goes on. */
	ck_assert_int_eq(SNIFF("x\xe0\x80", 0), -1);
	ck_assert_int_eq(SNIFF("x\xc3" "a", 0), -1);
}
END_TEST

static Suite *
artifacts_suite(void)
{
	Suite	*s = suite_create("artifacts");
	TCase	*tc = tcase_create("sniff");

	tcase_add_test(tc, test_type_names_and_mimes);
	tcase_add_test(tc, test_sniff_images_by_magic);
	tcase_add_test(tc, test_sniff_new_types_by_magic);
	tcase_add_test(tc, test_sniff_zip_kinds_from_central_directory);
	tcase_add_test(tc, test_sniff_zip_hostile_directories);
	tcase_add_test(tc, test_sniff_svg_after_prolog);
	tcase_add_test(tc, test_sniff_svg_negatives);
	tcase_add_test(tc, test_sniff_html_any_case);
	tcase_add_test(tc, test_sniff_html_negatives);
	tcase_add_test(tc, test_sniff_json_parses_when_complete);
	tcase_add_test(tc, test_sniff_csv_consistent_commas);
	tcase_add_test(tc, test_sniff_csv_negatives);
	tcase_add_test(tc, test_sniff_text_must_be_utf8);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(artifacts_suite)
