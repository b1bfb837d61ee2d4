/*
 * Inside the HTTP transport: MCP sessions and their open requests, shared
 * by transport_http.c (the server, its checks, the sessions) and
 * http_call.c (open requests, and routing what the MCP core sends).
 *
 * Ownership: a session owns its calls; a call owns its evhttp request
 * until it answers it or its connection closes.
 */
#ifndef STOCKADE_HTTP_INT_H
#define STOCKADE_HTTP_INT_H

#include <sys/queue.h>

#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdint.h>

#include <event2/http.h>
#include <jansson.h>

#include "mtls.h"
#include "protocol/mcp.h"
#include "sessions/fleet.h"
#include "sessions/profile.h"
#include "tools/tools.h"

#define HTTP_PATH		"/mcp"
#define HTTP_METADATA_PATH	"/.well-known/oauth-protected-resource"

#define HTTP_SID_BYTES		24	/* 192 random bits per Mcp-Session-Id */
#define HTTP_SID_LEN		(2 * HTTP_SID_BYTES)
/* An Mcp-Session-Id: hex [+ "." node] + NUL (sessions/fleet.h). */
#define HTTP_SID_MAX		(HTTP_SID_LEN + FLEET_SUFFIX_MAX + 1)
#define HTTP_TIMEOUT_S		30	/* a stalled read or write */
#define HTTP_STREAM_READ_MAX	(64 * 1024)	/* read while we stream */
#define HTTP_EARLY_MAX		(1024 * 1024)	/* before a stream starts */
#define HTTP_STREAM_BACKLOG_MAX	(4 * 1024 * 1024) /* unsent notifications */
#define RPC_SERVER_ERROR	-32000	/* JSON-RPC: implementation-defined */
/* What a client that sends no MCP-Protocol-Version is assumed to speak. */
#define MCP_HTTP_DEFAULT_VERSION "2025-03-26"
/* The session_id argument, which the tools' schemas mark x-mcp-header. */
#define HTTP_PARAM_SESSION	"Mcp-Param-" SESSION_ID_HEADER
#define HTTP_HOSTS_MAX		8
#define HTTP_HOST_LEN		(INET6_ADDRSTRLEN + 16)
/* Which node sent a request on (http_peer.c): only on the peer listener. */
#define HTTP_FORWARDED_BY	"Stockade-Forwarded-By"

struct http_sess;
struct http_call;
struct http_park;
struct peer_fwd;

struct http_tr {
	struct server		*srv;
	struct evhttp		*http;
	struct event		*reaper;
	char			 addr[INET6_ADDRSTRLEN];
	unsigned		 port;
	int			 loopback;
	char			 hosts[HTTP_HOSTS_MAX][HTTP_HOST_LEN];
	size_t			 nhosts;
	LIST_HEAD(, http_sess)	 sessions;
	unsigned		 nsessions;
	struct http_live	*conns;		/* open connections */
	uint64_t		 refusal_sec;	/* rate limit of refusals */
	unsigned		 refusals, refusals_unaudited;
	struct mtls_hook	 mtls_hook;	/* on every TLS connection */
	/* Requests whose token waits for its issuer's keys (http_auth.c). */
	TAILQ_HEAD(, http_park)	 parked;
	unsigned		 nparked;
	struct event		*unpark;	/* a fetch ended, or a deadline */
	struct http_park	*resuming;	/* the one asked again now */
	unsigned		 round;		/* of asking them again */
	/* fleet.peer (http_peer.c): other nodes' requests, and ours. */
	struct evhttp		*peer_http;
	SSL_CTX			*peer_ctx;
	struct evdns_base	*dns;
	LIST_HEAD(, peer_fwd)	 forwards;
	unsigned		 nforwards;
};

/* Who a request's client is, and how it proved it (http_auth.c). */
struct http_auth {
	char			 principal[PRINCIPAL_MAX];
	struct tool_client	 client;	/* auth and proof fields only */
};

/* One MCP session: a protocol connection and its open requests. */
struct http_sess {
	LIST_ENTRY(http_sess)	 entry;
	struct http_tr		*tr;
	struct mcp_conn		*conn;
	char			 id[HTTP_SID_MAX];
	uint64_t		 last_ms;
	int			 used;	/* a request came after initialize */
	int			 stateless;	/* 2026-07-28: one request */
	TAILQ_HEAD(, http_call)	 calls;
	unsigned		 ncalls;
	struct http_call	*current;	/* being dispatched right now */
};

/* One POSTed request waiting for its response. */
struct http_call {
	TAILQ_ENTRY(http_call)	 entry;
	struct http_sess	*sess;
	struct evhttp_request	*req;	/* NULL once answered or gone */
	json_t			*id;
	json_t			*token;	/* params._meta.progressToken */
	struct evbuffer		*early;	/* SSE events before the stream */
	int			 sse;
	int			 streaming;
	int			 initialize;
	int			 done;
};

/*
 * MCP sessions (http_sess.c).  http_sess_admit makes room for one more
 * session of principal, ending an unused one if it must; -1 after
 * replying 429 (the principal's share is full of sessions in use) or 503.
 */
int		 http_sess_admit(struct http_tr *, struct evhttp_request *,
		    const char *principal);
/* stateless: not an MCP session but one 2026-07-28 request, counted
 * with the principal's requests and not among its sessions. */
struct http_sess *http_sess_new(struct http_tr *, const char *principal,
		    int stateless);
/* A stateless one whose request is over goes. */
void		 http_sess_settle(struct http_sess *);
struct http_sess *http_sess_find(struct http_tr *, const char *id);
void		 http_sess_free(struct http_sess *, int status,
		    const char *why);
void		 http_sess_reap(evutil_socket_t, short, void *tr);
/* Open requests of the principal across its MCP sessions. */
unsigned	 http_sess_requests(const struct http_tr *, const char *);

/*
 * Caller authentication (http_auth.c).  http_authenticate fills a and
 * returns 0, or replies 401/403/400/503 and returns -1, or returns 1: the
 * request waits for its token's issuer's keys, fetched beside the loop,
 * and is handed to http_request_cb again when they come (or its wait is
 * over).  http_auth_session copies the proof into a new MCP session's
 * client and audits it (auth_accepted).
 */
int	http_authenticate(struct http_tr *, struct evhttp_request *,
	    const char *host, struct http_auth *a);
/* Fetches of issuers' keys run on the server's loop from now on. */
void	http_auth_start(struct http_tr *);
/* Forgets the waiting requests (evhttp_free frees them) and the fetches. */
void	http_auth_stop(struct http_tr *);
void	http_auth_session(struct http_tr *, struct evhttp_request *,
	    const struct http_auth *, struct tool_client *);
void	http_auth_ssl(struct http_tr *, SSL *);
void	http_handle_metadata(struct http_tr *, struct evhttp_request *);
/* The request's peer address as text ("?" unknown; evhttp's storage). */
const char *http_peer(struct evhttp_request *);
/* A refusal for the audit trail, rate-limited (c may be NULL). */
void	http_refusal(struct http_tr *, const char *peer, const char *principal,
	    const char *detail, const struct tool_client *c);
/* The header's only value: 0 absent (NULL), 1 found, -1 repeated. */
int	http_header_one(struct evhttp_request *, const char *name,
	    const char **out);
/* A reply with body as JSON (stolen; NULL: none). */
void	http_reply_json(struct evhttp_request *, int status,
	    const char *reason, json_t *body);

/* evhttp's callback for every request (http.c). */
void	http_request_cb(struct evhttp_request *, void *tr);

/* An HTTP-level refusal with a JSON-RPC error body (transport_http.c). */
void	http_reply_error(struct evhttp_request *, int status, int code,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A request of msg, on the session's list; sse: the client takes SSE. */
struct http_call *http_call_new(struct http_sess *, struct evhttp_request *,
		    const json_t *msg, int sse);
void		 http_call_free(struct http_call *);
/* Not answered while dispatched: start the stream, watch the connection. */
void		 http_call_wait(struct http_call *);
/*
 * No response will come over HTTP: a stream ends; a waiting request gets
 * status (204: no body); status 0 leaves the request to evhttp.
 */
void		 http_call_abort(struct http_call *, int status,
		    const char *why);
struct http_call *http_call_by_id(struct http_sess *, const json_t *id);
/* The mcp_conn's send function; the transport argument is the session. */
void		 http_send(void *sess, json_t *msg);

/* Shared with http_era.c (http.c). */
int		 http_version_legacy(const char *);
void		 http_post_request(struct http_sess *, struct evhttp_request *,
		    const json_t *msg, const char *body, size_t len, int sse);

/*
 * MCP 2026-07-28 (http_era.c): whether a POST is one (no Mcp-Session-Id,
 * a version in _meta or a header no initialize-based era knows); serving
 * it after its headers are checked against its body; and the HTTP status
 * of an error reply of that era (400 for version and header errors, 404
 * for an unknown method).
 */
int		 http_era_modern(struct evhttp_request *, const json_t *msg);
/* Whether the body names a version in _meta; its headers against it (-1
 * after replying 400), also inside an MCP session: what a proxy routes
 * on must be what runs. */
int		 http_era_named(const json_t *msg);
int		 http_era_check(struct evhttp_request *, const json_t *msg);
/*
 * Mcp-Param-Session-Id against arguments.session_id of a tools/call:
 * present only with it and equal to it, and (required) always with it;
 * -1 after replying 400 (-32020).
 */
int		 http_param_check(struct evhttp_request *, const json_t *msg,
		    int required);

/*
 * A fleet's node (http_fleet.c).  Whether a 2026-07-28 request names
 * something a node holds (a session by Mcp-Param-Session-Id, a task, an
 * artifact); a draining node's 503 (-31002) to one that does not.
 */
int		 http_fleet_has_handle(struct evhttp_request *, const json_t *msg);
void		 http_reply_draining(struct http_tr *, struct evhttp_request *);
/*
 * A request inside another node's MCP session (Mcp-Session-Id) for this
 * node's sandbox session, task or artifact, as a router sends it: served
 * on its own, in the MCP session's revision (its header).
 */
int		 http_fleet_visitor(struct http_tr *, struct evhttp_request *,
		    const json_t *msg);
void		 http_fleet_visit(struct http_tr *, struct evhttp_request *,
		    const struct http_auth *, const json_t *msg,
		    const char *body, size_t len, int sse);
/*
 * Node to node (http_peer.c).  http_fleet_owner: the node whose handle a
 * request acts on (the body's session, task or artifact, else its
 * Mcp-Session-Id), when another than this one: 1 and node set.
 */
int		 http_fleet_owner(struct http_tr *, struct evhttp_request *,
		    const json_t *msg, char node[FLEET_NODE_MAX]);
/* The listener for other nodes (fleet.peer.listen); -1 after logging. */
int		 http_peer_start(struct http_tr *);
void		 http_peer_stop(struct http_tr *);
/* Whether a request came on that listener. */
int		 http_peer_listener(struct http_tr *, struct evhttp_request *);
/* The node a request there comes from, as its certificate proves;
 * -1 after replying 403 (or 401 without the caller's Authorization). */
int		 http_peer_admit(struct http_tr *, struct evhttp_request *,
		    char from[FLEET_NODE_MAX]);
/* Sends the request on to node and its reply back; -1 when no URL
 * names node (nothing replied), 0 once it is on its way or refused. */
int		 http_peer_forward(struct http_tr *, struct evhttp_request *,
		    const struct http_auth *, const char *node,
		    const json_t *msg, const char *body, size_t len);
void		 http_era_post(struct http_tr *, struct evhttp_request *,
		    const struct http_auth *, const json_t *msg,
		    const char *body, size_t len, int sse);
int		 http_era_status(const json_t *msg);

#endif
