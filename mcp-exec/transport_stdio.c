/*
 * stdio transport.  Lines from stdin are untrusted input: a line longer
 * than the message cap is answered with an error and skipped to its end,
 * never buffered whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "log.h"
#include "mcp.h"
#include "session.h"
#include "transport_stdio.h"
#include "util.h"

struct stdio_tr {
	struct server		*srv;
	struct bufferevent	*in, *out;
	struct mcp_conn		*conn;
	int			 skipping;	/* inside an over-long line */
};

static void
stdio_send(void *arg, json_t *msg)
{
	struct stdio_tr	*t = arg;
	char		*s;

	/* Compact JSON escapes newlines: one message, one line. */
	if ((s = json_dumps(msg, JSON_COMPACT)) != NULL) {
		bufferevent_write(t->out, s, strlen(s));
		bufferevent_write(t->out, "\n", 1);
		free(s);
	}
	json_decref(msg);
}

static void
stdio_end(struct stdio_tr *t)
{
	struct server	*srv = t->srv;
	int		 fd = bufferevent_getfd(t->out);
	struct evbuffer	*ob = bufferevent_get_output(t->out);

	srv->stopping = 1;
	sessions_close_all(srv, "the client went away");
	mcp_conn_detach(t->conn);
	/* What is queued for stdout goes out before we leave. */
	(void)evbuffer_write(ob, fd);
	bufferevent_free(t->in);
	bufferevent_free(t->out);
	free(t);
	event_base_loopexit(srv->base, NULL);
}

static void
stdio_read(struct bufferevent *bev, void *arg)
{
	struct stdio_tr	*t = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
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
stdio_event(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		stdio_end(arg);
}

int
transport_stdio_start(struct server *srv)
{
	struct stdio_tr	*t = xcalloc(1, sizeof(*t));

	t->srv = srv;
	if (evutil_make_socket_nonblocking(STDIN_FILENO) == -1 ||
	    evutil_make_socket_nonblocking(STDOUT_FILENO) == -1)
		fatal("stdio: non-blocking");
	t->in = bufferevent_socket_new(srv->base, STDIN_FILENO, 0);
	t->out = bufferevent_socket_new(srv->base, STDOUT_FILENO, 0);
	if (t->in == NULL || t->out == NULL)
		fatalx("bufferevent_socket_new");
	t->conn = mcp_conn_new(srv, srv->conf.server.local_principal,
	    stdio_send, t);
	bufferevent_setcb(t->in, stdio_read, NULL, stdio_event, t);
	bufferevent_enable(t->in, EV_READ);
	bufferevent_enable(t->out, EV_WRITE);
	return 0;
}
