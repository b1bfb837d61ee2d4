/*
 * Group commit for the audit log.  The event loop sequences records into a
 * filling batch (seq, prev, hash assigned at once); one I/O thread writes a
 * whole batch, fdatasyncs once, and only then are its synchronous senders
 * acknowledged.  While one batch is on its way to disk the next one fills.
 *
 * The writer owns the log directory's files, the chain head and the
 * checkpoint key.  Callbacks run on the event loop thread.
 */
#ifndef STOCKADE_WRITER_H
#define STOCKADE_WRITER_H

#include <stdint.h>
#include <event2/event.h>
#include <jansson.h>

#include "config.h"
#include "frame.h"
#include "hash.h"

enum writer_status {
	WRITER_OK,
	WRITER_FULL,		/* batch full: retry after the resume callback */
	WRITER_TOO_LARGE,	/* the record would exceed the line limit */
	WRITER_SUSPENDED,	/* disk failure, disk_*_action suspend */
	WRITER_LOST,		/* disk failure, keep_going: dropped, counted */
	WRITER_HALTED,		/* disk failure, halt: the daemon is stopping */
	WRITER_STOPPING,	/* shutting down: no new events */
};

typedef void writer_done_cb(void *arg, enum writer_status,
	    uint64_t seq, const uint8_t hash[SHA256_LEN]);
typedef void writer_notify_cb(void *arg);

struct writer;

/*
 * Recovers the log directory (cutting a torn tail), starts a chain if
 * there is none, records recovery and daemon_start, and signs a first
 * checkpoint.  key is borrowed for the writer's life.
 */
struct writer	*writer_start(struct event_base *, const struct audit_conf *,
		    EVP_PKEY *key, char *err, size_t errlen);

/*
 * Sequences one event from a writer.  sync: done(arg, ...) runs once the
 * record is on disk or has failed; otherwise *seq and hash are set now and
 * done is never called.  fields are borrowed.
 */
enum writer_status writer_append(struct writer *, const char *event,
		    const json_t *fields, const struct peer *, int sync,
		    writer_done_cb *done, void *arg, uint64_t *seq,
		    uint8_t hash[SHA256_LEN]);
struct retained_code;
/*
 * The same, for an event whose code the log keeps in full: the blob goes
 * to the blob store before the record (its data is taken on WRITER_OK).
 */
enum writer_status writer_append_code(struct writer *, const char *event,
		    const json_t *fields, struct retained_code *,
		    const struct peer *, int sync, writer_done_cb *done,
		    void *arg, uint64_t *seq, uint8_t hash[SHA256_LEN]);
/* The daemon's own events; fields are stolen.  Never refused for space. */
void		 writer_append_own(struct writer *, const char *event,
		    json_t *fields);
/* The same, with blobs to store before it (its policy_load's texts;
 * their data is taken). */
void		 writer_append_own_kept(struct writer *, const char *event,
		    json_t *fields, struct retained_code *);

/* Records a signed checkpoint of the current head now. */
void		 writer_checkpoint(struct writer *);
/* Called when a writer that got WRITER_FULL may try again. */
void		 writer_on_resume(struct writer *, writer_notify_cb *, void *);
/* Called when a halt action stops the writer for good. */
void		 writer_on_halt(struct writer *, writer_notify_cb *, void *);
/* Applies the settings that may change on reload (checkpoint, actions). */
void		 writer_reconfigure(struct writer *, const struct audit_conf *);

/*
 * Records daemon_stop and a final checkpoint, flushes, and calls done
 * when everything acknowledged is durable (or the disk has failed).
 */
void		 writer_shutdown(struct writer *, writer_notify_cb *done, void *);
/* Joins the I/O thread and frees everything. */
void		 writer_free(struct writer *);

/* State for status replies (new reference). */
json_t		*writer_status_json(const struct writer *);

/* The last record on disk; safe to call from any thread. */
uint64_t	writer_durable_seq(struct writer *);

#endif
