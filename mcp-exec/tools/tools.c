/*
 * Tool calls.  Arguments come from an AI agent and are checked twice: for
 * shape against the tool's table (args.c, the same that tools/list shows:
 * a JSON-RPC error naming the field) and for value against the profile
 * and the pattern rules (a tool error); every refusal is audited.
 * Nothing runs unless its execution_started event is on disk (when audit
 * is required).  run_command is in command.c, the checks both share in
 * exec.c and their start in call_start.c: the same call's life
 * (tools_int.h, pycall.h), split for length; the tool port's calls are in
 * request.c, the session tools in session_tools.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "audit_fit.h"
#include "commands.h"
#include "files.h"
#include "hash.h"
#include "messages.h"
#include "log.h"
#include "patterns.h"
#include "sessions/fleet_quota.h"
#include "sessions/inflight.h"
#include "sessions/persist.h"
#include "sessions/session.h"
#include "pycall.h"
#include "sandbox/wasm.h"
#include "tools.h"
#include "tools_int.h"
#include "utf8.h"
#include "util.h"


/* ------------------------------------------------------------ helpers */

/* A tool-level failure: a result with isError, not a protocol error. */
void
tool_error(struct tool_req *rq, const char *fmt, ...)
{
	char	 text[ERR_MAX];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* Errors quote what the agent sent (paths, names): shown to people,
	 * they get the same treatment as protocol errors (protocol/mcp.c). */
	str_ascii(text);
	tool_result(rq, json_pack("{s:[{s:s, s:s}], s:b}", "content", "type",
	    "text", "text", text, "isError", 1));
}

int
tool_args(struct tool_req *rq, const char *tool, const struct arg_spec *spec,
    const json_t *args, void *out)
{
	char	 err[TOOL_FAULT_MAX];

	if (args_parse(spec, args, rq->srv->conf.server.max_code_bytes, out,
	    err, sizeof(err)) == 0)
		return 0;
	/* Recorded, not counted: the metrics count calls whose arguments
	 * passed the schema. */
	refuse_record(rq, tool, "bad arguments", &(struct refusal){
	    .detail = err });
	tool_fault(rq, TOOL_BAD_PARAMS, "%s", err);
	return -1;
}

/* A session for this request: its session_created names the client. */
struct session *
tool_session_create(struct tool_req *rq, struct call_grant *cg,
    char *err, size_t errlen)
{
	json_t		*client = tool_client_json(rq->client);
	struct session	*s;

	s = session_create(rq->srv, rq->principal, cg->prof, &cg->bill, client,
	    err, errlen);
	json_decref(client);
	if (s != NULL) {
		/* The fleet's sessions lease lives as long as the session. */
		session_set_fleet_lease(s, cg->session_lease);
		cg->session_lease = 0;
	}
	return s;
}

/*
 * A call refused before it ran: recorded with everything a reviewer needs
 * to tell which call it was (session, code hash, argv) and why (rule,
 * severity, detail).
 */
void
refuse_record(struct tool_req *rq, const char *tool, const char *reason,
    const struct refusal *r)
{
	char		 hash[7 + SHA256_HEX + 1];
	json_t		*ev;

	ev = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s*, s:s*}", "event",
	    "call_refused", "principal", rq->principal, "reason", reason,
	    "tool", tool, "severity", r->severity ? r->severity : "warning",
	    "rule_id", r->rule, "session_id", r->session_id);
	if (ev != NULL && r->code != NULL) {
		memcpy(hash, "sha256:", 7);
		sha256_hex(r->code, r->code_len, hash + 7);
		json_object_set_new(ev, "code_hash", json_string(hash));
		json_object_set_new(ev, "code_size", json_integer(
		    (json_int_t)r->code_len));
	}
	if (ev != NULL && r->argv != NULL)
		json_object_set(ev, "argv", (json_t *)r->argv);
	if (ev != NULL && r->detail != NULL)
		json_object_set_new(ev, "detail", json_string(r->detail));
	server_audit(rq->srv, tool_with_client(rq, ev));
}

void
refuse(struct tool_req *rq, const char *tool, const char *reason,
    const struct refusal *r)
{
	refuse_record(rq, tool, reason, r);
	counters_call(&rq->srv->counters, tool, COUNT_REFUSED);
}

/* ------------------------------------------------------------ results */

static json_t *
inline_images(struct pycall *pc, const char *sid, json_t *content,
    const json_t *artifacts)
{
	const json_t	*a;
	const char	*mime, *name;
	char		*data, *b64;
	size_t		 i, len;

	json_array_foreach(artifacts, i, a) {
		mime = json_string_value(json_object_get(a, "mime"));
		name = json_string_value(json_object_get(a, "name"));
		json_array_append_new(content, json_pack("{s:s, s:O, s:O, s:O, "
		    "s:O}", "type", "resource_link", "uri", json_object_get(a,
		    "uri"), "name", json_object_get(a, "name"), "mimeType",
		    json_object_get(a, "mime"), "size", json_object_get(a,
		    "size")));
		/* Small images inline too; big ones only by link. */
		if (mime == NULL || strncmp(mime, "image/", 6) != 0 ||
		    strcmp(mime, "image/svg+xml") == 0 ||
		    json_integer_value(json_object_get(a, "size")) >
		    (json_int_t)pc->srv->conf.server.inline_image_max ||
		    session_artifact(pc->srv, pc->principal, sid, name, &data,
		    &len, &mime) == -1)
			continue;
		b64 = xmalloc(BASE64_LEN(len));
		base64_encode((const uint8_t *)data, len, b64);
		json_array_append_new(content, json_pack("{s:s, s:s, s:s}",
		    "type", "image", "data", b64, "mimeType", mime));
		deliver_record(pc->rq, sid, name, data, len, mime, "inline");
		free(b64);
		free(data);
	}
	return content;
}

/*
 * The first bytes of the output go along, with the profile's retention:
 * stockade-auditd keeps them where code.retention (or the profile's) is
 * sample or full, and drops them otherwise.
 */
static void
output_sample(json_t *ev, const struct profile *p, const struct call_result *r)
{
	audit_output_sample(ev, r->stdout_text, r->stderr_text);
	if (p->code_retention[0] != '\0')
		json_object_set_new(ev, "code_retention_min",
		    json_string(p->code_retention));
}

/* The call's code_execution record, naming the client (rq is alive). */
static json_t *
execution_record(struct pycall *pc, const struct call_result *r)
{
	const struct profile	*p = pc->prof;
	json_t			*names = json_array(), *a, *ev;
	size_t			 i;

	json_array_foreach(r->artifacts, i, a)
		json_array_append_new(names, json_pack("{s:O, s:O, s:O, s:O}",
		    "name", json_object_get(a, "name"), "sha256",
		    json_object_get(a, "sha256"), "size", json_object_get(a,
		    "size"), "mime", json_object_get(a, "mime")));
	ev = json_pack("{s:s, s:s, s:s, s:s, s:I, "
	    "s:{s:s, s:s}, s:{s:f, s:I, s:i, s:i}, s:s, s:i, s:I, s:I, s:I, "
	    "s:o, s:s, s:O, s:s, s:b, s:b, s:b}",
	    "event", "code_execution", "principal", pc->principal,
	    "session_id", r->session_id, "code_hash", pc->code_hash,
	    "code_size", (json_int_t)pc->code_size,
	    "sandbox", "runtime", sandbox_runtime_name(p->runtime),
	    "image", "host-usr",
	    "limits", "cpu", p->limits.cpu_millis / 1000.0, "mem_mb",
	    (json_int_t)(p->limits.memory >> 20), "pids", (int)p->limits.pids,
	    "timeout_ms", (int)pc->timeout_ms, "network", p->network,
	    "exit_code", r->exit_code, "duration_ms", (json_int_t)r->duration_ms,
	    "stdout_bytes", (json_int_t)r->stdout_bytes, "stderr_bytes",
	    (json_int_t)r->stderr_bytes, "artifacts", names, "decision",
	    "allow", "pattern_hits", pc->hits, "profile", p->name, "timed_out",
	    r->timed_out, "cancelled", r->cancelled, "session_lost",
	    r->session_gone);
	if (ev != NULL) {
		/* What ran the code, as gVisor's records name their wall. */
		if (p->runtime == SANDBOX_WASM)
			wasm_describe(json_object_get(ev, "sandbox"));
		json_object_set_new(ev, "end", json_string(r->end ? r->end :
		    "exited"));
		json_object_set_new(ev, "oom_killed",
		    json_boolean(r->oom_killed));
		if (r->oom_killed)
			json_object_set_new(ev, "memory_limit_mb",
			    json_integer((json_int_t)(r->memory_limit >> 20)));
		if (r->crash_status >= 0 && r->end != NULL &&
		    strcmp(r->end, "crash") == 0)
			json_object_set_new(ev, "crash_status",
			    json_integer(r->crash_status));
		if (r->why != NULL)
			json_object_set_new(ev, "reason", json_string(r->why));
		json_object_set_new(ev, "tool", json_string(pc->tool));
		if (pc->argv != NULL)
			json_object_set(ev, "argv", pc->argv);
		/* The session's layer as it stands: a reviewer rebuilds it
		 * from the profile's index and these hashes. */
		if (r->packages != NULL) {
			json_object_set(ev, "packages", r->packages);
			json_object_set_new(ev, "package_index",
			    json_string(p->pkg_index));
		}
		if (json_array_size(pc->inputs) > 0)
			json_object_set(ev, "inputs", pc->inputs);
		output_sample(ev, pc->prof, r);
	}
	return tool_with_client(pc->rq, ev);
}

/* The call is over (or never ran): what it used is charged. */
void
pycall_bill(struct pycall *pc, const struct call_result *r)
{
	const json_t	*a;
	uint64_t	 bytes = 0;
	size_t		 i;

	if (!pc->billed || pc->srv->quota == NULL)
		return;
	pc->billed = 0;
	if (r != NULL)
		json_array_foreach(r->artifacts, i, a)
			bytes += (uint64_t)json_integer_value(json_object_get(a,
			    "size"));
	fleet_quota_release(pc->srv->fleet, pc->lease);
	pc->lease = 0;
	quota_call_end(pc->srv->quota, &pc->bill, r ? r->duration_ms : 0,
	    r ? r->cpu_ms : 0, bytes);
	fleet_quota_charge(pc->srv->fleet, &pc->bill, r ? r->duration_ms : 0,
	    r ? r->cpu_ms : 0, bytes);
	/* The usage file and `stockade status`, within PERSIST_DELAY_MS. */
	persist_soon(pc->srv);
}

void
pycall_free(struct pycall *pc)
{
	pycall_bill(pc, NULL);
	if (pc->audit_wait != NULL)
		event_free(pc->audit_wait);
	free(pc->code);
	json_decref(pc->progress_token);
	json_decref(pc->hits);
	json_decref(pc->argv);
	json_decref(pc->inputs);
	free(pc);
}

struct deferred_close {
	struct server	*srv;
	char		 id[SESSION_ID_MAX];
	char		 principal[PRINCIPAL_MAX];
};

/* After the call's callbacks are over: a one-shot's session goes. */
static void
close_later_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct deferred_close	*d = arg;
	struct session		*s;

	if ((s = session_find(d->srv, d->id, d->principal)) != NULL)
		session_close(s, "one command run");
	free(d);
}

static void
close_later(struct pycall *pc, const char *sid)
{
	struct deferred_close	*d = xcalloc(1, sizeof(*d));
	struct timeval		 now = { 0, 0 };

	d->srv = pc->srv;
	snprintf(d->id, sizeof(d->id), "%s", sid);
	snprintf(d->principal, sizeof(d->principal), "%s", pc->principal);
	if (event_base_once(pc->srv->base, -1, EV_TIMEOUT, close_later_cb, d,
	    &now) == -1)
		free(d);
}

void
pycall_done(void *arg, const struct call_result *res)
{
	struct pycall		*pc = arg;
	struct call_result	 r = *res;
	json_t			*sc, *content, *none = NULL, *rec;
	char			*text, msg[ERR_MAX];

	counters_call_done(&pc->srv->counters, pc->tool, r.cancelled ||
	    pc->rq->cancelled ? COUNT_CANCELLED : r.timed_out ?
	    COUNT_TIMEOUT : r.exit_code != 0 ? COUNT_ERROR : COUNT_OK,
	    r.duration_ms);
	pycall_bill(pc, &r);

	/* A one-shot command's workspace goes with its sandbox. */
	if (pc->oneshot) {
		r.artifacts = none = json_array();
		close_later(pc, r.session_id);
	} else if (pc->created && (pc->rq->cancelled ||
	    !tool_reachable(pc->rq)))
		/* Made for this call, and its id never reaches the client. */
		close_later(pc, r.session_id);
	rec = execution_record(pc, &r);
	if (pc->rq->cancelled) {
		inflight_end(pc->srv, pc->inflight, rec);
		tool_drop(pc->rq);	/* a cancelled request gets no reply */
		goto out;
	}
	sc = json_pack("{s:s, s:s, s:s, s:i, s:b, s:b, s:I, s:I, s:I, s:O}",
	    "session_id", r.session_id, "stdout", r.stdout_text, "stderr",
	    r.stderr_text, "exit_code", r.exit_code, "truncated", r.truncated,
	    "timed_out", r.timed_out, "duration_ms", (json_int_t)r.duration_ms,
	    "stdout_bytes", (json_int_t)r.stdout_bytes, "stderr_bytes",
	    (json_int_t)r.stderr_bytes, "artifacts", r.artifacts);
	end_message(&r, pc->timeout_ms, msg, sizeof(msg));
	if (sc != NULL) {
		json_object_set_new(sc, "end", json_string(r.end ? r.end :
		    "exited"));
		/* The one thing by which a client can tell the walls apart. */
		json_object_set_new(sc, "runtime", json_string(
		    sandbox_runtime_name(pc->prof->runtime)));
		json_object_set_new(sc, "oom_killed",
		    json_boolean(r.oom_killed));
		json_object_set_new(sc, "session_lost",
		    json_boolean(r.session_gone && !pc->oneshot));
		if (r.oom_killed)
			json_object_set_new(sc, "memory_limit_mb", json_integer(
			    (json_int_t)(r.memory_limit >> 20)));
		if (msg[0] != '\0')
			json_object_set_new(sc, "message", json_string(msg));
		json_object_set_new(sc, "results", r.results ?
		    json_incref(r.results) : json_array());
		if (r.results_truncated)
			json_object_set_new(sc, "results_truncated",
			    json_true());
		json_object_set_new(sc, "artifacts_skipped", pc->oneshot ||
		    r.skipped == NULL ? json_array() : json_deep_copy(
		    r.skipped));
	}
	if (pc->oneshot)
		json_object_del(sc, "session_id");
	text = json_dumps(sc, JSON_COMPACT);
	content = json_pack("[{s:s, s:s}]", "type", "text", "text", text);
	free(text);
	if (msg[0] != '\0')
		json_array_append_new(content, json_pack("{s:s, s:s}", "type",
		    "text", "text", msg));
	/* An inlined image's artifact_delivered follows its code_execution
	 * (docs/audit-events.md); without artifacts the record waits for the
	 * reply: it is asynchronous, and its encoding and the daemon's
	 * wake-up were on the way of the reply. */
	if (json_array_size(r.artifacts) > 0) {
		inflight_end(pc->srv, pc->inflight, rec);
		rec = NULL;
	}
	if (!r.session_gone)
		content = inline_images(pc, r.session_id, content, r.artifacts);
	tool_result(pc->rq, json_pack("{s:o, s:o, s:b}", "content", content,
	    "structuredContent", sc, "isError", r.exit_code != 0 ||
	    r.timed_out || r.oom_killed));
	if (rec != NULL)
		inflight_end(pc->srv, pc->inflight, rec);
out:
	json_decref(none);
	pycall_free(pc);
}

void
pycall_progress(void *arg, int stream, const char *data, size_t len,
    uint64_t total)
{
	struct pycall	*pc = arg;
	char		*text;
	size_t		 tlen;

	pc->progress += len;
	if (pc->progress_token == NULL || pc->rq->cancelled)
		return;
	text = utf8_sanitize(data, len < PROGRESS_TEXT_MAX ? len :
	    PROGRESS_TEXT_MAX, &tlen);
	tool_notify(pc->rq, "notifications/progress", json_pack(
	    "{s:O, s:I, s:s%}", "progressToken", pc->progress_token,
	    "progress", (json_int_t)pc->progress, "message", text, tlen));
	free(text);
}

void
pycall_cancel(struct tool_req *rq)
{
	struct pycall	*pc = rq->arg;

	if (pc->call != NULL)
		call_cancel(pc->call);
}

/* ------------------------------------------------------------ tools */

static void
execute_python(struct tool_req *rq, const json_t *args,
    const json_t *token)
{
	struct server		*srv = rq->srv;
	struct exec_call	 ec;
	const char		*code, *sid, *rule = NULL, *severity = NULL;
	const char		*id;
	size_t			 len, i;
	json_t			*hits = NULL, *h, *staged;
	int			 deny;

	if (exec_begin(rq, "execute_python", args_execute_python, args,
	    &ec) == -1)
		goto out;
	code = ec.x.code.v;
	len = ec.x.code.len;
	sid = ec.x.session_id.v;
	deny = patterns_scan(srv->patterns, code, len, &hits);
	counters_pattern_hits(&srv->counters, hits);
	if (deny != 0) {
		/* A scan that could not finish refuses as surely as a deny. */
		json_array_foreach(hits, i, h)
			if (deny == 1 && rule == NULL && strcmp(
			    json_string_value(json_object_get(h, "action")),
			    "deny") == 0)
				rule = json_string_value(json_object_get(h, "id"));
		if (rule == NULL)
			rule = "scanner_error";
		json_array_foreach(hits, i, h)
			if ((id = json_string_value(json_object_get(h,
			    "id"))) != NULL && strcmp(id, rule) == 0)
				severity = json_string_value(json_object_get(h,
				    "severity"));
		refuse(rq, "execute_python", deny == 1 ?
		    "pattern rule denies this code" :
		    "the pattern scan did not finish", &(struct refusal){
		    .rule = rule, .severity = severity ? severity : "critical",
		    .session_id = sid, .code = code, .code_len = len });
		tool_error(rq, "refused: %s %s", deny == 1 ? "the code "
		    "matches rule" : "the pattern scan did not finish:", rule);
		goto out;
	}
	/* Flagged, not denied: the code runs, and the client is told. */
	json_array_foreach(hits, i, h)
		tool_log(rq, "warning", json_pack("{s:s, s:O, s:O, s:O}",
		    "message", "the code matches a flagged pattern (recorded "
		    "in the audit trail)", "rule", json_object_get(h, "id"),
		    "severity", json_object_get(h, "severity"), "line",
		    json_object_get(h, "line")));
	if (exec_stage(rq, &ec, &staged) == -1)
		goto out;
	start_call(rq, ec.s, code, len, ec.timeout, token, hits,
	    "execute_python", NULL, staged, 0, ec.created, &ec.cg);
	hits = NULL;
out:
	json_decref(hits);
	exec_end(&ec);
}

void
tools_call(struct tool_req *rq, const json_t *params)
{
	const char	*name = json_string_value(json_object_get(params, "name"));
	const json_t	*args = json_object_get(params, "arguments");
	const json_t	*token = json_object_get(json_object_get(params, "_meta"),
			    "progressToken");
	json_t		*empty = NULL;

	if (name == NULL) {
		tool_fault(rq, TOOL_BAD_PARAMS, "params.name: a string is "
		    "required");
		return;
	}
	if (args != NULL && !json_is_object(args)) {
		tool_fault(rq, TOOL_BAD_PARAMS, "params.arguments: an "
		    "object");
		return;
	}
	if (args == NULL)
		args = empty = json_object();
	if (token != NULL && !json_is_string(token) && !json_is_integer(token))
		token = NULL;
	/* Hidden from this caller's tools/list, and refused: audited. */
	if (strcmp(name, "execute_python") == 0 || strcmp(name,
	    "close_session") == 0 || strcmp(name, "list_files") == 0 ||
	    strcmp(name, "read_file") == 0 || (strcmp(name, "run_command") ==
	    0 && commands_count(rq->srv->commands) > 0)) {
		if (!tool_permitted(rq, name))
			goto out;
	}
	/* Granted with close_session: the caller's own sessions. */
	if (strcmp(name, "list_sessions") == 0 &&
	    !tool_permitted(rq, "close_session"))
		goto out;
	if (tool_node_gate(rq, name, args) == -1)
		goto out;
	if (strcmp(name, "execute_python") == 0)
		execute_python(rq, args, token);
	else if (strcmp(name, "close_session") == 0)
		tools_close_session(rq, args);
	else if (strcmp(name, "list_sessions") == 0)
		tools_list_sessions(rq, args);
	else if (strcmp(name, "list_files") == 0)
		files_list(rq, args);
	else if (strcmp(name, "read_file") == 0)
		files_read(rq, args);
	else if (strcmp(name, "run_command") == 0 &&
	    commands_count(rq->srv->commands) > 0)
		run_command(rq, args, token);
	else
		tool_fault(rq, TOOL_BAD_PARAMS, "unknown tool: %.64s", name);
out:
	json_decref(empty);
}
