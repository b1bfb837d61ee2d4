/*
 * Group commit.  The event loop thread sequences records into `fill`; the
 * I/O thread writes `inflight` and fdatasyncs it.  The two share only the
 * hand-off slot under a mutex and an eventfd for completion.  A failed
 * write or fdatasync is never retried on the same descriptor (Linux clears
 * the error and a retry would falsely succeed): the file is closed and the
 * head is re-derived from disk by recovery before anything is appended.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "chain.h"
#include "checkpoint.h"
#include "log.h"
#include "logdir.h"
#include "util.h"
#include "writer.h"

#define BATCH_BYTES_MAX		(8 * 1024 * 1024)	/* writer events */
#define BATCH_OWN_RESERVE	(256 * 1024)		/* the daemon's own */
#define LINE_OVERHEAD		1024	/* seq, prev, ts, peer, hash around fields */
#define PRIO_DONE		0

struct pending {
	writer_done_cb	*done;
	void		*arg;
	uint64_t	 seq;
	uint8_t		 hash[SHA256_LEN];
};

struct batch {
	struct buf	 data;
	struct pending	*items;
	size_t		 nitems, capitems;
	unsigned	 records;
	unsigned	 async;		/* async records, acked before durable */
	uint64_t	 last_seq;
	uint8_t		 last_hash[SHA256_LEN];
	int		 newfile;	/* create `name` before writing */
	char		 name[LOGFILE_NAME_MAX];
	json_t		*expired;	/* files to delete once durable */
	struct buf	 offhost;	/* checkpoint lines, written after */
	uint64_t	 reported;	/* refused/lost events this batch records */
	/* Set by the I/O thread. */
	int		 err;
	const char	*what;
	int		 offhost_err;
};

enum writer_state {
	W_RUNNING,
	W_FAILED,		/* waiting for retry_ev */
	W_HALTED,
	W_STOPPING,
	W_STOPPED,
};

struct writer {
	struct audit_conf	 conf;
	struct event_base	*base;
	EVP_PKEY		*key;
	struct peer		 self;

	/* Event loop side. */
	struct chain		 chain;		/* head of what is sequenced */
	uint64_t		 durable_seq;
	uint8_t			 durable_hash[SHA256_LEN];
	char			 chain_id[CHAIN_ID_HEX + 1];
	char			 active[LOGFILE_NAME_MAX];
	uint64_t		 active_bytes;
	uint64_t		 cp_seq;	/* seq of the last checkpoint record */
	char			 cp_ts[TS_LEN + 1];
	unsigned		 since_cp;
	struct batch		*fill, *inflight;
	enum writer_state	 state;
	enum audit_action	 fail_action;
	char			 fail_reason[128];
	char			 fail_since[TS_LEN + 1];
	uint64_t		 dropped;	/* refused or lost since failure */
	uint64_t		 dropped_total;
	int			 want_resume;
	writer_notify_cb	*resume_cb, *halt_cb, *idle_cb;
	void			*resume_arg, *halt_arg, *idle_arg;
	struct event		*commit_ev, *done_ev, *retry_ev, *cp_ev;
	uint64_t		 stat_batches, stat_records, stat_bytes;
	unsigned		 stat_max_batch;

	/* Shared with the I/O thread under mu. */
	pthread_t		 thread;
	int			 thread_started;
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	struct batch		*todo;
	int			 quit;
	int			 efd;
	/* Owned by the I/O thread while a batch is in flight. */
	int			 fd;
	uint64_t		 fd_size;
};

static void	writer_flush(struct writer *);
static void	append_checkpoint(struct writer *);

/* ------------------------------------------------------------ batches */

static struct batch *
batch_new(void)
{
	struct batch	*b = xcalloc(1, sizeof(*b));

	buf_init(&b->data, BATCH_BYTES_MAX + BATCH_OWN_RESERVE);
	buf_init(&b->offhost, 64 * 1024);
	return b;
}

static void
batch_free(struct batch *b)
{
	if (b == NULL)
		return;
	buf_free(&b->data);
	buf_free(&b->offhost);
	free(b->items);
	json_decref(b->expired);
	free(b);
}

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

/* ------------------------------------------------------------ I/O thread */

static void
io_fail(struct writer *w, struct batch *b, const char *what)
{
	b->err = errno ? errno : EIO;
	b->what = what;
	/* Never fsync this descriptor again; recovery reopens the file. */
	if (w->fd != -1)
		close(w->fd);
	w->fd = -1;
}

static void
io_offhost(struct writer *w, struct batch *b)
{
	char	 path[PATH_MAX];
	int	 fd;

	if (xsnprintf(path, sizeof(path), "%s/%s", w->conf.checkpoint_dir,
	    CHECKPOINT_FILE) == -1) {
		b->offhost_err = ENAMETOOLONG;
		return;
	}
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0640)) == -1) {
		b->offhost_err = errno;
		return;
	}
	if (write_all(fd, b->offhost.data, b->offhost.len) == -1 ||
	    fdatasync(fd) == -1)
		b->offhost_err = errno;
	close(fd);
}

static void
io_unlink_expired(struct writer *w, struct batch *b)
{
	char	 path[PATH_MAX];
	json_t	*v;
	size_t	 i;

	json_array_foreach(b->expired, i, v) {
		if (xsnprintf(path, sizeof(path), "%s/%s", w->conf.log_dir,
		    json_string_value(v)) == -1)
			continue;
		if (unlink(path) == -1 && errno != ENOENT)
			log_warn("retention: unlink %s", path);
	}
	fsync_dir(w->conf.log_dir);
}

static void
io_write(struct writer *w, struct batch *b)
{
	errno = 0;
	if (b->newfile) {
		/* The previous file's batches were all fdatasync'ed already. */
		if (w->fd != -1)
			close(w->fd);
		if ((w->fd = logdir_create(w->conf.log_dir, b->last_seq -
		    b->records + 1)) == -1) {
			io_fail(w, b, "create");
			return;
		}
		w->fd_size = 0;
	}
	if (w->fd == -1) {
		errno = EBADF;
		io_fail(w, b, "write");
		return;
	}
	if (write_all(w->fd, b->data.data, b->data.len) == -1) {
		int saved = errno;
		/* Leave no partial line behind; recovery cuts it otherwise. */
		if (ftruncate(w->fd, (off_t)w->fd_size) == -1)
			log_warn("ftruncate after failed write");
		errno = saved;
		io_fail(w, b, "write");
		return;
	}
	if (fdatasync(w->fd) == -1) {
		io_fail(w, b, "fdatasync");
		return;
	}
	w->fd_size += b->data.len;
	if (b->newfile && fsync_dir(w->conf.log_dir) == -1) {
		io_fail(w, b, "fsync of the log directory");
		return;
	}
	if (b->expired != NULL && json_array_size(b->expired) > 0)
		io_unlink_expired(w, b);
	if (b->offhost.len > 0)
		io_offhost(w, b);
}

static void *
io_main(void *arg)
{
	struct writer	*w = arg;
	struct batch	*b;
	uint64_t	 one = 1;

	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (w->todo == NULL && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		b = w->todo;
		w->todo = NULL;
		pthread_mutex_unlock(&w->mu);
		if (b == NULL)
			break;
		io_write(w, b);
		if (write(w->efd, &one, sizeof(one)) != sizeof(one))
			fatal("eventfd write");
	}
	return NULL;
}

/* ------------------------------------------------------------ sequencing */

static json_t *
rotate_fields(struct writer *w, json_t *expired)
{
	return json_pack("{s:s, s:s, s:O}", "chain_id", w->chain_id,
	    "prev_file", w->active, "removed", expired);
}

/* Starts a new file at the head of an empty fill batch. */
static int
start_new_file(struct writer *w)
{
	struct batch	*b = w->fill;
	json_t		*fields;
	char		 ts[TS_LEN + 1];
	size_t		 before = b->data.len;

	b->expired = logdir_expired(w->conf.log_dir, w->conf.keep_files,
	    w->active);
	fields = rotate_fields(w, b->expired);
	ts_now(ts);
	if (chain_append(&w->chain, ts, "rotate", &w->self, fields,
	    BATCH_OWN_RESERVE, &b->data) == -1) {
		json_decref(fields);
		return -1;
	}
	json_decref(fields);
	b->newfile = 1;
	logfile_name(w->chain.seq, b->name);
	snprintf(w->active, sizeof(w->active), "%s", b->name);
	w->active_bytes = b->data.len - before;
	b->records++;
	b->last_seq = w->chain.seq;
	memcpy(b->last_hash, w->chain.hash, SHA256_LEN);
	return 0;
}

/*
 * Appends one record to the fill batch.  own: the daemon's own record,
 * allowed into the reserve beyond the writers' share.
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
	maxline = own ? BATCH_OWN_RESERVE : w->conf.max_event_bytes +
	    LINE_OVERHEAD;
	ts_now(ts);
	before = b->data.len;
	if (chain_append(&w->chain, ts, event, peer, fields, maxline,
	    &b->data) == -1)
		return b->data.len + maxline > b->data.max ? WRITER_FULL :
		    WRITER_TOO_LARGE;
	w->active_bytes += b->data.len - before;
	b->records++;
	b->last_seq = w->chain.seq;
	memcpy(b->last_hash, w->chain.hash, SHA256_LEN);
	w->since_cp++;
	return WRITER_OK;
}

/*
 * A batch is full at its event or byte ceiling, or once its file has
 * reached max_file_bytes: rotation happens between batches, so ending the
 * batch there keeps files within one record of their size limit.
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

static void
kick(struct writer *w)
{
	event_active(w->commit_ev, 0, 0);
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

enum writer_status
writer_append(struct writer *w, const char *event, const json_t *fields,
    const struct peer *peer, int sync, writer_done_cb *done, void *arg,
    uint64_t *seq, uint8_t hash[SHA256_LEN])
{
	enum writer_status	 r;

	if (w->state != W_RUNNING)
		return refusal(w);
	if (fill_is_full(w)) {
		w->want_resume = 1;
		return WRITER_FULL;
	}
	if ((r = append_record(w, event, fields, peer, 0)) != WRITER_OK) {
		if (r == WRITER_FULL)
			w->want_resume = 1;
		return r;
	}
	if (sync)
		batch_add_pending(w->fill, done, arg, w->chain.seq,
		    w->chain.hash);
	else
		w->fill->async++;
	*seq = w->chain.seq;
	memcpy(hash, w->chain.hash, SHA256_LEN);
	if (w->since_cp >= w->conf.checkpoint_events)
		append_checkpoint(w);
	kick(w);
	return WRITER_OK;
}

void
writer_append_own(struct writer *w, const char *event, json_t *fields)
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

static void
append_checkpoint(struct writer *w)
{
	struct checkpoint	 cp;
	json_t			*rec;

	memset(&cp, 0, sizeof(cp));
	memcpy(cp.chain_id, w->chain_id, sizeof(cp.chain_id));
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
	w->cp_seq = w->chain.seq;
	memcpy(w->cp_ts, cp.ts, sizeof(w->cp_ts));
	w->since_cp = 0;
}

void
writer_checkpoint(struct writer *w)
{
	if (w->state != W_RUNNING)
		return;
	append_checkpoint(w);
	kick(w);
}

/* ------------------------------------------------------------ completion */

static void
handoff(struct writer *w)
{
	struct batch	*b = w->fill;

	w->fill = batch_new();
	w->inflight = b;
	if (b->records > w->stat_max_batch)
		w->stat_max_batch = b->records;
	pthread_mutex_lock(&w->mu);
	w->todo = b;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	/* The fill batch is empty again: writers held back may continue. */
	if (w->want_resume && w->resume_cb != NULL) {
		w->want_resume = 0;
		w->resume_cb(w->resume_arg);
	}
}

static void
writer_flush(struct writer *w)
{
	if (w->inflight != NULL || w->fill->records == 0)
		return;
	if (w->state != W_RUNNING && w->state != W_STOPPING)
		return;
	handoff(w);
}

static void
commit_cb(evutil_socket_t fd, short ev, void *arg)
{
	writer_flush(arg);
}

static void
fail_batch(struct batch *b, enum writer_status st)
{
	size_t	 i;

	for (i = 0; i < b->nitems; i++)
		b->items[i].done(b->items[i].arg, st, 0, NULL);
	batch_free(b);
}

static void
writer_fail(struct writer *w, struct batch *b)
{
	int			 full = (b->err == ENOSPC || b->err == EDQUOT);
	enum writer_status	 st;
	struct timeval		 tv;
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
	/* Every record not durable is gone: its senders hear it now. */
	lost = b->records + w->fill->records;
	w->dropped += lost;
	w->dropped_total += lost;
	fail_batch(b, st);
	fail_batch(w->fill, st);
	w->fill = batch_new();
	chain_set_head(&w->chain, w->durable_seq, w->durable_hash);
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

static void
done_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct writer	*w = arg;
	struct batch	*b = w->inflight;
	uint64_t	 n;
	size_t		 i;

	if (read(w->efd, &n, sizeof(n)) != sizeof(n) || b == NULL)
		return;
	w->inflight = NULL;
	if (b->err != 0) {
		writer_fail(w, b);
		return;
	}
	w->durable_seq = b->last_seq;
	memcpy(w->durable_hash, b->last_hash, SHA256_LEN);
	w->stat_batches++;
	w->stat_records += b->records;
	w->stat_bytes += b->data.len;
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
	writer_flush(w);
	if (w->inflight == NULL && w->state == W_STOPPING) {
		w->state = W_STOPPED;
		if (w->idle_cb != NULL)
			w->idle_cb(w->idle_arg);
	}
}

/* ------------------------------------------------------------ recovery */

static void
new_chain_id(char out[CHAIN_ID_HEX + 1])
{
	uint8_t	 rnd[CHAIN_ID_HEX / 2];

	if (getentropy(rnd, sizeof(rnd)) == -1)
		fatal("getentropy");
	hex_encode(rnd, sizeof(rnd), out);
}

/*
 * Re-derives the head from disk and hands the I/O thread its file.  Only
 * called while no batch is in flight.
 */
static int
writer_recover(struct writer *w, char *err, size_t errlen)
{
	struct log_state	 st;
	struct recovery_note	 rn;
	static const uint8_t	 zero[SHA256_LEN];
	json_t			*f;

	if (logdir_recover(w->conf.log_dir, &st, &rn, err, errlen) == -1)
		return -1;
	pthread_mutex_lock(&w->mu);
	if (w->fd != -1)
		close(w->fd);
	w->fd = st.fd;
	w->fd_size = st.size;
	pthread_mutex_unlock(&w->mu);
	if (st.empty) {
		new_chain_id(w->chain_id);
		chain_set_head(&w->chain, 0, zero);
	} else {
		memcpy(w->chain_id, st.chain_id, sizeof(w->chain_id));
		chain_set_head(&w->chain, st.seq, st.hash);
		snprintf(w->active, sizeof(w->active), "%s", st.name);
		w->active_bytes = st.size;
	}
	w->durable_seq = w->chain.seq;
	memcpy(w->durable_hash, w->chain.hash, SHA256_LEN);
	w->state = W_RUNNING;
	if (st.empty) {
		/* The first record of a chain: a new file holding chain_start. */
		w->fill->newfile = 1;
		logfile_name(1, w->fill->name);
		snprintf(w->active, sizeof(w->active), "%s", w->fill->name);
		w->active_bytes = 0;
		writer_append_own(w, "chain_start", json_pack("{s:s, s:i}",
		    "chain_id", w->chain_id, "version", 1));
	}
	if (rn.cut) {
		log_warnx("recovery: cut %llu bytes of torn tail from %s",
		    (unsigned long long)rn.bytes, rn.file);
		writer_append_own(w, "recovery", json_pack(
		    "{s:s, s:s, s:I, s:I, s:s, s:s}", "action", "cut_torn_tail",
		    "file", rn.file, "offset", (json_int_t)rn.offset,
		    "bytes", (json_int_t)rn.bytes, "sha256", rn.sha256,
		    "excerpt_base64", rn.excerpt));
	}
	if (rn.dropped) {
		f = json_pack("{s:s, s:s}", "action", "removed_empty_file",
		    "file", rn.dropped_file);
		writer_append_own(w, "recovery", f);
	}
	return 0;
}

static void
retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct writer	*w = arg;
	struct timeval	 tv = { w->conf.retry_seconds, 0 };
	char		 err[512];
	uint64_t	 dropped = w->dropped;

	if (writer_recover(w, err, sizeof(err)) == -1) {
		log_warnx("audit log still unavailable: %s", err);
		evtimer_add(w->retry_ev, &tv);
		return;
	}
	writer_append_own(w, "audit_resumed", json_pack(
	    "{s:s, s:s, s:s, s:I}", "reason", w->fail_reason,
	    "action", audit_action_name(w->fail_action),
	    "since", w->fail_since,
	    w->fail_action == ACTION_KEEP_GOING ? "events_lost" :
	    "events_refused", (json_int_t)dropped));
	w->fill->reported += dropped;
	log_info("audit log resumed after %s (%llu events %s)", w->fail_reason,
	    (unsigned long long)dropped,
	    w->fail_action == ACTION_KEEP_GOING ? "lost" : "refused");
	append_checkpoint(w);
	writer_flush(w);
}

static void
cp_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct writer	*w = arg;

	if (w->state == W_RUNNING && w->chain.seq > w->cp_seq) {
		append_checkpoint(w);
		writer_flush(w);
	}
}

/* ------------------------------------------------------------ lifecycle */

struct writer *
writer_start(struct event_base *base, const struct audit_conf *conf,
    EVP_PKEY *key, char *err, size_t errlen)
{
	struct writer	*w = xcalloc(1, sizeof(*w));
	struct timeval	 tv;

	w->conf = *conf;
	w->base = base;
	w->key = key;
	w->self.uid = getuid();
	w->self.gid = getgid();
	w->self.pid = getpid();
	w->fd = -1;
	chain_init(&w->chain);
	w->fill = batch_new();
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if ((w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1)
		fatal("eventfd");
	w->commit_ev = event_new(base, -1, 0, commit_cb, w);
	w->done_ev = event_new(base, w->efd, EV_READ | EV_PERSIST, done_cb, w);
	w->retry_ev = evtimer_new(base, retry_cb, w);
	w->cp_ev = event_new(base, -1, EV_PERSIST, cp_timer_cb, w);
	if (w->commit_ev == NULL || w->done_ev == NULL || w->retry_ev == NULL ||
	    w->cp_ev == NULL)
		fatalx("event_new");
	/* Completions first, so acks go out before more reading. */
	event_priority_set(w->done_ev, PRIO_DONE);
	event_priority_set(w->commit_ev,
	    event_base_get_npriorities(base) - 1);
	event_add(w->done_ev, NULL);
	tv.tv_sec = conf->checkpoint_seconds;
	tv.tv_usec = 0;
	event_add(w->cp_ev, &tv);
	if (writer_recover(w, err, errlen) == -1) {
		writer_free(w);
		return NULL;
	}
	if (pthread_create(&w->thread, NULL, io_main, w) != 0)
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
	struct timeval	 tv = { c->checkpoint_seconds, 0 };

	w->conf.max_event_bytes = c->max_event_bytes;
	w->conf.max_file_bytes = c->max_file_bytes;
	w->conf.keep_files = c->keep_files;
	w->conf.batch_max_events = c->batch_max_events;
	w->conf.checkpoint_events = c->checkpoint_events;
	w->conf.checkpoint_seconds = c->checkpoint_seconds;
	w->conf.disk_full_action = c->disk_full_action;
	w->conf.disk_error_action = c->disk_error_action;
	w->conf.retry_seconds = c->retry_seconds;
	event_add(w->cp_ev, &tv);
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
	writer_append_own(w, "daemon_stop", json_pack("{s:s}",
	    "program", "stockade-auditd"));
	append_checkpoint(w);
	writer_flush(w);
	if (w->inflight == NULL) {
		w->state = W_STOPPED;
		done(arg);
	}
}

void
writer_free(struct writer *w)
{
	if (w->thread_started) {
		pthread_mutex_lock(&w->mu);
		w->quit = 1;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
	}
	if (w->inflight != NULL)
		fail_batch(w->inflight, WRITER_STOPPING);
	fail_batch(w->fill, WRITER_STOPPING);
	event_free(w->commit_ev);
	event_free(w->done_ev);
	event_free(w->retry_ev);
	event_free(w->cp_ev);
	close(w->efd);
	if (w->fd != -1)
		close(w->fd);
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
	    "s:I, s:I, s:I, s:I, s:I}",
	    "state", names[w->state], "chain_id", w->chain_id,
	    "active_file", w->active,
	    "seq", (json_int_t)w->chain.seq, "hash", head,
	    "durable_seq", (json_int_t)w->durable_seq, "durable_hash", dur,
	    "queue", (json_int_t)(w->fill->records +
	    (w->inflight ? w->inflight->records : 0)),
	    "checkpoint_seq", (json_int_t)w->cp_seq, "checkpoint_ts", w->cp_ts,
	    "dropped_total", (json_int_t)w->dropped_total,
	    "batches", (json_int_t)w->stat_batches,
	    "records", (json_int_t)w->stat_records,
	    "bytes", (json_int_t)w->stat_bytes,
	    "max_batch", (json_int_t)w->stat_max_batch);
	if (w->state == W_FAILED)
		json_object_set_new(j, "failure", json_pack("{s:s, s:s, s:s}",
		    "reason", w->fail_reason, "since", w->fail_since,
		    "action", audit_action_name(w->fail_action)));
	return j;
}
