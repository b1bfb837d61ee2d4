/*
 * The MCP server's shared state, as every layer from sessions up sees it:
 * settings, the default profile, the compiled seccomp filter, the audit
 * connection, the live sessions and what they publish (counters, the live
 * list).  The rules of the layers above (pattern rules, the command
 * allowlist, bearer tokens) are held here as opaque pointers, loaded and
 * swapped by reload.c.  One event loop thread owns all of it.
 */
#ifndef STOCKADE_SERVER_H
#define STOCKADE_SERVER_H

#include <sys/queue.h>

#include <event2/event.h>
#include <jansson.h>

#include "audit_link.h"
#include "counters.h"
#include "evbase.h"
#include "profile.h"
#include "sandbox/seccomp_filter.h"

#define SERVER_NAME		"stockade-mcp-exec"

struct session;
struct patterns;
struct commands;
struct principals;
struct authz;
struct quota_table;
struct fleet_quota;
struct inflight_log;
LIST_HEAD(session_list, session);

/* What the command line says; it wins over the rules on every load. */
struct server_opts {
	const char		*rules_dir;
	const char		*profile;	/* NULL: default_profile */
	const char		*state_dir;	/* NULL: the rules' */
	const char		*audit_socket;
	const char		*netguard_socket;
	const char		*node_id;	/* NULL: fleet.node_id */
	int			 http;	/* --http: principals.yaml's keys and mTLS */
};

struct server {
	struct event_base	*base;
	struct server_opts	 opts;
	/* The policy in force (reload.c swaps it whole on a reload). */
	struct mcpexec_conf	 conf;
	struct profile		 profile;	/* new sessions' profile */
	/* Every profile a principal may use, the default first. */
	struct profile		*profiles;
	size_t			 nprofiles;
	struct patterns		*patterns;
	struct commands		*commands;	/* run_command's allowlist */
	struct principals	*principals;	/* HTTP bearer tokens */
	struct authz		*authz;		/* who may use what */
	struct quota_table	*quota;		/* usage, kept in state_dir */
	struct fleet_quota	*fleet;		/* fleet.redis: quotas there, or NULL */
	json_t			*policy_files;	/* what was loaded, hashed */
	int			 tokens_required; /* HTTP beyond loopback */
	int			 http_tls;	/* HTTP listener: 0 none, 1 plain, 2 mTLS */
	struct seccomp_prog	 seccomp;
	struct seccomp_prog	 seccomp_wasm;	/* runtime: wasm's (node's) */
	struct audit_link	 audit;
	char			**caller_argv;	/* wiped inside sandboxes */
	struct session_list	 sessions;
	unsigned		 nsessions;
	unsigned		 ncalls;	/* in sessions, running or due */
	/* The warm pool (pool.c): built ahead, nobody's yet; counted
	 * against server.sessions.max_total with the sessions. */
	struct session_list	 pool;
	unsigned		 npool;
	struct event		*pool_ev;	/* builds the next one */
	uint64_t		 pool_deferred;	/* mono ms: a build first waited
						   for calls in flight; 0: none */
	struct event		*reaper;
	int			 stopping;
	/* SIGTERM with fleet.drain_grace_s (drain.c): no new sessions or
	 * calls; running calls finish, then the sessions close. */
	int			 draining;
	/* What sessions and tools publish for ops/ to read. */
	struct counters		 counters;
	json_t			*live;		/* sessions_describe at the
						   last change */
	void			(*published)(struct server *);	/* then */
	struct event		*persist_ev;	/* persist.c: usage to write */
	struct inflight_log	*inflight;	/* inflight.c: executions
						   not yet ended on the record */
};

/* Events through the server's audit link (lib/audit_link.h). */
#define server_audit(srv, ev)	audit_link_send(&(srv)->audit, (ev))
#define server_audit_sync(srv, ev, done, arg, err, errlen) \
	audit_link_sync(&(srv)->audit, (ev), (done), (arg), (err), (errlen))
/*
 * The loop polls for server.busy_poll_us (lib/evbase.h) when a reply is
 * due about that soon: a call's execution_started ack, a short call's
 * result.  Only when that call is the only one in flight: with more, the
 * loop has work to wake it and the CPUs have code to run, which a poll
 * would keep from one of them.  counted: whether ncalls counts the call
 * yet (it does once the call reached its session).
 */
#define server_poll(srv, counted) do {					\
	if ((srv)->ncalls <= (counted))					\
		evbase_poll_for((srv)->conf.server.busy_poll_us);	\
} while (0)
/* 1 when code may run only if audited. */
#define server_audit_required(srv)	((srv)->conf.server.audit_required)

#endif
