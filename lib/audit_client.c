/*
 * Blocking client for stockade-auditd.  Replies come from the audit daemon,
 * a trusted peer, but are still size-capped and type-checked: a confused
 * daemon must not crash the programs that depend on it.
 */
#include <sys/socket.h>

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "audit_client.h"
#include "frame.h"
#include "util.h"

int
audit_client_open(struct audit_client *ac, const char *path, char *err,
    size_t errlen)
{
	ac->next_id = 1;
	if ((ac->fd = unix_connect(path)) == -1) {
		snprintf(err, errlen, "connect %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

void
audit_client_close(struct audit_client *ac)
{
	if (ac->fd != -1)
		close(ac->fd);
	ac->fd = -1;
}

int
audit_client_send(struct audit_client *ac, const json_t *event, int sync,
    uint64_t *id)
{
	json_t	*msg;
	int	 rv;

	*id = ac->next_id++;
	msg = json_pack("{s:s, s:I, s:b, s:O}", "type", "append",
	    "id", (json_int_t)*id, "sync", sync, "event", event);
	if (msg == NULL)
		return -1;
	rv = frame_send(ac->fd, msg, NULL, 0);
	json_decref(msg);
	return rv;
}

static void
copy_str(char *dst, size_t len, const json_t *v)
{
	const char	*s = json_string_value(v);

	snprintf(dst, len, "%s", s ? s : "");
}

/*
 * A synchronous append's ack comes about one fdatasync after it was
 * sent.  A caller asleep in recv pays a wake-up on top of that (35-100 us
 * on a VM without halt-polling, as much as the sync), so the caller, which
 * has nothing else to do, polls for the reply for AUDIT_CLIENT_POLL_US
 * first, yielding its CPU to anyone runnable there.  Not on one CPU, where
 * polling would only keep the daemon from running.
 */
static void
await_reply(int fd)
{
	static int	 cpus;
	uint64_t	 until;
	char		 c;

	if (cpus == 0)
		cpus = cpus_usable();
	if (cpus < 2)
		return;
	until = mono_ns() + AUDIT_CLIENT_POLL_US * 1000;
	while (recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == -1 &&
	    (errno == EAGAIN || errno == EINTR) && mono_ns() < until)
		(void)sched_yield();
}

int
audit_client_recv(struct audit_client *ac, struct audit_ack *a, char *err,
    size_t errlen)
{
	json_t		*msg;
	const char	*type;
	int		 r;

	memset(a, 0, sizeof(*a));
	await_reply(ac->fd);
	if ((r = frame_recv(ac->fd, AUDIT_REPLY_MAX, &msg, NULL, NULL, err,
	    errlen)) != 1) {
		if (r == 0)
			snprintf(err, errlen, "stockade-auditd closed the "
			    "connection");
		return -1;
	}
	type = json_string_value(json_object_get(msg, "type"));
	a->id = (uint64_t)json_integer_value(json_object_get(msg, "id"));
	if (type != NULL && strcmp(type, "ack") == 0) {
		a->ok = 1;
		a->seq = (uint64_t)json_integer_value(json_object_get(msg, "seq"));
		a->durable = json_is_true(json_object_get(msg, "durable"));
		copy_str(a->hash, sizeof(a->hash), json_object_get(msg, "hash"));
	} else if (type != NULL && strcmp(type, "error") == 0) {
		copy_str(a->code, sizeof(a->code), json_object_get(msg, "error"));
		copy_str(a->message, sizeof(a->message),
		    json_object_get(msg, "message"));
	} else {
		snprintf(err, errlen, "unexpected reply from stockade-auditd");
		json_decref(msg);
		return -1;
	}
	json_decref(msg);
	return 0;
}

int
audit_client_append(struct audit_client *ac, const json_t *event,
    struct audit_ack *a, char *err, size_t errlen)
{
	uint64_t	 id;

	if (audit_client_send(ac, event, 1, &id) == -1) {
		snprintf(err, errlen, "send to stockade-auditd: %s",
		    strerror(errno));
		return -1;
	}
	do {
		if (audit_client_recv(ac, a, err, errlen) == -1)
			return -1;
		/* An error without an id is about the connection itself. */
	} while (a->id != id && !(a->ok == 0 && a->id == 0));
	return 0;
}

int
audit_client_once(const char *path, const json_t *event, char *err,
    size_t errlen)
{
	struct audit_client	 ac;
	struct audit_ack	 ack;
	int			 rv = -1;

	if (event == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (audit_client_open(&ac, path, err, errlen) == -1)
		return -1;
	if (audit_client_append(&ac, event, &ack, err, errlen) == 0) {
		if (ack.ok)
			rv = 0;
		else
			snprintf(err, errlen, "%s", ack.message);
	}
	audit_client_close(&ac);
	return rv;
}

json_t *
audit_client_status(struct audit_client *ac, char *err, size_t errlen)
{
	json_t	*msg, *reply = NULL, *st;
	int	 r;

	msg = json_pack("{s:s, s:I}", "type", "status", "id",
	    (json_int_t)ac->next_id++);
	r = frame_send(ac->fd, msg, NULL, 0);
	json_decref(msg);
	if (r == -1) {
		snprintf(err, errlen, "send: %s", strerror(errno));
		return NULL;
	}
	if ((r = frame_recv(ac->fd, AUDIT_REPLY_MAX, &reply, NULL, NULL, err,
	    errlen)) != 1) {
		if (r == 0)
			snprintf(err, errlen, "connection closed");
		return NULL;
	}
	st = json_object_get(reply, "type");
	if (!json_is_string(st) || strcmp(json_string_value(st), "status") != 0) {
		snprintf(err, errlen, "%s",
		    json_string_value(json_object_get(reply, "message")) ?
		    json_string_value(json_object_get(reply, "message")) :
		    "unexpected reply");
		json_decref(reply);
		return NULL;
	}
	return reply;
}
