/*
 * subscriptions/listen (listen.h): each listener is the open request of
 * one client, with the task ids it was acknowledged for.  Bounded three
 * ways: server.listen caps how many are open (per principal, in total)
 * and how long one lives; a listener whose every task has ended closes,
 * as nothing more can come on it.  What a slow reader costs is the
 * transport's to cap (it drops the stream and cancels it here).
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "era.h"
#include "listen.h"
#include "log.h"
#include "task.h"
#include "util.h"

struct listener {
	TAILQ_ENTRY(listener)	 entry;
	struct mcp_conn		*conn;
	json_t			*id;	/* the listen request's: the subscription */
	char			 principal[PRINCIPAL_MAX];
	char			 task[LISTEN_TASKS_MAX][TASK_ID_MAX];
	unsigned char		 ended[LISTEN_TASKS_MAX];
	unsigned		 ntask, nended;
	struct event		*lifetime;
	int			 dead;	/* ended; freed by reap() */
};

static TAILQ_HEAD(, listener)	listeners = TAILQ_HEAD_INITIALIZER(listeners);
static unsigned			nlive;
/* Inside a send, the transport may end listeners (a slow reader, a
 * closed session): nothing is freed then, so no walk loses its place. */
static int			sending;

static void
listener_end(struct listener *l)
{
	if (l->dead)
		return;
	l->dead = 1;
	nlive--;
	evtimer_del(l->lifetime);
}

static void
reap(void)
{
	struct listener	*l, *next;

	if (sending)
		return;
	for (l = TAILQ_FIRST(&listeners); l != NULL; l = next) {
		next = TAILQ_NEXT(l, entry);
		if (!l->dead)
			continue;
		TAILQ_REMOVE(&listeners, l, entry);
		event_free(l->lifetime);
		json_decref(l->id);
		mcp_conn_unref(l->conn);
		free(l);
	}
}

/* A message of the subscription: its _meta says which it is. */
static json_t *
tagged(json_t *o, const json_t *id)
{
	json_t	*meta;

	if (o == NULL)
		return NULL;
	if (!json_is_object(meta = json_object_get(o, "_meta"))) {
		meta = json_object();
		json_object_set_new(o, "_meta", meta);
	}
	json_object_set(meta, LISTEN_SUB_ID, (json_t *)id);
	return o;
}

/* Sends a notification (method) or the closing result (NULL); 0 when
 * the listener has ended meanwhile. */
static int
listener_send(struct listener *l, const char *method, json_t *params)
{
	sending++;
	if (method != NULL)
		mcp_notify(l->conn, method, tagged(params, l->id));
	else
		mcp_respond(l->conn, l->id, tagged(era_result(params,
		    ERA_NOCACHE), l->id));
	sending--;
	return !l->dead;
}

/* The server ends it: the spec's graceful closure, a result. */
static void
listener_close(struct listener *l)
{
	if (listener_send(l, NULL, json_object()))
		listener_end(l);
}

/* A task of the listener's has ended; 0 if the listener has too. */
static int
listener_task(struct listener *l, unsigned i, const struct task_rec *t)
{
	l->ended[i] = 1;
	l->nended++;
	if (!listener_send(l, "notifications/tasks", task_detail(t)))
		return 0;
	if (l->nended == l->ntask) {
		listener_close(l);
		return 0;
	}
	return 1;
}

static void
lifetime_cb(int fd, short what, void *arg)
{
	listener_close(arg);
	reap();
}

static unsigned
count(const char *principal)
{
	struct listener	*l;
	unsigned	 n = 0;

	TAILQ_FOREACH(l, &listeners, entry)
		if (!l->dead && strcmp(l->principal, principal) == 0)
			n++;
	return n;
}

/* The filter's taskIds, checked; -1 after the error reply. */
static int
filter_tasks(struct mcp_conn *c, const json_t *id, const json_t *ids,
    const struct era_req *r)
{
	const json_t	*v;
	size_t		 i;

	if (ids == NULL)
		return 0;
	if (!json_is_array(ids) || json_array_size(ids) > LISTEN_TASKS_MAX) {
		mcp_error(c, id, RPC_INVALID_PARAMS, "params.notifications."
		    "taskIds: an array of at most %d task ids",
		    LISTEN_TASKS_MAX);
		return -1;
	}
	json_array_foreach(ids, i, v) {
		if (!json_is_string(v)) {
			mcp_error(c, id, RPC_INVALID_PARAMS, "params."
			    "notifications.taskIds[%zu]: a string", i);
			return -1;
		}
	}
	/* SEP-2663: task notifications are for who declares the extension. */
	if (!r->tasks_ext) {
		mcp_error_data(c, id, MCP_MISSING_CAPABILITY, "Missing "
		    "required client capability", json_pack("{s:{s:{s:{}}}}",
		    "requiredCapabilities", "extensions", TASK_EXTENSION));
		return -1;
	}
	return 0;
}

void
listen_m_listen(struct mcp_conn *c, const json_t *id, const json_t *params,
    const struct era_req *r)
{
	const struct server_conf *sc = &c->srv->conf.server;
	const json_t	*filter = json_object_get(params, "notifications");
	const json_t	*ids = json_object_get(filter, "taskIds"), *v;
	struct listener	*l, *o;
	const struct task_rec *t;
	struct timeval	 tv = { sc->listen.max_lifetime_s, 0 };
	json_t		*ack, *acked;
	unsigned	 i, j;
	size_t		 k;

	if (!json_is_object(filter)) {
		mcp_error(c, id, RPC_INVALID_PARAMS, "params.notifications: "
		    "an object is required");
		return;
	}
	if (filter_tasks(c, id, ids, r) == -1)
		return;
	/* Stopping: a new one would get its closing result at once. */
	if (c->srv->stopping) {
		mcp_error(c, id, RPC_INTERNAL_ERROR, "mcp-exec is stopping");
		return;
	}
	/* Replies and cancellation go by id: one subscription each. */
	TAILQ_FOREACH(o, &listeners, entry)
		if (o->conn == c && !o->dead && json_equal(o->id, id)) {
			mcp_error(c, id, RPC_INVALID_REQUEST, "a subscription "
			    "with this id is open");
			return;
		}
	if (count(c->principal) >= sc->listen.max_per_principal) {
		mcp_error(c, id, RPC_INVALID_REQUEST, "too many open "
		    "subscriptions/listen streams of yours (%u, "
		    "server.listen.max_per_principal): close one first",
		    sc->listen.max_per_principal);
		return;
	}
	if (nlive >= sc->listen.max_total) {
		mcp_error(c, id, RPC_INVALID_REQUEST, "too many open "
		    "subscriptions/listen streams (%u, server.listen."
		    "max_total): try again later", sc->listen.max_total);
		return;
	}
	l = xcalloc(1, sizeof(*l));
	l->conn = c;
	mcp_conn_ref(c);
	l->id = json_deep_copy(id);
	snprintf(l->principal, sizeof(l->principal), "%s", c->principal);
	/* Only the caller's own live tasks; the rest are left out of the
	 * acknowledgement, unknown and someone else's alike. */
	acked = json_array();
	json_array_foreach(ids, k, v) {
		if ((t = task_find_own(c->principal, json_string_value(v))) ==
		    NULL)
			continue;
		for (j = 0; j < l->ntask; j++)
			if (strcmp(l->task[j], t->id) == 0)
				break;
		if (j < l->ntask)
			continue;
		snprintf(l->task[l->ntask++], TASK_ID_MAX, "%s", t->id);
		json_array_append_new(acked, json_string(t->id));
	}
	ack = json_object();
	if (json_array_size(acked) > 0)
		json_object_set_new(ack, "taskIds", acked);
	else
		json_decref(acked);
	TAILQ_INSERT_TAIL(&listeners, l, entry);
	nlive++;
	if ((l->lifetime = evtimer_new(c->srv->base, lifetime_cb, l)) == NULL)
		fatalx("evtimer_new");
	evtimer_add(l->lifetime, &tv);
	/* The acknowledgement comes first (the spec's MUST), then how the
	 * tasks that ended before we listened ended: nothing is missed. */
	if (listener_send(l, "notifications/subscriptions/acknowledged",
	    json_pack("{s:o}", "notifications", ack))) {
		for (i = 0; i < l->ntask; i++) {
			t = task_find_own(l->principal, l->task[i]);
			if (t != NULL && t->status != TASK_WORKING &&
			    !listener_task(l, i, t))
				break;
		}
	}
	reap();
}

void
listen_task_changed(const struct task_rec *t)
{
	struct listener	*l, *next;
	unsigned	 i;

	for (l = TAILQ_FIRST(&listeners); l != NULL; l = next) {
		/* A send may end this one, never another. */
		next = TAILQ_NEXT(l, entry);
		if (l->dead || strcmp(l->principal, t->principal) != 0)
			continue;
		for (i = 0; i < l->ntask; i++)
			if (!l->ended[i] && strcmp(l->task[i], t->id) == 0)
				break;
		if (i < l->ntask)
			(void)listener_task(l, i, t);
	}
	reap();
}

int
listen_cancel(struct mcp_conn *c, const json_t *rid)
{
	struct listener	*l;

	TAILQ_FOREACH(l, &listeners, entry)
		if (l->conn == c && !l->dead && rid != NULL &&
		    json_equal(l->id, rid)) {
			listener_end(l);
			reap();
			return 1;
		}
	return 0;
}

void
listen_conn_gone(struct mcp_conn *c)
{
	struct listener	*l, *next;

	for (l = TAILQ_FIRST(&listeners); l != NULL; l = next) {
		next = TAILQ_NEXT(l, entry);
		if (l->conn == c)
			listener_end(l);
	}
	reap();
}

unsigned
listen_shutdown(void)
{
	struct listener	*l, *next;
	unsigned	 n = 0;

	for (l = TAILQ_FIRST(&listeners); l != NULL; l = next) {
		next = TAILQ_NEXT(l, entry);
		if (l->dead)
			continue;
		listener_close(l);
		n++;
	}
	reap();
	return n;
}
