/*
 * MCP revision 2026-07-28 beside the initialize-based revisions: what one
 * request says about itself in params._meta (version, capabilities,
 * clientInfo, log level, W3C trace context), the shape its results take
 * (resultType, serverInfo, cache hints) and server/discover's answer.
 * Trusts nothing in _meta: every field is checked before it is used.
 */
#ifndef STOCKADE_ERA_H
#define STOCKADE_ERA_H

#include <jansson.h>

#include "tools/tools.h"

#define MCP_MODERN		"2026-07-28"
#define MCP_META_VERSION	"io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS		"io.modelcontextprotocol/clientCapabilities"
#define MCP_META_CLIENT		"io.modelcontextprotocol/clientInfo"
#define MCP_META_LEVEL		"io.modelcontextprotocol/logLevel"
#define MCP_META_SERVER		"io.modelcontextprotocol/serverInfo"

/* The MCP specification's own codes (2026-07-28: -32020 to -32099). */
#define MCP_HEADER_MISMATCH	-32020
#define MCP_MISSING_CAPABILITY	-32021	/* data: requiredCapabilities */
#define MCP_UNSUPPORTED_VERSION	-32022

/*
 * How long a client may keep a result (ttlMs), and who may share it:
 * PUBLIC alike for every caller; CALLER alike for one authorization
 * context (tools and instructions follow the principal's rules), not to
 * be shared across them; PRIVATE its own state (sessions), never fresh.
 */
#define ERA_TTL_MS		60000
enum era_cache { ERA_NOCACHE, ERA_PUBLIC, ERA_CALLER, ERA_PRIVATE };

/* One request's own metadata; modern 0 for the initialize-based eras. */
struct era_req {
	int			 modern;
	int			 log_level;	/* -1: no log messages */
	int			 tasks_ext;	/* takes io.modelcontextprotocol/tasks */
	struct tool_client	 client;	/* modern: this request's */
	char			 traceparent[TOOL_TRACEPARENT_MAX];
	char			 tracestate[TOOL_TRACESTATE_MAX];
};

/* The versions we speak, newest first, as a JSON array (new reference). */
json_t	*era_versions(void);
int	 era_version_known(const char *);

/*
 * Reads a request's _meta into r (its client starts as a copy of base,
 * the transport's view of the caller).  Returns 0 when it carries no
 * protocol version (an initialize-based request), 1 for a valid modern
 * one; -1 with code and why set when the request must be refused.
 */
int	 era_parse(const json_t *params, const struct tool_client *base,
	    struct era_req *r, int *code, char *why, size_t whylen);

/* The error data of UnsupportedProtocolVersionError (new reference). */
json_t	*era_unsupported_data(const json_t *params);

/* A modern result: resultType, _meta serverInfo, cache hints (in place). */
json_t	*era_result(json_t *result, enum era_cache);

/* server/discover's result (new reference). */
json_t	*era_discover(const char *instructions);

/*
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): 1 when s is a
 * traceparent (tracestate) we can record, 0 when it must be ignored.
 */
int	 era_traceparent_ok(const char *s);
int	 era_tracestate_ok(const char *s);

#endif
