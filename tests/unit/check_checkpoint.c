/*
 * Checkpoint statements: signatures bind chain, seq, hash and time; the
 * record and off-host forms round-trip; malformed input is refused.
 */
#include "testutil.h"
#include "checkpoint.h"

static EVP_PKEY *priv, *pub, *other;

static void
keys(void)
{
	tu_keys(&priv, &pub, &other);
}

static void
assert_same(const struct checkpoint *a, const struct checkpoint *b)
{
	ck_assert_str_eq(a->chain_id, b->chain_id);
	ck_assert_uint_eq(a->seq, b->seq);
	ck_assert_int_eq(memcmp(a->hash, b->hash, SHA256_LEN), 0);
	ck_assert_str_eq(a->ts, b->ts);
	ck_assert_str_eq(a->key_id, b->key_id);
	ck_assert_int_eq(memcmp(a->sig, b->sig, ED25519_SIG_LEN), 0);
}

static void
make(struct checkpoint *cp)
{
	memset(cp, 0, sizeof(*cp));
	snprintf(cp->chain_id, sizeof(cp->chain_id), "%032x", 7);
	cp->seq = 42;
	memset(cp->hash, 0xab, SHA256_LEN);
	snprintf(cp->ts, sizeof(cp->ts), "2026-11-30T02:44:26.123Z");
	ck_assert_int_eq(checkpoint_sign(cp, priv), 0);
}

START_TEST(test_signature_binds_every_field)
{
	struct checkpoint	 cp, t;

	keys();
	make(&cp);
	ck_assert(checkpoint_verify(&cp, pub));
	ck_assert(!checkpoint_verify(&cp, other));
	t = cp; t.seq++;
	ck_assert(!checkpoint_verify(&t, pub));
	t = cp; t.hash[31] ^= 1;
	ck_assert(!checkpoint_verify(&t, pub));
	t = cp; t.chain_id[0] = 'f';
	ck_assert(!checkpoint_verify(&t, pub));
	t = cp; t.ts[22] = '9';
	ck_assert(!checkpoint_verify(&t, pub));
	t = cp; t.sig[0] ^= 1;
	ck_assert(!checkpoint_verify(&t, pub));
}
END_TEST

START_TEST(test_record_and_line_round_trip)
{
	struct checkpoint	 cp, back;
	struct buf		 b;
	const char		*why;
	json_t			*rec;

	keys();
	make(&cp);
	rec = checkpoint_record(&cp);
	ck_assert_int_eq(checkpoint_from_record(rec, &back, &why), 0);
	assert_same(&cp, &back);
	json_decref(rec);
	buf_init(&b, 4096);
	ck_assert_int_eq(checkpoint_line(&cp, &b), 0);
	ck_assert_int_eq(b.data[b.len - 1], '\n');
	ck_assert_int_eq(checkpoint_from_line((char *)b.data, b.len - 1, &back,
	    &why), 0);
	assert_same(&cp, &back);
	ck_assert(checkpoint_verify(&back, pub));
	buf_free(&b);
}
END_TEST

static const char *const bad_lines[] = {
	"not json",
	"{}",
	"{\"chain_id\":\"x\",\"seq\":1,\"hash\":\"00\",\"ts\":\"t\","
	    "\"key_id\":\"k\",\"sig\":\"s\"}",
	"{\"chain_id\":\"00000000000000000000000000000007\",\"seq\":-1,"
	    "\"hash\":\"abababababababababababababababababababababababababab"
	    "abababababab\",\"ts\":\"2026-11-30T02:44:26.123Z\",\"key_id\":"
	    "\"0011223344556677\",\"sig\":\"AAAA\"}",
};

START_TEST(test_malformed_lines_refused)
{
	struct checkpoint	 cp;
	const char		*why = NULL;

	ck_assert_int_eq(checkpoint_from_line(bad_lines[_i],
	    strlen(bad_lines[_i]), &cp, &why), -1);
	ck_assert_ptr_nonnull(why);
}
END_TEST

static Suite *
checkpoint_suite(void)
{
	Suite	*s = suite_create("checkpoint");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_signature_binds_every_field);
	tcase_add_test(tc, test_record_and_line_round_trip);
	tcase_add_loop_test(tc, test_malformed_lines_refused, 0,
	    (int)nitems(bad_lines));
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(checkpoint_suite)
