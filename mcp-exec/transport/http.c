/*
 * Streamable HTTP transport on libevent's evhttp.  Every request is from a
 * client we do not trust: Host and Origin are checked (DNS rebinding), the
 * bearer token before anything else, then the body's size and shape.
 * Outgoing messages are routed to the POST they belong to: responses by
 * JSON-RPC id, progress by token.  A dropped connection is not a
 * cancellation: the call goes on and its late reply is dropped here.
 * GET /metrics (ops/metrics.c) passes the same Host, Origin and token
 * checks.  http_call.c holds the open requests: one concern with this
 * file, split for length (they share http_int.h and call each other).
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/crypto.h>

#include "http.h"
#include "http_head.h"
#include "http_int.h"
#include "log.h"
#include "mtls.h"
#include "oauth.h"
#include "ops/metrics.h"
#include "principals.h"
#include "protocol/mcp.h"
#include "util.h"

#define HTTP_CALLS_MAX		32	/* open requests per MCP session */
#define HTTP_HEADERS_MAX	(HTTP_HEAD_MAX + 512)	/* ours, rewritten */
#define HTTP_SOCK_READ_MAX	(64 * 1024)
#define HTTP_DEFAULT_ADDR	"127.0.0.1"
#define HTTP_METRICS_PATH	"/metrics"
#define HTTP_METRICS_TYPE	"text/plain; version=0.0.4; charset=utf-8"

/* ------------------------------------------------------------ replies */

void
http_reply_json(struct evhttp_request *req, int status, const char *reason,
    json_t *body)
{
	struct evbuffer	*b = evbuffer_new();
	char		*s;

	if (b == NULL)
		fatalx("evbuffer_new");
	if (body != NULL && (s = json_dumps(body, JSON_COMPACT)) != NULL) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Content-Type", "application/json");
		evbuffer_add(b, s, strlen(s));
		free(s);
	}
	json_decref(body);
	evhttp_send_reply(req, status, reason, b);
	evbuffer_free(b);
}

/* An HTTP-level refusal, with a JSON-RPC error body (id null). */
void
http_reply_error(struct evhttp_request *req, int status, int code,
    const char *fmt, ...)
{
	char	 text[256];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	str_ascii(text);
	log_debug("http: %d: %s", status, text);
	http_reply_json(req, status, status == 429 ? "Too Many Requests" : NULL,
	    json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
	    "error", "code", code, "message", text));
}

/* ------------------------------------------------------------ headers */

/* The header's only value: 0 absent (NULL), 1 found, -1 repeated. */
int
http_header_one(struct evhttp_request *req, const char *name, const char **out)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct evkeyval		*kv;

	*out = NULL;
	TAILQ_FOREACH(kv, h, next) {
		if (evutil_ascii_strcasecmp(kv->key, name) != 0)
			continue;
		if (*out != NULL)
			return -1;
		*out = kv->value;
	}
	return *out != NULL;
}

/* Whether a comma-separated list of media types names type. */
static int
media_listed(const char *list, const char *type)
{
	size_t	 tlen = strlen(type), n;

	while (list != NULL && *list != '\0') {
		list += strspn(list, " \t,");
		n = strcspn(list, ",; \t");
		if (n == tlen && evutil_ascii_strncasecmp(list, type, n) == 0)
			return 1;
		list = strchr(list, ',');
	}
	return 0;
}

static int
host_allowed(const struct http_tr *tr, const char *host, const char *prefix)
{
	size_t	 i, plen = strlen(prefix);

	if (evutil_ascii_strncasecmp(host, prefix, plen) != 0)
		return 0;
	for (i = 0; i < tr->nhosts; i++)
		if (evutil_ascii_strcasecmp(host + plen, tr->hosts[i]) == 0)
			return 1;
	return 0;
}

/* Letters, digits and the punctuation of host names and IP literals. */
static int
host_syntax_ok(const char *s)
{
	size_t	 n = strlen(s);

	return n > 0 && n < HTTP_HOST_LEN && strspn(s, "abcdefghijklmnopqrstuv"
	    "wxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") == n;
}

/*
 * DNS rebinding: a page from elsewhere that resolves its own name to
 * 127.0.0.1 still sends its own Host and Origin.  Sets host to what the
 * client called us (for the metadata URL); -1 after replying 403 or 400.
 */
static int
check_host_origin(struct http_tr *tr, struct evhttp_request *req,
    const char **host)
{
	const struct server_conf *sc = &tr->srv->conf.server;
	const char	*origin;
	unsigned	 i;

	if (http_header_one(req, "Host", host) == -1 ||
	    http_header_one(req, "Origin", &origin) == -1) {
		http_reply_error(req, 400, RPC_SERVER_ERROR, "Host and Origin "
		    "may appear once");
		return -1;
	}
	if (tr->loopback && (*host == NULL || !host_allowed(tr, *host, ""))) {
		http_reply_error(req, 403, RPC_SERVER_ERROR, "Host %.64s is "
		    "not this server", *host ? *host : "(none)");
		return -1;
	}
	if (*host == NULL || !host_syntax_ok(*host))
		*host = tr->hosts[0];
	if (origin == NULL || host_allowed(tr, origin, tr->srv->http_tls == 2 ?
	    "https://" : "http://"))
		return 0;
	for (i = 0; i < sc->norigins; i++)
		if (evutil_ascii_strcasecmp(origin,
		    sc->allowed_origins[i]) == 0)
			return 0;
	http_reply_error(req, 403, RPC_SERVER_ERROR, "Origin %.64s is not "
	    "allowed", origin);
	return -1;
}

/* Prometheus's text format; the caller passed the same checks as /mcp. */
static void
handle_metrics(struct http_tr *tr, struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	struct evbuffer		*b;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
		evhttp_add_header(h, "Allow", "GET");
		http_reply_error(req, 405, RPC_SERVER_ERROR, "GET only");
		return;
	}
	if ((b = evbuffer_new()) == NULL)
		fatalx("evbuffer_new");
	metrics_render(tr->srv, b);
	evhttp_add_header(h, "Content-Type", HTTP_METRICS_TYPE);
	evhttp_add_header(h, "Cache-Control", "no-store");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

/* ------------------------------------------------------------ /mcp */

/*
 * Finds the request's MCP session; NULL after replying: 400 without an
 * id, 404 for one we do not know (the client starts over), 403 for a
 * token of another principal, 400 for a protocol revision we lack.
 */
static struct http_sess *
session_of(struct http_tr *tr, struct evhttp_request *req,
    const char *principal)
{
	struct http_sess	*s;
	const char		*sid, *ver;
	char			 node[FLEET_NODE_MAX];

	if (http_header_one(req, "Mcp-Session-Id", &sid) != 1) {
		http_reply_error(req, 400, RPC_SERVER_ERROR, "one "
		    "Mcp-Session-Id header is required (initialize first)");
		return NULL;
	}
	if ((s = http_sess_find(tr, sid)) == NULL && fleet_foreign(
	    tr->srv->conf.fleet.node_id, sid, node)) {
		/* 404 too: the client starts over, through the router. */
		http_reply_error(req, 404, FLEET_ERR_WRONG_NODE,
		    FLEET_WRONG_NODE_FMT, node,
		    FLEET_SELF(tr->srv->conf.fleet.node_id));
		return NULL;
	}
	if (s == NULL) {
		http_reply_error(req, 404, RPC_SERVER_ERROR, "unknown, expired "
		    "or ended MCP session: initialize again");
		return NULL;
	}
	/* The principal is fixed when the session starts. */
	if (strcmp(s->conn->principal, principal) != 0) {
		http_refusal(tr, http_peer(req), principal,
		    "credentials of another principal than the MCP session's",
		    NULL);
		http_reply_error(req, 403, RPC_SERVER_ERROR, "this MCP session "
		    "belongs to another principal");
		return NULL;
	}
	if (http_header_one(req, "MCP-Protocol-Version", &ver) == -1)
		ver = "";
	if (ver == NULL)
		ver = MCP_HTTP_DEFAULT_VERSION;
	if (http_version_legacy(ver))
		return s;
	http_reply_error(req, 400, RPC_SERVER_ERROR, "unsupported "
	    "MCP-Protocol-Version %.32s", ver);
	return NULL;
}

/* Whether the MCP core still runs a call with this id. */
static int
inflight_has(const struct mcp_conn *conn, const json_t *id, int cancelled)
{
	const struct inflight	*f;

	LIST_FOREACH(f, &conn->inflight, entry)
		if (json_equal(f->id, id) && (!cancelled || f->rq.cancelled))
			return 1;
	return 0;
}

void
http_post_request(struct http_sess *s, struct evhttp_request *req,
    const json_t *msg, const char *body, size_t len, int sse)
{
	const struct server_conf *sc = &s->tr->srv->conf.server;
	const json_t		*id = json_object_get(msg, "id");
	struct http_call	*c;
	int			 initialize;

	initialize = strcmp(json_string_value(json_object_get(msg, "method")),
	    "initialize") == 0;

	if (s->ncalls >= HTTP_CALLS_MAX) {
		http_reply_error(req, 429, RPC_SERVER_ERROR, "at most %d open "
		    "requests per MCP session", HTTP_CALLS_MAX);
		return;
	}
	/* The open requests of all principals are one table: a share each. */
	if (http_sess_requests(s->tr, s->conn->principal) >=
	    sc->http.max_requests_per_principal) {
		http_reply_error(req, 429, RPC_SERVER_ERROR, "at most %u open "
		    "requests per principal (server.http."
		    "max_requests_per_principal)",
		    sc->http.max_requests_per_principal);
		return;
	}
	/* Replies are routed by id: two open requests may not share one. */
	if (http_call_by_id(s, id) != NULL || inflight_has(s->conn, id, 0)) {
		http_reply_error(req, 400, RPC_INVALID_REQUEST, "request id "
		    "already in use in this MCP session");
		return;
	}
	/* Its reply is a stream that stays open: JSON has no room for it. */
	if (!sse && strcmp(json_string_value(json_object_get(msg, "method")),
	    "subscriptions/listen") == 0) {
		http_reply_error(req, 406, RPC_SERVER_ERROR, "subscriptions/"
		    "listen answers with an SSE stream: Accept must list "
		    "text/event-stream");
		return;
	}
	c = http_call_new(s, req, msg, sse);
	c->initialize = initialize;
	s->current = c;
	mcp_receive(s->conn, body, len);
	s->current = NULL;
	if (c->done) {
		http_call_free(c);
		return;
	}
	/* Not answered yet: wait, and hear about the client leaving. */
	http_call_wait(c);
}

/*
 * Whether to send the request to the node whose handle it names (node):
 * with fleet.peer, not a request another node sent us, and only for a
 * caller with an Authorization of its own, which the owner checks anew
 * (a client certificate ends at this node's TLS): 1.  A caller without
 * one gets -31003, saying so: -1 after replying.  0: the request goes on
 * here.
 */
static int
forward_to(struct http_tr *tr, struct evhttp_request *req,
    const struct http_auth *a, const json_t *msg, char node[FLEET_NODE_MAX])
{
	const char	*method = json_string_value(json_object_get(msg,
			    "method")), *v;
	char		 text[2 * FLEET_NODE_MAX + sizeof(FLEET_UNFORWARDED_FMT)];

	if (tr->peer_http == NULL || a->client.forwarded_by[0] != '\0' ||
	    (method != NULL && strcmp(method, "initialize") == 0) ||
	    !http_fleet_owner(tr, req, msg, node))
		return 0;
	if (http_header_one(req, "Authorization", &v) == 1)
		return 1;
	snprintf(text, sizeof(text), FLEET_UNFORWARDED_FMT, node,
	    tr->srv->conf.fleet.node_id);
	http_reply_json(req, 200, NULL, json_pack("{s:s, s:O?, s:{s:i, s:s, "
	    "s:o}}", "jsonrpc", "2.0", "id", json_object_get(msg, "id"),
	    "error", "code", FLEET_ERR_WRONG_NODE, "message", text, "data",
	    fleet_error_data(FLEET_WRONG_NODE, node, NULL)));
	return -1;
}

static void
handle_post(struct http_tr *tr, struct evhttp_request *req,
    const struct http_auth *a)
{
	const char		*principal = a->principal;
	struct evbuffer		*in = evhttp_request_get_input_buffer(req);
	struct http_sess	*s;
	struct http_call	*c;
	size_t			 len = evbuffer_get_length(in);
	size_t			 max = tr->srv->conf.server.max_message_bytes;
	const char		*accept, *ctype, *method, *body, *sid;
	json_t			*msg, *id;
	json_error_t		 je;
	char			 node[FLEET_NODE_MAX];
	int			 sse, fwd;

	if (http_header_one(req, "Accept", &accept) == -1 || accept == NULL ||
	    (!media_listed(accept, "application/json") &&
	    !media_listed(accept, "text/event-stream"))) {
		http_reply_error(req, 406, RPC_SERVER_ERROR, "Accept must list "
		    "application/json or text/event-stream");
		return;
	}
	sse = media_listed(accept, "text/event-stream");
	if (http_header_one(req, "Content-Type", &ctype) == -1 ||
	    (ctype != NULL && !media_listed(ctype, "application/json"))) {
		http_reply_error(req, 415, RPC_SERVER_ERROR, "Content-Type "
		    "must be application/json");
		return;
	}
	if (len > max) {
		http_reply_error(req, 413, RPC_INVALID_REQUEST, "message "
		    "larger than %zu bytes", max);
		return;
	}
	body = (const char *)evbuffer_pullup(in, -1);
	if (len == 0 || body == NULL) {
		http_reply_error(req, 400, RPC_PARSE_ERROR, "no message");
		return;
	}
	if ((msg = json_loadb(body, len, JSON_REJECT_DUPLICATES,
	    &je)) == NULL) {
		http_reply_error(req, 400, RPC_PARSE_ERROR, "parse error at "
		    "byte %d: %s", je.position, je.text);
		return;
	}
	method = json_string_value(json_object_get(msg, "method"));
	id = json_object_get(msg, "id");
	if (!json_is_object(msg) || (method != NULL && id != NULL &&
	    !json_is_string(id) && !json_is_integer(id)) || (method == NULL &&
	    json_object_get(msg, "result") == NULL &&
	    json_object_get(msg, "error") == NULL)) {
		http_reply_error(req, 400, RPC_INVALID_REQUEST, "one JSON-RPC "
		    "message (an object; batches are not supported)");
		goto out;
	}
	/* Another node's handle: that node answers, through us (once). */
	if ((fwd = forward_to(tr, req, a, msg, node)) == -1 || (fwd == 1 &&
	    http_peer_forward(tr, req, a, node, msg, body, len) == 0))
		goto out;
	/* 2026-07-28: no MCP session, each request on its own. */
	if (http_era_modern(req, msg)) {
		http_era_post(tr, req, a, msg, body, len, sse);
		goto out;
	}
	if (method != NULL && id != NULL && strcmp(method, "initialize") == 0) {
		if (http_header_one(req, "Mcp-Session-Id", &sid) != 0) {
			http_reply_error(req, 400, RPC_INVALID_REQUEST,
			    "initialize starts a new MCP session: send it "
			    "without Mcp-Session-Id");
			goto out;
		}
		/* A new MCP session belongs on a node that stays. */
		if (tr->srv->draining) {
			http_reply_draining(tr, req);
			goto out;
		}
		if (http_sess_admit(tr, req, principal) == -1)
			goto out;
		s = http_sess_new(tr, principal, 0);
		http_auth_session(tr, req, a, &s->conn->client);
		http_post_request(s, req, msg, body, len, sse);
		/* A refused initialize leaves no session behind. */
		if (!s->conn->initialized)
			http_sess_free(s, 0, NULL);
		goto out;
	}
	/* This node's sandbox, task or artifact, asked for inside another
	 * node's MCP session: a router sent it here by that handle. */
	if (http_fleet_visitor(tr, req, msg)) {
		http_fleet_visit(tr, req, a, msg, body, len, sse);
		goto out;
	}
	if ((s = session_of(tr, req, principal)) == NULL)
		goto out;
	if (http_era_named(msg) ? http_era_check(req, msg) == -1 :
	    http_param_check(req, msg, 0) == -1)
		goto out;
	s->last_ms = mono_ms();
	if (method != NULL && id != NULL) {
		s->used = 1;
		http_post_request(s, req, msg, body, len, sse);
		goto out;
	}
	/* A notification or a response: accepted, nothing to send back. */
	mcp_receive(s->conn, body, len);
	if (method != NULL && strcmp(method, "notifications/cancelled") == 0) {
		id = json_object_get(json_object_get(msg, "params"),
		    "requestId");
		/* The core answers a cancelled call with nothing. */
		if (id != NULL && (c = http_call_by_id(s, id)) != NULL &&
		    (inflight_has(s->conn, id, 1) || !inflight_has(s->conn, id,
		    0)))
			http_call_abort(c, 204, NULL);
	}
	evhttp_send_reply(req, 202, NULL, NULL);
out:
	json_decref(msg);
}

static void
handle_mcp(struct http_tr *tr, struct evhttp_request *req,
    const struct http_auth *a)
{
	const char		*principal = a->principal;
	struct http_sess	*s;

	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_POST:
		handle_post(tr, req, a);
		break;
	case EVHTTP_REQ_DELETE:
		if ((s = session_of(tr, req, principal)) == NULL)
			break;
		log_info("http: MCP session of %s ended by the client",
		    principal);
		http_sess_free(s, 404, "the MCP session was ended");
		evhttp_send_reply(req, 200, NULL, NULL);
		break;
	default:
		/* No server-initiated messages outside requests: no GET. */
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "POST, DELETE");
		http_reply_error(req, 405, RPC_SERVER_ERROR, "POST or DELETE");
		break;
	}
}

/*
 * The request http_head.c put in place of a refused head: only the filter
 * writes this header.  Answered in its turn, then the connection closes.
 */
static int
head_refused(struct evhttp_request *req)
{
	const char	*v;
	char		*end;
	long		 status;

	if (http_header_one(req, HTTP_HEAD_REFUSAL, &v) == 0)
		return 0;
	status = v != NULL ? strtol(v, &end, 10) : 0;
	if (status < 400 || status > 599 || *end != ' ') {
		status = 400;
		end = (char *)"  bad request";
	}
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Connection", "close");
	http_reply_error(req, (int)status, RPC_SERVER_ERROR, "%s", end + 1);
	return 1;
}

void
http_request_cb(struct evhttp_request *req, void *arg)
{
	struct http_tr		*tr = arg;
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	const char		*path = uri ? evhttp_uri_get_path(uri) : NULL;
	const char		*host, *v;
	struct http_auth	 a;
	char			 from[FLEET_NODE_MAX] = "";

	if (http_peer_listener(tr, req)) {
		/* Another node, as its certificate proves: no browser
		 * here, and only /mcp. */
		if (http_peer_admit(tr, req, from) == -1)
			return;
		host = tr->hosts[0];
		path = path != NULL && strcmp(path, HTTP_PATH) == 0 ? path :
		    "";
	} else if (head_refused(req) || check_host_origin(tr, req,
	    &host) == -1)
		return;
	else if (http_header_one(req, HTTP_FORWARDED_BY, &v) != 0) {
		/* Only the peer listener, where a certificate vouches. */
		http_reply_error(req, 400, RPC_SERVER_ERROR, HTTP_FORWARDED_BY
		    " is for the fleet's peer listener (fleet.peer.listen)");
		return;
	}
	if (path != NULL && (strcmp(path, HTTP_METADATA_PATH) == 0 ||
	    strcmp(path, HTTP_METADATA_PATH HTTP_PATH) == 0)) {
		http_handle_metadata(tr, req);
		return;
	}
	if (path != NULL && strcmp(path, HTTP_METRICS_PATH) == 0) {
		/* Any principal's token will do: the metrics name none. */
		if (http_authenticate(tr, req, host, &a) == 0)
			handle_metrics(tr, req);
		return;
	}
	if (path == NULL || strcmp(path, HTTP_PATH) != 0) {
		http_reply_error(req, 404, RPC_SERVER_ERROR, "the MCP endpoint "
		    "is %s", HTTP_PATH);
		return;
	}
	if (http_authenticate(tr, req, host, &a) == 0) {
		snprintf(a.client.forwarded_by, sizeof(a.client.forwarded_by),
		    "%s", from);
		handle_mcp(tr, req, &a);
	}
	explicit_bzero(&a, sizeof(a));
}

/* ------------------------------------------------------------ setup */

/*
 * Each connection's bytes pass http_head.c's filter before evhttp's
 * parser.  Past max_connections a connection gets 503 to its first
 * request: the connections, before any token is seen, are one table.
 */
static struct bufferevent *
http_bev_new(struct event_base *base, void *arg)
{
	struct http_tr		*tr = arg;
	const struct server_conf *sc = &tr->srv->conf.server;
	struct bufferevent	*sock, *bev;
	struct http_head	*hh;
	SSL			*ssl;

	if (tr->srv->http_tls == 2) {
		/* The rules' context of now: a reload swaps it for new ones. */
		if ((ssl = SSL_new(principals_mtls(tr->srv->principals)->
		    ctx)) == NULL)
			fatalx("SSL_new");
		http_auth_ssl(tr, ssl);
		sock = bufferevent_openssl_socket_new(base, -1, ssl,
		    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	} else
		sock = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (sock == NULL)
		fatalx("bufferevent_socket_new");
	/* The filter takes at most a head, or a step of a body, at once. */
	bufferevent_setwatermark(sock, EV_READ, 0, HTTP_SOCK_READ_MAX);
	if (tr->conns->n >= sc->http.max_connections)
		hh = http_head_new(503, "too many connections (server.http."
		    "max_connections)", tr->conns);
	else
		hh = http_head_new(0, NULL, tr->conns);
	if ((bev = bufferevent_filter_new(sock, http_head_filter,
	    http_head_output, BEV_OPT_CLOSE_ON_FREE, http_head_free,
	    hh)) == NULL)
		fatalx("bufferevent_filter_new");
	http_head_attach(hh, bev, sock);
	return bev;
}

/* ADDR:PORT, [ADDR6]:PORT or PORT; addresses are literals. */
static int
parse_listen(struct http_tr *tr, const char *arg)
{
	struct in6_addr	 a6;
	struct in_addr	 a4;
	const char	*colon, *port = arg;
	uint64_t	 p;
	size_t		 alen;

	snprintf(tr->addr, sizeof(tr->addr), "%s", HTTP_DEFAULT_ADDR);
	if ((colon = strrchr(arg, ':')) != NULL) {
		port = colon + 1;
		alen = (size_t)(colon - arg);
		if (arg[0] == '[' && alen >= 2 && arg[alen - 1] == ']') {
			arg++;
			alen -= 2;
		}
		if (alen == 0 || alen >= sizeof(tr->addr))
			return -1;
		memcpy(tr->addr, arg, alen);
		tr->addr[alen] = '\0';
		if (strcmp(tr->addr, "localhost") == 0)
			snprintf(tr->addr, sizeof(tr->addr), "%s",
			    HTTP_DEFAULT_ADDR);
	}
	if (parse_u64(port, 0, 65535, &p) == -1)
		return -1;
	tr->port = (unsigned)p;
	if (inet_pton(AF_INET, tr->addr, &a4) == 1) {
		tr->loopback = (ntohl(a4.s_addr) >> 24) == 127;
		return 0;
	}
	if (inet_pton(AF_INET6, tr->addr, &a6) == 1) {
		tr->loopback = IN6_IS_ADDR_LOOPBACK(&a6) ||
		    (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
		return 0;
	}
	return -1;
}

/* The names a client may call us by: Host values, and Origins after http://. */
static void
names_init(struct http_tr *tr)
{
	int	 v6 = strchr(tr->addr, ':') != NULL;

	tr->nhosts = 0;
	snprintf(tr->hosts[tr->nhosts++], HTTP_HOST_LEN, "%s%s%s:%u",
	    v6 ? "[" : "", tr->addr, v6 ? "]" : "", tr->port);
	if (!tr->loopback)
		return;
	snprintf(tr->hosts[tr->nhosts++], HTTP_HOST_LEN, "127.0.0.1:%u",
	    tr->port);
	snprintf(tr->hosts[tr->nhosts++], HTTP_HOST_LEN, "localhost:%u",
	    tr->port);
	snprintf(tr->hosts[tr->nhosts++], HTTP_HOST_LEN, "[::1]:%u", tr->port);
	if (tr->port == 80) {
		/* The default port may go unsaid. */
		snprintf(tr->hosts[tr->nhosts++], HTTP_HOST_LEN, "127.0.0.1");
		snprintf(tr->hosts[tr->nhosts++], HTTP_HOST_LEN, "localhost");
		snprintf(tr->hosts[tr->nhosts++], HTTP_HOST_LEN, "[::1]");
	}
}

struct http_tr *
transport_http_new(struct server *srv, const char *listen)
{
	struct http_tr	*tr = xcalloc(1, sizeof(*tr));

	tr->srv = srv;
	LIST_INIT(&tr->sessions);
	LIST_INIT(&tr->forwards);
	tr->conns = xcalloc(1, sizeof(*tr->conns));
	TAILQ_INIT(&tr->parked);
	if (parse_listen(tr, listen) == -1) {
		fprintf(stderr, "mcp-exec: --http %s: expected ADDR:PORT, "
		    "[ADDR6]:PORT or PORT, with a numeric address\n", listen);
		goto fail;
	}
	/* Without tokens, whoever reaches the port would run code as us;
	 * a reload may not take the last token away either. */
	srv->tokens_required = !tr->loopback;
	srv->http_tls = principals_mtls(srv->principals)->enabled ? 2 : 1;
	if (!tr->loopback && !principals_auth_required(srv->principals)) {
		fprintf(stderr, "mcp-exec: --http %s is not a loopback "
		    "address and %s/%s lists no bearer tokens, issuers or "
		    "mtls: anyone who can "
		    "reach the port could run code. Add tokens, or listen on "
		    "127.0.0.1.\n", listen, srv->opts.rules_dir, PRINCIPALS_FILE);
		goto fail;
	}
	return tr;
fail:
	transport_http_free(tr);
	return NULL;
}

int
transport_http_start(struct http_tr *tr)
{
	struct server			*srv = tr->srv;
	struct evhttp_bound_socket	*bound;
	struct sockaddr_storage		 ss;
	socklen_t			 sslen = sizeof(ss);
	struct timeval			 tv;
	int				 one = 1;

	if ((tr->http = evhttp_new(srv->base)) == NULL)
		fatalx("evhttp_new");
	http_auth_start(tr);
	/* Every method reaches us, so that the unknown ones get 405. */
	evhttp_set_allowed_methods(tr->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT |
	    EVHTTP_REQ_PATCH);
	evhttp_set_max_body_size(tr->http,
	    (ev_ssize_t)srv->conf.server.max_message_bytes);
	evhttp_set_max_headers_size(tr->http, HTTP_HEADERS_MAX);
	evhttp_set_timeout(tr->http, HTTP_TIMEOUT_S);
	evhttp_set_gencb(tr->http, http_request_cb, tr);
	evhttp_set_bevcb(tr->http, http_bev_new, tr);
	if ((bound = evhttp_bind_socket_with_handle(tr->http, tr->addr,
	    (ev_uint16_t)tr->port)) == NULL) {
		log_warn("--http: cannot listen on %s port %u", tr->addr,
		    tr->port);
		return -1;
	}
	/* A reply leaves in several writes (head, chunk size, data, end):
	 * under Nagle's algorithm each after the first waits for the
	 * client's delayed ACK, 40 ms a call on a kept-alive connection.
	 * Accepted sockets inherit the option from the listener. */
	if (setsockopt(evhttp_bound_socket_get_fd(bound), IPPROTO_TCP,
	    TCP_NODELAY, &one, sizeof(one)) == -1)
		log_warn("--http: TCP_NODELAY");
	if (getsockname(evhttp_bound_socket_get_fd(bound),
	    (struct sockaddr *)&ss, &sslen) == 0)
		tr->port = ntohs(ss.ss_family == AF_INET6 ?
		    ((struct sockaddr_in6 *)&ss)->sin6_port :
		    ((struct sockaddr_in *)&ss)->sin_port);
	names_init(tr);
	if (http_peer_start(tr) == -1)
		return -1;
	tr->reaper = event_new(srv->base, -1, EV_PERSIST, http_sess_reap, tr);
	tv.tv_sec = srv->conf.server.reap_interval_s;
	tv.tv_usec = 0;
	event_add(tr->reaper, &tv);
	log_info("MCP over HTTP on %s://%s%s (%zu bearer token%s, %zu "
	    "issuer%s%s)", srv->http_tls == 2 ? "https" : "http",
	    tr->hosts[0], HTTP_PATH, principals_count(tr->srv->principals),
	    principals_count(tr->srv->principals) == 1 ? "" : "s",
	    principals_issuers(tr->srv->principals)->n,
	    principals_issuers(tr->srv->principals)->n == 1 ? "" : "s",
	    principals_auth_required(tr->srv->principals) ? "" : ": every "
	    "client is the local principal");
	return 0;
}

void
transport_http_free(struct http_tr *tr)
{
	struct http_sess	*s;

	if (tr == NULL)
		return;
	/* Requests still open go with their connections, in evhttp_free. */
	while ((s = LIST_FIRST(&tr->sessions)) != NULL)
		http_sess_free(s, 0, NULL);
	http_auth_stop(tr);
	if (tr->http != NULL)
		evhttp_free(tr->http);
	/* After the callers' connections, whose ends free forwards. */
	http_peer_stop(tr);
	if (tr->reaper != NULL)
		event_free(tr->reaper);
	http_live_orphan(tr->conns);
	free(tr);
}
