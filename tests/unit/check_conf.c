/*
 * Tests for lib/conf_load.c and lib/conf_check.c: YAML policy loading (scalar rules, limits, refused
 * constructs, error positions) and the validation context's getters.
 * Inputs are literal YAML strings; files are made under a mkdtemp folder.
 */
#include <sys/stat.h>

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "testutil.h"

static char	 err[CONF_ERROR_LEN];

static struct conf_doc *
load(const char *yaml)
{
	return conf_doc_load_buf("t.yaml", yaml, strlen(yaml), err,
	    sizeof(err));
}

/* Loads yaml, which must succeed; the caller frees. */
static struct conf_doc *
load_ok(const char *yaml)
{
	struct conf_doc	*doc = load(yaml);

	ck_assert_msg(doc != NULL, "load of \"%s\" failed: %s", yaml, err);
	return doc;
}

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

static char *
flow_list(size_t n)
{
	char	*yaml = malloc(2 * n + 3), *p = yaml;
	size_t	 i;

	ck_assert_ptr_nonnull(yaml);
	*p++ = '[';
	for (i = 0; i < n; i++) {
		*p++ = '0';
		*p++ = ',';
	}
	p[-1] = ']';
	*p = '\0';
	return yaml;
}

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

/* ---------------------------------------------------------------- files */

static char	 tmpdir[64];

static const char *
tmp_path(const char *name)
{
	static char	 path[128];

	if (tmpdir[0] == '\0') {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_conf.XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	}
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static void
tmp_cleanup(const char *path)
{
	unlink(path);
	rmdir(tmpdir);
	tmpdir[0] = '\0';
}

static void
write_file(const char *path, const char *s)
{
	FILE	*f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(s, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_load_file_reads_policy)
{
	const char	*path = tmp_path("p.yaml");
	struct conf_doc	*doc;

	write_file(path, "a: 1\n");
	doc = conf_doc_load_file(path, err, sizeof(err));
	ck_assert_msg(doc != NULL, "%s", err);
	ck_assert_str_eq(conf_doc_name(doc), path);
	ck_assert_str_eq(conf_doc_sha256(doc), "37b128c59f1f5097f73f82691cb5"
	    "19f1f568667faab5ced1b4ab979d36837eae");
	conf_doc_free(doc);
	tmp_cleanup(path);
}
END_TEST

START_TEST(test_load_file_error_names_file)
{
	const char	*path = tmp_path("bad.yaml");
	char		 want[256];

	write_file(path, "a: 1\na: 2\n");
	ck_assert_ptr_null(conf_doc_load_file(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s:2:1: duplicate key 'a'", path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	tmp_cleanup(path);
}
END_TEST

START_TEST(test_load_file_missing)
{
	ck_assert_ptr_null(conf_doc_load_file("/nonexistent/p.yaml", err,
	    sizeof(err)));
	ck_assert_str_eq(err, "/nonexistent/p.yaml: No such file or directory");
}
END_TEST

START_TEST(test_load_file_not_regular)
{
	const char	*fifo = tmp_path("fifo");

	ck_assert_ptr_null(conf_doc_load_file("/tmp", err, sizeof(err)));
	ck_assert_str_eq(err, "/tmp: not a regular file");
	ck_assert_ptr_null(conf_doc_load_file("/dev/null", err, sizeof(err)));
	ck_assert_str_eq(err, "/dev/null: not a regular file");
	/* A FIFO with no writer must not block the loader. */
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_ptr_null(conf_doc_load_file(fifo, err, sizeof(err)));
	ck_assert_msg(strstr(err, "not a regular file") != NULL, "%s", err);
	tmp_cleanup(fifo);
}
END_TEST

START_TEST(test_load_file_too_large)
{
	const char	*path = tmp_path("big.yaml");
	int		 fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, CONF_FILE_MAX + 1), 0);
	close(fd);
	ck_assert_ptr_null(conf_doc_load_file(path, err, sizeof(err)));
	ck_assert_msg(strstr(err, "file too large") != NULL, "%s", err);
	tmp_cleanup(path);
}
END_TEST

/* ---------------------------------------------------------------- positions */

START_TEST(test_where_reports_positions)
{
	struct conf_doc	*doc = load_ok("name: web\nlimits:\n  mem: 64M\n"
	    "  cpu: [1, \"two\"]\nflag: true\n");
	json_t		*root = conf_doc_root(doc), *limits, *cpu;
	unsigned	 line, column;

	ck_assert_int_eq(conf_doc_where(doc, root, &line, &column), 0);
	ck_assert_uint_eq(line, 1);
	ck_assert_uint_eq(column, 1);
	ck_assert_int_eq(conf_doc_where(doc, json_object_get(root, "name"),
	    &line, &column), 0);
	ck_assert_uint_eq(line, 1);
	ck_assert_uint_eq(column, 7);
	limits = json_object_get(root, "limits");
	ck_assert_int_eq(conf_doc_where(doc, limits, &line, &column), 0);
	ck_assert_uint_eq(line, 3);
	ck_assert_uint_eq(column, 3);
	cpu = json_object_get(limits, "cpu");
	ck_assert_int_eq(conf_doc_where(doc, cpu, &line, &column), 0);
	ck_assert_uint_eq(line, 4);
	ck_assert_uint_eq(column, 8);
	ck_assert_int_eq(conf_doc_where(doc, json_array_get(cpu, 1), &line,
	    &column), 0);
	ck_assert_uint_eq(line, 4);
	ck_assert_uint_eq(column, 12);
	/* Shared singletons and foreign nodes have no position here. */
	ck_assert_int_eq(conf_doc_where(doc, json_object_get(root, "flag"),
	    &line, &column), -1);
	ck_assert_int_eq(conf_doc_where(doc, json_true(), NULL, NULL), -1);
	{
		json_t	*other = json_string("x");

		ck_assert_int_eq(conf_doc_where(doc, other, NULL, NULL), -1);
		json_decref(other);
	}
	ck_assert_int_eq(conf_doc_where(doc, NULL, NULL, NULL), -1);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_where_many_nodes)
{
	struct conf_doc	*doc;
	json_t		*root;
	char		*yaml;
	unsigned	 line, column;
	size_t		 i;

	/* Enough nodes to grow the position table several times. */
	yaml = flow_list(5000);
	doc = load_ok(yaml);
	root = conf_doc_root(doc);
	for (i = 0; i < 5000; i++) {
		ck_assert_int_eq(conf_doc_where(doc, json_array_get(root, i),
		    &line, &column), 0);
		ck_assert_uint_eq(column, 2 + 2 * i);
	}
	conf_doc_free(doc);
	free(yaml);
}
END_TEST

/* ------------------------------------------------------------- validation */

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

	tc = tcase_create("file");
	tcase_add_test(tc, test_load_file_reads_policy);
	tcase_add_test(tc, test_load_file_error_names_file);
	tcase_add_test(tc, test_load_file_missing);
	tcase_add_test(tc, test_load_file_not_regular);
	tcase_add_test(tc, test_load_file_too_large);
	suite_add_tcase(s, tc);

	tc = tcase_create("where");
	tcase_add_test(tc, test_where_reports_positions);
	tcase_add_test(tc, test_where_many_nodes);
	suite_add_tcase(s, tc);

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

CHECK_MAIN(conf_suite)
