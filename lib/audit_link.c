/*
 * A daemon's link to stockade-auditd on its event loop.  Events are
 * queued on one connection and the loop reads the acknowledgements as
 * they come, so a caller waiting for one event to reach the disk holds up
 * nothing else, and the audit daemon can commit many events with one
 * fdatasync.  The audit daemon is trusted to keep events; its replies are
 * still checked (audit_client).
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit_link.h"
#include "log.h"
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

static void	audit_reset(struct audit_link *, const char *why);

/* p is off every queue: calls its callback and frees it. */
static void
pending_finish(struct audit_link *al, struct audit_pending *p, int ok,
    const char *err)
{
	if (!ok) {
		al->lost++;
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
pending_take(struct audit_link *al, struct audit_pending *p)
{
	TAILQ_REMOVE(&al->q, p, entry);
	al->qlen--;
}

/* Fails every queued event; callbacks may queue new ones meanwhile. */
static void
fail_all(struct audit_link *al, const char *why)
{
	struct audit_pending	*p;

	while ((p = TAILQ_FIRST(&al->q)) != NULL) {
		pending_take(al, p);
		pending_finish(al, p, 0, why);
	}
}

static int
pending_send(struct audit_link *al, struct audit_pending *p)
{
	return audit_client_send(&al->client, p->event, p->sync, &p->id);
}

static void
audit_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct audit_link	*al = arg;
	struct audit_pending	*p;
	struct audit_ack	 a;
	char			 err[256], msg[400];
	int			 avail;

	do {
		if (audit_client_recv(&al->client, &a, err, sizeof(err)) == -1) {
			audit_reset(al, err);
			return;
		}
		if (!a.ok && a.id == 0) {
			/* About the connection itself: nothing on it holds. */
			snprintf(msg, sizeof(msg), "%s (%s)", a.code, a.message);
			audit_reset(al, msg);
			return;
		}
		TAILQ_FOREACH(p, &al->q, entry)
			if (p->id == a.id)
				break;
		if (p == NULL) {
			audit_reset(al, "a reply to no event");
			return;
		}
		snprintf(msg, sizeof(msg), "stockade-auditd refused the event: "
		    "%s (%s)", a.code, a.message);
		pending_take(al, p);
		pending_finish(al, p, a.ok, a.ok ? NULL : msg);
	} while (al->client.fd != -1 &&
	    ioctl(al->client.fd, FIONREAD, &avail) == 0 && avail > 0);
}

static int
audit_connect(struct audit_link *al, char *err, size_t errlen)
{
	/* A daemon that stops reading or answering half a frame must
	 * not stall the event loop for long. */
	struct timeval	 tv = { AUDIT_LINK_IO_TIMEOUT_S, 0 };

	if (al->client.fd != -1)
		return 0;
	if (audit_client_open(&al->client, al->socket_path,
	    err, errlen) == -1)
		return -1;
	if (setsockopt(al->client.fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
	    sizeof(tv)) == -1 || setsockopt(al->client.fd, SOL_SOCKET,
	    SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    (al->ev = event_new(al->base, al->client.fd, EV_READ |
	    EV_PERSIST, audit_read_cb, al)) == NULL ||
	    event_add(al->ev, NULL) == -1) {
		snprintf(err, errlen, "audit socket: %s", strerror(errno));
		if (al->ev != NULL)
			event_free(al->ev);
		al->ev = NULL;
		audit_client_close(&al->client);
		return -1;
	}
	return 0;
}

static void
audit_disconnect(struct audit_link *al)
{
	if (al->ev != NULL)
		event_free(al->ev);
	al->ev = NULL;
	audit_client_close(&al->client);
}

/*
 * The connection failed.  The daemon may have restarted: each event not
 * yet acknowledged is sent once more on a new connection (the daemon may
 * then hold it twice, which verification shows; losing it would not
 * show).  What cannot be sent again fails.
 */
static void
audit_reset(struct audit_link *al, const char *why)
{
	struct audit_queue	 old;
	struct audit_pending	*p;
	char			 err[256];
	int			 up;

	log_warnx("audit: %s", why);
	audit_disconnect(al);
	TAILQ_INIT(&old);
	TAILQ_CONCAT(&old, &al->q, entry);
	al->qlen = 0;
	if (!(up = audit_connect(al, err, sizeof(err)) == 0))
		log_warnx("audit: %s", err);
	while ((p = TAILQ_FIRST(&old)) != NULL) {
		TAILQ_REMOVE(&old, p, entry);
		if (up && !p->resent) {
			p->resent = 1;
			TAILQ_INSERT_TAIL(&al->q, p, entry);
			al->qlen++;
			if (pending_send(al, p) == 0)
				continue;
			pending_take(al, p);
			up = 0;
		}
		pending_finish(al, p, 0, "stockade-auditd connection lost");
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
	struct audit_link	*al = arg;
	struct audit_pending	*p;

	if ((p = TAILQ_FIRST(&al->q)) != NULL &&
	    mono_ms() - p->t0 > AUDIT_LINK_ACK_TIMEOUT_MS) {
		/* Not sent again: the daemon has them and may yet write. */
		audit_disconnect(al);
		fail_all(al, "stockade-auditd did not answer in time");
	}
}

void
audit_link_init(struct audit_link *al, struct event_base *base,
    const char *socket_path, const char *who)
{
	struct timeval	 tv = { 1, 0 };

	memset(al, 0, sizeof(*al));
	al->base = base;
	snprintf(al->socket_path, sizeof(al->socket_path), "%s", socket_path);
	snprintf(al->who, sizeof(al->who), "%s", who);
	al->client.fd = -1;
	TAILQ_INIT(&al->q);
	if ((al->timer = event_new(al->base, -1, EV_PERSIST,
	    audit_timer_cb, al)) == NULL || event_add(al->timer,
	    &tv) == -1 || (al->broken = event_new(al->base, -1, 0,
	    audit_broken_cb, al)) == NULL)
		fatalx("audit events");
}

static int
audit_queue(struct audit_link *al, json_t *event, int sync, audit_done_fn *done,
    void *arg, char *err, size_t errlen)
{
	struct audit_pending	*p;

	if (event == NULL) {
		snprintf(err, errlen, "event could not be built");
		al->lost++;
		return -1;
	}
	if (al->qlen >= AUDIT_LINK_PENDING_MAX) {
		snprintf(err, errlen, "%u events await stockade-auditd",
		    al->qlen);
		goto fail;
	}
	if (audit_connect(al, err, errlen) == -1)
		goto fail;
	p = xcalloc(1, sizeof(*p));
	p->event = event;
	p->sync = sync;
	p->done = done;
	p->arg = arg;
	p->t0 = mono_ms();
	TAILQ_INSERT_TAIL(&al->q, p, entry);
	al->qlen++;
	/* A failed send is the connection's: reset from the loop, which
	 * sends this event again with the others.  Until then nothing more
	 * goes on it: it may hold part of a frame (lib/frame.h). */
	if (event_pending(al->broken, EV_TIMEOUT, NULL))
		return 0;
	if (pending_send(al, p) == -1)
		event_active(al->broken, EV_TIMEOUT, 0);
	return 0;
fail:
	al->lost++;
	json_decref(event);
	return -1;
}

void
audit_link_send(struct audit_link *al, json_t *event)
{
	char	 err[256];
	json_t	*name;

	name = json_incref(json_object_get(event, "event"));
	if (audit_queue(al, event, 0, NULL, NULL, err, sizeof(err)) == -1)
		log_warnx("audit: %s event lost: %s", json_string_value(name) ?
		    json_string_value(name) : "an", err);
	json_decref(name);
}

int
audit_link_sync(struct audit_link *al, json_t *event, audit_done_fn *done,
    void *arg, char *err, size_t errlen)
{
	return audit_queue(al, event, 1, done, arg, err, errlen);
}

uint64_t
audit_link_oldest_ms(const struct audit_link *al)
{
	const struct audit_pending	*p;
	uint64_t			 now = mono_ms(), age = 0;

	/* Resent events keep their first t0: scan, do not trust the order. */
	TAILQ_FOREACH(p, &al->q, entry)
		if (now - p->t0 > age)
			age = now - p->t0;
	return age;
}

void
audit_link_shutdown(struct audit_link *al)
{
	uint64_t	 t0 = mono_ms();
	char		 why[80];

	/* Waits (bounded) for what is queued: nothing lost at exit. */
	while (!TAILQ_EMPTY(&al->q) && al->client.fd != -1 &&
	    mono_ms() - t0 < AUDIT_LINK_ACK_TIMEOUT_MS)
		audit_read_cb(al->client.fd, EV_READ, al);
	audit_disconnect(al);
	snprintf(why, sizeof(why), "%s stopped first", al->who);
	fail_all(al, why);
	event_free(al->timer);
	event_free(al->broken);
}
