/*
 * MCP tasks (task.h): the core that runs a tools/call as a task, and the
 * two thin wire forms over it.  A task's tool_req belongs to no
 * connection: its port stores the answer (task_store.c) and wakes who
 * waits in tasks/result.  Every task request names its task by id, which
 * is looked up only among the caller's own: anyone else's is "not found".
 */
#include <sys/queue.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "era.h"
#include "listen.h"
#include "log.h"
#include "task.h"
#include "task_store.h"
#include "util.h"

#define RESTART_MSG	"mcp-exec restarted while the task was running; " \
			"its result is lost"
#define NOT_FOUND_MSG	"Failed to retrieve task: Task not found"

/* A task's id goes down to the tools in their own buffer. */
_Static_assert(TOOL_TASK_ID_MAX >= TASK_ID_MAX, "tool_req.task_id");

struct task_wait {
	LIST_ENTRY(task_wait)	 entry;
	struct mcp_conn		*conn;
	json_t			*id;
};

/* A task while its tool runs. */
struct task_run {
	struct task_rec		*rec;	/* NULL once expired */
	struct tool_req		 rq;
	struct tool_client	 client;
	char			 principal[PRINCIPAL_MAX];
	/* 2025-11-25: the connection that made it hears its status. */
	struct mcp_conn		*origin;
	LIST_HEAD(, task_wait)	 waiters;
	unsigned		 nwait;
};

static struct {
	struct server		*srv;
	struct task_store	 store;
	struct event		*sweep;
	int			 open;
} tasks;

/* The tools that may run long enough to be worth a task. */
static int
task_tool(const char *name)
{
	return name != NULL && (strcmp(name, "execute_python") == 0 ||
	    strcmp(name, "run_command") == 0);
}

/* ------------------------------------------------------------ views */

/* A task as 2025-11-25 (ttl, pollInterval) or 2026-07-28 (ttlMs,
 * pollIntervalMs, and the outcome inline) shows it. */
static json_t *
task_view(const struct task_rec *t, int modern)
{
	char	 created[32], updated[32];
	json_t	*o;

	task_time(t->created_ms, created);
	task_time(t->updated_ms, updated);
	o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:i}", "taskId", t->id,
	    "status", task_status_name(t->status), "createdAt", created,
	    "lastUpdatedAt", updated, modern ? "ttlMs" : "ttl",
	    (json_int_t)t->ttl_ms, modern ? "pollIntervalMs" : "pollInterval",
	    TASK_POLL_MS);
	if (o == NULL)
		return NULL;
	if (t->message[0] != '\0')
		json_object_set_new(o, "statusMessage",
		    json_string(t->message));
	if (modern && t->status == TASK_COMPLETED && t->result != NULL)
		json_object_set(o, "result", t->result);
	if (modern && t->status == TASK_FAILED && t->error != NULL)
		json_object_set(o, "error", t->error);
	return o;
}

static void
answer(struct mcp_conn *c, const json_t *id, json_t *result, int modern)
{
	mcp_respond(c, id, modern ? era_result(result, ERA_NOCACHE) : result);
}

/* What the call would have answered: its result, or its error. */
static void
outcome(struct mcp_conn *c, const json_t *id, const struct task_rec *t)
{
	json_t		*r, *data;
	const char	*msg;
	int		 code;

	if (t == NULL) {
		mcp_error(c, id, RPC_INVALID_PARAMS, "Failed to retrieve task: "
		    "Task has expired");
		return;
	}
	switch (t->status) {
	case TASK_COMPLETED:
		r = json_deep_copy(t->result);
		if (r != NULL)
			json_object_set_new(r, "_meta", json_pack("{s:{s:s}}",
			    TASK_RELATED, "taskId", t->id));
		mcp_respond(c, id, r);
		break;
	case TASK_FAILED:
		code = (int)json_integer_value(json_object_get(t->error,
		    "code"));
		msg = json_string_value(json_object_get(t->error, "message"));
		if ((data = json_object_get(t->error, "data")) != NULL)
			mcp_error_data(c, id, code, msg, json_incref(data));
		else
			mcp_error(c, id, code, "%s", msg);
		break;
	case TASK_CANCELLED:
		mcp_error(c, id, RPC_INTERNAL_ERROR, "the task was cancelled");
		break;
	default:
		/* Working, yet nothing runs it: never left so, but say so. */
		mcp_error(c, id, RPC_INTERNAL_ERROR, "the task's call is gone");
		break;
	}
}

/* Whoever waits in tasks/result hears how it ended. */
static void
wake(struct task_run *run)
{
	struct task_wait	*w;

	while ((w = LIST_FIRST(&run->waiters)) != NULL) {
		LIST_REMOVE(w, entry);
		outcome(w->conn, w->id, run->rec);
		mcp_conn_unref(w->conn);
		json_decref(w->id);
		free(w);
	}
	run->nwait = 0;
}

/*
 * The task's status changed: 2026-07-28 listeners of its principal hear
 * of it (listen.c); a 2025-11-25 task's own connection gets the optional
 * notifications/tasks/status, without related-task (the spec's SHOULD
 * NOT).  Over HTTP that connection has no stream of its own to carry it
 * (we serve no GET stream): the transport drops it there.
 */
static void
changed(struct task_run *run)
{
	listen_task_changed(run->rec);
	if (run->origin != NULL)
		mcp_notify(run->origin, "notifications/tasks/status",
		    task_view(run->rec, 0));
}

/* ------------------------------------------------------------ the port */

static struct task_run *
run_of(struct tool_req *rq)
{
	return (struct task_run *)(void *)((char *)rq -
	    offsetof(struct task_run, rq));
}

/* The tool is done with it: record how it ended (unless it was cancelled
 * or expired first), wake the waiters, let go. */
static void
run_end(struct task_run *run, enum task_status st, json_t *result,
    json_t *error, const char *msg)
{
	enum task_status	 was;

	/* mcp-exec stops, and stops the calls: that is not how the task
	 * ended.  It stays working on disk; the next start fails it. */
	if (run->rec != NULL && tasks.srv->stopping) {
		run->rec->run = NULL;
		run->rec = NULL;
	}
	if (run->rec != NULL) {
		was = run->rec->status;
		if (task_store_finish(&tasks.store, run->rec, st, result, error,
		    msg, task_now_ms()) == -1 && run->rec->status == st)
			log_warnx("task %s: its end was not stored",
			    run->rec->id);
		run->rec->run = NULL;
		if (run->rec->status != was)
			changed(run);
	} else {
		json_decref(result);
		json_decref(error);
	}
	wake(run);
	if (run->origin != NULL)
		mcp_conn_unref(run->origin);
	free(run);
}

static void
port_result(struct tool_req *rq, json_t *result)
{
	/* A tool error (isError) is still the call's result: completed, as
	 * the extension says, so tasks/result and the SDKs can hand it on. */
	run_end(run_of(rq), TASK_COMPLETED, result, NULL, NULL);
}

static void
port_fault(struct tool_req *rq, enum tool_fault fault, const char *msg)
{
	int	 code = mcp_fault_code(fault, 1);
	json_t	*err = json_pack("{s:i, s:s}", "code", code, "message", msg);

	/* The fleet's faults keep their data: tasks/result repeats it. */
	if (err != NULL && rq->fault_data != NULL)
		json_object_set(err, "data", rq->fault_data);
	json_decref(rq->fault_data);
	rq->fault_data = NULL;
	run_end(run_of(rq), TASK_FAILED, NULL, err, msg);
}

static void
port_drop(struct tool_req *rq)
{
	/* Cancelled: already recorded so.  Otherwise it ended unanswered. */
	run_end(run_of(rq), TASK_FAILED, NULL, NULL,
	    "the call ended without a result");
}

/* Nobody listens to a task as it runs: a poll is how it is followed. */
static void
port_notify(struct tool_req *rq, const char *method, json_t *params)
{
	json_decref(params);
}

static void
port_log(struct tool_req *rq, const char *level, json_t *data)
{
	json_decref(data);
}

/* A task outlives the request and connection that made it. */
static int
port_reachable(struct tool_req *rq)
{
	return 1;
}

static const struct tool_port task_port = {
	port_result, port_fault, port_drop, port_notify, port_log,
	port_reachable
};

/* Cancels the code as notifications/cancelled does; the task already
 * reads `status` with msg. */
static void
run_stop(struct task_run *run, enum task_status st, const char *msg)
{
	if (run->rec != NULL && run->rec->status == TASK_WORKING) {
		if (task_store_finish(&tasks.store, run->rec, st, NULL, NULL,
		    msg, task_now_ms()) == -1)
			log_warnx("task %s: its cancellation was not stored",
			    run->rec->id);
		if (run->rec->status != TASK_WORKING)
			changed(run);
	}
	wake(run);
	/* May end the request at once (port_drop frees run). */
	tool_cancel(&run->rq);
}

/*
 * The sweep found it expired while it runs: it ends failed, and whoever
 * follows it hears so (its listeners, its 2025-11-25 connection, its
 * tasks/result waiters) before it is forgotten; then its code is stopped.
 */
static void
expired(struct task_rec *t, void *arg)
{
	struct task_run	*run = t->run;
	enum task_status was = t->status;

	if (task_store_finish(&tasks.store, t, TASK_FAILED, NULL,
	    json_pack("{s:i, s:s}", "code", RPC_INTERNAL_ERROR, "message",
	    TASK_EXPIRED_MSG), TASK_EXPIRED_MSG, task_now_ms()) == -1 &&
	    t->status != was)
		log_warnx("task %s: its expiry was not stored", t->id);
	if (t->status != was)
		changed(run);
	wake(run);
	t->run = NULL;
	run->rec = NULL;
	tool_cancel(&run->rq);
}

static void
sweep_cb(int fd, short what, void *arg)
{
	struct timeval	 tv = { TASK_SWEEP_S, 0 };

	task_store_sweep(&tasks.store, task_now_ms(), expired, NULL);
	evtimer_add(tasks.sweep, &tv);
}

int
task_init(struct server *srv, char *err, size_t errlen)
{
	struct timeval	 tv = { TASK_SWEEP_S, 0 };

	tasks.srv = srv;
	if (task_store_open(&tasks.store, srv->conf.state_dir, &srv->conf,
	    task_now_ms(), RESTART_MSG, err, errlen) == -1)
		return -1;
	tasks.open = 1;
	if ((tasks.sweep = evtimer_new(srv->base, sweep_cb, NULL)) == NULL)
		fatalx("evtimer_new");
	evtimer_add(tasks.sweep, &tv);
	return 0;
}

void
task_shutdown(void)
{
	struct task_rec	*t;

	if (tasks.sweep != NULL)
		event_free(tasks.sweep);
	tasks.sweep = NULL;
	/* Tasks still running keep their records: the next start fails
	 * them with RESTART_MSG.  A tool ending later finds no record. */
	if (tasks.open) {
		TAILQ_FOREACH(t, &tasks.store.tasks, entry) {
			if (t->run != NULL)
				((struct task_run *)t->run)->rec = NULL;
			t->run = NULL;
		}
		task_store_close(&tasks.store);
	}
	tasks.open = 0;
}

/* ------------------------------------------------------------ creating */

int
task_tools_call(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	const json_t	*task = json_object_get(params, "task"), *ttl;
	const char	*name = json_string_value(json_object_get(params, "name"));
	struct task_run	*run;
	struct task_rec	*t;
	char		 why[256];
	json_t		*view;
	int64_t		 want = -1;

	/* 2026-07-28: a task when the client takes them; 2025-11-25: when
	 * the request asks for one. */
	if (r->modern ? !r->tasks_ext || !task_tool(name) : task == NULL)
		return 0;
	/* No tool named: the direct call's -32602 says so. */
	if (name == NULL)
		return 0;
	if (!tasks.open) {
		mcp_error(c, id, RPC_INTERNAL_ERROR, "tasks are not available");
		return 1;
	}
	if (!r->modern) {
		ttl = json_object_get(task, "ttl");
		if (!json_is_object(task) || (ttl != NULL && !json_is_null(ttl) &&
		    (!json_is_integer(ttl) || json_integer_value(ttl) < 1))) {
			mcp_error(c, id, RPC_INVALID_PARAMS, "params.task: an "
			    "object with an optional ttl (ms, above 0)");
			return 1;
		}
		if (json_is_integer(ttl))
			want = (int64_t)json_integer_value(ttl);
		/* execution.taskSupport is absent on the others. */
		if (!task_tool(name)) {
			mcp_error(c, id, RPC_METHOD_NOT_FOUND, "tool %.64s "
			    "does not run as a task", name ? name : "");
			return 1;
		}
	}
	if ((t = task_store_new(&tasks.store, c->principal, name, want,
	    task_now_ms(), why, sizeof(why))) == NULL) {
		mcp_error(c, id, RPC_INVALID_REQUEST, "%s", why);
		return 1;
	}
	run = xcalloc(1, sizeof(*run));
	run->rec = t;
	t->run = run;
	LIST_INIT(&run->waiters);
	snprintf(run->principal, sizeof(run->principal), "%s", c->principal);
	if (!r->modern) {
		run->origin = c;
		mcp_conn_ref(c);
	}
	run->client = r->modern ? r->client : c->client;
	run->rq.port = &task_port;
	run->rq.srv = c->srv;
	run->rq.principal = run->principal;
	run->rq.client = &run->client;
	snprintf(run->rq.traceparent, sizeof(run->rq.traceparent), "%s",
	    r->traceparent);
	snprintf(run->rq.tracestate, sizeof(run->rq.tracestate), "%s",
	    r->tracestate);
	snprintf(run->rq.task_id, sizeof(run->rq.task_id), "%s", t->id);
	if (json_is_string(id))
		snprintf(run->rq.request_id, sizeof(run->rq.request_id), "%s",
		    json_string_value(id));
	else
		snprintf(run->rq.request_id, sizeof(run->rq.request_id), "%lld",
		    (long long)json_integer_value(id));
	str_ascii(run->rq.request_id);
	/* On disk already; the client hears of it before the tool runs. */
	view = task_view(t, r->modern);
	if (r->modern) {
		view = era_result(view, ERA_NOCACHE);
		json_object_set_new(view, "resultType", json_string("task"));
		mcp_respond(c, id, view);
	} else
		mcp_respond(c, id, json_pack("{s:o}", "task", view));
	tools_call(&run->rq, params);
	return 1;
}

/* ------------------------------------------------------------ requests */

static struct task_rec *
lookup(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	struct task_rec	*t = NULL;
	const char	*tid;
	char		 node[FLEET_NODE_MAX], msg[256];

	/* 2026-07-28: the extension's methods are for who declares it
	 * (SEP-2575 MissingRequiredClientCapability). */
	if (r->modern && !r->tasks_ext) {
		mcp_error_data(c, id, MCP_MISSING_CAPABILITY, "Missing "
		    "required client capability", json_pack("{s:{s:{s:{}}}}",
		    "requiredCapabilities", "extensions", TASK_EXTENSION));
		return NULL;
	}
	tid = json_string_value(json_object_get(params, "taskId"));
	if (tasks.open)
		t = task_store_find(&tasks.store, c->principal, tid,
		    task_now_ms());
	/* Another node's: the router should have sent it there. */
	if (t == NULL && tasks.srv != NULL && fleet_foreign(
	    tasks.srv->conf.fleet.node_id, tid, node)) {
		snprintf(msg, sizeof(msg), FLEET_WRONG_NODE_FMT, node,
		    FLEET_SELF(tasks.srv->conf.fleet.node_id));
		mcp_error_data(c, id, FLEET_ERR_WRONG_NODE, msg,
		    fleet_error_data(FLEET_WRONG_NODE, node, tid));
	}
	/* Unknown, expired and someone else's read alike: no oracle. */
	else if (t == NULL)
		mcp_error(c, id, RPC_INVALID_PARAMS, "%s", NOT_FOUND_MSG);
	return t;
}

void
task_m_get(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	struct task_rec	*t;

	if ((t = lookup(c, id, params, r)) != NULL)
		answer(c, id, task_view(t, r->modern), r->modern);
}

void
task_m_result(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	struct task_rec		*t;
	struct task_run		*run;
	struct task_wait	*w;

	if ((t = lookup(c, id, params, r)) == NULL)
		return;
	if (t->status != TASK_WORKING || (run = t->run) == NULL) {
		outcome(c, id, t);
		return;
	}
	/* Blocks until it ends; a few may wait, not any number. */
	if (run->nwait >= TASK_WAITERS_MAX) {
		mcp_error(c, id, RPC_INVALID_REQUEST, "%d requests already "
		    "wait for this task", TASK_WAITERS_MAX);
		return;
	}
	w = xcalloc(1, sizeof(*w));
	w->conn = c;
	w->id = json_deep_copy(id);
	mcp_conn_ref(c);
	LIST_INSERT_HEAD(&run->waiters, w, entry);
	run->nwait++;
}

void
task_m_list(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	const json_t	*cur = json_object_get(params, "cursor");
	struct task_rec	*t, *from = NULL;
	json_t		*arr;
	int64_t		 now = task_now_ms();
	unsigned	 n = 0;

	/* The cursor is the last id of the page before, the caller's own. */
	if (cur != NULL && (!tasks.open || (from = task_store_find(
	    &tasks.store, c->principal, json_string_value(cur), now)) ==
	    NULL)) {
		mcp_error(c, id, RPC_INVALID_PARAMS, "params.cursor: not a "
		    "cursor of ours");
		return;
	}
	arr = json_array();
	t = from != NULL ? TAILQ_NEXT(from, entry) : tasks.open ?
	    TAILQ_FIRST(&tasks.store.tasks) : NULL;
	for (; t != NULL; t = TAILQ_NEXT(t, entry)) {
		if (strcmp(t->principal, c->principal) != 0 ||
		    t->created_ms + t->ttl_ms <= now)
			continue;
		if (n == TASK_PAGE)
			break;
		json_array_append_new(arr, task_view(t, 0));
		from = t;
		n++;
	}
	if (t != NULL)
		mcp_respond(c, id, json_pack("{s:o, s:s}", "tasks", arr,
		    "nextCursor", from->id));
	else
		mcp_respond(c, id, json_pack("{s:o}", "tasks", arr));
}

void
task_m_cancel(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	struct task_rec	*t;

	if ((t = lookup(c, id, params, r)) == NULL)
		return;
	/* 2025-11-25: an ended task cannot be cancelled; 2026-07-28: the
	 * request is acknowledged, and the task keeps how it ended. */
	if (t->status != TASK_WORKING && !r->modern) {
		mcp_error(c, id, RPC_INVALID_PARAMS, "Cannot cancel task: "
		    "already in terminal status '%s'",
		    task_status_name(t->status));
		return;
	}
	if (t->status == TASK_WORKING && t->run != NULL)
		run_stop(t->run, TASK_CANCELLED, "The task was cancelled by "
		    "request.");
	answer(c, id, r->modern ? json_object() : task_view(t, 0), r->modern);
}

void
task_m_update(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	/* Our tools never ask for input: nothing outstanding to answer. */
	if (lookup(c, id, params, r) != NULL)
		answer(c, id, json_object(), 1);
}

struct task_rec *
task_find_own(const char *principal, const char *id)
{
	return tasks.open && id != NULL ? task_store_find(&tasks.store,
	    principal, id, task_now_ms()) : NULL;
}

json_t *
task_detail(const struct task_rec *t)
{
	return task_view(t, 1);
}

/* ------------------------------------------------------------ advertising */

json_t *
task_capability(void)
{
	return json_pack("{s:{}, s:{}, s:{s:{s:{}}}}", "list", "cancel",
	    "requests", "tools", "call");
}

void
task_mark_tools(json_t *tools)
{
	json_t	*t;
	size_t	 i;

	json_array_foreach(tools, i, t)
		if (task_tool(json_string_value(json_object_get(t, "name"))))
			json_object_set_new(t, "execution", json_pack("{s:s}",
			    "taskSupport", "optional"));
}
