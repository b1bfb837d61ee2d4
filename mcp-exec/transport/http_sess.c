/*
 * The MCP sessions of the HTTP transport, a table every principal shares:
 * each principal gets a share (server.http.max_sessions_per_principal) so
 * one at its limit leaves room for the others.  A session nobody has made
 * a request in since initialize costs the client one POST: it is the
 * first to go, both when the table or the principal's share is full and
 * after server.http.unused_session_timeout_s.  Trusts the principal
 * names authenticate() gives it.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/http.h>
#include <openssl/crypto.h>

#include "http_int.h"
#include "log.h"
#include "protocol/mcp.h"
#include "util.h"

struct http_sess *
http_sess_new(struct http_tr *tr, const char *principal, int stateless)
{
	struct http_sess	*s = xcalloc(1, sizeof(*s));

	/* Unguessable: the id is all that links a request to a session.
	 * It names this node, for a router (sessions/fleet.h). */
	fleet_handle(tr->srv->conf.fleet.node_id, "", HTTP_SID_BYTES, s->id,
	    sizeof(s->id));
	s->tr = tr;
	s->last_ms = mono_ms();
	TAILQ_INIT(&s->calls);
	s->conn = mcp_conn_new(tr->srv, principal, http_send, s);
	s->stateless = stateless;
	LIST_INSERT_HEAD(&tr->sessions, s, entry);
	if (!stateless)
		tr->nsessions++;
	return s;
}

void
http_sess_settle(struct http_sess *s)
{
	if (s->stateless && s->ncalls == 0 && s->current == NULL)
		http_sess_free(s, 0, NULL);
}

/*
 * Constant time in the id's value: ids cannot be found byte by byte.
 * Their length is no secret (the node part is the node's name).
 */
struct http_sess *
http_sess_find(struct http_tr *tr, const char *id)
{
	struct http_sess	*s, *found = NULL;
	size_t			 len = strlen(id);

	LIST_FOREACH(s, &tr->sessions, entry)
		if (!s->stateless && strlen(s->id) == len &&
		    CRYPTO_memcmp(s->id, id, len) == 0)
			found = s;
	return found;
}

/* Ends an MCP session; its calls finish unanswered (mcp_conn_detach). */
void
http_sess_free(struct http_sess *s, int status, const char *why)
{
	struct http_call	*c;

	while ((c = TAILQ_FIRST(&s->calls)) != NULL)
		http_call_abort(c, status, why);
	LIST_REMOVE(s, entry);
	if (!s->stateless)
		s->tr->nsessions--;
	mcp_conn_detach(s->conn);
	free(s);
}

static unsigned
sess_count(const struct http_tr *tr, const char *principal)
{
	const struct http_sess	*s;
	unsigned		 n = 0;

	LIST_FOREACH(s, &tr->sessions, entry)
		if (!s->stateless && strcmp(s->conn->principal, principal) == 0)
			n++;
	return n;
}

unsigned
http_sess_requests(const struct http_tr *tr, const char *principal)
{
	const struct http_sess	*s;
	unsigned		 n = 0;

	LIST_FOREACH(s, &tr->sessions, entry)
		if (strcmp(s->conn->principal, principal) == 0)
			n += s->ncalls;
	return n;
}

static int
sess_unused(const struct http_sess *s)
{
	return !s->stateless && !s->used && s->ncalls == 0 &&
	    LIST_EMPTY(&s->conn->inflight);
}

/*
 * The unused session to end: the principal's own oldest when principal is
 * set, else the oldest of whichever principal holds the most sessions.
 */
static struct http_sess *
sess_victim(struct http_tr *tr, const char *principal)
{
	struct http_sess	*s, *v = NULL;
	unsigned		 n, vn = 0;

	LIST_FOREACH(s, &tr->sessions, entry) {
		if (!sess_unused(s) || (principal != NULL &&
		    strcmp(s->conn->principal, principal) != 0))
			continue;
		n = principal != NULL ? 0 : sess_count(tr, s->conn->principal);
		if (v == NULL || n > vn || (n == vn && s->last_ms <
		    v->last_ms)) {
			v = s;
			vn = n;
		}
	}
	return v;
}

int
http_sess_admit(struct http_tr *tr, struct evhttp_request *req,
    const char *principal)
{
	const struct server_conf *sc = &tr->srv->conf.server;
	struct http_sess	*v;

	if (sess_count(tr, principal) >= sc->http.max_sessions_per_principal) {
		if ((v = sess_victim(tr, principal)) == NULL) {
			http_reply_error(req, 429, RPC_SERVER_ERROR, "at most "
			    "%u MCP sessions per principal (server.http."
			    "max_sessions_per_principal), all in use: end one "
			    "(DELETE) first", sc->http.max_sessions_per_principal);
			return -1;
		}
		log_info("http: unused MCP session of %s ended to make room "
		    "for another of its own", principal);
		http_sess_free(v, 404, "the MCP session was ended");
	}
	if (tr->nsessions >= sc->http.max_sessions) {
		if ((v = sess_victim(tr, NULL)) == NULL) {
			http_reply_error(req, 503, RPC_SERVER_ERROR, "too many "
			    "MCP sessions (server.http.max_sessions: %u)",
			    sc->http.max_sessions);
			return -1;
		}
		log_info("http: unused MCP session of %s ended to make room "
		    "for one of %s", v->conn->principal, principal);
		http_sess_free(v, 404, "the MCP session was ended");
	}
	return 0;
}

/* Sessions in use go after idle_timeout_s; unused ones much sooner. */
void
http_sess_reap(evutil_socket_t fd, short ev, void *arg)
{
	struct http_tr		*tr = arg;
	struct http_sess	*s, *next;
	uint64_t		 now = mono_ms(), idle, unused;

	idle = tr->srv->conf.server.idle_timeout_s * 1000ULL;
	unused = tr->srv->conf.server.http.unused_timeout_s * 1000ULL;
	for (s = LIST_FIRST(&tr->sessions); s != NULL; s = next) {
		next = LIST_NEXT(s, entry);
		if (s->stateless) {
			http_sess_settle(s);
			continue;
		}
		if (s->ncalls != 0 || now - s->last_ms < (s->used ? idle :
		    unused))
			continue;
		log_info("http: MCP session of %s %s: ended",
		    s->conn->principal, s->used ? "idle" : "never used");
		http_sess_free(s, 0, NULL);
	}
}
