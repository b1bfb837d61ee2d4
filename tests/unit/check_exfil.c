/*
 * netguard/exfil.c: the DNS tunnelling score on ordinary names, random
 * labels, rare types and bursts of unique names, in integers only.
 */
#include "testutil.h"
#include "exfil.h"

#define QT_A		1
#define QT_NULL		10
#define QT_TXT		16
#define QT_ANY		255

/* 60 random base32 characters (entropy 4.67 bits per character). */
#define RANDOM_LABEL	"j72ceuvw75efr6edt4sywb5wkh7dnsipzz7fk4zri3r2wyojfljooa7lqsaj"

START_TEST(test_entropy_of_known_strings)
{
	ck_assert_uint_eq(exfil_entropy("aaaa", 4), 0);
	ck_assert_uint_eq(exfil_entropy("abab", 4), 1000);
	ck_assert_uint_eq(exfil_entropy("abcd", 4), 2000);
	ck_assert_uint_eq(exfil_entropy("a.b.c.d", 7), 2000);	/* dots skipped */
	ck_assert_uint_eq(exfil_entropy("0123456789abcdef", 16), 4000);
	ck_assert_uint_eq(exfil_entropy("", 0), 0);
	ck_assert_uint_eq(exfil_entropy("a", 1), 0);
	/* 0.811 bits: one 'b' in four. */
	ck_assert_uint_eq(exfil_entropy("aaab", 4), 811);
	ck_assert_uint_ge(exfil_entropy(RANDOM_LABEL, 60), 4600);
	ck_assert_uint_le(exfil_entropy(RANDOM_LABEL, 60), 4700);
}
END_TEST

START_TEST(test_normal_names_score_low)
{
	static const char *const names[] = {
		"pypi.org", "www.example.com", "files.pythonhosted.org",
		"github.com", "objects.githubusercontent.com",
		"my-load-balancer-1234567890.us-west-2.elb.amazonaws.com",
		"my-company-data-science-training-datasets-prod.s3.us-east-1"
		    ".amazonaws.com",
		"", "localhost",
	};
	struct exfil_state	*st = exfil_new();
	unsigned		 sig, score;
	size_t			 i;

	for (i = 0; i < nitems(names); i++) {
		score = exfil_score(st, names[i], QT_A, 1000, &sig);
		ck_assert_msg(score < 60, "%s scores %u", names[i], score);
	}
	ck_assert_uint_eq(exfil_score(st, "pypi.org", QT_A, 1000, &sig), 0);
	ck_assert_uint_eq(sig, 0);
	exfil_free(st);
}
END_TEST

START_TEST(test_random_base32_label_scores_high)
{
	unsigned	 sig, score;

	score = exfil_score(NULL, RANDOM_LABEL ".t.attacker.example", QT_A, 0,
	    &sig);
	ck_assert_uint_gt(score, 60);
	ck_assert_uint_eq(sig, EXFIL_SIG_LONG_NAME | EXFIL_SIG_LONG_LABEL |
	    EXFIL_SIG_ENTROPY);
	/* The label alone under a short domain: still long and random. */
	score = exfil_score(NULL, RANDOM_LABEL ".io", QT_A, 0, &sig);
	ck_assert_uint_gt(score, 60);
}
END_TEST

START_TEST(test_rare_types_add)
{
	unsigned	 a, t, sig;

	a = exfil_score(NULL, "x.example.com", QT_A, 0, NULL);
	t = exfil_score(NULL, "x.example.com", QT_TXT, 0, &sig);
	ck_assert_uint_eq(t, a + EXFIL_W_RARE_TYPE);
	ck_assert_uint_eq(sig, EXFIL_SIG_RARE_TYPE);
	ck_assert_uint_eq(exfil_score(NULL, "x.example.com", QT_NULL, 0, NULL),
	    t);
	ck_assert_uint_eq(exfil_score(NULL, "x.example.com", QT_ANY, 0, NULL),
	    t);
	/* A random label asked as TXT is over any sane threshold. */
	ck_assert_uint_ge(exfil_score(NULL, RANDOM_LABEL ".t.example",
	    QT_TXT, 0, NULL), 85);
}
END_TEST

START_TEST(test_unique_rate_after_100_names_a_minute)
{
	struct exfil_state	*st = exfil_new();
	unsigned		 sig, i;
	char			 name[64];

	for (i = 0; i < EXFIL_UNIQUE_MAX; i++) {
		snprintf(name, sizeof(name), "n%u.tunnel.example", i);
		exfil_score(st, name, QT_A, 1000 + i, &sig);
		ck_assert_uint_eq(sig & EXFIL_SIG_UNIQUE_RATE, 0);
	}
	/* Repeating a name does not make it new. */
	exfil_score(st, "n0.tunnel.example", QT_A, 1200, &sig);
	ck_assert_uint_eq(sig & EXFIL_SIG_UNIQUE_RATE, 0);
	ck_assert_uint_eq(exfil_score(st, "n100.tunnel.example", QT_A, 1300,
	    &sig), EXFIL_W_UNIQUE_RATE);
	ck_assert_uint_eq(sig, EXFIL_SIG_UNIQUE_RATE);
	/* Another domain has its own count. */
	exfil_score(st, "n101.other.example", QT_A, 1300, &sig);
	ck_assert_uint_eq(sig & EXFIL_SIG_UNIQUE_RATE, 0);
	/* A minute later the old names have aged out. */
	exfil_score(st, "later.tunnel.example", QT_A, 1300 + EXFIL_WINDOW_MS,
	    &sig);
	ck_assert_uint_eq(sig & EXFIL_SIG_UNIQUE_RATE, 0);
	exfil_free(st);
}
END_TEST

START_TEST(test_registered_domain_is_last_two_labels)
{
	struct exfil_state	*st = exfil_new();
	unsigned		 sig = 0, i;
	char			 name[64];

	/* Spread over many third-level parents: still one domain. */
	for (i = 0; i <= EXFIL_UNIQUE_MAX; i++) {
		snprintf(name, sizeof(name), "a.p%u.tunnel.example", i);
		exfil_score(st, name, QT_A, 5000, &sig);
	}
	ck_assert_uint_eq(sig & EXFIL_SIG_UNIQUE_RATE, EXFIL_SIG_UNIQUE_RATE);
	exfil_free(st);
}
END_TEST

START_TEST(test_state_is_bounded)
{
	struct exfil_state	*st = exfil_new();
	unsigned		 sig, i;
	char			 name[64];

	/* Far more domains and names than the tables hold: the oldest are
	 * forgotten, the newest still counted. */
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "x%u.d%u.example", i, i % 97);
		exfil_score(st, name, QT_A, 10000 + i / 10, &sig);
	}
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "y%u.fresh.example", i);
		exfil_score(st, name, QT_A, 20000, &sig);
	}
	ck_assert_uint_eq(sig & EXFIL_SIG_UNIQUE_RATE, EXFIL_SIG_UNIQUE_RATE);
	exfil_free(st);
}
END_TEST

START_TEST(test_score_is_capped)
{
	struct exfil_state	*st = exfil_new();
	unsigned		 sig = 0, score = 0, i;
	char			 name[128];

	for (i = 0; i <= EXFIL_UNIQUE_MAX; i++) {
		snprintf(name, sizeof(name), "%u" RANDOM_LABEL ".t.example", i);
		score = exfil_score(st, name, QT_TXT, 0, &sig);
	}
	ck_assert_uint_eq(score, EXFIL_SCORE_MAX);
	ck_assert_uint_eq(sig, EXFIL_SIG_ALL);
	exfil_free(st);
}
END_TEST

START_TEST(test_signal_names)
{
	unsigned	 bit;

	ck_assert_str_eq(exfil_signal_name(EXFIL_SIG_LONG_NAME), "long_name");
	ck_assert_str_eq(exfil_signal_name(EXFIL_SIG_LONG_LABEL), "long_label");
	ck_assert_str_eq(exfil_signal_name(EXFIL_SIG_ENTROPY), "entropy");
	ck_assert_str_eq(exfil_signal_name(EXFIL_SIG_RARE_TYPE), "rare_type");
	ck_assert_str_eq(exfil_signal_name(EXFIL_SIG_UNIQUE_RATE),
	    "unique_rate");
	for (bit = 1; bit <= EXFIL_SIG_ALL; bit <<= 1)
		ck_assert_ptr_nonnull(exfil_signal_name(bit));
	ck_assert_ptr_null(exfil_signal_name(0));
	ck_assert_ptr_null(exfil_signal_name(EXFIL_SIG_ALL + 1));
	ck_assert_ptr_null(exfil_signal_name(3));
}
END_TEST

static Suite *
exfil_suite(void)
{
	Suite	*s = suite_create("exfil");
	TCase	*tc = tcase_create("score");

	tcase_add_test(tc, test_entropy_of_known_strings);
	tcase_add_test(tc, test_normal_names_score_low);
	tcase_add_test(tc, test_random_base32_label_scores_high);
	tcase_add_test(tc, test_rare_types_add);
	tcase_add_test(tc, test_unique_rate_after_100_names_a_minute);
	tcase_add_test(tc, test_registered_domain_is_last_two_labels);
	tcase_add_test(tc, test_state_is_bounded);
	tcase_add_test(tc, test_score_is_capped);
	tcase_add_test(tc, test_signal_names);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(exfil_suite)
