/*
 * Long tool calls as MCP tasks, in both wire forms on one endpoint:
 * 2025-11-25's experimental `params.task` with tasks/get, tasks/result,
 * tasks/list and tasks/cancel, and 2026-07-28's extension
 * io.modelcontextprotocol/tasks (tasks/get, tasks/update, tasks/cancel).
 * One core runs a task as a tool_req whose port stores the answer
 * (task_store.c) instead of sending it; the two forms only shape it.
 * Trusts nothing in a request: a task id is found only for its principal.
 */
#ifndef STOCKADE_TASK_H
#define STOCKADE_TASK_H

#include <jansson.h>

#include "mcp.h"
#include "task_store.h"

#define TASK_EXTENSION		"io.modelcontextprotocol/tasks"
#define TASK_RELATED		"io.modelcontextprotocol/related-task"
#define TASK_POLL_MS		500	/* pollInterval we suggest */
#define TASK_PAGE		20	/* tasks/list page */
#define TASK_WAITERS_MAX	8	/* tasks/result waiting on one task */
#define TASK_SWEEP_S		5
#define TASK_EXPIRED_MSG	"the task's ttl ran out before its call ended"

/* Opens STATE_DIR/tasks (failing what a restart interrupted) and starts
 * the sweep; -1 with err set. */
int	 task_init(struct server *, char *err, size_t errlen);
void	 task_shutdown(void);

/* 1 when this tools/call was taken as a task (answered already). */
int	 task_tools_call(struct mcp_conn *, const json_t *id,
	    const json_t *params, const struct era_req *);
/* tasks/get, tasks/result, tasks/list, tasks/cancel, tasks/update. */
void	 task_m_get(struct mcp_conn *, const json_t *id, const json_t *params,
	    const struct era_req *);
void	 task_m_result(struct mcp_conn *, const json_t *id,
	    const json_t *params, const struct era_req *);
void	 task_m_list(struct mcp_conn *, const json_t *id,
	    const json_t *params, const struct era_req *);
void	 task_m_cancel(struct mcp_conn *, const json_t *id,
	    const json_t *params, const struct era_req *);
void	 task_m_update(struct mcp_conn *, const json_t *id,
	    const json_t *params, const struct era_req *);

/* For subscriptions/listen (listen.c): the principal's own live task,
 * and a task as tasks/get and notifications/tasks show it (new ref). */
struct task_rec	*task_find_own(const char *principal, const char *id);
json_t	*task_detail(const struct task_rec *);

/* 2025-11-25: initialize's tasks capability (new reference), and
 * execution.taskSupport on the tools that may run as tasks (in place). */
json_t	*task_capability(void);
void	 task_mark_tools(json_t *tools);

#endif
