/*
 * The fleet's gate before a tool runs (sessions/fleet.h): a session_id
 * another node made is answered as such, never as "not found", and a
 * node that drains runs no new code, saying why in the error's type.
 * Trusts nothing of the arguments but their shape; the node part of a
 * handle only chooses which answer, never what a caller may reach.
 */
#include <string.h>

#include "sessions/fleet.h"
#include "sessions/session.h"
#include "tools.h"
#include "tools_int.h"

int
tool_node_gate(struct tool_req *rq, const char *tool, const json_t *args)
{
	struct server	*srv = rq->srv;
	const char	*self = FLEET_SELF(srv->conf.fleet.node_id);
	const char	*sid;
	char		 node[FLEET_NODE_MAX];
	int		 runs;

	sid = json_string_value(json_object_get(args, "session_id"));
	if (fleet_foreign(srv->conf.fleet.node_id, sid, node)) {
		counters_call(&srv->counters, tool, COUNT_ERROR);
		tool_fault_data(rq, TOOL_WRONG_NODE, fleet_error_data(
		    FLEET_WRONG_NODE, node, sid), FLEET_WRONG_NODE_FMT, node,
		    self);
		return -1;
	}
	if (!srv->draining)
		return 0;
	/* Draining: files and close_session still serve, so that a client
	 * can take its results out; nothing new runs.  Once the drain has
	 * closed the sessions (the last moment before the node stops),
	 * every session is lost, whoever asks: no oracle in that. */
	runs = strcmp(tool, "execute_python") == 0 ||
	    strcmp(tool, "run_command") == 0;
	if (sid != NULL && (srv->stopping || (runs &&
	    session_find(srv, sid, rq->principal) != NULL))) {
		counters_call(&srv->counters, tool, COUNT_REFUSED);
		tool_fault_data(rq, TOOL_SESSION_LOST, fleet_error_data(
		    FLEET_NODE_DRAINING, self, sid), FLEET_LOST_FMT, self);
		return -1;
	}
	/* Anyone else's session, or none: "not found", as ever. */
	if (sid != NULL || !runs)
		return 0;
	counters_call(&srv->counters, tool, COUNT_REFUSED);
	tool_fault_data(rq, TOOL_DRAINING, fleet_error_data(
	    FLEET_NODE_DRAINING, self, NULL), FLEET_DRAINING_FMT, self);
	return -1;
}
