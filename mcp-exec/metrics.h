/*
 * Operational counters for GET /metrics (Prometheus text format 0.0.4).
 * Plain integers, kept and read by the event loop's thread.  They are for
 * operators, not auditors: labels are tools, outcomes, close reasons,
 * pattern rule ids and netguard's deny chains, never a principal, a
 * session id or code.
 *
 * Ownership: struct metrics lives inside struct server, zeroed with it;
 * its memory is fixed (pattern-hit labels are bounded by PATTERNS_MAX).
 */
#ifndef STOCKADE_METRICS_H
#define STOCKADE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "patterns.h"

/* A scrape waits this long for netguard, on the event loop's thread. */
#define METRICS_NETGUARD_TIMEOUT_MS	200
/* Finite histogram bounds (ms); +Inf is implied. */
#define METRICS_BUCKETS			9
/* Every rule of patterns.yaml, and the scanner's own "scanner_error". */
#define METRICS_HITS_MAX		(PATTERNS_MAX + 1)
#define METRICS_ACTION_MAX		8	/* "flag", "deny" */

enum metrics_tool {
	METRICS_TOOL_PYTHON,		/* execute_python */
	METRICS_TOOL_COMMAND,		/* run_command */
	METRICS_TOOLS
};

enum metrics_outcome {
	METRICS_OK,		/* ran, exit code 0 */
	METRICS_ERROR,		/* ran and failed, or could not start */
	METRICS_TIMEOUT,	/* stopped at its deadline */
	METRICS_CANCELLED,	/* notifications/cancelled */
	METRICS_REFUSED,	/* pattern, allowlist, session limit, audit */
	METRICS_OUTCOMES
};

enum metrics_close {
	METRICS_CLOSED,		/* by the client; a one-shot command's end */
	METRICS_EXPIRED,	/* idle timeout */
	METRICS_LOST,		/* the sandbox died or had to be killed */
	METRICS_STOPPED,	/* mcp-exec stopped, or its stdio client left */
	METRICS_CLOSE_OTHER,
	METRICS_CLOSE_REASONS
};

struct metrics_hit {
	char		 rule[PATTERNS_ID_MAX + 1];
	char		 action[METRICS_ACTION_MAX];
	uint64_t	 n;
};

struct metrics {
	uint64_t	 sessions_created;
	uint64_t	 sessions_closed[METRICS_CLOSE_REASONS];
	uint64_t	 calls[METRICS_TOOLS][METRICS_OUTCOMES];
	/* Calls that ran, by duration: bucket i holds those <= bound i
	 * and above bound i-1; the last, those above every bound. */
	uint64_t	 duration[METRICS_TOOLS][METRICS_BUCKETS + 1];
	uint64_t	 duration_ms_sum[METRICS_TOOLS];
	uint64_t	 timeouts;
	uint64_t	 oom_kills;
	struct metrics_hit hits[METRICS_HITS_MAX];
	size_t		 nhits;
};

struct server;
struct evbuffer;

/* A call that ended without running (refused, or an error before it ran). */
void	metrics_call(struct metrics *, const char *tool,
	    enum metrics_outcome);
/* A call that ran for duration_ms. */
void	metrics_call_done(struct metrics *, const char *tool,
	    enum metrics_outcome, uint64_t duration_ms);
void	metrics_session_created(struct metrics *);
/* reason: session_close's, mapped to one of enum metrics_close. */
void	metrics_session_closed(struct metrics *, const char *reason);
void	metrics_timeout(struct metrics *);
void	metrics_oom_kills(struct metrics *, uint64_t n);
/* hits: patterns_scan's array (borrowed). */
void	metrics_pattern_hits(struct metrics *, const json_t *hits);
/* Appends the exposition to out; may ask netguard (bounded wait). */
void	metrics_render(struct server *, struct evbuffer *out);

#endif
