/*
 * What sessions and tool calls count, for operators: plain integers kept
 * and read by the event loop's thread, published here so that ops/
 * (GET /metrics) reads them without reaching into the layers that count.
 * Labels are tools, outcomes, close reasons and pattern rule ids, never a
 * principal, a session id or code.
 *
 * Ownership: struct counters lives inside struct server, zeroed with it;
 * its memory is fixed (pattern-hit labels are bounded by COUNT_HITS_MAX).
 */
#ifndef STOCKADE_COUNTERS_H
#define STOCKADE_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Finite histogram bounds (counters_bucket_ms); +Inf is implied. */
#define COUNT_BUCKETS		9
/* Pattern rule ids (tools/patterns.h: 256 rules of 32 bytes) and the
 * scanner's own "scanner_error"; a reload may bring new ids. */
#define COUNT_HITS_MAX		512
#define COUNT_RULE_MAX		33
#define COUNT_ACTION_MAX	8	/* "flag", "deny" */

enum count_tool {
	COUNT_TOOL_PYTHON,	/* execute_python */
	COUNT_TOOL_COMMAND,	/* run_command */
	COUNT_TOOLS
};

enum count_outcome {
	COUNT_OK,		/* ran, exit code 0 */
	COUNT_ERROR,		/* ran and failed, or could not start */
	COUNT_TIMEOUT,		/* stopped at its deadline */
	COUNT_CANCELLED,	/* notifications/cancelled */
	COUNT_REFUSED,		/* pattern, allowlist, session limit, audit */
	COUNT_OUTCOMES
};

enum count_close {
	COUNT_CLOSED,		/* by the client; a one-shot command's end */
	COUNT_EXPIRED,		/* idle timeout */
	COUNT_LOST,		/* the sandbox died or had to be killed */
	COUNT_STOPPED,		/* mcp-exec stopped, or its stdio client left */
	COUNT_CLOSE_OTHER,
	COUNT_EVICTED,		/* idle, closed to make room under a cap */
	COUNT_CLOSE_REASONS
};

struct count_hit {
	char		 rule[COUNT_RULE_MAX];
	char		 action[COUNT_ACTION_MAX];
	uint64_t	 n;
};

struct counters {
	uint64_t	 sessions_created;
	uint64_t	 sessions_closed[COUNT_CLOSE_REASONS];
	uint64_t	 calls[COUNT_TOOLS][COUNT_OUTCOMES];
	/* Calls that ran, by duration: bucket i holds those <= bound i
	 * and above bound i-1; the last, those above every bound. */
	uint64_t	 duration[COUNT_TOOLS][COUNT_BUCKETS + 1];
	uint64_t	 duration_ms_sum[COUNT_TOOLS];
	uint64_t	 timeouts;
	uint64_t	 oom_kills;
	/* The warm pool: sessions of a pooled profile served from it (hits)
	 * or built on the request path (misses), sandboxes thrown away
	 * because their driver died waiting or never started (discarded),
	 * and what it holds now.  pool_warm: 1 once the pool first held all
	 * it may (every profile's pool.size, or what the caps allow; at
	 * once when no profile has a pool), never 0 again: a node is ready
	 * for traffic then (`stockade status --ready`), and a pool emptied
	 * by that traffic refills as before. */
	uint64_t	 pool_hits, pool_misses, pool_discarded;
	uint64_t	 pool_ready, pool_warm;
	/* Sandboxes built (ahead or on the request path, failed ones too)
	 * and the time the loop spent on their synchronous part, during
	 * which every other session's calls waited. */
	uint64_t	 builds, build_ns;
	struct count_hit hits[COUNT_HITS_MAX];
	size_t		 nhits;
};

extern const uint64_t	 counters_bucket_ms[COUNT_BUCKETS];
const char	*counters_tool_name(enum count_tool);

/* A call that ended without running (refused, or an error before it ran). */
void	counters_call(struct counters *, const char *tool, enum count_outcome);
/* A call that ran for duration_ms. */
void	counters_call_done(struct counters *, const char *tool,
	    enum count_outcome, uint64_t duration_ms);
void	counters_session_created(struct counters *);
/* reason: session_close's, mapped to one of enum count_close. */
void	counters_session_closed(struct counters *, const char *reason);
void	counters_timeout(struct counters *);
void	counters_oom_kills(struct counters *, uint64_t n);
void	counters_build(struct counters *, uint64_t ns);
/* hits: patterns_scan's array (borrowed). */
void	counters_pattern_hits(struct counters *, const json_t *hits);

#endif
