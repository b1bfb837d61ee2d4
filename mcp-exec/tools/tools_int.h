/*
 * Private to tools/: the life of a call that runs code in a session,
 * shared by execute_python (tools.c) and run_command (command.c), which
 * are one concern split for length.  Same trust as tools.h: arguments are
 * the client's.
 */
#ifndef STOCKADE_TOOLS_INT_H
#define STOCKADE_TOOLS_INT_H

#include <stddef.h>
#include <jansson.h>

#include "args.h"
#include "inputs.h"
#include "sessions/quota.h"
#include "tools.h"

#define ERR_MAX		2048	/* quotes a command's arg_pattern */

struct fleet_quota;
struct session;

/* What a refusal record says besides who and why (all optional). */
struct refusal {
	const char	*rule;		/* the pattern rule or scanner_error */
	const char	*severity;	/* the rule's, or what the refusal is */
	const char	*session_id;	/* the session the call named */
	const char	*code;		/* hashed, never kept */
	size_t		 code_len;
	const json_t	*argv;		/* run_command's {command, args} */
	const char	*detail;	/* what was wrong, in words */
};

/* A tool-level failure: a result with isError (ends rq). */
void	tool_error(struct tool_req *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/*
 * args against the tool's table (args.h) into out (zeroed); -1 after a
 * fault naming the argument, audited as call_refused (ends rq).
 */
int	tool_args(struct tool_req *, const char *tool, const struct arg_spec *,
	    const json_t *args, void *out);
/* What authorization decided for a call that runs code (authorize.c). */
struct call_grant {
	const struct profile	*prof;	/* of a new session: the server's */
	struct quota_bill	 bill;
	struct fleet_quota	*fleet;	/* the lease's store */
	uint64_t		 lease;	/* fleet concurrent_calls, 0: none */
	uint64_t		 session_lease;	/* fleet sessions, 0: none */
};

/* 1 when the caller may use tool; 0 after a refusal (ends rq). */
int	tool_permitted(struct tool_req *, const char *tool);
/*
 * The profile a new session gets (profile, else the caller's default)
 * and the quotas that apply, all checked; -1 after a refusal (ends rq).
 * sid: the session the call names, or NULL.
 */
int	tool_authorize(struct tool_req *, const char *tool,
	    const char *profile, const char *sid, struct call_grant *);
/* A session for this request; NULL with err. */
struct session *tool_session_create(struct tool_req *,
	    struct call_grant *, char *err, size_t errlen);
/* A call refused before it ran: audited as call_refused and counted as
 * refused (rq not ended); refuse_record only audits. */
void	refuse(struct tool_req *, const char *tool, const char *reason,
	    const struct refusal *);
void	refuse_record(struct tool_req *, const char *tool, const char *reason,
	    const struct refusal *);
/*
 * A call that runs code (execute_python, run_command) up to its start:
 * its arguments, the session it names, its grant, and its timeout and
 * inputs checked against the profile.  Everything is checked before
 * anything is written, and every refusal on the way is a call_refused
 * record.
 */
struct exec_call {
	const char		*tool;
	struct exec_args	 x;
	struct session		*s;	/* named, or made by exec_stage */
	int			 created;	/* by exec_stage */
	struct call_grant	 cg;
	const struct profile	*prof;	/* the session's, or the new one's */
	unsigned		 timeout;	/* ms, within prof's */
	json_t			*argv;	/* run_command's {command, args} */
	struct stage_item	 items[INPUTS_MAX];
	size_t			 nitems;
};

/* Parses, finds, authorizes and checks (exec.c); -1 after the refusal
 * (ends rq).  exec_end frees ec either way. */
int	exec_begin(struct tool_req *, const char *tool,
	    const struct arg_spec *, const json_t *args, struct exec_call *ec);
/* The session (made now when the call named none) with the inputs
 * staged; -1 after the refusal (ends rq).  *staged: for start_call. */
int	exec_stage(struct tool_req *, struct exec_call *, json_t **staged);
/* A refusal before the code runs: call_refused (reason, and detail when
 * given) with what identifies the call, counted as outcome, answered
 * with detail (or reason) as a tool error (ends rq). */
void	exec_refuse(struct tool_req *, struct exec_call *, const char *reason,
	    const char *detail, enum count_outcome);
void	exec_end(struct exec_call *);
/*
 * Audits execution_started, then runs code in s and answers rq when it
 * is done; takes hits, argv and inputs (what inputs_stage staged).
 * oneshot: the session goes afterwards; created: it was made for this
 * call (goes if the call never runs).  Takes cg's bill and fleet lease.
 */
void	start_call(struct tool_req *, struct session *s, const char *code,
	    size_t len, unsigned timeout, const json_t *token, json_t *hits,
	    const char *tool, json_t *argv, json_t *inputs, int oneshot,
	    int created, struct call_grant *);
/*
 * node_gate.c: a session_id of another node (TOOL_WRONG_NODE), or new
 * code on a node that drains (TOOL_DRAINING, TOOL_SESSION_LOST): -1
 * after the fault (ends rq); 0 lets the tool run.
 */
int	tool_node_gate(struct tool_req *, const char *tool,
	    const json_t *args);
/* session_tools.c: the caller's own sessions. */
void	tools_close_session(struct tool_req *, const json_t *args);
void	tools_list_sessions(struct tool_req *, const json_t *args);
/* run_command (command.c). */
void	run_command(struct tool_req *, const json_t *args,
	    const json_t *token);

#endif
