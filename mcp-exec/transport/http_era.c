/*
 * POSTs of MCP 2026-07-28 on /mcp: no Mcp-Session-Id, every request on
 * its own.  Before the body reaches the protocol, the headers that mirror
 * it (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-Session-Id)
 * must say exactly what the body says: a proxy that routes on them must
 * see what we run.  Each request gets a connection of its own that ends
 * with it; closing the response stream cancels the call.  Trusts the
 * principal authenticate() found, nothing else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>

#include "hash.h"
#include "http_int.h"
#include "log.h"
#include "protocol/era.h"
#include "util.h"

#define ERA_NAME_MAX	8192	/* a decoded Mcp-Name or Mcp-Param-* */
#define B64_OPEN	"=?base64?"
#define B64_CLOSE	"?="

/* The revisions an MCP session (initialize) may speak. */
static const char *const legacy_versions[] = {
	MCP_LATEST, "2025-06-18", "2025-03-26", NULL
};

int
http_version_legacy(const char *ver)
{
	size_t	 i;

	for (i = 0; legacy_versions[i] != NULL; i++)
		if (strcmp(ver, legacy_versions[i]) == 0)
			return 1;
	return 0;
}

/* The version a request names in its _meta, or NULL. */
static const char *
meta_version(const json_t *msg)
{
	return json_string_value(json_object_get(json_object_get(
	    json_object_get(msg, "params"), "_meta"), MCP_META_VERSION));
}

int
http_era_named(const json_t *msg)
{
	return meta_version(msg) != NULL;
}

int
http_era_modern(struct evhttp_request *req, const json_t *msg)
{
	const char	*sid, *ver, *method;

	method = json_string_value(json_object_get(msg, "method"));
	if (http_header_one(req, "Mcp-Session-Id", &sid) != 0)
		return 0;
	if (meta_version(msg) != NULL)
		return 1;	/* even initialize: then 404, it is gone */
	if (method != NULL && strcmp(method, "initialize") == 0)
		return 0;
	/* A version the initialize-based eras do not know is not theirs. */
	return http_header_one(req, "MCP-Protocol-Version", &ver) == 1 &&
	    !http_version_legacy(ver);
}

/*
 * A header value in the Base64 sentinel form (=?base64?...?=) decoded
 * into out; anything else as it is.  -1 when it does not decode: strictly
 * (lib/hash.h), so that a gateway routing on the header with another
 * strict decoder reads the name we run.
 */
static int
header_value(const char *v, char *out, size_t outlen)
{
	size_t	 len = strlen(v), n;
	int	 got;

	if (len < sizeof(B64_OPEN) - 1 + sizeof(B64_CLOSE) - 1 ||
	    strncmp(v, B64_OPEN, sizeof(B64_OPEN) - 1) != 0 ||
	    strcmp(v + len - (sizeof(B64_CLOSE) - 1), B64_CLOSE) != 0) {
		if (len >= outlen)
			return -1;
		memcpy(out, v, len + 1);
		return 0;
	}
	v += sizeof(B64_OPEN) - 1;
	n = len - (sizeof(B64_OPEN) - 1) - (sizeof(B64_CLOSE) - 1);
	if ((got = base64_decode(v, n, (uint8_t *)out, outlen - 1)) == -1)
		return -1;
	/* A NUL inside would compare short. */
	if (memchr(out, '\0', (size_t)got) != NULL)
		return -1;
	out[got] = '\0';
	return 0;
}

/* A refusal of the request: 400, with its id as the spec asks. */
static int
refuse(struct evhttp_request *req, const json_t *msg, int code,
    const char *text)
{
	const json_t	*id = json_object_get(msg, "id");

	log_debug("http: 400: %s", text);
	http_reply_json(req, 400, NULL, json_pack("{s:s, s:O, s:{s:i, s:s}}",
	    "jsonrpc", "2.0", "id", id != NULL ? (json_t *)id : json_null(),
	    "error", "code", code, "message", text));
	return -1;
}

static int
mismatch(struct evhttp_request *req, const json_t *msg, const char *header,
    const char *why)
{
	char	 text[128];

	snprintf(text, sizeof(text), "Header mismatch: %s %s", header, why);
	return refuse(req, msg, MCP_HEADER_MISMATCH, text);
}

/* Whether a header's value, decoded, is the body's string. */
static int
header_is(const char *header, const char *body)
{
	char	*decoded;
	int	 same;

	if (body == NULL)
		return 0;
	decoded = xcalloc(1, ERA_NAME_MAX);
	same = header_value(header, decoded, ERA_NAME_MAX) == 0 &&
	    strcmp(decoded, body) == 0;
	free(decoded);
	return same;
}

int
http_param_check(struct evhttp_request *req, const json_t *msg,
    int required)
{
	const char	*method = json_string_value(json_object_get(msg,
			    "method")), *h;
	const json_t	*sid = NULL;
	int		 n;

	if (method != NULL && strcmp(method, "tools/call") == 0)
		sid = json_object_get(json_object_get(json_object_get(msg,
		    "params"), "arguments"), "session_id");
	if ((n = http_header_one(req, HTTP_PARAM_SESSION, &h)) == -1)
		return mismatch(req, msg, HTTP_PARAM_SESSION,
		    "may appear once");
	/* Absent or null in the body: the header must be absent too. */
	if (sid == NULL || json_is_null(sid))
		return n == 0 ? 0 : mismatch(req, msg, HTTP_PARAM_SESSION,
		    "without arguments.session_id in the body");
	if (n == 0)
		return required ? mismatch(req, msg, HTTP_PARAM_SESSION,
		    "is required with arguments.session_id") : 0;
	if (!header_is(h, json_string_value(sid)))
		return mismatch(req, msg, HTTP_PARAM_SESSION,
		    "differs from arguments.session_id");
	return 0;
}

/* The headers against the body; -1 after replying 400. */
int
http_era_check(struct evhttp_request *req, const json_t *msg)
{
	const json_t	*params = json_object_get(msg, "params");
	const json_t	*meta = json_object_get(params, "_meta");
	const char	*ver, *hmethod, *hname, *method, *name = NULL;

	method = json_string_value(json_object_get(msg, "method"));
	/* A notification, or a response: nothing is mirrored. */
	if (method == NULL || json_object_get(msg, "id") == NULL)
		return 0;
	if (json_string_value(json_object_get(meta, MCP_META_VERSION)) ==
	    NULL || !json_is_object(json_object_get(meta, MCP_META_CAPS))) {
		return refuse(req, msg, RPC_INVALID_PARAMS, "params._meta "
		    "needs " MCP_META_VERSION " and " MCP_META_CAPS);
	}
	if (http_header_one(req, "MCP-Protocol-Version", &ver) != 1)
		return mismatch(req, msg, "MCP-Protocol-Version",
		    "is required, once");
	if (strcmp(ver, json_string_value(json_object_get(meta,
	    MCP_META_VERSION))) != 0)
		return mismatch(req, msg, "MCP-Protocol-Version",
		    "differs from params._meta");
	if (http_header_one(req, "Mcp-Method", &hmethod) != 1)
		return mismatch(req, msg, "Mcp-Method", "is required, once");
	if (strcmp(hmethod, method) != 0)
		return mismatch(req, msg, "Mcp-Method",
		    "differs from the body's method");
	if (http_param_check(req, msg, 1) == -1)
		return -1;
	if (strcmp(method, "tools/call") == 0 ||
	    strcmp(method, "prompts/get") == 0)
		name = json_string_value(json_object_get(params, "name"));
	else if (strcmp(method, "resources/read") == 0)
		name = json_string_value(json_object_get(params, "uri"));
	/* The tasks extension routes by task (SEP-2663). */
	else if (strcmp(method, "tasks/get") == 0 ||
	    strcmp(method, "tasks/update") == 0 ||
	    strcmp(method, "tasks/cancel") == 0)
		name = json_string_value(json_object_get(params, "taskId"));
	else
		return 0;
	if (http_header_one(req, "Mcp-Name", &hname) != 1)
		return mismatch(req, msg, "Mcp-Name", "is required, once");
	if (!header_is(hname, name))
		return mismatch(req, msg, "Mcp-Name",
		    "differs from the body's name, uri or taskId");
	return 0;
}

void
http_era_post(struct http_tr *tr, struct evhttp_request *req,
    const struct http_auth *a, const json_t *msg, const char *body,
    size_t len, int sse)
{
	struct http_sess	*s;

	if (http_era_check(req, msg) == -1)
		return;
	/* Notifications (cancellation is the stream closing) and responses
	 * (we send no requests) have nothing to do here. */
	if (json_object_get(msg, "method") == NULL ||
	    json_object_get(msg, "id") == NULL) {
		evhttp_send_reply(req, 202, NULL, NULL);
		return;
	}
	if (tr->srv->draining && !http_fleet_has_handle(req, msg)) {
		http_reply_draining(tr, req);
		return;
	}
	/* Each request authenticates on its own: audited as one. */
	s = http_sess_new(tr, a->principal, 1);
	http_auth_session(tr, req, a, &s->conn->client);
	http_post_request(s, req, msg, body, len, sse);
	http_sess_settle(s);
}

int
http_era_status(const json_t *msg)
{
	switch (json_integer_value(json_object_get(json_object_get(msg,
	    "error"), "code"))) {
	case MCP_HEADER_MISMATCH:
	case MCP_UNSUPPORTED_VERSION:
	case MCP_MISSING_CAPABILITY:
		return 400;
	case RPC_METHOD_NOT_FOUND:
		return 404;
	default:
		return 200;
	}
}
