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
	struct session_args	 a = { 0 };
	struct session		*s;

	if (tool_args(rq, "close_session", args_close_session, args,
	    &a) == -1)
		return;
	if ((s = session_find(rq->srv, a.session_id.v, rq->principal)) ==
	    NULL) {
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
	struct session_args	 a = { 0 };
	json_t			*list;
	char			*text;

	if (tool_args(rq, "list_sessions", args_list_sessions, args,
	    &a) == -1)
		return;
	list = session_list(rq->srv, rq->principal);
	text = json_dumps(list, JSON_COMPACT);
	tool_result(rq, json_pack("{s:[{s:s, s:s}], s:{s:o}, s:b}", "content",
	    "type", "text", "text", text ? text : "[]", "structuredContent",
	    "sessions", list, "isError", 0));
	free(text);
}
