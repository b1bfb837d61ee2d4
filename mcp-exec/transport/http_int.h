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

#include <stdint.h>

#include <event2/http.h>
#include <jansson.h>

#include "protocol/mcp.h"

#define HTTP_SID_BYTES		24	/* 192 random bits per Mcp-Session-Id */
#define HTTP_SID_LEN		(2 * HTTP_SID_BYTES)
#define HTTP_TIMEOUT_S		30	/* a stalled read or write */
#define HTTP_STREAM_READ_MAX	(64 * 1024)	/* read while we stream */
#define HTTP_EARLY_MAX		(1024 * 1024)	/* before a stream starts */
#define HTTP_STREAM_BACKLOG_MAX	(4 * 1024 * 1024) /* unsent notifications */
#define RPC_SERVER_ERROR	-32000	/* JSON-RPC: implementation-defined */

struct http_tr;
struct http_call;

/* One MCP session: a protocol connection and its open requests. */
struct http_sess {
	LIST_ENTRY(http_sess)	 entry;
	struct http_tr		*tr;
	struct mcp_conn		*conn;
	char			 id[HTTP_SID_LEN + 1];
	uint64_t		 last_ms;
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

#endif
