/*
 * The record format: what chain_append writes, and chain_parse's refusal
 * of every malformed shape a file might hold.
 */
#include "testutil.h"
#include "chain.h"

static const struct peer peer = { 1000, 1000, 42 };
static const char *const ts = "2026-11-30T02:44:26.123Z";

static char *
one_line(struct chain *c, const char *event, json_t *fields, size_t *len)
{
	struct buf	 b;
	char		*s;

	buf_init(&b, 1 << 20);
	ck_assert_int_eq(chain_append(c, ts, event, &peer, fields, 1 << 20,
	    &b), 0);
	json_decref(fields);
	s = xmalloc(b.len + 1);
	memcpy(s, b.data, b.len);
	s[b.len] = '\0';
	*len = b.len;
	buf_free(&b);
	return s;
}

START_TEST(test_append_writes_documented_format)
{
	struct chain	 c;
	size_t		 len;
	char		*l;
	const char	*want = "{\"seq\":1,\"prev\":\"0000000000000000000000"
	    "000000000000000000000000000000000000000000\",\"ts\":\"2026-11-30"
	    "T02:44:26.123Z\",\"event\":\"operator_note\",\"peer\":{\"uid\":1000,"
	    "\"pid\":42},\"principal\":\"p\",\"message\":\"caf\\u00E9\","
	    "\"hash\":\"";

	chain_init(&c);
	l = one_line(&c, "operator_note", json_pack("{s:s, s:s}",
	    "principal", "p", "message", "caf\xc3\xa9"), &len);
	ck_assert_msg(strncmp(l, want, strlen(want)) == 0, "%s", l);
	ck_assert_uint_eq(len, strlen(want) + 64 + 3);
	ck_assert_str_eq(l + len - 3, "\"}\n");
	ck_assert_uint_eq(c.seq, 1);
	free(l);
	chain_free(&c);
}
END_TEST

START_TEST(test_hash_is_sha256_of_prev_and_prefix)
{
	struct chain	 c;
	uint8_t		 md[SHA256_LEN], zero[SHA256_LEN] = { 0 };
	uint8_t		*in;
	char		 hex[SHA256_HEX + 1], *l;
	size_t		 len, prefix;

	chain_init(&c);
	l = one_line(&c, "operator_note", json_pack("{s:s}", "principal", "p"),
	    &len);
	prefix = len - CHAIN_TAIL_LEN;
	in = xmalloc(SHA256_LEN + prefix);
	memcpy(in, zero, SHA256_LEN);
	memcpy(in + SHA256_LEN, l, prefix);
	sha256(in, SHA256_LEN + prefix, md);
	hex_encode(md, SHA256_LEN, hex);
	ck_assert_int_eq(memcmp(l + prefix + strlen(CHAIN_TAIL), hex, 64), 0);
	ck_assert_int_eq(memcmp(c.hash, md, SHA256_LEN), 0);
	free(in);
	free(l);
	chain_free(&c);
}
END_TEST

START_TEST(test_lines_link)
{
	struct chain		 c, v;
	struct chain_line	 cl;
	const char		*why;
	size_t			 len1, len2;
	char			*a, *b;

	chain_init(&c);
	chain_init(&v);
	a = one_line(&c, "operator_note", json_pack("{}"), &len1);
	b = one_line(&c, "operator_note", json_pack("{}"), &len2);
	ck_assert_int_eq(chain_check_line(&v.ctx, a, len1 - 1, 0, NULL, &cl,
	    &why), CHAIN_OK);
	ck_assert_int_eq(chain_check_line(&v.ctx, b, len2 - 1, 2, cl.hash, &cl,
	    &why), CHAIN_OK);
	ck_assert_int_eq(chain_check_line(&v.ctx, b, len2 - 1, 3, cl.prev, &cl,
	    &why), CHAIN_BAD_SEQ);
	free(a);
	free(b);
	chain_free(&c);
	chain_free(&v);
}
END_TEST

START_TEST(test_append_refuses_bad_names_and_oversize)
{
	struct chain	 c;
	struct buf	 b;
	json_t		*f = json_pack("{s:s}", "k", "v");

	chain_init(&c);
	buf_init(&b, 1 << 20);
	ck_assert_int_eq(chain_append(&c, ts, "Bad", &peer, f, 4096, &b), -1);
	ck_assert_int_eq(chain_append(&c, ts, "", &peer, f, 4096, &b), -1);
	ck_assert_int_eq(chain_append(&c, "2026", "ok", &peer, f, 4096, &b), -1);
	ck_assert_int_eq(chain_append(&c, ts, "ok", &peer, f, 100, &b), -1);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_uint_eq(c.seq, 0);
	json_decref(f);
	buf_free(&b);
	chain_free(&c);
}
END_TEST

static const char *const malformed[] = {
	"",
	"{\"seq\":1}",
	"[\"seq\",1]",
	"{\"seq\":01,\"prev\":\"",
	"{\"seq\":0,\"prev\":\"",
	"{\"seq\":-1,\"prev\":\"",
	"{\"seq\":99999999999999999999999,\"prev\":\"",
	"{\"seq\":1,\"prev\":\"00\",\"ts\":\"2026-11-30T02:44:26.123Z\"",
};

START_TEST(test_parse_rejects_malformed)
{
	struct chain_line	 cl;
	const char		*why;
	char			 line[512];

	snprintf(line, sizeof(line), "%s%s", malformed[_i],
	    ",\"hash\":\"0000000000000000000000000000000000000000000000000000"
	    "000000000000\"}");
	ck_assert_int_eq(chain_parse(line, strlen(line), &cl, &why), -1);
	ck_assert_ptr_nonnull(why);
}
END_TEST

START_TEST(test_parse_rejects_missing_tail_and_bad_event)
{
	struct chain		 c;
	struct chain_line	 cl;
	const char		*why;
	size_t			 len;
	char			*l;

	chain_init(&c);
	l = one_line(&c, "operator_note", json_pack("{}"), &len);
	/* Without the closing brace, and with an upper-case event. */
	ck_assert_int_eq(chain_parse(l, len - 2, &cl, &why), -1);
	l[strstr(l, "operator_note") - l] = 'O';
	ck_assert_int_eq(chain_parse(l, len - 1, &cl, &why), -1);
	free(l);
	chain_free(&c);
}
END_TEST

START_TEST(test_reserved_keys)
{
	ck_assert(chain_key_reserved("seq"));
	ck_assert(chain_key_reserved("hash"));
	ck_assert(chain_key_reserved("peer"));
	ck_assert(!chain_key_reserved("principal"));
}
END_TEST

static Suite *
chain_suite(void)
{
	Suite	*s = suite_create("chain");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_append_writes_documented_format);
	tcase_add_test(tc, test_hash_is_sha256_of_prev_and_prefix);
	tcase_add_test(tc, test_lines_link);
	tcase_add_test(tc, test_append_refuses_bad_names_and_oversize);
	tcase_add_loop_test(tc, test_parse_rejects_malformed, 0,
	    (int)nitems(malformed));
	tcase_add_test(tc, test_parse_rejects_missing_tail_and_bad_event);
	tcase_add_test(tc, test_reserved_keys);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(chain_suite)
