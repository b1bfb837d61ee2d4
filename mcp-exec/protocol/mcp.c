/*
 * The MCP protocol core.  Every message comes from a client we do not
 * trust: it is parsed with a size cap, must be one JSON-RPC 2.0 object
 * (batches were removed from MCP in 2025-06-18), and each method checks
 * its own params, naming the field that is wrong.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "era.h"
#include "listen.h"
#include "log.h"
#include "mcp.h"
#include "task.h"
#include "util.h"
#include "version.h"

static const char *const protocols[] = {
	MCP_LATEST, "2025-06-18", "2025-03-26", NULL
};
static const char *const level_names[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency", NULL
};

#define INSTRUCTIONS_MAX	4096
#define WHY_MAX			256

/* The eras a method exists in. */
#define LEGACY	0x1	/* after initialize (2025-11-25 and before) */
#define MODERN	0x2	/* with _meta, no initialize (2026-07-28) */

struct method {
	const char	*name;
	int		 notification;	/* no id, no reply */
	int		 before_init;	/* allowed before initialize */
	int		 eras;
	void		(*fn)(struct mcp_conn *, const json_t *id,
			    const json_t *params, const struct era_req *);
};

/* ------------------------------------------------------------ connections */

struct mcp_conn *
mcp_conn_new(struct server *srv, const char *principal, mcp_send_fn *send,
    void *transport)
{
	struct mcp_conn	*c = xcalloc(1, sizeof(*c));

	c->srv = srv;
	c->send = send;
	c->transport = transport;
	c->refs = 1;
	c->log_level = LOG_LVL_INFO;
	snprintf(c->principal, sizeof(c->principal), "%s", principal);
	LIST_INIT(&c->inflight);
	return c;
}

void
mcp_conn_ref(struct mcp_conn *c)
{
	c->refs++;
}

void
mcp_conn_unref(struct mcp_conn *c)
{
	if (--c->refs > 0)
		return;
	free(c);
}

void
mcp_conn_detach(struct mcp_conn *c)
{
	c->transport = NULL;
	listen_conn_gone(c);
	mcp_conn_unref(c);
}

static void
send_msg(struct mcp_conn *c, json_t *msg)
{
	if (c->transport == NULL || msg == NULL) {
		json_decref(msg);
		return;
	}
	c->send(c->transport, msg);
}

void
mcp_respond(struct mcp_conn *c, const json_t *id, json_t *result)
{
	json_t	*msg;

	/* A reply that could not be built is still a reply. */
	if (result == NULL) {
		log_warnx("a reply could not be encoded");
		mcp_error(c, id, RPC_INTERNAL_ERROR, "internal error");
		return;
	}
	msg = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
	    (json_t *)id, "result", result);
	send_msg(c, msg);
}

void
mcp_error(struct mcp_conn *c, const json_t *id, int code, const char *fmt, ...)
{
	char	 text[512];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	str_ascii(text);
	send_msg(c, json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0",
	    "id", id ? (json_t *)id : json_null(), "error", "code", code,
	    "message", text));
}

void
mcp_error_data(struct mcp_conn *c, const json_t *id, int code,
    const char *msg, json_t *data)
{
	send_msg(c, json_pack("{s:s, s:O, s:{s:i, s:s, s:o}}", "jsonrpc",
	    "2.0", "id", id ? (json_t *)id : json_null(), "error", "code",
	    code, "message", msg, "data", data));
}

void
mcp_notify(struct mcp_conn *c, const char *method, json_t *params)
{
	send_msg(c, json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method",
	    method, "params", params));
}

void
mcp_log(struct mcp_conn *c, enum mcp_log_level level, json_t *data)
{
	if (level < c->log_level || !c->initialized) {
		json_decref(data);
		return;
	}
	mcp_notify(c, "notifications/message", json_pack("{s:s, s:s, s:o}",
	    "level", level_names[level], "logger", SERVER_NAME, "data", data));
}

/* ------------------------------------------------------------ requests */

static struct inflight *
flight_of(struct tool_req *rq)
{
	return (struct inflight *)(void *)((char *)rq -
	    offsetof(struct inflight, rq));
}

static void
flight_done(struct inflight *f)
{
	LIST_REMOVE(f, entry);
	mcp_conn_unref(f->conn);
	json_decref(f->id);
	json_decref(f->not_found);
	free(f);
}

static void
port_result(struct tool_req *rq, json_t *result)
{
	struct inflight	*f = flight_of(rq);

	if (f->era.modern)
		result = era_result(result, f->cache);
	mcp_respond(f->conn, f->id, result);
	flight_done(f);
}

int
mcp_fault_code(enum tool_fault fault, int modern)
{
	switch (fault) {
	case TOOL_BAD_PARAMS:
		return RPC_INVALID_PARAMS;
	case TOOL_NOT_FOUND:
		/* 2026-07-28 moved "resource not found" to invalid params. */
		return modern ? RPC_INVALID_PARAMS : MCP_RESOURCE_NOT_FOUND;
	case TOOL_SESSION_LOST:
		return FLEET_ERR_SESSION_LOST;
	case TOOL_DRAINING:
		return FLEET_ERR_DRAINING;
	case TOOL_WRONG_NODE:
		return FLEET_ERR_WRONG_NODE;
	default:
		return RPC_INTERNAL_ERROR;
	}
}

static void
port_fault(struct tool_req *rq, enum tool_fault fault, const char *msg)
{
	struct inflight	*f = flight_of(rq);
	json_t		*data = rq->fault_data;
	int		 code;

	rq->fault_data = NULL;
	code = mcp_fault_code(fault, f->era.modern);
	/* 2026-07-28 (SEP-2164): which resource was not found, as data. */
	if (data == NULL && fault == TOOL_NOT_FOUND && f->not_found != NULL)
		data = json_incref(f->not_found);
	if (data != NULL)
		mcp_error_data(f->conn, f->id, code, msg, data);
	else
		mcp_error(f->conn, f->id, code, "%s", msg);
	flight_done(f);
}

static void
port_drop(struct tool_req *rq)
{
	flight_done(flight_of(rq));
}

static void
port_notify(struct tool_req *rq, const char *method, json_t *params)
{
	mcp_notify(flight_of(rq)->conn, method, params);
}

static void
port_log(struct tool_req *rq, const char *level, json_t *data)
{
	struct inflight	*f;
	int		 i;

	for (i = 0; level_names[i] != NULL; i++)
		if (strcmp(level, level_names[i]) == 0)
			break;
	if (level_names[i] == NULL)
		i = LOG_LVL_ERROR;
	f = flight_of(rq);
	/* Modern: only at the level this request asked for, if it did. */
	if (!f->era.modern)
		mcp_log(f->conn, (enum mcp_log_level)i, data);
	else if (f->era.log_level >= 0 && i >= f->era.log_level)
		mcp_notify(f->conn, "notifications/message", json_pack("{s:s, "
		    "s:s, s:o}", "level", level_names[i], "logger",
		    SERVER_NAME, "data", data));
	else
		json_decref(data);
}

/* The transport left: mcp_conn_detach. */
static int
port_reachable(struct tool_req *rq)
{
	return flight_of(rq)->conn->transport != NULL;
}

static const struct tool_port mcp_port = {
	port_result, port_fault, port_drop, port_notify, port_log,
	port_reachable
};

/* A request the tools layer answers, now or later, through mcp_port. */
static struct inflight *
inflight_new(struct mcp_conn *c, const json_t *id, const struct era_req *r,
    enum era_cache cache)
{
	struct inflight	*f = xcalloc(1, sizeof(*f));

	f->conn = c;
	f->id = json_deep_copy(id);
	f->era = *r;
	f->cache = cache;
	f->rq.port = &mcp_port;
	f->rq.srv = c->srv;
	f->rq.principal = c->principal;
	/* Modern: the client is who this request says it is. */
	f->rq.client = r->modern ? &f->era.client : &c->client;
	snprintf(f->rq.traceparent, sizeof(f->rq.traceparent), "%s",
	    r->traceparent);
	snprintf(f->rq.tracestate, sizeof(f->rq.tracestate), "%s",
	    r->tracestate);
	/* The request an audit record answers: its id, as text. */
	if (json_is_string(id))
		snprintf(f->rq.request_id, sizeof(f->rq.request_id), "%s",
		    json_string_value(id));
	else if (json_is_integer(id))
		snprintf(f->rq.request_id, sizeof(f->rq.request_id), "%lld",
		    (long long)json_integer_value(id));
	str_ascii(f->rq.request_id);
	mcp_conn_ref(c);
	LIST_INSERT_HEAD(&c->inflight, f, entry);
	return f;
}

/* ------------------------------------------------------------ methods */

static void
client_info(struct mcp_conn *c, const json_t *info)
{
	const char	*v;

	if ((v = json_string_value(json_object_get(info, "name"))) != NULL)
		snprintf(c->client.name, sizeof(c->client.name), "%s", v);
	if ((v = json_string_value(json_object_get(info, "version"))) != NULL)
		snprintf(c->client.version, sizeof(c->client.version), "%s", v);
	/* Shown to people and exported: printable ASCII only. */
	str_ascii(c->client.name);
	str_ascii(c->client.version);
}

static void
m_initialize(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	const char	*want;
	char		 instructions[INSTRUCTIONS_MAX];
	size_t		 i;

	if ((want = json_string_value(json_object_get(params,
	    "protocolVersion"))) == NULL) {
		mcp_error(c, id, RPC_INVALID_PARAMS, "params.protocolVersion: "
		    "a string is required");
		return;
	}
	if (!json_is_object(json_object_get(params, "capabilities"))) {
		mcp_error(c, id, RPC_INVALID_PARAMS, "params.capabilities: an "
		    "object is required");
		return;
	}
	/* An unsupported version gets our latest; the client decides. */
	snprintf(c->protocol, sizeof(c->protocol), "%s", MCP_LATEST);
	for (i = 0; protocols[i] != NULL; i++)
		if (strcmp(want, protocols[i]) == 0)
			snprintf(c->protocol, sizeof(c->protocol), "%s", want);
	/* Who the client says it is: a claim, kept for the audit trail. */
	client_info(c, json_object_get(params, "clientInfo"));
	c->initialized = 1;
	/* What this server's profile is, not what a default one would be. */
	tools_instructions(c->srv, c->principal, &c->client, instructions,
	    sizeof(instructions));
	/* Tasks: 2025-11-25's experimental form (protocol/task.c). */
	mcp_respond(c, id, json_pack("{s:s, s:{s:{s:b}, s:{s:b, s:b}, s:{}, "
	    "s:o}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", c->protocol,
	    "capabilities", "tools", "listChanged", 0, "resources",
	    "subscribe", 0, "listChanged", 0, "logging", "tasks",
	    task_capability(), "serverInfo", "name", SERVER_NAME, "title",
	    "Stockade sandbox", "version", STOCKADE_VERSION, "instructions",
	    instructions));
}

static void
m_initialized(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
}

static void
m_ping(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	mcp_respond(c, id, json_object());
}

static void
m_set_level(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	const char	*want = json_string_value(json_object_get(params, "level"));
	int		 i;

	for (i = 0; want != NULL && level_names[i] != NULL; i++) {
		if (strcmp(want, level_names[i]) == 0) {
			c->log_level = (enum mcp_log_level)i;
			mcp_respond(c, id, json_object());
			return;
		}
	}
	mcp_error(c, id, RPC_INVALID_PARAMS, "params.level: one of debug, "
	    "info, notice, warning, error, critical, alert, emergency");
}

static void
m_cancelled(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	mcp_cancel(c, json_object_get(params, "requestId"));
}

void
mcp_cancel(struct mcp_conn *c, const json_t *rid)
{
	struct inflight	*f;

	if (listen_cancel(c, rid))
		return;
	/* Unknown ids are ignored: the call may have just finished. */
	LIST_FOREACH(f, &c->inflight, entry) {
		if (rid != NULL && json_equal(f->id, rid) && !f->rq.cancelled) {
			tool_cancel(&f->rq);
			return;
		}
	}
}

/* A result now; a modern one says what it is and how long it keeps. */
static void
answer(struct mcp_conn *c, const json_t *id, json_t *result,
    const struct era_req *r, enum era_cache cache)
{
	if (r->modern)
		result = era_result(result, cache);
	mcp_respond(c, id, result);
}

static void
m_discover(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	char	 instructions[INSTRUCTIONS_MAX];

	/* What this caller's profile is, as initialize says it. */
	tools_instructions(c->srv, c->principal, &r->client, instructions,
	    sizeof(instructions));
	mcp_respond(c, id, era_discover(instructions));
}

static void
m_tools_list(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	json_t	*tools;

	/* The tools this caller may use: its own, cacheable as such. */
	tools = tools_list(c->srv, c->principal, r->modern ? &r->client :
	    &c->client);
	if (!r->modern)
		task_mark_tools(tools);
	answer(c, id, json_pack("{s:o}", "tools", tools), r, ERA_CALLER);
}

static void
m_tools_call(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	/* A long call the client lets run as a task is answered now. */
	if (task_tools_call(c, id, params, r))
		return;
	tools_call(&inflight_new(c, id, r, ERA_NOCACHE)->rq, params);
}

static void
m_resources_list(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	answer(c, id, resources_list(c->srv, c->principal), r, ERA_PRIVATE);
}

static void
m_resources_templates(struct mcp_conn *c, const json_t *id,
    const json_t *params, const struct era_req *r)
{
	answer(c, id, resources_templates(), r, ERA_PUBLIC);
}

static void
m_resources_read(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	struct inflight	*f = inflight_new(c, id, r, ERA_PRIVATE);
	const json_t	*uri = json_object_get(params, "uri");

	if (r->modern && json_is_string(uri))
		f->not_found = json_pack("{s:O}", "uri", (json_t *)uri);
	resources_read(&f->rq, params);
}

/* 2026-07-28 removed initialize, ping and logging/setLevel, and has
 * subscriptions/listen (listen.c: task notifications only). */
static const struct method methods[] = {
	{ "initialize", 0, 1, LEGACY, m_initialize },
	{ "notifications/initialized", 1, 1, LEGACY, m_initialized },
	{ "notifications/cancelled", 1, 1, LEGACY | MODERN, m_cancelled },
	{ "ping", 0, 1, LEGACY, m_ping },
	{ "logging/setLevel", 0, 0, LEGACY, m_set_level },
	{ "server/discover", 0, 1, MODERN, m_discover },
	{ "tools/list", 0, 0, LEGACY | MODERN, m_tools_list },
	{ "tools/call", 0, 0, LEGACY | MODERN, m_tools_call },
	{ "resources/list", 0, 0, LEGACY | MODERN, m_resources_list },
	{ "resources/templates/list", 0, 0, LEGACY | MODERN,
	    m_resources_templates },
	{ "resources/read", 0, 0, LEGACY | MODERN, m_resources_read },
	/* Both forms of tasks: protocol/task.c. */
	{ "tasks/get", 0, 0, LEGACY | MODERN, task_m_get },
	{ "tasks/cancel", 0, 0, LEGACY | MODERN, task_m_cancel },
	{ "tasks/result", 0, 0, LEGACY, task_m_result },
	{ "tasks/list", 0, 0, LEGACY, task_m_list },
	{ "tasks/update", 0, 0, MODERN, task_m_update },
	{ "subscriptions/listen", 0, 0, MODERN, listen_m_listen },
};

/* ------------------------------------------------------------ dispatch */

static int
id_ok(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

void
mcp_receive(struct mcp_conn *c, const char *data, size_t len)
{
	const struct method	*m = NULL;
	json_error_t		 je;
	json_t			*msg, *id, *params;
	const char		*name, *ver;
	struct era_req		 r;
	char			 why[WHY_MAX];
	size_t			 i;
	int			 code;

	if (len > c->srv->conf.server.max_message_bytes) {
		mcp_error(c, NULL, RPC_INVALID_REQUEST, "message larger than %zu "
		    "bytes", c->srv->conf.server.max_message_bytes);
		return;
	}
	if ((msg = json_loadb(data, len, JSON_REJECT_DUPLICATES |
	    JSON_DECODE_ANY, &je)) == NULL) {
		mcp_error(c, NULL, RPC_PARSE_ERROR, "parse error at byte %d: %s",
		    je.position, je.text);
		return;
	}
	if (json_is_array(msg)) {
		mcp_error(c, NULL, RPC_INVALID_REQUEST, "batches are not "
		    "supported: send one message at a time");
		goto out;
	}
	id = json_object_get(msg, "id");
	ver = json_string_value(json_object_get(msg, "jsonrpc"));
	if (!json_is_object(msg) || ver == NULL || strcmp(ver, "2.0") != 0) {
		mcp_error(c, id_ok(id) ? id : NULL, RPC_INVALID_REQUEST,
		    "not a JSON-RPC 2.0 message");
		goto out;
	}
	name = json_string_value(json_object_get(msg, "method"));
	if (name == NULL) {
		/* A response from the client: we sent it no requests. */
		if (json_object_get(msg, "result") == NULL &&
		    json_object_get(msg, "error") == NULL)
			mcp_error(c, id_ok(id) ? id : NULL, RPC_INVALID_REQUEST,
			    "field 'method' (string) is required");
		goto out;
	}
	if (id != NULL && !id_ok(id)) {
		mcp_error(c, NULL, RPC_INVALID_REQUEST, "field 'id' must be a "
		    "string or an integer");
		goto out;
	}
	params = json_object_get(msg, "params");
	if (params != NULL && !json_is_object(params)) {
		if (id != NULL)
			mcp_error(c, id, RPC_INVALID_PARAMS, "params must be "
			    "an object");
		goto out;
	}
	/* A request's version comes first, whatever its method; initialize
	 * naming an older one in _meta is still initialize. */
	if (era_parse(params, &c->client, &r, &code, why, sizeof(why)) == -1 &&
	    id != NULL && !(code == MCP_UNSUPPORTED_VERSION &&
	    strcmp(name, "initialize") == 0)) {
		if (code == MCP_UNSUPPORTED_VERSION)
			send_msg(c, json_pack("{s:s, s:O, s:{s:i, s:s, s:o}}",
			    "jsonrpc", "2.0", "id", id, "error", "code", code,
			    "message", why, "data",
			    era_unsupported_data(params)));
		else
			mcp_error(c, id, code, "%s", why);
		goto out;
	}
	if (id == NULL)
		r.modern = 0;	/* notifications carry no version */
	for (i = 0; i < nitems(methods); i++)
		if (strcmp(methods[i].name, name) == 0)
			m = &methods[i];
	if (m == NULL || (m->notification != (id == NULL)) ||
	    (r.modern && !(m->eras & MODERN))) {
		if (id != NULL)
			mcp_error(c, id, RPC_METHOD_NOT_FOUND, "method not found: "
			    "%.64s", name);
		goto out;	/* unknown notifications are ignored */
	}
	if (!r.modern && !(m->eras & LEGACY)) {
		mcp_error(c, id, RPC_INVALID_PARAMS, "params._meta[\"%s\"]: "
		    "required (%s names its version in every request)",
		    MCP_META_VERSION, MCP_MODERN);
		goto out;
	}
	if (!r.modern && !m->before_init && !c->initialized) {
		if (id != NULL)
			mcp_error(c, id, RPC_INVALID_REQUEST, "not initialized: "
			    "send initialize first");
		goto out;
	}
	m->fn(c, id, params, &r);
out:
	json_decref(msg);
}
