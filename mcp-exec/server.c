/*
 * The server's setup and its link to stockade-auditd.  The audit daemon
 * is trusted to keep events; its replies are still checked (audit_client).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "server.h"
#include "util.h"

int
server_audit_required(const struct server *srv)
{
	return srv->conf.server.audit_required;
}

static int
audit_connect(struct server *srv, char *err, size_t errlen)
{
	if (srv->audit.fd != -1)
		return 0;
	return audit_client_open(&srv->audit, srv->conf.server.audit_socket,
	    err, errlen);
}

/*
 * Synchronous events wait for the fdatasync; the others only for the
 * sequence number (sync:false), so the socket never backs up.  One
 * reconnect is tried: the daemon may have restarted.
 */
int
server_audit(struct server *srv, json_t *event, int sync, char *err,
    size_t errlen)
{
	struct audit_ack	 a;
	char			 buf[256];
	uint64_t		 id;
	int			 tries, rv = -1;

	if (err == NULL) {
		err = buf;
		errlen = sizeof(buf);
	}
	if (event == NULL) {
		snprintf(err, errlen, "event could not be built");
		return -1;
	}
	for (tries = 0; tries < 2 && rv == -1; tries++) {
		if (audit_connect(srv, err, errlen) == -1)
			break;
		if (audit_client_send(&srv->audit, event, sync, &id) == -1 ||
		    audit_client_recv(&srv->audit, &a, err, errlen) == -1) {
			snprintf(err, errlen, "stockade-auditd connection lost");
			audit_client_close(&srv->audit);
			continue;
		}
		if (!a.ok) {
			snprintf(err, errlen, "stockade-auditd refused the event: "
			    "%s (%s)", a.code, a.message);
			break;
		}
		rv = 0;
	}
	if (rv == -1)
		log_warnx("audit: %s", err);
	json_decref(event);
	return rv;
}
