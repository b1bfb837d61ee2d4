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
	struct audit_client	 audit;
	char			**caller_argv;	/* wiped inside sandboxes */
	struct session_list	 sessions;
	unsigned		 nsessions;
	struct event		*reaper;
	int			 stopping;
};

/*
 * Appends an audit event.  sync: returns only once it is on disk.
 * Returns 0, or -1 with err: then, if audit is required, nothing may run.
 */
int	server_audit(struct server *, json_t *event, int sync, char *err,
	    size_t errlen);
/* 1 when code may run only if audited and the daemon is unreachable. */
int	server_audit_required(const struct server *);

#endif
