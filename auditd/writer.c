/*
 * Group commit, the event loop side.  Records are sequenced (seq, prev,
 * ts, hash) into the filling batch at once; the I/O thread (writer_io.c)
 * takes that batch whenever it is free and hands it back on the done list
 * once it is on disk, and only then are synchronous senders answered.
 * A small batch one sender waits on, when the I/O thread is idle, the
 * loop thread writes and syncs itself (writer_io_inline), and answers at
 * once: two wake-ups fewer on a window-1 writer's round trip.
 * Every public function runs on the loop thread and holds `mu` while it
 * touches the filling batch, so the I/O thread may take it at any moment
 * between two of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "checkpoint.h"
#include "log.h"
#include "retention.h"
#include "util.h"
#include "writer_int.h"

#define LINE_OVERHEAD		1024	/* seq, prev, ts, peer, hash around fields */
#define PRIO_DONE		0


/* ------------------------------------------------------------ sequencing */

static void
batch_add_pending(struct batch *b, writer_done_cb *done, void *arg,
    uint64_t seq, const uint8_t hash[SHA256_LEN])
{
	struct pending	*p;

	if (b->nitems == b->capitems) {
		b->capitems = b->capitems ? b->capitems * 2 : 64;
		b->items = xrealloc(b->items, b->capitems * sizeof(*b->items));
	}
	p = &b->items[b->nitems++];
	p->done = done;
	p->arg = arg;
	p->seq = seq;
	memcpy(p->hash, hash, SHA256_LEN);
}

/* Adds the record chain_append just wrote to the filling batch's totals. */
static void
count_record(struct writer *w, size_t bytes)
{
	struct batch	*b = w->fill;

	if (b->records++ == 0)
		b->first_seq = w->chain.seq;
	b->last_seq = w->chain.seq;
	memcpy(b->last_hash, w->chain.hash, SHA256_LEN);
	w->active_bytes += bytes;
}

/* Starts a new file at the head of an empty filling batch.  Locked. */
static int
start_new_file(struct writer *w)
{
	struct batch	*b = w->fill;
	json_t		*fields;
	char		 ts[TS_LEN + 1];
	int		 rv;

	b->expired = logdir_expired(w->conf.log_dir, w->conf.keep_files,
	    w->active);
	fields = json_pack("{s:s, s:s, s:O}", "chain_id", w->chain_id,
	    "prev_file", w->active, "removed", b->expired);
	ts_now(ts);
	rv = chain_append(&w->chain, ts, "rotate", &w->self, fields,
	    BATCH_OWN_RESERVE, &b->data);
	json_decref(fields);
	if (rv == -1)
		return -1;
	b->newfile = 1;
	logfile_name(w->chain.seq, w->active);
	w->active_bytes = 0;
	count_record(w, b->data.len);
	return 0;
}

/*
 * Appends one record to the filling batch.  own: the daemon's own record,
 * allowed into the reserve beyond the writers' share.  Locked.
 */
static enum writer_status
append_record(struct writer *w, const char *event, const json_t *fields,
    const struct peer *peer, int own)
{
	struct batch	*b = w->fill;
	char		 ts[TS_LEN + 1];
	size_t		 before, maxline;

	if (b->records == 0 && w->active_bytes >= w->conf.max_file_bytes &&
	    start_new_file(w) == -1)
		return WRITER_FULL;
	/* A sample's characters may each take 12 bytes escaped (\uXXXX pairs). */
	maxline = own ? BATCH_OWN_RESERVE : w->conf.max_event_bytes +
	    LINE_OVERHEAD + 2 * 12 * w->conf.code_sample_bytes;
	ts_now(ts);
	before = b->data.len;
	if (chain_append(&w->chain, ts, event, peer, fields, maxline,
	    &b->data) == -1)
		return b->data.len + maxline > b->data.max ? WRITER_FULL :
		    WRITER_TOO_LARGE;
	count_record(w, b->data.len - before);
	w->since_cp++;
	return WRITER_OK;
}

/*
 * A batch is full at its event or byte ceiling, or once its file has
 * reached max_file_bytes: rotation happens between batches, so ending the
 * batch there keeps files within one record of their size limit.  Locked.
 */
static int
fill_is_full(const struct writer *w)
{
	return w->fill->records >= w->conf.batch_max_events ||
	    (w->fill->records > 0 &&
	    w->active_bytes >= w->conf.max_file_bytes) ||
	    w->fill->data.len + w->conf.max_event_bytes + LINE_OVERHEAD >
	    BATCH_BYTES_MAX;
}

/*
 * Asks for a write once the loop has read what is ready: the commit event
 * has the lowest priority, so a burst of events lands in one batch.
 */
static void
kick(struct writer *w)
{
	event_active(w->commit_ev, 0, 0);
}

static void	drain_done(struct writer *);

static void
commit_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct writer	*w = arg;

	/* The I/O thread idle and the batch small: no hand-off at all. */
	if (writer_io_inline(w)) {
		drain_done(w);
		return;
	}
	writer_lock(w);
	if (w->fill->records > 0) {
		w->kicked = 1;
		pthread_cond_signal(&w->cv);
	}
	writer_unlock(w);
}

static enum writer_status
refusal(struct writer *w)
{
	switch (w->state) {
	case W_FAILED:
		w->dropped++;
		w->dropped_total++;
		return w->fail_action == ACTION_KEEP_GOING ? WRITER_LOST :
		    WRITER_SUSPENDED;
	case W_HALTED:
		return WRITER_HALTED;
	default:
		return WRITER_STOPPING;
	}
}

/* Hands the code to the filling batch, whose file is now known.  Locked. */
static void
batch_add_blob(struct writer *w, struct retained_code *rc)
{
	struct batch	*b = w->fill;
	size_t		 i;

	snprintf(b->blob_file, sizeof(b->blob_file), "%s", w->active);
	for (i = 0; i < b->nblobs; i++)
		if (strcmp(b->blobs[i].hex, rc->hex) == 0)
			return;		/* the same code twice in a batch */
	if (b->nblobs == b->capblobs) {
		b->capblobs = b->capblobs ? b->capblobs * 2 : 8;
		b->blobs = xrealloc(b->blobs, b->capblobs * sizeof(*b->blobs));
	}
	memcpy(b->blobs[b->nblobs].hex, rc->hex, sizeof(rc->hex));
	b->blobs[b->nblobs].data = rc->data;
	b->blobs[b->nblobs].len = rc->len;
	b->nblobs++;
	b->blob_bytes += rc->len;
	rc->data = NULL;
}

enum writer_status
writer_append(struct writer *w, const char *event, const json_t *fields,
    const struct peer *peer, int sync, writer_done_cb *done, void *arg,
    uint64_t *seq, uint8_t hash[SHA256_LEN])
{
	return writer_append_code(w, event, fields, NULL, peer, sync, done,
	    arg, seq, hash);
}

enum writer_status
writer_append_code(struct writer *w, const char *event, const json_t *fields,
    struct retained_code *rc, const struct peer *peer, int sync,
    writer_done_cb *done, void *arg, uint64_t *seq, uint8_t hash[SHA256_LEN])
{
	enum writer_status	 r;
	struct retained_code	*b;
	size_t			 bytes = 0;

	if (rc != NULL && rc->data == NULL)
		rc = NULL;
	for (b = rc; b != NULL; b = b->next)	/* a policy_load's files */
		bytes += b->len;
	if (w->state != W_RUNNING)
		return refusal(w);
	writer_lock(w);
	if (fill_is_full(w) || (rc != NULL && w->fill->records > 0 &&
	    w->fill->blob_bytes + bytes > BATCH_BLOB_BYTES_MAX))
		r = WRITER_FULL;
	else if ((r = append_record(w, event, fields, peer, 0)) == WRITER_OK) {
		for (b = rc; b != NULL; b = b->next)
			batch_add_blob(w, b);
		/* Registered before unlocking: the batch may leave any time. */
		if (sync)
			batch_add_pending(w->fill, done, arg, w->chain.seq,
			    w->chain.hash);
		*seq = w->chain.seq;
		memcpy(hash, w->chain.hash, SHA256_LEN);
		if (w->since_cp >= w->conf.checkpoint_events)
			writer_checkpoint_locked(w);
	}
	writer_unlock(w);
	if (r == WRITER_FULL)
		w->want_resume = 1;
	else if (r == WRITER_OK)
		kick(w);
	return r;
}

/* The daemon's own record.  Locked. */
void
writer_own_locked(struct writer *w, const char *event, json_t *fields)
{
	if (fields == NULL) {
		/* json_pack failed: a bug, but never a silent loss. */
		log_warnx("audit event %s could not be built", event);
		fields = json_pack("{s:s}", "error", "event fields could not "
		    "be encoded");
	}
	if (w->state != W_RUNNING && w->state != W_STOPPING) {
		log_warnx("audit event %s not recorded: log unavailable", event);
		w->dropped++;
		w->dropped_total++;
	} else if (append_record(w, event, fields, &w->self, 1) != WRITER_OK) {
		log_warnx("audit event %s not recorded: batch full", event);
		w->dropped_total++;
	} else
		kick(w);
	json_decref(fields);
}

void
writer_append_own(struct writer *w, const char *event, json_t *fields)
{
	writer_lock(w);
	writer_own_locked(w, event, fields);
	writer_unlock(w);
}

void
writer_append_own_kept(struct writer *w, const char *event, json_t *fields,
    struct retained_code *rc)
{
	struct retained_code	*b;
	uint64_t		 seq;

	writer_lock(w);
	seq = w->chain.seq;
	writer_own_locked(w, event, fields);
	/* In the filling batch (the lock is still held), after the record
	 * chose its file, as writer_append_code adds them. */
	for (b = rc; w->chain.seq != seq && b != NULL; b = b->next)
		if (b->data != NULL)
			batch_add_blob(w, b);
	writer_unlock(w);
}

/*
 * Arms the time-based checkpoint for every_seconds after the last
 * checkpoint of any kind.  Measured from there, not from now, so that
 * neither a reload nor a checkpoint by count ever pushes it back.
 */
static void
cp_timer_arm(struct writer *w)
{
	uint64_t	 due, now = mono_ms(), left;
	struct timeval	 tv;

	due = w->cp_mono_ms + (uint64_t)w->conf.checkpoint_seconds * 1000;
	left = due > now ? due - now : 0;
	tv.tv_sec = (time_t)(left / 1000);
	tv.tv_usec = (suseconds_t)(left % 1000) * 1000;
	evtimer_add(w->cp_ev, &tv);
}

/* Signs the head and records the checkpoint.  Locked. */
void
writer_checkpoint_locked(struct writer *w)
{
	struct checkpoint	 cp;
	json_t			*rec;

	memset(&cp, 0, sizeof(cp));
	memcpy(cp.chain_id, w->chain_id, sizeof(cp.chain_id));
	memcpy(cp.node, w->conf.node_id, sizeof(cp.node));
	cp.seq = w->chain.seq;
	memcpy(cp.hash, w->chain.hash, SHA256_LEN);
	ts_now(cp.ts);
	if (checkpoint_sign(&cp, w->key) == -1) {
		log_warnx("checkpoint signature failed");
		return;
	}
	rec = checkpoint_record(&cp);
	if (append_record(w, "checkpoint", rec, &w->self, 1) != WRITER_OK) {
		log_warnx("checkpoint not recorded: batch full");
		json_decref(rec);
		return;
	}
	json_decref(rec);
	if (w->conf.checkpoint_dir[0] != '\0' &&
	    checkpoint_line(&cp, &w->fill->offhost) == -1)
		log_warnx("off-host checkpoint dropped: too many in one batch");
	/* Status names it once its batch is on disk (batch_done). */
	w->fill->cp_seq = w->cp_seq = w->chain.seq;
	memcpy(w->fill->cp_ts, cp.ts, sizeof(w->fill->cp_ts));
	w->since_cp = 0;
	w->cp_mono_ms = mono_ms();
	cp_timer_arm(w);
	kick(w);
}

void
writer_checkpoint(struct writer *w)
{
	if (w->state != W_RUNNING)
		return;
	writer_lock(w);
	writer_checkpoint_locked(w);
	writer_unlock(w);
}

/* ------------------------------------------------------------ completion */

static void
fail_batch(struct batch *b, enum writer_status st)
{
	size_t	 i;

	for (i = 0; i < b->nitems; i++)
		b->items[i].done(b->items[i].arg, st, 0, NULL);
	batch_free(b);
}

static void
maybe_stopped(struct writer *w)
{
	if (w->state == W_STOPPING && w->durable_seq == w->chain.seq) {
		w->state = W_STOPPED;
		if (w->idle_cb != NULL)
			w->idle_cb(w->idle_arg);
	}
}

static void
writer_fail(struct writer *w, struct batch *b)
{
	int			 full = (b->err == ENOSPC || b->err == EDQUOT);
	enum writer_status	 st;
	struct timeval		 tv;
	struct batch		*fill, *next;
	uint64_t		 lost;

	w->fail_action = full ? w->conf.disk_full_action :
	    w->conf.disk_error_action;
	snprintf(w->fail_reason, sizeof(w->fail_reason), "%s: %s: %s",
	    full ? "disk full" : "disk error", b->what, strerror(b->err));
	ts_now(w->fail_since);
	log_warnx("audit log %s/%s: %s; action %s", w->conf.log_dir, w->active,
	    w->fail_reason, audit_action_name(w->fail_action));
	st = w->fail_action == ACTION_HALT ? WRITER_HALTED :
	    w->fail_action == ACTION_KEEP_GOING ? WRITER_LOST :
	    WRITER_SUSPENDED;
	/* The I/O thread has stopped (io_failed); what it had not taken
	 * goes too.  Every record not durable is gone: senders hear it now. */
	writer_lock(w);
	fill = w->fill;
	w->fill = batch_new();
	writer_unlock(w);
	lost = fill->records;
	/* b and the batches after it on the done list: the I/O thread
	 * hands several back at once when one fdatasync covered them. */
	for (; b != NULL; b = next) {
		next = b->next;
		lost += b->records;
		fail_batch(b, st);
	}
	w->dropped += lost;
	w->dropped_total += lost;
	fail_batch(fill, st);
	chain_set_head(&w->chain, w->durable_seq, w->durable_hash);
	/* Checkpoints in the failed batches went with them. */
	w->cp_seq = w->durable_cp_seq;
	w->since_cp = (unsigned)(w->durable_seq - w->durable_cp_seq);
	if (w->state == W_STOPPING) {
		w->state = W_STOPPED;
		if (w->idle_cb != NULL)
			w->idle_cb(w->idle_arg);
		return;
	}
	if (w->fail_action == ACTION_HALT) {
		w->state = W_HALTED;
		if (w->halt_cb != NULL)
			w->halt_cb(w->halt_arg);
		return;
	}
	w->state = W_FAILED;
	tv.tv_sec = w->conf.retry_seconds;
	tv.tv_usec = 0;
	evtimer_add(w->retry_ev, &tv);
}

/* A batch is on disk: answer its senders. */
static void
batch_done(struct writer *w, struct batch *b)
{
	size_t	 i;

	/* Read by the forwarders' threads (writer_durable_seq). */
	__atomic_store_n(&w->durable_seq, b->last_seq, __ATOMIC_RELEASE);
	memcpy(w->durable_hash, b->last_hash, SHA256_LEN);
	if (b->newfile)
		logfile_name(b->first_seq, w->durable_active);
	if (b->cp_seq != 0) {
		w->durable_cp_seq = b->cp_seq;
		memcpy(w->durable_cp_ts, b->cp_ts, sizeof(w->durable_cp_ts));
	}
	w->stat_batches++;
	w->stat_records += b->records;
	w->stat_bytes += b->data.len;
	if (b->records > w->stat_max_batch)
		w->stat_max_batch = b->records;
	w->dropped -= b->reported < w->dropped ? b->reported : w->dropped;
	for (i = 0; i < b->nitems; i++)
		b->items[i].done(b->items[i].arg, WRITER_OK, b->items[i].seq,
		    b->items[i].hash);
	if (b->offhost_err != 0) {
		log_warnx("off-host checkpoint %s: %s", w->conf.checkpoint_dir,
		    strerror(b->offhost_err));
		writer_append_own(w, "audit_error", json_pack("{s:s, s:s, s:s}",
		    "what", "off-host checkpoint write", "path",
		    w->conf.checkpoint_dir, "error", strerror(b->offhost_err)));
	}
	batch_free(b);
}

static void
done_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct writer	*w = arg;
	uint64_t	 n;

	if (read(w->efd, &n, sizeof(n)) != sizeof(n))
		return;
	drain_done(w);
}

/* Answers what is on disk, in order: from the I/O thread or inline. */
static void
drain_done(struct writer *w)
{
	struct batch	*b, *next;
	int		 full;

	writer_lock(w);
	b = w->done;
	w->done = NULL;
	w->done_tail = &w->done;
	writer_unlock(w);
	for (; b != NULL; b = next) {
		next = b->next;
		if (b->err == 0) {
			batch_done(w, b);
			continue;
		}
		/* The I/O thread stopped: this batch and any after it
		 * (covered by the same failed fdatasync) fail together. */
		writer_fail(w, b);
		return;
	}
	if (w->want_resume && w->resume_cb != NULL) {
		writer_lock(w);
		full = fill_is_full(w);
		writer_unlock(w);
		if (!full) {
			w->want_resume = 0;
			w->resume_cb(w->resume_arg);
		}
	}
	maybe_stopped(w);
}

static void
cp_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct writer	*w = arg;
	struct timeval	 tv = { w->conf.checkpoint_seconds, 0 };

	if (w->state == W_RUNNING && w->chain.seq > w->cp_seq)
		writer_checkpoint(w);		/* arms the next one */
	/* Nothing new to sign (or the signing failed): look a period on. */
	if (!evtimer_pending(w->cp_ev, NULL))
		evtimer_add(w->cp_ev, &tv);
}

/* ------------------------------------------------------------ lifecycle */

struct writer *
writer_start(struct event_base *base, const struct audit_conf *conf,
    EVP_PKEY *key, char *err, size_t errlen)
{
	struct writer	*w = xcalloc(1, sizeof(*w));
	pthread_condattr_t ca;

	w->conf = *conf;
	w->base = base;
	w->key = key;
	w->self.uid = getuid();
	w->self.gid = getgid();
	w->self.pid = getpid();
	w->fd = -1;
	w->zero_fs = -1;
	chain_init(&w->chain);
	w->fill = batch_new();
	w->done_tail = &w->done;
	pthread_mutex_init(&w->mu, NULL);
	/* The I/O thread's timed waits (held batches) are on this clock. */
	if (pthread_condattr_init(&ca) != 0 ||
	    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&w->cv, &ca) != 0)
		fatalx("pthread_cond_init");
	pthread_condattr_destroy(&ca);
	if ((w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1)
		fatal("eventfd");
	w->commit_ev = event_new(base, -1, 0, commit_cb, w);
	w->done_ev = event_new(base, w->efd, EV_READ | EV_PERSIST, done_cb, w);
	w->retry_ev = evtimer_new(base, writer_retry_cb, w);
	w->cp_ev = evtimer_new(base, cp_timer_cb, w);
	if (w->commit_ev == NULL || w->done_ev == NULL || w->retry_ev == NULL ||
	    w->cp_ev == NULL)
		fatalx("event_new");
	/* Completions first, so acks go out before more reading. */
	event_priority_set(w->done_ev, PRIO_DONE);
	event_priority_set(w->commit_ev,
	    event_base_get_npriorities(base) - 1);
	event_add(w->done_ev, NULL);
	w->cp_mono_ms = mono_ms();
	cp_timer_arm(w);
	if (writer_recover(w, err, errlen) == -1) {
		writer_free(w);
		return NULL;
	}
	if (pthread_create(&w->thread, NULL, writer_io_main, w) != 0)
		fatalx("pthread_create");
	w->thread_started = 1;
	return w;
}

void
writer_on_resume(struct writer *w, writer_notify_cb *cb, void *arg)
{
	w->resume_cb = cb;
	w->resume_arg = arg;
}

void
writer_on_halt(struct writer *w, writer_notify_cb *cb, void *arg)
{
	w->halt_cb = cb;
	w->halt_arg = arg;
}

void
writer_reconfigure(struct writer *w, const struct audit_conf *c)
{
	writer_lock(w);
	w->conf.max_event_bytes = c->max_event_bytes;
	w->conf.code_sample_bytes = c->code_sample_bytes;
	w->conf.max_file_bytes = c->max_file_bytes;
	w->conf.keep_files = c->keep_files;
	w->conf.batch_max_events = c->batch_max_events;
	w->conf.checkpoint_events = c->checkpoint_events;
	w->conf.checkpoint_seconds = c->checkpoint_seconds;
	w->conf.disk_full_action = c->disk_full_action;
	w->conf.disk_error_action = c->disk_error_action;
	w->conf.retry_seconds = c->retry_seconds;
	/* Off: the I/O thread cuts the active file's zeros when next idle. */
	w->conf.zero_ahead = c->zero_ahead;
	if (!c->zero_ahead)
		pthread_cond_signal(&w->cv);
	/* A new every_seconds counts from the last checkpoint too. */
	cp_timer_arm(w);
	writer_unlock(w);
}

void
writer_shutdown(struct writer *w, writer_notify_cb *done, void *arg)
{
	w->idle_cb = done;
	w->idle_arg = arg;
	if (w->state != W_RUNNING) {
		w->state = W_STOPPED;
		done(arg);
		return;
	}
	w->state = W_STOPPING;
	writer_lock(w);
	writer_own_locked(w, "daemon_stop", json_pack("{s:s}", "program",
	    "stockade-auditd"));
	writer_checkpoint_locked(w);
	writer_unlock(w);
	maybe_stopped(w);
}

void
writer_free(struct writer *w)
{
	struct batch	*b, *next;

	if (w->thread_started) {
		writer_lock(w);
		w->quit = 1;
		pthread_cond_signal(&w->cv);
		writer_unlock(w);
		pthread_join(w->thread, NULL);
	}
	for (b = w->done; b != NULL; b = next) {
		next = b->next;
		fail_batch(b, WRITER_STOPPING);
	}
	fail_batch(w->fill, WRITER_STOPPING);
	event_free(w->commit_ev);
	event_free(w->done_ev);
	event_free(w->retry_ev);
	event_free(w->cp_ev);
	close(w->efd);
	if (w->fd != -1)
		writer_io_seal(w);
	chain_free(&w->chain);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
}

json_t *
writer_status_json(const struct writer *w)
{
	static const char *const names[] = { "running", "failed", "halted",
	    "stopping", "stopped" };
	char	 head[SHA256_HEX + 1], dur[SHA256_HEX + 1];
	json_t	*j;

	hex_encode(w->chain.hash, SHA256_LEN, head);
	hex_encode(w->durable_hash, SHA256_LEN, dur);
	j = json_pack("{s:s, s:s, s:s, s:I, s:s, s:I, s:s, s:I, s:I, s:s, "
	    "s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	    "state", names[w->state], "chain_id", w->chain_id,
	    "active_file", w->durable_active,
	    "seq", (json_int_t)w->chain.seq, "hash", head,
	    "durable_seq", (json_int_t)w->durable_seq, "durable_hash", dur,
	    "queue", (json_int_t)(w->chain.seq - w->durable_seq),
	    "checkpoint_seq", (json_int_t)w->durable_cp_seq,
	    "checkpoint_ts", w->durable_cp_ts,
	    "dropped_total", (json_int_t)w->dropped_total,
	    "batches", (json_int_t)w->stat_batches,
	    "syncs", (json_int_t)__atomic_load_n(&w->stat_syncs,
	    __ATOMIC_RELAXED),
	    "inline_batches", (json_int_t)w->stat_inline,
	    "records", (json_int_t)w->stat_records,
	    "bytes", (json_int_t)w->stat_bytes,
	    "max_batch", (json_int_t)w->stat_max_batch);
	if (w->state == W_FAILED)
		json_object_set_new(j, "failure", json_pack("{s:s, s:s, s:s}",
		    "reason", w->fail_reason, "since", w->fail_since,
		    "action", audit_action_name(w->fail_action)));
	return j;
}

uint64_t
writer_durable_seq(struct writer *w)
{
	return __atomic_load_n(&w->durable_seq, __ATOMIC_ACQUIRE);
}
