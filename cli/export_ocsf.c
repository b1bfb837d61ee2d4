/*
 * Builds the OCSF 1.8 event for one audit record: the Base Event attributes
 * every class has, then the fields of the class the event table chose.
 * Trusts the framing and rule export.c checked; type-checks every other field.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "export_int.h"
#include "util.h"

#define OCSF_VERSION		"1.8.0"	/* tests/unit/data/schemas */
#define OCSF_LOG_NAME		"stockade-audit"
#define OCSF_SHA256		3	/* fingerprint algorithm_id */
#define OCSF_REGULAR_FILE	1	/* file type_id */
#define OCSF_OUTBOUND		2	/* connection_info direction_id */
#define OCSF_FINDING_NEW	1	/* a finding's status_id */
#define OCSF_STATE_ENABLED	2	/* Device Config State Change state_id */

static const struct {
	int		 status_id;
	const char	*status;
} ocsf_statuses[] = {
	[OUT_UNKNOWN] = { 0, "Unknown" },
	[OUT_SUCCESS] = { 1, "Success" },
	[OUT_FAILURE] = { 2, "Failure" },
};

/* action_id, action, disposition_id, disposition; none for CTL_NONE. */
static const struct {
	int		 action_id;
	const char	*action;
	int		 disposition_id;
	const char	*disposition;
} ocsf_controls[] = {
	[CTL_ALLOWED] = { 1, "Allowed", 1, "Allowed" },
	[CTL_BLOCKED] = { 2, "Denied", 2, "Blocked" },
};

struct ocsf_class {
	int		 uid;
	const char	*name;
	int		 category_uid;
	const char	*category_name;
};

static const struct ocsf_class ocsf_classes[] = {
	[OC_BASE] =	 { 0, "Base Event", 0, "Uncategorized" },
	[OC_PROCESS] =	 { 1007, "Process Activity", 1, "System Activity" },
	[OC_FINDING] =	 { 2004, "Detection Finding", 2, "Findings" },
	[OC_NETWORK] =	 { 4001, "Network Activity", 4, "Network Activity" },
	[OC_DNS] =	 { 4003, "DNS Activity", 4, "Network Activity" },
	[OC_LIFECYCLE] = { 6002, "Application Lifecycle", 6,
			   "Application Activity" },
	[OC_API] =	 { 6003, "API Activity", 6, "Application Activity" },
	[OC_AUTH] =	 { 3002, "Authentication", 3,
			   "Identity & Access Management" },
	[OC_CONFIG] =	 { 5019, "Device Config State Change", 5, "Discovery" },
	[OC_FILE] =	 { 1001, "File System Activity", 1, "System Activity" },
	[OC_HTTP] =	 { 4002, "HTTP Activity", 4, "Network Activity" },
};

static const char *const ocsf_severities[] = {
	"Unknown", "Informational", "Low", "Medium", "High", "Critical",
	"Fatal",
};

/* The host the log came from, as the device that produced the event. */
static void
put_device(struct doc *d, const char *hostname)
{
	if (hostname != NULL)
		export_put(d, "device", json_pack("{s:s, s:i, s:s}",
		    "hostname", hostname, "type_id", 0, "type", "Unknown"));
}

/*
 * The peer as src_endpoint: its address when the record has one, else,
 * when local is set, this host (a stdio client or a sandbox runs here).
 */
static void
put_src(struct doc *d, const json_t *o, const char *hostname, int local)
{
	const json_t	*from;
	const char	*ip, *port_key;

	if ((ip = export_src_ip(o, &from, &port_key)) != NULL) {
		export_put(d, "src_endpoint.ip", json_string(ip));
		export_put_int_from(d, "src_endpoint.port", from, port_key, 0,
		    EXPORT_PORT_MAX);
	}
	if (local || ip == NULL)
		export_put_str(d, "src_endpoint.hostname", hostname);
}

static int
protocol_num(const char *name)
{
	static const struct {
		const char	*name;
		int		 num;
	} protos[] = {
		{ "icmp", 1 }, { "tcp", 6 }, { "udp", 17 }, { "icmpv6", 58 },
		{ "ipv6-icmp", 58 }, { "sctp", 132 },
	};
	size_t	 i;

	for (i = 0; i < nitems(protos); i++)
		if (strcasecmp(name, protos[i].name) == 0)
			return protos[i].num;
	return -1;
}

static void
ocsf_process(struct doc *d, const struct record *r, const char *hostname)
{
	const json_t	*o = r->obj;
	const char	*hex;

	/* The session's Python process runs every call of the session. */
	export_put_str_from(d, "process.uid", o, "session_id");
	if ((hex = export_code_sha256(o)) != NULL) {
		/* The code has no file name: "code" stands for it. */
		export_put(d, "process.file.name", json_string("code"));
		export_put(d, "process.file.type_id",
		    json_integer(OCSF_REGULAR_FILE));
		export_put(d, "process.file.type", json_string("Regular File"));
		export_put_int_from(d, "process.file.size", o, "code_size", 0,
		    INT64_MAX);
		export_put(d, "process.file.hashes",
		    json_pack("[{s:i, s:s, s:s}]", "algorithm_id", OCSF_SHA256,
		    "algorithm", "SHA-256", "value", hex));
	}
	export_put_int_from(d, "exit_code", o, "exit_code", INT64_MIN,
	    INT64_MAX);
	put_device(d, hostname);
}

/* A flow's traffic, times and the name its address was resolved from. */
static void
ocsf_flow(struct doc *d, const json_t *o)
{
	static const char *const keys[] = { "bytes_out", "packets_out",
	    "bytes_in", "packets_in" };
	json_int_t	 v[4];
	int64_t		 start, end;
	size_t		 i;
	char		 path[32];

	for (i = 0; i < nitems(keys); i++) {
		if (export_get_int(o, keys[i], 0, INT64_MAX / 2, &v[i]) == -1)
			return;
		(void)snprintf(path, sizeof(path), "traffic.%s", keys[i]);
		export_put(d, path, json_integer(v[i]));
	}
	export_put(d, "traffic.bytes", json_integer(v[0] + v[2]));
	export_put(d, "traffic.packets", json_integer(v[1] + v[3]));
	export_put_str_from(d, "dst_endpoint.hostname", o, "name");
	export_put_int_from(d, "count", o, "summarised", 0, INT64_MAX);
	if (export_ts_ms(export_get_str(o, "start"), &start) == 0 &&
	    export_ts_ms(export_get_str(o, "end"), &end) == 0 &&
	    start <= end) {
		export_put(d, "start_time", json_integer(start));
		export_put(d, "end_time", json_integer(end));
		export_put(d, "duration", json_integer(end - start));
	}
}

static void
ocsf_network(struct doc *d, const struct record *r, const char *hostname)
{
	const json_t	*o = r->obj;
	const char	*s;
	json_t		*t;
	int		 num;

	/* The sandbox that tried to connect runs on this host. */
	put_src(d, o, hostname, 1);
	if (json_is_string(json_object_get(o, "sandbox")))
		export_put_str_from(d, "src_endpoint.uid", o, "sandbox");
	export_put_str(d, "dst_endpoint.ip", export_dst_ip(o));
	export_put_int_from(d, "dst_endpoint.port", o, "dst_port", 0,
	    EXPORT_PORT_MAX);
	export_put(d, "connection_info.direction_id",
	    json_integer(OCSF_OUTBOUND));
	export_put(d, "connection_info.direction", json_string("Outbound"));
	if ((s = export_get_str(o, "protocol")) != NULL) {
		if ((t = export_transport_lower(s)) != NULL)
			export_put(d, "connection_info.protocol_name", t);
		if ((num = protocol_num(s)) != -1)
			export_put(d, "connection_info.protocol_num",
			    json_integer(num));
	}
	export_put_str_from(d, "firewall_rule.uid", o, "rule");
	if (r->rule->flags & X_FLOW)
		ocsf_flow(d, o);
}

/*
 * A request through the egress proxy: HTTP Activity, its activity the
 * method (the class's ids; PATCH and the rest are Other), the sandbox as
 * the source, the destination as the URL's host.
 */
static void
ocsf_http(struct doc *d, const struct record *r, const char *hostname)
{
	static const char *const methods[] = { NULL, "CONNECT", "DELETE",
	    "GET", "HEAD", "OPTIONS", "POST", "PUT", "TRACE" };
	static const char *const names[] = { NULL, "Connect", "Delete", "Get",
	    "Head", "Options", "Post", "Put", "Trace" };
	const json_t	*o = r->obj;
	const char	*m = export_get_str(o, "method");
	size_t		 i;

	for (i = 1; m != NULL && i < nitems(methods); i++)
		if (strcmp(m, methods[i]) == 0) {
			export_put(d, "activity_id", json_integer((json_int_t)i));
			export_put(d, "activity_name", json_string(names[i]));
			export_put(d, "type_uid", json_integer(
			    (json_int_t)ocsf_classes[OC_HTTP].uid * 100 +
			    (json_int_t)i));
			export_put(d, "type_name", json_sprintf("%s: %s",
			    ocsf_classes[OC_HTTP].name, names[i]));
			break;
		}
	put_src(d, o, hostname, 1);
	if (json_is_string(json_object_get(o, "sandbox")))
		export_put_str_from(d, "src_endpoint.uid", o, "sandbox");
	export_put_str_from(d, "dst_endpoint.hostname", o, "host");
	export_put_int_from(d, "dst_endpoint.port", o, "port", 0,
	    EXPORT_PORT_MAX);
	export_put_str_from(d, "http_request.http_method", o, "method");
	export_put(d, "http_request.url.scheme", json_string("https"));
	export_put_str_from(d, "http_request.url.hostname", o, "host");
	export_put_int_from(d, "http_request.url.port", o, "port", 0,
	    EXPORT_PORT_MAX);
	export_put_str_from(d, "http_request.url.path", o, "path");
	export_put_int_from(d, "http_response.code", o, "status", 0, 999);
	export_put_int_from(d, "traffic.bytes_out", o, "bytes_out", 0,
	    INT64_MAX);
	export_put_int_from(d, "traffic.bytes_in", o, "bytes_in", 0,
	    INT64_MAX);
	export_put(d, "connection_info.direction_id",
	    json_integer(OCSF_OUTBOUND));
	export_put(d, "connection_info.direction", json_string("Outbound"));
	export_put_str_from(d, "firewall_rule.uid", o, "rule");
}

static void
ocsf_dns(struct doc *d, const struct record *r, const char *hostname)
{
	export_put_str(d, "src_endpoint.hostname", hostname);
	export_put_str_from(d, "query.hostname", r->obj, "name");
	export_put_str_from(d, "query.type", r->obj, "qtype");
}

static void
ocsf_finding(struct doc *d, const struct record *r, const char *hostname)
{
	const char	*name;

	export_put(d, "finding_info.title",
	    json_string("Suspected DNS tunnelling"));
	export_put(d, "finding_info.uid", json_string(r->hash));
	export_put(d, "finding_info.desc", json_string(r->message));
	if ((name = export_get_str(r->obj, "name")) != NULL)
		export_put(d, "evidences", json_pack("[{s:{s:s}}]", "query",
		    "hostname", name));
	put_device(d, hostname);
}

/* A refused bearer token (mcp-exec) or writer uid (stockade-auditd). */
static void
ocsf_auth(struct doc *d, const struct record *r, const char *hostname)
{
	const json_t	*w = json_object_get(r->obj, "writer");
	const json_t	*uid = json_object_get(w, "uid");

	if (r->rule->flags & X_WRITER) {
		if (json_is_integer(uid))
			export_put(d, "user.uid", json_sprintf("%"
			    JSON_INTEGER_FORMAT, json_integer_value(uid)));
		export_put(d, "service.name", json_string(EXPORT_PROVIDER));
	} else {
		export_put_str_from(d, "user.name", r->obj, "principal");
		/* Only mcp-exec's HTTP transport writes these: a refused
		 * token and auth_accepted. */
		export_put(d, "service.name", json_string("mcp-exec"));
		put_src(d, r->obj, hostname, 0);
	}
	export_put_str(d, "dst_endpoint.hostname", hostname);
}

/*
 * An artifact read by a client: the file, the client as the actor's app
 * (File System Activity has no src_endpoint: the address stays in
 * unmapped.client), the MCP request as the api.
 */
static void
ocsf_file(struct doc *d, const struct record *r, const char *hostname)
{
	const json_t	*o = r->obj, *c = json_object_get(o, "client");
	const char	*hex, *name, *ver;

	export_put_str_from(d, "file.name", o, "artifact");
	export_put(d, "file.type_id", json_integer(OCSF_REGULAR_FILE));
	export_put(d, "file.type", json_string("Regular File"));
	export_put_int_from(d, "file.size", o, "size", 0, INT64_MAX);
	export_put_str_from(d, "file.mime_type", o, "mime");
	if ((hex = export_file_sha256(o)) != NULL)
		export_put(d, "file.hashes", json_pack("[{s:i, s:s, s:s}]",
		    "algorithm_id", OCSF_SHA256, "algorithm", "SHA-256",
		    "value", hex));
	if ((name = export_get_str(c, "name")) != NULL && name[0] != '\0') {
		ver = export_get_str(c, "version");
		export_put(d, "actor.app_name", ver && ver[0] ? json_sprintf(
		    "%s %s", name, ver) : json_string(name));
	}
	export_put_str_from(d, "api.operation", o, "how");
	if (export_get_str(o, "request") != NULL &&
	    export_get_str(o, "request")[0] != '\0')
		export_put_str_from(d, "api.request.uid", o, "request");
	put_device(d, hostname);
}

static void
ocsf_class_fields(struct doc *d, const struct record *r, const char *hostname)
{
	switch (r->rule->oclass) {
	case OC_PROCESS:
		ocsf_process(d, r, hostname);
		break;
	case OC_NETWORK:
		ocsf_network(d, r, hostname);
		break;
	case OC_DNS:
		ocsf_dns(d, r, hostname);
		break;
	case OC_FINDING:
		ocsf_finding(d, r, hostname);
		break;
	case OC_LIFECYCLE:
		export_put_str_from(d, "app.name", r->obj, "program");
		export_put(d, "app.vendor_name", json_string(EXPORT_PRODUCT));
		put_device(d, hostname);
		break;
	case OC_API:
		export_put(d, "api.operation", json_string(r->event));
		put_src(d, r->obj, hostname, 0);
		export_put_str(d, "dst_endpoint.hostname", hostname);
		break;
	case OC_AUTH:
		ocsf_auth(d, r, hostname);
		break;
	case OC_CONFIG:
		/* The policy in force changed only when the load worked. */
		if (r->rule->outcome == OUT_SUCCESS) {
			export_put(d, "state_id",
			    json_integer(OCSF_STATE_ENABLED));
			export_put(d, "state", json_string("Enabled"));
		}
		put_device(d, hostname);
		break;
	case OC_FILE:
		ocsf_file(d, r, hostname);
		break;
	case OC_HTTP:
		ocsf_http(d, r, hostname);
		break;
	case OC_BASE:
		break;
	}
}

/* Base Event attributes and metadata, common to every class. */
static void
ocsf_common(struct doc *d, const struct record *r)
{
	const struct rule	*ru = r->rule;
	const struct ocsf_class	*c = &ocsf_classes[ru->oclass];
	char			 detail[EXPORT_MESSAGE_MAX];

	export_put(d, "time", json_integer(r->ms));
	export_put(d, "class_uid", json_integer(c->uid));
	export_put(d, "class_name", json_string(c->name));
	export_put(d, "category_uid", json_integer(c->category_uid));
	export_put(d, "category_name", json_string(c->category_name));
	export_put(d, "activity_id", json_integer(ru->activity_id));
	export_put(d, "activity_name", json_string(ru->activity));
	export_put(d, "type_uid", json_integer((json_int_t)c->uid * 100 +
	    ru->activity_id));
	export_put(d, "type_name", json_sprintf("%s: %s", c->name,
	    ru->activity));
	export_put(d, "severity_id", json_integer(ru->severity_id));
	export_put(d, "severity",
	    json_string(ocsf_severities[ru->severity_id]));
	if (ru->oclass == OC_FINDING) {
		/* Findings redefine status as the finding's own state. */
		export_put(d, "status_id", json_integer(OCSF_FINDING_NEW));
		export_put(d, "status", json_string("New"));
	} else {
		export_put(d, "status_id",
		    json_integer(ocsf_statuses[ru->outcome].status_id));
		export_put(d, "status",
		    json_string(ocsf_statuses[ru->outcome].status));
	}
	if (ru->detail != NULL) {
		export_render(ru->detail, r->obj, detail, sizeof(detail));
		export_put(d, "status_detail", json_string(detail));
	}
	export_put(d, "message", json_string(r->message));
	if (ru->control != CTL_NONE) {
		export_put(d, "action_id",
		    json_integer(ocsf_controls[ru->control].action_id));
		export_put(d, "action",
		    json_string(ocsf_controls[ru->control].action));
		export_put(d, "disposition_id",
		    json_integer(ocsf_controls[ru->control].disposition_id));
		export_put(d, "disposition",
		    json_string(ocsf_controls[ru->control].disposition));
	}
	export_put(d, "metadata.version", json_string(OCSF_VERSION));
	export_put(d, "metadata.product.name", json_string(EXPORT_PRODUCT));
	export_put(d, "metadata.product.vendor_name",
	    json_string(EXPORT_PRODUCT));
	export_put(d, "metadata.product.feature.name",
	    json_string(EXPORT_PROVIDER));
	export_put(d, "metadata.sequence", json_integer(r->seq));
	export_put(d, "metadata.uid", json_string(r->hash));
	export_put(d, "metadata.log_name", json_string(OCSF_LOG_NAME));
	export_put(d, "metadata.event_code", json_string(r->event));
	if (ru->control != CTL_NONE)
		export_put(d, "metadata.profiles", json_pack("[s]",
		    "security_control"));
	else if (ru->oclass == OC_LIFECYCLE)
		export_put(d, "metadata.profiles", json_pack("[s]", "host"));
}

json_t *
export_ocsf_map(const struct record *r, const char *hostname)
{
	const json_t	*o = r->obj;
	struct doc	 d;

	if (export_doc_init(&d) == -1)
		return NULL;
	ocsf_common(&d, r);
	export_put_str_from(&d, "actor.user.name", o, "principal");
	export_put_str_from(&d, "actor.session.uid", o, "session_id");
	export_put_int_from(&d, "duration", o, "duration_ms", 0, INT64_MAX);
	ocsf_class_fields(&d, r, hostname);
	export_put(&d, "unmapped", export_original_fields(o));
	return export_doc_finish(&d);
}
