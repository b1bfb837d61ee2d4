/*
 * Loads rules/mcp-exec.yaml: the server's state directory, uid range,
 * cgroup placement, server section (sockets, limits, sessions, tasks,
 * listen, HTTP) and fleet section (node id, drain, quota store).
 * Operator input: every key is type- and range-checked and unknown keys
 * are errors (profiles are profile.c's).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "profile.h"
#include "util.h"

static void
mcpexec_defaults(struct mcpexec_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->state_dir, sizeof(c->state_dir), "/run/stockade/mcp-exec");
	snprintf(c->default_profile, sizeof(c->default_profile), "default");
	c->idmap.first = 200000;
	c->idmap.count = 10000;
	c->cgroup.version = CGROUP_AUTO;
	snprintf(c->server.local_principal, sizeof(c->server.local_principal),
	    "user:local");
	c->server.max_message_bytes = 4 * MiB;
	snprintf(c->server.audit_socket, sizeof(c->server.audit_socket),
	    "/run/stockade/auditd.sock");
	c->server.audit_required = 1;
	snprintf(c->server.netguard_socket, sizeof(c->server.netguard_socket),
	    "/run/stockade/netguard.sock");
	/* driver_dir stays empty: found beside the program (preflight.c). */
	c->server.inline_image_max = 256 * KiB;
	c->server.idle_timeout_s = 300;
	c->server.reap_interval_s = 30;
	c->server.max_sessions = 32;
	c->server.max_sessions_per_principal = 4;
	c->server.pool_memory = 1024 * MiB;
	c->server.max_code_bytes = 1 * MiB;
	c->server.busy_poll_us = SERVER_BUSY_POLL_US;
	c->server.http.max_connections = 512;
	c->server.http.max_sessions = 256;
	c->server.http.max_sessions_per_principal = 32;
	c->server.http.max_requests_per_principal = 64;
	c->server.http.unused_timeout_s = 60;
	c->server.tasks.max_ttl_ms = 3600000;
	c->server.tasks.max_total = 256;
	c->server.tasks.max_per_principal = 32;
	c->server.listen.max_total = 64;
	c->server.listen.max_per_principal = 4;
	c->server.listen.max_lifetime_s = 3600;
}

static void
get_path(struct conf_ctx *ctx, const json_t *obj, const char *key, char *out,
    size_t outlen)
{
	const char	*s;

	if (conf_get_string(ctx, obj, key, &s) != 1)
		return;
	if (s[0] != '/')
		conf_error(ctx, json_object_get(obj, key), "%s: must be an "
		    "absolute path", key);
	else if (xsnprintf(out, outlen, "%s", s) == -1)
		conf_error(ctx, json_object_get(obj, key), "%s: too long", key);
}

/*
 * Origins the HTTP transport accepts from browsers besides its own
 * loopback ones: "http(s)://host[:port]", compared whole (ignoring case),
 * which is the form a browser's Origin header takes.
 */
static void
origins_list(struct conf_ctx *ctx, const json_t *arr, struct server_conf *s)
{
	const json_t	*v, *at;
	const char	*o, *host;
	unsigned	 line, column;
	size_t		 i;

	json_array_foreach(arr, i, v) {
		/* null, true and false have no position: name the list. */
		at = conf_doc_where(ctx->doc, v, &line, &column) == 0 ? v : arr;
		if (s->norigins == ORIGINS_MAX) {
			conf_error(ctx, at, "allowed_origins: at most %d",
			    ORIGINS_MAX);
			break;
		}
		o = json_string_value(v);
		host = o == NULL ? NULL : strncmp(o, "http://", 7) == 0 ?
		    o + 7 : strncmp(o, "https://", 8) == 0 ? o + 8 : NULL;
		if (host == NULL || host[0] == '\0' ||
		    strpbrk(host, "/?#@ \t") != NULL) {
			conf_error(ctx, at, "allowed_origins: entry %zu: "
			    "http(s)://host[:port], without a path", i + 1);
			continue;
		}
		if (xsnprintf(s->allowed_origins[s->norigins], ORIGIN_MAX, "%s",
		    o) == -1) {
			conf_error(ctx, at, "allowed_origins: entry %zu: at "
			    "most %d bytes", i + 1, ORIGIN_MAX - 1);
			continue;
		}
		s->norigins++;
	}
}

/* A section's max_total and max_per_principal (sessions, tasks, listen):
 * a principal at its limit must leave room for the others. */
static void
get_caps(struct conf_ctx *ctx, const json_t *sub, const char *what,
    int64_t max, unsigned *total, unsigned *per)
{
	int64_t	 i;

	if (conf_get_int(ctx, sub, "max_total", 1, max, &i) == 1)
		*total = (unsigned)i;
	if (conf_get_int(ctx, sub, "max_per_principal", 1, max, &i) == 1)
		*per = (unsigned)i;
	if (*per > *total)
		conf_error(ctx, sub, "%s: max_per_principal (%u) above "
		    "max_total (%u)", what, *per, *total);
}

static void
server_section(struct conf_ctx *ctx, const json_t *o, struct server_conf *s)
{
	static const char *const keys[] = { "local_principal",
	    "max_message_bytes", "audit_socket", "audit_required", "driver_dir",
	    "inline_image_max", "sessions", "max_code_bytes",
	    "allowed_origins", "netguard_socket", "http",
	    "metrics_name_principals", "tasks", "listen", "busy_poll_us", NULL };
	static const char *const skeys[] = { "idle_timeout_s",
	    "reap_interval_s", "max_total", "max_per_principal", "pool_memory",
	    NULL };
	static const char *const hkeys[] = { "max_connections", "max_sessions",
	    "max_sessions_per_principal", "max_requests_per_principal",
	    "unused_session_timeout_s", NULL };
	static const char *const tkeys[] = { "max_ttl_ms", "max_total",
	    "max_per_principal", "dir", NULL };
	static const char *const lkeys[] = { "max_total",
	    "max_per_principal", "max_lifetime_s", NULL };
	json_t		*sub;
	const char	*str;
	uint64_t	 u;
	int64_t		 i;
	int		 b;

	conf_check_keys(ctx, o, keys);
	if (conf_get_string(ctx, o, "local_principal", &str) == 1 &&
	    (str[0] == '\0' || xsnprintf(s->local_principal,
	    sizeof(s->local_principal), "%s", str) == -1))
		conf_error(ctx, json_object_get(o, "local_principal"),
		    "local_principal: 1 to %d bytes", PRINCIPAL_MAX - 1);
	if (conf_get_size(ctx, o, "max_message_bytes", 64 * KiB, 64 * MiB,
	    &u) == 1)
		s->max_message_bytes = (size_t)u;
	/* The pattern scanner refuses more than it can scan whole. */
	if (conf_get_size(ctx, o, "max_code_bytes", 1 * KiB, CODE_BYTES_MAX,
	    &u) == 1)
		s->max_code_bytes = (size_t)u;
	if (conf_get_int(ctx, o, "busy_poll_us", 0, 1000, &i) == 1)
		s->busy_poll_us = (unsigned)i;
	get_path(ctx, o, "audit_socket", s->audit_socket,
	    sizeof(s->audit_socket));
	if (conf_get_bool(ctx, o, "audit_required", &b) == 1)
		s->audit_required = b;
	if (conf_get_bool(ctx, o, "metrics_name_principals", &b) == 1)
		s->metrics_name_principals = b;
	get_path(ctx, o, "netguard_socket", s->netguard_socket,
	    sizeof(s->netguard_socket));
	get_path(ctx, o, "driver_dir", s->driver_dir, sizeof(s->driver_dir));
	if (conf_get_size(ctx, o, "inline_image_max", 0, 16 * MiB, &u) == 1)
		s->inline_image_max = (size_t)u;
	if (conf_get_array(ctx, o, "allowed_origins", &sub) == 1)
		origins_list(ctx, sub, s);
	if (conf_get_object(ctx, o, "sessions", &sub) == 1) {
		conf_check_keys(ctx, sub, skeys);
		if (conf_get_int(ctx, sub, "idle_timeout_s", 1, 86400, &i) == 1)
			s->idle_timeout_s = (unsigned)i;
		if (conf_get_int(ctx, sub, "reap_interval_s", 1, 3600, &i) == 1)
			s->reap_interval_s = (unsigned)i;
		get_caps(ctx, sub, "sessions", 10000, &s->max_sessions,
		    &s->max_sessions_per_principal);
		if (conf_get_size(ctx, sub, "pool_memory", 0, 1024 * GiB,
		    &u) == 1)
			s->pool_memory = u;
	}
	if (conf_get_object(ctx, o, "tasks", &sub) == 1) {
		conf_check_keys(ctx, sub, tkeys);
		if (conf_get_int(ctx, sub, "max_ttl_ms", 1000, 7 * 86400000LL,
		    &i) == 1)
			s->tasks.max_ttl_ms = (uint64_t)i;
		get_caps(ctx, sub, "tasks", 100000, &s->tasks.max_total,
		    &s->tasks.max_per_principal);
		get_path(ctx, sub, "dir", s->tasks.dir, sizeof(s->tasks.dir));
	}
	if (conf_get_object(ctx, o, "listen", &sub) == 1) {
		conf_check_keys(ctx, sub, lkeys);
		get_caps(ctx, sub, "listen", 10000, &s->listen.max_total,
		    &s->listen.max_per_principal);
		if (conf_get_int(ctx, sub, "max_lifetime_s", 1, 86400,
		    &i) == 1)
			s->listen.max_lifetime_s = (unsigned)i;
	}
	if (conf_get_object(ctx, o, "http", &sub) == 1) {
		conf_check_keys(ctx, sub, hkeys);
		if (conf_get_int(ctx, sub, "max_connections", 1, 100000,
		    &i) == 1)
			s->http.max_connections = (unsigned)i;
		if (conf_get_int(ctx, sub, "max_sessions", 1, 100000, &i) == 1)
			s->http.max_sessions = (unsigned)i;
		if (conf_get_int(ctx, sub, "max_sessions_per_principal", 1,
		    100000, &i) == 1)
			s->http.max_sessions_per_principal = (unsigned)i;
		if (conf_get_int(ctx, sub, "max_requests_per_principal", 1,
		    100000, &i) == 1)
			s->http.max_requests_per_principal = (unsigned)i;
		if (conf_get_int(ctx, sub, "unused_session_timeout_s", 1, 86400,
		    &i) == 1)
			s->http.unused_timeout_s = (unsigned)i;
		if (s->http.max_sessions_per_principal > s->http.max_sessions)
			conf_error(ctx, sub, "http: max_sessions_per_principal "
			    "(%u) above max_sessions (%u)",
			    s->http.max_sessions_per_principal,
			    s->http.max_sessions);
	}
}

/*
 * fleet.tls: TLS to a quota store at host:port, the server verified
 * against ca (and server_name, else the host), with a client certificate
 * when cert and key are given (both or neither).
 */
static void
fleet_tls_section(struct conf_ctx *ctx, const json_t *o, struct fleet_conf *f)
{
	static const char *const keys[] = { "ca", "cert", "key",
	    "server_name", NULL };
	json_t		*t;
	const char	*s;

	if (conf_get_object(ctx, o, "tls", &t) != 1)
		return;
	conf_check_keys(ctx, t, keys);
	get_path(ctx, t, "ca", f->tls.ca, sizeof(f->tls.ca));
	get_path(ctx, t, "cert", f->tls.cert, sizeof(f->tls.cert));
	get_path(ctx, t, "key", f->tls.key, sizeof(f->tls.key));
	if (conf_get_string(ctx, t, "server_name", &s) == 1 &&
	    xsnprintf(f->tls.server_name, sizeof(f->tls.server_name), "%s",
	    s) == -1)
		conf_error(ctx, json_object_get(t, "server_name"),
		    "server_name: too long");
	if (f->tls.ca[0] == '\0')
		conf_error(ctx, t, "tls: ca: required (the CA that signed "
		    "the store's certificate)");
	if ((f->tls.cert[0] == '\0') != (f->tls.key[0] == '\0'))
		conf_error(ctx, t, "tls: cert and key go together");
	if (f->redis[0] == '\0')
		conf_error(ctx, t, "tls: no redis to use it for");
	else if (f->redis[0] == '/')
		conf_error(ctx, t, "tls: the store is a unix socket (TLS is "
		    "for host:port)");
}

/*
 * fleet.peer: a request for another node's handle goes to that node
 * (transport/http_peer.c).  All five keys together: the listener other
 * nodes forward to, the URL of every node's ("{node}" stands for its
 * id), and the CA and this node's certificate and key, both ways.
 */
static void
fleet_peer_section(struct conf_ctx *ctx, const json_t *o,
    struct fleet_conf *f)
{
	static const char *const keys[] = { "listen", "url", "ca", "cert",
	    "key", NULL };
	struct fleet_peer *p = &f->peer;
	json_t		*t;
	const char	*s, *colon;
	size_t		 i;

	if (conf_get_object(ctx, o, "peer", &t) != 1)
		return;
	conf_check_keys(ctx, t, keys);
	if (conf_get_string(ctx, t, "listen", &s) == 1 && ((colon =
	    strrchr(s, ':')) == NULL || colon == s || colon[1] == '\0' ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    xsnprintf(p->listen, sizeof(p->listen), "%s", s) == -1))
		conf_error(ctx, json_object_get(t, "listen"), "listen: "
		    "ADDR:PORT or [ADDR6]:PORT");
	if (conf_get_string(ctx, t, "url", &s) == 1 && (strncmp(s,
	    "https://", 8) != 0 || strstr(s, "{node}") == NULL ||
	    xsnprintf(p->url, sizeof(p->url), "%s", s) == -1))
		conf_error(ctx, json_object_get(t, "url"), "url: https://, "
		    "with {node} where the node id goes (at most %d bytes)",
		    FLEET_PEER_URL_MAX - 1);
	get_path(ctx, t, "ca", p->ca, sizeof(p->ca));
	get_path(ctx, t, "cert", p->cert, sizeof(p->cert));
	get_path(ctx, t, "key", p->key, sizeof(p->key));
	/* A key that is there and wrong has had its own error. */
	for (i = 0; keys[i] != NULL; i++)
		if (json_is_null(json_object_get(t, keys[i])) ||
		    json_object_get(t, keys[i]) == NULL) {
			conf_error(ctx, t, "peer: listen, url, ca, cert and "
			    "key go together (%s is missing)", keys[i]);
			break;
		}
}

/*
 * fleet: what this node is called (node_id, a DNS label that ends its
 * handles), how it drains, and where the shared quota store is.  The
 * store is on only when redis is set (a unix socket path or host:port);
 * its leases and records are named by the node id, which mcp-exec then
 * requires at load (reload.c): nodes of a fleet share one file (a
 * ConfigMap) and may each take their id from --node-id.
 */
static void
fleet_section(struct conf_ctx *ctx, const json_t *o, struct fleet_conf *f)
{
	static const char *const keys[] = { "node_id", "drain_grace_s",
	    "redis", "on_unreachable", "lease_s", "password_file", "tls",
	    "peer", NULL };
	static const char *const modes[] = { "refuse", "local", NULL };
	const char	*s, *colon;
	int64_t		 i;
	int		 e, r;

	f->lease_s = FLEET_LEASE_S_DEFAULT;
	conf_check_keys(ctx, o, keys);
	if (conf_get_string(ctx, o, "node_id", &s) == 1) {
		if (!fleet_node_ok(s))
			conf_error(ctx, json_object_get(o, "node_id"),
			    "node_id: a DNS label (a-z, 0-9, '-'; 1 to %d; "
			    "no '-' at either end)", FLEET_NODE_MAX - 1);
		else
			snprintf(f->node_id, sizeof(f->node_id), "%s", s);
	}
	if (conf_get_int(ctx, o, "drain_grace_s", 0, FLEET_DRAIN_MAX_S,
	    &i) == 1)
		f->drain_grace_s = (unsigned)i;
	if ((r = conf_get_string(ctx, o, "redis", &s)) == 1 &&
	    (s[0] != '/' && ((colon = strrchr(s, ':')) == NULL ||
	    colon == s || strspn(colon + 1, "0123456789") !=
	    strlen(colon + 1) || colon[1] == '\0' || strlen(colon + 1) > 5)))
		conf_error(ctx, json_object_get(o, "redis"), "redis: a unix "
		    "socket path or host:port");
	else if (r == 1 && xsnprintf(f->redis, sizeof(f->redis), "%s",
	    s) == -1)
		conf_error(ctx, json_object_get(o, "redis"), "redis: too long");
	if (conf_get_enum(ctx, o, "on_unreachable", modes, &e) == 1)
		f->on_unreachable = (enum fleet_unreachable)e;
	if (conf_get_int(ctx, o, "lease_s", 3, 3600, &i) == 1)
		f->lease_s = (unsigned)i;
	get_path(ctx, o, "password_file", f->password_file,
	    sizeof(f->password_file));
	fleet_tls_section(ctx, o, f);
	fleet_peer_section(ctx, o, f);
}

int
mcpexec_conf_load(const char *rules_dir, struct mcpexec_conf *c)
{
	static const char *const top[] = { "state_dir", "default_profile",
	    "uids", "cgroup", "server", "fleet", NULL };
	static const char *const uid_keys[] = { "first", "count", NULL };
	static const char *const cg_keys[] = { "version", "parent", NULL };
	static const char *const versions[] = { "auto", "v1", "v2", NULL };
	struct conf_doc	*doc;
	struct conf_ctx	 ctx;
	const char	*s;
	json_t		*root, *sub;
	int64_t		 i;
	int		 e;

	mcpexec_defaults(c);
	if (xsnprintf(c->path, sizeof(c->path), "%s/%s", rules_dir,
	    MCPEXEC_CONFIG) == -1)
		return -1;
	if (access(c->path, F_OK) == -1)
		goto paths;
	if ((doc = conf_doc_load_report(c->path)) == NULL)
		return -1;
	conf_ctx_init(&ctx, doc);
	root = conf_doc_root(doc);
	if (conf_expect_object(&ctx, root, MCPEXEC_CONFIG) == 0) {
		conf_check_keys(&ctx, root, top);
		get_path(&ctx, root, "state_dir", c->state_dir,
		    sizeof(c->state_dir));
		if (conf_get_string(&ctx, root, "default_profile", &s) == 1) {
			if (!profile_name_ok(s))
				conf_error(&ctx, json_object_get(root,
				    "default_profile"), "not a profile name");
			else
				snprintf(c->default_profile,
				    sizeof(c->default_profile), "%s", s);
		}
		if (conf_get_object(&ctx, root, "uids", &sub) == 1) {
			conf_check_keys(&ctx, sub, uid_keys);
			/* Above the ids any distribution hands out to people. */
			if (conf_get_int(&ctx, sub, "first", 100000,
			    4000000000LL, &i) == 1)
				c->idmap.first = (uid_t)i;
			if (conf_get_int(&ctx, sub, "count", 1, 1000000, &i) == 1)
				c->idmap.count = (unsigned)i;
		}
		if (conf_get_object(&ctx, root, "server", &sub) == 1)
			server_section(&ctx, sub, &c->server);
		if (conf_get_object(&ctx, root, "fleet", &sub) == 1)
			fleet_section(&ctx, sub, &c->fleet);
		if (conf_get_object(&ctx, root, "cgroup", &sub) == 1) {
			conf_check_keys(&ctx, sub, cg_keys);
			if (conf_get_enum(&ctx, sub, "version", versions, &e) == 1)
				c->cgroup.version = (enum cgroup_version)e;
			if (conf_get_string(&ctx, sub, "parent", &s) == 1 &&
			    (strstr(s, "..") != NULL || xsnprintf(c->cgroup.parent,
			    sizeof(c->cgroup.parent), "%s", s) == -1))
				conf_error(&ctx, json_object_get(sub, "parent"),
				    "parent: a cgroup path without '..'");
		}
	}
	if (conf_ctx_finish(&ctx, doc) == -1)
		return -1;
paths:
	if (xsnprintf(c->idmap.lock_dir, sizeof(c->idmap.lock_dir), "%s/uids",
	    c->state_dir) == -1)
		return -1;
	return 0;
}
