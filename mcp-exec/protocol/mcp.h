/*
 * MCP over JSON-RPC 2.0: message validation, the lifecycle, and dispatch
 * to the methods mcp-exec serves.  Transport-neutral: a transport hands in
 * one message at a time and gives a send function for what goes back.
 * Methods are a table; each entry says in which eras it exists.  A
 * request that names revision 2026-07-28 in its _meta is served on its
 * own (era.c), whatever the connection did before; any other follows
 * initialize, as in 2025-11-25.
 *
 * Ownership: a connection is reference counted; calls in flight hold a
 * reference, so a transport may go away while they finish.
 */
#ifndef STOCKADE_MCP_H
#define STOCKADE_MCP_H

#include <sys/queue.h>

#include <stddef.h>
#include <jansson.h>

#include "era.h"
#include "sessions/profile.h"
#include "sessions/server.h"
#include "tools/tools.h"

#define MCP_LATEST		"2025-11-25"
#define MCP_VERSION_MAX		16

/* JSON-RPC and MCP error codes. */
#define RPC_PARSE_ERROR		-32700
#define RPC_INVALID_REQUEST	-32600
#define RPC_METHOD_NOT_FOUND	-32601
#define RPC_INVALID_PARAMS	-32602
#define RPC_INTERNAL_ERROR	-32603
#define MCP_RESOURCE_NOT_FOUND	-32002

enum mcp_log_level {
	LOG_LVL_DEBUG, LOG_LVL_INFO, LOG_LVL_NOTICE, LOG_LVL_WARNING,
	LOG_LVL_ERROR, LOG_LVL_CRITICAL, LOG_LVL_ALERT, LOG_LVL_EMERGENCY,
};

struct inflight;
LIST_HEAD(inflight_list, inflight);

typedef void mcp_send_fn(void *transport, json_t *msg);	/* msg stolen */

struct mcp_conn {
	struct server		*srv;
	mcp_send_fn		*send;
	void			*transport;	/* NULL once the transport left */
	char			 principal[PRINCIPAL_MAX];
	/* clientInfo from initialize; the transport sets the rest. */
	struct tool_client	 client;
	int			 initialized;	/* by initialize: legacy */
	char			 protocol[MCP_VERSION_MAX];
	enum mcp_log_level	 log_level;
	struct inflight_list	 inflight;
	unsigned		 refs;
};

struct mcp_conn	*mcp_conn_new(struct server *, const char *principal,
		    mcp_send_fn *, void *transport);
/* The transport is gone: nothing more is sent; calls finish unanswered. */
void		 mcp_conn_detach(struct mcp_conn *);
void		 mcp_conn_ref(struct mcp_conn *);
void		 mcp_conn_unref(struct mcp_conn *);

/* One message from the transport (bytes, not yet parsed). */
void		 mcp_receive(struct mcp_conn *, const char *data, size_t len);
/* The request with this id is cancelled, as by notifications/cancelled. */
void		 mcp_cancel(struct mcp_conn *, const json_t *id);

/* Replies and notifications (stolen json). */
void		 mcp_respond(struct mcp_conn *, const json_t *id, json_t *result);
void		 mcp_error(struct mcp_conn *, const json_t *id, int code,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The JSON-RPC code of a tool's fault, in the request's era. */
int		 mcp_fault_code(enum tool_fault, int modern);
/* An error with data (stolen), as the specification gives it. */
void		 mcp_error_data(struct mcp_conn *, const json_t *id, int code,
		    const char *msg, json_t *data);
void		 mcp_notify(struct mcp_conn *, const char *method, json_t *params);
/* notifications/message when level is at or above the client's. */
void		 mcp_log(struct mcp_conn *, enum mcp_log_level, json_t *data);

/*
 * A request in flight (tools/call, resources/read): handed to the tools
 * layer as its tool_req, cancellable by notifications/cancelled, answered
 * once through the port (which frees it).
 */
struct inflight {
	LIST_ENTRY(inflight)	 entry;
	struct mcp_conn		*conn;
	json_t			*id;
	struct era_req		 era;	/* the request's own _meta */
	enum era_cache		 cache;	/* of its result, when modern */
	json_t			*not_found;	/* modern: error data then */
	struct tool_req		 rq;
};

#endif
