/*
 * Node to node (fleet.peer): a request naming another node's handle is
 * sent on to that node over TLS, both ends proving with a certificate of
 * the fleet's CA that they are the node they say; and the listener for
 * what other nodes send on.  The caller's own Authorization goes along
 * and the owner checks it as for any request: a node vouches only for
 * having forwarded a request, never for who sent it.  Stockade-
 * Forwarded-By is trusted only when the peer's certificate names it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "http_head.h"
#include "http_int.h"
#include "log.h"
#include "principals.h"
#include "util.h"

#define PEER_FORWARDS_MAX	64	/* forwarded requests open at once */
#define PEER_CONNECT_S		5	/* to connect and shake hands */
/* A forwarded call may run as long as the owner lets it: its own limits
 * (timeouts, the drain) end it, this only a silent peer. */
#define PEER_IDLE_S		3600
#define PEER_HOST_MAX		256
#define PEER_PATH_MAX		256
#define PEER_HEADERS_MAX	(HTTP_HEAD_MAX + 512)
#define PEER_PARAM_PREFIX	"Mcp-Param-"
#define PEER_NODE_VAR		"{node}"	/* in fleet.peer.url */
#define PEER_PORT_DEFAULT	443

/* What the owner needs of the caller's request (Host is set anew). */
static const char *const peer_headers[] = { "Authorization", "Accept",
    "Content-Type", "MCP-Protocol-Version", "Mcp-Session-Id",
    "Mcp-Name", "Mcp-Method", NULL };
/* What the caller needs of the owner's reply. */
static const char *const reply_headers[] = { "Content-Type",
    "Mcp-Session-Id", "WWW-Authenticate", "Retry-After", NULL };

/* One forwarded request: the caller's (in) and the owner's (out). */
struct peer_fwd {
	LIST_ENTRY(peer_fwd)		 entry;	/* the transport's forwards */
	struct http_tr			*tr;
	char				 principal[PRINCIPAL_MAX];
	struct evhttp_request		*in;	/* NULL once answered or gone */
	json_t				*id;	/* the caller's JSON-RPC id */
	struct evhttp_connection	*evcon;	/* to the owner */
	/* The handshake's deadline, then (finished) the moment to free. */
	struct event			*deadline;
	SSL				*ssl;	/* the bufferevent's */
	char				 node[FLEET_NODE_MAX];
	int				 started;	/* the reply's head sent */
	int				 failed;	/* why logged already */
	int				 finished;	/* the owner's reply is over */
};

/* ------------------------------------------------------------ listener */

int
http_peer_listener(struct http_tr *tr, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);

	return tr->peer_http != NULL && evcon != NULL &&
	    evhttp_connection_get_server(evcon) == tr->peer_http;
}

int
http_peer_admit(struct http_tr *tr, struct evhttp_request *req,
    char from[FLEET_NODE_MAX])
{
	struct bufferevent	*bev;
	SSL			*ssl;
	X509			*cert = NULL;
	const char		*name, *auth;
	const char		*self = tr->srv->conf.fleet.node_id;

	bev = evhttp_connection_get_bufferevent(
	    evhttp_request_get_connection(req));
	if (bev != NULL && (ssl = bufferevent_openssl_get_ssl(bev)) != NULL &&
	    SSL_get_verify_result(ssl) == X509_V_OK)
		cert = SSL_get0_peer_certificate(ssl);
	if (http_header_one(req, HTTP_FORWARDED_BY, &name) != 1 ||
	    !fleet_node_ok(name) || strcmp(name, self) == 0 || cert == NULL ||
	    X509_check_host(cert, name, strlen(name),
	    X509_CHECK_FLAG_NO_WILDCARDS, NULL) != 1) {
		http_refusal(tr, http_peer(req), "anonymous", "peer listener: "
		    "no " HTTP_FORWARDED_BY " that its certificate names",
		    NULL);
		http_reply_error(req, 403, RPC_SERVER_ERROR, "a forwarded "
		    "request needs one " HTTP_FORWARDED_BY " naming a node "
		    "that the connection's certificate names");
		return -1;
	}
	/* The caller's own credentials, never the node's certificate. */
	if (http_header_one(req, "Authorization", &auth) != 1) {
		http_reply_error(req, 401, RPC_SERVER_ERROR, "a forwarded "
		    "request carries its caller's Authorization");
		return -1;
	}
	snprintf(from, FLEET_NODE_MAX, "%s", name);
	return 0;
}

static struct bufferevent *
peer_bev_new(struct event_base *base, void *arg)
{
	struct http_tr		*tr = arg;
	struct bufferevent	*bev;
	SSL			*ssl;

	if ((ssl = SSL_new(tr->peer_ctx)) == NULL)
		fatalx("SSL_new");
	/* Only nodes of the fleet: no certificate, no handshake. */
	SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
	    NULL);
	if ((bev = bufferevent_openssl_socket_new(base, -1, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE)) == NULL)
		fatalx("bufferevent_openssl_socket_new");
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

/* One context both ways: the CA checks peers, the cert is ours. */
static SSL_CTX *
peer_ctx_new(const struct fleet_peer *p)
{
	SSL_CTX	*ctx;

	if ((ctx = SSL_CTX_new(TLS_method())) == NULL)
		return NULL;
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_load_verify_locations(ctx, p->ca, NULL) != 1 ||
	    SSL_CTX_use_certificate_chain_file(ctx, p->cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, p->key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

int
http_peer_start(struct http_tr *tr)
{
	struct server		*srv = tr->srv;
	const struct fleet_peer	*p = &srv->conf.fleet.peer;
	char			 addr[sizeof(p->listen)], *colon;
	uint64_t		 port;

	if (p->listen[0] == '\0')
		return 0;
	if (srv->conf.fleet.node_id[0] == '\0') {
		log_warnx("fleet.peer: needs a node id (fleet.node_id or "
		    "--node-id): other nodes know this one by it");
		return -1;
	}
	/* Forwarded callers are whom their own tokens say; with none, each
	 * would be the local principal.  A reload keeps a token too. */
	if (!principals_auth_required(srv->principals)) {
		log_warnx("fleet.peer: principals.yaml lists no bearer tokens "
		    "or issuers, by which forwarded callers are known");
		return -1;
	}
	srv->tokens_required = 1;
	if ((tr->peer_ctx = peer_ctx_new(p)) == NULL) {
		log_warnx("fleet.peer: cannot use ca %s, cert %s and key %s",
		    p->ca, p->cert, p->key);
		return -1;
	}
	/* Owners' names resolve beside the loop, never blocking it. */
	if ((tr->dns = evdns_base_new(srv->base,
	    EVDNS_BASE_INITIALIZE_NAMESERVERS)) == NULL &&
	    (tr->dns = evdns_base_new(srv->base, 0)) == NULL)
		fatalx("evdns_base_new");
	snprintf(addr, sizeof(addr), "%s", p->listen);
	colon = strrchr(addr, ':');
	*colon = '\0';
	if (parse_u64(colon + 1, 0, 65535, &port) == -1)
		return -1;
	/* [ADDR6]:PORT */
	if (addr[0] == '[' && colon[-1] == ']') {
		colon[-1] = '\0';
		memmove(addr, addr + 1, strlen(addr));
	}
	if ((tr->peer_http = evhttp_new(srv->base)) == NULL)
		fatalx("evhttp_new");
	evhttp_set_allowed_methods(tr->peer_http, EVHTTP_REQ_POST);
	evhttp_set_max_body_size(tr->peer_http,
	    (ev_ssize_t)srv->conf.server.max_message_bytes);
	evhttp_set_max_headers_size(tr->peer_http, PEER_HEADERS_MAX);
	evhttp_set_timeout(tr->peer_http, HTTP_TIMEOUT_S);
	evhttp_set_gencb(tr->peer_http, http_request_cb, tr);
	evhttp_set_bevcb(tr->peer_http, peer_bev_new, tr);
	if (evhttp_bind_socket(tr->peer_http, addr, (ev_uint16_t)port) != 0) {
		log_warn("fleet.peer: cannot listen on %s", p->listen);
		return -1;
	}
	log_info("fleet: node %s takes forwarded requests on %s", srv->conf.
	    fleet.node_id, p->listen);
	return 0;
}

/* ------------------------------------------------------------ forwarder */

/* The caller's request is answered, or about to be: stop watching. */
static struct evhttp_request *
fwd_unhook(struct peer_fwd *f)
{
	struct evhttp_request		*in = f->in;
	struct evhttp_connection	*evcon;

	if (in != NULL && (evcon = evhttp_request_get_connection(in)) != NULL)
		evhttp_connection_set_closecb(evcon, NULL, NULL);
	f->in = NULL;
	return in;
}

static void
fwd_free(struct peer_fwd *f)
{
	fwd_unhook(f);
	if (f->deadline != NULL)
		event_free(f->deadline);
	/* Frees the owner's request too, if still open: nothing runs it. */
	if (f->evcon != NULL)
		evhttp_connection_free(f->evcon);
	LIST_REMOVE(f, entry);
	f->tr->nforwards--;
	json_decref(f->id);
	free(f);
}

/* The owner did not answer: its sandbox is as good as gone. */
static void
fwd_lost(struct peer_fwd *f, const char *why)
{
	struct evhttp_request	*in;
	char			 msg[160];
	json_t			*err;

	if (!f->failed)
		log_warnx("fleet: forwarding to node %s: %s", f->node, why);
	f->failed = 1;
	if ((in = fwd_unhook(f)) == NULL)
		return;
	if (f->started) {
		/* Mid-reply: the caller sees its stream cut. */
		evhttp_send_reply_end(in);
		return;
	}
	snprintf(msg, sizeof(msg), FLEET_GONE_FMT, f->node);
	err = json_pack("{s:s, s:O?, s:{s:i, s:s, s:o}}", "jsonrpc", "2.0",
	    "id", f->id, "error", "code", FLEET_ERR_SESSION_LOST, "message",
	    msg, "data", fleet_error_data(FLEET_NODE_GONE, f->node, NULL));
	http_reply_json(in, 200, NULL, err);
}

static int
fwd_header(struct evhttp_request *out, void *arg)
{
	struct peer_fwd		*f = arg;
	struct evkeyvalq	*from = evhttp_request_get_input_headers(out);
	struct evkeyvalq	*to;
	const char		*v;
	size_t			 i;

	if (f->in == NULL)
		return -1;
	to = evhttp_request_get_output_headers(f->in);
	for (i = 0; reply_headers[i] != NULL; i++)
		if ((v = evhttp_find_header(from, reply_headers[i])) != NULL)
			evhttp_add_header(to, reply_headers[i], v);
	evhttp_send_reply_start(f->in, evhttp_request_get_response_code(out),
	    evhttp_request_get_response_code_line(out));
	f->started = 1;
	return 0;
}

/* Each piece of the owner's body as it comes: SSE events stream. */
static void
fwd_chunk(struct evhttp_request *out, void *arg)
{
	struct peer_fwd	*f = arg;
	struct evbuffer	*b = evhttp_request_get_input_buffer(out);

	if (f->in != NULL && f->started && evbuffer_get_length(b) > 0)
		evhttp_send_reply_chunk(f->in, b);
	evbuffer_drain(b, evbuffer_get_length(b));
}

static void
fwd_error(enum evhttp_request_error e, void *arg)
{
	struct peer_fwd	*f = arg;
	char		 why[64];

	snprintf(why, sizeof(why), "%s", e == EVREQ_HTTP_TIMEOUT ? "timed "
	    "out" : e == EVREQ_HTTP_EOF ? "the connection closed" : "cannot "
	    "connect, or its certificate is not the node's");
	fwd_lost(f, why);
}

static void
fwd_done(struct evhttp_request *out, void *arg)
{
	struct peer_fwd	*f = arg;
	struct timeval	 now = { 0, 0 };

	if (out == NULL || evhttp_request_get_response_code(out) == 0)
		fwd_lost(f, "no reply");
	else if (f->in != NULL) {
		fwd_chunk(out, f);
		if (!f->started)
			fwd_header(out, f);
		evhttp_send_reply_end(fwd_unhook(f));
	}
	/* Freed out of evhttp's callbacks, where its connection may not be. */
	f->finished = 1;
	evtimer_add(f->deadline, &now);
}

/* Connected and shaken hands in time, or the owner counts as gone; or
 * the forward is over. */
static void
fwd_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct peer_fwd	*f = arg;

	(void)fd;
	(void)what;
	if (!f->finished && SSL_is_init_finished(f->ssl))
		return;
	if (!f->finished)
		fwd_lost(f, "no TLS handshake in time");
	fwd_free(f);
}

/* The caller went away: so does the owner's request (it cancels a
 * 2026-07-28 call there, as the caller's closing would here). */
static void
fwd_caller_gone(struct evhttp_connection *evcon, void *arg)
{
	struct peer_fwd		*f = arg;
	struct evhttp_request	*in = fwd_unhook(f);

	(void)evcon;
	log_debug("fleet: the caller of a request forwarded to node %s went "
	    "away", f->node);
	if (in != NULL && evhttp_request_get_connection(in) == NULL)
		evhttp_request_free(in);
	fwd_free(f);
}

/* url with the node's id for {node}: its host, port and path. */
static int
fwd_target(const char *tmpl, const char *node, char host[PEER_HOST_MAX],
    int *port, char path[PEER_PATH_MAX])
{
	char			 url[FLEET_PEER_URL_MAX + FLEET_NODE_MAX];
	const char		*at = strstr(tmpl, PEER_NODE_VAR), *h, *p;
	struct evhttp_uri	*u;
	size_t			 n;
	int			 ok;

	if (at == NULL || xsnprintf(url, sizeof(url), "%.*s%s%s",
	    (int)(at - tmpl), tmpl, node, at + strlen(PEER_NODE_VAR)) == -1 ||
	    (u = evhttp_uri_parse(url)) == NULL)
		return -1;
	h = evhttp_uri_get_host(u);
	p = evhttp_uri_get_path(u);
	*port = evhttp_uri_get_port(u) == -1 ? PEER_PORT_DEFAULT :
	    evhttp_uri_get_port(u);
	n = h != NULL ? strlen(h) : 0;
	/* An address in brackets is connected to without them. */
	if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
		h++;
		n -= 2;
	}
	ok = n > 0 && xsnprintf(host, PEER_HOST_MAX, "%.*s", (int)n, h) !=
	    -1 && xsnprintf(path, PEER_PATH_MAX, "%s", p != NULL &&
	    p[0] != '\0' ? p : "/") != -1;
	evhttp_uri_free(u);
	return ok ? 0 : -1;
}

/* The principal's open requests here, forwarded ones among them: one
 * share of server.http.max_requests_per_principal. */
static int
fwd_admit(struct http_tr *tr, struct evhttp_request *req,
    const char *principal)
{
	unsigned		 max = tr->srv->conf.server.http.
				    max_requests_per_principal, n;
	const struct peer_fwd	*f;

	if (tr->nforwards >= PEER_FORWARDS_MAX) {
		http_reply_error(req, 429, RPC_SERVER_ERROR, "at most %d "
		    "requests forwarded to other nodes at once",
		    PEER_FORWARDS_MAX);
		return -1;
	}
	n = http_sess_requests(tr, principal);
	LIST_FOREACH(f, &tr->forwards, entry)
		n += strcmp(f->principal, principal) == 0;
	if (n < max)
		return 0;
	http_reply_error(req, 429, RPC_SERVER_ERROR, "at most %u open requests "
	    "per principal, forwarded ones too (server.http."
	    "max_requests_per_principal)", max);
	return -1;
}

int
http_peer_forward(struct http_tr *tr, struct evhttp_request *req,
    const struct http_auth *a, const char *node, const json_t *msg,
    const char *body, size_t len)
{
	struct server		*srv = tr->srv;
	struct peer_fwd		*f;
	struct evhttp_request	*out;
	struct bufferevent	*bev;
	struct evkeyvalq	*h;
	struct evkeyval		*kv;
	struct timeval		 tv = { PEER_CONNECT_S, 0 };
	struct in_addr		 a4;
	struct in6_addr		 a6;
	char			 host[PEER_HOST_MAX], path[PEER_PATH_MAX];
	char			 hosthdr[PEER_HOST_MAX + 8];
	const char		*v;
	int			 port;
	size_t			 i;

	if (fwd_target(srv->conf.fleet.peer.url, node, host, &port,
	    path) == -1) {
		log_warnx("fleet.peer.url: no URL for node %s", node);
		return -1;
	}
	if (fwd_admit(tr, req, a->principal) == -1)
		return 0;
	f = xcalloc(1, sizeof(*f));
	f->tr = tr;
	snprintf(f->principal, sizeof(f->principal), "%s", a->principal);
	LIST_INSERT_HEAD(&tr->forwards, f, entry);
	f->in = req;
	f->id = json_incref(json_object_get(msg, "id"));
	snprintf(f->node, sizeof(f->node), "%s", node);
	tr->nforwards++;
	if ((f->ssl = SSL_new(tr->peer_ctx)) == NULL)
		fatalx("SSL_new");
	/* The owner proves it is that node: the fleet's CA, its id. */
	SSL_set_verify(f->ssl, SSL_VERIFY_PEER, NULL);
	if (SSL_set1_host(f->ssl, node) != 1)
		fatalx("SSL_set1_host");
	SSL_set_hostflags(f->ssl, X509_CHECK_FLAG_NO_WILDCARDS);
	/* SNI names a host, never an address (RFC 6066). */
	if (inet_pton(AF_INET, host, &a4) != 1 && inet_pton(AF_INET6, host,
	    &a6) != 1)
		(void)SSL_set_tlsext_host_name(f->ssl, host);
	if ((bev = bufferevent_openssl_socket_new(srv->base, -1, f->ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE |
	    BEV_OPT_DEFER_CALLBACKS)) == NULL)
		fatalx("bufferevent_openssl_socket_new");
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	if ((f->evcon = evhttp_connection_base_bufferevent_new(srv->base,
	    tr->dns, bev, host, (ev_uint16_t)port)) == NULL)
		fatalx("evhttp_connection_base_bufferevent_new");
	evhttp_connection_set_timeout(f->evcon, PEER_IDLE_S);
	if ((out = evhttp_request_new(fwd_done, f)) == NULL)
		fatalx("evhttp_request_new");
	evhttp_request_set_header_cb(out, fwd_header);
	evhttp_request_set_chunked_cb(out, fwd_chunk);
	evhttp_request_set_error_cb(out, fwd_error);
	h = evhttp_request_get_output_headers(out);
	for (i = 0; peer_headers[i] != NULL; i++)
		if (http_header_one(req, peer_headers[i], &v) == 1)
			evhttp_add_header(h, peer_headers[i], v);
	TAILQ_FOREACH(kv, evhttp_request_get_input_headers(req), next)
		if (evutil_ascii_strncasecmp(kv->key, PEER_PARAM_PREFIX,
		    strlen(PEER_PARAM_PREFIX)) == 0)
			evhttp_add_header(h, kv->key, kv->value);
	evhttp_add_header(h, HTTP_FORWARDED_BY, srv->conf.fleet.node_id);
	snprintf(hosthdr, sizeof(hosthdr), "%s%s%s:%d", strchr(host, ':') ?
	    "[" : "", host, strchr(host, ':') ? "]" : "", port);
	evhttp_add_header(h, "Host", hosthdr);
	evbuffer_add(evhttp_request_get_output_buffer(out), body, len);
	f->deadline = evtimer_new(srv->base, fwd_deadline, f);
	evtimer_add(f->deadline, &tv);
	evhttp_connection_set_closecb(evhttp_request_get_connection(req),
	    fwd_caller_gone, f);
	log_debug("fleet: a request for node %s's handle goes to %s:%d",
	    node, host, port);
	if (evhttp_make_request(f->evcon, out, EVHTTP_REQ_POST, path) == -1) {
		fwd_lost(f, "cannot send the request");
		fwd_free(f);
	}
	return 0;
}

void
http_peer_stop(struct http_tr *tr)
{
	while (!LIST_EMPTY(&tr->forwards))
		fwd_free(LIST_FIRST(&tr->forwards));
	if (tr->peer_http != NULL)
		evhttp_free(tr->peer_http);
	if (tr->dns != NULL)
		evdns_base_free(tr->dns, 0);
	if (tr->peer_ctx != NULL)
		SSL_CTX_free(tr->peer_ctx);
	tr->peer_http = NULL;
	tr->dns = NULL;
	tr->peer_ctx = NULL;
}
