/*
 * The start of a tool call (start_call): execution_started audited and
 * on disk before the code runs, the call's timeout bounding the wait for
 * its ack, and when the code does not run (the audit failed, the call was
 * cancelled or timed out meanwhile, the session went), a call_refused
 * saying why.  Shared by execute_python and run_command.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "log.h"
#include "pycall.h"
#include "sessions/inflight.h"
#include "sessions/persist.h"
#include "sessions/session.h"
#include "tools.h"
#include "tools_int.h"
#include "util.h"

/* A session made for a call that never ran goes with it: the client
 * never learnt its id, and it would count against the limits.  reason:
 * its session_closed's, "not run" unless the session itself failed. */
static void
not_run_close(struct pycall *pc, struct session *s, const char *reason)
{
	if ((pc->oneshot || pc->created) && s != NULL)
		session_close(s, reason);
}

/*
 * The end of an execution whose code never ran: execution_started was
 * sent (and may be on disk), so a call_refused saying why follows it,
 * whatever the reason, and closes its line in the in-flight journal.
 */
static void
not_run_record(struct pycall *pc, const char *reason)
{
	inflight_end(pc->srv, pc->inflight, tool_with_client(pc->rq, json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I}", "event",
	    "call_refused", "principal", pc->principal, "reason", reason,
	    "tool", pc->tool, "severity", "info", "session_id", pc->sid,
	    "code_hash", pc->code_hash, "code_size",
	    (json_int_t)pc->code_size)));
	pc->inflight = NULL;
}

/*
 * The code does not run: the refusal on the record, the session held for
 * it let go (and one made for this call closed), the client answered with
 * err unless it cancelled, pc freed unless it still awaits the ack.
 */
static void
not_run(struct pycall *pc, struct session *s, const char *err,
    const char *reason, enum count_outcome outcome)
{
	struct server	*srv = pc->srv;
	int		 cancelled = pc->rq->cancelled;

	not_run_record(pc, cancelled ? "cancelled before it ran" : err);
	counters_call(&srv->counters, pc->tool, cancelled ? COUNT_CANCELLED :
	    outcome);
	pycall_bill(pc, NULL);
	/* The reply leaves at once (stdio): the session goes first, so that
	 * nothing of it is left once the client has the answer. */
	if (cancelled) {
		tool_drop(pc->rq);	/* no answer */
		not_run_close(pc, s, reason);
	} else {
		not_run_close(pc, s, reason);
		tool_error(pc->rq, "%s", err);
	}
	pc->rq = NULL;
	if (!pc->gave_up)
		pycall_free(pc);
}

/*
 * The call's timeout passed before execution_started's ack: the client's
 * deadline is the call's, so it is answered now; the ack, when it comes,
 * only frees pc (py_started).
 */
static void
audit_wait_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct pycall	*pc = arg;
	struct session	*s;
	char		 err[ERR_MAX];

	if ((s = session_find(pc->srv, pc->sid, pc->principal)) != NULL)
		session_hold(s, 0);
	snprintf(err, sizeof(err), "not run: stockade-auditd did not "
	    "acknowledge execution_started within the call's timeout "
	    "(%u ms)", pc->timeout_ms);
	pc->gave_up = 1;
	not_run(pc, s, err, "not run", COUNT_REFUSED);
}

/*
 * execution_started is on disk (or could not be written): the code runs
 * now, unless the audit is required and failed, the call was cancelled
 * meanwhile, or the session went away; each of those is recorded.  The
 * code gets what is left of the call's timeout.
 */
static void
py_started(void *arg, int audited, const char *audit_err)
{
	struct pycall		*pc = arg;
	struct server		*srv = pc->srv;
	struct call_hooks	 hooks;
	struct session		*s;
	char			 err[ERR_MAX];
	uint64_t		 waited;

	if (pc->gave_up) {
		pycall_free(pc);	/* answered and recorded already */
		return;
	}
	if (pc->audit_wait != NULL)
		evtimer_del(pc->audit_wait);
	if ((s = session_find(srv, pc->sid, pc->principal)) != NULL)
		session_hold(s, 0);
	if (!audited)
		tool_log(pc->rq, "error", json_pack("{s:s, s:s}",
		    "message", server_audit_required(srv) ? "the audit trail is "
		    "unavailable: no code runs" : "the audit trail is "
		    "unavailable: code runs unaudited (audit_required: false)",
		    "error", audit_err));
	waited = mono_ms() - pc->t0;
	if (!audited && server_audit_required(srv)) {
		snprintf(err, sizeof(err), "not run: the audit trail is "
		    "unavailable (%s)", audit_err);
		not_run(pc, s, err, "not run", COUNT_REFUSED);
		return;
	}
	if (pc->unjournaled && server_audit_required(srv)) {
		snprintf(err, sizeof(err), "not run: the in-flight journal in "
		    "state_dir could not be written");
		not_run(pc, s, err, "not run", COUNT_REFUSED);
		return;
	}
	if (pc->rq->cancelled || s == NULL || srv->stopping ||
	    waited >= pc->timeout_ms) {
		snprintf(err, sizeof(err), waited >= pc->timeout_ms ? "not "
		    "run: the call's timeout (%u ms) passed while its "
		    "execution_started was written" : srv->stopping ? "not run: "
		    "mcp-exec is stopping" : "session not found",
		    pc->timeout_ms);
		not_run(pc, s, err, "not run", COUNT_ERROR);
		return;
	}
	hooks.progress = pycall_progress;
	hooks.done = pycall_done;
	hooks.arg = pc;
	/* Only a quota bills CPU: without one no counter is read. */
	hooks.cpu = pc->billed && pc->bill.n > 0;
	pc->call = session_exec(s, pc->code, pc->code_len,
	    pc->timeout_ms - (unsigned)waited, &hooks, err, sizeof(err));
	free(pc->code);
	pc->code = NULL;
	if (pc->call != NULL) {
		inflight_ran(srv, pc->inflight);
		return;
	}
	/* A session whose start failed ends with why (and one made for this
	 * call whose exec failed). */
	not_run(pc, s, err, err, COUNT_ERROR);
}

/* The quota decision that let the call start, for execution_started. */
static json_t *
bill_subjects(struct pycall *pc)
{
	json_t		*a = json_array();
	unsigned	 i;

	for (i = 0; pc->billed && i < pc->bill.n; i++)
		json_array_append_new(a, json_string(pc->bill.a[i].subject));
	return a;
}

/* Adds the subjects whose quotas were checked (ev may be NULL). */
static json_t *
with_quota(json_t *ev, json_t *subjects)
{
	if (ev != NULL && json_array_size(subjects) > 0)
		json_object_set(ev, "quota_checked", subjects);
	json_decref(subjects);
	return ev;
}

/*
 * Audits execution_started, to be on disk before the code runs; the call
 * starts in py_started and is answered from pycall_done.  Meanwhile the
 * session is held and the request can be cancelled.  Takes hits and argv.
 */
void
start_call(struct tool_req *rq, struct session *s,
    const char *code, size_t len, unsigned timeout, const json_t *token,
    json_t *hits, const char *tool, json_t *argv, json_t *inputs, int oneshot,
    int created, struct call_grant *cg)
{
	const struct quota_bill	*bill = cg != NULL ? &cg->bill : NULL;
	struct server		*srv = rq->srv;
	struct pycall		*pc;
	struct timeval		 tv;
	char			 err[ERR_MAX];
	json_t			*ev;

	pc = xcalloc(1, sizeof(*pc));
	pc->srv = srv;
	pc->hits = hits ? hits : json_array();
	pc->argv = argv;
	pc->inputs = inputs;
	pc->tool = tool;
	pc->prof = session_profile(s);
	pc->oneshot = oneshot;
	pc->created = created;
	pc->timeout_ms = timeout;
	pc->code = xmalloc(len + 1);
	memcpy(pc->code, code, len);
	pc->code[len] = '\0';
	pc->code_len = pc->code_size = len;
	snprintf(pc->sid, sizeof(pc->sid), "%s", session_id(s));
	snprintf(pc->principal, sizeof(pc->principal), "%s", rq->principal);
	memcpy(pc->code_hash, "sha256:", 7);
	sha256_hex(code, len, pc->code_hash + 7);
	pc->progress_token = token ? json_deep_copy(token) : NULL;
	pc->rq = rq;
	rq->cancel = pycall_cancel;
	rq->arg = pc;
	session_hold(s, 1);
	/* In flight from here: it counts against concurrent_calls and
	 * calls_per_minute until pycall_bill. */
	if (bill != NULL && srv->quota != NULL) {
		pc->bill = *bill;
		pc->billed = 1;
		pc->lease = cg->lease;	/* released with the bill */
		cg->lease = 0;
		quota_call_begin(srv->quota, &pc->bill);
		persist_soon(srv);	/* status: what runs now, soon */
	}
	/* The code goes along: stockade-auditd keeps what code.retention says
	 * (hash, sample or the whole code, stored before this is acked). */
	ev = json_pack("{s:s, s:s, s:s, s:s, s:I, s:O, s:s, s:s%}", "event",
	    "execution_started", "principal", rq->principal, "session_id",
	    pc->sid, "code_hash", pc->code_hash, "code_size", (json_int_t)len,
	    "pattern_hits", pc->hits, "tool", tool, "code", code, len);
	/* Which inputs the code saw, by hash, before it runs. */
	if (ev != NULL && json_array_size(inputs) > 0)
		json_object_set(ev, "inputs", inputs);
	/* The profile may ask the log to keep more of the code, never less. */
	if (ev != NULL && pc->prof->code_retention[0] != '\0')
		json_object_set_new(ev, "code_retention_min",
		    json_string(pc->prof->code_retention));
	pc->t0 = mono_ms();
	if (server_audit_sync(srv, with_quota(tool_with_client(rq, ev),
	    bill_subjects(pc)), py_started, pc, err, sizeof(err)) == -1) {
		py_started(pc, 0, err);
		return;
	}
	/* Sent: its end is owed from now, even if this server dies first
	 * (the ack cannot come before the loop's next turn). */
	pc->inflight = inflight_begin(srv, tool_with_trace(rq, json_pack(
	    "{s:s, s:s, s:s, s:I, s:s, s:s}", "principal", rq->principal,
	    "session_id", pc->sid, "code_hash", pc->code_hash, "code_size",
	    (json_int_t)len, "tool", tool, "request", rq->request_id)));
	pc->unjournaled = pc->inflight == NULL;
	tv.tv_sec = timeout / 1000;
	tv.tv_usec = (timeout % 1000) * 1000;
	if ((pc->audit_wait = evtimer_new(srv->base, audit_wait_cb, pc)) ==
	    NULL || evtimer_add(pc->audit_wait, &tv) == -1)
		fatalx("audit wait timer");
	server_poll(srv, 0);	/* its ack: about one fdatasync from now */
}
