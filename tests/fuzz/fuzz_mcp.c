/*
 * libFuzzer target: the MCP message path.  Each line of the input is one
 * message from an untrusted client, handed to mcp_receive (mcp-exec/mcp.c)
 * as the stdio transport would, and dispatched to every method there is.
 * The transport is fake: every message the server sends is checked to be
 * one valid JSON-RPC 2.0 object (a reply or a notification), or we abort.
 * Sessions are fake too: this file defines every function of session.c
 * and session_artifacts.c, so the archive's never link and no sandbox is
 * built; tools/call goes as far as starting the call and answering it.
 * The audit daemon is absent and audit_required is off, so calls "run".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "protocol/mcp.h"
#include "reload.h"
#include "sessions/pool.h"
#include "sessions/server.h"
#include "sessions/session.h"
#include "sessions/session_int.h"
#include "util.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#ifndef STOCKADE_SRCDIR
#define STOCKADE_SRCDIR	"."
#endif
#define FUZZ_LINES_MAX	64
#define FUZZ_LOOPS	8

/* ------------------------------------------------------------ fakes */

struct call {
	struct session		*s;
	struct call_hooks	 hooks;
	struct event		*ev;
	int			 cancelled;
};

static struct server	 srv;
static unsigned		 nsent;

static void
fake_finish(struct call *c, int gone)
{
	struct call_result	 r;
	struct session		*s = c->s;

	memset(&r, 0, sizeof(r));
	r.session_id = s->id;
	r.stdout_text = xstrdup("out\n");
	r.stderr_text = xstrdup("");
	r.stdout_bytes = 4;
	r.cancelled = c->cancelled;
	r.session_gone = gone;
	r.exit_code = gone ? 137 : 0;
	r.artifacts = json_array();
	s->call = NULL;
	c->hooks.done(c->hooks.arg, &r);
	free(r.stdout_text);
	free(r.stderr_text);
	json_decref(r.artifacts);
	event_free(c->ev);
	free(c);
}

static void
fake_run_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct call	*c = arg;

	if (c->hooks.progress != NULL)
		c->hooks.progress(c->hooks.arg, 1, "out\n", 4, 4);
	fake_finish(c, 0);
}

const struct profile *
server_profile(const struct server *sv, const char *name)
{
	size_t	 i;

	for (i = 0; i < sv->nprofiles; i++)
		if (strcmp(sv->profiles[i].name, name) == 0)
			return &sv->profiles[i];
	return strcmp(sv->profile.name, name) == 0 ? &sv->profile : NULL;
}

struct session *
session_create(struct server *sv, const char *principal,
    const struct profile *prof, const struct quota_bill *bill,
    const json_t *client, char *err, size_t errlen)
{
	struct session	*s;
	static unsigned	 n;

	if (sv->nsessions >= sv->conf.server.max_sessions) {
		snprintf(err, errlen, "session limit reached");
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->srv = sv;
	snprintf(s->id, sizeof(s->id), "sess_%032u", ++n);
	snprintf(s->principal, sizeof(s->principal), "%s", principal);
	LIST_INSERT_HEAD(&sv->sessions, s, entry);
	sv->nsessions++;
	return s;
}

struct session *
session_find(struct server *sv, const char *id, const char *principal)
{
	struct session	*s;

	LIST_FOREACH(s, &sv->sessions, entry)
		if (strcmp(s->id, id) == 0 && strcmp(s->principal, principal) == 0)
			return s;
	return NULL;
}

int
session_exists(struct server *sv, const char *id)
{
	struct session	*s;

	LIST_FOREACH(s, &sv->sessions, entry)
		if (strcmp(s->id, id) == 0)
			return 1;
	return 0;
}

const char *
session_id(const struct session *s)
{
	return s->id;
}

const struct profile *
session_profile(const struct session *s)
{
	return &s->srv->profile;
}

void
session_set_fleet_lease(struct session *s, uint64_t lease)
{
	/* No fleet: here: nothing to hold. */
}

int
session_busy(const struct session *s)
{
	return s->call != NULL || s->held;
}

void
session_hold(struct session *s, int on)
{
	s->held = on;
}

int
session_stage_files(struct session *s, struct stage_item *items, size_t n,
    char *err, size_t errlen)
{
	size_t	 i;

	/* Calls with an odd count of inputs "stage": the rest are refused. */
	if (n % 2 == 0 && n > 0) {
		snprintf(err, errlen, "%s: refused", items[0].name);
		return -1;
	}
	for (i = 0; i < n; i++) {
		items[i].size = items[i].len;
		items[i].sha256[0] = '\0';
	}
	return 0;
}

struct call *
session_exec(struct session *s, const char *code, size_t len,
    unsigned timeout_ms, const struct call_hooks *hooks, char *err,
    size_t errlen)
{
	struct timeval	 now = { 0, 0 };
	struct call	*c;

	if (s->call != NULL) {
		snprintf(err, errlen, "the session is running another call");
		return NULL;
	}
	if (len % 7 == 3) {
		snprintf(err, errlen, "the code could not be framed");
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->s = s;
	c->hooks = *hooks;
	if ((c->ev = evtimer_new(s->srv->base, fake_run_cb, c)) == NULL)
		abort();
	evtimer_add(c->ev, &now);
	s->call = c;
	return c;
}

void
call_cancel(struct call *c)
{
	c->cancelled = 1;
}

void
session_close(struct session *s, const char *reason)
{
	if (s->call != NULL)
		fake_finish(s->call, 1);
	LIST_REMOVE(s, entry);
	s->srv->nsessions--;
	free(s);
}

void
sessions_close_all(struct server *sv, const char *reason)
{
	while (!LIST_EMPTY(&sv->sessions))
		session_close(LIST_FIRST(&sv->sessions), reason);
}

json_t *
sessions_describe(struct server *sv)
{
	return json_array();
}

void
sessions_reap(struct server *sv)
{
}

/* No sandboxes here, so no warm pool for a reload to drain. */
void
pool_drain(struct server *sv)
{
}

json_t *
session_list(struct server *sv, const char *principal)
{
	struct session	*s;
	json_t		*list = json_array();

	LIST_FOREACH(s, &sv->sessions, entry)
		if (strcmp(s->principal, principal) == 0)
			json_array_append_new(list, json_pack("{s:s, s:s, s:i, "
			    "s:i, s:b}", "session_id", s->id, "created",
			    "2026-12-01T00:00:00Z", "idle_s", 0, "expires_in_s",
			    300, "busy", 0));
	return list;
}

json_t *
session_resources(struct server *sv, const char *principal)
{
	struct session	*s;
	json_t		*list = json_array();

	LIST_FOREACH(s, &sv->sessions, entry)
		if (strcmp(s->principal, principal) == 0)
			json_array_append_new(list, json_pack("{s:s, s:s}",
			    "uri", "artifact://x/a.txt", "name", "a.txt"));
	return list;
}

int
session_artifact(struct server *sv, const char *principal, const char *id,
    const char *name, char **data, size_t *len, const char **mime)
{
	if (session_find(sv, id, principal) == NULL || strcmp(name, "a.txt"))
		return -1;
	*data = xstrdup("artifact");
	*len = 8;
	*mime = "text/plain";
	return 0;
}

void
session_collect_artifacts(struct session *s, json_t **changed,
    json_t **skipped)
{
	*changed = json_array();
	*skipped = NULL;
}

/* ------------------------------------------------------------ transport */

static int
id_ok(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id) || json_is_null(id);
}

/* Everything the server says must be JSON-RPC 2.0, one object. */
static void
fake_send(void *arg, json_t *msg)
{
	const json_t	*id = json_object_get(msg, "id");
	const json_t	*result = json_object_get(msg, "result");
	const json_t	*error = json_object_get(msg, "error");
	const char	*ver = json_string_value(json_object_get(msg, "jsonrpc"));
	char		*text;

	if (!json_is_object(msg) || ver == NULL || strcmp(ver, "2.0") != 0)
		abort();
	if (json_object_get(msg, "method") != NULL) {
		/* A notification: a method, params, never an id. */
		if (!json_is_string(json_object_get(msg, "method")) ||
		    id != NULL || !json_is_object(json_object_get(msg,
		    "params")))
			abort();
	} else {
		/* A reply: an id and exactly one of result and error. */
		if (id == NULL || !id_ok(id) || (result == NULL) ==
		    (error == NULL))
			abort();
		if (result != NULL && !json_is_object(result))
			abort();
		if (error != NULL && (!json_is_integer(json_object_get(error,
		    "code")) || !json_is_string(json_object_get(error,
		    "message"))))
			abort();
	}
	/* And it must serialise: the transport writes one line of it. */
	if ((text = json_dumps(msg, JSON_COMPACT)) == NULL ||
	    strchr(text, '\n') != NULL)
		abort();
	free(text);
	nsent++;
	json_decref(msg);
}

/* ------------------------------------------------------------ target */

static void
fuzz_init(void)
{
	const char	*rules = STOCKADE_SRCDIR "/rules";

	log_init("fuzz_mcp", 1, -1);
	/* No daemon there: calls go on unaudited, as far as they can. */
	srv.opts.rules_dir = rules;
	srv.opts.audit_socket = "/nonexistent/audit.sock";
	if (server_load(&srv) == -1)
		abort();
	srv.conf.server.audit_required = 0;
	LIST_INIT(&srv.sessions);
	if ((srv.base = event_base_new()) == NULL)
		abort();
	audit_link_init(&srv.audit, srv.base, srv.conf.server.audit_socket,
	    "fuzz");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static int	 ready;
	struct mcp_conn	*c;
	const char	*p = (const char *)data, *end = p + len, *nl;
	int		 lines = 0, i;

	if (!ready) {
		fuzz_init();
		ready = 1;
	}
	c = mcp_conn_new(&srv, "fuzz", fake_send, &srv);
	/* One message per line, as stdio frames them. */
	while (p < end && lines++ < FUZZ_LINES_MAX) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if (nl > p)
			mcp_receive(c, p, (size_t)(nl - p));
		p = nl + 1;
		/* Calls started by this message finish before the next. */
		for (i = 0; i < FUZZ_LOOPS; i++)
			event_base_loop(srv.base, EVLOOP_NONBLOCK);
	}
	srv.stopping = 1;
	sessions_close_all(&srv, "fuzz input done");
	srv.stopping = 0;
	for (i = 0; i < FUZZ_LOOPS; i++)
		event_base_loop(srv.base, EVLOOP_NONBLOCK);
	/* Every call was answered or dropped: nothing holds the conn. */
	if (c->refs != 1 || !LIST_EMPTY(&c->inflight))
		abort();
	mcp_conn_detach(c);
	return 0;
}
