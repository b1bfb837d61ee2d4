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
struct principals;
LIST_HEAD(session_list, session);

/* What the command line says; it wins over the rules on every load. */
struct server_opts {
	const char		*rules_dir;
	const char		*profile;	/* NULL: default_profile */
	const char		*state_dir;	/* NULL: the rules' */
	const char		*audit_socket;
	const char		*netguard_socket;
};

/* Everything a load reads from the rules directory. */
struct server_policy {
	struct mcpexec_conf	 conf;
	struct profile		 profile;
	struct patterns		*patterns;
	struct commands		*commands;
	struct principals	*principals;
	json_t			*files;		/* [{path, sha256}] */
};

struct server {
	struct event_base	*base;
	struct server_opts	 opts;
	/* The policy in force (server.c swaps it whole on a reload). */
	struct mcpexec_conf	 conf;
	struct profile		 profile;	/* new sessions' profile */
	struct patterns		*patterns;
	struct commands		*commands;	/* run_command's allowlist */
	struct principals	*principals;	/* HTTP bearer tokens */
	json_t			*policy_files;	/* what was loaded, hashed */
	int			 tokens_required; /* HTTP beyond loopback */
	struct seccomp_prog	 seccomp;
	struct audit_link	 audit;
	char			**caller_argv;	/* wiped inside sandboxes */
	struct session_list	 sessions;
	unsigned		 nsessions;
	struct event		*reaper;
	int			 stopping;
	struct metrics		 metrics;	/* for GET /metrics */
};

/* Loads the rules named by srv->opts; prints errors, -1 when invalid. */
int	server_load(struct server *);
/* SIGHUP: all of the rules again, or nothing (audited either way). */
int	server_reload(struct server *);
/* The policy_load record of the rules in force. */
void	server_audit_loaded(struct server *);
void	server_unload(struct server *);

/* Events through the server's audit link (lib/audit_link.h). */
#define server_audit(srv, ev)	audit_link_send(&(srv)->audit, (ev))
#define server_audit_sync(srv, ev, done, arg, err, errlen) \
	audit_link_sync(&(srv)->audit, (ev), (done), (arg), (err), (errlen))
/* 1 when code may run only if audited. */
#define server_audit_required(srv)	((srv)->conf.server.audit_required)

#endif
