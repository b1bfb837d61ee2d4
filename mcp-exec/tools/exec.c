/*
 * The start shared by execute_python and run_command, in one order:
 * arguments (args.c's table), the session the call names, authorization,
 * then the timeout and inputs against that session's profile, and only
 * then the session made and the inputs written.  Every refusal on the way
 * leaves a call_refused record.  The arguments are the client's.
 */
#include <stdio.h>
#include <string.h>

#include "inputs.h"
#include "sessions/fleet_quota.h"
#include "sessions/session.h"
#include "tools_int.h"

/* The record of a refusal: which call (session, code, argv) and why. */
static void
exec_record(struct tool_req *rq, const struct exec_call *ec,
    const char *reason, const char *detail)
{
	refuse_record(rq, ec->tool, reason, &(struct refusal){
	    .session_id = ec->x.session_id.v, .code = ec->x.code.v,
	    .code_len = ec->x.code.len, .argv = ec->argv, .detail = detail });
}

void
exec_refuse(struct tool_req *rq, struct exec_call *ec, const char *reason,
    const char *detail, enum count_outcome outcome)
{
	exec_record(rq, ec, reason, detail);
	counters_call(&rq->srv->counters, ec->tool, outcome);
	tool_error(rq, "%s", detail != NULL ? detail : reason);
}

/* run_command's {command, args}, for its records. */
static json_t *
exec_argv(const struct exec_args *x)
{
	json_t	*args = json_array();
	size_t	 i;

	for (i = 0; i < x->args.n; i++)
		json_array_append_new(args, json_string(x->args.v[i]));
	return json_pack("{s:s, s:o}", "command", x->command.v, "args", args);
}

int
exec_begin(struct tool_req *rq, const char *tool,
    const struct arg_spec *spec, const json_t *args, struct exec_call *ec)
{
	struct server	*srv = rq->srv;
	const char	*sid;
	char		 err[ERR_MAX];

	memset(ec, 0, sizeof(*ec));
	ec->tool = tool;
	if (args_parse(spec, args, srv->conf.server.max_code_bytes, &ec->x,
	    err, sizeof(err)) == -1) {
		/* A shape the schema refuses: a fault, recorded all the same
		 * (with what of the call could be read), not counted (the
		 * metrics count calls whose arguments passed the schema). */
		exec_record(rq, ec, "bad arguments", err);
		tool_fault(rq, TOOL_BAD_PARAMS, "%s", err);
		return -1;
	}
	if (ec->x.command.v != NULL)
		ec->argv = exec_argv(&ec->x);
	/* The schema counts characters; what is scanned and kept, bytes. */
	if (ec->x.code.len > srv->conf.server.max_code_bytes) {
		snprintf(err, sizeof(err), "code: %zu bytes, more than "
		    "server.max_code_bytes (%zu)", ec->x.code.len,
		    srv->conf.server.max_code_bytes);
		exec_refuse(rq, ec, "bad arguments", err, COUNT_ERROR);
		return -1;
	}
	/* Same answer for unknown, expired and someone else's: no probing. */
	sid = ec->x.session_id.v;
	if (sid != NULL && (ec->s = session_find(srv, sid, rq->principal)) ==
	    NULL) {
		exec_refuse(rq, ec, "session not found", NULL, COUNT_ERROR);
		return -1;
	}
	if (tool_authorize(rq, tool, ec->x.profile.v, sid, &ec->cg) == -1)
		return -1;
	/* A session keeps the profile it was made with, across reloads. */
	ec->prof = ec->s != NULL ? session_profile(ec->s) : ec->cg.prof;
	ec->timeout = ec->prof->timeout_default_ms;
	if (ec->x.timeout_ms.set) {
		if (ec->x.timeout_ms.v > ec->prof->timeout_max_ms) {
			snprintf(err, sizeof(err), "timeout_ms %lld is above "
			    "this profile's maximum of %u",
			    (long long)ec->x.timeout_ms.v,
			    ec->prof->timeout_max_ms);
			exec_refuse(rq, ec, "bad arguments", err, COUNT_ERROR);
			return -1;
		}
		ec->timeout = (unsigned)ec->x.timeout_ms.v;
	}
	if (inputs_check(&ec->x, &ec->prof->inputs, ec->items, &ec->nitems,
	    err, sizeof(err)) == -1) {
		exec_refuse(rq, ec, "bad arguments", err, COUNT_ERROR);
		return -1;
	}
	if (ec->s != NULL && session_busy(ec->s)) {
		exec_refuse(rq, ec, "session busy", "the session is running "
		    "another call", COUNT_ERROR);
		return -1;
	}
	return 0;
}

int
exec_stage(struct tool_req *rq, struct exec_call *ec, json_t **staged)
{
	char	 err[ERR_MAX];

	*staged = NULL;
	if (ec->s == NULL) {
		if ((ec->s = tool_session_create(rq, &ec->cg, err,
		    sizeof(err))) == NULL) {
			exec_refuse(rq, ec, err, NULL, COUNT_REFUSED);
			return -1;
		}
		ec->created = 1;
	}
	*staged = json_array();
	if (inputs_stage(ec->s, ec->items, ec->nitems, *staged, err,
	    sizeof(err)) == 0)
		return 0;
	/* A session made for this call only goes with it, before the reply
	 * (which leaves at once). */
	if (ec->created)
		session_close(ec->s, "not run");
	ec->s = NULL;
	json_decref(*staged);
	*staged = NULL;
	exec_refuse(rq, ec, "inputs not staged", err, COUNT_ERROR);
	return -1;
}

void
exec_end(struct exec_call *ec)
{
	/* Refused or failed before start_call took it. */
	fleet_quota_release(ec->cg.fleet, ec->cg.lease);
	fleet_quota_release(ec->cg.fleet, ec->cg.session_lease);
	ec->cg.lease = ec->cg.session_lease = 0;
	exec_args_free(&ec->x);
	json_decref(ec->argv);
	ec->argv = NULL;
}
