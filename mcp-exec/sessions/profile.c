/*
 * Loads mcp-exec.yaml and sandbox profiles.  Both are operator input from
 * rules/: every key is type- and range-checked, unknown keys are errors,
 * and a profile name never becomes a path outside rules/profiles/.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "pool.h"
#include "profile.h"
#include "sandbox/gvisor.h"
#include "sandbox/trust.h"
#include "util.h"

#define KiB	1024ULL
#define MiB	(1024 * KiB)
#define GiB	(1024 * MiB)

int
profile_name_ok(const char *s)
{
	size_t	 i;

	if (s[0] == '\0' || !((s[0] >= 'a' && s[0] <= 'z') ||
	    (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		if (i >= PROFILE_NAME_MAX - 1)
			return 0;
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
			return 0;
	}
	return 1;
}

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
	    "metrics_name_principals", "tasks", "listen", NULL };
	static const char *const skeys[] = { "idle_timeout_s",
	    "reap_interval_s", "max_total", "max_per_principal", "pool_memory",
	    NULL };
	static const char *const hkeys[] = { "max_connections", "max_sessions",
	    "max_sessions_per_principal", "max_requests_per_principal",
	    "unused_session_timeout_s", NULL };
	static const char *const tkeys[] = { "max_ttl_ms", "max_total",
	    "max_per_principal", NULL };
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

/* Loads a rules file whole; NULL after printing the error. */
static struct conf_doc *
load_doc(const char *path)
{
	struct conf_doc	*doc;
	char		 err[CONF_ERROR_LEN];

	if ((doc = conf_doc_load_file(path, err, sizeof(err))) == NULL)
		conf_report("%s", err);
	return doc;
}

static int
finish(struct conf_ctx *ctx, struct conf_doc *doc)
{
	int	 rv = ctx->nerrors ? -1 : 0;

	if (rv == -1)
		conf_ctx_report(ctx);
	conf_doc_free(doc);
	return rv;
}


int
mcpexec_conf_load(const char *rules_dir, struct mcpexec_conf *c)
{
	static const char *const top[] = { "state_dir", "default_profile",
	    "uids", "cgroup", "server", NULL };
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
	if ((doc = load_doc(c->path)) == NULL)
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
	if (finish(&ctx, doc) == -1)
		return -1;
paths:
	if (xsnprintf(c->idmap.lock_dir, sizeof(c->idmap.lock_dir), "%s/uids",
	    c->state_dir) == -1)
		return -1;
	return 0;
}

static void
profile_defaults(struct profile *p)
{
	struct sandbox_limits	*l = &p->limits;
	int			 t;

	memset(p, 0, sizeof(*p));
	l->memory = 512 * MiB;
	l->swap = 0;
	l->pids = 64;
	l->cpu_millis = 1000;
	l->tmp_size = 64 * MiB;
	l->workspace_size = 128 * MiB;
	l->shm_size = 16 * MiB;
	l->nofile = 256;
	l->file_size = 128 * MiB;
	l->address_space = 4 * GiB;
	p->timeout_default_ms = 10000;
	p->timeout_max_ms = 60000;
	p->stdout_max = 32 * KiB;
	p->stderr_max = 8 * KiB;
	p->inputs.max_bytes = 64 * MiB;
	p->inputs.max_files = 16;
	/* What one message can carry: base64 of 3M fits the 4M default. */
	p->inputs.inline_max_file = 2 * MiB;
	p->inputs.inline_max_call = 3 * MiB;
	for (t = 0; t < ART_NTYPES; t++)
		p->artifacts.types |= 1u << t;
	p->artifacts.max_file = 8 * MiB;
	p->artifacts.max_total = 32 * MiB;
	p->artifacts.max_count = 32;
	p->net = NET_NONE;
	snprintf(p->network, sizeof(p->network), "none");
	snprintf(p->hostname, sizeof(p->hostname), "sandbox");
	p->landlock_required = 1;
}

static void
size_key(struct conf_ctx *ctx, const json_t *o, const char *key, uint64_t min,
    uint64_t max, uint64_t *out)
{
	(void)conf_get_size(ctx, o, key, min, max, out);
}

static void
limits_section(struct conf_ctx *ctx, const json_t *o, struct profile *p)
{
	static const char *const keys[] = { "memory", "swap", "pids", "cpu",
	    "nofile", "file_size", "address_space", NULL };
	struct sandbox_limits	*l = &p->limits;
	const json_t		*cpu;
	int64_t			 i;

	conf_check_keys(ctx, o, keys);
	size_key(ctx, o, "memory", 16 * MiB, 1024 * GiB, &l->memory);
	size_key(ctx, o, "swap", 0, 1024 * GiB, &l->swap);
	if (conf_get_int(ctx, o, "pids", 4, 100000, &i) == 1)
		l->pids = (unsigned)i;
	if ((cpu = json_object_get(o, "cpu")) != NULL && !json_is_null(cpu)) {
		/* Cores, fractional: 0.5 is half of one CPU's time. */
		if (!json_is_number(cpu) || json_number_value(cpu) < 0.01 ||
		    json_number_value(cpu) > 1024)
			conf_error(ctx, cpu, "cpu: a number of CPUs, 0.01 to 1024");
		else
			l->cpu_millis = (unsigned)(json_number_value(cpu) * 1000);
	}
	if (conf_get_int(ctx, o, "nofile", 16, 1048576, &i) == 1)
		l->nofile = (unsigned)i;
	size_key(ctx, o, "file_size", 1 * MiB, 1024 * GiB, &l->file_size);
	size_key(ctx, o, "address_space", 0, 1ULL << 47, &l->address_space);
}

static void
artifacts_section(struct conf_ctx *ctx, const json_t *o, struct profile *p)
{
	static const char *const keys[] = { "dir", "types", "max_file",
	    "max_total", "max_count", NULL };
	const json_t	*v;
	json_t		*arr;
	const char	*s;
	char		 known[256];
	size_t		 i;
	int64_t		 n;
	int		 t;

	conf_check_keys(ctx, o, keys);
	if (conf_get_string(ctx, o, "dir", &s) == 1) {
		/* Beneath /workspace: relative, no "..". */
		if (s[0] == '/' || strstr(s, "..") != NULL ||
		    xsnprintf(p->artifact_dir, sizeof(p->artifact_dir), "%s",
		    s) == -1)
			conf_error(ctx, json_object_get(o, "dir"), "dir: a "
			    "relative path beneath /workspace, without '..'");
	}
	if (conf_get_array(ctx, o, "types", &arr) == 1) {
		p->artifacts.types = 0;
		json_array_foreach(arr, i, v) {
			if (!json_is_string(v) || (t = artifact_type_parse(
			    json_string_value(v))) == -1) {
				artifact_type_list(known, sizeof(known));
				conf_error(ctx, v, "types: one of %s", known);
			} else
				p->artifacts.types |= 1u << t;
		}
	}
	size_key(ctx, o, "max_file", 0, 1 * GiB, &p->artifacts.max_file);
	size_key(ctx, o, "max_total", 0, 16 * GiB, &p->artifacts.max_total);
	if (conf_get_int(ctx, o, "max_count", 0, 10000, &n) == 1)
		p->artifacts.max_count = (unsigned)n;
}

static void
inputs_section(struct conf_ctx *ctx, const json_t *o, struct profile *p)
{
	static const char *const keys[] = { "roots", "max_bytes", "max_files",
	    "inline_max_file", "inline_max_call", NULL };
	const json_t	*v;
	json_t		*arr;
	size_t		 i;
	int64_t		 n;

	conf_check_keys(ctx, o, keys);
	if (conf_get_array(ctx, o, "roots", &arr) == 1) {
		json_array_foreach(arr, i, v) {
			if (!json_is_string(v) || json_string_value(v)[0] != '/' ||
			    p->inputs.nroots == STAGE_ROOTS_MAX ||
			    xsnprintf(p->input_roots[p->inputs.nroots],
			    PATH_MAX, "%s", json_string_value(v)) == -1) {
				conf_error(ctx, v, "roots: at most %d absolute "
				    "directories", STAGE_ROOTS_MAX);
				continue;
			}
			p->inputs.roots[p->inputs.nroots] =
			    p->input_roots[p->inputs.nroots];
			p->inputs.nroots++;
		}
	}
	size_key(ctx, o, "max_bytes", 0, 16 * GiB, &p->inputs.max_bytes);
	if (conf_get_int(ctx, o, "max_files", 0, 1000, &n) == 1)
		p->inputs.max_files = (unsigned)n;
	/* Inline inputs come in the JSON-RPC message: server.max_message_bytes
	 * bounds them too. */
	size_key(ctx, o, "inline_max_file", 0, 64 * MiB,
	    &p->inputs.inline_max_file);
	size_key(ctx, o, "inline_max_call", 0, 64 * MiB,
	    &p->inputs.inline_max_call);
}

/*
 * tls: {ca_bundle: system|none, extra_ca: PATH}.  Without it, a profile
 * whose network is netguard's gets the host's bundle: every policy that
 * lets a sandbox out (L2, L3) is mostly HTTPS, and mcp-exec does not read
 * netguard's files to tell L0/L1 policies apart (those have no use for it,
 * and a read-only bundle costs them nothing).
 */
static void
tls_section(struct conf_ctx *ctx, const json_t *root, struct profile *p)
{
	static const char *const keys[] = { "ca_bundle", "extra_ca", NULL };
	static const char *const bundles[] = { "system", "none", NULL };
	char		 err[PATH_MAX + 128];
	json_t		*sub;
	const char	*s;
	int		 e;

	p->tls_system = p->netguard;
	if (conf_get_object(ctx, root, "tls", &sub) == 1) {
		conf_check_keys(ctx, sub, keys);
		if (conf_get_enum(ctx, sub, "ca_bundle", bundles, &e) == 1)
			p->tls_system = (e == 0);
		if (conf_get_string(ctx, sub, "extra_ca", &s) == 1) {
			if (s[0] != '/' || xsnprintf(p->tls_extra_ca,
			    sizeof(p->tls_extra_ca), "%s", s) == -1)
				conf_error(ctx, json_object_get(sub, "extra_ca"),
				    "extra_ca: an absolute path");
			else if (trust_pem_check(s, err, sizeof(err)) == -1)
				conf_error(ctx, json_object_get(sub, "extra_ca"),
				    "extra_ca: %s", err);
		}
	}
	p->tls_on = p->tls_system || p->tls_extra_ca[0] != '\0';
}

/*
 * packages: {install: BOOL, index: URL}.  The index goes into the sandbox's
 * environment as PIP_INDEX_URL, so it is held to plain https URL
 * characters: nothing a shell, pip's option parser or a log would read as
 * more than one word.  It is reached through the profile's network
 * policy, which must therefore be netguard's.
 */
static void
packages_section(struct conf_ctx *ctx, const json_t *root, struct profile *p)
{
	static const char *const keys[] = { "install", "index", NULL };
	static const char url_chars[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/:%@+=";
	json_t		*sub;
	const char	*s = NULL;
	int		 b;

	if (conf_get_object(ctx, root, "packages", &sub) != 1)
		return;
	conf_check_keys(ctx, sub, keys);
	if (conf_get_bool(ctx, sub, "install", &b) == 1)
		p->pkg_install = b;
	if (conf_get_string(ctx, sub, "index", &s) == 1) {
		if (strncmp(s, "https://", 8) != 0 || s[8] == '\0' ||
		    s[8] == '/' || strspn(s, url_chars) != strlen(s) ||
		    xsnprintf(p->pkg_index, sizeof(p->pkg_index), "%s", s) ==
		    -1) {
			conf_error(ctx, json_object_get(sub, "index"),
			    "index: an https:// URL (a PEP 503 simple index) "
			    "of at most %d plain characters", PROFILE_URL_MAX - 1);
			p->pkg_index[0] = '\0';
		}
	}
	if (!p->pkg_install)
		return;
	if (s == NULL)
		conf_error(ctx, sub, "packages: install needs an index (the "
		    "mirror's https://HOST/simple URL)");
	if (!p->netguard)
		/* At the section: true is one shared node, with no place. */
		conf_error(ctx, sub, "packages: install: the "
		    "index is reached through the network policy; network: "
		    "%s reaches nothing", p->network[0] ? p->network : "none");
	/* gvisor.c's bundle has no package layer: refused, never dropped. */
	if (p->runtime == SANDBOX_GVISOR)
		conf_error(ctx, sub, "packages: install is not available with "
		    "runtime: gvisor (the layer is the native sandbox's)");
}

static void
profile_doc(struct conf_ctx *ctx, const json_t *root, struct profile *p)
{
	static const char *const top[] = { "description", "limits", "timeout",
	    "filesystem", "output", "inputs", "artifacts", "network",
	    "hostname", "landlock", "tls", "runtime", "packages",
	    "code_retention", "pool", NULL };
	static const char *const retain[] = { "hash", "sample", "full", NULL };
	static const char *const to_keys[] = { "default_ms", "max_ms", NULL };
	static const char *const fs_keys[] = { "tmp_size", "workspace_size",
	    "shm_size", NULL };
	static const char *const out_keys[] = { "stdout_max", "stderr_max",
	    NULL };
	static const char *const landlock[] = { "required", "best_effort",
	    NULL };
	/* In the order of enum sandbox_runtime. */
	static const char *const runtimes[] = { "native", "gvisor", NULL };
	char		 why[256];
	json_t		*sub;
	const char	*s;
	uint64_t	 u;
	int64_t		 i;
	int		 e;

	if (conf_expect_object(ctx, root, "profile") == -1)
		return;
	conf_check_keys(ctx, root, top);
	(void)conf_get_string(ctx, root, "description", &s);
	if (conf_get_object(ctx, root, "limits", &sub) == 1)
		limits_section(ctx, sub, p);
	if (conf_get_object(ctx, root, "timeout", &sub) == 1) {
		conf_check_keys(ctx, sub, to_keys);
		if (conf_get_int(ctx, sub, "default_ms", 100, 3600000, &i) == 1)
			p->timeout_default_ms = (unsigned)i;
		if (conf_get_int(ctx, sub, "max_ms", 100, 3600000, &i) == 1)
			p->timeout_max_ms = (unsigned)i;
		if (p->timeout_default_ms > p->timeout_max_ms)
			conf_error(ctx, sub, "timeout: default_ms is above "
			    "max_ms");
	}
	if (conf_get_object(ctx, root, "filesystem", &sub) == 1) {
		conf_check_keys(ctx, sub, fs_keys);
		size_key(ctx, sub, "tmp_size", 1 * MiB, 64 * GiB,
		    &p->limits.tmp_size);
		size_key(ctx, sub, "workspace_size", 1 * MiB, 64 * GiB,
		    &p->limits.workspace_size);
		size_key(ctx, sub, "shm_size", 64 * KiB, 64 * GiB,
		    &p->limits.shm_size);
	}
	if (conf_get_object(ctx, root, "output", &sub) == 1) {
		conf_check_keys(ctx, sub, out_keys);
		if (conf_get_size(ctx, sub, "stdout_max", 1 * KiB, 64 * MiB,
		    &u) == 1)
			p->stdout_max = (size_t)u;
		if (conf_get_size(ctx, sub, "stderr_max", 1 * KiB, 64 * MiB,
		    &u) == 1)
			p->stderr_max = (size_t)u;
	}
	if (conf_get_object(ctx, root, "inputs", &sub) == 1)
		inputs_section(ctx, sub, p);
	if (conf_get_object(ctx, root, "artifacts", &sub) == 1)
		artifacts_section(ctx, sub, p);
	if (conf_get_string(ctx, root, "network", &s) == 1) {
		/* Other policies are netguard's (rules/network/NAME.yaml). */
		if (!profile_name_ok(s))
			conf_error(ctx, json_object_get(root, "network"),
			    "network: none, loopback or a policy name");
		else {
			snprintf(p->network, sizeof(p->network), "%s", s);
			p->net = strcmp(s, "loopback") == 0 ? NET_LOOPBACK :
			    NET_NONE;
			/* Anything else is attached by netguard, which sets
			 * the links up: the sandbox leaves them alone. */
			p->netguard = strcmp(s, "none") != 0 &&
			    strcmp(s, "loopback") != 0;
		}
	}
	if (conf_get_enum(ctx, root, "code_retention", retain, &e) == 1)
		snprintf(p->code_retention, sizeof(p->code_retention), "%s",
		    retain[e]);
	if (conf_get_string(ctx, root, "hostname", &s) == 1) {
		if (!profile_name_ok(s))
			conf_error(ctx, json_object_get(root, "hostname"),
			    "hostname: lower-case letters, digits, '-', '_'");
		else
			snprintf(p->hostname, sizeof(p->hostname), "%s", s);
	}
	if (conf_get_enum(ctx, root, "landlock", landlock, &e) == 1)
		p->landlock_required = (e == 0);
	if (conf_get_enum(ctx, root, "runtime", runtimes, &e) == 1) {
		p->runtime = (enum sandbox_runtime)e;
		/* A profile this host cannot run is refused here, at load:
		 * never a session that fails later, never the native wall in
		 * its place. */
		if (p->runtime == SANDBOX_GVISOR &&
		    gvisor_probe(why, sizeof(why)) == -1)
			conf_error(ctx, json_object_get(root, "runtime"),
			    "runtime: gvisor cannot run on this host: %s", why);
	}
	/* After network: its default follows from it. */
	tls_section(ctx, root, p);
	packages_section(ctx, root, p);
	pool_profile_section(ctx, root, p);
}

void
profile_copy(struct profile *dst, const struct profile *src)
{
	size_t	 i;

	*dst = *src;
	/* The copy's input roots point into its own strings. */
	for (i = 0; i < dst->inputs.nroots; i++)
		dst->inputs.roots[i] = dst->input_roots[i];
}

/* Appends s to buf (len bytes); 0 once it is full, keeping whole words. */
static int
reach_add(char *buf, size_t len, const char *s)
{
	size_t	 off = strlen(buf);

	if (off + strlen(s) + 4 >= len) {
		if (off + 4 < len)
			snprintf(buf + off, len - off, "...");
		return 0;
	}
	snprintf(buf + off, len - off, "%s", s);
	return 1;
}

/*
 * What a netguard policy lets the sandbox reach, for the agent to read.
 * netguard validates the file and enforces it; this only summarises its
 * level and allow list, and says so when it cannot read them.
 */
static void
network_reach(const char *rules_dir, struct profile *p)
{
	struct conf_doc	*doc;
	const json_t	*root, *e, *v;
	const char	*level;
	char		 path[PATH_MAX], err[CONF_ERROR_LEN];
	size_t		 i, j;
	int		 room = 1;

	if (!p->netguard) {
		snprintf(p->reach, sizeof(p->reach), "%s", p->net ==
		    NET_LOOPBACK ? "loopback only: servers the code starts on "
		    "127.0.0.1; nothing outside the sandbox" : "no network");
		return;
	}
	snprintf(p->reach, sizeof(p->reach), "the egress policy '%s', "
	    "enforced by netguard", p->network);
	if (xsnprintf(path, sizeof(path), "%s/network/%s.yaml", rules_dir,
	    p->network) == -1 || (doc = conf_doc_load_file(path, err,
	    sizeof(err))) == NULL)
		return;
	root = conf_doc_root(doc);
	level = json_string_value(json_object_get(root, "level"));
	if (level != NULL && strcmp(level, "L3") == 0)
		snprintf(p->reach, sizeof(p->reach), "L3 (egress policy '%s'): "
		    "the public internet; private, link-local and cloud "
		    "metadata addresses are blocked", p->network);
	else if (level != NULL && strcmp(level, "L2") == 0) {
		snprintf(p->reach, sizeof(p->reach), "L2 (egress policy '%s'): "
		    "only", p->network);
		json_array_foreach(json_object_get(root, "allow"), i, e) {
			room = room && reach_add(p->reach, sizeof(p->reach),
			    i > 0 ? ";" : "");
			json_array_foreach(json_object_get(e, "names"), j, v)
				room = room && json_is_string(v) && reach_add(
				    p->reach, sizeof(p->reach), " ") &&
				    reach_add(p->reach, sizeof(p->reach),
				    json_string_value(v));
			json_array_foreach(json_object_get(e, "cidrs"), j, v)
				room = room && json_is_string(v) && reach_add(
				    p->reach, sizeof(p->reach), " ") &&
				    reach_add(p->reach, sizeof(p->reach),
				    json_string_value(v));
			if (json_array_size(json_object_get(e, "ports")) > 0) {
				room = room && reach_add(p->reach,
				    sizeof(p->reach), " (ports");
				json_array_foreach(json_object_get(e, "ports"),
				    j, v) {
					snprintf(err, sizeof(err), " %lld",
					    (long long)json_integer_value(v));
					room = room && reach_add(p->reach,
					    sizeof(p->reach), err);
				}
				room = room && reach_add(p->reach,
				    sizeof(p->reach), ")");
			}
		}
		(void)(room && reach_add(p->reach, sizeof(p->reach), ", by "
		    "name through netguard's resolver"));
	} else if (level != NULL && strcmp(level, "L1") == 0)
		snprintf(p->reach, sizeof(p->reach), "loopback only (egress "
		    "policy '%s')", p->network);
	else if (level != NULL && strcmp(level, "L0") == 0)
		snprintf(p->reach, sizeof(p->reach), "no network (egress "
		    "policy '%s')", p->network);
	conf_doc_free(doc);
}

int
profile_load(const char *rules_dir, const char *name, struct profile *p)
{
	struct conf_doc	*doc;
	struct conf_ctx	 ctx;

	profile_defaults(p);
	if (!profile_name_ok(name)) {
		conf_report("profile name '%s': lower-case letters, digits, "
		    "'-' and '_' only", name);
		return -1;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	if (xsnprintf(p->path, sizeof(p->path), "%s/profiles/%s.yaml",
	    rules_dir, name) == -1 || (doc = load_doc(p->path)) == NULL)
		return -1;
	conf_ctx_init(&ctx, doc);
	profile_doc(&ctx, conf_doc_root(doc), p);
	network_reach(rules_dir, p);
	return finish(&ctx, doc);
}
