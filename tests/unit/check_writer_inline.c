/*
 * The loop thread's own write of a small batch (writer_io_inline): an ack
 * still follows its fdatasync, and a failed fdatasync there fails the
 * writer it covered and takes the same retry path as the I/O thread's.
 * fdatasync is replaced in this binary (the archives' calls bind to it),
 * so a test sees which thread synced and can make a sync fail.
 */
#include <sys/syscall.h>

#include <pthread.h>
#include <time.h>

#include "testutil.h"
#include "writer_int.h"

static pthread_t	 loop_thread;
static int		 fail_syncs;		/* atomic */
static unsigned		 syncs_ok;		/* atomic: every thread's */
static unsigned		 loop_syncs, loop_sync_fails;	/* atomic */

int
fdatasync(int fd)
{
	int	 on_loop = pthread_equal(pthread_self(), loop_thread);

	if (__atomic_load_n(&fail_syncs, __ATOMIC_SEQ_CST)) {
		if (on_loop)
			__atomic_add_fetch(&loop_sync_fails, 1,
			    __ATOMIC_SEQ_CST);
		errno = EIO;
		return -1;
	}
	if (syscall(SYS_fdatasync, fd) == -1)
		return -1;
	__atomic_add_fetch(&syncs_ok, 1, __ATOMIC_SEQ_CST);
	if (on_loop)
		__atomic_add_fetch(&loop_syncs, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* What each answer saw: the sync count when it came, and its status. */
struct probe {
	unsigned		 answers, acked;
	unsigned		 syncs_at_ack;
	enum writer_status	 st;
};

static void
probe_done(void *arg, enum writer_status st, uint64_t seq,
    const uint8_t hash[SHA256_LEN])
{
	struct probe	*p = arg;

	p->answers++;
	p->st = st;
	if (st == WRITER_OK)
		p->acked++;
	p->syncs_at_ack = __atomic_load_n(&syncs_ok, __ATOMIC_SEQ_CST);
}

static void
setup(char *dir, size_t len, struct audit_conf *c, struct tu_run *r)
{
	loop_thread = pthread_self();
	tu_tmpdir(dir, len);
	tu_keygen(dir);
	tu_conf(c, dir);
	c->retry_seconds = 1;
	tu_start(r, c);
	tu_drain(r);
}

/* Until the I/O thread owns nothing and wants nothing (zeros ahead). */
static void
wait_io_idle(struct writer *w)
{
	struct timespec	 pause = { 0, 1000000 };
	int		 idle, i;

	for (i = 0; i < 5000; i++) {
		pthread_mutex_lock(&w->mu);
		idle = w->io_owner == OWN_NONE && w->held == NULL &&
		    w->done == NULL && !writer_io_zero_wanted(w);
		pthread_mutex_unlock(&w->mu);
		if (idle)
			return;
		nanosleep(&pause, NULL);
	}
	ck_abort_msg("the I/O thread never went idle");
}

static enum writer_status
append_probe(struct tu_run *r, struct probe *p)
{
	struct peer	 peer = { 1000, 1000, 4242 };
	uint8_t		 hash[SHA256_LEN];
	uint64_t	 seq;
	json_t		*f = json_pack("{s:s, s:s}", "principal", "user:test",
			    "message", "inline");
	enum writer_status st;

	st = writer_append(r->w, "operator_note", f, &peer, 1, probe_done, p,
	    &seq, hash);
	json_decref(f);
	return st;
}

static void
settle(struct tu_run *r, struct probe *p, unsigned answers)
{
	while (p->answers < answers)
		event_base_loop(r->base, EVLOOP_ONCE);
}

START_TEST(test_inline_ack_follows_its_sync)
{
	struct audit_conf	 c;
	struct tu_run		 r;
	struct probe		 p = { 0 };
	char			 dir[PATH_MAX];
	unsigned		 i, before, inline_acks = 0, loop0;
	json_t			*st;

	setup(dir, sizeof(dir), &c, &r);
	for (i = 0; i < 20; i++) {
		wait_io_idle(r.w);
		before = __atomic_load_n(&syncs_ok, __ATOMIC_SEQ_CST);
		loop0 = __atomic_load_n(&loop_syncs, __ATOMIC_SEQ_CST);
		ck_assert_int_eq(append_probe(&r, &p), WRITER_OK);
		ck_assert_uint_eq(p.answers, i);	/* not before a sync */
		settle(&r, &p, i + 1);
		ck_assert_int_eq(p.st, WRITER_OK);
		ck_assert_msg(p.syncs_at_ack > before,
		    "ack %u came before any fdatasync of its batch", i);
		if (__atomic_load_n(&loop_syncs, __ATOMIC_SEQ_CST) > loop0)
			inline_acks++;
	}
	/* The I/O thread was idle each time: the loop wrote every one. */
	ck_assert_uint_eq(inline_acks, 20);
	st = writer_status_json(r.w);
	ck_assert_int_ge(json_integer_value(json_object_get(st,
	    "inline_batches")), 20);
	json_decref(st);
	tu_stop(&r);
}
END_TEST

START_TEST(test_inline_failed_sync_fails_the_writer)
{
	struct audit_conf	 c;
	struct tu_run		 r;
	struct probe		 p = { 0 };
	char			 dir[PATH_MAX];
	uint64_t		 durable;
	json_t			*st;
	const char		*state;

	setup(dir, sizeof(dir), &c, &r);
	wait_io_idle(r.w);
	durable = writer_durable_seq(r.w);
	__atomic_store_n(&fail_syncs, 1, __ATOMIC_SEQ_CST);
	ck_assert_int_eq(append_probe(&r, &p), WRITER_OK);
	settle(&r, &p, 1);
	ck_assert_uint_eq(__atomic_load_n(&loop_sync_fails, __ATOMIC_SEQ_CST),
	    1);			/* the inline path met the error */
	ck_assert_uint_eq(p.acked, 0);
	ck_assert_int_eq(p.st, WRITER_SUSPENDED);
	ck_assert_uint_eq(writer_durable_seq(r.w), durable);
	st = writer_status_json(r.w);
	state = json_string_value(json_object_get(st, "state"));
	ck_assert_str_eq(state, "failed");
	json_decref(st);
	/* Refused while failed, as on the I/O thread's path. */
	ck_assert_int_eq(append_probe(&r, &p), WRITER_SUSPENDED);

	/* The disk recovers: the retry re-reads the head, writes resume. */
	__atomic_store_n(&fail_syncs, 0, __ATOMIC_SEQ_CST);
	do {
		event_base_loop(r.base, EVLOOP_ONCE);
		st = writer_status_json(r.w);
		state = json_string_value(json_object_get(st, "state"));
		ck_assert_ptr_nonnull(state);
		ck_assert_int_eq(strcmp(state, "running") == 0 ||
		    strcmp(state, "failed") == 0, 1);
		durable = strcmp(state, "running") == 0;
		json_decref(st);
	} while (!durable);
	tu_drain(&r);
	wait_io_idle(r.w);
	ck_assert_int_eq(append_probe(&r, &p), WRITER_OK);
	settle(&r, &p, 2);
	ck_assert_int_eq(p.st, WRITER_OK);
	tu_stop(&r);
}
END_TEST

static Suite *
writer_inline_suite(void)
{
	Suite	*s = suite_create("writer_inline");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_inline_ack_follows_its_sync);
	tcase_add_test(tc, test_inline_failed_sync_fails_the_writer);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(writer_inline_suite)
