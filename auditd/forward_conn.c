/*
 * A forwarder's connection to its collector: the name looked up in
 * glibc's helper thread, a non-blocking TCP connect, a TLS handshake that
 * verifies the collector against `ca` and `server_name`.  Every wait is a
 * poll of at most FWD_SLICE_MS that looks at the stop deadline, so a
 * collector that stalls cannot hold the daemon's stop.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <netdb.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "forward_int.h"
#include "log.h"
#include "util.h"

#define FWD_CONNECT_MS		5000
#define FWD_HANDSHAKE_MS	3000		/* a TLS peer answers at once */
#define FWD_IO_TIMEOUT_MS	10000		/* a write stalled this long */
#define FWD_SLICE_MS		50		/* waits look at the stop */
#define FWD_NOT_TLS		"is it a TLS port?"

/* A name lookup in glibc's helper thread: all that thread reads. */
struct fwd_lookup {
	struct gaicb	 cb;
	struct addrinfo	 hints;
	char		 host[sizeof(((struct audit_forward *)0)->host)];
	char		 port[sizeof(((struct audit_forward *)0)->port)];
};

/*
 * Waits for fd to be ready for events, until deadline (mono ms) and never
 * past the stop deadline.  stop_ends: a connect or handshake, given up as
 * soon as the daemon stops (nothing of the log is on its way yet).
 */
static enum fwd_io
fwd_wait(struct fwd *fw, int fd, short events, uint64_t deadline,
    int stop_ends)
{
	struct pollfd	 pfd = { .fd = fd, .events = events };
	uint64_t	 now, stop_by, left;
	int		 n;

	for (;;) {
		if ((stop_by = fwd_stop_by(fw)) != 0) {
			if (stop_ends)
				return IO_STOPPED;
			if (stop_by < deadline)
				deadline = stop_by;
		}
		if ((now = mono_ms()) >= deadline)
			return IO_TIMEOUT;
		left = deadline - now;
		n = poll(&pfd, 1, left < FWD_SLICE_MS ? (int)left :
		    FWD_SLICE_MS);
		if (n > 0)
			return IO_READY;
		if (n == -1 && errno != EINTR)
			return IO_FAILED;
	}
}

void
fwd_conn_close(struct fwd *fw, int clean)
{
	if (fw->ssl != NULL) {
		if (clean)
			(void)SSL_shutdown(fw->ssl);
		SSL_free(fw->ssl);
	}
	fw->ssl = NULL;
	if (fw->fd != -1)
		close(fw->fd);
	fw->fd = -1;
	/* SSL_get_error on the next connection reads this thread's queue. */
	ERR_clear_error();
}

/*
 * The collector's addresses.  The lookup runs in glibc's helper thread
 * (getaddrinfo_a), so a resolver that never answers cannot hold a stop: a
 * lookup still running then is left to that thread, with the block it
 * reads.  Otherwise it is waited for until the resolver's own timeouts.
 */
static int
fwd_resolve(struct fwd *fw, struct addrinfo **res, char *err, size_t errlen)
{
	struct timespec	 slice = { 0, FWD_SLICE_MS * 1000000L };
	struct fwd_lookup *l;
	struct gaicb	*list[1];
	int		 rc;

	l = xcalloc(1, sizeof(*l));
	snprintf(l->host, sizeof(l->host), "%s", fw->cf.host);
	snprintf(l->port, sizeof(l->port), "%s", fw->cf.port);
	l->hints.ai_socktype = SOCK_STREAM;
	l->cb.ar_name = l->host;
	l->cb.ar_service = l->port;
	l->cb.ar_request = &l->hints;
	list[0] = &l->cb;
	if ((rc = getaddrinfo_a(GAI_NOWAIT, list, 1, NULL)) != 0) {
		free(l);
		snprintf(err, errlen, "%s: %s", fw->cf.host, gai_strerror(rc));
		return -1;
	}
	while ((rc = gai_error(&l->cb)) == EAI_INPROGRESS) {
		if (fwd_stopping(fw) && (rc = gai_cancel(&l->cb)) !=
		    EAI_ALLDONE) {
			if (rc == EAI_CANCELED)
				free(l);
			snprintf(err, errlen, "%s: stopping", fw->cf.host);
			return -1;
		}
		(void)gai_suspend((const struct gaicb *const *)list, 1, &slice);
	}
	*res = l->cb.ar_result;
	free(l);
	if (rc != 0) {
		snprintf(err, errlen, "%s: %s", fw->cf.host, gai_strerror(rc));
		return -1;
	}
	return 0;
}

static int
tcp_connect(struct fwd *fw, char *err, size_t errlen)
{
	struct addrinfo	*res, *ai;
	enum fwd_io	 io;
	socklen_t	 sl;
	int		 fd = -1, soerr;

	if (fwd_resolve(fw, &res, err, errlen) == -1)
		return -1;
	snprintf(err, errlen, "no address");
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, ai->ai_protocol)) == -1) {
			snprintf(err, errlen, "socket: %s", strerror(errno));
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			sl = sizeof(soerr);
			soerr = 0;
			io = fwd_wait(fw, fd, POLLOUT, mono_ms() + FWD_CONNECT_MS,
			    1);
			if (io == IO_READY && getsockopt(fd, SOL_SOCKET,
			    SO_ERROR, &soerr, &sl) == 0 && soerr == 0)
				break;
			errno = io == IO_STOPPED ? ECANCELED : io == IO_TIMEOUT ?
			    ETIMEDOUT : soerr ? soerr : errno;
		}
		snprintf(err, errlen, "connect: %s", strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;		/* non-blocking: see fwd_wait */
}

static void
tls_error(char *err, size_t errlen, const char *what)
{
	unsigned long	 e = ERR_get_error();

	snprintf(err, errlen, "%s: %s", what, e ? ERR_reason_error_string(e) :
	    errno != 0 ? strerror(errno) : "connection closed by the peer");
	ERR_clear_error();
}

/*
 * A TLS call on the non-blocking socket returned rc: waits for what it
 * wants (IO_READY: call it again with the same arguments) until deadline.
 */
static enum fwd_io
tls_wait(struct fwd *fw, int rc, uint64_t deadline, int stop_ends)
{
	switch (SSL_get_error(fw->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		return fwd_wait(fw, fw->fd, POLLIN, deadline, stop_ends);
	case SSL_ERROR_WANT_WRITE:
		return fwd_wait(fw, fw->fd, POLLOUT, deadline, stop_ends);
	default:
		return IO_FAILED;
	}
}

/*
 * The handshake, bounded: a peer that is not TLS either answers with
 * bytes OpenSSL refuses at once, or (a plain-TCP syslog port) nothing.
 */
static int
tls_handshake(struct fwd *fw, char *err, size_t errlen)
{
	uint64_t	 deadline = mono_ms() + FWD_HANDSHAKE_MS;
	enum fwd_io	 io;
	size_t		 n;
	int		 rc, why;

	while ((rc = SSL_connect(fw->ssl)) != 1) {
		if ((io = tls_wait(fw, rc, deadline, 1)) == IO_READY)
			continue;
		if (io == IO_TIMEOUT)
			snprintf(err, errlen, "TLS handshake: no answer in %d s "
			    "(" FWD_NOT_TLS ")", FWD_HANDSHAKE_MS / 1000);
		else if (io == IO_STOPPED)
			snprintf(err, errlen, "TLS handshake: stopping");
		else {
			/* The first bytes of a plaintext answer. */
			why = ERR_GET_REASON(ERR_peek_error());
			tls_error(err, errlen, "TLS handshake");
			n = strlen(err);
			if (why == SSL_R_WRONG_VERSION_NUMBER ||
			    why == SSL_R_PACKET_LENGTH_TOO_LONG)
				snprintf(err + n, errlen - n, " (" FWD_NOT_TLS ")");
		}
		return -1;
	}
	return 0;
}

int
fwd_conn_open(struct fwd *fw, char *err, size_t errlen)
{
	if ((fw->fd = tcp_connect(fw, err, errlen)) == -1)
		return -1;
	if ((fw->ssl = SSL_new(fw->ctx)) == NULL ||
	    SSL_set_fd(fw->ssl, fw->fd) != 1 ||
	    SSL_set1_host(fw->ssl, fw->cf.server_name) != 1) {
		tls_error(err, errlen, "TLS");
		fwd_conn_close(fw, 0);
		return -1;
	}
	/* SNI for names only; an address is checked by SSL_set1_host. */
	if (strspn(fw->cf.server_name, "0123456789.:") !=
	    strlen(fw->cf.server_name))
		(void)SSL_set_tlsext_host_name(fw->ssl, fw->cf.server_name);
	if (tls_handshake(fw, err, errlen) == -1) {
		fwd_conn_close(fw, 0);
		return -1;
	}
	return 0;
}

SSL_CTX *
fwd_ctx_new(const struct audit_forward *cf)
{
	SSL_CTX	*ctx;

	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_load_verify_locations(ctx, cf->ca, NULL) != 1 ||
	    (cf->cert[0] != '\0' &&
	    (SSL_CTX_use_certificate_chain_file(ctx, cf->cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, cf->key, SSL_FILETYPE_PEM) != 1))) {
		log_warnx("forward %s: TLS setup (ca %s%s%s): %s", cf->name,
		    cf->ca, cf->cert[0] ? ", cert " : "", cf->cert,
		    ERR_reason_error_string(ERR_get_error()));
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	return ctx;
}

int
fwd_tls_write(struct fwd *fw, const void *buf, int len)
{
	uint64_t	 deadline = mono_ms() + FWD_IO_TIMEOUT_MS;
	int		 rc;

	while ((rc = SSL_write(fw->ssl, buf, len)) <= 0)
		if (tls_wait(fw, rc, deadline, 0) != IO_READY)
			return -1;
	return 0;
}

int
fwd_all_acked(struct fwd *fw)
{
	int	 outq;

	return ioctl(fw->fd, SIOCOUTQ, &outq) == 0 && outq == 0;
}
