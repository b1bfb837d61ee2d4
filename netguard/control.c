/*
 * The control socket: attach, detach, status and list, one JSON frame
 * each way (lib/frame.c), namespace descriptors by SCM_RIGHTS.  Peers are
 * authenticated with SO_PEERCRED against `clients`; what they send is
 * still checked field by field before anything acts on it.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "log.h"
#include "netguard.h"
#include "util.h"

#define CONTROL_IO_TIMEOUT_S	2	/* a peer that stalls mid-frame */

struct control_conn {
	LIST_ENTRY(control_conn) entry;
	struct netguard	*ng;
	int		 fd;
	struct peer	 peer;
	struct event	*ev;
};

static LIST_HEAD(, control_conn) conns = LIST_HEAD_INITIALIZER(conns);
static unsigned	nconns;

static void
conn_close(struct control_conn *c)
{
	LIST_REMOVE(c, entry);
	event_free(c->ev);
	close(c->fd);
	free(c);
	nconns--;
}

/* An identifier a client names: printable ASCII, bounded. */
static const char *
id_field(const json_t *msg, const char *key, const char *dflt, char *err,
    size_t errlen)
{
	const json_t	*v = json_object_get(msg, key);
	const char	*s;
	size_t		 i;

	if (v == NULL)
		return dflt;
	if ((s = json_string_value(v)) == NULL || *s == '\0' ||
	    strlen(s) > NG_ID_MAX) {
		snprintf(err, errlen, "%s: a string of 1-%d characters", key,
		    NG_ID_MAX);
		return NULL;
	}
	for (i = 0; s[i] != '\0'; i++)
		if (s[i] < 0x21 || s[i] > 0x7e) {
			snprintf(err, errlen, "%s: printable ASCII without "
			    "spaces", key);
			return NULL;
		}
	return s;
}

static json_t *
do_attach(struct netguard *ng, const json_t *msg, int *fds, size_t nfds,
    char *err, size_t errlen)
{
	const char	*sandbox, *session, *principal, *policy;
	char		 dflt[64];
	json_t		*r;

	if (nfds != 1) {
		snprintf(err, errlen, "attach needs exactly one namespace "
		    "descriptor");
		return NULL;
	}
	snprintf(dflt, sizeof(dflt), "netns-%d", fds[0]);
	if ((policy = id_field(msg, "policy", NULL, err, errlen)) == NULL) {
		if (json_object_get(msg, "policy") == NULL)
			snprintf(err, errlen, "policy: required");
		return NULL;
	}
	if ((sandbox = id_field(msg, "sandbox", NULL, err, errlen)) == NULL) {
		if (json_object_get(msg, "sandbox") == NULL)
			snprintf(err, errlen, "sandbox: required");
		return NULL;
	}
	/* It names netguard's files in state_dir. */
	if (sandbox[0] == '.' || strspn(sandbox, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-") != strlen(sandbox)) {
		snprintf(err, errlen, "sandbox: letters, digits, '.', '_', ':' "
		    "and '-', not starting with '.'");
		return NULL;
	}
	if ((session = id_field(msg, "session_id", "none", err, errlen)) ==
	    NULL || (principal = id_field(msg, "principal", "operator", err,
	    errlen)) == NULL)
		return NULL;
	r = ng_attach(ng, fds[0], sandbox, session, principal, policy, -1, 0,
	    err, errlen);
	fds[0] = -1;	/* ng_attach took it */
	return r;
}

static json_t *
do_detach(struct netguard *ng, const json_t *msg, int *fds, size_t nfds,
    char *err, size_t errlen)
{
	struct attachment	*att;
	const char		*sandbox = NULL;

	if (nfds == 0 && (sandbox = id_field(msg, "sandbox", NULL, err,
	    errlen)) == NULL) {
		if (json_object_get(msg, "sandbox") == NULL)
			snprintf(err, errlen, "detach needs a namespace "
			    "descriptor or sandbox");
		return NULL;
	}
	if ((att = ng_find(ng, nfds ? fds[0] : -1, sandbox)) == NULL) {
		snprintf(err, errlen, "not attached");
		return NULL;
	}
	ng_detach(att, "detach requested");
	return json_object();
}

static void
conn_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct control_conn	*c = arg;
	struct netguard		*ng = c->ng;
	json_t			*msg = NULL, *reply = NULL, *id;
	int			 fds[FRAME_FDS_MAX];
	size_t			 nfds = 0, i;
	const char		*type;
	char			 err[512] = "";
	int			 rc;

	rc = frame_recv(c->fd, NG_CONTROL_MAX, &msg, fds, &nfds, err,
	    sizeof(err));
	if (rc <= 0) {
		if (rc == -1)
			log_warnx("control: pid %d: %s", (int)c->peer.pid, err);
		conn_close(c);
		return;
	}
	type = json_string_value(json_object_get(msg, "type"));
	if (type == NULL)
		snprintf(err, sizeof(err), "type: required");
	else if (strcmp(type, "attach") == 0)
		reply = do_attach(ng, msg, fds, nfds, err, sizeof(err));
	else if (strcmp(type, "detach") == 0)
		reply = do_detach(ng, msg, fds, nfds, err, sizeof(err));
	else if (strcmp(type, "status") == 0 || strcmp(type, "list") == 0)
		reply = ng_status(ng);
	else
		snprintf(err, sizeof(err), "unknown type '%.32s'", type);
	for (i = 0; i < nfds; i++)
		if (fds[i] != -1)
			close(fds[i]);
	if (reply == NULL)
		reply = json_pack("{s:b, s:s}", "ok", 0, "error", err);
	else
		json_object_set_new(reply, "ok", json_true());
	if ((id = json_object_get(msg, "id")) != NULL && json_is_integer(id))
		json_object_set(reply, "id", id);
	json_decref(msg);
	if (frame_send(c->fd, reply, NULL, 0) == -1) {
		log_warn("control: reply to pid %d", (int)c->peer.pid);
		json_decref(reply);
		conn_close(c);
		return;
	}
	json_decref(reply);
}

static int
peer_allowed(const struct ng_conf *conf, uid_t uid)
{
	size_t	 i;

	for (i = 0; i < conf->nclients; i++)
		if (conf->clients[i] == uid)
			return 1;
	return 0;
}

static void
accept_cb(evutil_socket_t lfd, short ev, void *arg)
{
	struct netguard		*ng = arg;
	struct control_conn	*c;
	struct timeval		 tv = { CONTROL_IO_TIMEOUT_S, 0 };
	struct peer		 p;
	int			 fd;

	if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1) {
		if (errno != EAGAIN && errno != EINTR)
			log_warn("control: accept");
		return;
	}
	if (peer_cred(fd, &p) == -1 || !peer_allowed(&ng->conf, p.uid)) {
		log_warnx("control: refused uid %d pid %d (not in clients)",
		    (int)p.uid, (int)p.pid);
		close(fd);
		return;
	}
	if (nconns >= NG_CONTROL_CONNS_MAX) {
		log_warnx("control: %u connections; refused pid %d", nconns,
		    (int)p.pid);
		close(fd);
		return;
	}
	/* Frames are read whole, blocking: bounded by the timeout. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1) {
		log_warn("control: setsockopt");
		close(fd);
		return;
	}
	c = xcalloc(1, sizeof(*c));
	c->ng = ng;
	c->fd = fd;
	c->peer = p;
	if ((c->ev = event_new(ng->base, fd, EV_READ | EV_PERSIST,
	    conn_read_cb, c)) == NULL || event_add(c->ev, NULL) == -1)
		fatalx("control: event");
	LIST_INSERT_HEAD(&conns, c, entry);
	nconns++;
}

int
control_listen(struct netguard *ng)
{
	int		 fd;

	if ((fd = unix_listen(ng->conf.socket_path, ng->conf.socket_mode,
	    64)) == -1) {
		log_warn("%s", ng->conf.socket_path);
		return -1;
	}
	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    (ng->control_ev = event_new(ng->base, fd, EV_READ | EV_PERSIST,
	    accept_cb, ng)) == NULL || event_add(ng->control_ev, NULL) == -1)
		fatalx("control: event");
	ng->control_fd = fd;
	return 0;
}

/* Stops accepting and closes every connection. */
void
control_close(struct netguard *ng)
{
	while (!LIST_EMPTY(&conns))
		conn_close(LIST_FIRST(&conns));
	if (ng->control_ev == NULL)
		return;
	event_free(ng->control_ev);
	close(ng->control_fd);
	unlink(ng->conf.socket_path);
	ng->control_ev = NULL;
}
