/*
 * The fleet quota store's connection: a unix socket, or TCP with TLS
 * (OpenSSL, the server verified against a CA, optionally a client
 * certificate) or without.  Commands go out as hiredis formats them and
 * replies are parsed by hiredis's reader; the I/O is ours, because
 * bookworm's hiredis (0.14) has no TLS.  Every step (connect, handshake,
 * each command) is bounded by the timeout the connection was opened with:
 * the caller's event loop waits at most that.
 */
#ifndef STOCKADE_FLEET_REDIS_H
#define STOCKADE_FLEET_REDIS_H

#include <hiredis.h>

#include "profile.h"

struct fleet_redis;

/* Connects to addr ("/path" or "host:port"), with TLS when tls->ca is
 * set; NULL with err filled. */
struct fleet_redis *fleet_redis_open(const char *addr,
		    const struct fleet_tls *tls, unsigned timeout_ms,
		    char *err, size_t errlen);
/*
 * One command; its reply (an error reply included: the caller reads it),
 * or NULL with err filled when the connection failed, timed out or sent
 * what is not a reply (then only fleet_redis_close is left to call).
 */
redisReply	*fleet_redis_argv(struct fleet_redis *, int argc,
		    const char **argv, char *err, size_t errlen);
void		 fleet_redis_close(struct fleet_redis *);

#endif
