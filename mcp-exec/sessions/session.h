/*
 * Sessions: one sandbox each, with one long-lived Python process running
 * the driver (mcp-exec/driver/driver.py).  A call sends the driver code and
 * a fresh stdout and stderr; output is read as it comes, the wall clock is
 * enforced (SIGINT first, then the whole sandbox), and artifacts are
 * collected when the call ends.  Sessions belong to the principal that
 * created them; any other principal is told they do not exist.
 *
 * Ownership: the server owns sessions; a call belongs to its session and
 * is freed after its done hook has run.
 */
#ifndef STOCKADE_SESSION_H
#define STOCKADE_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "fleet.h"
#include "quota.h"
#include "server.h"

#define SESSION_ID_RANDOM	16	/* bytes: 128 bits, unguessable */
#define SESSION_ID_PREFIX	"sess_"
/* "sess_" + 32 hex [+ "." node] + NUL */
#define SESSION_ID_MAX		(5 + 2 * SESSION_ID_RANDOM + \
				    FLEET_SUFFIX_MAX + 1)
#define CALL_GRACE_MS		1500	/* after SIGINT, before the kill */

#define CALL_DRAIN_MS		500	/* reading after the code is done */
#define DRIVER_READY_MS		10000	/* the driver's first words */
/* Why a session ends whose driver never came up. */
#define DRIVER_NOT_STARTED	"the session's Python driver did not start"
/* A message from the driver: a "done" carries the call's results, whose
 * text the driver keeps within RESULTS_TEXT_MAX (and stdout_max). */
#define DRIVER_MSG_MAX		(64 * 1024)
#define RESULTS_TEXT_MAX	(DRIVER_MSG_MAX - 4096)
#define SESSION_RESULTS_MAX	32	/* result items per call */
#define CALL_CRASH_WAIT_MS	500	/* for a dead driver's exit status */
/* The reason a session ends with when its memory limit killed the code. */
#define SESSION_OOM_REASON	"the code ran out of memory"

/* Why session_create closed an idle session (session_evicted's reason). */
#define SESSION_EVICTED_PRINCIPAL \
	"evicted: the principal's session limit was reached"
#define SESSION_EVICTED_TOTAL	"evicted: the server's session limit was reached"

struct call;

struct call_result {
	const char	*session_id;
	char		*stdout_text;	/* owned by the call */
	char		*stderr_text;
	uint64_t	 stdout_bytes, stderr_bytes;
	int		 exit_code;
	int		 truncated;
	int		 timed_out;
	int		 cancelled;
	int		 session_gone;	/* the sandbox had to be killed */
	int		 oom_killed;	/* the memory limit struck this call */
	uint64_t	 memory_limit;	/* bytes: the sandbox's */
	/*
	 * Why the call ended, one word for the audit and the client:
	 * "exited", "timeout", "cancelled", "oom", "crash" (the interpreter
	 * died on its own; crash_status says how) or "driver_failed".
	 */
	const char	*end;
	int		 crash_status;	/* 128 + signal, or its exit status */
	const char	*why;		/* session_gone: a sentence on why */
	uint64_t	 duration_ms;
	uint64_t	 cpu_ms;	/* the sandbox's CPU this call (hooks.cpu) */
	json_t		*artifacts;	/* new or changed this call (borrowed) */
	json_t		*skipped;	/* borrowed, may be NULL */
	json_t		*results;	/* [{type, text, ...}] (borrowed) */
	int		 results_truncated;
	/* What the package layer holds after the call, [{name, version,
	 * sha256, url}] (borrowed); NULL without a layer or when killed. */
	json_t		*packages;
};

struct call_hooks {
	/* Output as it arrives (stream 1 or 2); may be NULL. */
	void	(*progress)(void *arg, int stream, const char *data, size_t len,
		    uint64_t total);
	/* Exactly once, when the call is over. */
	void	(*done)(void *arg, const struct call_result *);
	void	 *arg;
	/* 1: measure the sandbox's CPU (cpu_ms) for a quota; 0: cpu_ms is
	 * 0 and no counter is read (on v1 without cpuacct, a /proc walk). */
	int	  cpu;
};

/*
 * At a cap, closes the least recently used idle session (the principal's,
 * then anyone's) to make room; NULL only when all counted are busy.
 * client (borrowed, may be NULL) goes into session_created.
 */
struct session	*session_create(struct server *, const char *principal,
		    const struct profile *, const struct quota_bill *,
		    const json_t *client, char *err, size_t errlen);
/* Takes the fleet's sessions lease (fleet_quota.h), released at its end. */
void		 session_set_fleet_lease(struct session *, uint64_t lease);
/* One of the profiles loaded (srv->profiles), or NULL. */
const struct profile *server_profile(const struct server *,
		    const char *name);
/* NULL when unknown, expired or another principal's: the same answer. */
struct session	*session_find(struct server *, const char *id,
		    const char *principal);
/* 1 when a live session has this id, whoever owns it: for audit reasons
 * only; the client's answer must not tell the two apart. */
int		 session_exists(struct server *, const char *id);
const char	*session_id(const struct session *);
/* The profile the session was made with (borrowed while it lives). */
const struct profile *session_profile(const struct session *);
/* Running a call, or held for one about to start. */
int		 session_busy(const struct session *);
void		 session_hold(struct session *, int on);
/*
 * Stages a call's inputs into the session's /inputs, all or none: checked
 * whole against its profile and what it holds (sandbox/stage.h), then
 * written; on failure nothing of them is left and err says why.  Fills
 * each item's size and sha256, as the bytes landed.
 */
int		 session_stage_files(struct session *, struct stage_item *,
		    size_t n, char *err, size_t errlen);
/* Starts code; hooks->done runs later (never before this returns). */
struct call	*session_exec(struct session *, const char *code, size_t len,
		    unsigned timeout_ms, const struct call_hooks *, char *err,
		    size_t errlen);
/* Stops a running call as a timeout would, marking it cancelled. */
void		 call_cancel(struct call *);
/* Ends a session: audits why, kills its sandbox, frees everything. */
void		 session_close(struct session *, const char *reason);
void		 sessions_close_all(struct server *, const char *reason);
/*
 * The live sessions (new reference): what srv->live holds after each
 * change, for `stockade status` and /metrics.
 */
json_t		*sessions_describe(struct server *);
/* Closes sessions idle longer than the configured timeout. */
void		 sessions_reap(struct server *);
/*
 * The principal's own sessions, newest first (new reference): id, created,
 * idle_s, expires_in_s (idle time left before the reaper ends it), busy.
 */
json_t		*session_list(struct server *, const char *principal);
/* The principal's artifacts as MCP resources (new reference). */
json_t		*session_resources(struct server *, const char *principal);
/* An artifact of a session the principal owns, read whole (caller frees). */
int		 session_artifact(struct server *, const char *principal,
		    const char *id, const char *name, char **data, size_t *len,
		    const char **mime);

/* list_files and read_file (session_files.c): the owner's view of the
 * session's /workspace, hostile files read with care. */
#define FILES_LIST_MAX		1000	/* entries listed per directory */
#define FILES_READ_MAX		(256 * 1024)	/* bytes per read_file */

struct session_file {
	uint8_t		*data;		/* caller frees */
	size_t		 len;
	uint64_t	 size;		/* the whole file's, at fstat */
	int		 eof;		/* nothing past data */
	const char	*mime;		/* static */
};

/* [{name, type, size, mtime}] of a directory beneath /workspace (new
 * reference); NULL with err ("session not found" for anyone else's). */
json_t		*session_list_files(struct server *, const char *principal,
		    const char *id, const char *path, int *truncated,
		    char *err, size_t errlen);
/* Up to want bytes (at most FILES_READ_MAX) from off of a regular file
 * beneath /workspace; -1 with err. */
int		 session_read_file(struct server *, const char *principal,
		    const char *id, const char *path, uint64_t off,
		    size_t want, struct session_file *, char *err,
		    size_t errlen);

#endif
