/*
 * run_command: an allowlisted program (commands.yaml) with its arguments,
 * no shell, in a one-shot sandbox or in a session's.  One concern with
 * tools.c, split for length: the call's life is shared (tools_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "sessions/session.h"
#include "tools_int.h"
#include "util.h"

/* The code the driver runs for a command: no shell, argv as given. */
static char *
launcher(const char *path, const json_t *argv)
{
	json_t	*list = json_pack("[s]", path);
	char	*text, *code;
	size_t	 n;

	json_array_extend(list, json_object_get(argv, "args"));
	/* A JSON list of strings is a Python list literal. */
	text = json_dumps(list, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(list);
	if (text == NULL)
		return NULL;
	n = strlen(text) + 256;
	code = xmalloc(n);
	/* One expression: in a session it binds no names among the user's. */
	snprintf(code, n, "raise SystemExit((lambda rc: 128 - rc if rc < 0 "
	    "else rc)(__import__('subprocess').run(%s, stdin=__import__("
	    "'subprocess').DEVNULL).returncode))\n", text);
	free(text);
	return code;
}

void
run_command(struct tool_req *rq, const json_t *args,
    const json_t *token)
{
	struct server		*srv = rq->srv;
	struct exec_call	 ec;
	const char		*path;
	char			 err[ERR_MAX], *code;
	json_t			*staged;

	if (exec_begin(rq, "run_command", args_run_command, args, &ec) == -1)
		goto out;
	/* Pyodide runs no programs: no process to start, and Node's
	 * permission model refuses child processes besides. */
	if (ec.prof->runtime == SANDBOX_WASM)
		snprintf(err, sizeof(err), "run_command is not available on "
		    "the wasm runtime (profile %s): WebAssembly Python starts "
		    "no programs; use execute_python", ec.prof->name);
	if (ec.prof->runtime == SANDBOX_WASM || (path = commands_check(
	    srv->commands, ec.x.command.v, ec.x.args.v, ec.x.args.n, err,
	    sizeof(err))) == NULL) {
		refuse(rq, "run_command", err, &(struct refusal){
		    .session_id = ec.x.session_id.v, .argv = ec.argv });
		tool_error(rq, "refused: %s", err);
		goto out;
	}
	/* Without a session, a sandbox of its own that goes afterwards. */
	if (exec_stage(rq, &ec, &staged) == -1)
		goto out;
	if ((code = launcher(path, ec.argv)) == NULL) {
		counters_call(&srv->counters, "run_command", COUNT_ERROR);
		if (ec.created)
			session_close(ec.s, "not run");
		json_decref(staged);
		tool_fault(rq, TOOL_INTERNAL, "internal error");
		goto out;
	}
	start_call(rq, ec.s, code, strlen(code), ec.timeout, token, NULL,
	    "run_command", json_incref(ec.argv), staged, ec.created,
	    ec.created, &ec.cg);
	free(code);
out:
	exec_end(&ec);
}
