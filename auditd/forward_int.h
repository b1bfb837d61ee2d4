/*
 * Private to forward.c and forward_conn.c: a forwarder's state, shared by
 * the thread that reads the log and sends it (forward.c) and the bounded
 * connection to its collector (forward_conn.c).  One thread owns a
 * struct fwd; only stop_by (atomic) and the st_* fields (under mu) are
 * read by others.
 */
#ifndef STOCKADE_FORWARD_INT_H
#define STOCKADE_FORWARD_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <openssl/ssl.h>

#include "config.h"
#include "writer.h"

#define FWD_RING		256		/* delivery marks kept */

struct fwd_mark {
	uint64_t	 seq;
	uint64_t	 at_ms;
};

struct fwd {
	struct audit_forward	 cf;
	char			 log_dir[PATH_MAX];
	char			 cursor_path[PATH_MAX];
	char			 hostname[256];
	struct writer		*w;
	pthread_t		 thread;
	uint64_t		 stop_by;	/* atomic; mono ms, 0: running */
	SSL_CTX			*ctx;
	SSL			*ssl;
	int			 fd;
	uint64_t		 saved;		/* on disk: resume after it */
	uint64_t		 sent;		/* written to the connection */
	uint64_t		 delivered;	/* acknowledged by the peer */
	struct fwd_mark		 ring[FWD_RING];	/* delivered, when */
	size_t			 nring;
	/* The reader: a position in one log file. */
	FILE			*f;
	uint64_t		 file_first;
	char			*line;
	size_t			 linecap;
	int			 down_logged;
	/* What forward_status reports, under mu. */
	pthread_mutex_t		 mu;
	int			 st_connected;
	uint64_t		 st_delivered;
	char			 st_error[512];
};

/* How a wait for the socket ended. */
enum fwd_io {
	IO_READY,
	IO_FAILED,		/* errno, or OpenSSL's error queue */
	IO_TIMEOUT,
	IO_STOPPED,		/* the daemon stops: no new connection */
};

/* The stop deadline (mono ms), 0 while running. */
static inline uint64_t
fwd_stop_by(struct fwd *fw)
{
	return __atomic_load_n(&fw->stop_by, __ATOMIC_ACQUIRE);
}

static inline int
fwd_stopping(struct fwd *fw)
{
	return fwd_stop_by(fw) != 0;
}

/*
 * The connection.  fwd_conn_open connects (name lookup, TCP, TLS verified
 * against the collector's name), every wait bounded and cut short by a
 * stop; err says why it failed.  fwd_tls_write writes all of buf, or -1
 * once the peer stalled FWD_IO_TIMEOUT_MS or at stop_by.
 */
SSL_CTX		*fwd_ctx_new(const struct audit_forward *);
int		 fwd_conn_open(struct fwd *, char *err, size_t errlen);
void		 fwd_conn_close(struct fwd *, int clean);
int		 fwd_tls_write(struct fwd *, const void *, int);
/* 1 when every byte sent has been acknowledged by the peer's TCP. */
int		 fwd_all_acked(struct fwd *);

#endif
