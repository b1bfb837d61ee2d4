/*
 * The MCP server's shared state: settings, the default profile, the
 * compiled seccomp filter, pattern rules, the audit connection and the
 * live sessions.  One event loop thread owns all of it.
 */
#ifndef STOCKADE_SERVER_H
#define STOCKADE_SERVER_H

#include <sys/queue.h>

#include <event2/event.h>
#include <jansson.h>

#include "audit_client.h"
#include "commands.h"
#include "patterns.h"
#include "profile.h"
#include "seccomp_filter.h"

#define SERVER_NAME		"stockade-mcp-exec"

#define AUDIT_PENDING_MAX	4096	/* events sent, not yet acknowledged */
#define AUDIT_ACK_TIMEOUT_MS	10000
#define AUDIT_IO_TIMEOUT_S	5

struct session;
LIST_HEAD(session_list, session);
struct audit_pending;
TAILQ_HEAD(audit_queue, audit_pending);

struct server {
	struct event_base	*base;
	const char		*rules_dir;
	struct mcpexec_conf	 conf;
	struct profile		 profile;	/* the default profile */
	struct seccomp_prog	 seccomp;
	struct patterns		*patterns;
	struct commands		*commands;	/* run_command's allowlist */
	struct audit_client	 audit;
	struct event		*audit_ev;	/* its acknowledgements */
	struct event		*audit_timer;
	struct event		*audit_broken;	/* a send failed */
	struct audit_queue	 audit_q;	/* sent, not yet acknowledged */
	unsigned		 audit_qlen;
	char			**caller_argv;	/* wiped inside sandboxes */
	struct session_list	 sessions;
	unsigned		 nsessions;
	struct event		*reaper;
	int			 stopping;
};

/* ok: the daemon acknowledged the event (for sync: it is on disk). */
typedef void audit_done_fn(void *arg, int ok, const char *err);

void	server_audit_init(struct server *);
/* Waits a bounded time for the queue to drain, then closes. */
void	server_audit_shutdown(struct server *);
/* Queues an event (stolen); a failure to keep it is logged. */
void	server_audit(struct server *, json_t *event);
/*
 * Queues an event (stolen) to be written to disk before the daemon
 * answers; done is called from the event loop when it did or when it
 * cannot.  Returns -1 with err when it could not even be sent: then done
 * is never called.
 */
int	server_audit_sync(struct server *, json_t *event, audit_done_fn *done,
	    void *arg, char *err, size_t errlen);
/* 1 when code may run only if audited. */
int	server_audit_required(const struct server *);

#endif
