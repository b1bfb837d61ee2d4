/*
 * lib/: the bounded buffer, strict number parsing, timestamps, hex and
 * base64, one-shot SHA-256, and the Ed25519 key files' permissions.
 */
#include <openssl/crypto.h>

#include "testutil.h"
#include "buf.h"

START_TEST(test_buf_ceiling_is_hard)
{
	struct buf	 b;

	buf_init(&b, 8);
	ck_assert_int_eq(buf_add(&b, "12345678", 8), 0);
	ck_assert_int_eq(buf_add(&b, "9", 1), -1);
	ck_assert_uint_eq(b.len, 8);
	buf_consume(&b, 3);
	ck_assert_int_eq(memcmp(b.data, "45678", 5), 0);
	ck_assert_int_eq(buf_addf(&b, "%d", 123), -1);	/* 5 + 3 + NUL > 8 */
	ck_assert_int_eq(buf_addf(&b, "%d", 12), 0);
	ck_assert_uint_eq(b.len, 7);
	buf_free(&b);
}
END_TEST

START_TEST(test_parse_u64_strict)
{
	uint64_t	 v;

	ck_assert_int_eq(parse_u64("42", 0, 100, &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	ck_assert_int_eq(parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -1);
	ck_assert_int_eq(parse_u64("", 0, 100, &v), -1);
	ck_assert_int_eq(parse_u64("-1", 0, 100, &v), -1);
	ck_assert_int_eq(parse_u64(" 1", 0, 100, &v), -1);
	ck_assert_int_eq(parse_u64("1x", 0, 100, &v), -1);
	ck_assert_int_eq(parse_u64("101", 0, 100, &v), -1);
}
END_TEST

START_TEST(test_ts_format_fixed_length_utc)
{
	struct timespec	 t = { 1796006666, 123999999 };
	char		 out[TS_LEN + 1];

	ts_format(&t, out);
	ck_assert_str_eq(out, "2026-11-30T02:44:26.123Z");
	ts_now(out);
	ck_assert_uint_eq(strlen(out), TS_LEN);
}
END_TEST

START_TEST(test_hex_and_base64)
{
	uint8_t	 in[5] = { 0x00, 0x7f, 0x80, 0xab, 0xff }, out[8];
	char	 hex[11], b64[9];

	hex_encode(in, 5, hex);
	ck_assert_str_eq(hex, "007f80abff");
	ck_assert_int_eq(hex_decode(hex, 10, out), 0);
	ck_assert_int_eq(memcmp(in, out, 5), 0);
	ck_assert_int_eq(hex_decode("0A", 2, out), -1);	/* lowercase only */
	ck_assert_int_eq(hex_decode("0g", 2, out), -1);
	ck_assert_int_eq(hex_decode("abc", 3, out), -1);
	base64_encode(in, 5, b64);
	ck_assert_str_eq(b64, "AH+Aq/8=");
	ck_assert_int_eq(base64_decode(b64, 8, out, sizeof(out)), 5);
	ck_assert_int_eq(memcmp(in, out, 5), 0);
	ck_assert_int_eq(base64_decode("AH+", 3, out, sizeof(out)), -1);
	ck_assert_int_eq(base64_decode("!!!!", 4, out, sizeof(out)), -1);
}
END_TEST

/* RFC 4648 §10's vectors, and what §3.3 and §3.5 let a decoder refuse. */
static const struct {
	const char	*in, *out;
} b64_good[] = {
	{ "", "" }, { "Zg==", "f" }, { "Zm8=", "fo" }, { "Zm9v", "foo" },
	{ "Zm9vYg==", "foob" }, { "Zm9vYmE=", "fooba" },
	{ "Zm9vYmFy", "foobar" }, { "ZXhlY3V0ZV9weXRob24=", "execute_python" },
};

#define B64(s)	{ s, sizeof(s) - 1 }
static const struct {
	const char	*in;
	size_t		 len;
} b64_bad[] = {
	B64("    ZXhlY3V0ZV9weXRob24="),	/* leading spaces: OpenSSL skips them */
	B64("\t\t\t\tZXhlY3V0ZV9weXRob24="),
	B64("ZXhlY3V0ZV9weXRob24=    "),	/* trailing spaces */
	B64("Zm9vYmFy----"),		/* trailing '-': OpenSSL's end mark */
	B64("Zm9vYmFy\r\n\r\n"),
	B64("Zm9v YmFy   "),
	B64("Zm9v\0mFy"),			/* a NUL inside */
	B64("Zg==\0\0\0\0"),
	B64("Zg"), B64("Zm8"),		/* padding left off */
	B64("Zg="), B64("Z==="), B64("===="), B64("Zg=A"), B64("Zg==Zg=="),
	B64("Zh=="), B64("Zm9="),		/* pad bits not zero: a second spelling */
	B64("-_8="),			/* the URL alphabet */
	B64("Zm9v\xc3\xa9=="),
};

START_TEST(test_base64_strict)
{
	uint8_t	 out[32];
	size_t	 i;
	int	 n;

	for (i = 0; i < sizeof(b64_good) / sizeof(b64_good[0]); i++) {
		n = base64_decode(b64_good[i].in, strlen(b64_good[i].in), out,
		    sizeof(out));
		ck_assert_msg(n == (int)strlen(b64_good[i].out) &&
		    memcmp(out, b64_good[i].out, (size_t)n) == 0,
		    "\"%s\" decodes to %d bytes", b64_good[i].in, n);
	}
	for (i = 0; i < sizeof(b64_bad) / sizeof(b64_bad[0]); i++)
		ck_assert_msg(base64_decode(b64_bad[i].in, b64_bad[i].len, out,
		    sizeof(out)) == -1, "\"%s\" is refused", b64_bad[i].in);
	/* The check alone gives the length the decoder would. */
	ck_assert_int_eq(base64_check(BASE64_STD, "Zm9vYg==", 8), 4);
	ck_assert_int_eq(base64_check(BASE64_STD, "Zm9v\n", 5), -1);
}
END_TEST

/* JWS's form: the URL alphabet, no padding, the same zero pad bits. */
START_TEST(test_base64url_strict)
{
	ck_assert_int_eq(base64_check(BASE64_URL, "", 0), 0);
	ck_assert_int_eq(base64_check(BASE64_URL, "Zg", 2), 1);
	ck_assert_int_eq(base64_check(BASE64_URL, "Zm8", 3), 2);
	ck_assert_int_eq(base64_check(BASE64_URL, "Zm9v", 4), 3);
	ck_assert_int_eq(base64_check(BASE64_URL, "-_8", 3), 2);
	ck_assert_int_eq(base64_check(BASE64_URL, "Zg==", 4), -1);
	ck_assert_int_eq(base64_check(BASE64_URL, "Z", 1), -1);
	ck_assert_int_eq(base64_check(BASE64_URL, "Zm9vY", 5), -1);
	ck_assert_int_eq(base64_check(BASE64_URL, "+/8", 3), -1);
	ck_assert_int_eq(base64_check(BASE64_URL, "Zh", 2), -1);
	ck_assert_int_eq(base64_check(BASE64_URL, "Zm9", 3), -1);
	ck_assert_int_eq(base64_check(BASE64_URL, " Zm8", 4), -1);
}
END_TEST

START_TEST(test_private_key_permissions_enforced)
{
	char		 dir[PATH_MAX], path[PATH_MAX], err[256];
	struct stat	 st;
	EVP_PKEY	*k;

	tu_tmpdir(dir, sizeof(dir));
	tu_keygen(dir);
	tu_path(path, sizeof(path), dir, "checkpoint.key");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	chmod(path, 0640);
	ck_assert_ptr_null(ed25519_load_private(path, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "chmod 600"));
	chmod(path, 0600);
	k = ed25519_load_private(path, err, sizeof(err));
	ck_assert_ptr_nonnull(k);
	EVP_PKEY_free(k);
	/* keygen never overwrites an existing key */
	ck_assert_int_eq(ed25519_keygen(path, path, err, sizeof(err)), -1);
	tu_path(path, sizeof(path), dir, "checkpoint.pub");
	ck_assert_ptr_null(ed25519_load_private(path, err, sizeof(err)));
}
END_TEST

/* Allocations OpenSSL made through the hooks below. */
static size_t	 ossl_allocs;

static void *
count_malloc(size_t n, const char *file, int line)
{
	ossl_allocs++;
	return malloc(n);
}

static void *
count_realloc(void *p, size_t n, const char *file, int line)
{
	ossl_allocs++;
	return realloc(p, n);
}

static void
count_free(void *p, const char *file, int line)
{
	free(p);
}

/*
 * FIPS 180-2's answers, the streaming context agreeing, and no OpenSSL
 * set-up behind a one-shot digest: EVP's first digest builds the
 * providers' tables (hundreds of allocations, ~3 ms a process start).
 */
START_TEST(test_sha256_known_answers_without_evp_setup)
{
	static const char *const in[] = { "", "abc",
	    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq" };
	static const char *const want[] = {
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" };
	struct sha256_ctx	 c;
	uint8_t			 md[SHA256_LEN];
	char			 hex[SHA256_HEX + 1];
	size_t			 i;

	/* A forked test: nothing in this process has used OpenSSL yet. */
	ck_assert_int_eq(CRYPTO_set_mem_functions(count_malloc, count_realloc,
	    count_free), 1);
	for (i = 0; i < nitems(in); i++) {
		sha256_hex(in[i], strlen(in[i]), hex);
		ck_assert_str_eq(hex, want[i]);
	}
	ck_assert_uint_eq(ossl_allocs, 0);
	sha256_ctx_init(&c);
	for (i = 0; i < nitems(in); i++) {
		sha256_begin(&c);
		sha256_update(&c, in[i], strlen(in[i]));
		sha256_end(&c, md);
		hex_encode(md, sizeof(md), hex);
		ck_assert_str_eq(hex, want[i]);
	}
	sha256_ctx_free(&c);
}
END_TEST

START_TEST(test_sign_verify_and_key_id)
{
	char		 dir[PATH_MAX], path[PATH_MAX], err[256], a[17], b[17];
	uint8_t		 sig[ED25519_SIG_LEN];
	EVP_PKEY	*k, *p;

	tu_tmpdir(dir, sizeof(dir));
	tu_keygen(dir);
	tu_path(path, sizeof(path), dir, "checkpoint.key");
	k = ed25519_load_private(path, err, sizeof(err));
	p = tu_pubkey(dir);
	ck_assert_int_eq(ed25519_sign(k, "msg", 3, sig), 0);
	ck_assert_int_eq(ed25519_verify(p, "msg", 3, sig), 1);
	ck_assert_int_eq(ed25519_verify(p, "msh", 3, sig), 0);
	ck_assert_int_eq(ed25519_key_id(k, a), 0);
	ck_assert_int_eq(ed25519_key_id(p, b), 0);
	ck_assert_str_eq(a, b);
	EVP_PKEY_free(k);
	EVP_PKEY_free(p);
}
END_TEST

START_TEST(test_logfile_names)
{
	char		 name[LOGFILE_NAME_MAX];
	uint64_t	 seq;

	logfile_name(17, name);
	ck_assert_str_eq(name, "audit-00000000000000000017.log");
	ck_assert_int_eq(logfile_parse_name(name, &seq), 0);
	ck_assert_uint_eq(seq, 17);
	ck_assert_int_eq(logfile_parse_name("audit-17.log", &seq), -1);
	ck_assert_int_eq(logfile_parse_name("audit-0000000000000000001x.log",
	    &seq), -1);
	ck_assert_int_eq(logfile_parse_name("audit-00000000000000000000.log",
	    &seq), -1);
	ck_assert_int_eq(logfile_parse_name("audit-00000000000000000017.log.1",
	    &seq), -1);
}
END_TEST

START_TEST(test_logdir_lists_in_seq_order_and_expires_oldest)
{
	char		 dir[PATH_MAX], path[PATH_MAX];
	struct logfile	*files;
	size_t		 n;
	json_t		*ex;
	const uint64_t	 seqs[] = { 300, 1, 20 };
	size_t		 i;

	tu_tmpdir(dir, sizeof(dir));
	for (i = 0; i < nitems(seqs); i++) {
		char name[LOGFILE_NAME_MAX];
		logfile_name(seqs[i], name);
		tu_path(path, sizeof(path), dir, name);
		tu_write(path, "", 0);
	}
	tu_path(path, sizeof(path), dir, "notes.txt");
	tu_write(path, "", 0);
	ck_assert_int_eq(logdir_list(dir, &files, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(files[0].first_seq, 1);
	ck_assert_uint_eq(files[2].first_seq, 300);
	free(files);
	ex = logdir_expired(dir, 3, NULL);
	ck_assert_uint_eq(json_array_size(ex), 1);
	ck_assert_str_eq(json_string_value(json_array_get(ex, 0)),
	    "audit-00000000000000000001.log");
	json_decref(ex);
	/* A pending file not yet on disk counts as present. */
	ex = logdir_expired(dir, 3, "audit-00000000000000000400.log");
	ck_assert_uint_eq(json_array_size(ex), 2);
	json_decref(ex);
	ex = logdir_expired(dir, 10, NULL);
	ck_assert_uint_eq(json_array_size(ex), 0);
	json_decref(ex);
}
END_TEST

static Suite *
util_suite(void)
{
	Suite	*s = suite_create("util");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_buf_ceiling_is_hard);
	tcase_add_test(tc, test_parse_u64_strict);
	tcase_add_test(tc, test_ts_format_fixed_length_utc);
	tcase_add_test(tc, test_hex_and_base64);
	tcase_add_test(tc, test_base64_strict);
	tcase_add_test(tc, test_base64url_strict);
	tcase_add_test(tc, test_private_key_permissions_enforced);
	tcase_add_test(tc, test_sha256_known_answers_without_evp_setup);
	tcase_add_test(tc, test_sign_verify_and_key_id);
	tcase_add_test(tc, test_logfile_names);
	tcase_add_test(tc, test_logdir_lists_in_seq_order_and_expires_oldest);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(util_suite)
