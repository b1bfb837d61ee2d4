/*
 * The MCP task records (protocol/task.c runs them): one file per task in
 * STATE_DIR/tasks/, written whole and synced before a client hears of the
 * task.  Trusts nothing it reads back: a file that is not exactly a
 * record of ours is removed, not half-used.
 */
#ifndef STOCKADE_TASK_STORE_H
#define STOCKADE_TASK_STORE_H

#include <sys/queue.h>

#include <limits.h>
#include <stdint.h>
#include <jansson.h>

#include "sessions/fleet.h"
#include "sessions/profile.h"

#define TASK_ID_RANDOM		16		/* bytes: 128 bits */
#define TASK_ID_LEN		(2 * TASK_ID_RANDOM)	/* in hex */
/* hex [+ "." node] + NUL: the node that holds it (sessions/fleet.h). */
#define TASK_ID_MAX		(TASK_ID_LEN + FLEET_SUFFIX_MAX + 1)
#define TASK_TOOL_MAX		64
#define TASK_MSG_MAX		256		/* statusMessage */
#define TASK_RESULT_MAX		(4 * 1024 * 1024)	/* a result, as JSON */
#define TASK_FILE_MAX		(TASK_RESULT_MAX + 64 * 1024)

enum task_status {
	TASK_WORKING, TASK_COMPLETED, TASK_FAILED, TASK_CANCELLED
};

struct task_rec {
	TAILQ_ENTRY(task_rec)	 entry;
	char			 id[TASK_ID_MAX];
	char			 principal[PRINCIPAL_MAX];
	char			 tool[TASK_TOOL_MAX];
	enum task_status	 status;
	char			 message[TASK_MSG_MAX];	/* "" if none */
	int64_t			 created_ms;	/* wall clock, Unix ms */
	int64_t			 updated_ms;
	int64_t			 ttl_ms;
	json_t			*result;	/* completed: the tool's result */
	json_t			*error;		/* failed: {code, message} */
	void			*run;		/* task.c's, while it runs */
};
TAILQ_HEAD(task_list, task_rec);

struct task_store {
	char			 dir[PATH_MAX];
	char			 node[FLEET_NODE_MAX];	/* new ids name it */
	struct task_list	 tasks;		/* oldest first */
	unsigned		 n;
	uint64_t		 max_ttl_ms;
	unsigned		 max_total;
	unsigned		 max_per_principal;
};

const char	*task_status_name(enum task_status);
/* 32 lower-case hex digits, and "." and a node id when it has one. */
int		 task_id_ok(const char *);
int64_t		 task_now_ms(void);
/* ISO 8601 (RFC 3339, UTC, milliseconds) of a Unix ms time. */
void		 task_time(int64_t ms, char out[32]);

/*
 * Opens STATE_DIR/tasks (made if missing), reads every record there and
 * removes what is not one or has expired; a task that was still working
 * is failed with `restart_msg`: whatever ran it is gone.  Returns -1 with
 * err set when the directory cannot be used.
 */
int		 task_store_open(struct task_store *, const char *state_dir,
		    const struct mcpexec_conf *, int64_t now,
		    const char *restart_msg, char *err, size_t errlen);
void		 task_store_close(struct task_store *);

/*
 * A new working task of principal's (ttl_ms < 0: the longest allowed),
 * on disk before it returns; NULL with why set when a limit refuses it
 * or it could not be written.
 */
struct task_rec	*task_store_new(struct task_store *, const char *principal,
		    const char *tool, int64_t ttl_ms, int64_t now, char *why,
		    size_t whylen);
/* The principal's own live task with this id; anyone else's is NULL. */
struct task_rec	*task_store_find(struct task_store *, const char *principal,
		    const char *id, int64_t now);
/*
 * Ends a working task (result and error stolen; either may be NULL).  A
 * result larger than TASK_RESULT_MAX fails the task instead.  Returns -1
 * if the task had already ended (nothing changes) or was not saved.
 */
int		 task_store_finish(struct task_store *, struct task_rec *,
		    enum task_status, json_t *result, json_t *error,
		    const char *message, int64_t now);
/*
 * Removes the tasks whose ttl has passed (gone(rec) first, for those
 * still running) and their files; returns how many went.
 */
unsigned	 task_store_sweep(struct task_store *, int64_t now,
		    void (*gone)(struct task_rec *, void *), void *arg);
unsigned	 task_store_count(const struct task_store *, const char *principal);

/* Serialization (for tests too): a record as JSON, and back. */
json_t		*task_rec_json(const struct task_rec *);
int		 task_rec_parse(const json_t *, const char *name,
		    struct task_rec *, char *why, size_t whylen);

#endif
