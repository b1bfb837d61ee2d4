/*
 * run_command: an allowlisted program (commands.yaml) with its arguments,
 * no shell, in a one-shot sandbox or in a session's.  One concern with
 * tools.c, split for length: the call's life is shared (tools_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "inputs.h"
#include "sessions/session.h"
#include "tools_int.h"
#include "util.h"

/* The code the driver runs for a command: no shell, argv as given. */
static char *
launcher(const char *path, const json_t *args)
{
	json_t	*argv = json_pack("[s]", path);
	char	*list, *code;
	size_t	 n;

	json_array_extend(argv, (json_t *)args);
	/* A JSON list of strings is a Python list literal. */
	list = json_dumps(argv, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(argv);
	if (list == NULL)
		return NULL;
	n = strlen(list) + 256;
	code = xmalloc(n);
	/* One expression: in a session it binds no names among the user's. */
	snprintf(code, n, "raise SystemExit((lambda rc: 128 - rc if rc < 0 "
	    "else rc)(__import__('subprocess').run(%s, stdin=__import__("
	    "'subprocess').DEVNULL).returncode))\n", list);
	free(list);
	return code;
}

void
run_command(struct tool_req *rq, const json_t *args,
    const json_t *token)
{
	static const char *const allowed[] = { "command", "args", "files",
	    "timeout_ms", "session_id", "profile", NULL };
	struct server	*srv = rq->srv;
	struct session	*s = NULL;
	const struct profile *prof;
	struct call_grant cg;
	const json_t	*cargs = json_object_get(args, "args"), *files, *v;
	const char	*name, *path, *sid;
	char		 err[ERR_MAX], *code;
	json_t		*empty = NULL, *argv = NULL, *staged = NULL;
	unsigned	 timeout;
	size_t		 i;

	if (check_args(rq, args, allowed) == -1)
		return;
	if ((name = json_string_value(json_object_get(args, "command"))) ==
	    NULL) {
		tool_fault(rq, TOOL_BAD_PARAMS, "arguments.command: a "
		    "string is required");
		return;
	}
	if (cargs == NULL)
		cargs = empty = json_array();
	if (!json_is_array(cargs) || json_array_size(cargs) > COMMAND_ARGS_MAX) {
		tool_fault(rq, TOOL_BAD_PARAMS, "arguments.args: an array "
		    "of at most %d strings", COMMAND_ARGS_MAX);
		goto out;
	}
	json_array_foreach(cargs, i, v) {
		if (!json_is_string(v)) {
			tool_fault(rq, TOOL_BAD_PARAMS, "arguments.args[%zu]: "
			    "a string", i);
			goto out;
		}
	}
	files = json_object_get(args, "files");
	if (inputs_check(rq, files) == -1)
		goto out;
	if ((v = json_object_get(args, "session_id")) != NULL &&
	    !json_is_string(v)) {
		tool_fault(rq, TOOL_BAD_PARAMS, "arguments.session_id: a "
		    "string");
		goto out;
	}
	if ((v = json_object_get(args, "timeout_ms")) != NULL &&
	    (!json_is_integer(v) || json_integer_value(v) < 1)) {
		tool_fault(rq, TOOL_BAD_PARAMS, "arguments.timeout_ms: a "
		    "positive integer");
		goto out;
	}
	sid = json_string_value(json_object_get(args, "session_id"));
	if (tool_authorize(rq, "run_command", args, sid, &cg) == -1)
		goto out;
	prof = cg.prof;
	/* In a session: its sandbox, its /workspace, its profile.  The same
	 * answer for unknown, expired and someone else's, as for Python. */
	if (sid != NULL) {
		if ((s = session_find(srv, sid, rq->principal)) == NULL ||
		    session_busy(s)) {
			counters_call(&srv->counters, "run_command",
			    COUNT_ERROR);
			tool_error(rq, "%s", s == NULL ? "session not found" :
			    "the session is running another call");
			goto out;
		}
		prof = session_profile(s);
	}
	timeout = prof->timeout_default_ms;
	if (v != NULL) {
		if (json_integer_value(v) > prof->timeout_max_ms) {
			counters_call(&srv->counters, "run_command",
			    COUNT_ERROR);
			tool_error(rq, "timeout_ms is above this profile's "
			    "maximum of %u", prof->timeout_max_ms);
			goto out;
		}
		timeout = (unsigned)json_integer_value(v);
	}
	argv = json_pack("{s:s, s:O}", "command", name, "args", cargs);
	if ((path = commands_check(srv->commands, name, cargs, err,
	    sizeof(err))) == NULL) {
		refuse(rq, "run_command", err, &(struct refusal){
		    .session_id = sid, .argv = argv });
		tool_error(rq, "refused: %s", err);
		goto out;
	}
	/* Without a session, a sandbox of its own that goes afterwards. */
	if (sid == NULL && (s = tool_session_create(rq, &cg, err,
	    sizeof(err))) == NULL) {
		refuse(rq, "run_command", err,
		    &(struct refusal){ .argv = argv });
		tool_error(rq, "%s", err);
		goto out;
	}
	staged = json_array();
	if (inputs_stage(s, files, staged, err, sizeof(err)) == -1) {
		counters_call(&srv->counters, "run_command", COUNT_ERROR);
		/* Gone before the reply, which leaves at once. */
		if (sid == NULL)
			session_close(s, "not run");
		tool_error(rq, "%s", err);
		goto out;
	}
	if ((code = launcher(path, cargs)) == NULL) {
		counters_call(&srv->counters, "run_command", COUNT_ERROR);
		if (sid == NULL)
			session_close(s, "not run");
		tool_fault(rq, TOOL_INTERNAL, "internal error");
		goto out;
	}
	start_call(rq, s, code, strlen(code), timeout, token, NULL,
	    "run_command", json_incref(argv), staged, sid == NULL, sid == NULL,
	    &cg.bill);
	staged = NULL;
	free(code);
out:
	json_decref(staged);
	json_decref(argv);
	json_decref(empty);
}

