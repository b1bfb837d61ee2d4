/*
 * protocol/era.c: what a 2026-07-28 request's _meta may say (version,
 * capabilities, log level, clientInfo) and the W3C Trace Context kept
 * from it, valid or ignored, never half-parsed.
 */
#include "testutil.h"
#include "protocol/era.h"
#include "protocol/mcp.h"

#define TP	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

static const char *const good_tp[] = {
	TP,
	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
	/* A later version may carry more after a dash. */
	"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
	"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09",
};

static const char *const bad_tp[] = {
	"",
	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
	"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
	"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
	"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
	"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
	"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
	"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
	"0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0z",
};

static const char *const good_ts[] = {
	"congo=t61rcWkgMzE",
	"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
	" rojo=1 ,\tcongo=2\t",
	"k=1,,b=1, ,",		/* empty members are allowed */
	"tenant@vendor=x",
	"k=with space",
	"",
};

static const char *const bad_ts[] = {
	"novalue",
	"Upper=1",
	"k=",
	"k=del\x7f",
	"k=a=b",
	"@vendor=x",
	"tenant@=x",
	"a@b@c=x",
	"k=\x01",
	"k=caf\xc3\xa9",
};

START_TEST(test_traceparent)
{
	size_t	 i;

	for (i = 0; i < nitems(good_tp); i++)
		ck_assert_msg(era_traceparent_ok(good_tp[i]), "%s", good_tp[i]);
	for (i = 0; i < nitems(bad_tp); i++)
		ck_assert_msg(!era_traceparent_ok(bad_tp[i]), "%s", bad_tp[i]);
}
END_TEST

START_TEST(test_tracestate)
{
	char	 many[1024];
	size_t	 i, off = 0;

	for (i = 0; i < nitems(good_ts); i++)
		ck_assert_msg(era_tracestate_ok(good_ts[i]), "%s", good_ts[i]);
	for (i = 0; i < nitems(bad_ts); i++)
		ck_assert_msg(!era_tracestate_ok(bad_ts[i]), "%s", bad_ts[i]);
	/* 32 members are allowed, 33 are not. */
	for (i = 0; i < 33; i++)
		off += (size_t)snprintf(many + off, sizeof(many) - off,
		    "%sk%zu=v", i ? "," : "", i);
	ck_assert(!era_tracestate_ok(many));
	*strrchr(many, ',') = '\0';
	ck_assert(era_tracestate_ok(many));
	/* Longer than we keep: refused whole, never cut. */
	memset(many, 'v', sizeof(many) - 1);
	memcpy(many, "k=", 2);
	many[TOOL_TRACESTATE_MAX] = '\0';
	ck_assert(!era_tracestate_ok(many));
}
END_TEST

static json_t *
params_with(json_t *meta)
{
	return json_pack("{s:o}", "_meta", meta);
}

START_TEST(test_parse)
{
	struct tool_client	 base = { .transport = "http" };
	struct era_req		 r;
	char			 why[256];
	json_t			*p;
	int			 code;

	/* No version: an initialize-based request, its trace kept. */
	p = params_with(json_pack("{s:s}", "traceparent", TP));
	ck_assert_int_eq(era_parse(p, &base, &r, &code, why, sizeof(why)), 0);
	ck_assert_int_eq(r.modern, 0);
	ck_assert_str_eq(r.traceparent, TP);
	json_decref(p);

	p = params_with(json_pack("{s:s, s:{}, s:{s:s, s:s}, s:s, s:s, s:s}",
	    MCP_META_VERSION, MCP_MODERN, MCP_META_CAPS, MCP_META_CLIENT,
	    "name", "agent\x01", "version", "2", MCP_META_LEVEL, "warning",
	    "traceparent", TP, "tracestate", "Bad=1"));
	ck_assert_int_eq(era_parse(p, &base, &r, &code, why, sizeof(why)), 1);
	ck_assert_int_eq(r.modern, 1);
	ck_assert_int_eq(r.log_level, 3);
	ck_assert_str_eq(r.client.transport, "http");
	ck_assert_str_eq(r.client.name, "agent?");
	ck_assert_str_eq(r.client.version, "2");
	ck_assert_str_eq(r.traceparent, TP);
	ck_assert_str_eq(r.tracestate, "");
	json_decref(p);

	/* W3C: no tracestate without a valid traceparent. */
	p = params_with(json_pack("{s:s, s:{}, s:s, s:s}", MCP_META_VERSION,
	    MCP_MODERN, MCP_META_CAPS, "traceparent", "garbage", "tracestate",
	    "k=v"));
	ck_assert_int_eq(era_parse(p, NULL, &r, &code, why, sizeof(why)), 1);
	ck_assert_int_eq(r.log_level, -1);
	ck_assert_str_eq(r.traceparent, "");
	ck_assert_str_eq(r.tracestate, "");
	json_decref(p);

	p = params_with(json_pack("{s:s, s:{}}", MCP_META_VERSION,
	    "2025-11-25", MCP_META_CAPS));
	ck_assert_int_eq(era_parse(p, NULL, &r, &code, why, sizeof(why)), -1);
	ck_assert_int_eq(code, MCP_UNSUPPORTED_VERSION);
	json_decref(p);

	p = params_with(json_pack("{s:s}", MCP_META_VERSION, MCP_MODERN));
	ck_assert_int_eq(era_parse(p, NULL, &r, &code, why, sizeof(why)), -1);
	ck_assert_int_eq(code, RPC_INVALID_PARAMS);
	ck_assert_ptr_nonnull(strstr(why, MCP_META_CAPS));
	json_decref(p);

	p = params_with(json_pack("{s:i, s:{}}", MCP_META_VERSION, 7,
	    MCP_META_CAPS));
	ck_assert_int_eq(era_parse(p, NULL, &r, &code, why, sizeof(why)), -1);
	ck_assert_int_eq(code, RPC_INVALID_PARAMS);
	json_decref(p);

	p = params_with(json_pack("{s:s, s:{}, s:s}", MCP_META_VERSION,
	    MCP_MODERN, MCP_META_CAPS, MCP_META_LEVEL, "loud"));
	ck_assert_int_eq(era_parse(p, NULL, &r, &code, why, sizeof(why)), -1);
	json_decref(p);
}
END_TEST

START_TEST(test_result_shape)
{
	json_t	*r, *d;

	r = era_result(json_pack("{s:[], s:{s:s}}", "tools", "_meta", "x.y/z",
	    "kept"), ERA_PUBLIC);
	ck_assert_str_eq(json_string_value(json_object_get(r, "resultType")),
	    "complete");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r,
	    "_meta"), "x.y/z")), "kept");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_object_get(r, "_meta"), MCP_META_SERVER), "name")),
	    SERVER_NAME);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "ttlMs")),
	    ERA_TTL_MS);
	json_decref(r);
	r = era_result(json_object(), ERA_PRIVATE);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "ttlMs")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(r, "cacheScope")),
	    "private");
	json_decref(r);
	r = era_result(json_object(), ERA_NOCACHE);
	ck_assert_ptr_null(json_object_get(r, "ttlMs"));
	json_decref(r);
	d = era_discover("hi");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(d,
	    "supportedVersions"), 0)), MCP_MODERN);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(d,
	    "supportedVersions"), 1)), MCP_LATEST);
	json_decref(d);
}
END_TEST

static Suite *
era_suite(void)
{
	Suite	*s = suite_create("era");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_traceparent);
	tcase_add_test(tc, test_tracestate);
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_result_shape);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(era_suite)
