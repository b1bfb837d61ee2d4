/*
 * The writer's I/O thread: takes the filling batch as soon as the previous
 * one is on disk, so the disk never waits for the event loop.  One write
 * and one fdatasync per batch, but for a batch nobody waits on, whose
 * fdatasync may wait up to HOLD_NS for the next batch's.  A failed write is cut back so no partial
 * line remains; a failed fdatasync is never retried on the same descriptor
 * (Linux clears the error and a retry would falsely succeed): the file is
 * closed and the thread stops until the loop thread has re-read the head
 * of the chain from disk.  With flush.zero_ahead on (off by default: the
 * active file then stays a text file grep and file-following shippers
 * read), while idle it writes zeros ahead of the records (durable before
 * any record lands on them), so a batch's fdatasync flushes data alone:
 * appending changes the size, and the journal commit that costs is most
 * of an fdatasync on ext4 (blocks fallocate'd ahead with KEEP_SIZE spare
 * none of it: the size still changes).  A file is cut to its records
 * before it is closed, so only the active file ever has a zero tail, and
 * with flush.zero_ahead off none: the thread cuts what is there when next
 * idle and fills no more.
 * When it owns nothing, the loop thread may write a small batch through
 * the same io_commit itself (writer_io_inline), saving a lone synchronous
 * writer the two hand-offs.
 */
#include <sys/statfs.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blobstore.h"
#include "checkpoint.h"
#include "log.h"
#include "util.h"
#include "writer_int.h"

/*
 * How long a batch no sender waits on may stay written but not yet
 * fdatasync'ed, for the next batch's fdatasync to cover it too: one MCP
 * call's code_execution (sync false) and the next call's
 * execution_started (sync) then share one.  Its ack said durable:false.
 */
#define HOLD_NS		2000000
#define ZERO_STEP	(1024 * 1024)		/* zeros written at a time */
#define ZERO_AHEAD	(4 * 1024 * 1024)	/* zeros kept ahead of records */
/*
 * The loop thread writes a batch itself only while it is small, and not
 * for INLINE_OFF_SEC after an inline commit took longer than
 * INLINE_SLOW_NS: on a slow disk the loop keeps reading while the I/O
 * thread syncs, and the next batch fills meanwhile.
 */
#define INLINE_BYTES_MAX	(64 * 1024)
#define INLINE_SLOW_NS		10000000
#define INLINE_OFF_SEC		1

static const char zero_block[64 * 1024];

struct batch *
batch_new(void)
{
	struct batch	*b = xcalloc(1, sizeof(*b));

	buf_init(&b->data, BATCH_BYTES_MAX + BATCH_OWN_RESERVE);
	buf_init(&b->offhost, OFFHOST_BATCH_MAX);
	return b;
}

void
batch_free(struct batch *b)
{
	size_t	 i;

	if (b == NULL)
		return;
	for (i = 0; i < b->nblobs; i++)
		free(b->blobs[i].data);
	free(b->blobs);
	buf_free(&b->data);
	buf_free(&b->offhost);
	free(b->items);
	json_decref(b->expired);
	free(b);
}

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

static int
pwrite_all(int fd, const void *p, size_t len, uint64_t off)
{
	const char	*c = p;
	ssize_t		 n;

	while (len > 0) {
		if ((n = pwrite(fd, c, len, (off_t)off)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* 1 when zeros ahead would save the file's fdatasyncs a journal commit. */
static int
zero_worth_it(struct writer *w)
{
	struct statfs	 sf;

	if (w->zero_fs == -1)
		w->zero_fs = fstatfs(w->fd, &sf) == 0 &&
		    sf.f_type != TMPFS_MAGIC && sf.f_type != RAMFS_MAGIC;
	return w->zero_fs;
}

/* Where the zeros ahead should reach: not past the rotation size. */
static uint64_t
zero_cap(const struct writer *w)
{
	uint64_t	 cap = w->fd_size + ZERO_AHEAD;

	if (w->conf.max_file_bytes > 0 && cap > w->conf.max_file_bytes)
		cap = w->conf.max_file_bytes;
	return cap;
}

int
writer_io_zero_wanted(struct writer *w)
{
	uint64_t	 cap = zero_cap(w);

	if (w->fd == -1)
		return 0;
	if (!w->conf.zero_ahead)
		return w->zero_end > w->fd_size;	/* to cut */
	if (w->zero_end >= cap)
		return 0;
	/* Whole steps only (a step's fdatasync grows the file: a journal
	 * commit), but for what is left below the rotation size. */
	if (cap - w->zero_end < ZERO_STEP && cap == w->fd_size + ZERO_AHEAD)
		return 0;
	return zero_worth_it(w);
}

/*
 * The zero fill's fdatasync (or its cut) failed: never fsync this
 * descriptor again (see io_fail).  The next batch finds none, and recovery
 * reopens the file and cuts the zeros.
 */
static void
zero_failed(struct writer *w, const char *what)
{
	log_warn("%s", what);
	pthread_mutex_lock(&w->mu);
	close(w->fd);
	w->fd = -1;
	pthread_mutex_unlock(&w->mu);
}

/* Turned off: the records end the file again, durably. */
static void
zero_cut(struct writer *w)
{
	if (ftruncate(w->fd, (off_t)w->fd_size) == -1 ||
	    fdatasync(w->fd) == -1) {
		zero_failed(w, "cutting the zero fill");
		return;
	}
	w->zero_end = w->fd_size;
}

void
writer_io_zero_ahead(struct writer *w)
{
	uint64_t	 off = w->zero_end, end = off + ZERO_STEP;
	size_t		 n;
	int		 fd = w->fd;

	if (end > zero_cap(w))
		end = zero_cap(w);
	for (; off < end; off += n) {
		n = end - off < sizeof(zero_block) ? (size_t)(end - off) :
		    sizeof(zero_block);
		if (pwrite_all(fd, zero_block, n, off) == -1) {
			/* No room (or worse): records append as they always
			 * did and meet the error themselves; no zeros here. */
			if (ftruncate(fd, (off_t)w->zero_end) == -1)
				log_warn("ftruncate after failed zero fill");
			w->zero_fs = 0;
			return;
		}
	}
	if (fdatasync(fd) == -1) {
		zero_failed(w, "fdatasync of the zero fill");
		return;
	}
	w->zero_end = end;
}

int
writer_io_seal(struct writer *w)
{
	int	 rv = 0;

	/* Cut the zeros: a closed file holds its records and nothing else. */
	if (w->zero_end > w->fd_size && (ftruncate(w->fd, (off_t)w->fd_size) ==
	    -1 || fsync(w->fd) == -1))
		rv = -1;
	close(w->fd);
	w->fd = -1;
	w->zero_end = 0;
	w->zero_fs = -1;
	return rv;
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
		/* Its code goes with it: each file's folder holds its own. */
		if (blobstore_remove(w->conf.log_dir, json_string_value(v)) ==
		    -1)
			log_warn("retention: blobs of %s", path);
	}
	fsync_dir(w->conf.log_dir);
}

/*
 * The write-ahead rule for code: every blob the batch's records name is
 * durable (file, then folder) before a byte of those records is written,
 * so no record on disk ever names a blob that a crash could lose.
 */
static int
io_blobs(struct writer *w, struct batch *b)
{
	char	 dir[PATH_MAX];
	size_t	 i;

	if (b->nblobs == 0)
		return 0;
	if (blobstore_dir(w->conf.log_dir, b->blob_file, dir, sizeof(dir)) ==
	    -1)
		return -1;
	for (i = 0; i < b->nblobs; i++)
		if (blobstore_put(dir, b->blobs[i].hex, b->blobs[i].data,
		    b->blobs[i].len) == -1)
			return -1;
	return blobstore_sync(w->conf.log_dir, dir);
}

/*
 * A batch whose fdatasync may wait: nobody waits on it, and it needs
 * nothing done after its sync (a new file, blobs, expired files,
 * off-host checkpoints).
 */
static int
io_may_hold(const struct batch *b)
{
	return b->nitems == 0 && !b->newfile && b->nblobs == 0 &&
	    b->offhost.len == 0 && json_array_size(b->expired) == 0;
}

/* Held batches: what the I/O thread has written and not yet synced. */
static void
io_hold(struct writer *w, struct batch *b)
{
	if (w->held == NULL) {
		w->held_tail = &w->held;
		clock_gettime(CLOCK_MONOTONIC, &w->held_until);
		w->held_until.tv_nsec += HOLD_NS;
		if (w->held_until.tv_nsec >= 1000000000L) {
			w->held_until.tv_sec++;
			w->held_until.tv_nsec -= 1000000000L;
		}
	}
	b->next = NULL;
	*w->held_tail = b;
	w->held_tail = &b->next;
}

static int
io_hold_expired(const struct writer *w)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > w->held_until.tv_sec ||
	    (now.tv_sec == w->held_until.tv_sec &&
	    now.tv_nsec >= w->held_until.tv_nsec);
}

/*
 * The held batches' own fdatasync, when no batch came to cover them (or
 * before a new file).  On failure each carries the error: not one of
 * their records is known to be on disk.
 */
static void
io_sync_held(struct writer *w)
{
	struct batch	*b;

	if (w->held == NULL)
		return;
	errno = 0;
	if (w->fd == -1 || fdatasync(w->fd) == -1) {
		if (w->fd == -1)
			errno = EBADF;
		for (b = w->held; b != NULL; b = b->next)
			io_fail(w, b, "fdatasync");
		return;
	}
	__atomic_add_fetch(&w->stat_syncs, 1, __ATOMIC_RELAXED);
}

/* Locked: the held batches, then b (if any), to the loop, in order. */
static void
io_release(struct writer *w, struct batch *b)
{
	struct batch	*h, *next;

	for (h = w->held; h != NULL; h = next) {
		next = h->next;
		/* Written with b's data: not durable if b's sync failed. */
		if (b != NULL && b->err != 0 && h->err == 0) {
			h->err = b->err;
			h->what = b->what;
		}
		h->next = NULL;
		*w->done_tail = h;
		w->done_tail = &h->next;
		if (h->err != 0)
			w->io_failed = 1;
	}
	w->held = NULL;
	if (b != NULL) {
		*w->done_tail = b;
		w->done_tail = &b->next;
		if (b->err != 0)
			w->io_failed = 1;
	}
}

static void
io_write(struct writer *w, struct batch *b, int hold)
{
	int	 saved;

	errno = 0;
	if (io_blobs(w, b) == -1) {
		io_fail(w, b, "code blob write");
		return;
	}
	if (b->newfile) {
		/* The previous file's batches were all fdatasync'ed already;
		 * its zero tail goes before the next file exists, so a
		 * rotated file never has one. */
		if (w->fd != -1 && writer_io_seal(w) == -1) {
			io_fail(w, b, "truncate of the zero fill");
			return;
		}
		if ((w->fd = logdir_create(w->conf.log_dir, b->first_seq)) == -1) {
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
	if (pwrite_all(w->fd, b->data.data, b->data.len, w->fd_size) == -1) {
		saved = errno;
		/* Leave no partial line behind; recovery cuts it otherwise.
		 * The zeros ahead go with it. */
		if (ftruncate(w->fd, (off_t)w->fd_size) == -1)
			log_warn("ftruncate after failed write");
		w->zero_end = w->fd_size;
		errno = saved;
		io_fail(w, b, "write");
		return;
	}
	if (hold) {
		/* On disk with the next batch's fdatasync, or the timer's. */
		w->fd_size += b->data.len;
		if (w->zero_end < w->fd_size)
			w->zero_end = w->fd_size;
		return;
	}
	if (fdatasync(w->fd) == -1) {
		io_fail(w, b, "fdatasync");
		return;
	}
	__atomic_add_fetch(&w->stat_syncs, 1, __ATOMIC_RELAXED);
	w->fd_size += b->data.len;
	if (w->zero_end < w->fd_size)
		w->zero_end = w->fd_size;
	if (b->newfile && fsync_dir(w->conf.log_dir) == -1) {
		io_fail(w, b, "fsync of the log directory");
		return;
	}
	if (b->expired != NULL && json_array_size(b->expired) > 0)
		io_unlink_expired(w, b);
	if (b->offhost.len > 0)
		io_offhost(w, b);
}

/*
 * Write and sync a batch: the one way both threads put a batch on disk.
 * Its owner only (io_owner).  hold: leave its fdatasync to the next
 * batch's or the timer's.  The held batches go first when b starts a new
 * file, and if their own fdatasync failed b shares the failure.
 */
static void
io_commit(struct writer *w, struct batch *b, int hold)
{
	if (b->newfile)
		io_sync_held(w);
	if (w->held != NULL && w->held->err != 0) {
		b->err = w->held->err;
		b->what = w->held->what;
	} else
		io_write(w, b, hold);
}

/*
 * A batch the loop thread may write itself: a sender waits on it (one at
 * most: more than one means the loop is busy with several writers, which
 * group better while it reads on and the I/O thread syncs), it is small,
 * and it needs nothing but the write and the fdatasync (no new file, no
 * blobs, no expired files, no off-host checkpoint).
 */
static int
io_inline_fits(const struct writer *w, const struct batch *b)
{
	struct timespec	 now;

	if (b->nitems != 1 || b->data.len > INLINE_BYTES_MAX || b->newfile ||
	    b->nblobs != 0 || b->offhost.len != 0 ||
	    json_array_size(b->expired) != 0)
		return 0;
	if (w->inline_off_until.tv_sec == 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > w->inline_off_until.tv_sec ||
	    (now.tv_sec == w->inline_off_until.tv_sec &&
	    now.tv_nsec >= w->inline_off_until.tv_nsec);
}

int
writer_io_inline(struct writer *w)
{
	struct batch	*b;
	uint64_t	 t0, took;

	pthread_mutex_lock(&w->mu);
	b = w->fill;
	if (w->io_owner != OWN_NONE || w->io_failed || w->quit ||
	    !w->thread_started || b->records == 0 || !io_inline_fits(w, b)) {
		pthread_mutex_unlock(&w->mu);
		return 0;
	}
	w->io_owner = OWN_LOOP;
	w->fill = batch_new();
	pthread_mutex_unlock(&w->mu);

	t0 = mono_ns();
	/* The held batches' records are in the file before b's: this
	 * fdatasync covers them too, and they complete with b. */
	io_commit(w, b, 0);
	took = mono_ns() - t0;
	w->stat_inline++;

	pthread_mutex_lock(&w->mu);
	io_release(w, b);
	w->io_owner = OWN_NONE;
	if (took > INLINE_SLOW_NS) {
		/* A slow disk: the loop goes back to reading while the I/O
		 * thread syncs, for a while. */
		clock_gettime(CLOCK_MONOTONIC, &w->inline_off_until);
		w->inline_off_until.tv_sec += INLINE_OFF_SEC;
	}
	/* The I/O thread sleeps through inline commits: wake it for what
	 * it does when idle (zeros ahead), or if it has work waiting. */
	if (w->io_failed || w->kicked || writer_io_zero_wanted(w))
		pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return 1;
}

/*
 * Waits for a batch; after finishing one it takes the next at once if the
 * loop thread has put anything into it, without waiting to be asked.
 * While the loop thread owns the file (io_owner, writer_io_inline) it
 * touches none of it, held batches included.
 */
void *
writer_io_main(void *arg)
{
	struct writer	*w = arg;
	struct batch	*b;
	uint64_t	 one = 1;
	int		 more = 0, hold;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->quit && (w->io_failed || w->io_owner == OWN_LOOP ||
		    w->fill->records == 0 || (!more && !w->kicked))) {
			more = 0;
			if (w->io_owner == OWN_LOOP) {
				pthread_cond_wait(&w->cv, &w->mu);
				continue;
			}
			/* Held batches: synced when their time is up, unless
			 * a batch comes first. */
			if (w->held != NULL) {
				if (pthread_cond_timedwait(&w->cv, &w->mu,
				    &w->held_until) != ETIMEDOUT &&
				    !io_hold_expired(w))
					continue;
				/* The loop thread took them meanwhile. */
				if (w->io_owner != OWN_NONE || w->held == NULL)
					continue;
				w->io_owner = OWN_IO;
				pthread_mutex_unlock(&w->mu);
				io_sync_held(w);
				pthread_mutex_lock(&w->mu);
				io_release(w, NULL);
				w->io_owner = OWN_NONE;
				if (write(w->efd, &one, sizeof(one)) !=
				    sizeof(one))
					fatal("eventfd write");
				continue;
			}
			/* Idle: zeros ahead, a step at a time, so a batch
			 * that comes meanwhile waits for one step at most;
			 * or, the fill turned off, the cut of those there. */
			if (!w->io_failed && w->fill->records == 0 &&
			    writer_io_zero_wanted(w)) {
				int	 fill = w->conf.zero_ahead;

				w->io_owner = OWN_IO;
				pthread_mutex_unlock(&w->mu);
				if (fill)
					writer_io_zero_ahead(w);
				else
					zero_cut(w);
				pthread_mutex_lock(&w->mu);
				w->io_owner = OWN_NONE;
				continue;
			}
			pthread_cond_wait(&w->cv, &w->mu);
		}
		if (w->quit)
			break;
		b = w->fill;
		w->fill = batch_new();
		w->kicked = 0;
		w->io_owner = OWN_IO;
		pthread_mutex_unlock(&w->mu);

		hold = io_may_hold(b) && (w->held == NULL ||
		    !io_hold_expired(w));
		io_commit(w, b, hold);

		pthread_mutex_lock(&w->mu);
		if (hold && b->err == 0)
			io_hold(w, b);
		else
			io_release(w, b);
		w->io_owner = OWN_NONE;
		if (write(w->efd, &one, sizeof(one)) != sizeof(one))
			fatal("eventfd write");
		more = 1;
	}
	/* Stopping: what is held goes to disk before the file is sealed. */
	pthread_mutex_unlock(&w->mu);
	io_sync_held(w);
	pthread_mutex_lock(&w->mu);
	io_release(w, NULL);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}
