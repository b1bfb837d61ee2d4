/*
 * The policy mcp-exec serves, from the rules directory: settings, the
 * default profile, pattern rules, the command allowlist and the HTTP
 * principals.  Loaded whole at start and on SIGHUP: parse everything,
 * validate, then swap, so that a reload that fails anywhere changes
 * nothing.  Sessions keep the profile they were made with; settings that
 * shape what is already running (paths, uids, cgroups, listeners) apply
 * at the next start, and a reload that changes them says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_client.h"
#include "audit_fit.h"
#include "hash.h"
#include "conf.h"
#include "log.h"
#include "preflight.h"
#include "reload.h"
#include "sessions/pool.h"
#include "sessions/server.h"
#include "tools/authz.h"
#include "tools/commands.h"
#include "tools/patterns.h"
#include "transport/mtls.h"
#include "transport/oauth.h"
#include "transport/principals.h"
#include "util.h"

#define RULES_FILE_MAX	(16 * 1024 * 1024)	/* hashed for policy_load */

/* Everything a load reads from the rules directory. */
struct server_policy {
	struct mcpexec_conf	 conf;
	struct profile		 profile;
	struct patterns		*patterns;
	struct commands		*commands;
	struct principals	*principals;
	struct authz		*authz;
	struct profile		*profiles;	/* the default first */
	size_t			 nprofiles;
	json_t			*files;		/* [{path, sha256}] */
};

static void
policy_free(struct server_policy *p)
{
	patterns_free(p->patterns);
	commands_free(p->commands);
	principals_free(p->principals);
	authz_free(p->authz);
	free(p->profiles);
	json_decref(p->files);
	memset(p, 0, sizeof(*p));
}

/* {path, sha256} of a rules file that exists (it was just loaded). */
static void
policy_file(json_t *files, const char *dir, const char *name)
{
	char	 path[PATH_MAX], hex[SHA256_HEX + 1], *data;
	size_t	 len;

	if (xsnprintf(path, sizeof(path), "%s/%s", dir, name) == -1 ||
	    read_file(path, RULES_FILE_MAX, &data, &len) == -1)
		return;
	sha256_hex(data, len, hex);
	free(data);
	json_array_append_new(files, json_pack("{s:s, s:s}", "path", path,
	    "sha256", hex));
}

/* The command line's paths win over the rules' on every load. */
static int
apply_opts(const struct server_opts *o, struct mcpexec_conf *c)
{
	struct server_conf	*sc = &c->server;

	if (o->state_dir != NULL && (xsnprintf(c->state_dir,
	    sizeof(c->state_dir), "%s", o->state_dir) == -1 ||
	    xsnprintf(c->idmap.lock_dir, sizeof(c->idmap.lock_dir), "%s/uids",
	    o->state_dir) == -1))
		return -1;
	if (o->audit_socket != NULL && xsnprintf(sc->audit_socket,
	    sizeof(sc->audit_socket), "%s", o->audit_socket) == -1)
		return -1;
	if (o->netguard_socket != NULL && xsnprintf(sc->netguard_socket,
	    sizeof(sc->netguard_socket), "%s", o->netguard_socket) == -1)
		return -1;
	/* Checked by the command line's parser to be a label. */
	if (o->node_id != NULL && xsnprintf(c->fleet.node_id,
	    sizeof(c->fleet.node_id), "%s", o->node_id) == -1)
		return -1;
	return 0;
}

/*
 * Every profile principals.yaml names, besides the default: all of them
 * load, or the policy does not (each prints its own errors).
 */
static int
load_profiles(const char *dir, struct server_policy *p)
{
	const char	*names[AUTHZ_PROFILES_TOTAL];
	size_t		 n, i, j;

	n = authz_profile_names(p->authz, names, AUTHZ_PROFILES_TOTAL);
	p->profiles = xcalloc(n + 1, sizeof(*p->profiles));
	profile_copy(&p->profiles[0], &p->profile);
	p->nprofiles = 1;
	for (i = 0; i < n; i++) {
		for (j = 0; j < p->nprofiles; j++)
			if (strcmp(p->profiles[j].name, names[i]) == 0)
				break;
		if (j < p->nprofiles)
			continue;
		if (profile_load(dir, names[i], &p->profiles[p->nprofiles]) ==
		    -1)
			return -1;
		p->nprofiles++;
	}
	return 0;
}

/*
 * Where a load that fails at start is reported: --audit-socket, else the
 * socket mcp-exec.yaml names as far as it loaded (the built-in default
 * when it did not).
 */
static char	 load_socket[PATH_MAX];

static int
policy_load(const struct server_opts *o, struct server_policy *p)
{
	char	 err[PATH_MAX + 256], prof[PROFILE_NAME_MAX + 16];
	size_t	 i;
	int	 rv;

	memset(p, 0, sizeof(*p));
	rv = mcpexec_conf_load(o->rules_dir, &p->conf);
	snprintf(load_socket, sizeof(load_socket), "%s", o->audit_socket ?
	    o->audit_socket : p->conf.server.audit_socket);
	if (rv == -1)
		return -1;
	if (apply_opts(o, &p->conf) == -1) {
		fprintf(stderr, "mcp-exec: a path given on the command line is "
		    "too long\n");
		return -1;
	}
	/* The store names this node's leases; the id may be the command
	 * line's (a pod's name), so it is required here, not in the file. */
	if (p->conf.fleet.redis[0] != '\0' &&
	    p->conf.fleet.node_id[0] == '\0') {
		fprintf(stderr, "mcp-exec: %s: fleet.redis needs this node's "
		    "id: fleet.node_id or --node-id\n", p->conf.path);
		return -1;
	}
	/* Not found: left empty, and preflight_check says where it looked. */
	(void)preflight_driver(&p->conf, err, sizeof(err));
	/* Only --http fetches issuers' keys and loads mTLS files: a stdio
	 * server never uses them and must not wait for a provider. */
	if (profile_load(o->rules_dir, o->profile ? o->profile :
	    p->conf.default_profile, &p->profile) == -1 ||
	    (p->patterns = patterns_load(o->rules_dir)) == NULL ||
	    (p->commands = commands_load(o->rules_dir)) == NULL ||
	    (p->principals = principals_load(o->rules_dir)) == NULL ||
	    (o->http && principals_prepare(p->principals) == -1) ||
	    (p->authz = authz_load(o->rules_dir)) == NULL ||
	    load_profiles(o->rules_dir, p) == -1) {
		policy_free(p);
		return -1;
	}
	p->files = json_array();
	policy_file(p->files, o->rules_dir, MCPEXEC_CONFIG);
	for (i = 0; i < p->nprofiles; i++) {
		snprintf(prof, sizeof(prof), "profiles/%s.yaml",
		    p->profiles[i].name);
		policy_file(p->files, o->rules_dir, prof);
	}
	policy_file(p->files, o->rules_dir, PATTERNS_FILE);
	policy_file(p->files, o->rules_dir, COMMANDS_FILE);
	policy_file(p->files, o->rules_dir, PRINCIPALS_FILE);
	return 0;
}

static void
audit_load(struct server *srv, json_t *files, const char *error)
{
	json_t	*ev, *kept;

	/* A copy: the texts go to the log, not into the policy held. */
	kept = files ? json_deep_copy(files) : json_array();
	if (error == NULL)
		audit_policy_content(kept);
	ev = json_pack("{s:s, s:s, s:o, s:b}", "event", "policy_load",
	    "program", "mcp-exec", "files", kept, "ok", error == NULL);
	if (ev != NULL && error != NULL)
		json_object_set_new(ev, "error", json_string(error));
	server_audit(srv, ev);
}

/* Moves p into srv, handing srv's previous rules back in p. */
static void
policy_swap(struct server *srv, struct server_policy *p)
{
	struct server_policy	 old;

	old.conf = srv->conf;
	profile_copy(&old.profile, &srv->profile);
	old.patterns = srv->patterns;
	old.commands = srv->commands;
	old.principals = srv->principals;
	old.authz = srv->authz;
	old.profiles = srv->profiles;
	old.nprofiles = srv->nprofiles;
	old.files = srv->policy_files;
	srv->conf = p->conf;
	profile_copy(&srv->profile, &p->profile);
	srv->patterns = p->patterns;
	srv->commands = p->commands;
	srv->principals = p->principals;
	srv->authz = p->authz;
	srv->profiles = p->profiles;
	srv->nprofiles = p->nprofiles;
	srv->policy_files = p->files;
	p->conf = old.conf;
	profile_copy(&p->profile, &old.profile);
	p->patterns = old.patterns;
	p->commands = old.commands;
	p->principals = old.principals;
	p->authz = old.authz;
	p->profiles = old.profiles;
	p->nprofiles = old.nprofiles;
	p->files = old.files;
}

int
server_load(struct server *srv)
{
	struct server_policy	 p;

	conf_errors_clear();
	if (policy_load(&srv->opts, &p) == -1)
		return -1;
	policy_swap(srv, &p);
	return 0;
}

/*
 * What a reload cannot change in a running server: kept as it is, with
 * a warning when the rules now say otherwise.
 */
static void
keep_running(const struct mcpexec_conf *run, struct mcpexec_conf *new)
{
#define KEEP(field, what) do {						\
	if (memcmp(&run->field, &new->field, sizeof(run->field)) != 0)	\
		log_warnx("reload: %s changes at the next start", what);\
	memcpy(&new->field, &run->field, sizeof(run->field));		\
} while (0)
	KEEP(state_dir, "state_dir");
	KEEP(idmap, "uids");
	/* cgroup also carries the base resolved at start: keep all of it. */
	KEEP(cgroup.version, "cgroup.version");
	KEEP(cgroup.parent, "cgroup.parent");
	new->cgroup = run->cgroup;
	KEEP(server.audit_socket, "server.audit_socket");
	KEEP(server.netguard_socket, "server.netguard_socket");
	KEEP(server.driver_dir, "server.driver_dir");
	KEEP(server.local_principal, "server.local_principal");
	KEEP(server.max_message_bytes, "server.max_message_bytes");
	KEEP(server.reap_interval_s, "server.sessions.reap_interval_s");
	/* The task store took its limits when it opened (protocol/task.c). */
	KEEP(server.tasks, "server.tasks");
	/* Handles out there name the node: it is who this server is. */
	KEEP(fleet.node_id, "fleet.node_id");
	/* The fleet's quota store is the one it connected to. */
	KEEP(fleet.redis, "fleet.redis");
	KEEP(fleet.password_file, "fleet.password_file");
	KEEP(fleet.on_unreachable, "fleet.on_unreachable");
	KEEP(fleet.lease_s, "fleet.lease_s");
	KEEP(fleet.tls, "fleet.tls");
	/* The peer listener and its certificates are set up at start. */
	KEEP(fleet.peer, "fleet.peer");
#undef KEEP
}

int
server_reload(struct server *srv)
{
	struct server_policy	 p;
	const char		*why = NULL;
	size_t			 i;

	log_info("SIGHUP: reloading %s", srv->opts.rules_dir);
	conf_errors_clear();
	if (policy_load(&srv->opts, &p) == -1)
		/* The loaders' file:line:column lines, as they printed them. */
		why = conf_errors_text()[0] != '\0' ? conf_errors_text() :
		    "the rules do not load (see mcp-exec's log)";
	else if (srv->tokens_required &&
	    !principals_auth_required(p.principals))
		why = "principals.yaml lists no bearer tokens, issuers or mtls, "
		    "and this server listens beyond loopback";
	else if (srv->http_tls != 0 && (srv->http_tls == 2) !=
	    principals_mtls(p.principals)->enabled)
		why = "principals.yaml turns mtls on or off: the HTTP listener "
		    "changes at the next start (its certificates and rules "
		    "reload)";
	/* Each profile a principal may use must work, not only the default. */
	for (i = 0; why == NULL && i < p.nprofiles; i++)
		if (preflight_check(&p.conf, &p.profiles[i], 0) > 0)
			why = "the rules name paths that are not usable (see "
			    "mcp-exec's log)";
	if (why != NULL) {
		log_warnx("reload refused, the running rules stay: %s", why);
		audit_load(srv, p.files, why);
		policy_free(&p);
		return -1;
	}
	keep_running(&srv->conf, &p.conf);
	oauth_issuers_inherit(principals_issuers(p.principals),
	    principals_issuers(srv->principals));
	policy_swap(srv, &p);
	policy_free(&p);
	/* Built under the old policy: none of them may be handed out now. */
	pool_drain(srv);
	if (srv->quota != NULL)
		authz_configure_quotas(srv->authz, srv->quota);
	audit_load(srv, srv->policy_files, NULL);
	log_info("reloaded: profile %s (%zu in all), %zu pattern rules, %zu "
	    "commands, %zu bearer tokens, %zu principals and groups",
	    srv->profile.name, srv->nprofiles, patterns_count(srv->patterns),
	    commands_count(srv->commands), principals_count(srv->principals),
	    authz_count(srv->authz));
	return 0;
}

void
server_unload(struct server *srv)
{
	struct server_policy	 p;

	memset(&p, 0, sizeof(p));
	policy_swap(srv, &p);
	policy_free(&p);
}

void
server_audit_load_failed(void)
{
	const char	*why = conf_errors_text();
	char		 err[512];
	json_t		*ev;

	if (load_socket[0] == '\0') {
		log_warnx("the failed load is not audited: no audit socket");
		return;
	}
	ev = json_pack("{s:s, s:s, s:[], s:b, s:s}", "event", "policy_load",
	    "program", "mcp-exec", "files", "ok", 0, "error", why[0] != '\0' ?
	    why : "the rules do not load (see mcp-exec's log)");
	if (audit_client_once(load_socket, ev, err, sizeof(err)) == -1)
		log_warnx("the failed load is not audited: %s", err);
	json_decref(ev);
}

void
server_audit_loaded(struct server *srv)
{
	audit_load(srv, srv->policy_files, NULL);
}
