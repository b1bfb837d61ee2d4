/*
 * Tests for lib/conf_load.c: YAML policy loading from literal strings
 * (scalar rules, limits, refused constructs, error messages).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "testutil.h"

#include "conf_fixture.h"

/* Loading must fail with a message that contains want. */
static void
load_fails(const char *yaml, const char *want)
{
	struct conf_doc	*doc = load(yaml);

	ck_assert_msg(doc == NULL, "load of \"%s\" succeeded", yaml);
	ck_assert_msg(strstr(err, want) != NULL,
	    "load of \"%s\": error \"%s\" lacks \"%s\"", yaml, err, want);
}

/* The root's only member "v", as loaded from "v: <scalar>". */
static json_t *
scalar(struct conf_doc **doc, const char *text)
{
	char	 yaml[256];

	snprintf(yaml, sizeof(yaml), "v: %s\n", text);
	*doc = load_ok(yaml);
	return json_object_get(conf_doc_root(*doc), "v");
}

static void
assert_scalar_type(const char *text, json_type type)
{
	struct conf_doc	*doc;
	json_t		*v = scalar(&doc, text);

	ck_assert_msg(v != NULL && json_typeof(v) == type,
	    "\"%s\": type %d, want %d", text, v ? (int)json_typeof(v) : -1,
	    (int)type);
	conf_doc_free(doc);
}

static void
assert_scalar_int(const char *text, json_int_t want)
{
	struct conf_doc	*doc;
	json_t		*v = scalar(&doc, text);

	ck_assert_msg(json_is_integer(v), "\"%s\" is not an integer", text);
	ck_assert_msg(json_integer_value(v) == want, "\"%s\" = %lld, want %lld",
	    text, (long long)json_integer_value(v), (long long)want);
	conf_doc_free(doc);
}

static void
assert_scalar_string(const char *text, const char *want)
{
	struct conf_doc	*doc;
	json_t		*v = scalar(&doc, text);

	ck_assert_msg(json_is_string(v), "\"%s\" is not a string", text);
	ck_assert_str_eq(json_string_value(v), want);
	conf_doc_free(doc);
}

static void
assert_scalar_fails(const char *text, const char *want)
{
	char	 yaml[256];

	snprintf(yaml, sizeof(yaml), "v: %s\n", text);
	load_fails(yaml, want);
}

/* ---------------------------------------------------------------- loading */

START_TEST(test_load_mapping_of_each_type)
{
	struct conf_doc	*doc = load_ok("name: web\nport: 8080\nratio: 0.5\n"
	    "enabled: true\nnothing: ~\nlist: [a, b]\nsub: {x: 1}\n");
	json_t		*root = conf_doc_root(doc);

	ck_assert(json_is_object(root));
	ck_assert_int_eq(json_object_size(root), 7);
	ck_assert_str_eq(json_string_value(json_object_get(root, "name")),
	    "web");
	ck_assert_int_eq(json_integer_value(json_object_get(root, "port")),
	    8080);
	ck_assert(json_real_value(json_object_get(root, "ratio")) == 0.5);
	ck_assert(json_is_true(json_object_get(root, "enabled")));
	ck_assert(json_is_null(json_object_get(root, "nothing")));
	ck_assert_int_eq(json_array_size(json_object_get(root, "list")), 2);
	ck_assert(json_is_object(json_object_get(root, "sub")));
	ck_assert_str_eq(conf_doc_name(doc), "t.yaml");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_empty_file_is_empty_object)
{
	const char	*inputs[] = { "", "# only a comment\n", "---\n",
	    "---\n...\n", "\n\n", "~\n" };
	struct conf_doc	*doc;
	size_t		 i;

	for (i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		doc = load_ok(inputs[i]);
		ck_assert_msg(json_is_object(conf_doc_root(doc)) &&
		    json_object_size(conf_doc_root(doc)) == 0, "\"%s\"",
		    inputs[i]);
		conf_doc_free(doc);
	}
	doc = conf_doc_load_buf("t.yaml", NULL, 0, err, sizeof(err));
	ck_assert_ptr_nonnull(doc);
	ck_assert(json_is_object(conf_doc_root(doc)));
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_sequence_root_allowed)
{
	struct conf_doc	*doc = load_ok("- a\n- b\n");

	ck_assert(json_is_array(conf_doc_root(doc)));
	ck_assert_int_eq(json_array_size(conf_doc_root(doc)), 2);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_sha256_of_file_bytes)
{
	struct conf_doc	*doc = load_ok("a: 1\n");

	ck_assert_str_eq(conf_doc_sha256(doc), "37b128c59f1f5097f73f82691cb5"
	    "19f1f568667faab5ced1b4ab979d36837eae");
	conf_doc_free(doc);
	doc = load_ok("");
	ck_assert_str_eq(conf_doc_sha256(doc), "e3b0c44298fc1c149afbf4c8996f"
	    "b92427ae41e4649b934ca495991b7852b855");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_null_forms)
{
	const char	*nulls[] = { "~", "null", "Null", "NULL", "" };
	size_t		 i;

	for (i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		assert_scalar_type(nulls[i], JSON_NULL);
	assert_scalar_string("nULL", "nULL");
	assert_scalar_string("'~'", "~");
	assert_scalar_string("\"null\"", "null");
	assert_scalar_string("''", "");
}
END_TEST

START_TEST(test_bool_forms)
{
	assert_scalar_type("true", JSON_TRUE);
	assert_scalar_type("True", JSON_TRUE);
	assert_scalar_type("TRUE", JSON_TRUE);
	assert_scalar_type("false", JSON_FALSE);
	assert_scalar_type("False", JSON_FALSE);
	assert_scalar_type("FALSE", JSON_FALSE);
	/* YAML 1.1's yes/no/on/off are strings: no Norway problem. */
	assert_scalar_string("yes", "yes");
	assert_scalar_string("on", "on");
	assert_scalar_string("NO", "NO");
	assert_scalar_string("tRUE", "tRUE");
}
END_TEST

START_TEST(test_integer_forms)
{
	assert_scalar_int("42", 42);
	assert_scalar_int("-7", -7);
	assert_scalar_int("+3", 3);
	assert_scalar_int("0", 0);
	assert_scalar_int("-0", 0);
	assert_scalar_int("0o17", 15);
	assert_scalar_int("0x1F", 31);
	assert_scalar_int("0x1f", 31);
	assert_scalar_int("9223372036854775807", INT64_MAX);
	assert_scalar_int("-9223372036854775808", INT64_MIN);
	assert_scalar_int("0x7fffffffffffffff", INT64_MAX);
	assert_scalar_int("0o777777777777777777777", INT64_MAX);
}
END_TEST

START_TEST(test_integer_out_of_range)
{
	assert_scalar_fails("9223372036854775808", "t.yaml:1:4: integer out "
	    "of range");
	assert_scalar_fails("-9223372036854775809", "integer out of range");
	assert_scalar_fails("0x8000000000000000", "integer out of range");
	assert_scalar_fails("0o1000000000000000000000", "integer out of range");
	assert_scalar_fails("99999999999999999999999999999999999999",
	    "integer out of range");
}
END_TEST

START_TEST(test_octal_mode)
{
	assert_scalar_int("0660", 0660);
	assert_scalar_int("0755", 0755);
	assert_scalar_int("00", 0);
	assert_scalar_int("-010", -8);
	assert_scalar_int("+017", 15);
	/* Quoted, it is the string the operator wrote. */
	assert_scalar_string("'0660'", "0660");
}
END_TEST

START_TEST(test_octal_with_digit_8_or_9_rejected)
{
	assert_scalar_fails("0689", "t.yaml:1:4: a leading zero makes a "
	    "number octal");
	assert_scalar_fails("-09", "octal");
}
END_TEST

START_TEST(test_real_forms)
{
	struct conf_doc	*doc;
	json_t		*v;

	assert_scalar_type("1.0", JSON_REAL);
	assert_scalar_type(".5", JSON_REAL);
	assert_scalar_type("5.", JSON_REAL);
	assert_scalar_type("1e3", JSON_REAL);
	assert_scalar_type("+1.5E-2", JSON_REAL);
	v = scalar(&doc, "-2.5e3");
	ck_assert(json_is_real(v) && json_real_value(v) == -2500.0);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_real_out_of_range_rejected)
{
	char	 longreal[100];

	assert_scalar_fails("1e400", "t.yaml:1:4: number out of range");
	assert_scalar_fails("-1.0e999", "number out of range");
	memset(longreal, '1', sizeof(longreal) - 1);
	longreal[0] = '.';
	longreal[sizeof(longreal) - 1] = '\0';
	assert_scalar_fails(longreal, "number too long");
}
END_TEST

START_TEST(test_near_numbers_are_strings)
{
	const char	*inputs[] = { "0x", "0o", "0o8", "0xg", "1_000",
	    "0b101", ".inf", "-.inf", ".nan", "1.2.3", "+", "12abc", "0X1F",
	    "1e", "1e+", ".", "e5", "1:30", "0x-1", "--1", "1 2", "-0x10",
	    "+0o7" };
	char		 quoted[64];
	size_t		 i;

	for (i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		assert_scalar_string(inputs[i], inputs[i]);
		snprintf(quoted, sizeof(quoted), "'%s'", inputs[i]);
		assert_scalar_string(quoted, inputs[i]);
	}
	assert_scalar_string("'-'", "-");
}
END_TEST

START_TEST(test_quoted_number_is_string)
{
	assert_scalar_string("'42'", "42");
	assert_scalar_string("\"42\"", "42");
	assert_scalar_string("\"true\"", "true");
	assert_scalar_string("'1.5'", "1.5");
	assert_scalar_string("|\n  42", "42\n");
	assert_scalar_string(">-\n  42", "42");
}
END_TEST

START_TEST(test_str_tag_forces_string)
{
	assert_scalar_string("!!str 42", "42");
	assert_scalar_string("!!str true", "true");
	assert_scalar_string("!!str ~", "~");
	assert_scalar_string("!!str", "");
	assert_scalar_string("!!str 0660", "0660");
}
END_TEST

START_TEST(test_core_tags_honoured)
{
	struct conf_doc	*doc;
	json_t		*v;

	assert_scalar_int("!!int \"12\"", 12);
	assert_scalar_int("!!int 0660", 0660);
	assert_scalar_type("!!bool \"true\"", JSON_TRUE);
	assert_scalar_type("!!null \"\"", JSON_NULL);
	assert_scalar_type("!!null ~", JSON_NULL);
	assert_scalar_type("!!map {a: 1}", JSON_OBJECT);
	assert_scalar_type("!!seq [1]", JSON_ARRAY);
	v = scalar(&doc, "!!float 1");
	ck_assert(json_is_real(v) && json_real_value(v) == 1.0);
	conf_doc_free(doc);
	v = scalar(&doc, "!!float '2.5'");
	ck_assert(json_is_real(v) && json_real_value(v) == 2.5);
	conf_doc_free(doc);
	/* The long form of a core tag is the same tag. */
	assert_scalar_string("!<tag:yaml.org,2002:str> 5", "5");
}
END_TEST

START_TEST(test_core_tag_mismatch_rejected)
{
	assert_scalar_fails("!!int abc", "t.yaml:1:4: 'abc' is not a valid "
	    "!!int");
	assert_scalar_fails("!!int 1.5", "not a valid !!int");
	assert_scalar_fails("!!int 99999999999999999999", "integer out of "
	    "range");
	assert_scalar_fails("!!bool yes", "not a valid !!bool");
	assert_scalar_fails("!!null x", "not a valid !!null");
	assert_scalar_fails("!!float abc", "not a valid !!float");
	assert_scalar_fails("!!float 1e999", "number out of range");
	assert_scalar_fails("!!map x", "tag !!map cannot be used on a scalar");
	assert_scalar_fails("!!seq x", "tag !!seq cannot be used on a scalar");
	assert_scalar_fails("!!seq {a: 1}", "tag !!seq cannot be used on a "
	    "mapping");
	assert_scalar_fails("!!map [1]", "tag !!map cannot be used on a "
	    "sequence");
	assert_scalar_fails("!!str [1]", "tag !!str cannot be used on a "
	    "sequence");
}
END_TEST

START_TEST(test_custom_tags_rejected)
{
	assert_scalar_fails("!foo bar", "t.yaml:1:4: tag '!foo' is not "
	    "supported");
	assert_scalar_fails("! bar", "tag '!' is not supported");
	assert_scalar_fails("!!binary aGk=", "tag 'tag:yaml.org,2002:binary' "
	    "is not supported");
	assert_scalar_fails("!!timestamp 2001-12-14", "is not supported");
	assert_scalar_fails("!<tag:example.com,2000:x> y", "is not supported");
	assert_scalar_fails("!foo {a: 1}", "is not supported");
	assert_scalar_fails("!foo [1]", "is not supported");
	/* A %TAG that redefines !! makes !!str some other tag. */
	load_fails("%TAG !! tag:example.com,2000:\n---\nv: !!str x\n",
	    "tag 'tag:example.com,2000:str' is not supported");
	/* Untrusted tag text is escaped in the message. */
	load_fails("v: !<!%1b[31m> x\n", "tag '!\\x1b[31m' is not "
	    "supported");
}
END_TEST

START_TEST(test_load_rejects_alias)
{
	load_fails("a: &x 1\nb: *x\n", "t.yaml:1:4: aliases and anchors are "
	    "not supported");
	load_fails("a: *x\n", "aliases and anchors are not supported");
}
END_TEST

START_TEST(test_load_rejects_anchor)
{
	load_fails("a: &x 1\n", "t.yaml:1:4: aliases and anchors are not "
	    "supported");
	load_fails("a: &x {b: 1}\n", "aliases and anchors are not supported");
	load_fails("a: &x [1]\n", "aliases and anchors are not supported");
	load_fails("&x a: 1\n", "aliases and anchors are not supported");
	load_fails("base: &b {x: 1}\nderived:\n  <<: *b\n",
	    "aliases and anchors are not supported");
}
END_TEST

START_TEST(test_duplicate_key_rejected)
{
	load_fails("a: 1\nb: 2\na: 3\n", "t.yaml:3:1: duplicate key 'a' "
	    "(first at line 1, again at line 3)");
	load_fails("x: {k: 1, k: 2}\n", "t.yaml:1:11: duplicate key 'k'");
	load_fails("s:\n  k: 1\n  j: 2\n  k: [3]\n", "duplicate key 'k' (first "
	    "at line 2, again at line 4)");
	/* "1" and 1 are the same key once keys are strings. */
	load_fails("1: a\n'1': b\n", "duplicate key '1'");
}
END_TEST

START_TEST(test_scalar_keys_are_strings)
{
	struct conf_doc	*doc = load_ok("1: one\ntrue: yes\n0x10: hex\n"
	    "~: tilde\n");
	json_t		*root = conf_doc_root(doc);

	ck_assert_str_eq(json_string_value(json_object_get(root, "1")), "one");
	ck_assert_str_eq(json_string_value(json_object_get(root, "true")),
	    "yes");
	ck_assert_str_eq(json_string_value(json_object_get(root, "0x10")),
	    "hex");
	ck_assert_str_eq(json_string_value(json_object_get(root, "~")),
	    "tilde");
	conf_doc_free(doc);
	doc = load_ok("!!str k: v\n");
	ck_assert_ptr_nonnull(json_object_get(conf_doc_root(doc), "k"));
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_collection_key_rejected)
{
	load_fails("? [a]\n: b\n", "t.yaml:1:3: mapping keys must be strings, "
	    "not a sequence");
	load_fails("? {a: 1}\n: b\n", "mapping keys must be strings, not a "
	    "mapping");
	load_fails("{[a]: 1}\n", "mapping keys must be strings");
	load_fails("!!int 1: x\n", "mapping keys must be strings, not !!int");
	load_fails("!!null ~: x\n", "mapping keys must be strings, not !!null");
}
END_TEST

START_TEST(test_empty_key_rejected)
{
	load_fails("'': x\n", "t.yaml:1:1: empty mapping key");
	load_fails("{'': x}\n", "t.yaml:1:2: empty mapping key");
	load_fails("? \n: x\n", "empty mapping key");
}
END_TEST

START_TEST(test_multiple_documents_rejected)
{
	load_fails("a: 1\n---\nb: 2\n", "t.yaml:2:1: multiple documents are "
	    "not supported");
	load_fails("---\na: 1\n...\n---\n", "multiple documents");
	load_fails("--- 1\n--- 2\n", "multiple documents");
}
END_TEST

START_TEST(test_explicit_single_document_loads)
{
	struct conf_doc	*doc = load_ok("%YAML 1.1\n---\na: 1\n...\n");

	ck_assert_int_eq(json_integer_value(json_object_get(
	    conf_doc_root(doc), "a")), 1);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_invalid_utf8_rejected)
{
	load_fails("a: \xff\n", "t.yaml:1:4: invalid leading UTF-8 octet");
	load_fails("a: b\nc: \xc3\n", "t.yaml:2:4: invalid trailing UTF-8 "
	    "octet");
	load_fails("a: b\nc: d\xc3", "t.yaml:2:5: incomplete UTF-8 octet "
	    "sequence");
	/* Overlong encoding of '/'. */
	load_fails("a: \xc0\xaf\n", "t.yaml:1:4: invalid length of a UTF-8 "
	    "sequence");
	/* A surrogate, which UTF-8 may not encode. */
	load_fails("a: \xed\xa0\x80\n", "t.yaml:1:4: invalid Unicode "
	    "character");
	/* Column counts characters, as libyaml does: 'é' is one. */
	load_fails("\xc3\xa9: \xff\n", "t.yaml:1:4: invalid leading UTF-8");
}
END_TEST

START_TEST(test_invalid_utf8_position_after_line_breaks)
{
	load_fails("a: 1\r\nb: \xff\r\n", "t.yaml:2:4: invalid leading");
	load_fails("a: 1\rb: \xff", "t.yaml:2:4: invalid leading");
	/* A bad third byte: the position is the character's first byte. */
	load_fails("a: \xe2\x82" "A\n", "t.yaml:1:4: invalid trailing UTF-8");
}
END_TEST

START_TEST(test_load_without_name_or_error_buffer)
{
	ck_assert_ptr_null(conf_doc_load_buf(NULL, "a: *x\n", 6, err,
	    sizeof(err)));
	ck_assert_str_eq(err, "<input>:1:4: aliases and anchors are not "
	    "supported");
	conf_doc_free(NULL);
}
END_TEST

START_TEST(test_utf16_is_not_guessed)
{
	static const char bom16[] = "\xff\xfe" "a\0:\0 \0" "1\0\n\0";

	ck_assert_ptr_null(conf_doc_load_buf("t.yaml", bom16,
	    sizeof(bom16) - 1, err, sizeof(err)));
	ck_assert_str_eq(err, "t.yaml:1:4: NUL byte in input");
	/* Without NULs, the BOM alone is not UTF-8. */
	load_fails("\xff\xfe", "t.yaml:1:1: invalid leading UTF-8 octet");
	load_fails("\xfe\xff", "t.yaml:1:1: invalid leading UTF-8 octet");
}
END_TEST

START_TEST(test_utf8_bom_and_text_accepted)
{
	struct conf_doc	*doc = load_ok("\xef\xbb\xbf" "name: caf\xc3\xa9\n");

	ck_assert_str_eq(json_string_value(json_object_get(conf_doc_root(doc),
	    "name")), "caf\xc3\xa9");
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_control_character_rejected)
{
	load_fails("a: b\x01\n", "t.yaml:1:5: control characters are not "
	    "allowed");
}
END_TEST

START_TEST(test_nul_byte_rejected)
{
	static const char yaml[] = "a: 1\nb: x\0y\n";

	ck_assert_ptr_null(conf_doc_load_buf("t.yaml", yaml, sizeof(yaml) - 1,
	    err, sizeof(err)));
	ck_assert_str_eq(err, "t.yaml:2:5: NUL byte in input");
}
END_TEST

START_TEST(test_nul_escape_rejected)
{
	load_fails("a: \"x\\0y\"\n", "t.yaml:1:4: NUL character in a scalar");
	load_fails("a: \"\\x00\"\n", "NUL character");
	load_fails("\"k\\0\": 1\n", "t.yaml:1:1: NUL character");
}
END_TEST

START_TEST(test_escapes_decoded)
{
	assert_scalar_string("\"a\\tb\\u00e9\"", "a\tb\xc3\xa9");
}
END_TEST

START_TEST(test_syntax_error_names_line_and_column)
{
	load_fails("a: 1\nb: [1, 2\n", "t.yaml:3:1: did not find expected "
	    "',' or ']' (while parsing a flow sequence at line 2)");
	load_fails("a:\n  b: 1\n c: 2\n", "t.yaml:3:2: did not find "
	    "expected key");
	load_fails("a: b: c\n", "t.yaml:1:5: mapping values are not allowed");
	load_fails("a:\n\t- b\n", "t.yaml:2:1: found character that cannot "
	    "start any token");
	load_fails("a: 'open\n", "t.yaml:2:1: found unexpected end of stream");
	load_fails("- a\nb: 1\n", "t.yaml:2:1:");
}
END_TEST

START_TEST(test_depth_cap)
{
	char		 yaml[2 * (CONF_DEPTH_MAX + 1) + 2];
	struct conf_doc	*doc;
	int		 i;

	/* CONF_DEPTH_MAX levels load ... */
	for (i = 0; i < CONF_DEPTH_MAX; i++) {
		yaml[i] = '[';
		yaml[CONF_DEPTH_MAX + i] = ']';
	}
	yaml[2 * CONF_DEPTH_MAX] = '\0';
	doc = load_ok(yaml);
	conf_doc_free(doc);
	/* ... one more does not. */
	for (i = 0; i <= CONF_DEPTH_MAX; i++) {
		yaml[i] = '[';
		yaml[CONF_DEPTH_MAX + 1 + i] = ']';
	}
	yaml[2 * (CONF_DEPTH_MAX + 1)] = '\0';
	load_fails(yaml, "t.yaml:1:33: nested deeper than 32 levels");
}
END_TEST

START_TEST(test_depth_cap_block_style)
{
	char	 yaml[4096];
	size_t	 off = 0;
	int	 i;

	for (i = 0; i <= CONF_DEPTH_MAX; i++)
		off += (size_t)snprintf(yaml + off, sizeof(yaml) - off,
		    "%*sk:\n", i, "");
	snprintf(yaml + off, sizeof(yaml) - off, "%*sk: 1\n", i, "");
	load_fails(yaml, "nested deeper than 32 levels");
}
END_TEST

START_TEST(test_deep_unclosed_flow_rejected)
{
	char	*yaml = malloc(CONF_FILE_MAX + 1);

	ck_assert_ptr_nonnull(yaml);
	memset(yaml, '[', CONF_FILE_MAX);
	yaml[CONF_FILE_MAX] = '\0';
	load_fails(yaml, "nested deeper than 32 levels");
	free(yaml);
}
END_TEST

START_TEST(test_node_cap)
{
	struct conf_doc	*doc;
	char		*yaml;

	/* The sequence itself is a node. */
	yaml = flow_list(CONF_NODES_MAX - 1);
	doc = load_ok(yaml);
	ck_assert_int_eq(json_array_size(conf_doc_root(doc)),
	    CONF_NODES_MAX - 1);
	conf_doc_free(doc);
	free(yaml);
	yaml = flow_list(CONF_NODES_MAX);
	load_fails(yaml, "more than 100000 nodes");
	free(yaml);
}
END_TEST

START_TEST(test_size_cap)
{
	char	*yaml = malloc(CONF_FILE_MAX + 1);

	ck_assert_ptr_nonnull(yaml);
	memset(yaml, '#', CONF_FILE_MAX + 1);
	ck_assert_ptr_null(conf_doc_load_buf("t.yaml", yaml, CONF_FILE_MAX + 1,
	    err, sizeof(err)));
	ck_assert_str_eq(err, "t.yaml: file too large (1048577 bytes, limit "
	    "1048576)");
	/* Exactly the cap is fine. */
	{
		struct conf_doc	*doc = conf_doc_load_buf("t.yaml", yaml,
		    CONF_FILE_MAX, err, sizeof(err));

		ck_assert_msg(doc != NULL, "%s", err);
		conf_doc_free(doc);
	}
	free(yaml);
}
END_TEST

START_TEST(test_error_truncated_to_buffer)
{
	char	 small[12];

	ck_assert_ptr_null(conf_doc_load_buf("t.yaml", "a: &x 1\n", 8, small,
	    sizeof(small)));
	ck_assert_str_eq(small, "t.yaml:1:4:");
	/* No buffer at all is allowed. */
	ck_assert_ptr_null(conf_doc_load_buf("t.yaml", "a: &x 1\n", 8, NULL,
	    0));
}
END_TEST

START_TEST(test_long_key_escaped_and_cut_in_message)
{
	char	 yaml[420];

	memset(yaml, 'k', 200);
	memcpy(yaml + 200, ": 1\n", 4);
	memcpy(yaml + 204, yaml, 204);
	yaml[408] = '\0';
	load_fails(yaml, "duplicate key 'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
	    "kkkkkkkkkk...' (first at line 1, again at line 2)");
	load_fails("\"\\e[31m\": 1\n\"\\e[31m\": 2\n",
	    "duplicate key '\\x1b[31m'");
}
END_TEST

static Suite *
conf_suite(void)
{
	Suite	*s = suite_create("conf");
	TCase	*tc;

	tc = tcase_create("load");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_load_mapping_of_each_type);
	tcase_add_test(tc, test_empty_file_is_empty_object);
	tcase_add_test(tc, test_sequence_root_allowed);
	tcase_add_test(tc, test_sha256_of_file_bytes);
	tcase_add_test(tc, test_null_forms);
	tcase_add_test(tc, test_bool_forms);
	tcase_add_test(tc, test_integer_forms);
	tcase_add_test(tc, test_integer_out_of_range);
	tcase_add_test(tc, test_octal_mode);
	tcase_add_test(tc, test_octal_with_digit_8_or_9_rejected);
	tcase_add_test(tc, test_real_forms);
	tcase_add_test(tc, test_real_out_of_range_rejected);
	tcase_add_test(tc, test_near_numbers_are_strings);
	tcase_add_test(tc, test_quoted_number_is_string);
	tcase_add_test(tc, test_str_tag_forces_string);
	tcase_add_test(tc, test_core_tags_honoured);
	tcase_add_test(tc, test_core_tag_mismatch_rejected);
	tcase_add_test(tc, test_custom_tags_rejected);
	tcase_add_test(tc, test_load_rejects_alias);
	tcase_add_test(tc, test_load_rejects_anchor);
	tcase_add_test(tc, test_duplicate_key_rejected);
	tcase_add_test(tc, test_scalar_keys_are_strings);
	tcase_add_test(tc, test_collection_key_rejected);
	tcase_add_test(tc, test_empty_key_rejected);
	tcase_add_test(tc, test_multiple_documents_rejected);
	tcase_add_test(tc, test_explicit_single_document_loads);
	tcase_add_test(tc, test_invalid_utf8_rejected);
	tcase_add_test(tc, test_invalid_utf8_position_after_line_breaks);
	tcase_add_test(tc, test_load_without_name_or_error_buffer);
	tcase_add_test(tc, test_utf16_is_not_guessed);
	tcase_add_test(tc, test_utf8_bom_and_text_accepted);
	tcase_add_test(tc, test_control_character_rejected);
	tcase_add_test(tc, test_nul_byte_rejected);
	tcase_add_test(tc, test_nul_escape_rejected);
	tcase_add_test(tc, test_escapes_decoded);
	tcase_add_test(tc, test_syntax_error_names_line_and_column);
	tcase_add_test(tc, test_depth_cap);
	tcase_add_test(tc, test_depth_cap_block_style);
	tcase_add_test(tc, test_deep_unclosed_flow_rejected);
	tcase_add_test(tc, test_node_cap);
	tcase_add_test(tc, test_size_cap);
	tcase_add_test(tc, test_error_truncated_to_buffer);
	tcase_add_test(tc, test_long_key_escaped_and_cut_in_message);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(conf_suite)
