/*
 * Event schema.  Everything here runs on events from writers, which are
 * authenticated but still untrusted: a bug in mcp-exec must not be able to
 * forge a checkpoint or write a record a SIEM cannot parse.
 */
#include <stdio.h>
#include <string.h>

#include "chain.h"
#include "event.h"
#include "hash.h"
#include "util.h"

enum ftype {
	F_STR,		/* non-empty string, at most EVENT_STRING_MAX */
	F_INT,
	F_UINT,
	F_NUM,		/* integer or real */
	F_BOOL,
	F_OBJ,
	F_ARR,
	F_HASH,		/* "sha256:" + 64 lowercase hex */
	F_DECISION,	/* "allow" or "deny" */
};

struct field {
	const char	*name;
	enum ftype	 type;
};

struct evtype {
	const char		*name;
	const struct field	*required;
};

#define END	{ NULL, F_STR }

static const struct field f_code_execution[] = {
	{ "principal", F_STR }, { "session_id", F_STR },
	{ "code_hash", F_HASH }, { "code_size", F_UINT },
	{ "sandbox", F_OBJ }, { "limits", F_OBJ }, { "network", F_STR },
	{ "exit_code", F_INT }, { "duration_ms", F_UINT },
	{ "stdout_bytes", F_UINT }, { "artifacts", F_ARR },
	{ "decision", F_DECISION }, END
};
static const struct field f_execution_started[] = {
	{ "principal", F_STR }, { "session_id", F_STR },
	{ "code_hash", F_HASH }, { "code_size", F_UINT }, END
};
static const struct field f_session_created[] = {
	{ "principal", F_STR }, { "session_id", F_STR }, { "profile", F_STR },
	END
};
static const struct field f_session_closed[] = {
	{ "principal", F_STR }, { "session_id", F_STR }, { "reason", F_STR },
	END
};
static const struct field f_session[] = {
	{ "principal", F_STR }, { "session_id", F_STR }, END
};
static const struct field f_call_refused[] = {
	{ "principal", F_STR }, { "reason", F_STR }, END
};
static const struct field f_auth_accepted[] = {
	{ "principal", F_STR }, { "auth", F_STR }, END
};
static const struct field f_artifact_delivered[] = {
	{ "principal", F_STR }, { "session_id", F_STR }, { "artifact", F_STR },
	{ "sha256", F_HASH }, { "size", F_UINT }, { "mime", F_STR },
	{ "how", F_STR }, END
};
static const struct field f_artifact_refused[] = {
	{ "principal", F_STR }, { "how", F_STR }, { "reason", F_STR }, END
};
static const struct field f_egress_denied[] = {
	{ "session_id", F_STR }, { "protocol", F_STR }, { "dst_ip", F_STR },
	{ "rule", F_STR }, END
};
static const struct field f_egress_flow[] = {
	{ "session_id", F_STR }, { "protocol", F_STR }, { "dst_ip", F_STR },
	{ "rule", F_STR }, { "bytes_out", F_UINT }, { "bytes_in", F_UINT },
	{ "packets_out", F_UINT }, { "packets_in", F_UINT }, END
};
static const struct field f_egress_flow_summary[] = {
	{ "session_id", F_STR }, { "summarised", F_UINT },
	{ "bytes_out", F_UINT }, { "bytes_in", F_UINT }, { "lost", F_UINT },
	END
};
static const struct field f_egress_http[] = {
	{ "session_id", F_STR }, { "method", F_STR }, { "host", F_STR },
	{ "port", F_UINT }, { "status", F_UINT }, { "decision", F_DECISION },
	{ "bytes_out", F_UINT }, { "bytes_in", F_UINT },
	{ "duration_ms", F_UINT }, { "rule", F_STR }, END
};
static const struct field f_egress_attached[] = {
	{ "session_id", F_STR }, { "sandbox", F_STR }, { "policy", F_STR },
	{ "level", F_STR }, END
};
static const struct field f_egress_ended[] = {
	{ "session_id", F_STR }, { "sandbox", F_STR }, { "policy", F_STR },
	{ "level", F_STR }, { "reason", F_STR }, END
};
static const struct field f_dns_query[] = {
	{ "session_id", F_STR }, { "name", F_STR }, { "qtype", F_STR },
	{ "decision", F_DECISION }, END
};
static const struct field f_dns_tunnel[] = {
	{ "session_id", F_STR }, { "name", F_STR }, { "score", F_NUM }, END
};
static const struct field f_policy_load[] = {
	{ "program", F_STR }, { "files", F_ARR }, { "ok", F_BOOL }, END
};
static const struct field f_program[] = {
	{ "program", F_STR }, END
};
static const struct field f_cleanup[] = {
	{ "program", F_STR }, { "removed", F_ARR }, END
};
static const struct field f_fleet[] = {
	{ "node_id", F_STR }, { "store", F_STR }, { "on_unreachable", F_STR },
	END
};
static const struct field f_operator_note[] = {
	{ "principal", F_STR }, { "message", F_STR }, END
};

static const struct evtype writer_types[] = {
	{ "code_execution", f_code_execution },
	{ "execution_started", f_execution_started },
	{ "execution_lost", f_execution_started },
	{ "session_created", f_session_created },
	{ "session_closed", f_session_closed },
	{ "session_expired", f_session },
	{ "session_evicted", f_session_closed },
	{ "call_refused", f_call_refused },
	{ "auth_accepted", f_auth_accepted },
	{ "artifact_delivered", f_artifact_delivered },
	{ "artifact_refused", f_artifact_refused },
	{ "egress_denied", f_egress_denied },
	{ "egress_flow", f_egress_flow },
	{ "egress_flow_summary", f_egress_flow_summary },
	{ "egress_http", f_egress_http },
	{ "egress_attached", f_egress_attached },
	{ "egress_detached", f_egress_ended },
	{ "egress_refused", f_egress_ended },
	{ "dns_query", f_dns_query },
	{ "dns_tunnel_suspected", f_dns_tunnel },
	{ "policy_load", f_policy_load },
	{ "daemon_start", f_program },
	{ "daemon_stop", f_program },
	{ "cleanup", f_cleanup },
	{ "operator_note", f_operator_note },
	{ "fleet_degraded", f_fleet },
	{ "fleet_restored", f_fleet },
};

static const char *const daemon_only[] = {
	"chain_start", "rotate", "checkpoint", "recovery", "writer_refused",
	"event_rejected", "audit_resumed", "audit_error", NULL
};

static const char *const type_names[] = {
	"a non-empty string", "an integer", "a non-negative integer",
	"a number", "a boolean", "an object", "an array",
	"\"sha256:\" and 64 lowercase hex digits", "\"allow\" or \"deny\"",
};

int
event_is_daemon_only(const char *name)
{
	size_t	 i;

	for (i = 0; daemon_only[i] != NULL; i++)
		if (strcmp(name, daemon_only[i]) == 0)
			return 1;
	return 0;
}

static int
is_code_hash(const char *s)
{
	return strncmp(s, "sha256:", 7) == 0 && strlen(s) == 7 + 64 &&
	    hex_lower(s + 7, 64);
}

static int
field_ok(const json_t *v, enum ftype t)
{
	const char	*s;
	size_t		 len;

	switch (t) {
	case F_STR:
		if (!json_is_string(v))
			return 0;
		len = json_string_length(v);
		return len > 0 && len <= EVENT_STRING_MAX;
	case F_INT:
		return json_is_integer(v);
	case F_UINT:
		return json_is_integer(v) && json_integer_value(v) >= 0;
	case F_NUM:
		return json_is_number(v);
	case F_BOOL:
		return json_is_boolean(v);
	case F_OBJ:
		return json_is_object(v);
	case F_ARR:
		return json_is_array(v);
	case F_HASH:
		return json_is_string(v) && is_code_hash(json_string_value(v));
	case F_DECISION:
		if (!json_is_string(v))
			return 0;
		s = json_string_value(v);
		return strcmp(s, "allow") == 0 || strcmp(s, "deny") == 0;
	}
	return 0;
}

int
event_validate(const json_t *ev, char *err, size_t errlen)
{
	const struct evtype	*t = NULL;
	const struct field	*f;
	const json_t		*v;
	const char		*name, *key;
	size_t			 i;

	if (!json_is_object(ev)) {
		snprintf(err, errlen, "event is not an object");
		return -1;
	}
	if ((name = json_string_value(json_object_get(ev, "event"))) == NULL) {
		snprintf(err, errlen, "field 'event' (string) is required");
		return -1;
	}
	if (!chain_event_name_ok(name)) {
		snprintf(err, errlen, "field 'event': not a valid event name");
		return -1;
	}
	if (event_is_daemon_only(name)) {
		snprintf(err, errlen, "event type '%s' is written only by "
		    "stockade-auditd", name);
		return -1;
	}
	for (i = 0; i < nitems(writer_types); i++)
		if (strcmp(writer_types[i].name, name) == 0)
			t = &writer_types[i];
	if (t == NULL) {
		snprintf(err, errlen, "unknown event type '%s'", name);
		return -1;
	}
	json_object_foreach((json_t *)ev, key, v) {
		if (strcmp(key, "event") != 0 && chain_key_reserved(key)) {
			snprintf(err, errlen, "field '%s' is set by "
			    "stockade-auditd, not by writers", key);
			return -1;
		}
	}
	for (f = t->required; f->name != NULL; f++) {
		if ((v = json_object_get(ev, f->name)) == NULL) {
			snprintf(err, errlen, "%s: required field '%s' is "
			    "missing", name, f->name);
			return -1;
		}
		if (!field_ok(v, f->type)) {
			snprintf(err, errlen, "%s: field '%s' must be %s", name,
			    f->name, type_names[f->type]);
			return -1;
		}
	}
	return 0;
}
