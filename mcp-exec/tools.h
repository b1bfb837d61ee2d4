/*
 * The tools and resources mcp-exec offers over MCP: execute_python,
 * run_command, close_session, and session artifacts as resources.  Each
 * handler checks its arguments against the tool's schema (a bad shape is a
 * JSON-RPC error naming the field) and its values against policy (a
 * refusal is a tool result with isError).
 */
#ifndef STOCKADE_TOOLS_H
#define STOCKADE_TOOLS_H

#include <jansson.h>

#include "mcp.h"

#define TOOL_FILES_MAX		16
#define ARTIFACT_URI_PREFIX	"stockade://sessions/"
#define PROGRESS_TEXT_MAX	4096	/* output quoted in one notification */

/* The tool definitions (new reference). */
json_t	*tools_list(struct server *);

void	tools_call(struct mcp_conn *, const json_t *id, const json_t *params);
void	resources_list(struct mcp_conn *, const json_t *id, const json_t *params);
void	resources_templates(struct mcp_conn *, const json_t *id,
	    const json_t *params);
void	resources_read(struct mcp_conn *, const json_t *id, const json_t *params);

#endif
