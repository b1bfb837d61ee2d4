/*
 * sessions/inflight.c: the in-flight journal's reader.  What a dead
 * server's file leaves open (begun, not ended), which ran (its code went
 * to a driver), and what is passed over: a torn last line, lines of no
 * kind, ids that are no number, fields that name no principal or session,
 * duplicate keys.
 */
#include "testutil.h"
#include "sessions/inflight.h"

#define F(p, s)	"{\"principal\":\"" p "\",\"session_id\":\"" s "\"," \
		    "\"code_hash\":\"sha256:00\",\"code_size\":1}"

static json_t *
parse(const char *text)
{
	json_t	*open = inflight_parse(text, strlen(text));

	ck_assert_ptr_nonnull(open);
	return open;
}

static int
ran(const json_t *open, const char *id)
{
	const json_t	*e = json_object_get(open, id);

	ck_assert_msg(e != NULL, "entry %s not open", id);
	return json_is_true(json_object_get(e, "ran"));
}

START_TEST(test_parse_begun_ran_ended)
{
	json_t	*open = parse("B 1 " F("user:a", "sess_1") "\n"
	    "B 2 " F("user:a", "sess_1") "\n"
	    "R 1\n"
	    "B 3 " F("user:b", "sess_2") "\n"
	    "E 2\n");

	ck_assert_uint_eq(json_object_size(open), 2);
	ck_assert(ran(open, "1"));
	ck_assert(!ran(open, "3"));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_object_get(open, "3"), "f"), "principal")), "user:b");
	json_decref(open);
}
END_TEST

START_TEST(test_parse_passes_over_a_torn_last_line)
{
	json_t	*open = parse("B 1 " F("user:a", "s") "\n"
	    "B 2 {\"principal\":\"user:a\",\"sess");

	ck_assert_uint_eq(json_object_size(open), 1);
	ck_assert_ptr_nonnull(json_object_get(open, "1"));
	json_decref(open);
	/* An end whose newline never came does not close its entry. */
	open = parse("B 1 " F("user:a", "s") "\nE 1");
	ck_assert_uint_eq(json_object_size(open), 1);
	json_decref(open);
}
END_TEST

START_TEST(test_parse_passes_over_what_is_not_an_entry)
{
	json_t	*open = parse(
	    "B x " F("user:a", "s") "\n"		/* id no number */
	    "B 18446744073709551616 " F("a", "s") "\n"	/* past u64 */
	    "B 4 {\"principal\":\"user:a\"}\n"		/* no session */
	    "B 5 {\"principal\":1,\"session_id\":\"s\"}\n"
	    "B 6 [\"principal\",\"session_id\"]\n"
	    "B 7 " F("user:a", "s") " trailing\n"
	    "B 8 {\"principal\":\"a\",\"session_id\":\"s\","
	    "\"principal\":\"b\"}\n"			/* duplicate key */
	    "B 9\n"
	    "X 1 " F("user:a", "s") "\n"
	    "B10 " F("user:a", "s") "\n"
	    "\n"
	    "R 42\nE 43\n");

	ck_assert_uint_eq(json_object_size(open), 0);
	json_decref(open);
}
END_TEST

START_TEST(test_parse_an_id_begun_again_is_one_entry)
{
	json_t	*open = parse("B 1 " F("user:a", "s") "\nR 1\n"
	    "B 1 " F("user:b", "t") "\n");

	/* Ids are a server's counter: a second B is a damaged file, and the
	 * last word stands, not yet run. */
	ck_assert_uint_eq(json_object_size(open), 1);
	ck_assert(!ran(open, "1"));
	json_decref(open);
}
END_TEST

static Suite *
inflight_suite(void)
{
	Suite	*s = suite_create("inflight");
	TCase	*tc = tcase_create("parse");

	tcase_add_test(tc, test_parse_begun_ran_ended);
	tcase_add_test(tc, test_parse_passes_over_a_torn_last_line);
	tcase_add_test(tc, test_parse_passes_over_what_is_not_an_entry);
	tcase_add_test(tc, test_parse_an_id_begun_again_is_one_entry);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(inflight_suite)
