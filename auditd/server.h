/*
 * The writers' socket: accepts connections, authenticates each peer with
 * SO_PEERCRED against the configured writer uids, reads frames and passes
 * validated events to the writer.  docs/ipc.md documents the messages.
 */
#ifndef STOCKADE_SERVER_H
#define STOCKADE_SERVER_H

#include <event2/event.h>

#include "config.h"
#include "writer.h"

struct server;

struct server	*server_start(struct event_base *, const struct audit_conf *,
		    struct writer *);
struct forwarders;
/* The forwarders whose state `status` reports (may stay unset). */
void		 server_set_forwarders(struct server *, struct forwarders *);
/* Applies reloadable settings: writers, limits, code, busy_poll_us. */
void		 server_reconfigure(struct server *, const struct audit_conf *);
/* Stops accepting and reading; acks still go out. */
void		 server_stop(struct server *);
void		 server_free(struct server *);

#endif
