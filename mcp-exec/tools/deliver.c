/*
 * Where each artifact went: one artifact_delivered record for every file
 * that leaves a sandbox towards a client (resources/read, an inline image,
 * read_file), and artifact_refused for reads turned down.  Trusts the
 * bytes it is given to be exactly what is sent; the client fields are the
 * client's own claims except the address and the principal.
 */
#include <string.h>

#include "audit_fit.h"
#include "hash.h"
#include "sessions/session.h"
#include "tools.h"
#include "util.h"

#define DELIVER_NAME_MAX	1024	/* an artifact name in a record */

/* Refusals a second, server-wide (one event loop thread owns this). */
static struct {
	uint64_t	sec;
	unsigned	count;
	json_int_t	left_out;	/* reported in the next record */
} deliver_rate;

json_t *
tool_client_json(const struct tool_client *c)
{
	json_t	*o;

	if (c == NULL)
		return json_object();
	o = json_pack("{s:s, s:s, s:s}", "name", c->name, "version",
	    c->version, "transport", c->transport);
	if (o != NULL && c->remote_addr[0] != '\0') {
		json_object_set_new(o, "remote_addr",
		    json_string(c->remote_addr));
		json_object_set_new(o, "remote_port",
		    json_integer(c->remote_port));
	}
	if (o == NULL)
		return NULL;
	tool_client_proof(o, c);
	return o;
}

void
tool_client_proof(json_t *o, const struct tool_client *c)
{
	json_t		*g;
	unsigned	 i;

	if (o == NULL)
		return;
#define SET(k, v) do {							\
	if ((v)[0] != '\0')						\
		json_object_set_new(o, k, json_string(v));		\
} while (0)
	SET("auth", c->auth);
	SET("issuer", c->issuer);
	SET("subject", c->subject);
	SET("client_id", c->client_id);
	SET("jti_sha256", c->jti_sha256);
	SET("cert_sha256", c->cert_sha256);
	SET("forwarded_by", c->forwarded_by);
#undef SET
	if (c->ngroups > 0 && (g = json_array()) != NULL) {
		for (i = 0; i < c->ngroups; i++)
			json_array_append_new(g, json_string(c->groups[i]));
		json_object_set_new(o, "groups", g);
	}
}

/* The caller's trace, so a SIEM can join the record with its spans, and
 * the MCP task the call runs as, so a poll can be joined with its run. */
json_t *
tool_with_trace(struct tool_req *rq, json_t *ev)
{
	if (ev != NULL && rq->task_id[0] != '\0')
		json_object_set_new(ev, "task_id", json_string(rq->task_id));
	if (ev == NULL || rq->traceparent[0] == '\0')
		return ev;
	json_object_set_new(ev, "trace", json_pack("{s:s, s:s*}",
	    "traceparent", rq->traceparent, "tracestate",
	    rq->tracestate[0] != '\0' ? rq->tracestate : NULL));
	return ev;
}

/*
 * Every record of a tool call passes here: what its code or its client
 * can grow is held to its budget first, so that the record is kept.
 */
json_t *
tool_with_client(struct tool_req *rq, json_t *ev)
{
	if (ev != NULL) {
		audit_fit_call(ev);
		json_object_set_new(ev, "client", tool_client_json(rq->client));
		json_object_set_new(ev, "request", json_string(rq->request_id));
	}
	return tool_with_trace(rq, ev);
}

/* What every delivery record says about the request and who sent it. */
static json_t *
deliver_base(struct tool_req *rq, const char *event, const char *sid,
    const char *name, const char *how)
{
	char	 sbuf[SESSION_ID_MAX], nbuf[DELIVER_NAME_MAX];

	/* A refused read's names are the client's: printable ASCII only. */
	snprintf(sbuf, sizeof(sbuf), "%s", sid ? sid : "");
	snprintf(nbuf, sizeof(nbuf), "%s", name ? name : "");
	str_ascii(sbuf);
	str_ascii(nbuf);
	return tool_with_trace(rq, json_pack("{s:s, s:s, s:s*, s:s, s:s, s:o, s:s}",
	    "event", event, "principal", rq->principal, "session_id",
	    sid ? sbuf : NULL, "artifact", nbuf, "how", how, "client",
	    tool_client_json(rq->client), "request", rq->request_id));
}

void
deliver_record(struct tool_req *rq, const char *sid, const char *name,
    const char *data, size_t len, const char *mime, const char *how)
{
	char	 hash[7 + SHA256_HEX + 1];
	json_t	*ev;

	memcpy(hash, "sha256:", 7);
	sha256_hex(data, len, hash + 7);
	if ((ev = deliver_base(rq, "artifact_delivered", sid, name,
	    how)) != NULL) {
		json_object_set_new(ev, "sha256", json_string(hash));
		json_object_set_new(ev, "size", json_integer((json_int_t)len));
		json_object_set_new(ev, "mime", json_string(mime ? mime :
		    "application/octet-stream"));
	}
	server_audit(rq->srv, ev);
}

/*
 * A client probing names or sessions must not flood the trail: at most
 * DELIVER_REFUSALS_PER_S a second, the rest counted in the next one.
 */
void
deliver_refused(struct tool_req *rq, const char *sid, const char *name,
    const char *how, const char *reason)
{
	uint64_t	 sec = mono_ms() / 1000;
	json_t		*ev;

	if (sec != deliver_rate.sec) {
		deliver_rate.sec = sec;
		deliver_rate.count = 0;
	}
	if (deliver_rate.count++ >= DELIVER_REFUSALS_PER_S) {
		deliver_rate.left_out++;
		return;
	}
	if ((ev = deliver_base(rq, "artifact_refused", sid, name,
	    how)) != NULL) {
		json_object_set_new(ev, "reason", json_string(reason));
		json_object_set_new(ev, "severity", json_string("warning"));
		json_object_set_new(ev, "unaudited_before",
		    json_integer(deliver_rate.left_out));
	}
	server_audit(rq->srv, ev);
	deliver_rate.left_out = 0;
}
