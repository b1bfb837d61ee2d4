/*
 * Builds the Elastic Common Schema 9.4 document for one audit record.
 * Trusts the framing and the rule export.c checked and chose; every other
 * field is type-checked here before it lands in a schema field.
 */
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "export_int.h"
#include "util.h"

#define ECS_VERSION		"9.4.0"	/* tests/unit/data/schemas */
#define ECS_DATASET		"stockade.audit"
#define ECS_MODULE		"stockade"
#define NS_PER_MS		1000000

static const char *const ecs_outcomes[] = {
	[OUT_UNKNOWN] = "unknown",
	[OUT_SUCCESS] = "success",
	[OUT_FAILURE] = "failure",
};

/* An array of up to two of our string constants. */
static json_t *
str_array(const char *const v[2])
{
	json_t	*a;
	size_t	 i;

	if ((a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < 2 && v[i] != NULL; i++) {
		if (json_array_append_new(a, json_string(v[i])) == -1) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* Numeric ids as the keyword strings ECS's *.id fields are. */
static void
put_id(struct doc *d, const char *path, const json_t *v)
{
	if (json_is_integer(v))
		export_put(d, path, json_sprintf("%" JSON_INTEGER_FORMAT,
		    json_integer_value(v)));
}

/*
 * The MCP client as it named itself (clientInfo: a claim, like an HTTP
 * User-Agent), and a delivered artifact as the file read.
 */
static void
ecs_client(struct doc *d, const json_t *o)
{
	const json_t	*c = json_object_get(o, "client");
	const char	*s;

	if ((s = export_get_str(c, "name")) != NULL && s[0] != '\0')
		export_put(d, "user_agent.name", json_string(s));
	if ((s = export_get_str(c, "version")) != NULL && s[0] != '\0')
		export_put(d, "user_agent.version", json_string(s));
	if (strncmp(export_get_str(o, "event") ? export_get_str(o, "event") :
	    "", "artifact_", 9) != 0)
		return;
	export_put_str_from(d, "file.name", o, "artifact");
	export_put_int_from(d, "file.size", o, "size", 0, INT64_MAX);
	export_put_str_from(d, "file.mime_type", o, "mime");
	export_put_str(d, "file.hash.sha256", export_file_sha256(o));
}

/*
 * A flow's traffic: the sandbox is the source (it opened the connection),
 * so what it sent is source.bytes; network.* are both ways together.
 */
/* A request through the egress proxy: http.* and url.* (path, or only
 * its hash when the policy says paths are sensitive). */
static void
ecs_http(struct doc *d, const json_t *o)
{
	export_put_str_from(d, "http.request.method", o, "method");
	export_put_int_from(d, "http.response.status_code", o, "status", 0,
	    999);
	export_put_int_from(d, "http.request.bytes", o, "bytes_out", 0,
	    INT64_MAX);
	export_put_int_from(d, "http.response.bytes", o, "bytes_in", 0,
	    INT64_MAX);
	export_put(d, "url.scheme", json_string("https"));
	export_put_str_from(d, "url.domain", o, "host");
	export_put_int_from(d, "url.port", o, "port", 0, EXPORT_PORT_MAX);
	export_put_str_from(d, "url.path", o, "path");
	export_put_str_from(d, "destination.domain", o, "host");
	export_put_int_from(d, "destination.port", o, "port", 0,
	    EXPORT_PORT_MAX);
	export_put(d, "network.protocol", json_string("http"));
	export_put(d, "network.transport", json_string("tcp"));
}

static void
ecs_flow(struct doc *d, const json_t *o)
{
	static const struct {
		const char	*key, *path;
	} dirs[] = {
		{ "bytes_out", "source.bytes" },
		{ "packets_out", "source.packets" },
		{ "bytes_in", "destination.bytes" },
		{ "packets_in", "destination.packets" },
	};
	json_int_t	 v[4], sum;
	int64_t		 ms;
	size_t		 i;

	for (i = 0; i < nitems(dirs); i++) {
		if (export_get_int(o, dirs[i].key, 0, INT64_MAX / 2, &v[i]) ==
		    -1)
			return;
		export_put(d, dirs[i].path, json_integer(v[i]));
	}
	sum = v[0] + v[2];
	export_put(d, "network.bytes", json_integer(sum));
	sum = v[1] + v[3];
	export_put(d, "network.packets", json_integer(sum));
	export_put_str_from(d, "destination.domain", o, "name");
	if (export_ts_ms(export_get_str(o, "start"), &ms) == 0 &&
	    export_ts_ms(export_get_str(o, "end"), &ms) == 0) {
		export_put_str_from(d, "event.start", o, "start");
		export_put_str_from(d, "event.end", o, "end");
	}
}

/*
 * The caller's W3C traceparent (version-trace_id-parent_id-flags, checked
 * by mcp-exec before it was recorded): trace.id is the agent's trace,
 * span.id the agent's span that made the call.
 */
static void
ecs_trace(struct doc *d, const json_t *o)
{
	const char	*tp;
	char		 id[33];

	tp = export_get_str(json_object_get(o, "trace"), "traceparent");
	if (tp == NULL || strlen(tp) < 55 || tp[2] != '-' || tp[35] != '-' ||
	    tp[52] != '-')
		return;
	snprintf(id, sizeof(id), "%.32s", tp + 3);
	export_put(d, "trace.id", json_string(id));
	snprintf(id, sizeof(id), "%.16s", tp + 36);
	export_put(d, "span.id", json_string(id));
}

static void
ecs_fields(struct doc *d, const struct record *r)
{
	const json_t	*o = r->obj, *v, *w, *from;
	const char	*s, *port_key;
	json_t		*t;
	json_int_t	 n;

	export_put_str_from(d, "user.id", o, "principal");
	export_put_str_from(d, "user.name", o, "principal");
	if (export_get_int(o, "duration_ms", 0, INT64_MAX / NS_PER_MS,
	    &n) == 0)
		export_put(d, "event.duration", json_integer(n * NS_PER_MS));
	export_put_str_from(d, "event.reason", o, "reason");
	if (json_is_number(v = json_object_get(o, "score")))
		export_put(d, "event.risk_score",
		    json_real(json_number_value(v)));
	export_put_int_from(d, "process.exit_code", o, "exit_code",
	    INT64_MIN, INT64_MAX);
	export_put_str(d, "process.hash.sha256", export_code_sha256(o));
	export_put_str_from(d, "process.name", o, "program");
	export_put_str_from(d, "container.image.name",
	    json_object_get(o, "sandbox"), "image");
	if ((s = export_src_ip(o, &from, &port_key)) != NULL) {
		export_put(d, "source.ip", json_string(s));
		export_put_int_from(d, "source.port", from, port_key, 0,
		    EXPORT_PORT_MAX);
	}
	ecs_client(d, o);
	ecs_trace(d, o);
	export_put_str(d, "destination.ip", export_dst_ip(o));
	export_put_int_from(d, "destination.port", o, "dst_port", 0,
	    EXPORT_PORT_MAX);
	if ((s = export_get_str(o, "protocol")) != NULL &&
	    (t = export_transport_lower(s)) != NULL)
		export_put(d, "network.transport", t);
	if (r->rule->flags & X_DNS) {
		export_put(d, "network.protocol", json_string("dns"));
		export_put_str_from(d, "dns.question.name", o, "name");
		export_put_str_from(d, "dns.question.type", o, "qtype");
	}
	if (r->rule->flags & X_FLOW)
		ecs_flow(d, o);
	if (r->rule->flags & X_HTTP)
		ecs_http(d, o);
	if ((s = export_get_str(o, "rule")) != NULL ||
	    (s = export_get_str(o, "rule_id")) != NULL)
		export_put(d, "rule.id", json_string(s));
	/* Only stockade-auditd writes these events: writer{} is the peer. */
	if ((r->rule->flags & X_WRITER) &&
	    json_is_object(w = json_object_get(o, "writer"))) {
		put_id(d, "user.id", json_object_get(w, "uid"));
		put_id(d, "group.id", json_object_get(w, "gid"));
		export_put_int_from(d, "process.pid", w, "pid", INT64_MIN,
		    INT64_MAX);
	}
}

json_t *
export_ecs_map(const struct record *r, const char *hostname)
{
	const struct rule	*ru = r->rule;
	struct doc		 d;

	if (export_doc_init(&d) == -1)
		return NULL;
	export_put(&d, "@timestamp", json_string(r->ts));
	export_put(&d, "message", json_string(r->message));
	export_put(&d, "ecs.version", json_string(ECS_VERSION));
	export_put(&d, "event.kind",
	    json_string(ru->flags & X_ALERT ? "alert" : "event"));
	export_put(&d, "event.category", str_array(ru->category));
	export_put(&d, "event.type", str_array(ru->type));
	export_put(&d, "event.outcome", json_string(ecs_outcomes[ru->outcome]));
	export_put(&d, "event.action", json_string(r->event));
	export_put(&d, "event.sequence", json_integer(r->seq));
	export_put(&d, "event.hash", json_string(r->hash));
	export_put(&d, "event.dataset", json_string(ECS_DATASET));
	export_put(&d, "event.module", json_string(ECS_MODULE));
	export_put(&d, "event.provider", json_string(EXPORT_PROVIDER));
	ecs_fields(&d, r);
	export_put_str(&d, "host.hostname", hostname);
	export_put(&d, "observer.product", json_string(EXPORT_PRODUCT));
	export_put(&d, "observer.vendor", json_string(EXPORT_PRODUCT));
	export_put(&d, "stockade", export_original_fields(r->obj));
	return export_doc_finish(&d);
}
