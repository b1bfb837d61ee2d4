/*
 * One request to netguard and its reply.  netguard is trusted to apply
 * policy, not to be well-formed: the reply is size-capped and parsed like
 * any frame (lib/frame.c), and must be an object.
 */
#include <sys/socket.h>
#include <sys/time.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "ng_client.h"

json_t *
ngc_call(const char *socket_path, const json_t *msg, int nsfd, int timeout_ms,
    char *err, size_t errlen)
{
	struct timeval	 tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	json_t		*reply = NULL;
	char		 e[256];
	int		 fd, rc, fds[FRAME_FDS_MAX];
	size_t		 nfds = 0, i;

	if ((fd = unix_connect(socket_path)) == -1) {
		snprintf(err, errlen, "%s: %s", socket_path, strerror(errno));
		return NULL;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1 ||
	    frame_send(fd, msg, nsfd != -1 ? &nsfd : NULL,
	    nsfd != -1 ? 1 : 0) == -1) {
		snprintf(err, errlen, "%s: %s", socket_path, strerror(errno));
		close(fd);
		return NULL;
	}
	rc = frame_recv(fd, NGC_REPLY_MAX, &reply, fds, &nfds, e, sizeof(e));
	close(fd);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (rc != 1) {
		snprintf(err, errlen, "%s: %s", socket_path, rc == 0 ?
		    "netguard closed the connection" : e);
		return NULL;
	}
	return reply;
}
