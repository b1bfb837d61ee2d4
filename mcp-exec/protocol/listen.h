/*
 * MCP 2026-07-28 subscriptions/listen: a long-lived request whose stream
 * carries the notifications the client opted in to.  We serve one kind,
 * the tasks extension's notifications/tasks (SEP-2663) for the caller's
 * own tasks; the list kinds are left out of the acknowledgement, as our
 * lists never change while we run.  Trusts nothing in the filter: a task
 * id is taken only when it is a live task of the caller's principal.
 *
 * Ownership: a listener holds a reference on its connection until it
 * ends (client cancel, transport gone, all its tasks ended, lifetime,
 * shutdown).
 */
#ifndef STOCKADE_LISTEN_H
#define STOCKADE_LISTEN_H

#include <jansson.h>

#include "mcp.h"
#include "task_store.h"

#define LISTEN_SUB_ID		"io.modelcontextprotocol/subscriptionId"
#define LISTEN_TASKS_MAX	32	/* taskIds in one listen */

void	 listen_m_listen(struct mcp_conn *, const json_t *id,
	    const json_t *params, const struct era_req *);
/* A task changed status: its principal's listeners on it hear of it. */
void	 listen_task_changed(const struct task_rec *);
/* notifications/cancelled for a listen (1 when rid was one): it ends,
 * unanswered, as the spec says of a cancelled request. */
int	 listen_cancel(struct mcp_conn *, const json_t *rid);
/* The connection's transport left: its listeners end, unanswered. */
void	 listen_conn_gone(struct mcp_conn *);
/* mcp-exec stops: every listener gets its graceful closing result;
 * returns how many there were. */
unsigned listen_shutdown(void);

#endif
