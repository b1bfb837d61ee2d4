/*
 * Tests for cli/export*.c: each case in tests/unit/data/export is one audit
 * record (NAME.in.json) beside its expected ECS, OCSF and HEC documents;
 * the rest are records that must not map, and the timestamp parser's edges.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "export.h"
#include "testutil.h"

/* Relative to the repository root, where the tests run. */
#define DATA_DIR	"tests/unit/data/export"
#define HOSTNAME	"sandbox-01.example.net"
#define PATH_MAX_LEN	512

static const char *const cases[] = {
	"code_execution_allow",
	"code_execution_packages",
	"code_execution_exit1",
	"code_execution_deny",
	"egress_denied",
	"egress_flow",
	"egress_flow_summary",
	"dns_query",
	"dns_query_deny",
	"dns_tunnel_suspected",
	"session_created",
	"call_refused",
	"checkpoint",
	"writer_refused",
	"daemon_start",
	"policy_load_failed",
	"audit_error",
	"execution_started",
	"execution_lost",
	"egress_attached",
	"call_refused_token",
	"session_closed",
	"policy_load_ok",
	"daemon_stop",
	"session_expired",
	"egress_detached",
	"egress_refused",
	"cleanup",
	"operator_note",
	"chain_start",
	"rotate",
	"recovery",
	"event_rejected",
	"audit_resumed",
	"unknown_event",
	"session_evicted",
	"artifact_delivered",
	"artifact_refused",
	"code_execution_http",
	"code_execution_traced",
	"code_execution_task",
	"code_execution_truncated",
	"fleet_degraded",
	"fleet_restored",
	"egress_http_allow",
	"egress_http_deny",
};

static const struct {
	const char		*name;
	enum export_format	 format;
} formats[] = {
	{ "ecs", EXPORT_ECS },
	{ "ocsf", EXPORT_OCSF },
	{ "hec", EXPORT_HEC },
};

#define HEX16(c)	c c c c c c c c c c c c c c c c
#define HEX64(c)	HEX16(#c) HEX16(#c) HEX16(#c) HEX16(#c)

#define NCASES		(sizeof(cases) / sizeof(cases[0]))
#define NFORMATS	(sizeof(formats) / sizeof(formats[0]))

static json_t *
load(const char *name, const char *suffix)
{
	char		 path[PATH_MAX_LEN];
	json_error_t	 err;
	json_t		*j;
	int		 n;

	n = snprintf(path, sizeof(path), "%s/%s.%s.json", DATA_DIR, name,
	    suffix);
	ck_assert_msg(n > 0 && (size_t)n < sizeof(path), "path too long");
	j = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	ck_assert_msg(j != NULL, "%s:%d: %s", path, err.line, err.text);
	return j;
}

/* A minimal valid record to break one field of at a time. */
static json_t *
good_record(void)
{
	json_t	*r;

	r = json_pack("{s:i, s:s, s:s, s:s, s:{s:i, s:i}, s:s, s:s, s:s, s:s}",
	    "seq", 7, "prev", HEX64(0), "ts", "2026-11-30T02:44:26.123Z",
	    "event", "dns_query", "peer", "uid", 998, "pid", 4242,
	    "session_id", "s-1", "name", "example.org", "qtype", "A",
	    "hash", HEX64(1));
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(json_object_set_new(r, "decision",
	    json_string("allow")), 0);
	return r;
}

/* No format may map r. */
static void
assert_unmappable(json_t *r, const char *what)
{
	json_t	*out;
	size_t	 f;

	for (f = 0; f < NFORMATS; f++) {
		out = export_record(formats[f].format, r, HOSTNAME);
		ck_assert_msg(out == NULL, "%s: %s mapped a record with %s",
		    formats[f].name, what, what);
	}
}

START_TEST(test_export_matches_fixture)
{
	const char	*name = cases[_i / NFORMATS];
	json_t		*in, *before, *want, *got;
	char		*gs, *ws;
	size_t		 f = _i % NFORMATS;

	in = load(name, "in");
	before = json_deep_copy(in);
	want = load(name, formats[f].name);
	got = export_record(formats[f].format, in, HOSTNAME);
	ck_assert_msg(got != NULL, "%s: %s mapping failed", name,
	    formats[f].name);
	if (!json_equal(got, want)) {
		gs = json_dumps(got, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		ws = json_dumps(want, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		ck_abort_msg("%s.%s: got\n%s\nwant\n%s", name, formats[f].name,
		    gs, ws);
	}
	ck_assert_msg(json_equal(in, before), "%s: export changed the record",
	    name);
	json_decref(got);
	json_decref(want);
	json_decref(before);
	json_decref(in);
}
END_TEST

START_TEST(test_format_parse_accepts_known_names)
{
	enum export_format	 f = EXPORT_HEC;

	ck_assert_int_eq(export_format_parse("ecs", &f), 0);
	ck_assert_int_eq(f, EXPORT_ECS);
	ck_assert_int_eq(export_format_parse("ocsf", &f), 0);
	ck_assert_int_eq(f, EXPORT_OCSF);
	ck_assert_int_eq(export_format_parse("hec", &f), 0);
	ck_assert_int_eq(f, EXPORT_HEC);
}
END_TEST

START_TEST(test_format_parse_rejects_other_names)
{
	static const char *const bad[] = {
		"xml", "", "ECS", "ecs ", "oc", "hecx", "cef",
	};
	enum export_format	 f = EXPORT_OCSF;
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(export_format_parse(bad[i], &f) == -1,
		    "\"%s\" accepted", bad[i]);
	ck_assert_int_eq(export_format_parse(NULL, &f), -1);
	ck_assert_int_eq(f, EXPORT_OCSF);
}
END_TEST

START_TEST(test_ts_ms_known_instants)
{
	static const struct {
		const char	*ts;
		int64_t		 ms;
	} good[] = {
		{ "1970-01-01T00:00:00.000Z", 0 },
		{ "1969-12-31T23:59:59.999Z", -1 },
		{ "2000-02-29T12:00:00.500Z", 951825600500LL },
		{ "2026-11-30T02:44:26.123Z", 1796006666123LL },
		{ "2100-12-31T23:59:59.999Z", 4133980799999LL },
	};
	int64_t	 ms;
	size_t	 i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(export_ts_ms(good[i].ts, &ms) == 0, "%s rejected",
		    good[i].ts);
		ck_assert_msg(ms == good[i].ms, "%s: %lld, want %lld",
		    good[i].ts, (long long)ms, (long long)good[i].ms);
	}
}
END_TEST

START_TEST(test_ts_ms_rejects_malformed)
{
	static const char *const bad[] = {
		"",
		"2026-11-30T02:44:26Z",			/* no milliseconds */
		"2026-11-30T02:44:26.12Z",		/* 23 bytes */
		"2026-11-30T02:44:26.1234Z",		/* 25 bytes */
		"2026-11-30T02:44:26.123+00:00",	/* not UTC 'Z' */
		"2026-11-30T02:44:26.123z",
		"2026-11-30 02:44:26.123Z",
		"2026/11/30T02:44:26.123Z",
		"2026-11-30T02:44:26,123Z",
		"2026-13-30T02:44:26.123Z",		/* month 13 */
		"2026-00-30T02:44:26.123Z",
		"2026-11-31T02:44:26.123Z",		/* 31 November */
		"2026-11-00T02:44:26.123Z",
		"2026-02-29T02:44:26.123Z",		/* not a leap year */
		"2100-02-29T02:44:26.123Z",		/* nor is 2100 */
		"2026-11-30T24:00:00.000Z",
		"2026-11-30T02:60:26.123Z",
		"2026-11-30T02:44:60.123Z",		/* no leap seconds */
		"2026-11-30T02:44:2a.123Z",
		"+026-11-30T02:44:26.123Z",
		" 2026-11-30T02:44:26.123Z",
		"2026-11-30T02:44:26.123Z ",
	};
	int64_t	 ms = 42;
	size_t	 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(export_ts_ms(bad[i], &ms) == -1,
		    "\"%s\" accepted", bad[i]);
	ck_assert_int_eq(export_ts_ms(NULL, &ms), -1);
	ck_assert_int_eq(ms, 42);
}
END_TEST

START_TEST(test_record_with_malformed_ts_is_not_mapped)
{
	json_t	*r = good_record();

	json_object_set_new(r, "ts", json_string("2026-11-31T02:44:26.123Z"));
	assert_unmappable(r, "31 November");
	json_object_set_new(r, "ts", json_string("2026-11-30T02:44:26.123"));
	assert_unmappable(r, "a ts without Z");
	json_object_set_new(r, "ts", json_string("2026-11-30T02:44:26.1230Z"));
	assert_unmappable(r, "a 25-byte ts");
	json_object_set_new(r, "ts", json_integer(1796006666123LL));
	assert_unmappable(r, "a numeric ts");
	json_object_del(r, "ts");
	assert_unmappable(r, "no ts");
	json_decref(r);
}
END_TEST

START_TEST(test_record_without_valid_event_is_not_mapped)
{
	json_t	*r = good_record();

	json_object_del(r, "event");
	assert_unmappable(r, "no event");
	json_object_set_new(r, "event", json_null());
	assert_unmappable(r, "a null event");
	json_object_set_new(r, "event", json_string(""));
	assert_unmappable(r, "an empty event");
	json_object_set_new(r, "event", json_string("Code-Exec"));
	assert_unmappable(r, "an event name outside [a-z0-9_]");
	json_decref(r);
}
END_TEST

START_TEST(test_record_without_chain_fields_is_not_mapped)
{
	json_t	*r = good_record();

	json_object_set_new(r, "seq", json_integer(0));
	assert_unmappable(r, "seq 0");
	json_object_set_new(r, "seq", json_string("7"));
	assert_unmappable(r, "a string seq");
	json_object_set_new(r, "seq", json_integer(7));
	json_object_set_new(r, "hash", json_string("abc"));
	assert_unmappable(r, "a short hash");
	json_object_set_new(r, "hash", json_string(HEX64(A)));
	assert_unmappable(r, "an uppercase hash");
	json_object_del(r, "hash");
	assert_unmappable(r, "no hash");
	json_decref(r);

	r = json_pack("[s]", "not an object");
	assert_unmappable(r, "an array");
	json_decref(r);
	assert_unmappable(NULL, "NULL");
}
END_TEST

START_TEST(test_wrongly_typed_fields_are_only_copied)
{
	json_t	*r = good_record(), *ecs, *ocsf;

	json_object_set_new(r, "event", json_string("egress_denied"));
	json_object_set_new(r, "dst_ip", json_string("not-an-address"));
	json_object_set_new(r, "dst_port", json_integer(70000));
	json_object_set_new(r, "principal", json_integer(5));
	json_object_set_new(r, "protocol",
	    json_string("a-protocol-name-too-long-to-lowercase"));
	ecs = export_record(EXPORT_ECS, r, HOSTNAME);
	ck_assert_ptr_nonnull(ecs);
	ck_assert_ptr_null(json_object_get(ecs, "destination"));
	ck_assert_ptr_null(json_object_get(ecs, "user"));
	ck_assert_ptr_null(json_object_get(ecs, "network"));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(ecs,
	    "stockade"), "dst_ip")), "not-an-address");
	ocsf = export_record(EXPORT_OCSF, r, HOSTNAME);
	ck_assert_ptr_nonnull(ocsf);
	ck_assert_ptr_null(json_object_get(ocsf, "dst_endpoint"));
	ck_assert_ptr_null(json_object_get(json_object_get(ocsf, "actor"),
	    "user"));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
	    ocsf, "unmapped"), "dst_port")), 70000);
	json_decref(ocsf);
	json_decref(ecs);
	json_decref(r);
}
END_TEST

START_TEST(test_unknown_event_maps_to_generic_classes)
{
	json_t	*r = good_record(), *ecs, *ocsf;

	json_object_set_new(r, "event", json_string("future_event"));
	ecs = export_record(EXPORT_ECS, r, HOSTNAME);
	ocsf = export_record(EXPORT_OCSF, r, HOSTNAME);
	ck_assert_ptr_nonnull(ecs);
	ck_assert_ptr_nonnull(ocsf);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(
	    json_object_get(ecs, "event"), "category"), 0)), "host");
	ck_assert_str_eq(json_string_value(json_object_get(ecs, "message")),
	    "audit event future_event");
	ck_assert_int_eq(json_integer_value(json_object_get(ocsf, "class_uid")),
	    0);
	ck_assert_int_eq(json_integer_value(json_object_get(ocsf, "type_uid")),
	    99);
	json_decref(ocsf);
	json_decref(ecs);
	json_decref(r);
}
END_TEST

START_TEST(test_long_message_is_cut_on_a_character)
{
	json_t	*r = good_record(), *ecs;
	char	 note[2001];
	size_t	 i, len;

	/* "é" is two bytes: 1000 cannot fit, and no cut may split one. */
	for (i = 0; i < 1000; i++)
		memcpy(note + 2 * i, "\xc3\xa9", 2);
	note[2000] = '\0';
	json_object_set_new(r, "event", json_string("operator_note"));
	json_object_set_new(r, "principal", json_string("x"));
	json_object_set_new(r, "message", json_string(note));
	ecs = export_record(EXPORT_ECS, r, HOSTNAME);
	ck_assert_ptr_nonnull(ecs);
	len = json_string_length(json_object_get(ecs, "message"));
	ck_assert_uint_gt(len, 400);
	ck_assert_uint_lt(len, 512);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(ecs,
	    "stockade"), "message")), note);
	json_decref(ecs);
	json_decref(r);
}
END_TEST

START_TEST(test_no_hostname_leaves_host_fields_out)
{
	json_t	*r = good_record(), *ecs, *ocsf, *hec;

	ecs = export_record(EXPORT_ECS, r, NULL);
	ocsf = export_record(EXPORT_OCSF, r, NULL);
	hec = export_record(EXPORT_HEC, r, NULL);
	ck_assert_ptr_nonnull(ecs);
	ck_assert_ptr_nonnull(ocsf);
	ck_assert_ptr_nonnull(hec);
	ck_assert_ptr_null(json_object_get(ecs, "host"));
	ck_assert_ptr_null(json_object_get(ocsf, "src_endpoint"));
	ck_assert_ptr_null(json_object_get(hec, "host"));
	json_decref(hec);
	json_decref(ocsf);
	json_decref(ecs);
	json_decref(r);
}
END_TEST

/*
 * Every writer field of every fixture, replaced by each JSON type or
 * removed: the framing is intact, so each format must still map the record
 * (the sanitizers watch for the rest).
 */
START_TEST(test_any_field_of_any_type_still_maps)
{
	const char	*name = cases[_i], *key;
	json_t		*in, *r, *out, *v;
	void		*it;
	size_t		 f, k, nkeys, t;
	json_t		*repl[] = {
		json_null(), json_true(), json_false(), json_integer(-1),
		json_integer(INT64_MAX), json_real(1.5), json_string(""),
		json_string("x"), json_array(), json_object(), NULL,
	};

	in = load(name, "in");
	nkeys = json_object_size(in);
	for (k = 0; k < nkeys; k++) {
		it = json_object_iter(in);
		for (t = 0; t < k; t++)
			it = json_object_iter_next(in, it);
		key = json_object_iter_key(it);
		if (strcmp(key, "seq") == 0 || strcmp(key, "ts") == 0 ||
		    strcmp(key, "event") == 0 || strcmp(key, "hash") == 0)
			continue;
		for (t = 0; t < sizeof(repl) / sizeof(repl[0]); t++) {
			r = json_deep_copy(in);
			if (repl[t] == NULL)
				json_object_del(r, key);
			else
				json_object_set(r, key, repl[t]);
			for (f = 0; f < NFORMATS; f++) {
				out = export_record(formats[f].format, r,
				    HOSTNAME);
				ck_assert_msg(out != NULL, "%s: %s with %s "
				    "replaced (%zu) not mapped", name,
				    formats[f].name, key, t);
				json_decref(out);
			}
			json_decref(r);
		}
	}
	for (t = 0; t < sizeof(repl) / sizeof(repl[0]); t++)
		if ((v = repl[t]) != NULL)
			json_decref(v);
	json_decref(in);
}
END_TEST

static Suite *
export_suite(void)
{
	Suite	*s = suite_create("export");
	TCase	*tc;

	tc = tcase_create("fixtures");
	tcase_add_loop_test(tc, test_export_matches_fixture, 0,
	    (int)(NCASES * NFORMATS));
	suite_add_tcase(s, tc);

	tc = tcase_create("format");
	tcase_add_test(tc, test_format_parse_accepts_known_names);
	tcase_add_test(tc, test_format_parse_rejects_other_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("ts");
	tcase_add_test(tc, test_ts_ms_known_instants);
	tcase_add_test(tc, test_ts_ms_rejects_malformed);
	suite_add_tcase(s, tc);

	tc = tcase_create("records");
	tcase_add_test(tc, test_record_with_malformed_ts_is_not_mapped);
	tcase_add_test(tc, test_record_without_valid_event_is_not_mapped);
	tcase_add_test(tc, test_record_without_chain_fields_is_not_mapped);
	tcase_add_test(tc, test_wrongly_typed_fields_are_only_copied);
	tcase_add_test(tc, test_unknown_event_maps_to_generic_classes);
	tcase_add_test(tc, test_long_message_is_cut_on_a_character);
	tcase_add_test(tc, test_no_hostname_leaves_host_fields_out);
	tcase_add_loop_test(tc, test_any_field_of_any_type_still_maps, 0,
	    (int)NCASES);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(export_suite)
