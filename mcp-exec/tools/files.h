/*
 * list_files and read_file: a session's /workspace, for its principal.
 */
#ifndef STOCKADE_TOOLS_FILES_H
#define STOCKADE_TOOLS_FILES_H

#include <jansson.h>

#include "tools.h"

void	files_list(struct tool_req *, const json_t *args);
void	files_read(struct tool_req *, const json_t *args);

#endif
