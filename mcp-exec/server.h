/*
 * The MCP server's shared state: settings, the default profile, the
 * compiled seccomp filter, pattern rules, the audit connection, the
 * live sessions and the operational counters.  One event loop thread owns
 * all of it.
 */
#ifndef STOCKADE_SERVER_H
#define STOCKADE_SERVER_H

#include <sys/queue.h>

#include <event2/event.h>
#include <jansson.h>

#include "audit_link.h"
#include "commands.h"
#include "metrics.h"
#include "patterns.h"
#include "profile.h"
#include "seccomp_filter.h"

#define SERVER_NAME		"stockade-mcp-exec"

struct session;
LIST_HEAD(session_list, session);

struct server {
	struct event_base	*base;
	const char		*rules_dir;
	struct mcpexec_conf	 conf;
	struct profile		 profile;	/* the default profile */
	struct seccomp_prog	 seccomp;
	struct patterns		*patterns;
	struct commands		*commands;	/* run_command's allowlist */
	struct audit_link	 audit;
	char			**caller_argv;	/* wiped inside sandboxes */
	struct session_list	 sessions;
	unsigned		 nsessions;
	struct event		*reaper;
	int			 stopping;
	struct metrics		 metrics;	/* for GET /metrics */
};

/* Events through the server's audit link (lib/audit_link.h). */
#define server_audit(srv, ev)	audit_link_send(&(srv)->audit, (ev))
#define server_audit_sync(srv, ev, done, arg, err, errlen) \
	audit_link_sync(&(srv)->audit, (ev), (done), (arg), (err), (errlen))
/* 1 when code may run only if audited. */
#define server_audit_required(srv)	((srv)->conf.server.audit_required)

#endif
