/*
 * mcp-exec's settings (rules/mcp-exec.yaml) and sandbox profiles
 * (rules/profiles/NAME.yaml): parsed whole and validated before use;
 * errors name file:line:column.
 */
#ifndef STOCKADE_PROFILE_H
#define STOCKADE_PROFILE_H

#include <limits.h>
#include <stddef.h>

#include "fleet.h"
#include "hash.h"
#include "sandbox/artifacts.h"
#include "sandbox/sandbox.h"
#include "sandbox/stage.h"

#define PROFILE_NAME_MAX	64
#define PROFILE_REACH_MAX	512
#define PROFILE_URL_MAX		512	/* packages.index */
#define PROFILE_POOL_MAX	16	/* pool.size */
#define PROFILE_PREIMPORT_MAX	512	/* pool.preimport, joined */
#define MCPEXEC_CONFIG		"mcp-exec.yaml"

#define KiB	1024ULL		/* sizes in mcp-exec.yaml and profiles */
#define MiB	(1024 * KiB)
#define GiB	(1024 * MiB)

#define PRINCIPAL_MAX		256
/*
 * The most server.max_code_bytes may be: what the pattern scanner scans
 * whole (tools/patterns.h checks that its limit is at least this).
 */
#define CODE_BYTES_MAX		(1024 * 1024)
/* server.busy_poll_us's default: an ack is one fdatasync away. */
#define SERVER_BUSY_POLL_US	300
#define ORIGINS_MAX		16	/* server.allowed_origins (HTTP) */
#define ORIGIN_MAX		256

/* The MCP server's own settings (the `server:` section). */
struct server_conf {
	char		local_principal[PRINCIPAL_MAX];	/* stdio's caller */
	size_t		max_message_bytes;
	char		audit_socket[PATH_MAX];
	int		audit_required;
	/* netguard's control socket, for profiles that name a policy. */
	char		netguard_socket[PATH_MAX];
	char		driver_dir[PATH_MAX];
	size_t		inline_image_max;
	unsigned	idle_timeout_s;
	unsigned	reap_interval_s;
	unsigned	max_sessions;
	unsigned	max_sessions_per_principal;
	/* What the warm pool's sandboxes may hold together (0: no bound
	 * but max_sessions); refills stop at it. */
	uint64_t	pool_memory;
	size_t		max_code_bytes;
	/* How long the loop polls, not sleeps, when a reply is due that
	 * soon (server_poll, sessions/server.h); 0: never. */
	unsigned	busy_poll_us;
	/* /metrics labels quota usage with principal and group names. */
	int		metrics_name_principals;
	/* --http: its shared tables, and each principal's share of them. */
	struct {
		unsigned	max_connections;
		unsigned	max_sessions;
		unsigned	max_sessions_per_principal;
		unsigned	max_requests_per_principal;
		unsigned	unused_timeout_s;
	}		http;
	/* Long calls run as MCP tasks (protocol/task.c): how long one is
	 * kept at most, and how many may exist. */
	struct {
		uint64_t	max_ttl_ms;
		unsigned	max_total;
		unsigned	max_per_principal;
		/* Where the records go; "" = state_dir/tasks.  A durable
		 * volume here lets a task outlive its pod. */
		char		dir[PATH_MAX];
	}		tasks;
	/* 2026-07-28 subscriptions/listen streams (protocol/listen.c):
	 * how many may be open, and for how long at most. */
	struct {
		unsigned	max_total;
		unsigned	max_per_principal;
		unsigned	max_lifetime_s;
	}		listen;
	/* --http: browser Origins accepted besides the loopback ones. */
	char		allowed_origins[ORIGINS_MAX][ORIGIN_MAX];
	unsigned	norigins;
};

/*
 * The `fleet:` section: this server as one node of many.  node_id and
 * drain_grace_s are the router's (sessions/fleet.h); redis and the keys
 * after it are the shared quota store's (sessions/fleet_quota.h), which
 * is on only when redis is set.
 */
#define FLEET_LEASE_S_DEFAULT	15
enum fleet_unreachable { FLEET_UNREACHABLE_REFUSE, FLEET_UNREACHABLE_LOCAL };
/* TLS to the quota store: ca set means TLS. */
struct fleet_tls {
	char			ca[PATH_MAX];
	char			cert[PATH_MAX];		/* "": no client cert */
	char			key[PATH_MAX];
	char			server_name[256];	/* "": the host */
};

/*
 * Forwarding between nodes (transport/http_peer.c): a TLS listener for
 * other nodes' forwarded requests, and where each node's is: url with
 * "{node}" for the node id.  listen "" means none of it.
 */
#define FLEET_PEER_URL_MAX	256
struct fleet_peer {
	char			listen[64];	/* ADDR:PORT */
	char			url[FLEET_PEER_URL_MAX];
	char			ca[PATH_MAX];	/* signs every node's cert */
	char			cert[PATH_MAX];	/* this node's, its id in it */
	char			key[PATH_MAX];
};

struct fleet_conf {
	/* Ends every handle this server mints ("": none, one host). */
	char			node_id[FLEET_NODE_MAX];
	/* SIGTERM: how long running calls may go on, with no new ones
	 * taken, before the sessions close (0: they close at once). */
	unsigned		drain_grace_s;
	char			redis[PATH_MAX];	/* "": no quota store */
	char			password_file[PATH_MAX];	/* "": no AUTH */
	struct fleet_tls	tls;
	enum fleet_unreachable	on_unreachable;
	unsigned		lease_s;
	struct fleet_peer	peer;
};

struct mcpexec_conf {
	char			path[PATH_MAX];
	char			state_dir[PATH_MAX];
	char			default_profile[PROFILE_NAME_MAX];
	struct idmap_conf	idmap;
	struct cgroup_conf	cgroup;
	struct server_conf	server;
	struct fleet_conf	fleet;
};

struct profile {
	char			name[PROFILE_NAME_MAX];
	char			path[PATH_MAX];
	struct sandbox_limits	limits;
	unsigned		timeout_default_ms;
	unsigned		timeout_max_ms;
	size_t			stdout_max;
	size_t			stderr_max;
	char			input_roots[STAGE_ROOTS_MAX][PATH_MAX];
	struct input_rules	inputs;		/* roots point into input_roots */
	char			artifact_dir[PATH_MAX];	/* under /workspace */
	struct artifact_rules	artifacts;
	enum net_level		net;
	char			network[PROFILE_NAME_MAX];
	int			netguard;	/* network is netguard's policy */
	/* What the sandbox can reach, in words, for the tool descriptions:
	 * from the netguard policy's level and allow list. */
	char			reach[PROFILE_REACH_MAX];
	char			hostname[PROFILE_NAME_MAX];
	int			landlock_required;
	enum sandbox_runtime	runtime;	/* runtime: native | gvisor | wasm */
	/* The trust store (tls:); tls_on when any of it is bound. */
	int			tls_on;
	int			tls_system;	/* the host's CA bundle */
	char			tls_extra_ca[PATH_MAX];	/* "" or a PEM file */
	/* packages: pip installs into a layer of the session's own. */
	int			pkg_install;
	char			pkg_index[PROFILE_URL_MAX];	/* https://... */
	/* code_retention: "" (audit.yaml's alone), "hash", "sample" or
	 * "full": the least the log must keep of this profile's code.
	 * stockade-auditd keeps the stricter of this and its own. */
	char			code_retention[8];
	/* pool: sandboxes built ahead (sessions/pool.c), and the modules
	 * their driver imports before it waits: "" or "numpy,pandas". */
	unsigned		pool_size;
	char			pool_preimport[PROFILE_PREIMPORT_MAX];
};

/* rules_dir/mcp-exec.yaml (built-in defaults when absent). */
int	mcpexec_conf_load(const char *rules_dir, struct mcpexec_conf *);
/* rules_dir/profiles/NAME.yaml; prints errors, returns -1 when invalid. */
int	profile_load(const char *rules_dir, const char *name, struct profile *);
int	profile_name_ok(const char *);
/* A copy that stands alone (inputs.roots point into its own strings). */
void	profile_copy(struct profile *dst, const struct profile *src);

#endif
