/*
 * Draining a node (fleet.drain_grace_s): what SIGTERM does when a router
 * feeds this server and its clients must not lose calls in flight.
 */
#ifndef STOCKADE_DRAIN_H
#define STOCKADE_DRAIN_H

#include <jansson.h>

#include "sessions/server.h"

/*
 * How the server stops once drained, with the reason its sessions close
 * with (session_closed).
 */
typedef void drain_stop_fn(struct server *, const char *reason);

/*
 * Starts draining: no new sessions or calls from now (srv->draining);
 * the calls running may finish within the grace, then stop() runs.  -1
 * when there is no grace or a drain already runs: the caller stops now.
 */
int	 drain_begin(struct server *, drain_stop_fn *stop);
/* Adds what a drain did to daemon_stop (ev may be NULL; returns it). */
json_t	*drain_record(json_t *ev);
void	 drain_free(void);

#endif
