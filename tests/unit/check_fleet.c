/*
 * fleet: in mcp-exec.yaml and the keys fleet quotas live under: absent,
 * nothing is enabled; given, the address, node id, on_unreachable and
 * lease_s are checked and bad ones refused; a key names the subject,
 * the quota and (for calls_per_minute) the window, so two windows or two
 * subjects never share a counter.
 */
#include "sessions/fleet.h"
#include "sessions/profile.h"
#include "testutil.h"

static void
conf_with(char *dir, size_t len, const char *yaml)
{
	char	 p[PATH_MAX];

	tu_tmpdir(dir, len);
	tu_path(p, sizeof(p), dir, MCPEXEC_CONFIG);
	tu_write(p, yaml, strlen(yaml));
}

START_TEST(test_absent_is_off)
{
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX];

	conf_with(dir, sizeof(dir), "server: {}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_int_eq(c.fleet.enabled, 0);
}
END_TEST

START_TEST(test_parsed_with_defaults)
{
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX];

	conf_with(dir, sizeof(dir), "fleet: {redis: /run/redis/r.sock, "
	    "node_id: node-1}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_int_eq(c.fleet.enabled, 1);
	ck_assert_str_eq(c.fleet.redis, "/run/redis/r.sock");
	ck_assert_str_eq(c.fleet.node_id, "node-1");
	ck_assert_int_eq(c.fleet.on_unreachable, FLEET_UNREACHABLE_REFUSE);
	ck_assert_uint_eq(c.fleet.lease_s, FLEET_LEASE_S_DEFAULT);
	conf_with(dir, sizeof(dir), "fleet: {redis: \"redis.example:6379\", "
	    "node_id: b, on_unreachable: local, lease_s: 5, "
	    "password_file: /etc/stockade/redis.pw}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_str_eq(c.fleet.redis, "redis.example:6379");
	ck_assert_int_eq(c.fleet.on_unreachable, FLEET_UNREACHABLE_LOCAL);
	ck_assert_uint_eq(c.fleet.lease_s, 5);
	ck_assert_str_eq(c.fleet.password_file, "/etc/stockade/redis.pw");
}
END_TEST

static const char *const bad[] = {
	"fleet: {node_id: a}\n",			/* no redis */
	"fleet: {redis: /r.sock}\n",			/* no node_id */
	"fleet: {redis: nohost, node_id: a}\n",
	"fleet: {redis: \"h:\", node_id: a}\n",
	"fleet: {redis: \":6379\", node_id: a}\n",
	"fleet: {redis: \"h:63x9\", node_id: a}\n",
	"fleet: {redis: \"h:123456\", node_id: a}\n",
	"fleet: {redis: /r.sock, node_id: \"a b\"}\n",
	"fleet: {redis: /r.sock, node_id: \"\"}\n",
	"fleet: {redis: /r.sock, node_id: a, on_unreachable: maybe}\n",
	"fleet: {redis: /r.sock, node_id: a, lease_s: 2}\n",
	"fleet: {redis: /r.sock, node_id: a, lease_s: 3601}\n",
	"fleet: {redis: /r.sock, node_id: a, password_file: pw}\n",
	"fleet: {redis: /r.sock, node_id: a, sessions: 1}\n",
	"fleet: /r.sock\n",
};

START_TEST(test_bad_refused)
{
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX];

	conf_with(dir, sizeof(dir), bad[_i]);
	ck_assert_msg(mcpexec_conf_load(dir, &c) == -1, "accepted: %s",
	    bad[_i]);
}
END_TEST

START_TEST(test_keys)
{
	char	 a[FLEET_KEY_MAX], b[FLEET_KEY_MAX];

	ck_assert_int_eq(fleet_key(a, sizeof(a), "principal:user:p",
	    QUOTA_CALLS_MINUTE, 1800000000), 0);
	ck_assert_str_eq(a, FLEET_KEY_PREFIX
	    "principal:user:p:calls_per_minute:1800000000");
	ck_assert_int_eq(fleet_key(b, sizeof(b), "principal:user:p",
	    QUOTA_CALLS_MINUTE, 1800000060), 0);
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(fleet_key(a, sizeof(a), "group:analysts",
	    QUOTA_CONCURRENT, 0), 0);
	ck_assert_str_eq(a, FLEET_KEY_PREFIX "group:analysts:concurrent_calls");
	/* Live counts have no window: the same key at any time. */
	ck_assert_int_eq(fleet_key(a, sizeof(a), "group:analysts",
	    QUOTA_SESSIONS, 1800000000), 0);
	ck_assert_str_eq(a, FLEET_KEY_PREFIX "group:analysts:sessions");
	/* Too small a buffer is an error, never a cut key. */
	ck_assert_int_eq(fleet_key(a, 20, "group:analysts", QUOTA_CONCURRENT,
	    0), -1);
}
END_TEST

static Suite *
fleet_suite(void)
{
	Suite	*s = suite_create("fleet");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_absent_is_off);
	tcase_add_test(tc, test_parsed_with_defaults);
	tcase_add_loop_test(tc, test_bad_refused, 0, (int)nitems(bad));
	tcase_add_test(tc, test_keys);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(fleet_suite)
