/*
 * The session table: find, hold, stage, close, reap, and the live list.
 * A session's calls and its driver's protocol are session_call.c, its
 * artifact store session_artifacts.c.  Trusts nothing a session's driver
 * says (it reads nothing from it here).
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet_quota.h"
#include "frame.h"
#include "log.h"
#include "network.h"
#include "sandbox/stage.h"
#include "pool.h"
#include "session.h"
#include "session_int.h"
#include "util.h"

/* ------------------------------------------------------------ helpers */

int
session_nonblock(int fd)
{
	int	 fl;

	return (fl = fcntl(fd, F_GETFL)) == -1 ? -1 :
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* The kernel's OOM killer struck n times so far: each kill counted once. */
void
session_count_oom(struct session *s, uint64_t n)
{
	if (n > s->oom_counted) {
		counters_oom_kills(&s->srv->counters, n - s->oom_counted);
		s->oom_counted = n;
	}
}

static void
count_oom(struct session *s)
{
	if (s->sb.cg != NULL)
		session_count_oom(s, cgroup_oom_kills(s->sb.cg));
}

/* ------------------------------------------------------------ sessions */

/*
 * The live list changed: it is what ops/ (status, metrics) reads of the
 * sessions, so they never look into the table themselves.
 */
void
sessions_publish(struct server *srv)
{
	json_decref(srv->live);
	srv->live = sessions_describe(srv);
	if (srv->published != NULL)
		srv->published(srv);
}

static void
publish_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct server	*srv = arg;

	if (srv->published != NULL)
		srv->published(srv);
}

/*
 * The live list now, the status file from the loop's next turn: a new
 * session's request is then waiting on the audit daemon, so the write
 * costs it nothing (1.1 ms on a disk-backed state_dir, 0.2 ms on tmpfs).
 */
void
sessions_publish_soon(struct server *srv)
{
	struct timeval	 now = { 0, 0 };

	json_decref(srv->live);
	srv->live = sessions_describe(srv);
	if (srv->published != NULL && (srv->base == NULL ||
	    event_base_once(srv->base, -1, EV_TIMEOUT, publish_cb, srv,
	    &now) == -1))
		srv->published(srv);
}

const struct profile *
server_profile(const struct server *srv, const char *name)
{
	size_t	 i;

	for (i = 0; i < srv->nprofiles; i++)
		if (strcmp(srv->profiles[i].name, name) == 0)
			return &srv->profiles[i];
	return strcmp(srv->profile.name, name) == 0 ? &srv->profile : NULL;
}

struct session *
session_find(struct server *srv, const char *id, const char *principal)
{
	struct session	*s;

	LIST_FOREACH(s, &srv->sessions, entry)
		if (strcmp(s->id, id) == 0 && strcmp(s->principal, principal) == 0)
			return s;
	return NULL;
}

/* For the audit trail only (a refusal's reason), never for access. */
int
session_exists(struct server *srv, const char *id)
{
	struct session	*s;

	LIST_FOREACH(s, &srv->sessions, entry)
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
	return &s->prof;
}

void
session_set_fleet_lease(struct session *s, uint64_t lease)
{
	s->fleet_lease = lease;
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
	s->last_used = mono_ms();
}

int
session_stage_files(struct session *s, struct stage_item *items, size_t n,
    char *err, size_t errlen)
{
	char	 dir[PATH_MAX];
	int	 fd, rv;

	if (n == 0)
		return 0;
	if (xsnprintf(dir, sizeof(dir), "%s/inputs", s->spec.dir) == -1 ||
	    (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "inputs: %s", strerror(errno));
		return -1;
	}
	rv = stage_plan(&s->prof.inputs, &s->staged, fd, items, n, err,
	    errlen) == 0 && stage_commit(&s->prof.inputs, &s->staged, fd,
	    items, n, err, errlen) == 0 ? 0 : -1;
	stage_release(items, n);
	close(fd);
	return rv;
}

void
session_close(struct session *s, const char *reason)
{
	session_end(s, strcmp(reason, "expired") == 0 ? "session_expired" :
	    "session_closed", reason);
}

/*
 * Ends a session, audited as event (session_closed, _expired, _evicted),
 * exactly once: every way a session ends comes here, and some of them
 * from inside another (a call aborted here finishes, and a killed call's
 * finish would close its session).  A session passes through ending
 * once; the first caller tears it down, any later or nested one returns.
 * It leaves the table first, so nothing finds it while its call finishes.
 * The struct itself goes with its last reference (session_release).
 */
void
session_end(struct session *s, const char *event, const char *reason)
{
	struct server	*srv = s->srv;

	if (s->ending)
		return;
	s->ending = 1;
	LIST_REMOVE(s, entry);
	srv->nsessions--;
	if (s->call != NULL)
		call_abort(s->call, reason);
	if (srv->quota != NULL)
		quota_session_close(srv->quota, &s->bill);
	fleet_quota_release(srv->fleet, s->fleet_lease);
	s->fleet_lease = 0;
	sessions_publish(srv);
	count_oom(s);
	counters_session_closed(&srv->counters, reason);
	server_audit(srv, json_pack("{s:s, s:s, s:s, s:s, s:I}", "event",
	    event, "principal", s->principal, "session_id", s->id,
	    "reason", reason, "idle_s",
	    (json_int_t)((mono_ms() - s->last_used) / 1000)));
	session_discard(s);			/* and the table's reference */
	pool_kick(srv);				/* room under the cap again */
}

/* One more holder of s: it outlives a session_end until released. */
void
session_retain(struct session *s)
{
	s->refs++;
}

void
session_release(struct session *s)
{
	if (--s->refs == 0)
		free(s);
}

void
sessions_close_all(struct server *srv, const char *reason)
{
	while (!LIST_EMPTY(&srv->sessions))
		session_close(LIST_FIRST(&srv->sessions), reason);
}

void
sessions_reap(struct server *srv)
{
	struct session	*s, *next;
	uint64_t	 idle = (uint64_t)srv->conf.server.idle_timeout_s * 1000;

	for (s = LIST_FIRST(&srv->sessions); s != NULL; s = next) {
		next = LIST_NEXT(s, entry);
		if (!session_busy(s) && mono_ms() - s->last_used >= idle)
			session_close(s, "expired");
	}
}

json_t *
sessions_describe(struct server *srv)
{
	struct session	*s;
	json_t		*list = json_array();

	LIST_FOREACH(s, &srv->sessions, entry)
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, "
		    "s:s, s:I, s:b}", "session_id", s->id, "principal",
		    s->principal, "sandbox", s->spec.id, "network",
		    s->prof.network, "since", s->since, "idle_s",
		    (json_int_t)((mono_ms() - s->last_used) / 1000), "busy",
		    session_busy(s)));
	return list;
}
