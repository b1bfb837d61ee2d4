/*
 * Private to sessions/session*.c and pool.c: a session's state.  The
 * event loop thread owns it; everything else goes through session.h.
 */
#ifndef STOCKADE_SESSION_INT_H
#define STOCKADE_SESSION_INT_H

#include <sys/queue.h>

#include <limits.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "frame.h"
#include "network.h"
#include "packages.h"
#include "sandbox/sandbox.h"
#include "sandbox/stage.h"
#include "sandbox/wasm.h"
#include "server.h"
#include "session.h"
#include "util.h"

struct call;

struct session {
	LIST_ENTRY(session)	 entry;
	struct server		*srv;
	char			 id[SESSION_ID_MAX];
	char			 principal[PRINCIPAL_MAX];
	struct profile		 prof;		/* as it was when made: a
						   reload leaves it alone */
	struct sandbox_spec	 spec;
	struct sandbox_limits	 limits;
	struct sandbox		 sb;
	int			 started;
	/* Ending (session_end) is a state passed through once; the struct
	 * lives while anything holds it (refs: the table's, a finishing
	 * call's), so a session ended under its own call stays readable. */
	int			 ending;
	unsigned		 refs;
	int			 ctl;		/* control socket, our end */
	struct event		*ctl_ev;
	int			 wsfd;		/* O_PATH: its /workspace */
	uint8_t			 ctl_buf[DRIVER_MSG_MAX + FRAME_HDR_LEN];
	size_t			 ctl_len;
	struct frame_out	 ctl_out;	/* the exec frame going out */
	struct event		*ctl_wev;	/* writable, while it is */
	struct call		*call;
	int			 held;		/* a call is about to start */
	uint64_t		 next_exec;
	uint64_t		 last_used;	/* mono ms */
	char			 since[TS_LEN + 1];	/* created */
	struct stage		 staged;
	json_t			*seen;		/* artifact name -> {sha256, mime} */
	char			 store[PATH_MAX];	/* artifacts kept: in the
						   sandbox's directory */
	struct net_link		 net;		/* netguard's policy, if any */
	struct pkg_layer	 pkg;		/* pip's layer, if the profile
						   has packages.install */
	uint64_t		 oom_counted;	/* kills in the metrics already */
	/* The cgroup's CPU counter at the end of the last call (usec):
	 * the next call's start, so each call reads it once. */
	uint64_t		 cpu_mark;
	int			 cpu_marked;
	struct quota_bill	 bill;		/* its sessions quota */
	uint64_t		 fleet_lease;	/* the fleet's, fleet_quota.h */
	/* The driver's command line: preimport names the profile's modules. */
	const char		*argv[WASM_ARGV_MAX];
	char			 preimport[PROFILE_PREIMPORT_MAX + 16];
	int			 warming;	/* pooled, "ready" not yet read */
	/* Built for a request and handed out before its driver's "ready":
	 * that comes through session_ctl_cb, and the first call waits. */
	int			 starting;
	int			 start_failed;	/* its driver ended first */
	char			 why[SANDBOX_ERR_MAX + 64];	/* the start's
						   failure, as init told it */
	/* The filter this sandbox got, for session_created: digested at the
	 * build, off the request path (a reload drains the pool first). */
	char			 seccomp_sha256[SHA256_HEX + 8];
};

/*
 * A session in two steps (session_build.c): the sandbox with its driver
 * starting, belonging to nobody and in no list (what the pool holds), then
 * the hand-out, which gives it its principal, its events and its
 * session_created.  principal NULL: built ahead, for the pool, with the
 * profile's pre-imports.  The driver's "ready" is awaited from the loop,
 * never by blocking it: by the pool (pool_ready_cb, then session_ready
 * reads it), or by the handed-out session itself (starting).
 */
struct session	*session_build(struct server *, const char *principal,
		    const struct profile *, char *err, size_t errlen);
int		 session_ready(struct session *, int timeout_ms);
/* After the driver's first words: init's verdict (-1: s->why says why). */
int		 session_started(struct session *);
/* Why a start failed: init's word if its checklist did, else that the
 * driver did not start. */
const char	*session_start_failure(struct session *);
int		 session_handout(struct session *, const char *principal,
		    const struct quota_bill *, const json_t *client, char *err,
		    size_t errlen);
/* Frees a session that was never handed out, or whose hand-out failed. */
void		 session_discard(struct session *);
/* 0 while the driver of a built session still waits, silent. */
int		 session_dead(const struct session *);

/* From session.c, for session_build.c. */
void	sessions_publish(struct server *);
/* The same, the status file written from the loop's next turn. */
void	sessions_publish_soon(struct server *);
int	session_nonblock(int);
/* From session_call.c, for the hand-out: the control socket's events. */
void	session_ctl_cb(evutil_socket_t, short, void *);
void	session_ctl_write_cb(evutil_socket_t, short, void *);

/* session.c, for session_call.c: the OOM killer's count n, each kill
 * counted once in the metrics. */
void	session_count_oom(struct session *, uint64_t n);
/* session_call.c, for session.c: the call ends now, its session killed
 * for why (the session's reason; borrowed until it returns). */
void	call_abort(struct call *, const char *why);

/* Ends a session, audited as event with reason (session_caps.c too):
 * once, whoever calls it again or from within. */
void	session_end(struct session *, const char *event, const char *reason);
/* Holding a session across a call that may end it (session_call.c). */
void	session_retain(struct session *);
void	session_release(struct session *);
/* Room under the caps for one more session of principal (session_caps.c);
 * -1 with err when every session counted is busy. */
int	sessions_make_room(struct server *, const char *principal, char *err,
	    size_t errlen);

/* The driver's results for a call, rebuilt and capped (session_results.c):
 * a new array; *truncated when some were left out. */
json_t	*session_results_check(const struct session *, const json_t *done,
	    int *truncated);
/* Points image results at their artifacts, dropping those not held. */
void	 session_results_link(const struct session *, json_t *results);

/* What the last call left in the workspace that is new or changed. */
void	session_collect_artifacts(struct session *, json_t **changed,
	    json_t **skipped);

#endif
