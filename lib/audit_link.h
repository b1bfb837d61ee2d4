/*
 * A daemon's asynchronous link to stockade-auditd, driven by its libevent
 * loop (see audit_link.c for the failure semantics: one resend after a
 * reconnect, bounded waits).  The loop's thread owns it.
 */
#ifndef STOCKADE_AUDIT_LINK_H
#define STOCKADE_AUDIT_LINK_H

#include <sys/queue.h>

#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "audit_client.h"

#define AUDIT_LINK_PENDING_MAX		4096	/* sent, not yet acknowledged */
#define AUDIT_LINK_ACK_TIMEOUT_MS	10000
#define AUDIT_LINK_IO_TIMEOUT_S		5

struct audit_pending;
TAILQ_HEAD(audit_queue, audit_pending);

struct audit_link {
	struct event_base	*base;
	char			 socket_path[4096];
	char			 who[32];	/* this program, for messages */
	struct audit_client	 client;
	struct event		*ev;		/* acknowledgements */
	struct event		*timer;
	struct event		*broken;	/* a send failed */
	struct audit_queue	 q;		/* sent, not yet acknowledged */
	unsigned		 qlen;
	uint64_t		 lost;		/* events not recorded, ever */
};

/* ok: the daemon acknowledged the event (for sync: it is on disk). */
typedef void audit_done_fn(void *arg, int ok, const char *err);

/* Connects lazily, on the first event. */
void	audit_link_init(struct audit_link *, struct event_base *,
	    const char *socket_path, const char *who);
/* Waits a bounded time for the queue to drain, then closes. */
void	audit_link_shutdown(struct audit_link *);
/* Queues an event (stolen); a failure to keep it is logged. */
void	audit_link_send(struct audit_link *, json_t *event);
/*
 * Queues an event (stolen) to be written to disk before the daemon
 * answers; done is called from the event loop when it did or when it
 * cannot.  Returns -1 with err when it could not even be sent: then done
 * is never called.
 */
int	audit_link_sync(struct audit_link *, json_t *event, audit_done_fn *done,
	    void *arg, char *err, size_t errlen);
/* How long (ms) the oldest event not yet acknowledged has waited; 0: none. */
uint64_t audit_link_oldest_ms(const struct audit_link *);

#endif
