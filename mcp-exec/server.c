/*
 * The server's link to stockade-auditd.  Events are queued on one
 * connection and the event loop reads the acknowledgements as they come,
 * so a call waiting for its execution_started to reach the disk holds up
 * no other session, and the daemon can commit several calls' events with
 * one fdatasync.  The daemon is trusted to keep events; its replies are
 * still checked (audit_client).
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "server.h"
#include "util.h"

/* An event sent and not yet acknowledged. */
struct audit_pending {
	TAILQ_ENTRY(audit_pending) entry;
	uint64_t		 id;		/* on the current connection */
	json_t			*event;		/* kept to send again */
	int			 sync;
	int			 resent;
	uint64_t		 t0;		/* mono ms, first sent */
	audit_done_fn		*done;		/* NULL: nobody waits */
	void			*arg;
};

static void	audit_reset(struct server *, const char *why);

int
server_audit_required(const struct server *srv)
{
	return srv->conf.server.audit_required;
}

/* p is off every queue: calls its callback and frees it. */
static void
pending_finish(struct audit_pending *p, int ok, const char *err)
{
	if (!ok) {
		log_warnx("audit: %s event %s: %s", json_string_value(
		    json_object_get(p->event, "event")), p->done ? "refused" :
		    "lost", err);
	}
	if (p->done != NULL)
		p->done(p->arg, ok, err);
	json_decref(p->event);
	free(p);
}

static void
pending_take(struct server *srv, struct audit_pending *p)
{
	TAILQ_REMOVE(&srv->audit_q, p, entry);
	srv->audit_qlen--;
}

/* Fails every queued event; callbacks may queue new ones meanwhile. */
static void
fail_all(struct server *srv, const char *why)
{
	struct audit_pending	*p;

	while ((p = TAILQ_FIRST(&srv->audit_q)) != NULL) {
		pending_take(srv, p);
		pending_finish(p, 0, why);
	}
}

static int
pending_send(struct server *srv, struct audit_pending *p)
{
	return audit_client_send(&srv->audit, p->event, p->sync, &p->id);
}

static void
audit_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct server		*srv = arg;
	struct audit_pending	*p;
	struct audit_ack	 a;
	char			 err[256], msg[400];
	int			 avail;

	do {
		if (audit_client_recv(&srv->audit, &a, err, sizeof(err)) == -1) {
			audit_reset(srv, err);
			return;
		}
		if (!a.ok && a.id == 0) {
			/* About the connection itself: nothing on it holds. */
			snprintf(msg, sizeof(msg), "%s (%s)", a.code, a.message);
			audit_reset(srv, msg);
			return;
		}
		TAILQ_FOREACH(p, &srv->audit_q, entry)
			if (p->id == a.id)
				break;
		if (p == NULL) {
			audit_reset(srv, "a reply to no event");
			return;
		}
		snprintf(msg, sizeof(msg), "stockade-auditd refused the event: "
		    "%s (%s)", a.code, a.message);
		pending_take(srv, p);
		pending_finish(p, a.ok, a.ok ? NULL : msg);
	} while (srv->audit.fd != -1 &&
	    ioctl(srv->audit.fd, FIONREAD, &avail) == 0 && avail > 0);
}

static int
audit_connect(struct server *srv, char *err, size_t errlen)
{
	/* A daemon that stops reading or answering half a frame must
	 * not stall the event loop for long. */
	struct timeval	 tv = { AUDIT_IO_TIMEOUT_S, 0 };

	if (srv->audit.fd != -1)
		return 0;
	if (audit_client_open(&srv->audit, srv->conf.server.audit_socket,
	    err, errlen) == -1)
		return -1;
	if (setsockopt(srv->audit.fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
	    sizeof(tv)) == -1 || setsockopt(srv->audit.fd, SOL_SOCKET,
	    SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    (srv->audit_ev = event_new(srv->base, srv->audit.fd, EV_READ |
	    EV_PERSIST, audit_read_cb, srv)) == NULL ||
	    event_add(srv->audit_ev, NULL) == -1) {
		snprintf(err, errlen, "audit socket: %s", strerror(errno));
		if (srv->audit_ev != NULL)
			event_free(srv->audit_ev);
		srv->audit_ev = NULL;
		audit_client_close(&srv->audit);
		return -1;
	}
	return 0;
}

static void
audit_disconnect(struct server *srv)
{
	if (srv->audit_ev != NULL)
		event_free(srv->audit_ev);
	srv->audit_ev = NULL;
	audit_client_close(&srv->audit);
}

/*
 * The connection failed.  The daemon may have restarted: each event not
 * yet acknowledged is sent once more on a new connection (the daemon may
 * then hold it twice, which verification shows; losing it would not
 * show).  What cannot be sent again fails.
 */
static void
audit_reset(struct server *srv, const char *why)
{
	struct audit_queue	 old;
	struct audit_pending	*p;
	char			 err[256];
	int			 up;

	log_warnx("audit: %s", why);
	audit_disconnect(srv);
	TAILQ_INIT(&old);
	TAILQ_CONCAT(&old, &srv->audit_q, entry);
	srv->audit_qlen = 0;
	if (!(up = audit_connect(srv, err, sizeof(err)) == 0))
		log_warnx("audit: %s", err);
	while ((p = TAILQ_FIRST(&old)) != NULL) {
		TAILQ_REMOVE(&old, p, entry);
		if (up && !p->resent) {
			p->resent = 1;
			TAILQ_INSERT_TAIL(&srv->audit_q, p, entry);
			srv->audit_qlen++;
			if (pending_send(srv, p) == 0)
				continue;
			pending_take(srv, p);
			up = 0;
		}
		pending_finish(p, 0, "stockade-auditd connection lost");
	}
}

/* A send failed: the connection is reset from the loop, once. */
static void
audit_broken_cb(evutil_socket_t fd, short ev, void *arg)
{
	audit_reset(arg, "cannot send to stockade-auditd");
}

/* Events waiting longer than this mean a stuck daemon. */
static void
audit_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct server		*srv = arg;
	struct audit_pending	*p;

	if ((p = TAILQ_FIRST(&srv->audit_q)) != NULL &&
	    mono_ms() - p->t0 > AUDIT_ACK_TIMEOUT_MS) {
		/* Not sent again: the daemon has them and may yet write. */
		audit_disconnect(srv);
		fail_all(srv, "stockade-auditd did not answer in time");
	}
}

void
server_audit_init(struct server *srv)
{
	struct timeval	 tv = { 1, 0 };

	srv->audit.fd = -1;
	TAILQ_INIT(&srv->audit_q);
	if ((srv->audit_timer = event_new(srv->base, -1, EV_PERSIST,
	    audit_timer_cb, srv)) == NULL || event_add(srv->audit_timer,
	    &tv) == -1 || (srv->audit_broken = event_new(srv->base, -1, 0,
	    audit_broken_cb, srv)) == NULL)
		fatalx("audit events");
}

static int
audit_queue(struct server *srv, json_t *event, int sync, audit_done_fn *done,
    void *arg, char *err, size_t errlen)
{
	struct audit_pending	*p;

	if (event == NULL) {
		snprintf(err, errlen, "event could not be built");
		return -1;
	}
	if (srv->audit_qlen >= AUDIT_PENDING_MAX) {
		snprintf(err, errlen, "%u events await stockade-auditd",
		    srv->audit_qlen);
		goto fail;
	}
	if (audit_connect(srv, err, errlen) == -1)
		goto fail;
	p = xcalloc(1, sizeof(*p));
	p->event = event;
	p->sync = sync;
	p->done = done;
	p->arg = arg;
	p->t0 = mono_ms();
	TAILQ_INSERT_TAIL(&srv->audit_q, p, entry);
	srv->audit_qlen++;
	/* A failed send is the connection's: reset from the loop, which
	 * sends this event again with the others. */
	if (pending_send(srv, p) == -1)
		event_active(srv->audit_broken, EV_TIMEOUT, 0);
	return 0;
fail:
	json_decref(event);
	return -1;
}

void
server_audit(struct server *srv, json_t *event)
{
	char	 err[256];
	json_t	*name;

	name = json_incref(json_object_get(event, "event"));
	if (audit_queue(srv, event, 0, NULL, NULL, err, sizeof(err)) == -1)
		log_warnx("audit: %s event lost: %s", json_string_value(name) ?
		    json_string_value(name) : "an", err);
	json_decref(name);
}

int
server_audit_sync(struct server *srv, json_t *event, audit_done_fn *done,
    void *arg, char *err, size_t errlen)
{
	return audit_queue(srv, event, 1, done, arg, err, errlen);
}

void
server_audit_shutdown(struct server *srv)
{
	uint64_t	 t0 = mono_ms();

	/* Waits (bounded) for what is queued: nothing lost at exit. */
	while (!TAILQ_EMPTY(&srv->audit_q) && srv->audit.fd != -1 &&
	    mono_ms() - t0 < AUDIT_ACK_TIMEOUT_MS)
		audit_read_cb(srv->audit.fd, EV_READ, srv);
	audit_disconnect(srv);
	fail_all(srv, "mcp-exec stopped first");
	event_free(srv->audit_timer);
	event_free(srv->audit_broken);
}
