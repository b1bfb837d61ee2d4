/*
 * Length-prefixed JSON frames over Unix stream sockets.  The receiving side
 * treats every byte as untrusted: the length is checked against the
 * caller's cap before any allocation and the payload must parse as exactly
 * one JSON object.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "frame.h"
#include "log.h"
#include "util.h"

void
frame_put_header(uint8_t hdr[FRAME_HDR_LEN], size_t n)
{
	hdr[0] = (uint8_t)(n >> 24);
	hdr[1] = (uint8_t)(n >> 16);
	hdr[2] = (uint8_t)(n >> 8);
	hdr[3] = (uint8_t)n;
}

/* Appends what jansson emits, up to max bytes of payload. */
struct frame_sink {
	struct buf	*out;
	size_t		 left;
};

static int
frame_sink_add(const char *p, size_t n, void *arg)
{
	struct frame_sink	*fs = arg;

	if (n > fs->left || buf_add(fs->out, p, n) == -1)
		return -1;
	fs->left -= n;
	return 0;
}

int
frame_encode(const json_t *msg, size_t max, struct buf *out)
{
	struct frame_sink	 fs = { out, max < FRAME_MAX ? max : FRAME_MAX };
	size_t			 n, start = out->len;
	uint8_t			 hdr[FRAME_HDR_LEN] = { 0 };

	/* One pass (sizing first doubled the encoding of every record);
	 * the header is filled in once the length is known. */
	if (buf_add(out, hdr, sizeof(hdr)) == -1)
		return -1;
	if (json_dump_callback(msg, frame_sink_add, &fs, JSON_COMPACT) == -1 ||
	    (n = out->len - start - FRAME_HDR_LEN) == 0) {
		out->len = start;
		return -1;
	}
	frame_put_header(out->data + start, n);
	return 0;
}

int
frame_header(const uint8_t hdr[FRAME_HDR_LEN], size_t max, size_t *len)
{
	uint32_t	 n;

	n = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 |
	    (uint32_t)hdr[2] << 8 | hdr[3];
	if (n == 0 || n > max || n > FRAME_MAX)
		return -1;
	*len = n;
	return 0;
}

json_t *
frame_parse(const void *payload, size_t len, char *err, size_t errlen)
{
	json_error_t	 je;
	json_t		*v;

	/* Default flags refuse NUL in strings and invalid UTF-8. */
	v = json_loadb(payload, len, JSON_REJECT_DUPLICATES, &je);
	if (v == NULL) {
		snprintf(err, errlen, "invalid JSON at byte %d: %s",
		    je.position, je.text);
		return NULL;
	}
	if (!json_is_object(v)) {
		snprintf(err, errlen, "message is not a JSON object");
		json_decref(v);
		return NULL;
	}
	return v;
}

/* One sendmsg of b from off, with fds on it when nfds > 0. */
static ssize_t
frame_sendmsg(int fd, const struct buf *b, size_t off, const int *fds,
    size_t nfds)
{
	struct msghdr	 mh;
	struct iovec	 iov;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int) * FRAME_FDS_MAX)];
	} cm;
	struct cmsghdr	*c;
	ssize_t		 n;

	memset(&mh, 0, sizeof(mh));
	iov.iov_base = b->data + off;
	iov.iov_len = b->len - off;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfds > 0) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do {
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	} while (n == -1 && errno == EINTR);
	return n;
}

void
frame_out_init(struct frame_out *fo)
{
	memset(fo, 0, sizeof(*fo));
	buf_init(&fo->b, FRAME_HDR_LEN + FRAME_MAX);
}

int
frame_out_pending(const struct frame_out *fo)
{
	return fo->off < fo->b.len;
}

static int
frame_out_encode(struct frame_out *fo, const json_t *msg, size_t max,
    size_t nfds)
{
	if (frame_out_pending(fo) || nfds > FRAME_FDS_MAX) {
		errno = EINVAL;
		return -1;
	}
	frame_out_free(fo);
	frame_out_init(fo);
	if (frame_encode(msg, max, &fo->b) == -1) {
		errno = EMSGSIZE;
		return -1;
	}
	return 0;
}

int
frame_out_start(struct frame_out *fo, const json_t *msg, size_t max,
    const int *fds, size_t nfds)
{
	size_t	 i;

	if (frame_out_encode(fo, msg, max, nfds) == -1)
		return -1;
	/* Ours until the first byte is out: the caller may close its own. */
	for (i = 0; i < nfds; i++) {
		if ((fo->fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 0)) == -1) {
			fo->nfds = i;
			frame_out_free(fo);
			return -1;
		}
	}
	fo->nfds = nfds;
	return 0;
}

int
frame_out_give(struct frame_out *fo, const json_t *msg, size_t max,
    const int *fds, size_t nfds)
{
	if (frame_out_encode(fo, msg, max, nfds) == -1)
		return -1;
	memcpy(fo->fds, fds, nfds * sizeof(*fds));
	fo->nfds = nfds;
	return 0;
}

static void
frame_out_close_fds(struct frame_out *fo)
{
	size_t	 i;

	for (i = 0; i < fo->nfds; i++)
		close(fo->fds[i]);
	fo->nfds = 0;
}

int
frame_out_flush(struct frame_out *fo, int fd)
{
	ssize_t	 n;

	while (frame_out_pending(fo)) {
		n = frame_sendmsg(fd, &fo->b, fo->off, fo->fds, fo->nfds);
		if (n == -1)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		/* The descriptors went with the first byte. */
		frame_out_close_fds(fo);
		fo->off += (size_t)n;
	}
	return 1;
}

void
frame_out_free(struct frame_out *fo)
{
	frame_out_close_fds(fo);
	buf_free(&fo->b);
	fo->off = 0;
}

int
frame_send(int fd, const json_t *msg, const int *fds, size_t nfds)
{
	struct buf	 b;
	ssize_t		 n;
	int		 rv = -1;

	if (nfds > FRAME_FDS_MAX) {
		errno = EINVAL;
		return -1;
	}
	buf_init(&b, FRAME_HDR_LEN + FRAME_MAX);
	if (frame_encode(msg, FRAME_MAX, &b) == -1) {
		errno = EMSGSIZE;
		goto out;
	}
	if ((n = frame_sendmsg(fd, &b, 0, fds, nfds)) == -1)
		goto out;
	/* The descriptors went with the first byte; send the rest plainly. */
	if ((size_t)n < b.len &&
	    write_all(fd, b.data + n, b.len - (size_t)n) == -1)
		goto out;
	rv = 0;
out:
	buf_free(&b);
	return rv;
}

static void
close_fds(int *fds, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

int
frame_recv(int fd, size_t max, json_t **msg, int *fds, size_t *nfds,
    char *err, size_t errlen)
{
	uint8_t		 hdr[FRAME_HDR_LEN];
	struct msghdr	 mh;
	struct iovec	 iov;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int) * FRAME_FDS_MAX)];
	} cm;
	struct cmsghdr	*c;
	size_t		 len, got = 0, nrecv = 0, cnt;
	char		*payload = NULL;
	ssize_t		 n;

	*msg = NULL;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	while (got < sizeof(hdr)) {
		iov.iov_base = hdr + got;
		iov.iov_len = sizeof(hdr) - got;
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "recvmsg: %s", strerror(errno));
			goto fail;
		}
		if (n == 0) {
			if (got == 0 && nrecv == 0)
				return 0;
			snprintf(err, errlen, "connection closed mid-frame");
			goto fail;
		}
		for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level != SOL_SOCKET ||
			    c->cmsg_type != SCM_RIGHTS)
				continue;
			cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			if (fds == NULL || nrecv + cnt > FRAME_FDS_MAX) {
				/* Close what we cannot keep; never leak them. */
				close_fds((int *)CMSG_DATA(c), cnt);
				snprintf(err, errlen, "unexpected descriptors");
				goto fail;
			}
			memcpy(fds + nrecv, CMSG_DATA(c), cnt * sizeof(int));
			nrecv += cnt;
		}
		if (mh.msg_flags & MSG_CTRUNC) {
			snprintf(err, errlen, "descriptors truncated");
			goto fail;
		}
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
		got += (size_t)n;
	}
	if (frame_header(hdr, max, &len) == -1) {
		snprintf(err, errlen, "frame length out of range");
		goto fail;
	}
	payload = xmalloc(len);
	if ((n = read_all(fd, payload, len)) == -1 || (size_t)n != len) {
		snprintf(err, errlen, "short frame");
		goto fail;
	}
	if ((*msg = frame_parse(payload, len, err, errlen)) == NULL)
		goto fail;
	free(payload);
	if (nfds != NULL)
		*nfds = nrecv;
	return 1;
fail:
	free(payload);
	if (fds != NULL)
		close_fds(fds, nrecv);
	if (nfds != NULL)
		*nfds = 0;
	return -1;
}

static int
unix_addr(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (xsnprintf(sun->sun_path, sizeof(sun->sun_path), "%s", path) == -1) {
		log_warnx("socket path too long: %s", path);
		return -1;
	}
	return 0;
}

int
unix_listen(const char *path, mode_t mode, int backlog)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	mode_t			 old;
	int			 fd;

	if (unix_addr(path, &sun) == -1)
		return -1;
	/* Replace a stale socket, but never unlink anything else. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_warnx("%s exists and is not a socket", path);
			return -1;
		}
		if (unlink(path) == -1) {
			log_warn("unlink %s", path);
			return -1;
		}
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1) {
		log_warn("socket");
		return -1;
	}
	/* Create the socket file with no window in which it is too open. */
	old = umask(0777 & ~mode);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		umask(old);
		log_warn("bind %s", path);
		close(fd);
		return -1;
	}
	umask(old);
	if (chmod(path, mode) == -1 || listen(fd, backlog) == -1) {
		log_warn("listen %s", path);
		close(fd);
		return -1;
	}
	return fd;
}

int
unix_connect(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd;

	if (unix_addr(path, &sun) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int
peer_cred(int fd, struct peer *p)
{
	struct ucred	 uc;
	socklen_t	 len = sizeof(uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == -1 ||
	    len != sizeof(uc))
		return -1;
	p->uid = uc.uid;
	p->gid = uc.gid;
	p->pid = uc.pid;
	return 0;
}
