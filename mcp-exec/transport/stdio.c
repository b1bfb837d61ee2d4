/*
 * stdio transport.  Lines from stdin are untrusted input: a line longer
 * than the message cap is answered with an error and skipped to its end,
 * never buffered whole.  stdin and stdout are normally pipes; a regular
 * file or /dev/null (which epoll refuses) is read or written directly.
 */
#include <sys/epoll.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "log.h"
#include "protocol/listen.h"
#include "protocol/mcp.h"
#include "sessions/session.h"
#include "stdio.h"
#include "util.h"

struct stdio_tr {
	struct server		*srv;
	struct bufferevent	*in, *out;	/* out: NULL when not pollable */
	struct mcp_conn		*conn;
	int			 skipping;	/* inside an over-long line */
};

static struct stdio_tr	*stdio_live;	/* until stdin ends or we stop */

/* Unwritten stdout past which a subscription's notifications stop. */
#define STDIO_LISTEN_BACKLOG_MAX	(4 * 1024 * 1024)

/*
 * A client that does not read stdout would have every task notification
 * queued: past the cap the subscription ends as the spec ends one on
 * stdio, with notifications/cancelled naming the listen request.  True
 * when msg was that notification (then dropped).
 */
static int
stdio_listener_slow(struct stdio_tr *t, const json_t *msg)
{
	const json_t	*sub;
	json_t		*end;
	char		*s;

	sub = json_object_get(json_object_get(json_object_get(msg, "params"),
	    "_meta"), LISTEN_SUB_ID);
	if (sub == NULL || t->out == NULL || json_object_get(msg,
	    "method") == NULL || evbuffer_get_length(bufferevent_get_output(
	    t->out)) <= STDIO_LISTEN_BACKLOG_MAX)
		return 0;
	log_warnx("stdio: more than %d bytes unread on stdout: a "
	    "subscriptions/listen ends", STDIO_LISTEN_BACKLOG_MAX);
	end = json_pack("{s:s, s:s, s:{s:O, s:s}}", "jsonrpc", "2.0",
	    "method", "notifications/cancelled", "params", "requestId", sub,
	    "reason", "the client does not read its notifications");
	if (end != NULL && (s = json_dumps(end, JSON_COMPACT)) != NULL) {
		bufferevent_write(t->out, s, strlen(s));
		bufferevent_write(t->out, "\n", 1);
		free(s);
	}
	json_decref(end);
	mcp_cancel(t->conn, sub);
	return 1;
}

/*
 * One message and its newline.  With nothing queued it goes out now, in
 * one writev, rather than from the loop's next turn (a call's reply waited
 * for that turn: an epoll_ctl and an epoll_wait each way); whatever the
 * pipe does not take is queued behind, in order.
 */
static void
stdio_write(struct stdio_tr *t, const char *s, size_t len)
{
	struct evbuffer	*out = bufferevent_get_output(t->out);
	struct iovec	 iov[2] = { { (void *)s, len }, { "\n", 1 } };
	ssize_t		 n = 0;
	size_t		 done;

	if (evbuffer_get_length(out) == 0) {
		do
			n = writev(STDOUT_FILENO, iov, 2);
		while (n == -1 && errno == EINTR);
		/* EAGAIN and errors: queued, the bufferevent reports them. */
		if (n == -1)
			n = 0;
	}
	done = (size_t)n;
	if (done < len)
		bufferevent_write(t->out, s + done, len - done);
	if (done < len + 1)
		bufferevent_write(t->out, "\n", 1);
}

static void
stdio_send(void *arg, json_t *msg)
{
	struct stdio_tr	*t = arg;
	char		*s;

	if (stdio_listener_slow(t, msg))
		s = NULL;
	/* Compact JSON escapes newlines: one message, one line. */
	else if ((s = json_dumps(msg, JSON_COMPACT)) != NULL) {
		if (t->out == NULL) {
			if (write_all(STDOUT_FILENO, s, strlen(s)) == -1 ||
			    write_all(STDOUT_FILENO, "\n", 1) == -1)
				log_warn("stdout");
		} else
			stdio_write(t, s, strlen(s));
		free(s);
	}
	json_decref(msg);
}

static void
stdio_end(struct stdio_tr *t)
{
	struct server	*srv = t->srv;

	srv->stopping = 1;
	sessions_close_all(srv, "the client went away");
	mcp_conn_detach(t->conn);
	/* What is queued for stdout goes out before we leave. */
	if (t->out != NULL) {
		(void)evbuffer_write(bufferevent_get_output(t->out),
		    STDOUT_FILENO);
		bufferevent_free(t->out);
	}
	if (t->in != NULL)
		bufferevent_free(t->in);
	free(t);
	stdio_live = NULL;
	event_base_loopexit(srv->base, NULL);
}

void
transport_stdio_stop(void)
{
	if (stdio_live != NULL)
		stdio_end(stdio_live);
}

/* Hands each whole line of `in` to the protocol; consumes them. */
static void
stdio_lines(struct stdio_tr *t, struct evbuffer *in)
{
	size_t		 max = t->srv->conf.server.max_message_bytes, len;
	char		*line;

	for (;;) {
		line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF);
		if (line == NULL) {
			/* No newline yet: refuse to hold more than the cap. */
			if (evbuffer_get_length(in) > max) {
				if (!t->skipping)
					mcp_error(t->conn, NULL,
					    RPC_INVALID_REQUEST, "message "
					    "larger than %zu bytes", max);
				t->skipping = 1;
				evbuffer_drain(in, evbuffer_get_length(in));
			}
			return;
		}
		if (t->skipping) {
			/* The tail of the over-long line. */
			t->skipping = 0;
		} else if (len > 0)
			mcp_receive(t->conn, line, len);
		free(line);
	}
}

static void
stdio_read(struct bufferevent *bev, void *arg)
{
	stdio_lines(arg, bufferevent_get_input(bev));
}

/* stdin is a file: every line now, then its end, as a client leaving. */
static void
stdio_read_file(evutil_socket_t fd, short ev, void *arg)
{
	struct stdio_tr	*t = arg;
	struct evbuffer	*in = evbuffer_new();
	int		 n;

	if (in == NULL)
		fatalx("evbuffer_new");
	while ((n = evbuffer_read(in, STDIN_FILENO, 65536)) > 0)
		stdio_lines(t, in);
	if (n == -1)
		log_warn("stdin");
	evbuffer_free(in);
	stdio_end(t);
}

/* epoll refuses regular files and /dev/null. */
static int
pollable(int fd)
{
	struct epoll_event	 e = { .events = EPOLLIN };
	int			 ep, ok;

	if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		fatal("epoll_create1");
	ok = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) == 0 || errno != EPERM;
	close(ep);
	return ok;
}

static void
stdio_event(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		stdio_end(arg);
}

int
transport_stdio_start(struct server *srv)
{
	struct stdio_tr	*t = xcalloc(1, sizeof(*t));

	struct timeval	 now = { 0, 0 };

	stdio_live = t;
	t->srv = srv;
	t->conn = mcp_conn_new(srv, srv->conf.server.local_principal,
	    stdio_send, t);
	snprintf(t->conn->client.transport, sizeof(t->conn->client.transport),
	    "stdio");
	snprintf(t->conn->client.auth, sizeof(t->conn->client.auth), "local");
	if (pollable(STDOUT_FILENO)) {
		if (evutil_make_socket_nonblocking(STDOUT_FILENO) == -1 ||
		    (t->out = bufferevent_socket_new(srv->base, STDOUT_FILENO,
		    0)) == NULL)
			fatal("stdout");
		bufferevent_enable(t->out, EV_WRITE);
	}
	if (!pollable(STDIN_FILENO)) {
		if (event_base_once(srv->base, -1, EV_TIMEOUT, stdio_read_file,
		    t, &now) == -1)
			fatalx("event_base_once");
		return 0;
	}
	if (evutil_make_socket_nonblocking(STDIN_FILENO) == -1 ||
	    (t->in = bufferevent_socket_new(srv->base, STDIN_FILENO, 0)) ==
	    NULL)
		fatal("stdin");
	bufferevent_setcb(t->in, stdio_read, NULL, stdio_event, t);
	bufferevent_enable(t->in, EV_READ);
	return 0;
}
