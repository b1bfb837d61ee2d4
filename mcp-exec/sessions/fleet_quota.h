/*
 * Quotas across a fleet (rules/mcp-exec.yaml `fleet:`): every quota of
 * every principal and group (sessions, calls_per_minute,
 * concurrent_calls, CPU and wall seconds per hour and day, artifact
 * bytes per day) counted in one Redis that all nodes share, so a
 * principal's limit holds fleet-wide and not per node.  A check and its increment are one
 * Lua script (atomic in Redis); a running call and a live session hold a
 * lease (a sorted-set member scored with its expiry) that this node
 * renews while they last, so a node that dies frees its leases within
 * lease_s.  Calls to Redis are synchronous with a short timeout
 * (FLEET_TIMEOUT_MS): the loop waits at most that per command.  The
 * per-node table (quota.c) still counts everything, for status and for
 * on_unreachable: local.
 */
#ifndef STOCKADE_FLEET_QUOTA_H
#define STOCKADE_FLEET_QUOTA_H

#include <stdint.h>
#include <time.h>

#include "profile.h"
#include "quota.h"

#define FLEET_TIMEOUT_MS	100	/* connect and each command */
#define FLEET_RETRY_MS		1000	/* reconnect at most this often */
#define FLEET_KEY_MAX		(QUOTA_SUBJECT_MAX + 64)
#define FLEET_KEY_PREFIX	"stockade:quota:"

struct server;
struct fleet_quota;

enum fleet_answer {
	FLEET_OK,		/* within every fleet quota, counted */
	FLEET_OVER,		/* a fleet quota is reached: v says which */
	FLEET_DOWN,		/* store unreachable, on_unreachable: refuse */
	FLEET_LOCAL,		/* store unreachable, local quotas decide */
};

/* NULL when c names no store (no fleet.redis): nothing connects. */
struct fleet_quota *fleet_quota_open(struct server *,
		    const struct fleet_conf *c);
void		 fleet_quota_close(struct fleet_quota *);
/*
 * Checks and counts a call of bill: calls_per_minute, a lease on
 * concurrent_calls and, with new_session, one on sessions.  The leases
 * are to release when the call or the session ends (0: none held).
 */
enum fleet_answer fleet_quota_acquire(struct fleet_quota *,
		    const struct quota_bill *, int new_session,
		    uint64_t *call_lease, uint64_t *session_lease,
		    struct quota_verdict *v);
void		 fleet_quota_release(struct fleet_quota *, uint64_t lease);
/*
 * A call of bill ended: adds its CPU and wall milliseconds and artifact
 * bytes to the current hour's and day's counts of each subject with a
 * limit on them.  With the store unreachable the counts wait (at most
 * PENDING_MAX of them, then this node alone counts the rest) and are
 * added, in their own windows, once it answers again.
 */
void		 fleet_quota_charge(struct fleet_quota *,
		    const struct quota_bill *, uint64_t wall_ms,
		    uint64_t cpu_ms, uint64_t artifact_bytes);
/* The store's address as the trail names it. */
const char	*fleet_quota_store(const struct fleet_quota *);

/* Pure parts (unit tests): a subject's key for a quota, in the window
 * that now falls in; 0, or -1 when it does not fit. */
int	fleet_quota_key(char *buf, size_t len, const char *subject,
	    enum quota_kind, time_t now);

#endif
