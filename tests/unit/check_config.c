/*
 * rules/audit.yaml: the shipped file loads, every key is range-checked,
 * and errors name file:line:column.
 */
#include "testutil.h"
#include "audit_fit.h"
#include "config.h"
#include "frame.h"

static void
load_text(const char *yaml, struct audit_conf *c, int want)
{
	char	 dir[PATH_MAX], path[PATH_MAX];

	tu_tmpdir(dir, sizeof(dir));
	tu_path(path, sizeof(path), dir, "audit.yaml");
	tu_write(path, yaml, strlen(yaml));
	ck_assert_int_eq(audit_conf_load(path, c), want);
}

START_TEST(test_shipped_rules_load)
{
	struct audit_conf	 c;

	ck_assert_int_eq(audit_conf_load("rules/audit.yaml", &c), 0);
	ck_assert_uint_eq(c.socket_mode, 0660);
	ck_assert_uint_eq(c.max_event_bytes, 64 * 1024);
	ck_assert_uint_eq(c.max_file_bytes, 64ULL * 1024 * 1024);
	ck_assert_int_eq(c.disk_full_action, ACTION_SUSPEND);
	ck_assert_str_eq(c.checkpoint_dir, "");
	ck_assert_uint_eq(c.nwriters, 1);
	ck_assert_uint_eq(c.writers[0], 0);
	ck_assert_uint_eq(c.busy_poll_us, AUDIT_BUSY_POLL_US);
	ck_assert_uint_eq(strlen(c.sha256), 64);
}
END_TEST

START_TEST(test_values_and_relative_paths)
{
	struct audit_conf	 c;

	load_text("log_dir: logs\nwriters: [0, 65534]\n"
	    "rotation: {max_file_bytes: 1M, keep_files: 3}\n"
	    "checkpoint: {every_events: 5, offhost_dir: /mnt/worm}\n"
	    "disk_full_action: keep_going\n"
	    "flush: {max_batch_events: 64, busy_poll_us: 0}\n", &c, 0);
	ck_assert_ptr_nonnull(strstr(c.log_dir, "/logs"));
	ck_assert_int_eq(c.log_dir[0], '/');
	ck_assert_uint_eq(c.nwriters, 2);
	ck_assert_uint_eq(c.writers[1], 65534);
	ck_assert_uint_eq(c.max_file_bytes, 1024 * 1024);
	ck_assert_uint_eq(c.keep_files, 3);
	ck_assert_uint_eq(c.checkpoint_events, 5);
	ck_assert_str_eq(c.checkpoint_dir, "/mnt/worm");
	ck_assert_int_eq(c.disk_full_action, ACTION_KEEP_GOING);
	ck_assert_uint_eq(c.batch_max_events, 64);
	ck_assert_uint_eq(c.busy_poll_us, 0);
}
END_TEST

START_TEST(test_errors_name_line_and_column)
{
	struct audit_conf	 c;
	char			 dir[PATH_MAX], path[PATH_MAX], out[PATH_MAX];
	const char		*text;
	char			*got;
	size_t			 len;
	FILE			*f;
	int			 saved;

	tu_tmpdir(dir, sizeof(dir));
	tu_path(path, sizeof(path), dir, "audit.yaml");
	tu_path(out, sizeof(out), dir, "stderr");
	text = "rotation:\n  keep_files: 1\nflsuh: {}\n"
	    "disk_full_action: panic\n";
	tu_write(path, text, strlen(text));
	fflush(stderr);
	saved = dup(2);
	f = fopen(out, "w");
	dup2(fileno(f), 2);
	ck_assert_int_eq(audit_conf_load(path, &c), -1);
	fflush(stderr);
	dup2(saved, 2);
	fclose(f);
	got = tu_read(out, &len);
	ck_assert_msg(strstr(got, "audit.yaml:2:15:") != NULL, "%s", got);
	ck_assert_msg(strstr(got, "flsuh") != NULL, "%s", got);
	ck_assert_msg(strstr(got, "audit.yaml:4:19:") != NULL, "%s", got);
	ck_assert_msg(strstr(got, "keep_going") != NULL, "%s", got);
	free(got);
}
END_TEST

static const char *const invalid[] = {
	"code: {retention: everything}\n",	/* not hash, sample, full */
	"code: {retention: full, keep: 1}\n",	/* unknown key */
	"code: {sample_bytes: 8}\n",		/* below 16 */
	"code: {sample_bytes: 5K}\n",		/* above 4096 */
	"code: {max_bytes: 2M}\n",		/* above what mcp-exec sends */
	"code: full\n",				/* not a mapping */
	"socket_mode: 01777\n",
	"writers: [nosuchuser-stockade]\n",
	"writers: [-1]\n",
	"limits: {max_event_bytes: 10}\n",
	"limits: {max_event_bytes: 16K}\n",	/* below AUDIT_RECORD_MAX */
	"limits: {max_event_bytes: 1G}\n",
	"rotation: {max_file_bytes: 1K}\n",
	"checkpoint: {every_seconds: 0}\n",
	"retry_seconds: forever\n",
	"flush: {busy_poll_us: 1001}\n",	/* at most 1 ms */
	"flush: {busy_poll_us: -1}\n",
	"flush: {busy_poll: 10}\n",
	"- a list\n",
	"log_dir: [a]\n",
	/* Forwarding: every collector is named, addressed and verified. */
	"forward: [{address: 'h:6514', ca: ca.pem}]\n",
	"forward: [{name: Bad!, address: 'h:6514', ca: ca.pem}]\n",
	"forward: [{name: a, ca: ca.pem}]\n",
	"forward: [{name: a, address: h, ca: ca.pem}]\n",
	"forward: [{name: a, address: 'h:0', ca: ca.pem}]\n",
	"forward: [{name: a, address: '[::1:6514', ca: ca.pem}]\n",
	"forward: [{name: a, address: 'h:6514'}]\n",
	"forward: [{name: a, address: 'h:6514', ca: ca.pem, cert: c.pem}]\n",
	"forward: [{name: a, address: 'h:6514', ca: ca.pem, port: 1}]\n",
	"forward: [{name: a, address: 'h:1', ca: x}, {name: a, address: 'h:2', ca: x}]\n",
	"forward: [{name: a, address: 'h:6514', ca: ca.pem, resend_window_s: -1}]\n",
};

START_TEST(test_forward_entries_parse)
{
	struct audit_conf	 c;

	load_text("forward:\n"
	    "  - {name: siem, address: 'siem.example.org:6514', ca: ca.pem}\n"
	    "  - {name: v6, address: '[2001:db8::1]:6514', ca: /etc/ca.pem,\n"
	    "     server_name: collector, cert: c.pem, key: k.pem,\n"
	    "     resend_window_s: 0}\n", &c, 0);
	ck_assert_uint_eq(c.nforward, 2);
	ck_assert_str_eq(c.forward[0].host, "siem.example.org");
	ck_assert_str_eq(c.forward[0].port, "6514");
	ck_assert_str_eq(c.forward[0].server_name, "siem.example.org");
	ck_assert_uint_eq(c.forward[0].resend_window_s, 10);
	ck_assert_ptr_nonnull(strstr(c.forward[0].ca, "/ca.pem"));
	ck_assert_int_eq(c.forward[0].ca[0], '/');
	ck_assert_str_eq(c.forward[1].host, "2001:db8::1");
	ck_assert_str_eq(c.forward[1].server_name, "collector");
	ck_assert_str_eq(c.forward[1].ca, "/etc/ca.pem");
	ck_assert_uint_eq(c.forward[1].resend_window_s, 0);
}
END_TEST

START_TEST(test_code_retention_parses)
{
	struct audit_conf	 c;

	ck_assert_int_eq(audit_conf_load("rules/audit.yaml", &c), 0);
	ck_assert_int_eq(c.code_retention, RETAIN_HASH);
	load_text("code: {retention: sample, sample_bytes: 1K, max_bytes: 64K}\n",
	    &c, 0);
	ck_assert_int_eq(c.code_retention, RETAIN_SAMPLE);
	ck_assert_uint_eq(c.code_sample_bytes, 1024);
	ck_assert_uint_eq(c.code_max_bytes, 64 * 1024);
	/* The frame cap leaves room for the code and a policy_load's files
	 * escaped, within FRAME_MAX. */
	ck_assert_uint_eq(audit_frame_max(&c), 64 * 1024 + 6 * 64 * 1024 +
	    6 * AUDIT_POLICY_KEEP_MAX);
	load_text("code: {retention: full}\n", &c, 0);
	ck_assert_int_eq(c.code_retention, RETAIN_FULL);
	ck_assert_uint_le(audit_frame_max(&c), FRAME_MAX);
}
END_TEST

START_TEST(test_invalid_values_refused)
{
	struct audit_conf	 c;

	load_text(invalid[_i], &c, -1);
}
END_TEST

START_TEST(test_missing_file_refused)
{
	struct audit_conf	 c;

	ck_assert_int_eq(audit_conf_load("/nonexistent/audit.yaml", &c), -1);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite	*s = suite_create("config");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_shipped_rules_load);
	tcase_add_test(tc, test_values_and_relative_paths);
	tcase_add_test(tc, test_errors_name_line_and_column);
	tcase_add_test(tc, test_forward_entries_parse);
	tcase_add_test(tc, test_code_retention_parses);
	tcase_add_loop_test(tc, test_invalid_values_refused, 0,
	    (int)nitems(invalid));
	tcase_add_test(tc, test_missing_file_refused);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(config_suite)
