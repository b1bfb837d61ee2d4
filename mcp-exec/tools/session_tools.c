/*
 * The session tools: close_session and list_sessions.  A caller reaches
 * only its own sessions (session_find and session_list match the
 * principal); an id of another's is "session not found", as for none.
 */
#include <stdlib.h>

#include "sessions/session.h"
#include "tools.h"
#include "tools_int.h"

void
tools_close_session(struct tool_req *rq, const json_t *args)
{
	static const char *const allowed[] = { "session_id", NULL };
	struct session	*s;
	const char	*sid;

	if (check_args(rq, args, allowed) == -1)
		return;
	if ((sid = json_string_value(json_object_get(args, "session_id"))) ==
	    NULL) {
		tool_fault(rq, TOOL_BAD_PARAMS, "arguments.session_id: a "
		    "string is required");
		return;
	}
	if ((s = session_find(rq->srv, sid, rq->principal)) == NULL) {
		tool_error(rq, "session not found");
		return;
	}
	session_close(s, "closed by the client");
	tool_result(rq, json_pack("{s:[{s:s, s:s}], s:b}", "content", "type",
	    "text", "text", "session closed", "isError", 0));
}

void
tools_list_sessions(struct tool_req *rq, const json_t *args)
{
	static const char *const allowed[] = { NULL };
	json_t		*list;
	char		*text;

	if (check_args(rq, args, allowed) == -1)
		return;
	list = session_list(rq->srv, rq->principal);
	text = json_dumps(list, JSON_COMPACT);
	tool_result(rq, json_pack("{s:[{s:s, s:s}], s:{s:o}, s:b}", "content",
	    "type", "text", "text", text ? text : "[]", "structuredContent",
	    "sessions", list, "isError", 0));
	free(text);
}
