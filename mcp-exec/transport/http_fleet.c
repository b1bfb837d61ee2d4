/*
 * The HTTP transport as one node of a fleet (sessions/fleet.h): what a
 * draining node still serves, and a 2025-era request that asks, inside
 * another node's MCP session, for a sandbox, task or artifact this node
 * holds (a router sends it here by that handle).  Such a request is
 * served on its own, as a 2026-07-28 request is: its caller is who its
 * credentials say, as for every request, and the handle is found only
 * among that principal's own.  Trusts no header or body field beyond
 * that.
 */
#include <stdio.h>
#include <string.h>

#include <event2/http.h>

#include "http_int.h"
#include "log.h"
#include "sessions/session.h"

/* The handle a request's body acts on: a session_id, a task, the session
 * of an artifact (into buf); NULL for none. */
static const char *
body_handle(const json_t *msg, char *buf, size_t len)
{
	const json_t	*params = json_object_get(msg, "params");
	const char	*method = json_string_value(json_object_get(msg,
			    "method")), *uri, *end;
	size_t		 plen = strlen(ARTIFACT_URI_PREFIX);

	if (method == NULL)
		return NULL;
	if (strcmp(method, "tools/call") == 0)
		return json_string_value(json_object_get(json_object_get(
		    params, "arguments"), "session_id"));
	if (strncmp(method, "tasks/", 6) == 0)
		return json_string_value(json_object_get(params, "taskId"));
	if (strcmp(method, "resources/read") != 0 ||
	    (uri = json_string_value(json_object_get(params, "uri"))) ==
	    NULL || strncmp(uri, ARTIFACT_URI_PREFIX, plen) != 0 ||
	    (end = strchr(uri + plen, '/')) == NULL ||
	    (size_t)(end - uri) - plen >= len)
		return NULL;
	memcpy(buf, uri + plen, (size_t)(end - uri) - plen);
	buf[(end - uri) - plen] = '\0';
	return buf;
}

int
http_fleet_has_handle(struct evhttp_request *req, const json_t *msg)
{
	const char	*method = json_string_value(json_object_get(msg,
			    "method")), *h;

	return http_header_one(req, HTTP_PARAM_SESSION, &h) == 1 ||
	    strncmp(method, "tasks/", 6) == 0 ||
	    strcmp(method, "resources/read") == 0;
}

void
http_reply_draining(struct http_tr *tr, struct evhttp_request *req)
{
	const char	*self = FLEET_SELF(tr->srv->conf.fleet.node_id);

	/* 503: never processed, so a router may send it elsewhere. */
	http_reply_error(req, 503, FLEET_ERR_DRAINING, FLEET_DRAINING_FMT,
	    self);
}

int
http_fleet_visitor(struct http_tr *tr, struct evhttp_request *req,
    const json_t *msg)
{
	const char	*self = tr->srv->conf.fleet.node_id, *sid, *h;
	char		 node[FLEET_NODE_MAX], buf[SESSION_ID_MAX];

	if (self[0] == '\0' || json_object_get(msg, "id") == NULL ||
	    http_header_one(req, "Mcp-Session-Id", &sid) != 1 ||
	    !fleet_foreign(self, sid, node))
		return 0;
	/* Ours, by the handle the body acts on. */
	return (h = body_handle(msg, buf, sizeof(buf))) != NULL &&
	    fleet_handle_node(h, node) && strcmp(node, self) == 0;
}

int
http_fleet_owner(struct http_tr *tr, struct evhttp_request *req,
    const json_t *msg, char node[FLEET_NODE_MAX])
{
	const char	*h;
	char		 buf[SESSION_ID_MAX];

	/* What the request acts on before the MCP session it is sent in,
	 * as the router has it (docs/fleet-routing.md). */
	if ((h = body_handle(msg, buf, sizeof(buf))) == NULL &&
	    http_header_one(req, "Mcp-Session-Id", &h) != 1)
		return 0;
	return fleet_foreign(tr->srv->conf.fleet.node_id, h, node);
}

void
http_fleet_visit(struct http_tr *tr, struct evhttp_request *req,
    const struct http_auth *a, const json_t *msg, const char *body,
    size_t len, int sse)
{
	struct http_sess	*s;
	const char		*ver;

	if (http_param_check(req, msg, 0) == -1)
		return;
	if (http_header_one(req, "MCP-Protocol-Version", &ver) == -1 ||
	    (ver != NULL && !http_version_legacy(ver))) {
		http_reply_error(req, 400, RPC_SERVER_ERROR, "unsupported "
		    "MCP-Protocol-Version %.32s", ver != NULL ? ver : "");
		return;
	}
	log_debug("http: a request of %s in another node's MCP session, for "
	    "a handle of this node", a->principal);
	/* One request, in the revision the MCP session speaks. */
	s = http_sess_new(tr, a->principal, 1);
	http_auth_session(tr, req, a, &s->conn->client);
	s->conn->initialized = 1;
	snprintf(s->conn->protocol, sizeof(s->conn->protocol), "%s",
	    ver != NULL ? ver : MCP_HTTP_DEFAULT_VERSION);
	http_post_request(s, req, msg, body, len, sse);
	http_sess_settle(s);
}
