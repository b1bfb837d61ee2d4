/*
 * The executions a server has begun and not yet ended on the record
 * (inflight.c): a journal in state_dir, so that the next start writes the
 * end of every execution a server that died left open.
 */
#ifndef STOCKADE_INFLIGHT_H
#define STOCKADE_INFLIGHT_H

#include <jansson.h>

#define INFLIGHT_FILE_PREFIX	"inflight-"	/* + pid + ".log" */
#define INFLIGHT_LINE_MAX	4096	/* one entry's line, fields and all */
#define INFLIGHT_COMPACT_BYTES	(1024 * 1024)	/* rewritten past this */
#define INFLIGHT_FILE_MAX	(64 * 1024 * 1024)	/* read at the most */

struct server;
struct inflight;

/*
 * Records the end of every execution that the journals of servers no
 * longer running left open (the journal goes once the daemon has them
 * all), then starts this server's.  -1 with err when it cannot.
 */
int		 inflight_open(struct server *, char *err, size_t errlen);
/*
 * A journal's entries still open: {id: {"f": fields, "ran": bool}}, each
 * begun ("B"), not ended ("E"), with its fields an object naming a
 * principal and a session; every other line, and a torn last one, is
 * passed over.  A new object.
 */
json_t		*inflight_parse(const char *data, size_t len);
/* At a clean stop: the journal goes when nothing in it is open. */
void		 inflight_close(struct server *);
/*
 * An execution begins: fields (stolen: principal, session_id, code_hash,
 * code_size, tool and what names the request) are what its end says if
 * the server dies first.  NULL when it could not be written (logged).
 */
struct inflight	*inflight_begin(struct server *, json_t *fields);
/* Its code went to the driver: from now it may have run. */
void		 inflight_ran(struct server *, struct inflight *);
/*
 * Its end: record (stolen) goes to the audit daemon, and the entry
 * closes once the daemon has it; until then, and for good if it never
 * does, the journal keeps it.  e may be NULL (nothing was journaled).
 */
void		 inflight_end(struct server *, struct inflight *, json_t *record);

#endif
