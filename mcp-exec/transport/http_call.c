/*
 * Open HTTP requests of the MCP sessions, and where outgoing messages go:
 * a response to the POST with its JSON-RPC id, a progress notification to
 * the POST whose progressToken it carries, anything else nowhere.  The
 * client may have left meanwhile: what belongs to a gone request is
 * dropped, and evhttp's request is never touched after its connection
 * has handed it back.  One concern with http.c, split for length: the two
 * share http_int.h and call each other.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>

#include "http_int.h"
#include "log.h"
#include "protocol/listen.h"
#include "util.h"

struct http_call *
http_call_new(struct http_sess *s, struct evhttp_request *req,
    const json_t *msg, int sse)
{
	struct http_call	*c = xcalloc(1, sizeof(*c));
	const json_t		*params = json_object_get(msg, "params");
	const json_t		*tok;

	tok = json_object_get(json_object_get(params, "_meta"),
	    "progressToken");
	c->sess = s;
	c->req = req;
	c->id = json_deep_copy(json_object_get(msg, "id"));
	if (json_is_string(tok) || json_is_integer(tok))
		c->token = json_deep_copy(tok);
	c->sse = sse;
	if (sse && (c->early = evbuffer_new()) == NULL)
		fatalx("evbuffer_new");
	TAILQ_INSERT_TAIL(&s->calls, c, entry);
	s->ncalls++;
	return c;
}

void
http_call_free(struct http_call *c)
{
	json_decref(c->id);
	json_decref(c->token);
	if (c->early != NULL)
		evbuffer_free(c->early);
	free(c);
}

/*
 * Unhooks the call from its session and its HTTP connection and returns
 * the request it held, which the caller now answers or frees.
 */
static struct evhttp_request *
call_detach(struct http_call *c)
{
	struct evhttp_request		*req = c->req;
	struct evhttp_connection	*evcon;

	if (req != NULL && (evcon = evhttp_request_get_connection(req)) != NULL)
		evhttp_connection_set_closecb(evcon, NULL, NULL);
	if (!c->done) {
		TAILQ_REMOVE(&c->sess->calls, c, entry);
		c->sess->ncalls--;
	}
	c->req = NULL;
	c->done = 1;
	return req;
}

static void
sse_event(struct evbuffer *b, const json_t *msg)
{
	char	*s;

	/* Compact JSON has no newline: one message is one data line. */
	if ((s = json_dumps(msg, JSON_COMPACT)) == NULL)
		return;
	evbuffer_add_printf(b, "event: message\ndata: %s\n\n", s);
	free(s);
}

static struct bufferevent *
req_bufferevent(struct evhttp_request *req)
{
	return evhttp_connection_get_bufferevent(
	    evhttp_request_get_connection(req));
}

/*
 * The stream may last as long as the call: no read timeout (the client
 * has nothing more to say), but what it sends meanwhile is capped.
 */
static void
stream_start(struct http_call *c)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(c->req);
	struct bufferevent	*bev;
	struct timeval		 tv = { HTTP_TIMEOUT_S, 0 };

	evhttp_add_header(h, "Content-Type", "text/event-stream");
	evhttp_add_header(h, "Cache-Control", "no-cache");
	evhttp_send_reply_start(c->req, 200, NULL);
	bev = req_bufferevent(c->req);
	bufferevent_set_timeouts(bev, NULL, &tv);
	bufferevent_setwatermark(bev, EV_READ, 0, HTTP_STREAM_READ_MAX);
	c->streaming = 1;
	if (evbuffer_get_length(c->early) > 0)
		evhttp_send_reply_chunk(c->req, c->early);
}

static void
stream_end(struct evhttp_request *req)
{
	bufferevent_setwatermark(req_bufferevent(req), EV_READ, 0, 0);
	evhttp_connection_set_timeout(evhttp_request_get_connection(req),
	    HTTP_TIMEOUT_S);
	evhttp_send_reply_end(req);
}

/*
 * A subscriptions/listen stream the client does not read: its
 * notifications would pile up, so it ends (no closing result: the client
 * sees an abrupt end and may listen again) and its listener with it.
 */
static void
call_drop_listener(struct http_call *c)
{
	struct http_sess	*s = c->sess;
	json_t			*id = json_incref(c->id);

	log_warnx("http: a subscriptions/listen stream of %s has more than "
	    "%d bytes unread: closed", s->conn->principal,
	    HTTP_STREAM_BACKLOG_MAX);
	http_call_abort(c, 204, "too slow");
	mcp_cancel(s->conn, id);
	json_decref(id);
	http_sess_settle(s);
}

/* A notification for the call's SSE stream; JSON replies have no room. */
static void
call_push(struct http_call *c, const json_t *msg, int listener)
{
	struct evbuffer	*b;

	if (c->done || !c->sse)
		return;
	if (!c->streaming) {
		if (evbuffer_get_length(c->early) < HTTP_EARLY_MAX)
			sse_event(c->early, msg);
		return;
	}
	/* A client that does not read loses notifications, not our memory;
	 * a listener, whose notifications are all it is for, its stream. */
	if (evbuffer_get_length(bufferevent_get_output(req_bufferevent(
	    c->req))) > HTTP_STREAM_BACKLOG_MAX) {
		if (listener)
			call_drop_listener(c);
		return;
	}
	if ((b = evbuffer_new()) == NULL)
		fatalx("evbuffer_new");
	sse_event(b, msg);
	evhttp_send_reply_chunk(c->req, b);
	evbuffer_free(b);
}

/* The response: the end of the call. */
static void
call_finish(struct http_call *c, const json_t *msg)
{
	struct http_sess	*s = c->sess;
	struct evhttp_request	*req = call_detach(c);
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	struct evbuffer		*b;
	char			*text;
	int			 status = 200;

	if (c->initialize && s->conn->initialized)
		evhttp_add_header(h, "Mcp-Session-Id", s->id);
	/* 2026-07-28 errors have HTTP statuses of their own, and JSON. */
	if (s->stateless && !c->streaming && (status = http_era_status(msg)) !=
	    200) {
		if (c->sse)
			evbuffer_drain(c->early, evbuffer_get_length(c->early));
		c->sse = 0;
	}
	if (c->sse) {
		sse_event(c->early, msg);
		if (c->streaming) {
			evhttp_send_reply_chunk(req, c->early);
			stream_end(req);
		} else {
			/* Answered at once: one SSE body of known length. */
			evhttp_add_header(h, "Content-Type",
			    "text/event-stream");
			evhttp_add_header(h, "Cache-Control", "no-cache");
			evhttp_send_reply(req, 200, NULL, c->early);
		}
	} else if ((text = json_dumps(msg, JSON_COMPACT)) != NULL) {
		if ((b = evbuffer_new()) == NULL)
			fatalx("evbuffer_new");
		evbuffer_add(b, text, strlen(text));
		free(text);
		evhttp_add_header(h, "Content-Type", "application/json");
		evhttp_send_reply(req, status, NULL, b);
		evbuffer_free(b);
	} else
		http_reply_error(req, 500, RPC_INTERNAL_ERROR, "reply not "
		    "encodable");
	if (c != s->current) {
		http_call_free(c);
		http_sess_settle(s);
	}
}

/*
 * The call will get no response over HTTP (its MCP session ended, or the
 * client cancelled it): an open stream just ends; status, when not 0, is
 * the answer to a request still waiting for its JSON; 0 drops the request
 * for evhttp to free.
 */
void
http_call_abort(struct http_call *c, int status, const char *why)
{
	struct evhttp_request	*req = call_detach(c);

	if (req == NULL || status == 0)
		;	/* evhttp frees it with its connection */
	else if (c->streaming)
		stream_end(req);
	else if (status == 204)
		evhttp_send_reply(req, 204, NULL, NULL);
	else
		http_reply_error(req, status, RPC_SERVER_ERROR, "%s", why);
	if (c != c->sess->current)
		http_call_free(c);
}

/*
 * The client's connection closed under an open request.  Not a
 * cancellation: the call runs on and its reply is dropped.  evhttp has
 * detached the request from the dying connection and left it to us.
 */
static void
call_conn_closed(struct evhttp_connection *evcon, void *arg)
{
	struct http_call	*c = arg;
	struct http_sess	*s = c->sess;
	struct evhttp_request	*req = call_detach(c);

	if (req != NULL && evhttp_request_get_connection(req) == NULL)
		evhttp_request_free(req);
	/* 2026-07-28: a closed response stream is the cancellation. */
	if (s->stateless) {
		log_debug("http: connection closed before the reply to a "
		    "request: cancelled");
		mcp_cancel(s->conn, c->id);
	} else
		log_debug("http: connection closed before the reply to a "
		    "request; the call goes on");
	http_call_free(c);
	http_sess_settle(s);
}

void
http_call_wait(struct http_call *c)
{
	evhttp_connection_set_closecb(evhttp_request_get_connection(c->req),
	    call_conn_closed, c);
	if (c->sse)
		stream_start(c);
}

struct http_call *
http_call_by_id(struct http_sess *s, const json_t *id)
{
	struct http_call	*c;

	TAILQ_FOREACH(c, &s->calls, entry)
		if (json_equal(c->id, id))
			return c;
	return NULL;
}

static struct http_call *
call_by_token(struct http_sess *s, const json_t *token)
{
	struct http_call	*c;

	TAILQ_FOREACH(c, &s->calls, entry)
		if (c->token != NULL && json_equal(c->token, token))
			return c;
	return NULL;
}

/* Log messages go with whatever request is open with a stream. */
static struct http_call *
call_for_log(struct http_sess *s)
{
	struct http_call	*c;

	if (s->current != NULL && !s->current->done && s->current->sse)
		return s->current;
	TAILQ_FOREACH(c, &s->calls, entry)
		if (c->sse)
			return c;
	return NULL;
}

/*
 * The mcp_conn's send function: every response and notification of the
 * MCP session comes through here and finds its request, or is dropped.
 */
void
http_send(void *arg, json_t *msg)
{
	struct http_sess	*s = arg;
	struct http_call	*c = NULL;
	const char		*method;
	const json_t		*id, *sub;

	method = json_string_value(json_object_get(msg, "method"));
	/* 2026-07-28: a subscription's notifications go on its stream, the
	 * listen request's (its id is the subscription's). */
	sub = json_object_get(json_object_get(json_object_get(msg, "params"),
	    "_meta"), LISTEN_SUB_ID);
	if (method != NULL && sub != NULL) {
		if ((c = http_call_by_id(s, sub)) != NULL)
			call_push(c, msg, 1);
		goto out;
	}
	if (method != NULL && strcmp(method, "notifications/progress") == 0)
		c = call_by_token(s, json_object_get(json_object_get(msg,
		    "params"), "progressToken"));
	else if (method != NULL && strcmp(method, "notifications/message") == 0)
		c = call_for_log(s);
	if (c != NULL)
		call_push(c, msg, 0);
	if (method != NULL)
		goto out;
	/* An error without an id answers the message being dispatched. */
	id = json_object_get(msg, "id");
	if (id == NULL || json_is_null(id))
		c = s->current != NULL && !s->current->done ? s->current : NULL;
	else
		c = http_call_by_id(s, id);
	if (c != NULL)
		call_finish(c, msg);
	else
		log_debug("http: a reply for a request no longer waiting: "
		    "dropped");
out:
	json_decref(msg);
}

