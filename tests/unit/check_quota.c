/*
 * Quota accounts (sessions/quota.c): each kind reached and reset at its
 * window's end, live counts freed, usage kept across a reopen, and a
 * usage file that is not one set aside.  The clock is the test clock's
 * file (QUOTA_CLOCK_ENV).
 */
#include "testutil.h"
#include "sessions/quota.h"

static char	 clockf[PATH_MAX];

static void
at(time_t t)
{
	char	 buf[32];

	snprintf(buf, sizeof(buf), "%lld\n", (long long)t);
	tu_write(clockf, buf, strlen(buf));
}

/* A table in a fresh state dir at the start of a UTC day (+10 s). */
static struct quota_table *
fresh(char *dir, size_t len, time_t *t0)
{
	tu_tmpdir(dir, len);
	tu_path(clockf, sizeof(clockf), dir, "clock");
	setenv(QUOTA_CLOCK_ENV, clockf, 1);
	*t0 = 1800000000 - 1800000000 % 86400 + 10;
	at(*t0);
	return quota_open(dir);
}

static void
bill_one(struct quota_bill *b, enum quota_kind k, uint64_t max)
{
	memset(b, 0, sizeof(*b));
	b->n = 1;
	snprintf(b->a[0].subject, sizeof(b->a[0].subject), "principal:t");
	quota_limits_none(&b->a[0].lim);
	b->a[0].lim.max[k] = max;
}

START_TEST(test_calls_per_minute_reset_at_the_minute)
{
	struct quota_table	*qt;
	struct quota_bill	 b;
	struct quota_verdict	 v;
	char			 dir[PATH_MAX], text[512];
	time_t			 t0;

	qt = fresh(dir, sizeof(dir), &t0);
	bill_one(&b, QUOTA_CALLS_MINUTE, 2);
	ck_assert_int_eq(quota_check(qt, &b, 0, &v), 0);
	quota_call_begin(qt, &b);
	quota_call_end(qt, &b, 10, 0, 0);
	quota_call_begin(qt, &b);
	quota_call_end(qt, &b, 10, 0, 0);
	ck_assert_int_eq(quota_check(qt, &b, 0, &v), -1);
	ck_assert_int_eq(v.kind, QUOTA_CALLS_MINUTE);
	ck_assert_uint_eq(v.limit, 2);
	ck_assert_int_eq(v.resets, t0 - 10 + 60);
	quota_verdict_text(&v, text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, "calls_per_minute (2) of "
	    "principal:t, 2 used; resets at 2027-01-15T00:01:00Z"));
	at(t0 + 49);
	ck_assert_int_eq(quota_check(qt, &b, 0, &v), -1);
	at(t0 + 50);
	ck_assert_int_eq(quota_check(qt, &b, 0, &v), 0);
	quota_close(qt);
}
END_TEST

START_TEST(test_live_counts_free_when_they_end)
{
	struct quota_table	*qt;
	struct quota_bill	 b;
	struct quota_verdict	 v;
	char			 dir[PATH_MAX];
	time_t			 t0;

	qt = fresh(dir, sizeof(dir), &t0);
	bill_one(&b, QUOTA_SESSIONS, 1);
	b.a[0].lim.max[QUOTA_CONCURRENT] = 1;
	quota_session_open(qt, &b);
	/* A call in the session it has is fine; a new session is not. */
	ck_assert_int_eq(quota_check(qt, &b, 0, &v), 0);
	ck_assert_int_eq(quota_check(qt, &b, 1, &v), -1);
	ck_assert_int_eq(v.kind, QUOTA_SESSIONS);
	ck_assert_int_eq(v.resets, 0);
	quota_call_begin(qt, &b);
	ck_assert_int_eq(quota_check(qt, &b, 0, &v), -1);
	ck_assert_int_eq(v.kind, QUOTA_CONCURRENT);
	quota_call_end(qt, &b, 5, 0, 0);
	quota_session_close(qt, &b);
	ck_assert_int_eq(quota_check(qt, &b, 1, &v), 0);
	quota_close(qt);
}
END_TEST

START_TEST(test_usage_survives_a_reopen)
{
	struct quota_table	*qt;
	struct quota_bill	 b;
	struct quota_verdict	 v;
	char			 dir[PATH_MAX];
	time_t			 t0;

	qt = fresh(dir, sizeof(dir), &t0);
	bill_one(&b, QUOTA_CPU_HOUR, 2);
	b.a[0].lim.max[QUOTA_WALL_DAY] = 5;
	b.a[0].lim.max[QUOTA_ARTIFACT_DAY] = 100;
	quota_call_begin(qt, &b);
	quota_call_end(qt, &b, 4000, 2500, 60);
	quota_close(qt);
	qt = quota_open(dir);
	ck_assert_int_eq(quota_check(qt, &b, 0, &v), -1);
	ck_assert_int_eq(v.kind, QUOTA_CPU_HOUR);
	ck_assert_uint_eq(v.used, 2);
	/* The next hour: CPU resets; the day's wall time goes on. */
	at(t0 + 3600);
	ck_assert_int_eq(quota_check(qt, &b, 0, &v), 0);
	quota_call_begin(qt, &b);
	quota_call_end(qt, &b, 1000, 0, 40);
	ck_assert_int_eq(quota_check(qt, &b, 0, &v), -1);
	ck_assert_int_eq(v.kind, QUOTA_WALL_DAY);
	ck_assert_int_eq(v.resets, t0 - 10 + 86400);
	b.a[0].lim.max[QUOTA_WALL_DAY] = QUOTA_UNLIMITED;
	ck_assert_int_eq(quota_check(qt, &b, 0, &v), -1);
	ck_assert_int_eq(v.kind, QUOTA_ARTIFACT_DAY);
	ck_assert_uint_eq(v.used, 100);
	at(t0 + 86400);
	ck_assert_int_eq(quota_check(qt, &b, 0, &v), 0);
	quota_close(qt);
}
END_TEST

START_TEST(test_a_bad_usage_file_is_set_aside)
{
	struct quota_table	*qt;
	struct quota_bill	 b;
	struct quota_verdict	 v;
	char			 dir[PATH_MAX], p[PATH_MAX];
	time_t			 t0;

	qt = fresh(dir, sizeof(dir), &t0);
	quota_close(qt);
	tu_path(p, sizeof(p), dir, QUOTA_FILE);
	tu_write(p, "{\"accounts\": [", 14);
	qt = quota_open(dir);
	bill_one(&b, QUOTA_CALLS_MINUTE, 1);
	ck_assert_int_eq(quota_check(qt, &b, 0, &v), 0);
	tu_path(p, sizeof(p), dir, QUOTA_FILE ".bad");
	ck_assert_int_eq(access(p, F_OK), 0);
	quota_close(qt);
}
END_TEST

START_TEST(test_accounts_are_bounded)
{
	struct quota_table	*qt;
	struct quota_bill	 b;
	struct quota_verdict	 v;
	char			 dir[PATH_MAX];
	time_t			 t0;
	unsigned		 i;
	json_t			*d;

	qt = fresh(dir, sizeof(dir), &t0);
	bill_one(&b, QUOTA_CALLS_MINUTE, 5);
	for (i = 0; i < QUOTA_ACCOUNTS_MAX + 10; i++) {
		snprintf(b.a[0].subject, sizeof(b.a[0].subject),
		    "principal:p%u", i);
		ck_assert_int_eq(quota_check(qt, &b, 0, &v), 0);
	}
	d = quota_describe(qt);
	ck_assert_uint_eq(json_array_size(d), QUOTA_ACCOUNTS_MAX);
	json_decref(d);
	quota_close(qt);
}
END_TEST

static Suite *
quota_suite(void)
{
	Suite	*s = suite_create("quota");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_calls_per_minute_reset_at_the_minute);
	tcase_add_test(tc, test_live_counts_free_when_they_end);
	tcase_add_test(tc, test_usage_survives_a_reopen);
	tcase_add_test(tc, test_a_bad_usage_file_is_set_aside);
	tcase_add_test(tc, test_accounts_are_bounded);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(quota_suite)
