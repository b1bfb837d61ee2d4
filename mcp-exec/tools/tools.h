/*
 * The tools and resources mcp-exec offers: execute_python, run_command,
 * close_session, and session artifacts as resources.  Each handler checks
 * its arguments against the tool's schema (a bad shape is a fault naming
 * the field) and its values against policy (a refusal is a tool result
 * with isError).
 *
 * Tools know nothing of the protocol above them: a request comes down as
 * a struct tool_req, and its answer goes back up through the port the
 * protocol layer (protocol/mcp.c) put in it.  Ownership: the protocol owns
 * a request; a tool ends it exactly once, with tool_result, tool_fault or
 * tool_drop, and must not touch it afterwards.  Until then the request,
 * and the strings it points to, stay valid.
 */
#ifndef STOCKADE_TOOLS_H
#define STOCKADE_TOOLS_H

#include <jansson.h>

#include "sessions/fleet.h"
#include "sessions/server.h"

#define TOOL_FILES_MAX		16
#define ARTIFACT_URI_PREFIX	"stockade://sessions/"
/* session_id's x-mcp-header: clients send it as Mcp-Param-Session-Id. */
#define SESSION_ID_HEADER	"Session-Id"
#define PROGRESS_TEXT_MAX	4096	/* output quoted in one notification */
#define TOOL_FAULT_MAX		512	/* a fault's message */

/* What is wrong with a request (the protocol picks its error code). */
enum tool_fault {
	TOOL_BAD_PARAMS,	/* a shape the schema refuses; unknown tool */
	TOOL_NOT_FOUND,		/* a resource that is not there, or not yours */
	TOOL_INTERNAL,
	/* A fleet's (sessions/fleet.h), each with its data: */
	TOOL_SESSION_LOST,	/* the session's node drains */
	TOOL_DRAINING,		/* this node takes no new sessions */
	TOOL_WRONG_NODE,	/* a handle another node made */
};

struct tool_req;

#define CLIENT_NAME_MAX		128	/* clientInfo.name, as given */
#define CLIENT_VERSION_MAX	64
#define CLIENT_ADDR_MAX		64	/* an IPv6 address in text */
#define CLIENT_AUTH_MAX		16
#define CLIENT_NODE_MAX		64	/* a fleet node id (sessions/fleet.h) */
#define CLIENT_ISSUER_MAX	512	/* an OAuth issuer URL */
#define CLIENT_SUBJECT_MAX	256	/* a token's sub, a certificate's subject */
#define CLIENT_ID_MAX		128	/* a token's client_id or azp */
#define CLIENT_GROUPS_MAX	16	/* groups of one caller that count */
#define CLIENT_GROUP_MAX	64	/* a group's name */
#define TOOL_REQUEST_ID_MAX	64	/* the JSON-RPC id, as text */
#define TOOL_TRACEPARENT_MAX	128	/* W3C traceparent (00: 55 bytes) */
#define TOOL_TRACESTATE_MAX	513	/* W3C: propagate at least 512 */
/* An MCP task's id: 32 hex [+ "." node] + NUL (protocol/task_store.h). */
#define TOOL_TASK_ID_MAX	(32 + FLEET_SUFFIX_MAX + 1)

/*
 * Who is asking, for the audit trail: what the client says it is
 * (initialize's clientInfo, unverified), where it connects from (HTTP),
 * and how it proved its principal.  The protocol and the transport fill
 * it; tools only read it.
 */
struct tool_client {
	char		 name[CLIENT_NAME_MAX];		/* "" if not given */
	char		 version[CLIENT_VERSION_MAX];
	char		 transport[8];			/* stdio, http */
	char		 remote_addr[CLIENT_ADDR_MAX];	/* "" on stdio */
	unsigned	 remote_port;
	char		 auth[CLIENT_AUTH_MAX];	/* bearer, oauth, mtls, local */
	/* How the principal was proved, for the audit trail ("" unknown). */
	char		 issuer[CLIENT_ISSUER_MAX];
	char		 subject[CLIENT_SUBJECT_MAX];
	char		 client_id[CLIENT_ID_MAX];
	char		 jti_sha256[65];	/* of the token's jti */
	char		 cert_sha256[65];	/* the client certificate's */
	/* The node that forwarded the request here ("": none). */
	char		 forwarded_by[CLIENT_NODE_MAX];
	/* The groups the transport vouches for (a static token's groups:, an
	 * OAuth groups claim); past CLIENT_GROUPS_MAX they are dropped. */
	char		 groups[CLIENT_GROUPS_MAX][CLIENT_GROUP_MAX];
	unsigned	 ngroups;
};

/* The protocol's side of a request. */
struct tool_port {
	void	(*result)(struct tool_req *, json_t *result);	/* stolen */
	void	(*fault)(struct tool_req *, enum tool_fault, const char *msg);
	void	(*drop)(struct tool_req *);	/* ends it without an answer */
	/* While it runs: a notification tied to it (stolen params), and a
	 * log message ("warning", "error", ...) for the client. */
	void	(*notify)(struct tool_req *, const char *method, json_t *params);
	void	(*log)(struct tool_req *, const char *level, json_t *data);
	/* 0 once nothing sent for it can reach the client any more. */
	int	(*reachable)(struct tool_req *);
};

struct tool_req {
	const struct tool_port	*port;
	struct server		*srv;
	const char		*principal;
	const struct tool_client *client;	/* NULL: none known */
	char			 request_id[TOOL_REQUEST_ID_MAX];
	/* The caller's W3C trace context (_meta), validated; "" if none. */
	char			 traceparent[TOOL_TRACEPARENT_MAX];
	char			 tracestate[TOOL_TRACESTATE_MAX];
	/* The MCP task it runs as, for the audit trail; "" if none. */
	char			 task_id[TOOL_TASK_ID_MAX];
	/* The data of the fault being answered (tool_fault_data); the
	 * port takes it. */
	json_t			*fault_data;
	int			 cancelled;	/* the client cancelled it */
	/* Set by a tool that runs on: called (once) on cancellation. */
	void			(*cancel)(struct tool_req *);
	void			*arg;
};

/* Ends the request with a result (stolen; NULL: could not be built). */
void	tool_result(struct tool_req *, json_t *result);
void	tool_fault(struct tool_req *, enum tool_fault, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* A fault with data (stolen) for the error's `data`. */
void	tool_fault_data(struct tool_req *, enum tool_fault, json_t *data,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void	tool_drop(struct tool_req *);
void	tool_notify(struct tool_req *, const char *method, json_t *params);
void	tool_log(struct tool_req *, const char *level, json_t *data);
int	tool_reachable(struct tool_req *);
/* The client cancelled it (notifications/cancelled, tasks/cancel): the
 * tool's cancel runs once; the tool then ends the request as it does. */
void	tool_cancel(struct tool_req *);

/* The client as an audit record's "client" object (new reference). */
json_t	*tool_client_json(const struct tool_client *);
/* How the principal was proved (auth, issuer, ..., groups) into o. */
void	tool_client_proof(json_t *o, const struct tool_client *);
/* Adds "client", "request" and the caller's "trace" (when it sent one) to
 * a record of this request, its lists held to their budgets
 * (audit_fit_call); returns ev (NULL stays NULL). */
json_t	*tool_with_client(struct tool_req *, json_t *ev);
/* Adds only the MCP task and the caller's trace (ev may be NULL). */
json_t	*tool_with_trace(struct tool_req *, json_t *ev);

/*
 * An artifact or workspace file left a sandbox through `how`
 * (resources/read, inline, read_file): audited as artifact_delivered with
 * the client and the request it answered (tools/deliver.c).  Refusals
 * are artifact_refused, at most DELIVER_REFUSALS_PER_S a second.
 */
#define DELIVER_REFUSALS_PER_S	10
void	deliver_record(struct tool_req *, const char *session_id,
	    const char *name, const char *data, size_t len, const char *mime,
	    const char *how);
void	deliver_refused(struct tool_req *, const char *session_id,
	    const char *name, const char *how, const char *reason);

/* The tool definitions this caller may use (new reference). */
json_t	*tools_list(struct server *, const char *principal,
	    const struct tool_client *);
/* initialize's instructions: the caller's default profile, truthfully
 * (into buf). */
void	 tools_instructions(struct server *, const char *principal,
	    const struct tool_client *, char *buf, size_t len);
void	 tools_call(struct tool_req *, const json_t *params);

/* resources/list and resources/templates/list (new references). */
json_t	*resources_list(struct server *, const char *principal);
json_t	*resources_templates(void);
void	 resources_read(struct tool_req *, const json_t *params);

#endif
