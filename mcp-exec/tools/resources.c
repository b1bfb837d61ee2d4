/*
 * Session artifacts as MCP resources: stockade://sessions/{id}/artifacts/
 * {name}, listed and read by the principal that owns the session only.
 * URIs come from clients: they are parsed strictly and percent-decoded
 * once; anything unknown or not the caller's is "resource not found".
 */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "sessions/session.h"
#include "tools.h"
#include "util.h"


json_t *
resources_list(struct server *srv, const char *principal)
{
	return json_pack("{s:o}", "resources", session_resources(srv,
	    principal));
}

json_t *
resources_templates(void)
{
	return json_pack("{s:[{s:s, s:s, s:s, s:s}]}", "resourceTemplates",
	    "uriTemplate", ARTIFACT_URI_PREFIX "{session_id}/artifacts/{name}",
	    "name", "artifact", "title", "A file a session left in /workspace",
	    "description", "Readable by the principal that owns the session, "
	    "while it lives.");
}

static int
hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Percent-decodes in place; -1 on a bad escape or a decoded NUL. */
static int
pct_decode(char *s)
{
	char	*r = s, *w = s;
	int	 hi, lo;

	while (*r != '\0') {
		if (*r != '%') {
			*w++ = *r++;
			continue;
		}
		if ((hi = hexval(r[1])) == -1 || (lo = hexval(r[2])) == -1 ||
		    (hi == 0 && lo == 0))
			return -1;
		*w++ = (char)(hi << 4 | lo);
		r += 3;
	}
	*w = '\0';
	return 0;
}

/* Why a read failed, for the audit trail (the client hears "not found"). */
static void
refused(struct tool_req *rq, const char *sid, const char *name)
{
	const char	*why;

	if (name[0] == '/' || strcmp(name, "..") == 0 ||
	    strncmp(name, "../", 3) == 0 || strstr(name, "/../") != NULL ||
	    (strlen(name) >= 3 && strcmp(name + strlen(name) - 3, "/..") == 0))
		why = "path outside the artifact store";
	else if (session_find(rq->srv, sid, rq->principal) != NULL)
		why = "no such artifact";
	else if (session_exists(rq->srv, sid))
		why = "session of another principal";
	else
		why = "unknown session";
	/* The names are the client's: printable ASCII in the trail. */
	deliver_refused(rq, sid, name, "resources/read", why);
}

void
resources_read(struct tool_req *rq, const json_t *params)
{
	const char	*uri = json_string_value(json_object_get(params, "uri"));
	const char	*mime;
	char		 sid[SESSION_ID_MAX], name[1024], *slash, *data, *b64;
	char		 node[FLEET_NODE_MAX];
	size_t		 plen = strlen(ARTIFACT_URI_PREFIX), len;
	json_t		*content;

	if (uri == NULL) {
		tool_fault(rq, TOOL_BAD_PARAMS, "params.uri: a string is "
		    "required");
		return;
	}
	if (strncmp(uri, ARTIFACT_URI_PREFIX, plen) != 0 ||
	    (slash = strstr(uri + plen, "/artifacts/")) == NULL ||
	    (size_t)(slash - uri - plen) >= sizeof(sid) ||
	    xsnprintf(name, sizeof(name), "%s", slash + 11) == -1 ||
	    pct_decode(name) == -1) {
		deliver_refused(rq, NULL, NULL, "resources/read",
		    "malformed artifact uri");
		goto notfound;
	}
	memcpy(sid, uri + plen, (size_t)(slash - uri - plen));
	sid[slash - uri - plen] = '\0';
	/* Another node's session: the router should have sent it there. */
	if (fleet_foreign(rq->srv->conf.fleet.node_id, sid, node)) {
		tool_fault_data(rq, TOOL_WRONG_NODE, fleet_error_data(
		    FLEET_WRONG_NODE, node, sid), FLEET_WRONG_NODE_FMT, node,
		    FLEET_SELF(rq->srv->conf.fleet.node_id));
		return;
	}
	if (session_artifact(rq->srv, rq->principal, sid, name, &data, &len,
	    &mime) == -1) {
		refused(rq, sid, name);
		goto notfound;
	}
	if (strncmp(mime, "text/", 5) == 0 || strcmp(mime, "application/json") ==
	    0 || strcmp(mime, "image/svg+xml") == 0) {
		/* Text kinds were checked to be UTF-8 when collected. */
		content = json_pack("{s:s, s:s, s:s%}", "uri", uri, "mimeType",
		    mime, "text", data, len);
	} else {
		b64 = xmalloc(BASE64_LEN(len));
		base64_encode((const uint8_t *)data, len, b64);
		content = json_pack("{s:s, s:s, s:s}", "uri", uri, "mimeType",
		    mime, "blob", b64);
		free(b64);
	}
	if (content != NULL)
		deliver_record(rq, sid, name, data, len, mime,
		    "resources/read");
	free(data);
	if (content == NULL)
		goto notfound;
	tool_result(rq, json_pack("{s:[o]}", "contents", content));
	return;
notfound:
	/* Unknown and not-yours look the same. */
	tool_fault(rq, TOOL_NOT_FOUND, "resource not found");
}
