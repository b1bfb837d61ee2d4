/*
 * Loads sandbox profiles (rules/profiles/NAME.yaml; mcp-exec.yaml is
 * mcpexec_conf.c's).  Operator input: every key is type- and
 * range-checked, unknown keys are errors, and a profile name never
 * becomes a path outside rules/profiles/.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "pool.h"
#include "profile.h"
#include "sandbox/gvisor.h"
#include "sandbox/wasm.h"
#include "sandbox/trust.h"
#include "util.h"

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
	/* pip's wheels are CPython's: Pyodide cannot load them. */
	if (p->runtime == SANDBOX_WASM)
		conf_error(ctx, sub, "packages: install is not available with "
		    "runtime: wasm (Pyodide cannot load CPython's wheels)");
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
	static const char *const runtimes[] = { "native", "gvisor", "wasm",
	    NULL };
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
		if (p->runtime == SANDBOX_WASM &&
		    wasm_probe(why, sizeof(why)) == -1)
			conf_error(ctx, json_object_get(root, "runtime"),
			    "runtime: wasm cannot run on this host: %s", why);
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
	    rules_dir, name) == -1 || (doc = conf_doc_load_report(p->path)) == NULL)
		return -1;
	conf_ctx_init(&ctx, doc);
	profile_doc(&ctx, conf_doc_root(doc), p);
	network_reach(rules_dir, p);
	return conf_ctx_finish(&ctx, doc);
}
