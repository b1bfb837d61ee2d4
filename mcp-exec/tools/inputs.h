/*
 * A call's inputs: files (host paths beneath the profile's input roots)
 * and inline_files (contents the client sends, {name, content,
 * encoding}), staged read-only into the session's /inputs, all or none.
 */
#ifndef STOCKADE_TOOLS_INPUTS_H
#define STOCKADE_TOOLS_INPUTS_H

#include <stddef.h>
#include <jansson.h>

#include "args.h"
#include "sessions/session.h"

#define INPUTS_MAX	(2 * TOOL_FILES_MAX)	/* files and inline_files */

/*
 * The call's inputs as stage items (files first, then inline_files, each
 * in the order given), inline contents decoded (into x, capped before
 * decoding), and all of them checked against the profile's rules before
 * anything is written; -1 with err naming the item and the rule.
 */
int	inputs_check(struct exec_args *x, const struct input_rules *,
	    struct stage_item items[INPUTS_MAX], size_t *n, char *err,
	    size_t errlen);
/*
 * Stages the items into s, all or none; -1 with err.  Appends {name,
 * size, sha256} of each to staged (the call's audit records list them).
 */
int	inputs_stage(struct session *s, struct stage_item *items, size_t n,
	    json_t *staged, char *err, size_t errlen);

#endif
