/*
 * The per-request side of MCP 2026-07-28: no initialize, so every request
 * names its protocol version and capabilities in params._meta, and every
 * result names its type and the server.  _meta is the client's: unknown
 * keys are ignored, known ones are checked, and the trace context is
 * recorded only when it is exactly what W3C Trace Context allows.
 */
#include <stdio.h>
#include <string.h>

#include "era.h"
#include "hash.h"
#include "mcp.h"
#include "util.h"
#include "version.h"

/* Newest first: the modern revision, then those that begin with initialize. */
static const char *const era_all[] = {
	MCP_MODERN, MCP_LATEST, "2025-06-18", "2025-03-26", NULL
};

static const char *const era_levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency", NULL
};

#define TRACESTATE_MEMBERS_MAX	32	/* W3C: at most 32 list-members */
#define TRACESTATE_KEY_MAX	256
#define TRACESTATE_VALUE_MAX	256

json_t *
era_versions(void)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; era_all[i] != NULL; i++)
		json_array_append_new(a, json_string(era_all[i]));
	return a;
}

int
era_version_known(const char *v)
{
	size_t	 i;

	for (i = 0; era_all[i] != NULL; i++)
		if (strcmp(v, era_all[i]) == 0)
			return 1;
	return 0;
}

/* ------------------------------------------------------------ trace */

static int
all_zero(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (s[i] != '0')
			return 0;
	return 1;
}

/*
 * version "-" trace-id "-" parent-id "-" flags: 2, 32, 16 and 2 lower-case
 * hex digits.  Version ff is invalid, all-zero ids are invalid; version 00
 * is exactly 55 characters, a later version may append "-" and more.
 */
int
era_traceparent_ok(const char *s)
{
	size_t	 len = strlen(s);

	if (len < 55 || len >= TOOL_TRACEPARENT_MAX || s[2] != '-' ||
	    s[35] != '-' || s[52] != '-')
		return 0;
	if (!hex_lower(s, 2) || !hex_lower(s + 3, 32) ||
	    !hex_lower(s + 36, 16) || !hex_lower(s + 53, 2))
		return 0;
	if (strncmp(s, "ff", 2) == 0 || all_zero(s + 3, 32) ||
	    all_zero(s + 36, 16))
		return 0;
	if (strncmp(s, "00", 2) == 0)
		return len == 55;
	return len == 55 || s[55] == '-';
}

/* key: lcalpha (lcalpha / DIGIT / "_" / "-" / "*" / "/"), with at most
 * one "@" for tenant@system keys. */
static int
ts_key_ok(const char *k, size_t n)
{
	size_t	 i, at = 0;

	if (n == 0 || n > TRACESTATE_KEY_MAX ||
	    !((k[0] >= 'a' && k[0] <= 'z') || (k[0] >= '0' && k[0] <= '9')))
		return 0;
	for (i = 0; i < n; i++) {
		if (k[i] == '@') {
			if (++at > 1 || i == 0 || i + 1 == n)
				return 0;
			continue;
		}
		if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= '0' &&
		    k[i] <= '9') || strchr("_-*/", k[i]) != NULL))
			return 0;
	}
	return 1;
}

/* value: printable ASCII but "," and "=", not ending in a space. */
static int
ts_value_ok(const char *v, size_t n)
{
	size_t	 i;

	if (n == 0 || n > TRACESTATE_VALUE_MAX || v[n - 1] == ' ')
		return 0;
	for (i = 0; i < n; i++)
		if (v[i] < 0x20 || v[i] > 0x7e || v[i] == ',' || v[i] == '=')
			return 0;
	return 1;
}

int
era_tracestate_ok(const char *s)
{
	const char	*p = s, *end, *eq, *a, *b;
	unsigned	 members = 0;

	if (strlen(s) >= TOOL_TRACESTATE_MAX)
		return 0;
	for (;;) {
		end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		/* White space around members is allowed, empty ones too. */
		for (a = p; a < end && (*a == ' ' || *a == '\t'); a++)
			;
		for (b = end; b > a && (b[-1] == ' ' || b[-1] == '\t'); b--)
			;
		if (b > a) {
			if (++members > TRACESTATE_MEMBERS_MAX)
				return 0;
			eq = memchr(a, '=', (size_t)(b - a));
			if (eq == NULL || !ts_key_ok(a, (size_t)(eq - a)) ||
			    !ts_value_ok(eq + 1, (size_t)(b - eq - 1)))
				return 0;
		}
		if (*end == '\0')
			return 1;
		p = end + 1;
	}
}

/* ------------------------------------------------------------ requests */

static void
trace_of(const json_t *meta, struct era_req *r)
{
	const char	*tp, *ts;

	r->traceparent[0] = r->tracestate[0] = '\0';
	tp = json_string_value(json_object_get(meta, "traceparent"));
	ts = json_string_value(json_object_get(meta, "tracestate"));
	/* W3C: without a valid traceparent, tracestate is not parsed. */
	if (tp == NULL || !era_traceparent_ok(tp))
		return;
	snprintf(r->traceparent, sizeof(r->traceparent), "%s", tp);
	if (ts != NULL && era_tracestate_ok(ts))
		snprintf(r->tracestate, sizeof(r->tracestate), "%s", ts);
}

int
era_parse(const json_t *params, const struct tool_client *base,
    struct era_req *r, int *code, char *why, size_t whylen)
{
	const json_t	*meta = json_object_get(params, "_meta");
	const json_t	*v, *info;
	const char	*s;
	size_t		 i;

	memset(r, 0, sizeof(*r));
	r->log_level = -1;
	if (base != NULL)
		r->client = *base;
	*code = RPC_INVALID_PARAMS;
	trace_of(meta, r);
	if ((v = json_object_get(meta, MCP_META_VERSION)) == NULL)
		return 0;
	if ((s = json_string_value(v)) == NULL) {
		snprintf(why, whylen, "params._meta[\"%s\"]: a string is "
		    "required", MCP_META_VERSION);
		return -1;
	}
	/* Only 2026-07-28 comes without initialize. */
	if (strcmp(s, MCP_MODERN) != 0) {
		*code = MCP_UNSUPPORTED_VERSION;
		snprintf(why, whylen, "Unsupported protocol version%s",
		    era_version_known(s) ? " without initialize" : "");
		return -1;
	}
	if (!json_is_object(json_object_get(meta, MCP_META_CAPS))) {
		snprintf(why, whylen, "params._meta[\"%s\"]: an object is "
		    "required", MCP_META_CAPS);
		return -1;
	}
	/* The client takes a task in place of a result (extension). */
	r->tasks_ext = json_is_object(json_object_get(json_object_get(
	    json_object_get(meta, MCP_META_CAPS), "extensions"),
	    "io.modelcontextprotocol/tasks"));
	if ((v = json_object_get(meta, MCP_META_LEVEL)) != NULL) {
		s = json_string_value(v);
		for (i = 0; s != NULL && era_levels[i] != NULL; i++)
			if (strcmp(s, era_levels[i]) == 0)
				break;
		if (s == NULL || era_levels[i] == NULL) {
			snprintf(why, whylen, "params._meta[\"%s\"]: one of "
			    "debug, info, notice, warning, error, critical, "
			    "alert, emergency", MCP_META_LEVEL);
			return -1;
		}
		r->log_level = (int)i;
	}
	/* Who the client says it is: a claim, kept for the audit trail. */
	info = json_object_get(meta, MCP_META_CLIENT);
	r->client.name[0] = r->client.version[0] = '\0';
	if ((s = json_string_value(json_object_get(info, "name"))) != NULL)
		snprintf(r->client.name, sizeof(r->client.name), "%s", s);
	if ((s = json_string_value(json_object_get(info, "version"))) != NULL)
		snprintf(r->client.version, sizeof(r->client.version), "%s", s);
	str_ascii(r->client.name);
	str_ascii(r->client.version);
	r->modern = 1;
	return 1;
}

json_t *
era_unsupported_data(const json_t *params)
{
	const json_t	*v;

	v = json_object_get(json_object_get(params, "_meta"), MCP_META_VERSION);
	return json_pack("{s:o, s:O}", "supported", era_versions(),
	    "requested", v != NULL ? (json_t *)v : json_null());
}

/* ------------------------------------------------------------ results */

json_t *
era_result(json_t *result, enum era_cache cache)
{
	json_t	*meta;

	if (result == NULL)
		return NULL;
	json_object_set_new(result, "resultType", json_string("complete"));
	if (!json_is_object(meta = json_object_get(result, "_meta"))) {
		meta = json_object();
		json_object_set_new(result, "_meta", meta);
	}
	json_object_set_new(meta, MCP_META_SERVER, json_pack("{s:s, s:s, s:s}",
	    "name", SERVER_NAME, "title", "Stockade sandbox", "version",
	    STOCKADE_VERSION));
	if (cache != ERA_NOCACHE) {
		/* Someone's own (sessions, artifacts) is never fresh. */
		json_object_set_new(result, "ttlMs", json_integer(cache ==
		    ERA_PRIVATE ? 0 : ERA_TTL_MS));
		json_object_set_new(result, "cacheScope", json_string(cache ==
		    ERA_PUBLIC ? "public" : "private"));
	}
	return result;
}

json_t *
era_discover(const char *instructions)
{
	/* No listChanged or subscriptions: nothing to push (no listen).
	 * Long calls may come back as tasks (protocol/task.c). */
	return era_result(json_pack("{s:o, s:{s:{}, s:{}, s:{}, s:{s:{}}}, "
	    "s:s}", "supportedVersions", era_versions(), "capabilities",
	    "tools", "resources", "logging", "extensions",
	    "io.modelcontextprotocol/tasks", "instructions", instructions),
	    ERA_CALLER);
}
