/*
 * The writer's I/O thread: takes the filling batch as soon as the previous
 * one is on disk, so the disk never waits for the event loop.  One write
 * and one fdatasync per batch.  A failed write is cut back so no partial
 * line remains; a failed fdatasync is never retried on the same descriptor
 * (Linux clears the error and a retry would falsely succeed): the file is
 * closed and the thread stops until the loop thread has re-read the head
 * of the chain from disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blobstore.h"
#include "checkpoint.h"
#include "log.h"
#include "util.h"
#include "writer_int.h"

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

static void
io_write(struct writer *w, struct batch *b)
{
	int	 saved;

	errno = 0;
	if (io_blobs(w, b) == -1) {
		io_fail(w, b, "code blob write");
		return;
	}
	if (b->newfile) {
		/* The previous file's batches were all fdatasync'ed already. */
		if (w->fd != -1)
			close(w->fd);
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
	if (write_all(w->fd, b->data.data, b->data.len) == -1) {
		saved = errno;
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

/*
 * Waits for a batch; after finishing one it takes the next at once if the
 * loop thread has put anything into it, without waiting to be asked.
 */
void *
writer_io_main(void *arg)
{
	struct writer	*w = arg;
	struct batch	*b;
	uint64_t	 one = 1;
	int		 more = 0;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->quit && (w->io_failed || w->fill->records == 0 ||
		    (!more && !w->kicked))) {
			more = 0;
			pthread_cond_wait(&w->cv, &w->mu);
		}
		if (w->quit)
			break;
		b = w->fill;
		w->fill = batch_new();
		w->kicked = 0;
		pthread_mutex_unlock(&w->mu);

		io_write(w, b);

		pthread_mutex_lock(&w->mu);
		*w->done_tail = b;
		w->done_tail = &b->next;
		if (b->err != 0)
			w->io_failed = 1;
		if (write(w->efd, &one, sizeof(one)) != sizeof(one))
			fatal("eventfd write");
		more = 1;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}
