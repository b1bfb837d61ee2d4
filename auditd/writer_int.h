/*
 * Private to writer.c and writer_io.c: the writer's state and what the
 * event loop thread and the I/O thread share.
 *
 * Ownership: the loop thread builds `fill`; the I/O thread takes it when it
 * is free (swapping in an empty batch), writes it, and queues it on `done`
 * for the loop thread, which answers its senders and frees it.  `fill`,
 * `done`, `io_failed`, `kicked`, `quit`, `fd`, `fd_size`, the zero fill
 * and the held batches are touched only under `mu`, except by the owner
 * of the file (`io_owner`), who uses them without the lock: the I/O
 * thread while it writes a batch, fills zeros ahead or syncs held
 * batches; or the loop thread, which takes a small batch a sender waits
 * on and writes it itself (writer_io_inline) when the I/O thread owns
 * nothing, and answers its sender with no hand-off.  Either way the batch
 * goes through io_commit and io_release onto `done`, so durable_seq moves
 * only once it is synced and a failure stops the I/O thread (io_failed)
 * the same way.  The loop thread changes them otherwise only while the
 * I/O thread is stopped by io_failed or not yet started.
 */
#ifndef STOCKADE_WRITER_INT_H
#define STOCKADE_WRITER_INT_H

#include <pthread.h>

#include "chain.h"
#include "logdir.h"
#include "writer.h"

#define BATCH_BYTES_MAX		(8 * 1024 * 1024)	/* writer events */
#define BATCH_OWN_RESERVE	(256 * 1024)		/* the daemon's own */
#define OFFHOST_BATCH_MAX	(64 * 1024)
#define BATCH_BLOB_BYTES_MAX	(32 * 1024 * 1024)	/* code kept in full */

/* Code to be durable in the blob store before the batch's records. */
struct batch_blob {
	char		 hex[SHA256_HEX + 1];
	char		*data;
	size_t		 len;
};

struct pending {
	writer_done_cb	*done;
	void		*arg;
	uint64_t	 seq;
	uint8_t		 hash[SHA256_LEN];
};

struct batch {
	struct batch	*next;		/* on the done list */
	struct buf	 data;
	struct pending	*items;
	size_t		 nitems, capitems;
	unsigned	 records;
	uint64_t	 first_seq, last_seq;
	uint8_t		 last_hash[SHA256_LEN];
	int		 newfile;	/* create audit-<first_seq>.log first */
	uint64_t	 cp_seq;	/* its last checkpoint record, or 0 */
	char		 cp_ts[TS_LEN + 1];
	json_t		*expired;	/* files to delete once durable */
	struct buf	 offhost;	/* checkpoint lines, written after */
	uint64_t	 reported;	/* refused/lost events this batch records */
	struct batch_blob *blobs;
	size_t		 nblobs, capblobs, blob_bytes;
	char		 blob_file[LOGFILE_NAME_MAX];	/* the batch's log file */
	/* Set by the I/O thread. */
	int		 err;
	const char	*what;
	int		 offhost_err;
};

enum io_owner {
	OWN_NONE,
	OWN_IO,			/* the I/O thread */
	OWN_LOOP,		/* the loop thread, writing a batch inline */
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

	/* Loop thread only. */
	struct chain		 chain;		/* head of what is sequenced */
	uint64_t		 durable_seq;
	uint8_t			 durable_hash[SHA256_LEN];
	char			 chain_id[CHAIN_ID_HEX + 1];
	char			 active[LOGFILE_NAME_MAX];
	uint64_t		 active_bytes;
	uint64_t		 cp_seq;	/* seq of the last checkpoint record */
	uint64_t		 cp_mono_ms;	/* when it was signed: the
						   time-based one is due
						   every_seconds after */
	unsigned		 since_cp;
	/* The file and the last checkpoint on disk: what status reports. */
	char			 durable_active[LOGFILE_NAME_MAX];
	uint64_t		 durable_cp_seq;
	char			 durable_cp_ts[TS_LEN + 1];
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
	uint64_t		 stat_inline;	/* batches the loop wrote */

	/* Shared under mu. */
	pthread_t		 thread;
	int			 thread_started;
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	struct batch		*fill;
	struct batch		*done, **done_tail;
	int			 io_failed;	/* stopped until recovery */
	int			 kicked;	/* the loop thread asked for a write */
	int			 quit;
	int			 efd;		/* I/O thread -> loop: done */
	enum io_owner		 io_owner;	/* of fd, zeros, held */
	struct timespec		 inline_off_until; /* slow disk: no inline */
	int			 fd;
	uint64_t		 fd_size;
	/*
	 * The active file is zero-filled ahead of its records: bytes
	 * [fd_size, zero_end) are zeros already durable, so a batch written
	 * there is an overwrite whose fdatasync changes no size (no journal
	 * commit).  Readers take the first NUL as the end of the records.
	 * zero_fs: -1 not yet known, 0 not worth it (tmpfs), 1 worth it.
	 * The I/O thread's, like fd; set by recovery while it is stopped.
	 */
	uint64_t		 zero_end;
	int			 zero_fs;
	/*
	 * Batches written but not yet fdatasync'ed, oldest first: none has
	 * a sender waiting (every record came with sync false, or is the
	 * daemon's own).  The next batch's fdatasync covers them, or one of
	 * their own once held_until (CLOCK_MONOTONIC) passes.  The I/O
	 * thread's.
	 */
	struct batch		*held, **held_tail;
	struct timespec		 held_until;
	uint64_t		 stat_syncs;	/* records' fdatasyncs (atomic) */
};

struct batch	*batch_new(void);
void		 batch_free(struct batch *);
void		*writer_io_main(void *);
/*
 * I/O thread (or after it stopped): zeros ahead of the records.  _wanted
 * (mu held) is also 1 when flush.zero_ahead is off and zeros are there to
 * cut.
 */
int		 writer_io_zero_wanted(struct writer *);
void		 writer_io_zero_ahead(struct writer *);
/*
 * Loop thread: writes and syncs the filling batch itself if the I/O
 * thread owns nothing and the batch fits; 1 if it did (the batch, and
 * the held batches its fdatasync covered, are on `done`).
 */
int		 writer_io_inline(struct writer *);
/* Cuts the zero tail (durably), closes the file; -1 if the cut failed. */
int		 writer_io_seal(struct writer *);

static inline void
writer_lock(struct writer *w)
{
	pthread_mutex_lock(&w->mu);
}

static inline void
writer_unlock(struct writer *w)
{
	pthread_mutex_unlock(&w->mu);
}

/* writer.c, mu held: a record of the daemon's own; a checkpoint. */
void		 writer_own_locked(struct writer *, const char *event,
		    json_t *fields);
void		 writer_checkpoint_locked(struct writer *);
/*
 * writer_recover.c: re-derives the head from the log directory and gives
 * the I/O thread its file (only while it takes nothing: not started, or
 * io_failed); the retry timer's callback after a failure.
 */
int		 writer_recover(struct writer *, char *err, size_t errlen);
void		 writer_retry_cb(evutil_socket_t, short, void *);

#endif
