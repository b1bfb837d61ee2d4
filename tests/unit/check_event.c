/*
 * The event vocabulary: the required core of code_execution, types only
 * the daemon may write, reserved keys, and type errors naming the field.
 */
#include "testutil.h"
#include "event.h"

static json_t *
code_execution(void)
{
	return json_loads("{\"event\":\"code_execution\",\"principal\":"
	    "\"user:alice@example.com\",\"session_id\":\"sess_7f3a91\","
	    "\"code_hash\":\"sha256:9c1f000000000000000000000000000000000000"
	    "000000000000000000000000\",\"code_size\":2048,\"sandbox\":"
	    "{\"runtime\":\"gvisor\",\"image\":\"py-sandbox:3.12\"},\"limits\":"
	    "{\"cpu\":1.0,\"mem_mb\":512,\"timeout_ms\":10000},\"network\":"
	    "\"none\",\"exit_code\":0,\"duration_ms\":1832,\"stdout_bytes\":"
	    "4096,\"artifacts\":[\"plot.png\"],\"decision\":\"allow\"}", 0, NULL);
}

static void
assert_invalid(json_t *ev, const char *needle)
{
	char	 err[256] = "";

	ck_assert_int_eq(event_validate(ev, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, needle) != NULL, "\"%s\" lacks \"%s\"", err,
	    needle);
	json_decref(ev);
}

START_TEST(test_issue_sample_is_valid)
{
	char	 err[256];
	json_t	*ev = code_execution();

	ck_assert_msg(event_validate(ev, err, sizeof(err)) == 0, "%s", err);
	json_decref(ev);
}
END_TEST

static const char *const core_fields[] = {
	"principal", "session_id", "code_hash", "code_size", "sandbox",
	"limits", "network", "exit_code", "duration_ms", "stdout_bytes",
	"artifacts", "decision",
};

START_TEST(test_each_core_field_required)
{
	json_t	*ev = code_execution();

	json_object_del(ev, core_fields[_i]);
	assert_invalid(ev, core_fields[_i]);
}
END_TEST

START_TEST(test_core_field_types_checked)
{
	json_t	*ev = code_execution();

	json_object_set_new(ev, core_fields[_i], json_true());
	assert_invalid(ev, core_fields[_i]);
}
END_TEST

START_TEST(test_bad_code_hash_and_decision)
{
	json_t	*ev = code_execution();

	json_object_set_new(ev, "code_hash", json_string("sha256:XYZ"));
	assert_invalid(ev, "code_hash");
	ev = code_execution();
	json_object_set_new(ev, "decision", json_string("maybe"));
	assert_invalid(ev, "decision");
	ev = code_execution();
	json_object_set_new(ev, "code_size", json_integer(-1));
	assert_invalid(ev, "code_size");
}
END_TEST

START_TEST(test_daemon_only_types_refused)
{
	assert_invalid(json_pack("{s:s}", "event", "checkpoint"),
	    "only by stockade-auditd");
	assert_invalid(json_pack("{s:s}", "event", "rotate"),
	    "only by stockade-auditd");
	assert_invalid(json_pack("{s:s}", "event", "chain_start"),
	    "only by stockade-auditd");
}
END_TEST

START_TEST(test_reserved_keys_refused)
{
	json_t	*ev = code_execution();

	json_object_set_new(ev, "seq", json_integer(1));
	assert_invalid(ev, "'seq' is set by stockade-auditd");
	ev = code_execution();
	json_object_set_new(ev, "hash", json_string("x"));
	assert_invalid(ev, "'hash'");
}
END_TEST

START_TEST(test_unknown_and_malformed_types)
{
	assert_invalid(json_pack("{s:s}", "event", "made_up"), "unknown");
	assert_invalid(json_pack("{s:s}", "event", "Bad Name"), "event name");
	assert_invalid(json_pack("{s:i}", "event", 3), "'event'");
	assert_invalid(json_pack("{}"), "'event'");
	assert_invalid(json_pack("[]"), "not an object");
}
END_TEST

START_TEST(test_extra_fields_allowed)
{
	char	 err[256];
	json_t	*ev = code_execution();

	json_object_set_new(ev, "pattern_hits", json_pack("[{s:s}]", "id",
	    "PY001"));
	ck_assert_int_eq(event_validate(ev, err, sizeof(err)), 0);
	json_decref(ev);
}
END_TEST

/* netguard's flow records: counts are required and never negative. */
START_TEST(test_egress_flow_counts_required_and_unsigned)
{
	char	 err[256];
	json_t	*ev;

	ev = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:i}",
	    "event", "egress_flow", "session_id", "s-1", "protocol", "tcp",
	    "dst_ip", "203.0.113.10", "rule", "allow[0]", "bytes_out", 30754,
	    "bytes_in", 200840, "packets_out", 14, "packets_in", 16);
	ck_assert_msg(event_validate(ev, err, sizeof(err)) == 0, "%s", err);
	json_object_set_new(ev, "bytes_in", json_integer(-1));
	assert_invalid(json_deep_copy(ev), "bytes_in");
	json_object_del(ev, "bytes_in");
	assert_invalid(ev, "bytes_in");
	ev = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i}", "event",
	    "egress_flow_summary", "session_id", "s-1", "summarised", 16,
	    "bytes_out", 5210, "bytes_in", 23950, "lost", 0);
	ck_assert_msg(event_validate(ev, err, sizeof(err)) == 0, "%s", err);
	json_object_del(ev, "summarised");
	assert_invalid(ev, "summarised");
}
END_TEST

static Suite *
event_suite(void)
{
	Suite	*s = suite_create("event");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_issue_sample_is_valid);
	tcase_add_loop_test(tc, test_each_core_field_required, 0,
	    (int)nitems(core_fields));
	tcase_add_loop_test(tc, test_core_field_types_checked, 0,
	    (int)nitems(core_fields));
	tcase_add_test(tc, test_bad_code_hash_and_decision);
	tcase_add_test(tc, test_daemon_only_types_refused);
	tcase_add_test(tc, test_reserved_keys_refused);
	tcase_add_test(tc, test_unknown_and_malformed_types);
	tcase_add_test(tc, test_egress_flow_counts_required_and_unsigned);
	tcase_add_test(tc, test_extra_fields_allowed);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(event_suite)
