/*
 * Audit record -> ECS 9.4, OCSF 1.8 or Splunk HEC: the API, framing check,
 * event table, shared helpers and HEC; export_{ecs,ocsf}.c build the rest.
 * Trusts nothing beyond jansson's parse (log files can be edited, writers
 * lie): each field is type-checked before it is mapped, else only copied.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "export.h"
#include "export_int.h"
#include "hash.h"
#include "util.h"

#define HEC_SOURCETYPE		"stockade:audit"
#define CODE_HASH_PREFIX	"sha256:"
#define RECORD_HASH_HEX		64
#define EVENT_NAME_MAX		64	/* as chain_event_name_ok() */
#define PATH_SEGMENT_MAX	64	/* one key of a dotted path */
#define TRANSPORT_MAX		16	/* longest protocol name we lowercase */
#define MS_PER_S		1000.0

/* What a rule requires of the record besides its event name; all must hold. */
#define R_ALLOW		0x01	/* decision "allow" */
#define R_DENY		0x02	/* decision "deny" */
#define R_DENY_HIT	0x04	/* a pattern_hits entry with action "deny" */
#define R_EXIT_ZERO	0x08
#define R_EXIT_NONZERO	0x10
#define R_OK		0x20	/* ok: true */
#define R_NOT_OK	0x40	/* ok: false */
#define R_REMOVED	0x80	/* removed: a non-empty array */
#define R_DROPPED	0x100	/* action "removed_empty_file" */
#define R_BAD_TOKEN	0x200	/* reason "bad token": an authentication */

#define EXEC_MSG	"code execution by {principal} in session {session_id}"
#define DNS_MSG		"DNS query for {name} ({qtype}) " \
			    "from session {session_id}"

/*
 * One row per event and variant; the first row whose event and
 * requirements match wins, the last row catches unknown events.
 */
static const struct rule rules[] = {
	/* ECS: "process" expects no "denied"; the code never started. */
	{ "code_execution", R_DENY | R_DENY_HIT, 0,
	    { "intrusion_detection" }, { "denied" }, OUT_FAILURE,
	    OC_PROCESS, 1, "Launch", 4, CTL_BLOCKED,
	    EXEC_MSG " denied by policy", "denied by policy" },
	{ "code_execution", R_DENY, 0,
	    { "intrusion_detection" }, { "denied" }, OUT_FAILURE,
	    OC_PROCESS, 1, "Launch", 3, CTL_BLOCKED,
	    EXEC_MSG " denied by policy", "denied by policy" },
	{ "code_execution", R_ALLOW | R_EXIT_ZERO, 0,
	    { "process" }, { "end" }, OUT_SUCCESS,
	    OC_PROCESS, 2, "Terminate", 1, CTL_ALLOWED,
	    EXEC_MSG " exited with code {exit_code}", NULL },
	{ "code_execution", R_ALLOW | R_EXIT_NONZERO, 0,
	    { "process" }, { "end" }, OUT_FAILURE,
	    OC_PROCESS, 2, "Terminate", 1, CTL_ALLOWED,
	    EXEC_MSG " exited with code {exit_code}",
	    "exited with code {exit_code}" },
	{ "code_execution", 0, 0,
	    { "process" }, { "end" }, OUT_UNKNOWN,
	    OC_PROCESS, 99, "Other", 1, CTL_NONE, EXEC_MSG, NULL },
	/* Its server died while the code ran: an end, its outcome unknown. */
	{ "execution_lost", 0, 0,
	    { "process" }, { "end" }, OUT_UNKNOWN,
	    OC_PROCESS, 2, "Terminate", 1, CTL_NONE,
	    EXEC_MSG " lost: {reason}", "{reason}" },
	{ "execution_started", 0, 0,
	    { "process" }, { "start" }, OUT_SUCCESS,
	    OC_PROCESS, 1, "Launch", 1, CTL_NONE,
	    "code execution started by {principal} in session {session_id}",
	    NULL },
	{ "session_created", 0, 0,
	    { "session" }, { "start" }, OUT_SUCCESS,
	    OC_API, 1, "Create", 1, CTL_NONE,
	    "session {session_id} created for {principal} with profile "
	    "{profile}", NULL },
	{ "session_closed", 0, 0,
	    { "session" }, { "end" }, OUT_SUCCESS,
	    OC_API, 4, "Delete", 1, CTL_NONE,
	    "session {session_id} of {principal} closed: {reason}", NULL },
	{ "session_expired", 0, 0,
	    { "session" }, { "end" }, OUT_SUCCESS,
	    OC_API, 4, "Delete", 1, CTL_NONE,
	    "session {session_id} of {principal} expired", NULL },
	{ "session_evicted", 0, 0,
	    { "session" }, { "end" }, OUT_SUCCESS,
	    OC_API, 4, "Delete", 1, CTL_NONE,
	    "session {session_id} of {principal} closed to make room: "
	    "{reason}", NULL },
	{ "call_refused", R_BAD_TOKEN, 0,
	    { "authentication" }, { "start" }, OUT_FAILURE,
	    OC_AUTH, 1, "Logon", 3, CTL_NONE,
	    "call by {principal} refused: {reason}", "{reason}: {detail}" },
	{ "auth_accepted", 0, 0,
	    { "authentication" }, { "start" }, OUT_SUCCESS,
	    OC_AUTH, 1, "Logon", 1, CTL_NONE,
	    "{principal} authenticated by {auth} from {remote_addr}", NULL },
	{ "call_refused", 0, 0,
	    { "api" }, { "denied" }, OUT_FAILURE,
	    OC_API, 99, "Other", 3, CTL_NONE,
	    "call by {principal} refused: {reason}", "{reason}" },
	/* An artifact leaving a sandbox is a file read by the client. */
	{ "artifact_delivered", 0, 0,
	    { "file" }, { "access" }, OUT_SUCCESS,
	    OC_FILE, 2, "Read", 1, CTL_ALLOWED,
	    "artifact {artifact} of session {session_id} delivered to "
	    "{principal} by {how}", NULL },
	{ "artifact_refused", 0, 0,
	    { "file" }, { "access" }, OUT_FAILURE,
	    OC_FILE, 2, "Read", 3, CTL_BLOCKED,
	    "read of artifact {artifact} by {principal} refused: {reason}",
	    "{reason}" },
	{ "egress_denied", 0, 0,
	    { "network" }, { "connection", "denied" }, OUT_FAILURE,
	    OC_NETWORK, 5, "Refuse", 3, CTL_BLOCKED,
	    "{protocol} connection from session {session_id} to {dst_ip} "
	    "denied by rule {rule}", "denied by rule {rule}" },
	{ "egress_flow", 0, X_FLOW,
	    { "network" }, { "connection", "allowed" }, OUT_SUCCESS,
	    OC_NETWORK, 2, "Close", 1, CTL_ALLOWED,
	    "{protocol} connection from session {session_id} to {dst_ip} "
	    "allowed by rule {rule} ended: {bytes_out} bytes out, {bytes_in} "
	    "in", NULL },
	{ "egress_flow_summary", 0, X_FLOW,
	    { "network" }, { "connection", "allowed" }, OUT_SUCCESS,
	    OC_NETWORK, 6, "Traffic", 1, CTL_ALLOWED,
	    "{summarised} connections of session {session_id} over its "
	    "flow record rate: {bytes_out} bytes out, {bytes_in} in", NULL },
	/* A request through netguard's egress proxy (http rules). */
	{ "egress_http", R_DENY, X_HTTP,
	    { "network", "web" }, { "access" }, OUT_FAILURE,
	    OC_HTTP, 99, "Other", 3, CTL_BLOCKED,
	    "{method} https://{host} from session {session_id} refused by "
	    "the egress proxy: {rule}", "refused: {rule}" },
	{ "egress_http", R_ALLOW, X_HTTP,
	    { "network", "web" }, { "access" }, OUT_SUCCESS,
	    OC_HTTP, 99, "Other", 1, CTL_ALLOWED,
	    "{method} https://{host} from session {session_id} allowed by "
	    "rule {rule}: status {status}", NULL },
	{ "egress_attached", 0, 0,
	    { "configuration" }, { "change" }, OUT_SUCCESS,
	    OC_NETWORK, 99, "Other", 1, CTL_NONE,
	    "egress policy {policy} ({level}) attached to sandbox {sandbox} "
	    "of session {session_id}", NULL },
	{ "egress_detached", 0, 0,
	    { "configuration" }, { "change" }, OUT_SUCCESS,
	    OC_NETWORK, 99, "Other", 1, CTL_NONE,
	    "egress policy {policy} detached from sandbox {sandbox}: {reason}",
	    NULL },
	{ "egress_refused", 0, 0,
	    { "configuration" }, { "change" }, OUT_FAILURE,
	    OC_NETWORK, 99, "Other", 3, CTL_NONE,
	    "egress policy {policy} not attached to sandbox {sandbox}: "
	    "{reason}", "{reason}" },
	{ "dns_query", R_DENY, X_DNS,
	    { "network" }, { "protocol", "denied" }, OUT_FAILURE,
	    OC_DNS, 1, "Query", 3, CTL_BLOCKED,
	    DNS_MSG " denied", "denied by policy" },
	{ "dns_query", R_ALLOW, X_DNS,
	    { "network" }, { "protocol", "allowed" }, OUT_SUCCESS,
	    OC_DNS, 1, "Query", 1, CTL_ALLOWED, DNS_MSG " allowed", NULL },
	{ "dns_query", 0, X_DNS,
	    { "network" }, { "protocol" }, OUT_UNKNOWN,
	    OC_DNS, 1, "Query", 1, CTL_NONE, DNS_MSG, NULL },
	{ "dns_tunnel_suspected", 0, X_ALERT | X_DNS,
	    { "network", "intrusion_detection" }, { "info" }, OUT_UNKNOWN,
	    OC_FINDING, 1, "Create", 4, CTL_NONE,
	    "suspected DNS tunnelling via {name} from session {session_id} "
	    "(score {score})", NULL },
	{ "policy_load", R_OK, 0,
	    { "configuration" }, { "change" }, OUT_SUCCESS,
	    OC_CONFIG, 1, "Log", 1, CTL_NONE,
	    "{program} loaded its policy", NULL },
	{ "policy_load", R_NOT_OK, 0,
	    { "configuration" }, { "change" }, OUT_FAILURE,
	    OC_CONFIG, 1, "Log", 3, CTL_NONE,
	    "{program} failed to load its policy", "policy load failed" },
	{ "policy_load", 0, 0,
	    { "configuration" }, { "change" }, OUT_UNKNOWN,
	    OC_CONFIG, 1, "Log", 1, CTL_NONE, "policy load by {program}",
	    NULL },
	{ "daemon_start", 0, 0,
	    { "process" }, { "start" }, OUT_SUCCESS,
	    OC_LIFECYCLE, 3, "Start", 1, CTL_NONE, "{program} started", NULL },
	{ "daemon_stop", 0, 0,
	    { "process" }, { "end" }, OUT_SUCCESS,
	    OC_LIFECYCLE, 4, "Stop", 1, CTL_NONE, "{program} stopped", NULL },
	{ "cleanup", 0, 0,
	    { "file" }, { "deletion" }, OUT_SUCCESS,
	    OC_BASE, 99, "Other", 1, CTL_NONE, "{program} removed stale state",
	    NULL },
	{ "operator_note", 0, 0,
	    { "host" }, { "info" }, OUT_UNKNOWN,
	    OC_BASE, 99, "Other", 1, CTL_NONE,
	    "note from {principal}: {message}", NULL },
	{ "chain_start", 0, 0,
	    { "file" }, { "creation" }, OUT_SUCCESS,
	    OC_BASE, 99, "Other", 1, CTL_NONE, "audit chain {chain_id} started",
	    NULL },
	{ "rotate", R_REMOVED, 0,
	    { "file" }, { "creation", "deletion" }, OUT_SUCCESS,
	    OC_BASE, 99, "Other", 1, CTL_NONE,
	    "audit log rotated after {prev_file}, expired files removed",
	    NULL },
	{ "rotate", 0, 0,
	    { "file" }, { "creation" }, OUT_SUCCESS,
	    OC_BASE, 99, "Other", 1, CTL_NONE,
	    "audit log rotated after {prev_file}", NULL },
	{ "checkpoint", 0, 0,
	    { "file" }, { "info" }, OUT_SUCCESS,
	    OC_BASE, 99, "Other", 1, CTL_NONE,
	    "checkpoint of seq {cp_seq} signed with key {key_id}", NULL },
	{ "recovery", R_DROPPED, 0,
	    { "file" }, { "deletion" }, OUT_SUCCESS,
	    OC_BASE, 99, "Other", 3, CTL_NONE,
	    "log recovery: {action} {file}", NULL },
	{ "recovery", 0, 0,
	    { "file" }, { "change" }, OUT_SUCCESS,
	    OC_BASE, 99, "Other", 3, CTL_NONE,
	    "log recovery: {action} in {file}", NULL },
	{ "writer_refused", 0, X_WRITER,
	    { "authentication" }, { "start" }, OUT_FAILURE,
	    OC_AUTH, 1, "Logon", 3, CTL_NONE,
	    "connection from uid {writer.uid} pid {writer.pid} refused: "
	    "{reason}", "{reason}" },
	{ "event_rejected", 0, X_WRITER,
	    { "api" }, { "denied" }, OUT_FAILURE,
	    OC_BASE, 99, "Other", 3, CTL_NONE,
	    "event from uid {writer.uid} pid {writer.pid} rejected: {reason}",
	    "{reason}" },
	/* The fleet's quota store (mcp-exec fleet:) lost, then back. */
	{ "fleet_degraded", 0, 0,
	    { "configuration" }, { "change" }, OUT_FAILURE,
	    OC_BASE, 99, "Other", 3, CTL_NONE,
	    "fleet quota store {store} unreachable from node {node_id} "
	    "(on_unreachable: {on_unreachable})", "{error}" },
	{ "fleet_restored", 0, 0,
	    { "configuration" }, { "change" }, OUT_SUCCESS,
	    OC_BASE, 99, "Other", 1, CTL_NONE,
	    "fleet quota store {store} reachable again from node {node_id}",
	    NULL },
	{ "audit_resumed", 0, 0,
	    { "file" }, { "info" }, OUT_SUCCESS,
	    OC_BASE, 99, "Other", 3, CTL_NONE,
	    "audit log resumed after {reason}", NULL },
	{ "audit_error", 0, 0,
	    { "file" }, { "info" }, OUT_FAILURE,
	    OC_BASE, 99, "Other", 4, CTL_NONE,
	    "{what} failed for {path}: {error}", "{error}" },
	{ NULL, 0, 0,
	    { "host" }, { "info" }, OUT_UNKNOWN,
	    OC_BASE, 99, "Other", 1, CTL_NONE, "audit event {event}", NULL },
};

/* Keys of the chain's own framing: mapped to schema fields, not copied. */
static const char *const framing_keys[] = {
	"seq", "prev", "hash", "ts", "event", NULL
};

/* A bounded string that cuts, at a UTF-8 boundary, what does not fit. */
struct sbuf {
	char	*s;
	size_t	 size;
	size_t	 len;
	int	 full;
};

int
export_format_parse(const char *name, enum export_format *out)
{
	static const struct {
		const char		*name;
		enum export_format	 format;
	} names[] = {
		{ "ecs", EXPORT_ECS },
		{ "ocsf", EXPORT_OCSF },
		{ "hec", EXPORT_HEC },
	};
	size_t	 i;

	if (name == NULL)
		return -1;
	for (i = 0; i < nitems(names); i++) {
		if (strcmp(name, names[i].name) == 0) {
			*out = names[i].format;
			return 0;
		}
	}
	return -1;
}

/* ------------------------------------------------------------ records */

const char *
export_get_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

int
export_get_int(const json_t *obj, const char *key, json_int_t min,
    json_int_t max, json_int_t *v)
{
	const json_t	*j = json_object_get(obj, key);

	if (!json_is_integer(j))
		return -1;
	*v = json_integer_value(j);
	return *v >= min && *v <= max ? 0 : -1;
}

/*
 * Splits the first key off a dotted path of ours into key: 1 and *path past
 * the dot, 0 when *path is the last key, -1 when the key does not fit.
 */
static int
path_next(const char **path, char key[PATH_SEGMENT_MAX])
{
	const char	*dot;
	size_t		 len;

	if ((dot = strchr(*path, '.')) == NULL)
		return 0;
	len = (size_t)(dot - *path);
	if (len >= PATH_SEGMENT_MAX)
		return -1;
	memcpy(key, *path, len);
	key[len] = '\0';
	*path = dot + 1;
	return 1;
}

/* The field at a dotted path ("writer.uid"), or NULL. */
static const json_t *
get_path(const json_t *obj, const char *path)
{
	char	 key[PATH_SEGMENT_MAX];
	int	 rv;

	while ((rv = path_next(&path, key)) == 1)
		if ((obj = json_object_get(obj, key)) == NULL)
			return NULL;
	return rv == 0 ? json_object_get(obj, path) : NULL;
}

/* [a-z][a-z0-9_]{0,63}, as the chain writes it. */
static int
event_name_ok(const char *s)
{
	size_t	 i;

	if (s[0] < 'a' || s[0] > 'z')
		return 0;
	for (i = 1; s[i] != '\0'; i++) {
		if (i == EVENT_NAME_MAX)
			return 0;
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	}
	return 1;
}

static int
hex64_ok(const char *s)
{
	return hex_lower(s, RECORD_HASH_HEX) && s[RECORD_HASH_HEX] == '\0';
}

static int
is_framing_key(const char *key)
{
	size_t	 i;

	for (i = 0; framing_keys[i] != NULL; i++)
		if (strcmp(key, framing_keys[i]) == 0)
			return 1;
	return 0;
}

static int
str_is(const json_t *obj, const char *key, const char *want)
{
	const char	*s = export_get_str(obj, key);

	return s != NULL && strcmp(s, want) == 0;
}

static int
any_deny_hit(const json_t *obj)
{
	const json_t	*hits = json_object_get(obj, "pattern_hits"), *hit;
	size_t		 i;

	if (!json_is_array(hits))
		return 0;
	json_array_foreach(hits, i, hit)
		if (str_is(hit, "action", "deny"))
			return 1;
	return 0;
}

/* 1 when every requirement in mask holds for obj. */
static int
requires_hold(int mask, const json_t *obj)
{
	const json_t	*v;

	if ((mask & R_ALLOW) && !str_is(obj, "decision", "allow"))
		return 0;
	if ((mask & R_DENY) && !str_is(obj, "decision", "deny"))
		return 0;
	if ((mask & R_DENY_HIT) && !any_deny_hit(obj))
		return 0;
	v = json_object_get(obj, "exit_code");
	if ((mask & R_EXIT_ZERO) &&
	    !(json_is_integer(v) && json_integer_value(v) == 0))
		return 0;
	if ((mask & R_EXIT_NONZERO) &&
	    !(json_is_integer(v) && json_integer_value(v) != 0))
		return 0;
	if ((mask & R_OK) && !json_is_true(json_object_get(obj, "ok")))
		return 0;
	if ((mask & R_NOT_OK) && !json_is_false(json_object_get(obj, "ok")))
		return 0;
	v = json_object_get(obj, "removed");
	if ((mask & R_REMOVED) && !(json_is_array(v) && json_array_size(v) > 0))
		return 0;
	if ((mask & R_DROPPED) && !str_is(obj, "action", "removed_empty_file"))
		return 0;
	if ((mask & R_BAD_TOKEN) && !str_is(obj, "reason", "bad token"))
		return 0;
	return 1;
}

static const struct rule *
rule_find(const char *event, const json_t *obj)
{
	size_t	 i;

	for (i = 0; i < nitems(rules) - 1; i++)
		if (strcmp(rules[i].event, event) == 0 &&
		    requires_hold(rules[i].requires, obj))
			return &rules[i];
	return &rules[nitems(rules) - 1];
}

static void
sb_add(struct sbuf *sb, const char *s, size_t n)
{
	size_t	 room;

	if (sb->full)
		return;
	room = sb->size - 1 - sb->len;
	if (n > room) {
		/* Back off to the first byte of the character that is cut. */
		n = room;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		sb->full = 1;
	}
	memcpy(sb->s + sb->len, s, n);
	sb->len += n;
	sb->s[sb->len] = '\0';
}

static void
sb_value(struct sbuf *sb, const json_t *v)
{
	char	 num[32];
	int	 n = -1;

	if (v == NULL) {
		sb_add(sb, "?", 1);
		return;
	}
	switch (json_typeof(v)) {
	case JSON_STRING:
		sb_add(sb, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER:
		n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		break;
	case JSON_REAL:
		n = snprintf(num, sizeof(num), "%g", json_real_value(v));
		break;
	case JSON_TRUE:
		n = snprintf(num, sizeof(num), "true");
		break;
	case JSON_FALSE:
		n = snprintf(num, sizeof(num), "false");
		break;
	default:
		break;
	}
	if (n < 0 || (size_t)n >= sizeof(num))
		sb_add(sb, "?", 1);
	else
		sb_add(sb, num, (size_t)n);
}

void
export_render(const char *tmpl, const json_t *obj, char *out, size_t outlen)
{
	struct sbuf	 sb = { out, outlen, 0, 0 };
	char		 path[PATH_SEGMENT_MAX * 2];
	const char	*p, *end;
	size_t		 len;

	out[0] = '\0';
	for (p = tmpl; *p != '\0'; p++) {
		if (*p != '{' || (end = strchr(p, '}')) == NULL ||
		    (len = (size_t)(end - p - 1)) >= sizeof(path)) {
			sb_add(&sb, p, 1);
			continue;
		}
		memcpy(path, p + 1, len);
		path[len] = '\0';
		sb_value(&sb, get_path(obj, path));
		p = end;
	}
}

/* Checks the framing every line of the log has; -1 if it cannot be mapped. */
static int
record_parse(const json_t *obj, struct record *r)
{
	const json_t	*seq;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(obj))
		return -1;
	r->obj = obj;
	if ((r->event = export_get_str(obj, "event")) == NULL ||
	    !event_name_ok(r->event))
		return -1;
	if ((r->ts = export_get_str(obj, "ts")) == NULL ||
	    export_ts_ms(r->ts, &r->ms) == -1)
		return -1;
	seq = json_object_get(obj, "seq");
	if (!json_is_integer(seq) || (r->seq = json_integer_value(seq)) < 1)
		return -1;
	if ((r->hash = export_get_str(obj, "hash")) == NULL ||
	    !hex64_ok(r->hash))
		return -1;
	r->rule = rule_find(r->event, obj);
	export_render(r->rule->message, obj, r->message, sizeof(r->message));
	return 0;
}

static int
ip_ok(const char *s)
{
	struct in6_addr	 a6;
	struct in_addr	 a4;

	return inet_pton(AF_INET, s, &a4) == 1 ||
	    inet_pton(AF_INET6, s, &a6) == 1;
}

/* An ECS/OCSF ip field rejects anything but an address. */
const char *
export_ip(const json_t *obj, const char *key)
{
	const char	*s = export_get_str(obj, key);

	return s != NULL && ip_ok(s) ? s : NULL;
}

const char *
export_dst_ip(const json_t *obj)
{
	return export_ip(obj, "dst_ip");
}

/*
 * The peer's address: netguard's src_ip, or the HTTP client's remote_addr
 * (bare, as libevent gives it, or with remote_port beside it).
 */
const char *
export_src_ip(const json_t *obj, const json_t **from, const char **port_key)
{
	const json_t	*client = json_object_get(obj, "client");
	const char	*s;

	*from = obj;
	if ((s = export_ip(obj, "src_ip")) != NULL) {
		*port_key = "src_port";
		return s;
	}
	*port_key = "remote_port";
	if ((s = export_ip(obj, "remote_addr")) != NULL)
		return s;
	/* mcp-exec's calls: the MCP client's address, when over HTTP. */
	if (json_is_object(client) && (s = export_ip(client,
	    "remote_addr")) != NULL) {
		*from = client;
		return s;
	}
	return NULL;
}

const char *
export_file_sha256(const json_t *obj)
{
	const char	*s = export_get_str(obj, "sha256");

	if (s == NULL || strncmp(s, CODE_HASH_PREFIX,
	    strlen(CODE_HASH_PREFIX)) != 0)
		return NULL;
	return s + strlen(CODE_HASH_PREFIX);
}

const char *
export_code_sha256(const json_t *obj)
{
	const char	*s = export_get_str(obj, "code_hash");

	if (s == NULL || strncmp(s, CODE_HASH_PREFIX,
	    strlen(CODE_HASH_PREFIX)) != 0)
		return NULL;
	return s + strlen(CODE_HASH_PREFIX);
}

/* ECS network.transport and OCSF protocol_name are lowercase. */
json_t *
export_transport_lower(const char *proto)
{
	char	 buf[TRANSPORT_MAX];
	size_t	 i;

	for (i = 0; proto[i] != '\0'; i++) {
		if (i == sizeof(buf) - 1)
			return NULL;
		buf[i] = proto[i] >= 'A' && proto[i] <= 'Z' ?
		    proto[i] - 'A' + 'a' : proto[i];
	}
	buf[i] = '\0';
	return json_string(buf);
}

/* ------------------------------------------------------------ documents */

int
export_doc_init(struct doc *d)
{
	d->err = 0;
	return (d->root = json_object()) == NULL ? -1 : 0;
}

json_t *
export_doc_finish(struct doc *d)
{
	if (d->err) {
		json_decref(d->root);
		return NULL;
	}
	return d->root;
}

void
export_put(struct doc *d, const char *path, json_t *v)
{
	char	 key[PATH_SEGMENT_MAX];
	json_t	*obj = d->root, *next;
	int	 rv;

	if (v == NULL || d->err)
		goto fail;
	while ((rv = path_next(&path, key)) == 1) {
		if ((next = json_object_get(obj, key)) == NULL) {
			if ((next = json_object()) == NULL ||
			    json_object_set_new(obj, key, next) == -1)
				goto fail;
		} else if (!json_is_object(next))
			goto fail;
		obj = next;
	}
	if (rv == -1)
		goto fail;
	if (json_object_set_new(obj, path, v) == -1) {
		d->err = 1;
		return;
	}
	return;
fail:
	json_decref(v);
	d->err = 1;
}

void
export_put_str(struct doc *d, const char *path, const char *s)
{
	if (s != NULL)
		export_put(d, path, json_string(s));
}

void
export_put_str_from(struct doc *d, const char *path, const json_t *obj,
    const char *key)
{
	export_put_str(d, path, export_get_str(obj, key));
}

void
export_put_int_from(struct doc *d, const char *path, const json_t *obj,
    const char *key, json_int_t min, json_int_t max)
{
	json_int_t	 v;

	if (export_get_int(obj, key, min, max, &v) == 0)
		export_put(d, path, json_integer(v));
}

json_t *
export_original_fields(const json_t *obj)
{
	const char	*key;
	json_t		*out, *v;

	if ((out = json_object()) == NULL)
		return NULL;
	json_object_foreach((json_t *)obj, key, v) {
		if (is_framing_key(key))
			continue;
		if (json_object_set_new(out, key, json_deep_copy(v)) == -1) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* ------------------------------------------------------------ HEC */

static json_t *
hec_map(const struct record *r, const char *hostname)
{
	struct doc	 d;

	if (export_doc_init(&d) == -1)
		return NULL;
	/* Seconds with the milliseconds as a fraction, as HEC's "time" is. */
	export_put(&d, "time", json_real((double)r->ms / MS_PER_S));
	export_put_str(&d, "host", hostname);
	export_put(&d, "source", json_string(EXPORT_PROVIDER));
	export_put(&d, "sourcetype", json_string(HEC_SOURCETYPE));
	export_put(&d, "event", json_deep_copy(r->obj));
	return export_doc_finish(&d);
}

json_t *
export_record(enum export_format format, const json_t *record,
    const char *hostname)
{
	struct record	 r;

	if (record_parse(record, &r) == -1)
		return NULL;
	switch (format) {
	case EXPORT_ECS:
		return export_ecs_map(&r, hostname);
	case EXPORT_OCSF:
		return export_ocsf_map(&r, hostname);
	case EXPORT_HEC:
		return hec_map(&r, hostname);
	}
	return NULL;
}
