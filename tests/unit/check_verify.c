/*
 * The verifier against the tamper matrix: each test makes a real log with
 * the shipped writer, attacks it the way an intruder with write access to
 * the log directory could, and checks that verify names the damage.
 */
#include "testutil.h"
#include "chain.h"
#include "checkpoint.h"
#include "verify.h"

struct fixture {
	char			dir[PATH_MAX];
	struct audit_conf	c;
	EVP_PKEY		*pub;
	struct verify_opts	o;
	struct verify_report	r;
};

static void
fx_init(struct fixture *fx, unsigned events, uint64_t max_file_bytes)
{
	memset(fx, 0, sizeof(*fx));
	tu_tmpdir(fx->dir, sizeof(fx->dir));
	tu_keygen(fx->dir);
	tu_conf(&fx->c, fx->dir);
	if (max_file_bytes)
		fx->c.max_file_bytes = max_file_bytes;
	tu_make_log(&fx->c, events);
	fx->pub = tu_pubkey(fx->dir);
	fx->o.pubkey = fx->pub;
	fx->o.checkpoints = fx->c.checkpoint_dir;
}

static enum verify_result
fx_verify(struct fixture *fx)
{
	return verify_dir(fx->c.log_dir, &fx->o, &fx->r);
}

static void
fx_free(struct fixture *fx)
{
	EVP_PKEY_free(fx->pub);
}

#define ck_tampered(fx, needle) do {					\
	ck_assert_int_eq(fx_verify(fx), VERIFY_TAMPERED);		\
	ck_assert_msg(strstr((fx)->r.reason, needle) != NULL,		\
	    "reason \"%s\" lacks \"%s\"", (fx)->r.reason, needle);	\
} while (0)

/* Rewrites a file through fn(data, len) -> new length. */
static void
edit_file(const char *path, size_t (*fn)(char *, size_t, void *), void *arg)
{
	size_t	 len;
	char	*data = tu_read(path, &len);

	data = xrealloc(data, len * 2 + 1);
	len = fn(data, len, arg);
	tu_write(path, data, len);
	free(data);
}

static size_t
delete_line(char *d, size_t len, void *arg)
{
	unsigned	 line = *(unsigned *)arg;
	long		 a = tu_line_off(d, len, line), b = tu_line_off(d, len, line + 1);

	ck_assert(a >= 0 && b > a);
	memmove(d + a, d + b, len - (size_t)b);
	return len - (size_t)(b - a);
}

static size_t
duplicate_line(char *d, size_t len, void *arg)
{
	unsigned	 line = *(unsigned *)arg;
	long		 a = tu_line_off(d, len, line), b = tu_line_off(d, len, line + 1);
	size_t		 n = (size_t)(b - a);

	memmove(d + b + n, d + b, len - (size_t)b);
	memcpy(d + b, d + a, n);
	return len + n;
}

static size_t
swap_lines(char *d, size_t len, void *arg)
{
	unsigned	 line = *(unsigned *)arg;
	long		 a = tu_line_off(d, len, line);
	long		 b = tu_line_off(d, len, line + 1);
	long		 c = tu_line_off(d, len, line + 2);
	char		*tmp = xmalloc((size_t)(c - a));

	memcpy(tmp, d + b, (size_t)(c - b));
	memcpy(tmp + (c - b), d + a, (size_t)(b - a));
	memcpy(d + a, tmp, (size_t)(c - a));
	free(tmp);
	return len;
}

/* Removes the second half of a line and its newline: it runs into the next. */
static size_t
cut_line_half(char *d, size_t len, void *arg)
{
	unsigned	 line = *(unsigned *)arg;
	long		 a = tu_line_off(d, len, line), b = tu_line_off(d, len, line + 1);
	long		 mid = a + (b - a) / 2;

	memmove(d + mid, d + b, len - (size_t)b);
	return len - (size_t)(b - mid);
}

static size_t
truncate_lines(char *d, size_t len, void *arg)
{
	unsigned	 keep = *(unsigned *)arg;

	return (size_t)tu_line_off(d, len, keep + 1);
}

static size_t
append_torn(char *d, size_t len, void *arg)
{
	const char	*half = "{\"seq\":999,\"prev\":\"00";

	memcpy(d + len, half, strlen(half));
	return len + strlen(half);
}

/* What an attacker with the whole file can do: recompute every hash. */
static size_t
rechain(char *d, size_t len, void *arg)
{
	struct sha256_ctx	 ctx;
	struct chain_line	 cl;
	uint8_t			 prev[SHA256_LEN], md[SHA256_LEN];
	char			 hex[SHA256_HEX + 1];
	const char		*why, *nl;
	size_t			 off = 0, ll;
	int			 first = 1;

	sha256_ctx_init(&ctx);
	while (off < len && (nl = memchr(d + off, '\n', len - off)) != NULL) {
		ll = (size_t)(nl - d - off);
		ck_assert_int_eq(chain_parse(d + off, ll, &cl, &why), 0);
		ck_assert_int_eq(chain_line_decode(&cl), 0);
		if (!first) {
			hex_encode(prev, SHA256_LEN, hex);
			memcpy(strstr(d + off, ",\"prev\":\"") + 9, hex,
			    SHA256_HEX);
		} else
			memcpy(prev, cl.prev, SHA256_LEN);
		sha256_pair(&ctx, prev, SHA256_LEN, d + off, cl.hashed_len, md);
		hex_encode(md, SHA256_LEN, hex);
		memcpy(d + off + cl.hashed_len + strlen(CHAIN_TAIL), hex,
		    SHA256_HEX);
		memcpy(prev, md, SHA256_LEN);
		first = 0;
		off += ll + 1;
	}
	sha256_ctx_free(&ctx);
	return len;
}

/* Replaces the first occurrence of `from` with `to` (same length). */
static size_t
replace_text(char *d, size_t len, void *arg)
{
	const char	**ft = arg;
	char		*p = memmem(d, len, ft[0], strlen(ft[0]));

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(strlen(ft[0]), strlen(ft[1]));
	memcpy(p, ft[1], strlen(ft[1]));
	return len;
}

START_TEST(test_intact_log_verifies)
{
	struct fixture	 fx;

	fx_init(&fx, 50, 0);
	ck_assert_int_eq(fx_verify(&fx), VERIFY_OK);
	ck_assert_uint_eq(fx.r.first_seq, 1);
	ck_assert_uint_eq(fx.r.records, fx.r.last_seq);
	ck_assert_uint_ge(fx.r.checkpoints_verified, 2);
	ck_assert_uint_ge(fx.r.offhost_checked, 2);
	ck_assert_str_eq(fx.r.warning, "");
	fx_free(&fx);
}
END_TEST

START_TEST(test_verify_detects_flipped_bit)
{
	struct fixture	 fx;
	char		 path[PATH_MAX], *d;
	size_t		 len;

	fx_init(&fx, 50, 0);
	tu_logfile(&fx.c, 0, path, sizeof(path));
	d = tu_read(path, &len);
	d[len / 2] ^= 0x04;
	tu_write(path, d, len);
	free(d);
	ck_assert_int_eq(fx_verify(&fx), VERIFY_TAMPERED);
	fx_free(&fx);
}
END_TEST

START_TEST(test_verify_detects_deleted_line)
{
	struct fixture	 fx;
	char		 path[PATH_MAX];
	unsigned	 line = 20;

	fx_init(&fx, 50, 0);
	tu_logfile(&fx.c, 0, path, sizeof(path));
	edit_file(path, delete_line, &line);
	ck_tampered(&fx, "missing");
	ck_assert_msg(strstr(fx.r.where, ":20 seq 21") != NULL, "%s",
	    fx.r.where);
	fx_free(&fx);
}
END_TEST

START_TEST(test_verify_detects_swapped_lines)
{
	struct fixture	 fx;
	char		 path[PATH_MAX];
	unsigned	 line = 20;

	fx_init(&fx, 50, 0);
	tu_logfile(&fx.c, 0, path, sizeof(path));
	edit_file(path, swap_lines, &line);
	ck_tampered(&fx, "seq 21 where 20 was expected");
	fx_free(&fx);
}
END_TEST

START_TEST(test_verify_detects_duplicated_line)
{
	struct fixture	 fx;
	char		 path[PATH_MAX];
	unsigned	 line = 20;

	fx_init(&fx, 50, 0);
	tu_logfile(&fx.c, 0, path, sizeof(path));
	edit_file(path, duplicate_line, &line);
	ck_tampered(&fx, "repeated");
	ck_assert_msg(strstr(fx.r.where, ":21 seq 20") != NULL, "%s",
	    fx.r.where);
	fx_free(&fx);
}
END_TEST

START_TEST(test_verify_detects_line_cut_in_half)
{
	struct fixture	 fx;
	char		 path[PATH_MAX];
	unsigned	 line = 30;

	fx_init(&fx, 50, 0);
	tu_logfile(&fx.c, 0, path, sizeof(path));
	edit_file(path, cut_line_half, &line);
	ck_assert_int_eq(fx_verify(&fx), VERIFY_TAMPERED);
	ck_assert_msg(strstr(fx.r.where, ":30") != NULL, "%s", fx.r.where);
	fx_free(&fx);
}
END_TEST

START_TEST(test_verify_detects_deleted_middle_file)
{
	struct fixture	 fx;
	char		 path[PATH_MAX];

	fx_init(&fx, 120, 4096);
	ck_assert_uint_ge(tu_nfiles(&fx.c), 4);
	ck_assert_int_eq(fx_verify(&fx), VERIFY_OK);
	tu_logfile(&fx.c, 1, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	ck_tampered(&fx, "is missing");
	fx_free(&fx);
}
END_TEST

START_TEST(test_verify_detects_deleted_oldest_file_without_retention)
{
	struct fixture	 fx;
	char		 path[PATH_MAX];

	fx_init(&fx, 120, 4096);
	tu_logfile(&fx.c, 0, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	fx.o.checkpoints = NULL;
	ck_tampered(&fx, "no rotate record says retention removed it");
	fx_free(&fx);
}
END_TEST

START_TEST(test_retention_removal_verifies)
{
	struct fixture	 fx;

	memset(&fx, 0, sizeof(fx));
	tu_tmpdir(fx.dir, sizeof(fx.dir));
	tu_keygen(fx.dir);
	tu_conf(&fx.c, fx.dir);
	fx.c.max_file_bytes = 4096;
	fx.c.keep_files = 3;
	tu_make_log(&fx.c, 150);
	ck_assert_uint_eq(tu_nfiles(&fx.c), 3);
	fx.pub = tu_pubkey(fx.dir);
	fx.o.pubkey = fx.pub;
	fx.o.checkpoints = fx.c.checkpoint_dir;
	ck_assert_int_eq(fx_verify(&fx), VERIFY_OK);
	ck_assert_uint_gt(fx.r.first_seq, 1);
	ck_assert_uint_ge(fx.r.offhost_skipped, 1);
	fx_free(&fx);
}
END_TEST

START_TEST(test_verify_detects_tail_truncation_against_checkpoint)
{
	struct fixture	 fx;
	char		 path[PATH_MAX];
	unsigned	 keep = 40;

	fx_init(&fx, 50, 0);
	tu_logfile(&fx.c, 0, path, sizeof(path));
	edit_file(path, truncate_lines, &keep);
	/* The chain alone cannot see a clean cut at a line boundary... */
	fx.o.checkpoints = NULL;
	ck_assert_int_eq(fx_verify(&fx), VERIFY_OK);
	/* ...the off-host checkpoint can. */
	fx.o.checkpoints = fx.c.checkpoint_dir;
	ck_tampered(&fx, "truncated");
	fx_free(&fx);
}
END_TEST

START_TEST(test_verify_detects_deleted_log_against_checkpoint)
{
	struct fixture	 fx;
	char		 path[PATH_MAX];

	fx_init(&fx, 10, 0);
	tu_logfile(&fx.c, 0, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	ck_tampered(&fx, "deleted");
	fx_free(&fx);
}
END_TEST

START_TEST(test_verify_detects_wholesale_replacement)
{
	struct fixture	 fx, forged;
	char		 cmd[4 * PATH_MAX];

	fx_init(&fx, 30, 0);
	fx_init(&forged, 30, 0);	/* a valid chain under another key */
	snprintf(cmd, sizeof(cmd), "rm -f %s/audit-*.log && cp %s/audit-*.log %s/",
	    fx.c.log_dir, forged.c.log_dir, fx.c.log_dir);
	ck_assert_int_eq(system(cmd), 0);
	/* Without key or off-host copy it looks fine: that is the point. */
	fx.o.pubkey = NULL;
	fx.o.checkpoints = NULL;
	ck_assert_int_eq(fx_verify(&fx), VERIFY_OK);
	fx.o.pubkey = fx.pub;
	ck_tampered(&fx, "does not verify with the given public key");
	fx.o.pubkey = NULL;
	fx.o.checkpoints = fx.c.checkpoint_dir;
	ck_tampered(&fx, "the log was replaced");
	fx_free(&fx);
	fx_free(&forged);
}
END_TEST

START_TEST(test_verify_detects_rewritten_and_rechained_log)
{
	struct fixture	 fx;
	char		 path[PATH_MAX];
	const char	*ft[2] = { "\"note 7\"", "\"NOTE 7\"" };

	fx_init(&fx, 30, 0);
	tu_logfile(&fx.c, 0, path, sizeof(path));
	edit_file(path, replace_text, ft);
	edit_file(path, rechain, NULL);
	fx.o.pubkey = NULL;
	fx.o.checkpoints = NULL;
	ck_tampered(&fx, "checkpoint does not sign the record before it");
	fx.o.checkpoints = fx.c.checkpoint_dir;
	ck_tampered(&fx, "rewritten");
	fx_free(&fx);
}
END_TEST

START_TEST(test_torn_tail_is_a_warning)
{
	struct fixture	 fx;
	char		 path[PATH_MAX];

	fx_init(&fx, 10, 0);
	tu_logfile(&fx.c, 0, path, sizeof(path));
	edit_file(path, append_torn, NULL);
	ck_assert_int_eq(fx_verify(&fx), VERIFY_OK);
	ck_assert_ptr_nonnull(strstr(fx.r.warning, "incomplete last line"));
	fx_free(&fx);
}
END_TEST

START_TEST(test_altered_final_newline_detected)
{
	struct fixture	 fx;
	char		 path[PATH_MAX], *d;
	size_t		 len;

	fx_init(&fx, 10, 0);
	tu_logfile(&fx.c, 0, path, sizeof(path));
	d = tu_read(path, &len);
	d[len - 1] = ' ';
	tu_write(path, d, len);
	free(d);
	ck_tampered(&fx, "newline");
	fx_free(&fx);
}
END_TEST

START_TEST(test_empty_directory_is_an_error)
{
	struct verify_opts	 o;
	struct verify_report	 r;
	char			 dir[PATH_MAX];

	memset(&o, 0, sizeof(o));
	tu_tmpdir(dir, sizeof(dir));
	ck_assert_int_eq(verify_dir(dir, &o, &r), VERIFY_ERROR);
	ck_assert_int_eq(verify_dir("/nonexistent/stockade", &o, &r),
	    VERIFY_ERROR);
}
END_TEST

START_TEST(test_offhost_checkpoint_with_bad_signature)
{
	struct fixture	 fx;
	char		 path[PATH_MAX];
	size_t		 len, off;
	char		*d;

	fx_init(&fx, 10, 0);
	tu_path(path, sizeof(path), fx.c.checkpoint_dir, CHECKPOINT_FILE);
	d = tu_read(path, &len);
	/* Change one base64 character of the first signature. */
	off = (size_t)(strstr(d, "\"sig\":\"") - d) + 7;
	d[off] = d[off] == 'A' ? 'B' : 'A';
	tu_write(path, d, len);
	free(d);
	ck_tampered(&fx, "signature does not verify");
	fx_free(&fx);
}
END_TEST

/*
 * Every single-bit flip anywhere in a 50-event log must be detected: every
 * kind of record the fixture writes (chain start, events, checkpoints) is
 * in it.  The log is verified as a buffer in-process; each flip is one
 * full verify, so the cost grows with the square of the log's length.
 */
START_TEST(test_bit_flip_sweep_50_events)
{
	struct fixture	 fx;
	struct verify_opts o;
	struct verify_report r;
	char		 path[PATH_MAX], *d;
	const char	*name;
	size_t		 len, i;
	unsigned	 bit, missed = 0;

	fx_init(&fx, 50, 0);
	tu_logfile(&fx.c, 0, path, sizeof(path));
	d = tu_read(path, &len);
	name = strrchr(path, '/') + 1;
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(verify_buffer(name, d, len, &o, &r), VERIFY_OK);
	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			d[i] ^= (char)(1 << bit);
			if (verify_buffer(name, d, len, &o, &r) != VERIFY_TAMPERED &&
			    missed++ < 5)
				fprintf(stderr, "undetected flip: byte %zu bit %u\n",
				    i, bit);
			d[i] ^= (char)(1 << bit);
		}
	}
	ck_assert_uint_eq(missed, 0);
	free(d);
	fx_free(&fx);
}
END_TEST

static Suite *
verify_suite(void)
{
	Suite	*s = suite_create("verify");
	TCase	*tc = tcase_create("tamper");
	TCase	*sweep = tcase_create("sweep");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_intact_log_verifies);
	tcase_add_test(tc, test_verify_detects_flipped_bit);
	tcase_add_test(tc, test_verify_detects_deleted_line);
	tcase_add_test(tc, test_verify_detects_swapped_lines);
	tcase_add_test(tc, test_verify_detects_duplicated_line);
	tcase_add_test(tc, test_verify_detects_line_cut_in_half);
	tcase_add_test(tc, test_verify_detects_deleted_middle_file);
	tcase_add_test(tc, test_verify_detects_deleted_oldest_file_without_retention);
	tcase_add_test(tc, test_retention_removal_verifies);
	tcase_add_test(tc, test_verify_detects_tail_truncation_against_checkpoint);
	tcase_add_test(tc, test_verify_detects_deleted_log_against_checkpoint);
	tcase_add_test(tc, test_verify_detects_wholesale_replacement);
	tcase_add_test(tc, test_verify_detects_rewritten_and_rechained_log);
	tcase_add_test(tc, test_torn_tail_is_a_warning);
	tcase_add_test(tc, test_altered_final_newline_detected);
	tcase_add_test(tc, test_empty_directory_is_an_error);
	tcase_add_test(tc, test_offhost_checkpoint_with_bad_signature);
	suite_add_tcase(s, tc);
	tcase_set_timeout(sweep, 600);
	tcase_add_test(sweep, test_bit_flip_sweep_50_events);
	suite_add_tcase(s, sweep);
	return s;
}

CHECK_MAIN(verify_suite)
