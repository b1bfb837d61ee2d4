/*
 * MCP over Streamable HTTP (`mcp-exec --http ADDR:PORT`): one endpoint,
 * /mcp, for POST (one JSON-RPC message each) and DELETE (end an MCP
 * session).  Replies come back as JSON or as an SSE stream carrying the
 * request's progress notifications and then its response.  Bearer tokens
 * from rules/principals.yaml say who a client is; without tokens only a
 * loopback address may be used.
 *
 * Ownership: the transport owns its MCP sessions and every HTTP request it
 * has not answered yet; main owns the transport.
 */
#ifndef STOCKADE_TRANSPORT_HTTP_H
#define STOCKADE_TRANSPORT_HTTP_H

#include "sessions/server.h"

struct http_tr;

/*
 * Parses ADDR:PORT (or PORT alone, on 127.0.0.1) and loads principals.yaml;
 * NULL after printing why on stderr.  Nothing is bound yet.
 */
struct http_tr	*transport_http_new(struct server *, const char *listen);
/* Binds and serves on srv->base until the loop ends. */
int		 transport_http_start(struct http_tr *);
/* Ends every MCP session and drops unanswered requests; NULL is fine. */
void		 transport_http_free(struct http_tr *);

#endif
