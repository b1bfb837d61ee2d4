/*
 * Group commit, checkpoints, rotation and crash recovery of the writer,
 * driven in-process with a real event loop and real files.
 */
#include "testutil.h"
#include "checkpoint.h"
#include "retention.h"
#include "verify.h"

static void
setup(char *dir, size_t len, struct audit_conf *c)
{
	tu_tmpdir(dir, len);
	tu_keygen(dir);
	tu_conf(c, dir);
}

static unsigned
count_in_file(const char *path, const char *needle)
{
	size_t		 len;
	char		*d = tu_read(path, &len), *p = d;
	unsigned	 n = 0;

	while ((p = memmem(p, len - (size_t)(p - d), needle, strlen(needle)))
	    != NULL) {
		n++;
		p += strlen(needle);
	}
	free(d);
	return n;
}

static enum verify_result
verify_log(const struct audit_conf *c, const char *dir,
    struct verify_report *r)
{
	struct verify_opts	 o = { .pubkey = tu_pubkey(dir),
				   .checkpoints = c->checkpoint_dir };
	enum verify_result	 rv = verify_dir(c->log_dir, &o, r);

	EVP_PKEY_free(o.pubkey);
	return rv;
}

START_TEST(test_sync_ack_means_on_disk)
{
	struct audit_conf	 c;
	struct tu_run		 r;
	char			 dir[PATH_MAX], path[PATH_MAX];

	setup(dir, sizeof(dir), &c);
	tu_start(&r, &c);
	ck_assert_int_eq(tu_append(&r, 1), WRITER_OK);
	ck_assert_uint_eq(r.acked, 0);		/* not before the fdatasync */
	tu_settle(&r, 1);
	ck_assert_uint_eq(r.acked, 1);
	tu_logfile(&c, 0, path, sizeof(path));
	ck_assert_uint_eq(count_in_file(path, "\"message\":\"note 1\""), 1);
	tu_stop(&r);
}
END_TEST

START_TEST(test_async_append_sequenced_at_once)
{
	struct audit_conf	 c;
	struct tu_run		 r;
	struct peer		 p = { 0, 0, 1 };
	char			 dir[PATH_MAX];
	uint8_t			 hash[SHA256_LEN];
	uint64_t		 seq1, seq2;
	json_t			*f = json_pack("{s:s, s:s}", "principal", "p",
				    "message", "m");

	setup(dir, sizeof(dir), &c);
	tu_start(&r, &c);
	ck_assert_int_eq(writer_append(r.w, "operator_note", f, &p, 0, NULL,
	    NULL, &seq1, hash), WRITER_OK);
	ck_assert_int_eq(writer_append(r.w, "operator_note", f, &p, 0, NULL,
	    NULL, &seq2, hash), WRITER_OK);
	ck_assert_uint_eq(seq2, seq1 + 1);
	json_decref(f);
	tu_stop(&r);
}
END_TEST

/*
 * A batch nobody waits on (sync false) is written at once but its
 * fdatasync waits up to 2 ms for the next batch's: an async record and a
 * synchronous one right after it cost one fdatasync, not two.  Timing on
 * a loaded machine can split any one try, so it has a few; without the
 * hold every try shows as many syncs as batches.
 */
START_TEST(test_async_batch_shares_the_next_sync)
{
	struct audit_conf	 c;
	struct tu_run		 r;
	struct peer		 p = { 0, 0, 1 };
	struct timespec		 pause = { 0, 200000 };
	char			 dir[PATH_MAX];
	uint8_t			 hash[SHA256_LEN];
	uint64_t		 seq, b0, s0, b1 = 0, s1 = 0;
	json_t			*f = json_pack("{s:s, s:s}", "principal", "p",
				    "message", "m"), *st;
	int			 try, shared = 0;

	setup(dir, sizeof(dir), &c);
	tu_start(&r, &c);
	tu_drain(&r);
	for (try = 0; try < 10 && !shared; try++) {
		st = writer_status_json(r.w);
		b0 = (uint64_t)json_integer_value(json_object_get(st, "batches"));
		s0 = (uint64_t)json_integer_value(json_object_get(st, "syncs"));
		json_decref(st);
		ck_assert_int_eq(writer_append(r.w, "operator_note", f, &p, 0,
		    NULL, NULL, &seq, hash), WRITER_OK);
		/* The loop hands it to the I/O thread, which writes it. */
		event_base_loop(r.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		nanosleep(&pause, NULL);
		ck_assert_int_eq(tu_append(&r, (unsigned)try), WRITER_OK);
		tu_settle(&r, (unsigned)try + 1);
		tu_drain(&r);
		st = writer_status_json(r.w);
		b1 = (uint64_t)json_integer_value(json_object_get(st, "batches"));
		s1 = (uint64_t)json_integer_value(json_object_get(st, "syncs"));
		ck_assert_int_eq(json_integer_value(json_object_get(st,
		    "durable_seq")), json_integer_value(json_object_get(st,
		    "seq")));
		json_decref(st);
		shared = b1 - b0 == 2 && s1 - s0 == 1;
	}
	ck_assert_msg(shared, "last try: %llu batches, %llu fdatasyncs",
	    (unsigned long long)(b1 - b0), (unsigned long long)(s1 - s0));
	json_decref(f);
	tu_stop(&r);
}
END_TEST

START_TEST(test_batch_full_applies_backpressure)
{
	struct audit_conf	 c;
	struct tu_run		 r;
	struct peer		 p = { 0, 0, 1 };
	char			 dir[PATH_MAX];
	uint8_t			 hash[SHA256_LEN];
	uint64_t		 seq;
	unsigned		 i;
	json_t			*f = json_pack("{s:s, s:s}", "principal", "p",
				    "message", "m");

	setup(dir, sizeof(dir), &c);
	c.batch_max_events = 4;
	tu_start(&r, &c);
	tu_drain(&r);		/* chain_start and the first checkpoint */
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(writer_append(r.w, "operator_note", f, &p, 1,
		    tu_done, &r, &seq, hash), WRITER_OK);
	ck_assert_int_eq(writer_append(r.w, "operator_note", f, &p, 1, tu_done,
	    &r, &seq, hash), WRITER_FULL);
	tu_settle(&r, 4);
	ck_assert_int_eq(writer_append(r.w, "operator_note", f, &p, 1, tu_done,
	    &r, &seq, hash), WRITER_OK);
	tu_settle(&r, 5);
	json_decref(f);
	tu_stop(&r);
}
END_TEST

START_TEST(test_oversized_event_refused)
{
	struct audit_conf	 c;
	struct tu_run		 r;
	struct peer		 p = { 0, 0, 1 };
	char			 dir[PATH_MAX], *big;
	uint8_t			 hash[SHA256_LEN];
	uint64_t		 seq;
	json_t			*f;

	setup(dir, sizeof(dir), &c);
	c.max_event_bytes = 1024;
	tu_start(&r, &c);
	big = xcalloc(1, 8192);
	memset(big, 'x', 8191);
	f = json_pack("{s:s, s:s}", "principal", "p", "message", big);
	ck_assert_int_eq(writer_append(r.w, "operator_note", f, &p, 1, tu_done,
	    &r, &seq, hash), WRITER_TOO_LARGE);
	json_decref(f);
	free(big);
	tu_stop(&r);
}
END_TEST

START_TEST(test_checkpoint_every_n_events_and_offhost)
{
	struct audit_conf	 c;
	struct verify_report	 vr;
	char			 dir[PATH_MAX], path[PATH_MAX];

	setup(dir, sizeof(dir), &c);
	c.checkpoint_events = 10;
	tu_make_log(&c, 35);
	tu_logfile(&c, 0, path, sizeof(path));
	/* start + 3 by count + the final one on stop */
	ck_assert_uint_ge(count_in_file(path, "\"event\":\"checkpoint\""), 5);
	tu_path(path, sizeof(path), c.checkpoint_dir, CHECKPOINT_FILE);
	ck_assert_uint_ge(count_in_file(path, "\"sig\":"), 5);
	ck_assert_int_eq(verify_log(&c, dir, &vr), VERIFY_OK);
	ck_assert_uint_eq(vr.unsigned_tail, 0);	/* the log ends in a checkpoint */
}
END_TEST

START_TEST(test_rotation_keeps_files_near_limit)
{
	struct audit_conf	 c;
	struct verify_report	 vr;
	char			 dir[PATH_MAX], path[PATH_MAX];
	struct stat		 st;
	size_t			 i, n;

	setup(dir, sizeof(dir), &c);
	c.max_file_bytes = 4096;
	tu_make_log(&c, 100);
	n = tu_nfiles(&c);
	ck_assert_uint_ge(n, 5);
	for (i = 0; i + 1 < n; i++) {
		tu_logfile(&c, i, path, sizeof(path));
		ck_assert_int_eq(stat(path, &st), 0);
		/* One record past the limit at most (records here are < 1 KiB). */
		ck_assert_int_lt(st.st_size, 4096 + 1024);
	}
	tu_logfile(&c, 1, path, sizeof(path));
	ck_assert_uint_eq(count_in_file(path, "\"event\":\"rotate\""), 1);
	ck_assert_int_eq(verify_log(&c, dir, &vr), VERIFY_OK);
}
END_TEST

/*
 * The daemon's own policy_load with its text kept: the blob goes to the
 * folder of the file its record lands in, also when that record is the
 * one that rotates to a new file; verify checks every one.
 */
START_TEST(test_own_kept_blob_follows_its_record_across_rotation)
{
	struct audit_conf	 c;
	struct verify_report	 vr;
	struct retained_code	 rc;
	struct tu_run		 r;
	char			 dir[PATH_MAX], text[64];
	unsigned		 i;

	setup(dir, sizeof(dir), &c);
	c.max_file_bytes = 4096;
	tu_start(&r, &c);
	for (i = 0; i < 60; i++) {
		ck_assert_int_eq(tu_append(&r, i), WRITER_OK);
		tu_settle(&r, i + 1);
		memset(&rc, 0, sizeof(rc));
		snprintf(text, sizeof(text), "checkpoint: {every_events: %u}\n",
		    i + 1);
		sha256_hex(text, strlen(text), rc.hex);
		rc.data = strdup(text);
		rc.len = strlen(text);
		writer_append_own_kept(r.w, "policy_load", json_pack("{s:s, "
		    "s:[{s:s, s:s, s:b}], s:b}", "program", "stockade-auditd",
		    "files", "path", "/etc/audit.yaml", "sha256", rc.hex, "kept",
		    1, "ok", 1), &rc);
		retention_free(&rc);
		tu_drain(&r);
	}
	tu_stop(&r);
	ck_assert_uint_ge(tu_nfiles(&c), 5);
	ck_assert_int_eq(verify_log(&c, dir, &vr), VERIFY_OK);
}
END_TEST

START_TEST(test_recovery_cuts_torn_tail_and_records_it)
{
	struct audit_conf	 c;
	struct verify_report	 vr;
	char			 dir[PATH_MAX], path[PATH_MAX];
	const char		*torn = "{\"seq\":4711,\"prev\":\"ab";
	int			 fd;

	setup(dir, sizeof(dir), &c);
	tu_make_log(&c, 5);
	tu_logfile(&c, 0, path, sizeof(path));
	fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_eq(write_all(fd, torn, strlen(torn)), 0);
	close(fd);
	tu_make_log(&c, 5);
	ck_assert_uint_eq(count_in_file(path, "\"event\":\"recovery\""), 1);
	ck_assert_uint_eq(count_in_file(path, "\"action\":\"cut_torn_tail\""), 1);
	ck_assert_uint_eq(count_in_file(path, "4711"), 0);
	ck_assert_int_eq(verify_log(&c, dir, &vr), VERIFY_OK);
	ck_assert_str_eq(vr.warning, "");
}
END_TEST

START_TEST(test_recovery_refuses_chain_broken_mid_file)
{
	struct audit_conf	 c;
	char			 dir[PATH_MAX], path[PATH_MAX], err[1024], *d;
	size_t			 len;
	long			 off;
	EVP_PKEY		*key;
	struct event_base	*base;

	setup(dir, sizeof(dir), &c);
	tu_make_log(&c, 10);
	tu_logfile(&c, 0, path, sizeof(path));
	d = tu_read(path, &len);
	off = tu_line_off(d, len, 5);
	d[off + 40] ^= 1;
	tu_write(path, d, len);
	free(d);
	base = event_base_new();
	event_base_priority_init(base, 3);
	key = ed25519_load_private(c.key_path, err, sizeof(err));
	ck_assert_ptr_null(writer_start(base, &c, key, err, sizeof(err)));
	ck_assert_msg(strstr(err, ":5 seq 5") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "refusing") != NULL, "%s", err);
	EVP_PKEY_free(key);
	event_base_free(base);
}
END_TEST

START_TEST(test_recovery_drops_empty_newest_file)
{
	struct audit_conf	 c;
	struct verify_report	 vr;
	char			 dir[PATH_MAX], path[PATH_MAX];

	setup(dir, sizeof(dir), &c);
	tu_make_log(&c, 3);
	/* As if the daemon died right after creating the next file. */
	tu_path(path, sizeof(path), c.log_dir, "audit-00000000000000000100.log");
	tu_write(path, "", 0);
	tu_make_log(&c, 3);
	ck_assert_int_eq(access(path, F_OK), -1);
	tu_logfile(&c, 0, path, sizeof(path));
	ck_assert_uint_eq(count_in_file(path, "removed_empty_file"), 1);
	ck_assert_int_eq(verify_log(&c, dir, &vr), VERIFY_OK);
}
END_TEST

START_TEST(test_restart_continues_chain)
{
	struct audit_conf	 c;
	struct verify_report	 vr;
	char			 dir[PATH_MAX], path[PATH_MAX];

	setup(dir, sizeof(dir), &c);
	tu_make_log(&c, 5);
	tu_make_log(&c, 5);
	tu_make_log(&c, 5);
	ck_assert_uint_eq(tu_nfiles(&c), 1);
	tu_logfile(&c, 0, path, sizeof(path));
	ck_assert_uint_eq(count_in_file(path, "\"event\":\"chain_start\""), 1);
	ck_assert_int_eq(verify_log(&c, dir, &vr), VERIFY_OK);
	ck_assert_uint_eq(vr.records, vr.last_seq);
}
END_TEST

START_TEST(test_status_reports_head)
{
	struct audit_conf	 c;
	struct tu_run		 r;
	char			 dir[PATH_MAX];
	json_t			*st;

	setup(dir, sizeof(dir), &c);
	tu_start(&r, &c);
	tu_append(&r, 0);
	tu_settle(&r, 1);
	st = writer_status_json(r.w);
	ck_assert_str_eq(json_string_value(json_object_get(st, "state")),
	    "running");
	ck_assert_int_eq(json_integer_value(json_object_get(st, "durable_seq")),
	    json_integer_value(json_object_get(st, "seq")));
	json_decref(st);
	tu_stop(&r);
}
END_TEST

static Suite *
writer_suite(void)
{
	Suite	*s = suite_create("writer");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sync_ack_means_on_disk);
	tcase_add_test(tc, test_async_append_sequenced_at_once);
	tcase_add_test(tc, test_async_batch_shares_the_next_sync);
	tcase_add_test(tc, test_batch_full_applies_backpressure);
	tcase_add_test(tc, test_oversized_event_refused);
	tcase_add_test(tc, test_checkpoint_every_n_events_and_offhost);
	tcase_add_test(tc, test_rotation_keeps_files_near_limit);
	tcase_add_test(tc, test_own_kept_blob_follows_its_record_across_rotation);
	tcase_add_test(tc, test_recovery_cuts_torn_tail_and_records_it);
	tcase_add_test(tc, test_recovery_refuses_chain_broken_mid_file);
	tcase_add_test(tc, test_recovery_drops_empty_newest_file);
	tcase_add_test(tc, test_restart_continues_chain);
	tcase_add_test(tc, test_status_reports_head);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(writer_suite)
