/*
 * The session caps (server.sessions.max_per_principal, max_total).  At a
 * cap the least recently used idle session makes room, so one-shot calls
 * never run into sessions nobody uses; only busy sessions refuse a call.
 * And what a principal holds against them (session_list).  Split from
 * session.c for length; the same trust applies.
 */
#include <stdio.h>
#include <string.h>

#include "pool.h"
#include "session.h"
#include "session_int.h"

json_t *
session_list(struct server *srv, const char *principal)
{
	struct session	*s;
	json_t		*list = json_array();
	uint64_t	 idle, ttl, left;

	ttl = (uint64_t)srv->conf.server.idle_timeout_s * 1000;
	LIST_FOREACH(s, &srv->sessions, entry) {
		if (strcmp(s->principal, principal) != 0)
			continue;
		idle = mono_ms() - s->last_used;
		/* A busy one's clock starts again when its call ends. */
		left = session_busy(s) ? ttl : idle >= ttl ? 0 : ttl - idle;
		json_array_append_new(list, json_pack("{s:s, s:s, s:I, s:I, "
		    "s:b}", "session_id", s->id, "created", s->since, "idle_s",
		    (json_int_t)(idle / 1000), "expires_in_s",
		    (json_int_t)(left / 1000), "busy", session_busy(s)));
	}
	return list;
}

static unsigned
principal_sessions(struct server *srv, const char *principal)
{
	struct session	*s;
	unsigned	 n = 0;

	LIST_FOREACH(s, &srv->sessions, entry)
		n += strcmp(s->principal, principal) == 0;
	return n;
}

/* The least recently used idle session: the principal's, or anyone's. */
static struct session *
lru_idle(struct server *srv, const char *principal)
{
	struct session	*s, *lru = NULL;

	LIST_FOREACH(s, &srv->sessions, entry)
		if (!session_busy(s) && (principal == NULL ||
		    strcmp(s->principal, principal) == 0) &&
		    (lru == NULL || s->last_used < lru->last_used))
			lru = s;
	return lru;
}

/*
 * Room for one more session of the principal: clients that never pass
 * session_id (one-shot calls) would otherwise run into the caps with
 * sessions nobody uses.  The least recently used idle session goes, the
 * principal's own first; only when every session counted is busy is the
 * call refused.  The caller learns nothing of whose session went: the
 * refusal names only the caps.
 */
int
sessions_make_room(struct server *srv, const char *principal, char *err,
    size_t errlen)
{
	const struct server_conf	*sc = &srv->conf.server;
	struct session			*v;

	/* A loop: a reload may have lowered the caps below what lives. */
	while (principal_sessions(srv, principal) >=
	    sc->max_sessions_per_principal) {
		if ((v = lru_idle(srv, principal)) == NULL) {
			snprintf(err, errlen, "session limit reached: all %u "
			    "sessions this principal may hold are busy "
			    "running calls (server.sessions.max_per_principal)"
			    "; wait for one to finish, or close one with "
			    "close_session", sc->max_sessions_per_principal);
			return -1;
		}
		session_end(v, "session_evicted", SESSION_EVICTED_PRINCIPAL);
	}
	/* Sandboxes built ahead count, and go first: nobody uses them. */
	while (srv->nsessions + srv->npool >= sc->max_sessions) {
		if (pool_evict(srv))
			continue;
		if ((v = lru_idle(srv, NULL)) == NULL) {
			snprintf(err, errlen, "session limit reached: all %u "
			    "sessions this server may hold are busy running "
			    "calls (server.sessions.max_total); try again when "
			    "one has finished", sc->max_sessions);
			return -1;
		}
		session_end(v, "session_evicted", SESSION_EVICTED_TOTAL);
	}
	return 0;
}
