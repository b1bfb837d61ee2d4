/*
 * What `stockade status` shows of a running MCP server: its live sessions,
 * published as state_dir/sessions-PID.json (one file per server process,
 * since stdio servers share a state_dir), rewritten whole at each change.
 */
#ifndef STOCKADE_STATUS_H
#define STOCKADE_STATUS_H

struct server;

#define STATUS_FILE_PREFIX	"sessions-"

void	status_publish(struct server *);
/* Removes this process's file (at exit). */
void	status_unpublish(struct server *);
/* Closes, in the trail, the sessions of servers that died. */
unsigned status_sweep(struct server *);

#endif
