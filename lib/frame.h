/*
 * IPC between Stockade's daemons: Unix stream sockets carrying frames of a
 * 4-byte big-endian length followed by one JSON object.  Every frame size is
 * checked against a cap before anything is allocated; the peer is
 * identified with SO_PEERCRED, never by anything it says; file descriptors
 * travel with SCM_RIGHTS on the frame's first byte.
 */
#ifndef STOCKADE_FRAME_H
#define STOCKADE_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "buf.h"

#define FRAME_HDR_LEN	4
#define FRAME_FDS_MAX	4
#define FRAME_MAX	(4 * 1024 * 1024)	/* absolute ceiling of any frame */

struct peer {
	uid_t	uid;
	gid_t	gid;
	pid_t	pid;
};

/* The 4-byte big-endian header for a payload of n bytes. */
void	 frame_put_header(uint8_t hdr[FRAME_HDR_LEN], size_t n);
/* Appends header + compact JSON of msg to out; -1 when larger than max. */
int	 frame_encode(const json_t *msg, size_t max, struct buf *out);
/* Payload length from a header; -1 when zero or above max. */
int	 frame_header(const uint8_t hdr[FRAME_HDR_LEN], size_t max, size_t *len);
/*
 * Parses a payload: must be one JSON object, valid UTF-8, no NUL, no
 * duplicate keys.  Returns a new reference (caller owns) or NULL with err.
 */
json_t	*frame_parse(const void *payload, size_t len, char *err, size_t errlen);

/* Blocking helpers for clients and tests. */
int	 frame_send(int fd, const json_t *msg, const int *fds, size_t nfds);
/*
 * Returns 1 with *msg (caller owns) and any received descriptors, 0 on a
 * clean EOF before a frame, -1 on error (err says why).
 */
int	 frame_recv(int fd, size_t max, json_t **msg, int *fds, size_t *nfds,
	    char *err, size_t errlen);

/* Creates, binds and listens; a stale socket file at path is replaced. */
int	 unix_listen(const char *path, mode_t mode, int backlog);
int	 unix_connect(const char *path);
int	 peer_cred(int fd, struct peer *);

#endif
