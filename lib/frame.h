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
/* Absolute ceiling of any frame: an exec frame to the session driver
 * carries up to 1 MiB of code, which JSON escaping may grow sixfold. */
#define FRAME_MAX	(8 * 1024 * 1024)

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

/*
 * Blocking helper for clients and tests.  On -1 the peer may hold part of
 * a frame (a send timeout, an error mid-way): the connection can carry no
 * further frame and must be closed.  Never use it on a non-blocking
 * descriptor; use struct frame_out there.
 */
int	 frame_send(int fd, const json_t *msg, const int *fds, size_t nfds);

/*
 * A frame on its way to a non-blocking peer, from an event loop: the peer
 * gets it whole, or the connection is to be dropped; never half a frame
 * followed by another.  start encodes msg (at most max bytes) and keeps
 * duplicates of fds, which go with the first byte; flush writes what the
 * socket takes: 1 when all of it is out, 0 when some remains (wait for
 * the socket to be writable and flush again), -1 on error (close the
 * connection).  Only one frame at a time: start fails while one is
 * pending.
 */
struct frame_out {
	struct buf	 b;
	size_t		 off;
	int		 fds[FRAME_FDS_MAX];
	size_t		 nfds;
};
void	 frame_out_init(struct frame_out *);
int	 frame_out_start(struct frame_out *, const json_t *msg, size_t max,
	    const int *fds, size_t nfds);
/* start, but the frame takes fds themselves (none on -1): no duplicate. */
int	 frame_out_give(struct frame_out *, const json_t *msg, size_t max,
	    const int *fds, size_t nfds);
int	 frame_out_flush(struct frame_out *, int fd);
int	 frame_out_pending(const struct frame_out *);
/* Drops what was not sent and closes the kept descriptors. */
void	 frame_out_free(struct frame_out *);
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
