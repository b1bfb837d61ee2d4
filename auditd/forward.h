/*
 * Forwarding the audit log to SIEM collectors: RFC 5425 (syslog over
 * TLS, octet-counted framing), one thread per collector, reading the log
 * files themselves from a cursor kept on disk, so an outage of the
 * collector loses nothing and a restart of the daemon sends nothing twice.
 */
#ifndef STOCKADE_FORWARD_H
#define STOCKADE_FORWARD_H

#include <stdint.h>
#include <jansson.h>

#include "config.h"
#include "writer.h"

struct forwarders;

/* Starts a thread per conf->forward entry; NULL when there are none. */
struct forwarders	*forward_start(const struct audit_conf *, struct writer *);
/*
 * Stopping, while the daemon still serves its writers: each connected
 * collector is to acknowledge up to seq.  _caught_up says 1 once they
 * all have, or 3 s on; fs may be NULL.
 */
void			 forward_catch_up(struct forwarders *, uint64_t seq);
int			 forward_caught_up(struct forwarders *);
/*
 * Sends the rest of what is on disk (for at most 1 s, even
 * to a collector that stalls), closes each connection cleanly, saves
 * each cursor, joins the threads.  The writer must outlive this.
 */
void			 forward_stop(struct forwarders *);
/*
 * Each collector: name, address, connected, delivered_seq (acknowledged
 * by the collector), error (why it is down; "" while connected).  A new
 * array; fs may be NULL.
 */
json_t			*forward_status(struct forwarders *);

#endif
