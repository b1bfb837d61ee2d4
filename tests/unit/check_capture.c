/*
 * mcp-exec/capture.c: head and tail kept around an exact count, the ring
 * against a model of the whole stream, and UTF-8 repair of hostile bytes.
 */
#include "sandbox/capture.h"
#include "testutil.h"

/* The text a capture of max bytes must produce for all of `s`, built the
 * slow and obvious way. */
static char *
model_text(const uint8_t *s, size_t len, size_t max, size_t *outlen)
{
	size_t	 head = max / 3 * 2 + max % 3 * 2 / 3, tail = max - head;
	char	 marker[64];
	uint8_t	*raw;
	char	*out;
	int	 m;

	if (len <= max)
		return utf8_sanitize(s, len, outlen);
	m = snprintf(marker, sizeof(marker), "\n[... %zu bytes omitted ...]\n",
	    len - head - tail);
	raw = xmalloc(head + (size_t)m + tail);
	memcpy(raw, s, head);
	memcpy(raw + head, marker, (size_t)m);
	memcpy(raw + head + (size_t)m, s + len - tail, tail);
	out = utf8_sanitize(raw, head + (size_t)m + tail, outlen);
	free(raw);
	return out;
}

static void
assert_text(const struct capture *c, const char *want, size_t wantlen)
{
	size_t	 len;
	char	*t = capture_text(c, &len);

	ck_assert_uint_eq(len, wantlen);
	ck_assert_int_eq(memcmp(t, want, wantlen), 0);
	ck_assert_int_eq(t[len], '\0');
	free(t);
}

START_TEST(test_capture_keeps_all_of_short_output)
{
	struct capture	 c;

	capture_init(&c, 30);
	capture_add(&c, "hello, ", 7);
	capture_add(&c, "", 0);
	capture_add(&c, "world\n", 6);
	ck_assert_int_eq(capture_truncated(&c), 0);
	ck_assert_uint_eq(c.total, 13);
	assert_text(&c, "hello, world\n", 13);
	capture_free(&c);
}
END_TEST

START_TEST(test_capture_exactly_max_bytes_is_not_truncated)
{
	struct capture	 c;

	capture_init(&c, 30);
	capture_add(&c, "012345678901234567890123456789", 30);
	ck_assert_int_eq(capture_truncated(&c), 0);
	assert_text(&c, "012345678901234567890123456789", 30);
	capture_add(&c, "X", 1);
	ck_assert_int_eq(capture_truncated(&c), 1);
	assert_text(&c, "01234567890123456789\n[... 1 bytes omitted ...]\n"
	    "123456789X", 20 + 27 + 10);
	capture_free(&c);
}
END_TEST

START_TEST(test_capture_keeps_head_and_tail_of_long_output)
{
	static const char	 want[] = "ABCDEFGHIJKLMNOPQRST"
	    "\n[... 70 bytes omitted ...]\n" "qrstuvwxyz";
	char			 s[101];
	struct capture		 c;
	size_t			 i;

	for (i = 0; i < 100; i++)
		s[i] = i < 20 ? (char)('A' + i) : i >= 90 ?
		    (char)('q' + i - 90) : '.';
	capture_init(&c, 30);
	ck_assert_uint_eq(c.headmax, 20);
	ck_assert_uint_eq(c.tailmax, 10);
	/* Odd chunk sizes so the ring wraps at every offset. */
	for (i = 0; i < 100; i += 7)
		capture_add(&c, s + i, i + 7 <= 100 ? 7 : 100 - i);
	ck_assert_uint_eq(c.total, 100);
	ck_assert_int_eq(capture_truncated(&c), 1);
	assert_text(&c, want, sizeof(want) - 1);
	capture_free(&c);
}
END_TEST

START_TEST(test_capture_chunk_larger_than_ring_keeps_its_end)
{
	struct capture	 c;

	capture_init(&c, 6);		/* head 4, tail 2 */
	capture_add(&c, "abc", 3);
	capture_add(&c, "defghij", 7);
	assert_text(&c, "abcd\n[... 4 bytes omitted ...]\nij", 4 + 27 + 2);
	capture_free(&c);
}
END_TEST

START_TEST(test_capture_ring_matches_model_for_random_chunks)
{
	enum { LEN = 20000 };
	static const size_t	 maxes[] = { 0, 1, 2, 3, 5, 64, 1000, 19999,
	    20000, 30000 };
	uint8_t			*s = xmalloc(LEN);
	uint32_t		 x = 12345;
	size_t			 i, k, off, n, len, mlen;
	struct capture		 c;
	char			*t, *m;

	for (i = 0; i < LEN; i++) {
		x = x * 1103515245 + 12345;
		/* Mostly ASCII with some multi-byte and invalid bytes. */
		s[i] = (x >> 16) % 5 == 0 ? (uint8_t)(x >> 8) :
		    (uint8_t)('a' + (x >> 16) % 26);
	}
	for (k = 0; k < nitems(maxes); k++) {
		capture_init(&c, maxes[k]);
		for (off = 0; off < LEN; off += n) {
			x = x * 1103515245 + 12345;
			n = (x >> 16) % 3000;
			if (n > LEN - off)
				n = LEN - off;
			capture_add(&c, s + off, n);
		}
		ck_assert_uint_eq(c.total, LEN);
		t = capture_text(&c, &len);
		m = model_text(s, LEN, maxes[k], &mlen);
		ck_assert_msg(len == mlen && memcmp(t, m, len) == 0,
		    "max %zu differs", maxes[k]);
		free(t);
		free(m);
		capture_free(&c);
	}
	free(s);
}
END_TEST

START_TEST(test_capture_max_zero_keeps_only_the_count)
{
	struct capture	 c;

	capture_init(&c, 0);
	assert_text(&c, "", 0);
	capture_add(&c, "abc", 3);
	assert_text(&c, "\n[... 3 bytes omitted ...]\n", 27);
	capture_free(&c);
}
END_TEST

START_TEST(test_capture_counts_a_gibibyte_in_64k_chunks)
{
	enum { CHUNK = 64 * 1024 };
	static uint8_t	 chunk[CHUNK];
	struct capture	 c;
	uint64_t	 i, pos;
	size_t		 len, k, mlen;
	char		*t;
	const char	*tail;

	for (k = 0; k < CHUNK; k++)
		chunk[k] = (uint8_t)('a' + k % 26);
	capture_init(&c, 1024 * 1024);
	for (i = 0; i < (1ull << 30) / CHUNK; i++)
		capture_add(&c, chunk, CHUNK);
	ck_assert_uint_eq(c.total, 1ull << 30);
	ck_assert_uint_eq(c.headlen, c.headmax);
	ck_assert_uint_eq(c.taillen, c.tailmax);
	t = capture_text(&c, &len);
	mlen = strlen("\n[...  bytes omitted ...]\n") +
	    (size_t)snprintf(NULL, 0, "%llu",
	    (unsigned long long)((1ull << 30) - c.max));
	ck_assert_uint_eq(len, c.max + mlen);
	ck_assert_ptr_nonnull(strstr(t, "\n[... 1072693248 bytes omitted"
	    " ...]\n"));
	tail = t + len - c.tailmax;
	for (k = 0, pos = (1ull << 30) - c.tailmax; k < c.tailmax; k++, pos++)
		if ((uint8_t)tail[k] != 'a' + pos % CHUNK % 26)
			ck_abort_msg("tail byte %zu wrong", k);
	free(t);
	capture_free(&c);
}
END_TEST

START_TEST(test_capture_character_split_between_head_and_ring_stays_whole)
{
	struct capture	 c;

	capture_init(&c, 6);		/* head 4: "abc" + first byte of € */
	capture_add(&c, "abc\xe2\x82\xac", 6);
	assert_text(&c, "abc\xe2\x82\xac", 6);
	capture_free(&c);
}
END_TEST

START_TEST(test_capture_truncation_through_characters_gives_replacements)
{
	struct capture	 c;

	capture_init(&c, 6);
	/* Head "abc\xe2" ends mid-€; the ring starts on its last byte. */
	capture_add(&c, "abc\xe2\x82\xac" "xyz\xe2\x82\xac", 12);
	assert_text(&c, "abc\xef\xbf\xbd\n[... 6 bytes omitted ...]\n"
	    "\xef\xbf\xbd\xef\xbf\xbd", 6 + 27 + 6);
	capture_free(&c);
}
END_TEST

static void
assert_sanitized(const char *in, size_t inlen, const char *want,
    size_t wantlen)
{
	size_t	 len;
	char	*t = utf8_sanitize(in, inlen, &len);

	ck_assert_msg(len == wantlen && memcmp(t, want, len) == 0,
	    "got %zu bytes, want %zu", len, wantlen);
	ck_assert_int_eq(t[len], '\0');
	free(t);
}

#define R	"\xef\xbf\xbd"
#define SAN(in, want)	assert_sanitized(in, sizeof(in) - 1, want, \
			    sizeof(want) - 1)

START_TEST(test_sanitize_keeps_valid_utf8)
{
	SAN("", "");
	SAN("plain ascii\n", "plain ascii\n");
	SAN("\xc3\xa9\xe2\x82\xac\xf0\x90\x8d\x88", "\xc3\xa9\xe2\x82\xac"
	    "\xf0\x90\x8d\x88");
	SAN("\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf", "\xed\x9f\xbf"
	    "\xee\x80\x80\xf4\x8f\xbf\xbf");	/* U+D7FF U+E000 U+10FFFF */
	SAN("\xef\xbf\xbd", R);
}
END_TEST

START_TEST(test_sanitize_replaces_overlong_and_surrogates)
{
	SAN("\xc0\x80", R R);			/* overlong NUL */
	SAN("\xc1\xbf", R R);
	SAN("\xe0\x80\xaf", R R R);		/* overlong '/' */
	SAN("\xe0\x9f\xbf", R R R);
	SAN("\xf0\x8f\xbf\xbf", R R R R);	/* overlong U+FFFF */
	SAN("\xed\xa0\x80", R R R);		/* U+D800 */
	SAN("\xed\xbf\xbf", R R R);		/* U+DFFF */
	SAN("\xed\xa0\x80\xed\xb0\x80", R R R R R R);	/* a pair, CESU */
}
END_TEST

START_TEST(test_sanitize_replaces_out_of_range_and_stray_bytes)
{
	SAN("\xf4\x90\x80\x80", R R R R);	/* U+110000 */
	SAN("\xf5\x80\x80\x80", R R R R);
	SAN("\xf8\x88\x80\x80\x80", R R R R R);
	SAN("\xff\xfe", R R);
	SAN("a\x80" "b\xbf" "c", "a" R "b" R "c");
	/* Unicode 15, table 3-8: one U+FFFD per maximal subpart. */
	SAN("\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64",
	    "a" R R R "b" R "c" R R "d");
}
END_TEST

START_TEST(test_sanitize_replaces_truncated_sequences_and_nul)
{
	SAN("\xe2\x82", R);
	SAN("\xe2\x82" "a", R "a");
	SAN("\xf0\x9f\x98", R);
	SAN("\xf0\x9f\x98" "\xf0\x9f\x98\x80", R "\xf0\x9f\x98\x80");
	SAN("\xc3", R);
	SAN("a\0b", "a" R "b");
	SAN("\0", R);
}
END_TEST

static Suite *
capture_suite(void)
{
	Suite	*s = suite_create("capture");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_capture_keeps_all_of_short_output);
	tcase_add_test(tc, test_capture_exactly_max_bytes_is_not_truncated);
	tcase_add_test(tc, test_capture_keeps_head_and_tail_of_long_output);
	tcase_add_test(tc, test_capture_chunk_larger_than_ring_keeps_its_end);
	tcase_add_test(tc, test_capture_ring_matches_model_for_random_chunks);
	tcase_add_test(tc, test_capture_max_zero_keeps_only_the_count);
	tcase_add_test(tc, test_capture_counts_a_gibibyte_in_64k_chunks);
	tcase_add_test(tc,
	    test_capture_character_split_between_head_and_ring_stays_whole);
	tcase_add_test(tc,
	    test_capture_truncation_through_characters_gives_replacements);
	tcase_add_test(tc, test_sanitize_keeps_valid_utf8);
	tcase_add_test(tc, test_sanitize_replaces_overlong_and_surrogates);
	tcase_add_test(tc,
	    test_sanitize_replaces_out_of_range_and_stray_bytes);
	tcase_add_test(tc, test_sanitize_replaces_truncated_sequences_and_nul);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(capture_suite)
