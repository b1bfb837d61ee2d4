/*
 * The keys fleet quotas live under in Redis: a key names the subject,
 * the quota and (for counts and usage) the window, so two windows or two
 * subjects never share a counter (the fleet: section's keys are
 * check_profile's, with mcp-exec.yaml's others).
 */
#include "sessions/fleet_quota.h"
#include "testutil.h"

START_TEST(test_keys)
{
	char	 a[FLEET_KEY_MAX], b[FLEET_KEY_MAX];

	ck_assert_int_eq(fleet_quota_key(a, sizeof(a), "principal:user:p",
	    QUOTA_CALLS_MINUTE, 1800000000), 0);
	ck_assert_str_eq(a, FLEET_KEY_PREFIX
	    "principal:user:p:calls_per_minute:1800000000");
	ck_assert_int_eq(fleet_quota_key(b, sizeof(b), "principal:user:p",
	    QUOTA_CALLS_MINUTE, 1800000060), 0);
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(fleet_quota_key(a, sizeof(a), "group:analysts",
	    QUOTA_CONCURRENT, 0), 0);
	ck_assert_str_eq(a, FLEET_KEY_PREFIX "group:analysts:concurrent_calls");
	/* Live counts have no window: the same key at any time. */
	ck_assert_int_eq(fleet_quota_key(a, sizeof(a), "group:analysts",
	    QUOTA_SESSIONS, 1800000000), 0);
	ck_assert_str_eq(a, FLEET_KEY_PREFIX "group:analysts:sessions");
	/* Usage counts by its own window: the hour or day now falls in. */
	ck_assert_int_eq(fleet_quota_key(a, sizeof(a), "principal:user:p",
	    QUOTA_WALL_HOUR, 1800003599), 0);
	ck_assert_str_eq(a, FLEET_KEY_PREFIX
	    "principal:user:p:wall_seconds_per_hour:1800000000");
	ck_assert_int_eq(fleet_quota_key(a, sizeof(a), "principal:user:p",
	    QUOTA_CPU_DAY, 1800003599), 0);
	ck_assert_str_eq(a, FLEET_KEY_PREFIX
	    "principal:user:p:cpu_seconds_per_day:1799971200");
	ck_assert_int_eq(fleet_quota_key(b, sizeof(b), "principal:user:p",
	    QUOTA_CPU_HOUR, 1800003599), 0);
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(fleet_quota_key(a, sizeof(a), "principal:user:p",
	    QUOTA_ARTIFACT_DAY, 1800000000 + 86400), 0);
	ck_assert_str_eq(a, FLEET_KEY_PREFIX
	    "principal:user:p:artifact_bytes_per_day:1800057600");
	/* Too small a buffer is an error, never a cut key. */
	ck_assert_int_eq(fleet_quota_key(a, 20, "group:analysts", QUOTA_CONCURRENT,
	    0), -1);
}
END_TEST

static Suite *
fleet_quota_suite(void)
{
	Suite	*s = suite_create("fleet_quota");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_keys);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(fleet_quota_suite)
