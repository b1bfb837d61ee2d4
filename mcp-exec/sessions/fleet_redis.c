/*
 * The fleet quota store's connection (fleet_redis.h).  Trusts the store
 * it verified (or, without TLS, the one it was pointed at) to count, not
 * to answer sanely: a reply is parsed by hiredis's reader and bounded in
 * size, and anything else breaks the connection.
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <netdb.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "fleet_redis.h"
#include "util.h"

#define REPLY_MAX	(64 * 1024)	/* our scripts answer a few numbers */

struct fleet_redis {
	int		 fd;
	SSL_CTX		*ctx;
	SSL		*ssl;
	redisReader	*reader;
	unsigned	 timeout_ms;
};

/* Waits for events on the socket until deadline (mono ms): 0, or -1. */
static int
wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd	 pfd = { .fd = fd, .events = events };
	uint64_t	 now;
	int		 n;

	for (;;) {
		if ((now = mono_ms()) >= deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
		if ((n = poll(&pfd, 1, (int)(deadline - now))) > 0)
			return 0;
		if (n == -1 && errno != EINTR)
			return -1;
	}
}

/* A connected non-blocking socket to addr, or -1 with err. */
static int
dial(const char *addr, uint64_t deadline, char *err, size_t errlen)
{
	struct sockaddr_un	 sun = { .sun_family = AF_UNIX };
	struct addrinfo		 hints = { .ai_socktype = SOCK_STREAM }, *res,
				*ai;
	const char		*colon;
	char			 host[256];
	socklen_t		 sl;
	int			 fd = -1, soerr, rc;

	if (addr[0] == '/') {
		if (xsnprintf(sun.sun_path, sizeof(sun.sun_path), "%s",
		    addr) == -1) {
			snprintf(err, errlen, "socket path too long");
			return -1;
		}
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, 0)) == -1 || connect(fd,
		    (struct sockaddr *)&sun, sizeof(sun)) == -1) {
			snprintf(err, errlen, "connect: %s", strerror(errno));
			if (fd != -1)
				close(fd);
			return -1;
		}
		return fd;
	}
	colon = strrchr(addr, ':');	/* host:port, checked at load */
	snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
	/* A name is looked up with the resolver's own timeouts. */
	if ((rc = getaddrinfo(host, colon + 1, &hints, &res)) != 0) {
		snprintf(err, errlen, "%s: %s", host, gai_strerror(rc));
		return -1;
	}
	snprintf(err, errlen, "no address");
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, ai->ai_protocol)) == -1)
			continue;
		soerr = 0;
		sl = sizeof(soerr);
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
		    (errno == EINPROGRESS && wait_fd(fd, POLLOUT,
		    deadline) == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR,
		    &soerr, &sl) == 0 && soerr == 0))
			break;
		snprintf(err, errlen, "connect: %s", strerror(soerr ? soerr :
		    errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

static void
tls_err(char *err, size_t errlen, const char *what)
{
	unsigned long	 e = ERR_get_error();

	snprintf(err, errlen, "%s: %s", what, e ? ERR_reason_error_string(e) :
	    errno ? strerror(errno) : "connection closed");
	ERR_clear_error();
}

/* Waits for what the TLS call that returned rc wants: 0, or -1. */
static int
tls_wait(struct fleet_redis *r, int rc, uint64_t deadline)
{
	switch (SSL_get_error(r->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		return wait_fd(r->fd, POLLIN, deadline);
	case SSL_ERROR_WANT_WRITE:
		return wait_fd(r->fd, POLLOUT, deadline);
	default:
		return -1;
	}
}

static int
tls_start(struct fleet_redis *r, const struct fleet_tls *tls,
    const char *addr, uint64_t deadline, char *err, size_t errlen)
{
	char	 host[256];
	int	 rc;

	snprintf(host, sizeof(host), "%.*s", (int)(strrchr(addr, ':') - addr),
	    addr);
	if (tls->server_name[0] != '\0')
		snprintf(host, sizeof(host), "%s", tls->server_name);
	if ((r->ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_set_min_proto_version(r->ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_load_verify_locations(r->ctx, tls->ca, NULL) != 1 ||
	    (tls->cert[0] != '\0' &&
	    (SSL_CTX_use_certificate_chain_file(r->ctx, tls->cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(r->ctx, tls->key,
	    SSL_FILETYPE_PEM) != 1))) {
		tls_err(err, errlen, "TLS setup");
		return -1;
	}
	SSL_CTX_set_verify(r->ctx, SSL_VERIFY_PEER, NULL);
	if ((r->ssl = SSL_new(r->ctx)) == NULL ||
	    SSL_set_fd(r->ssl, r->fd) != 1 ||
	    SSL_set1_host(r->ssl, host) != 1) {
		tls_err(err, errlen, "TLS");
		return -1;
	}
	/* SNI for names only; an address is checked by SSL_set1_host. */
	if (strspn(host, "0123456789.:") != strlen(host))
		(void)SSL_set_tlsext_host_name(r->ssl, host);
	while ((rc = SSL_connect(r->ssl)) != 1)
		if (tls_wait(r, rc, deadline) == -1) {
			tls_err(err, errlen, "TLS handshake");
			return -1;
		}
	return 0;
}

struct fleet_redis *
fleet_redis_open(const char *addr, const struct fleet_tls *tls,
    unsigned timeout_ms, char *err, size_t errlen)
{
	struct fleet_redis	*r = xcalloc(1, sizeof(*r));
	uint64_t		 deadline = mono_ms() + timeout_ms;

	r->timeout_ms = timeout_ms;
	errno = 0;
	if ((r->fd = dial(addr, deadline, err, errlen)) == -1)
		goto bad;
	if (tls->ca[0] != '\0' && tls_start(r, tls, addr, deadline, err,
	    errlen) == -1)
		goto bad;
	if ((r->reader = redisReaderCreate()) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto bad;
	}
	return r;
bad:
	fleet_redis_close(r);
	return NULL;
}

static int
put(struct fleet_redis *r, const char *buf, size_t len, uint64_t deadline)
{
	ssize_t	 n;
	int	 rc;

	while (len > 0) {
		if (r->ssl != NULL) {
			if ((rc = SSL_write(r->ssl, buf, (int)len)) <= 0) {
				if (tls_wait(r, rc, deadline) == -1)
					return -1;
				continue;
			}
			n = rc;
		} else if ((n = write(r->fd, buf, len)) == -1) {
			if ((errno != EAGAIN && errno != EINTR) ||
			    wait_fd(r->fd, POLLOUT, deadline) == -1)
				return -1;
			continue;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Some bytes into buf: their count, or -1 (0 never: a close is -1). */
static ssize_t
get(struct fleet_redis *r, char *buf, size_t len, uint64_t deadline)
{
	ssize_t	 n;
	int	 rc;

	for (;;) {
		if (r->ssl != NULL) {
			if ((rc = SSL_read(r->ssl, buf, (int)len)) > 0)
				return rc;
			if (tls_wait(r, rc, deadline) == -1)
				return -1;
			continue;
		}
		if ((n = read(r->fd, buf, len)) > 0)
			return n;
		if (n == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if ((errno != EAGAIN && errno != EINTR) ||
		    wait_fd(r->fd, POLLIN, deadline) == -1)
			return -1;
	}
}

redisReply *
fleet_redis_argv(struct fleet_redis *r, int argc, const char **argv,
    char *err, size_t errlen)
{
	uint64_t	 deadline = mono_ms() + r->timeout_ms;
	char		*cmd = NULL, buf[4096];
	void		*reply = NULL;
	size_t		 got = 0;
	ssize_t		 n;
	int		 len;

	errno = 0;
	if ((len = redisFormatCommandArgv(&cmd, argc, argv, NULL)) < 0) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (put(r, cmd, (size_t)len, deadline) == -1) {
		free(cmd);
		tls_err(err, errlen, "write");
		return NULL;
	}
	free(cmd);
	for (;;) {
		if (redisReaderGetReply(r->reader, &reply) != REDIS_OK) {
			snprintf(err, errlen, "bad reply: %s",
			    r->reader->errstr);
			return NULL;
		}
		if (reply != NULL)
			return reply;
		if (got >= REPLY_MAX) {
			snprintf(err, errlen, "reply over %d bytes", REPLY_MAX);
			return NULL;
		}
		if ((n = get(r, buf, sizeof(buf), deadline)) == -1) {
			tls_err(err, errlen, "read");
			return NULL;
		}
		got += (size_t)n;
		if (redisReaderFeed(r->reader, buf, (size_t)n) != REDIS_OK) {
			snprintf(err, errlen, "bad reply: %s",
			    r->reader->errstr);
			return NULL;
		}
	}
}

void
fleet_redis_close(struct fleet_redis *r)
{
	if (r == NULL)
		return;
	if (r->ssl != NULL)
		SSL_free(r->ssl);
	SSL_CTX_free(r->ctx);
	if (r->fd != -1)
		close(r->fd);
	if (r->reader != NULL)
		redisReaderFree(r->reader);
	ERR_clear_error();
	free(r);
}
