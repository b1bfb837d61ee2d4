/*
 * Writer connections.  Peers are authenticated by the kernel (SO_PEERCRED)
 * at accept time; after that every frame is still untrusted input: its
 * size is checked before it is buffered, it must parse, and the event must
 * match the schema.  Anything refused gets an error reply and is itself
 * recorded, so a misbehaving writer is visible in the trail it feeds.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "chain.h"
#include "evbase.h"
#include "event.h"
#include "forward.h"
#include "frame.h"
#include "log.h"
#include "retention.h"
#include "server.h"
#include "util.h"

#define PRIO_CLIENT		1
#define REPLY_MAX		(64 * 1024)
#define REJECT_REASON_MAX	256
#define ACK_ID_MAX		256	/* a longer string id is not echoed */
#define ACK_MAX			(ACK_ID_MAX + 256)

struct client {
	struct server		*srv;
	struct bufferevent	*bev;
	struct peer		 peer;
	unsigned		 refs;		/* connection + pending acks */
	int			 closed;
	int			 blocked;	/* held back by a full batch */
	int			 closing;	/* close once replies are out */
	int			 hot;		/* its last synchronous event came
						   within 2 busy polls of an ack */
	uint64_t		 acked_ns;	/* its last durable ack went */
	TAILQ_ENTRY(client)	 entry;
};
TAILQ_HEAD(client_list, client);

struct ack_ctx {
	struct client	*c;
	json_t		*id;
};

struct server {
	struct audit_conf	 conf;
	struct event_base	*base;
	struct writer		*w;
	struct forwarders	*fwd;
	struct evconnlistener	*listener;
	struct client_list	 clients;
	unsigned		 nclients;
	struct event		*resume_ev;
	int			 stopping;
	uint64_t		 polls_caught;	/* events that came in a poll */
	/* Rate limit on writer_refused records. */
	uint64_t		 refused_window;	/* mono seconds */
	unsigned		 refused_in_window;
	uint64_t		 refused_suppressed;
};

static void	client_process(struct client *);

/* ------------------------------------------------------- busy polling */

/*
 * A synchronous writer sends its next event as soon as it has the last
 * one's ack.  After a durable ack to a writer that has been that quick
 * ("hot": its last event came within two busy polls of the ack before),
 * the loop polls instead of sleeping for flush.busy_poll_us (lib/evbase.h),
 * so the next event finds the daemon awake.  A writer that takes longer
 * (mcp-exec between calls) is not hot and costs nothing; one that stops
 * costs one poll.
 */
static void
poll_note_event(struct client *c)
{
	uint64_t	 window = (uint64_t)c->srv->conf.busy_poll_us * 1000;

	if (evbase_polling())
		c->srv->polls_caught++;
	c->hot = c->acked_ns != 0 && mono_ns() - c->acked_ns <= 2 * window;
}

static void
poll_note_ack(struct client *c)
{
	c->acked_ns = mono_ns();
	if (c->hot)	/* nothing at 0 us or on one CPU */
		evbase_poll_for(c->srv->conf.busy_poll_us);
}

/* ------------------------------------------------------------ replies */

/*
 * A reply to a writer whose queue is empty goes out now, in one send:
 * through the bufferevent it would wait for a writable event, two
 * epoll_ctl and an epoll_wait on every synchronous writer's round trip.
 * What the socket does not take (or anything behind queued bytes) is
 * queued as before, so replies keep their order.
 */
static void
client_write(struct client *c, const void *a, size_t alen, const void *b,
    size_t blen)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	struct iovec	 iov[2] = { { (void *)a, alen }, { (void *)b, blen } };
	struct msghdr	 mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t		 n = 0;

	if (evbuffer_get_length(out) == 0 &&
	    (n = sendmsg(bufferevent_getfd(c->bev), &mh, MSG_DONTWAIT |
	    MSG_NOSIGNAL)) == -1)
		n = 0;		/* EAGAIN or worse: the bufferevent sees it */
	if ((size_t)n < alen) {
		bufferevent_write(c->bev, (const char *)a + n, alen - n);
		n = 0;
	} else
		n -= alen;
	if ((size_t)n < blen)
		bufferevent_write(c->bev, (const char *)b + n, blen - n);
}

static void
client_send(struct client *c, json_t *msg)
{
	struct buf	 b;

	if (c->closed) {
		json_decref(msg);
		return;
	}
	buf_init(&b, FRAME_HDR_LEN + REPLY_MAX);
	if (frame_encode(msg, REPLY_MAX, &b) == 0)
		client_write(c, b.data, b.len, NULL, 0);
	else
		log_warnx("reply to pid %ld too large; dropped",
		    (long)c->peer.pid);
	buf_free(&b);
	json_decref(msg);
}

static json_t *
reply_new(const char *type, const json_t *id)
{
	json_t	*j = json_pack("{s:s}", "type", type);

	if (id != NULL)
		json_object_set(j, "id", (json_t *)id);
	return j;
}

static void
send_error(struct client *c, const json_t *id, const char *code,
    const char *message)
{
	json_t	*j = reply_new("error", id);

	json_object_set_new(j, "error", json_string(code));
	json_object_set_new(j, "message", json_string(message));
	if (json_object_get(j, "message") == NULL)
		json_object_set_new(j, "message", json_string("(unprintable)"));
	client_send(c, j);
}

/*
 * The ack is the reply to every event, so it is formatted directly rather
 * than built as a JSON tree; only a string id goes through jansson.
 */
static void
send_ack(struct client *c, const json_t *id, uint64_t seq,
    const uint8_t hash[SHA256_LEN], int durable)
{
	char	 hex[SHA256_HEX + 1], idbuf[ACK_ID_MAX], body[ACK_MAX];
	uint8_t	 hdr[FRAME_HDR_LEN];
	int	 n;

	if (c->closed)
		return;
	idbuf[0] = '\0';
	if (json_is_integer(id))
		snprintf(idbuf, sizeof(idbuf), ",\"id\":%lld",
		    (long long)json_integer_value(id));
	else if (id != NULL && (n = (int)json_dumpb(id, idbuf + 6,
	    sizeof(idbuf) - 7, JSON_ENCODE_ANY)) > 0 &&
	    (size_t)n < sizeof(idbuf) - 7) {
		memcpy(idbuf, ",\"id\":", 6);
		idbuf[6 + n] = '\0';
	}
	hex_encode(hash, SHA256_LEN, hex);
	n = snprintf(body, sizeof(body), "{\"type\":\"ack\"%s,\"seq\":%llu,"
	    "\"hash\":\"%s\",\"durable\":%s}", idbuf, (unsigned long long)seq,
	    hex, durable ? "true" : "false");
	if (n < 0 || (size_t)n >= sizeof(body))
		return;
	frame_put_header(hdr, (size_t)n);
	client_write(c, hdr, sizeof(hdr), body, (size_t)n);
}

static const char *
status_code(enum writer_status st)
{
	switch (st) {
	case WRITER_OK:
		return "ok";
	case WRITER_FULL:
		return "busy";
	case WRITER_TOO_LARGE:
		return "too_large";
	case WRITER_SUSPENDED:
		return "suspended";
	case WRITER_LOST:
		return "lost";
	case WRITER_HALTED:
		return "halted";
	case WRITER_STOPPING:
		break;
	}
	return "shutting_down";
}

static const char *
status_message(enum writer_status st)
{
	switch (st) {
	case WRITER_SUSPENDED:
		return "audit log suspended after a disk failure; event refused";
	case WRITER_LOST:
		return "audit log unavailable (keep_going): event dropped and "
		    "counted";
	case WRITER_HALTED:
		return "audit log halted after a disk failure";
	case WRITER_TOO_LARGE:
		return "event exceeds the record size limit";
	default:
		return "stockade-auditd is shutting down";
	}
}

/* ------------------------------------------------------------ clients */

static void
client_unref(struct client *c)
{
	if (--c->refs > 0)
		return;
	bufferevent_free(c->bev);
	free(c);
}

static void
client_close(struct client *c)
{
	struct server	*s = c->srv;

	if (c->closed)
		return;
	c->closed = 1;
	TAILQ_REMOVE(&s->clients, c, entry);
	s->nclients--;
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	client_unref(c);
}

/* Closes once the replies already queued have been written. */
static void
client_close_after_write(struct client *c)
{
	bufferevent_disable(c->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		client_close(c);
	else
		c->closing = 1;		/* see client_write_cb */
}

static void
ack_done(void *arg, enum writer_status st, uint64_t seq,
    const uint8_t hash[SHA256_LEN])
{
	struct ack_ctx	*a = arg;

	if (st == WRITER_OK) {
		send_ack(a->c, a->id, seq, hash, 1);
		poll_note_ack(a->c);
	} else
		send_error(a->c, a->id, status_code(st), status_message(st));
	client_unref(a->c);
	json_decref(a->id);
	free(a);
}

/* Records a refused frame: what was wrong, its size and digest, never its bytes. */
static void
record_rejected(struct client *c, const char *reason, const void *payload,
    size_t len)
{
	char	 hex[SHA256_HEX + 1], why[REJECT_REASON_MAX];

	/* Parser messages may quote the writer's bytes: keep them ASCII. */
	snprintf(why, sizeof(why), "%s", reason);
	str_ascii(why);
	if (payload != NULL)
		sha256_hex(payload, len, hex);
	writer_append_own(c->srv->w, "event_rejected", json_pack(
	    "{s:{s:I, s:I}, s:s, s:I, s:s*}",
	    "writer", "uid", (json_int_t)c->peer.uid,
	    "pid", (json_int_t)c->peer.pid, "reason", why,
	    "size", (json_int_t)len, "sha256", payload ? hex : NULL));
}

static void
reject(struct client *c, const json_t *id, const char *code,
    const char *message, const void *payload, size_t len)
{
	send_error(c, id, code, message);
	record_rejected(c, message, payload, len);
}

static void
handle_append(struct client *c, json_t *msg, const json_t *id,
    const void *payload, size_t len, int *blocked)
{
	struct ack_ctx		*a = NULL;
	struct retained_code	 rc;
	enum writer_status	 st;
	json_t			*ev, *sync;
	char			 err[REJECT_REASON_MAX], name[CHAIN_EVENT_NAME_MAX];
	uint8_t			 hash[SHA256_LEN];
	uint64_t		 seq;
	int			 want_sync = 1;

	ev = json_object_get(msg, "event");
	if ((sync = json_object_get(msg, "sync")) != NULL) {
		if (!json_is_boolean(sync)) {
			reject(c, id, "invalid", "field 'sync' must be a "
			    "boolean", payload, len);
			return;
		}
		want_sync = json_is_true(sync);
	}
	if (ev == NULL) {
		reject(c, id, "invalid", "field 'event' (object) is required",
		    payload, len);
		return;
	}
	memset(&rc, 0, sizeof(rc));
	if (event_validate(ev, err, sizeof(err)) == -1 ||
	    retention_apply(&c->srv->conf, ev, &rc, err, sizeof(err)) == -1) {
		retention_free(&rc);
		reject(c, id, "invalid", err, payload, len);
		return;
	}
	snprintf(name, sizeof(name), "%s",
	    json_string_value(json_object_get(ev, "event")));
	json_object_del(ev, "event");
	if (want_sync) {
		poll_note_event(c);
		a = xcalloc(1, sizeof(*a));
		a->c = c;
		a->id = id ? json_incref((json_t *)id) : NULL;
	}
	st = writer_append_code(c->srv->w, name, ev, &rc, &c->peer, want_sync,
	    ack_done, a, &seq, hash);
	retention_free(&rc);	/* data NULL once the writer took it */
	if (st == WRITER_OK && want_sync) {
		c->refs++;
		return;
	}
	if (a != NULL) {
		json_decref(a->id);
		free(a);
	}
	switch (st) {
	case WRITER_OK:
		send_ack(c, id, seq, hash, 0);
		break;
	case WRITER_FULL:
		*blocked = 1;
		break;
	case WRITER_TOO_LARGE:
		reject(c, id, status_code(st), status_message(st), payload, len);
		break;
	default:
		send_error(c, id, status_code(st), status_message(st));
		break;
	}
}

static void
handle_status(struct client *c, const json_t *id)
{
	json_t			*j = reply_new("status", id);
	struct evbase_stats	 st;

	json_object_set_new(j, "audit", writer_status_json(c->srv->w));
	json_object_set_new(j, "clients",
	    json_integer((json_int_t)c->srv->nclients));
	json_object_set_new(j, "forward", forward_status(c->srv->fwd));
	if (c->srv->conf.node_id[0] != '\0')
		json_object_set_new(j, "node_id",
		    json_string(c->srv->conf.node_id));
	evbase_stats(&st);
	json_object_set_new(j, "busy_poll", json_pack("{s:i, s:b, s:I, s:I, "
	    "s:f}", "us", (int)c->srv->conf.busy_poll_us, "enabled",
	    evbase_can_poll() && c->srv->conf.busy_poll_us > 0,
	    "polls", (json_int_t)st.polls,
	    "caught", (json_int_t)c->srv->polls_caught,
	    "seconds", (double)st.poll_ns / 1e9));
	client_send(c, j);
}

void
server_set_forwarders(struct server *srv, struct forwarders *fs)
{
	srv->fwd = fs;
}

/* Returns 1 when the frame must be retried later (batch full). */
static int
handle_frame(struct client *c, const uint8_t *payload, size_t len)
{
	json_t		*msg, *id;
	const char	*type;
	char		 err[REJECT_REASON_MAX];
	int		 blocked = 0;

	if ((msg = frame_parse(payload, len, err, sizeof(err))) == NULL) {
		reject(c, NULL, "invalid", err, payload, len);
		return 0;
	}
	id = json_object_get(msg, "id");
	if (id != NULL && !json_is_integer(id) && !json_is_string(id)) {
		reject(c, NULL, "invalid", "field 'id' must be an integer or "
		    "a string", payload, len);
		goto out;
	}
	type = json_string_value(json_object_get(msg, "type"));
	if (type != NULL && strcmp(type, "append") == 0)
		handle_append(c, msg, id, payload, len, &blocked);
	else if (type != NULL && strcmp(type, "status") == 0)
		handle_status(c, id);
	else
		reject(c, id, "invalid", "field 'type' must be \"append\" or "
		    "\"status\"", payload, len);
out:
	json_decref(msg);
	return blocked;
}

static void
client_process(struct client *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);
	uint8_t		 hdr[FRAME_HDR_LEN];
	size_t		 len, avail;
	uint8_t		*p;

	while (!c->closed && !c->closing && !c->blocked && !c->srv->stopping) {
		avail = evbuffer_get_length(in);
		if (avail < FRAME_HDR_LEN)
			return;
		evbuffer_copyout(in, hdr, sizeof(hdr));
		if (frame_header(hdr, audit_frame_max(&c->srv->conf),
		    &len) == -1) {
			/* The stream cannot be resynchronised: answer, close. */
			reject(c, NULL, "too_large", "frame length is zero or "
			    "exceeds limits.max_event_bytes (plus code.max_bytes "
			    "for the code)", NULL, 0);
			client_close_after_write(c);
			return;
		}
		if (avail < FRAME_HDR_LEN + len)
			return;
		p = evbuffer_pullup(in, (ev_ssize_t)(FRAME_HDR_LEN + len));
		if (handle_frame(c, p + FRAME_HDR_LEN, len)) {
			c->blocked = 1;
			bufferevent_disable(c->bev, EV_READ);
			return;
		}
		evbuffer_drain(in, FRAME_HDR_LEN + len);
	}
}

static void
client_read_cb(struct bufferevent *bev, void *arg)
{
	client_process(arg);
}

static void
client_write_cb(struct bufferevent *bev, void *arg)
{
	struct client	*c = arg;

	if (c->closing)
		client_close(c);
}

static void
client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct client	*c = arg;

	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		client_close(c);
}

/* The writer has room again: process what blocked clients had buffered. */
static void
resume_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct server	*s = arg;
	struct client	*c, *next;

	for (c = TAILQ_FIRST(&s->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (!c->blocked)
			continue;
		c->blocked = 0;
		bufferevent_enable(c->bev, EV_READ);
		c->refs++;
		client_process(c);
		client_unref(c);
	}
}

static void
writer_resumed(void *arg)
{
	struct server	*s = arg;

	event_active(s->resume_ev, 0, 0);
}

/* ------------------------------------------------------------ accepting */

static int
writer_allowed(const struct server *s, uid_t uid)
{
	size_t	 i;

	for (i = 0; i < s->conf.nwriters; i++)
		if (s->conf.writers[i] == uid)
			return 1;
	return 0;
}

/*
 * A refused connection is an audit event, but a local user must not be
 * able to flood the trail with them: at most refused_per_second a second
 * are recorded, the rest counted into the next record.
 */
static void
record_refused(struct server *s, const struct peer *p)
{
	uint64_t	 now = mono_ms() / 1000;

	if (now != s->refused_window) {
		s->refused_window = now;
		s->refused_in_window = 0;
	}
	if (s->refused_in_window >= s->conf.refused_per_second) {
		s->refused_suppressed++;
		return;
	}
	s->refused_in_window++;
	writer_append_own(s->w, "writer_refused", json_pack(
	    "{s:{s:I, s:I, s:I}, s:s, s:I}", "writer",
	    "uid", (json_int_t)p->uid, "gid", (json_int_t)p->gid,
	    "pid", (json_int_t)p->pid,
	    "reason", "uid is not in writers", "suppressed",
	    (json_int_t)s->refused_suppressed));
	s->refused_suppressed = 0;
}

static void
refuse_fd(int fd, const char *code, const char *message)
{
	json_t	*j = json_pack("{s:s, s:s, s:s}", "type", "error", "error", code,
		    "message", message);

	/* Best effort; the socket is non-blocking and the reply is tiny. */
	(void)frame_send(fd, j, NULL, 0);
	json_decref(j);
	close(fd);
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct server	*s = arg;
	struct client	*c;
	struct peer	 p;

	if (peer_cred(fd, &p) == -1) {
		log_warn("SO_PEERCRED");
		close(fd);
		return;
	}
	if (s->stopping) {
		refuse_fd(fd, "shutting_down", "stockade-auditd is shutting down");
		return;
	}
	if (!writer_allowed(s, p.uid)) {
		log_warnx("refused writer uid %lu pid %ld", (unsigned long)p.uid,
		    (long)p.pid);
		record_refused(s, &p);
		refuse_fd(fd, "forbidden", "this uid is not an audit writer");
		return;
	}
	if (s->nclients >= s->conf.max_clients) {
		log_warnx("too many writers (%u); refused pid %ld",
		    s->nclients, (long)p.pid);
		refuse_fd(fd, "busy", "too many writer connections");
		return;
	}
	c = xcalloc(1, sizeof(*c));
	c->srv = s;
	c->peer = p;
	c->refs = 1;
	c->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL)
		fatalx("bufferevent_socket_new");
	bufferevent_priority_set(c->bev, PRIO_CLIENT);
	/* Never buffer more than one maximal frame from a writer. */
	bufferevent_setwatermark(c->bev, EV_READ, 0,
	    FRAME_HDR_LEN + audit_frame_max(&s->conf));
	bufferevent_setcb(c->bev, client_read_cb, client_write_cb,
	    client_event_cb, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&s->clients, c, entry);
	s->nclients++;
}

static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	log_warn("accept");
}

struct server *
server_start(struct event_base *base, const struct audit_conf *conf,
    struct writer *w)
{
	struct server	*s = xcalloc(1, sizeof(*s));
	int		 fd;

	s->conf = *conf;
	s->base = base;
	s->w = w;
	TAILQ_INIT(&s->clients);
	if ((fd = unix_listen(conf->socket_path, conf->socket_mode, 128)) == -1) {
		free(s);
		return NULL;
	}
	s->listener = evconnlistener_new(base, accept_cb, s,
	    LEV_OPT_CLOSE_ON_FREE, -1, fd);
	if (s->listener == NULL)
		fatalx("evconnlistener_new");
	evconnlistener_set_error_cb(s->listener, accept_error_cb);
	if ((s->resume_ev = event_new(base, -1, 0, resume_cb, s)) == NULL)
		fatalx("event_new");
	event_priority_set(s->resume_ev, PRIO_CLIENT);
	writer_on_resume(w, writer_resumed, s);
	return s;
}

void
server_reconfigure(struct server *s, const struct audit_conf *conf)
{
	memcpy(s->conf.writers, conf->writers, sizeof(conf->writers));
	s->conf.nwriters = conf->nwriters;
	s->conf.max_event_bytes = conf->max_event_bytes;
	s->conf.code_retention = conf->code_retention;
	s->conf.code_sample_bytes = conf->code_sample_bytes;
	s->conf.code_max_bytes = conf->code_max_bytes;
	s->conf.max_clients = conf->max_clients;
	s->conf.refused_per_second = conf->refused_per_second;
	s->conf.busy_poll_us = conf->busy_poll_us;
}

void
server_stop(struct server *s)
{
	struct client	*c;

	s->stopping = 1;
	if (s->listener != NULL) {
		evconnlistener_free(s->listener);
		s->listener = NULL;
		unlink(s->conf.socket_path);
	}
	TAILQ_FOREACH(c, &s->clients, entry)
		bufferevent_disable(c->bev, EV_READ);
}

void
server_free(struct server *s)
{
	struct client	*c;

	server_stop(s);
	while ((c = TAILQ_FIRST(&s->clients)) != NULL)
		client_close(c);
	event_free(s->resume_ev);
	free(s);
}
