/*
 * `mcp-exec run` in the audit trail, through the blocking client: the
 * operator's command is recorded as a tool call would be, with the OS
 * user (getuid, not $USER) as principal.  Trusts the run's result, which
 * run.c built from bounded, sanitised reads.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit_fit.h"
#include "log.h"
#include "run_audit.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/wasm.h"
#include "version.h"

/* Sends one record (sync) without waiting; *id is its ack's.  -1 with err. */
static int
run_audit_send(struct run_audit *ra, json_t *ev, uint64_t *id, char *err,
    size_t errlen)
{
	int	 rv;

	if (ev == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((rv = audit_client_send(&ra->ac, ev, 1, id)) == -1)
		snprintf(err, errlen, "send to stockade-auditd: %s",
		    strerror(errno));
	json_decref(ev);
	return rv;
}

/* Waits for the ack of record id (durable on disk).  -1 with err. */
static int
run_audit_ack(struct run_audit *ra, uint64_t id, char *err, size_t errlen)
{
	struct audit_ack	 ack;

	do {
		if (audit_client_recv(&ra->ac, &ack, err, errlen) == -1)
			return -1;
		/* An error without an id is about the connection itself. */
	} while (ack.id != id && !(ack.ok == 0 && ack.id == 0));
	if (!ack.ok) {
		snprintf(err, errlen, "%s: %s", ack.code, ack.message);
		return -1;
	}
	return 0;
}

/*
 * Sends a record whose ack run_audit_end reads.  Past RUN_AUDIT_INFLIGHT
 * unread acks it waits for one first (the socket's buffers are finite).
 */
static int
run_audit_sent(struct run_audit *ra, json_t *ev, char *err, size_t errlen)
{
	struct audit_ack	 ack;
	uint64_t		 id;

	if (ra->inflight >= RUN_AUDIT_INFLIGHT) {
		if (audit_client_recv(&ra->ac, &ack, err, errlen) == -1) {
			json_decref(ev);
			return -1;
		}
		ra->inflight--;
		if (!ack.ok)
			log_warnx("audit: record %llu: %s: %s",
			    (unsigned long long)ack.id, ack.code, ack.message);
	}
	if (run_audit_send(ra, ev, &id, err, errlen) == -1)
		return -1;
	ra->inflight++;
	return 0;
}

/* No trail for this run: refused when the audit is required. */
static int
run_audit_unavailable(struct run_audit *ra, const struct run_request *rq,
    const char *err)
{
	if (ra->open)
		audit_client_close(&ra->ac);
	ra->open = 0;
	ra->pending = 0;
	if (rq->conf->server.audit_required) {
		json_decref(ra->argv);
		json_decref(ra->client);
		ra->argv = ra->client = NULL;
		ra->refused = 1;
		return -1;
	}
	log_warnx("the audit trail is unavailable (%s): running unaudited "
	    "(audit_required: false)", err);
	return 0;
}

int
run_audit_start(struct run_audit *ra, const struct run_request *rq,
    const char *sock, const char *session, char *err, size_t errlen)
{
	struct passwd	*pw = getpwuid(getuid());
	json_t		*ev;
	char		*code, digest[SHA256_HEX + 8];
	size_t		 i;

	memset(ra, 0, sizeof(*ra));
	ra->ac.fd = -1;
	snprintf(ra->session, sizeof(ra->session), "%s", session);
	if (pw != NULL)
		snprintf(ra->principal, sizeof(ra->principal), "user:%s",
		    pw->pw_name);
	else
		snprintf(ra->principal, sizeof(ra->principal), "user:%u",
		    (unsigned)getuid());
	ra->argv = json_array();
	for (i = 0; rq->argv[i] != NULL; i++)
		json_array_append_new(ra->argv, json_string(rq->argv[i]));
	ra->client = json_pack("{s:s, s:s, s:s, s:s}", "name", "mcp-exec run",
	    "version", STOCKADE_VERSION, "transport", "cli", "auth", "os-user");
	/* The command line stands for the code: hashed (and kept, when
	 * code.retention says so) like execute_python's. */
	if ((code = json_dumps(ra->argv, JSON_COMPACT)) == NULL) {
		snprintf(err, errlen, "argv is not UTF-8");
		return -1;
	}
	ra->code_size = strlen(code);
	memcpy(ra->code_hash, "sha256:", 7);
	sha256_hex(code, ra->code_size, ra->code_hash + 7);
	if (audit_client_open(&ra->ac, sock, err, errlen) == -1)
		goto unaudited;
	ra->open = 1;
	sandbox_seccomp_sha256(rq->seccomp, digest, sizeof(digest));
	ev = json_pack("{s:s, s:s, s:s, s:s, s:I, s:[], s:s, s:O, s:O, s:s, "
	    "s:s}", "event", "execution_started", "principal", ra->principal,
	    "session_id", session, "code_hash", ra->code_hash, "code_size",
	    (json_int_t)ra->code_size, "pattern_hits", "tool", "run", "argv",
	    ra->argv, "client", ra->client, "code", code, "seccomp_sha256",
	    digest);
	if (ev != NULL && rq->profile->code_retention[0] != '\0')
		json_object_set_new(ev, "code_retention_min",
		    json_string(rq->profile->code_retention));
	audit_fit_call(ev);
	/* Its ack is awaited in run_audit_confirm, while the sandbox is
	 * built: the command itself waits for it. */
	if (run_audit_send(ra, ev, &ra->started_id, err, errlen) == -1)
		goto unaudited;
	ra->pending = 1;
	free(code);
	return 0;
unaudited:
	free(code);
	return run_audit_unavailable(ra, rq, err);
}

int
run_audit_confirm(struct run_audit *ra, const struct run_request *rq,
    char *err, size_t errlen)
{
	if (!ra->pending)
		return 0;
	ra->pending = 0;
	if (run_audit_ack(ra, ra->started_id, err, errlen) == 0)
		return 0;
	return run_audit_unavailable(ra, rq, err);
}

/* Each artifact the run copied out of the sandbox, to the operator. */
static void
run_audit_artifacts(struct run_audit *ra, const json_t *artifacts)
{
	const char	*session = ra->session;
	const json_t	*a;
	const char	*hex;
	char		 err[256], hash[7 + SHA256_HEX + 1];
	size_t		 i;

	json_array_foreach(artifacts, i, a) {
		if ((hex = json_string_value(json_object_get(a, "sha256"))) ==
		    NULL)
			continue;
		snprintf(hash, sizeof(hash), "sha256:%s", hex);
		if (run_audit_sent(ra, json_pack("{s:s, s:s, s:s, s:O, s:s, "
		    "s:O, s:O, s:s, s:O, s:O, s:s}", "event",
		    "artifact_delivered", "principal", ra->principal,
		    "session_id", session, "artifact", json_object_get(a,
		    "name"), "sha256", hash, "size", json_object_get(a, "size"),
		    "mime", json_object_get(a, "mime"), "how", "run_artifacts",
		    "dest", json_object_get(a, "uri"), "client", ra->client,
		    "request", "run"), err, sizeof(err)) == -1)
			log_warnx("audit: artifact_delivered: %s", err);
	}
}

void
run_audit_result(struct run_audit *ra, const struct run_request *rq,
    const json_t *result, const char *why)
{
	const struct profile	*p = rq->profile;
	const char		*session = ra->session;
	char			 err[256];
	json_t			*ev, *names;
	const json_t		*a;
	size_t			 i;

	/* A run that failed before its command: execution_started's ack. */
	if (ra->pending)
		(void)run_audit_confirm(ra, rq, err, sizeof(err));
	if (!ra->open || ra->sent)
		return;
	ra->sent = 1;
	names = json_array();
	json_array_foreach(json_object_get(result, "artifacts"), i, a)
		json_array_append_new(names, json_pack("{s:O, s:O, s:O, s:O}",
		    "name", json_object_get(a, "name"), "sha256",
		    json_object_get(a, "sha256"), "size", json_object_get(a,
		    "size"), "mime", json_object_get(a, "mime")));
	ev = json_pack("{s:s, s:s, s:s, s:s, s:I, s:{s:s, s:s}, s:O*, s:s, "
	    "s:I, s:I, s:I, s:I, s:o, s:s, s:s, s:s, s:O, s:O, s:s}",
	    "event", "code_execution", "principal", ra->principal,
	    "session_id", session, "code_hash", ra->code_hash, "code_size",
	    (json_int_t)ra->code_size, "sandbox", "runtime", sandbox_runtime_name(p->runtime),
	    "image", "host-usr", "limits", json_object_get(result, "limits"),
	    "network", p->network,
	    "exit_code", result ? json_integer_value(json_object_get(result,
	    "exit_code")) : (json_int_t)-1, "duration_ms",
	    json_integer_value(json_object_get(result, "duration_ms")),
	    "stdout_bytes", json_integer_value(json_object_get(result,
	    "stdout_bytes")), "stderr_bytes", json_integer_value(
	    json_object_get(result, "stderr_bytes")), "artifacts", names,
	    "decision", "allow", "profile", p->name, "tool", "run", "argv",
	    ra->argv, "client", ra->client, "request", "run");
	if (ev != NULL && p->runtime == SANDBOX_WASM)
		wasm_describe(json_object_get(ev, "sandbox"));
	/* limits is required: a run that never started has the profile's. */
	if (ev != NULL && json_object_get(ev, "limits") == NULL)
		json_object_set_new(ev, "limits", json_pack("{s:f, s:I, s:i}",
		    "cpu", p->limits.cpu_millis / 1000.0, "mem_mb",
		    (json_int_t)(p->limits.memory >> 20), "pids",
		    (int)p->limits.pids));
	if (ev != NULL) {
		json_object_set_new(ev, "end", json_string(result == NULL ?
		    "not_started" : json_is_true(json_object_get(result,
		    "timed_out")) ? "timeout" : "exited"));
		if (why != NULL)
			json_object_set_new(ev, "reason", json_string(why));
		if (json_object_get(result, "packages") != NULL) {
			json_object_set(ev, "packages",
			    json_object_get(result, "packages"));
			json_object_set(ev, "package_index",
			    json_object_get(result, "package_index"));
		}
		/* Its output's first bytes, kept as execute_python's are. */
		audit_output_sample(ev, json_string_value(json_object_get(
		    result, "stdout")), json_string_value(json_object_get(
		    result, "stderr")));
		if (p->code_retention[0] != '\0')
			json_object_set_new(ev, "code_retention_min",
			    json_string(p->code_retention));
		/* The sandbox wrote the workspace and the layer. */
		audit_fit_call(ev);
	}
	if (run_audit_sent(ra, ev, err, sizeof(err)) == -1)
		log_warnx("audit: code_execution: %s", err);
	if (result != NULL)
		run_audit_artifacts(ra, json_object_get(result, "artifacts"));
}

void
run_audit_end(struct run_audit *ra, const struct run_request *rq,
    const json_t *result, const char *why)
{
	struct audit_ack	 ack;
	char			 err[256];

	run_audit_result(ra, rq, result, why);
	if (!ra->open)
		goto out;
	/* Every record sent is acked in turn; a failure is only logged:
	 * the command has run. */
	for (; ra->inflight > 0; ra->inflight--) {
		if (audit_client_recv(&ra->ac, &ack, err, sizeof(err)) == -1) {
			log_warnx("audit: %s", err);
			break;
		}
		if (!ack.ok)
			log_warnx("audit: record %llu: %s: %s",
			    (unsigned long long)ack.id, ack.code, ack.message);
	}
	audit_client_close(&ra->ac);
	ra->open = 0;
out:
	json_decref(ra->argv);
	json_decref(ra->client);
	ra->argv = ra->client = NULL;
}
