/*
 * A call's files[]: host paths beneath the profile's input roots, or
 * files the client sends inline ({name, content, encoding}), all staged
 * read-only into the session's /inputs.
 */
#ifndef STOCKADE_TOOLS_INPUTS_H
#define STOCKADE_TOOLS_INPUTS_H

#include <stddef.h>
#include <jansson.h>

#include "sessions/session.h"
#include "tools.h"

/* Checks files[]'s shape; -1 after a JSON-RPC error naming the item. */
int	inputs_check(struct tool_req *, const json_t *files);
/*
 * Stages every item into s; -1 with err naming the item and the rule.
 * Appends {name, size, sha256} of each staged file to staged (the call's
 * audit records list them).
 */
int	inputs_stage(struct session *s, const json_t *files, json_t *staged,
	    char *err, size_t errlen);

#endif
