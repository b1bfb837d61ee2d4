/*
 * Client of netguard's control socket (docs/ipc.md), for mcp-exec and
 * `stockade net`.  Blocking, one request per connection, bounded by a
 * timeout: the caller waits at most that long for netguard.
 */
#ifndef STOCKADE_NG_CLIENT_H
#define STOCKADE_NG_CLIENT_H

#include <stddef.h>
#include <jansson.h>

#define NGC_REPLY_MAX		(4 * 1024 * 1024)
#define NGC_TIMEOUT_MS		5000	/* an attach of a large policy */

/*
 * Sends msg (borrowed) with nsfd (-1: none) and returns netguard's reply
 * (caller owns; check its "ok"), or NULL with err when netguard could not
 * be reached or did not answer in time.
 */
json_t	*ngc_call(const char *socket_path, const json_t *msg, int nsfd,
	    int timeout_ms, char *err, size_t errlen);

#endif
