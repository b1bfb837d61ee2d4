/*
 * Loads the `principals:` and `groups:` sections of rules/principals.yaml
 * (tokens are transport/principals.c's) and merges, per caller, what its
 * principal and its groups allow.  Operator input, validated whole;
 * nothing here looks at what an agent sent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "authz.h"
#include "util.h"

#define PRINCIPALS_YAML	"principals.yaml"

const char *const authz_tool_names[AUTHZ_TOOLS_N] = {
	"execute_python", "run_command", "close_session", "list_files",
	"read_file",
};

struct authz_entry {
	char		 name[PRINCIPAL_MAX];
	unsigned	 tools;
	int		 tools_set;
	char		 profiles[AUTHZ_PROFILES_MAX][PROFILE_NAME_MAX];
	unsigned	 nprofiles;
	char		 default_profile[PROFILE_NAME_MAX];	/* "" */
	int		 choose;
	struct quota_limits lim;
};

struct authz {
	struct authz_entry	 ent[2][AUTHZ_ENTRIES_MAX];	/* P, G */
	size_t			 n[2];
	struct authz_entry	 unlisted;	/* a caller no entry names */
	int			 has_unlisted;
	const char		*names[AUTHZ_PROFILES_TOTAL];	/* into ent */
	size_t			 nnames;
};

enum { E_PRINCIPAL, E_GROUP };

/* Printable ASCII without spaces, as principal names are (principals.c). */
static int
name_ok(const char *s, size_t max)
{
	size_t	 i;

	for (i = 0; s[i] != '\0'; i++)
		if (i >= max - 1 || s[i] <= ' ' || s[i] > '~')
			return 0;
	return i > 0;
}

static int
tool_index(const char *s)
{
	int	 i;

	for (i = 0; i < AUTHZ_TOOLS_N; i++)
		if (strcmp(s, authz_tool_names[i]) == 0)
			return i;
	return -1;
}

static void
load_tools(struct conf_ctx *ctx, const json_t *o, struct authz_entry *e)
{
	json_t		*arr, *v;
	size_t		 i;
	int		 t;

	if (conf_get_array(ctx, o, "tools", &arr) != 1)
		return;
	e->tools_set = 1;
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v) || (t = tool_index(json_string_value(
		    v))) == -1) {
			conf_error(ctx, v, "tools: one of execute_python, "
			    "run_command, close_session, list_files, read_file");
			continue;
		}
		e->tools |= 1u << t;
	}
}

static void
add_name(struct authz *a, const char *name)
{
	size_t	 i;

	for (i = 0; i < a->nnames; i++)
		if (strcmp(a->names[i], name) == 0)
			return;
	if (a->nnames < AUTHZ_PROFILES_TOTAL)
		a->names[a->nnames++] = name;
}

/* A profile the entry names: a file in profiles/ (loaded by reload.c). */
static int
profile_ref_ok(struct conf_ctx *ctx, const json_t *v, const char *dir,
    struct authz *a)
{
	char		 path[PATH_MAX];
	const char	*s = json_string_value(v);

	if (s == NULL || !profile_name_ok(s) || strlen(s) >= PROFILE_NAME_MAX) {
		conf_error(ctx, v, "a profile name: letters, digits, '-' and "
		    "'_'");
		return 0;
	}
	if (xsnprintf(path, sizeof(path), "%s/profiles/%s.yaml", dir, s) ==
	    -1 || access(path, F_OK) == -1) {
		conf_error(ctx, v, "no profile %s (%s/profiles/%s.yaml)", s,
		    dir, s);
		return 0;
	}
	if (a->nnames >= AUTHZ_PROFILES_TOTAL) {
		conf_error(ctx, v, "at most %d distinct profiles in %s",
		    AUTHZ_PROFILES_TOTAL, PRINCIPALS_YAML);
		return 0;
	}
	return 1;
}

static void
load_profiles(struct conf_ctx *ctx, const json_t *o, const char *dir,
    struct authz *a, struct authz_entry *e)
{
	json_t		*arr, *v;
	const char	*def = NULL;
	size_t		 i;
	unsigned	 j;

	if (conf_get_array(ctx, o, "profiles", &arr) == 1) {
		if (json_array_size(arr) > AUTHZ_PROFILES_MAX)
			conf_error(ctx, arr, "profiles: at most %d",
			    AUTHZ_PROFILES_MAX);
		else
			json_array_foreach(arr, i, v)
				if (profile_ref_ok(ctx, v, dir, a))
					snprintf(e->profiles[e->nprofiles++],
					    PROFILE_NAME_MAX, "%s",
					    json_string_value(v));
	}
	if (conf_get_string(ctx, o, "default_profile", &def) == 1 &&
	    profile_ref_ok(ctx, json_object_get(o, "default_profile"), dir,
	    a)) {
		snprintf(e->default_profile, PROFILE_NAME_MAX, "%s", def);
		for (j = 0; j < e->nprofiles; j++)
			if (strcmp(e->profiles[j], def) == 0)
				break;
		/* The default is one of the allowed, always. */
		if (e->nprofiles > 0 && j == e->nprofiles)
			conf_error(ctx, json_object_get(o, "default_profile"),
			    "default_profile: %s is not in profiles", def);
		else if (e->nprofiles == 0)
			snprintf(e->profiles[e->nprofiles++], PROFILE_NAME_MAX,
			    "%s", def);
	}
	for (j = 0; j < e->nprofiles; j++)
		add_name(a, e->profiles[j]);
}

static void
load_quotas(struct conf_ctx *ctx, const json_t *o, struct authz_entry *e)
{
	json_t		*q;
	int64_t		 v;
	uint64_t	 sz;
	int		 k;

	const char	*keys[QUOTA_N + 1];

	quota_limits_none(&e->lim);
	if (conf_get_object(ctx, o, "quotas", &q) != 1)
		return;
	for (k = 0; k < QUOTA_N; k++)
		keys[k] = quota_names[k];
	keys[QUOTA_N] = NULL;
	conf_check_keys(ctx, q, keys);
	for (k = 0; k < QUOTA_N; k++) {
		if (k == QUOTA_ARTIFACT_DAY) {
			/* Sizes as elsewhere: 1048576, or "1M". */
			if (conf_get_size(ctx, q, quota_names[k], 0,
			    (uint64_t)1 << 50, &sz) == 1)
				e->lim.max[k] = sz;
		} else if (conf_get_int(ctx, q, quota_names[k], 0,
		    (int64_t)1 << 40, &v) == 1)
			e->lim.max[k] = (uint64_t)v;
	}
}

/* What an entry grants, after its name (principals, groups, unlisted). */
static void
load_grants(struct conf_ctx *ctx, const json_t *o, const char *dir,
    struct authz *a, struct authz_entry *e)
{
	const char	*s;

	(void)conf_get_string(ctx, o, "description", &s);
	load_tools(ctx, o, e);
	load_profiles(ctx, o, dir, a, e);
	(void)conf_get_bool(ctx, o, "choose_profile", &e->choose);
	load_quotas(ctx, o, e);
}

static void
load_entry(struct conf_ctx *ctx, const json_t *o, const char *dir,
    struct authz *a, int kind)
{
	static const char *const keys[] = { "name", "description", "tools",
	    "profiles", "default_profile", "choose_profile", "quotas", NULL };
	struct authz_entry	*e = &a->ent[kind][a->n[kind]];
	const char		*name = NULL;
	size_t			 i, max = kind == E_GROUP ? CLIENT_GROUP_MAX :
				    PRINCIPAL_MAX;

	if (conf_expect_object(ctx, o, kind == E_GROUP ? "groups entry" :
	    "principals entry") == -1)
		return;
	conf_check_keys(ctx, o, keys);
	if (conf_get_string(ctx, o, "name", &name) != 1 || name == NULL) {
		conf_error(ctx, o, "missing 'name'");
		return;
	}
	if (!name_ok(name, max)) {
		conf_error(ctx, json_object_get(o, "name"), "name: 1 to %zu "
		    "bytes of printable ASCII without spaces", max - 1);
		return;
	}
	for (i = 0; i < a->n[kind]; i++)
		if (strcmp(a->ent[kind][i].name, name) == 0) {
			conf_error(ctx, json_object_get(o, "name"), "%s is "
			    "listed twice", name);
			return;
		}
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	load_grants(ctx, o, dir, a, e);
	a->n[kind]++;
}

/*
 * `unlisted:` is what a caller gets whose principal and groups no entry
 * names: without it, every tool and the server's default profile (the
 * behaviour before principals: existed); `unlisted: {tools: []}` denies.
 */
static void
load_unlisted(struct conf_ctx *ctx, const json_t *root, const char *dir,
    struct authz *a)
{
	static const char *const keys[] = { "description", "tools",
	    "profiles", "default_profile", "choose_profile", "quotas", NULL };
	json_t	*o;

	if (conf_get_object(ctx, root, "unlisted", &o) != 1)
		return;
	conf_check_keys(ctx, o, keys);
	load_grants(ctx, o, dir, a, &a->unlisted);
	a->has_unlisted = 1;
}

static void
load_list(struct conf_ctx *ctx, const json_t *root, const char *dir,
    struct authz *a, int kind)
{
	const char	*key = kind == E_GROUP ? "groups" : "principals";
	json_t		*arr, *v;
	size_t		 i;

	if (conf_get_array(ctx, root, key, &arr) != 1)
		return;
	if (json_array_size(arr) > AUTHZ_ENTRIES_MAX) {
		conf_error(ctx, arr, "%s: at most %d", key, AUTHZ_ENTRIES_MAX);
		return;
	}
	json_array_foreach(arr, i, v)
		load_entry(ctx, v, dir, a, kind);
}

struct authz *
authz_load(const char *rules_dir)
{
	struct authz	*a = xcalloc(1, sizeof(*a));
	struct conf_doc	*doc;
	struct conf_ctx	 ctx;
	char		 path[PATH_MAX], err[CONF_ERROR_LEN];

	if (xsnprintf(path, sizeof(path), "%s/%s", rules_dir,
	    PRINCIPALS_YAML) == -1) {
		fprintf(stderr, "%s: path too long\n", rules_dir);
		goto fail;
	}
	if (access(path, F_OK) == -1)
		return a;
	if ((doc = conf_doc_load_file(path, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		goto fail;
	}
	conf_ctx_init(&ctx, doc);
	/* The top level's keys are checked by principals_load. */
	if (json_is_object(conf_doc_root(doc))) {
		load_list(&ctx, conf_doc_root(doc), rules_dir, a, E_PRINCIPAL);
		load_list(&ctx, conf_doc_root(doc), rules_dir, a, E_GROUP);
		load_unlisted(&ctx, conf_doc_root(doc), rules_dir, a);
	}
	conf_doc_free(doc);
	if (ctx.nerrors == 0)
		return a;
	conf_ctx_report(&ctx);
fail:
	authz_free(a);
	return NULL;
}

void
authz_free(struct authz *a)
{
	free(a);
}

size_t
authz_count(const struct authz *a)
{
	return a->n[E_PRINCIPAL] + a->n[E_GROUP];
}

size_t
authz_profile_names(const struct authz *a, const char **out, size_t max)
{
	size_t	 i;

	for (i = 0; i < a->nnames && i < max; i++)
		out[i] = a->names[i];
	return i;
}

static const struct authz_entry *
entry_find(const struct authz *a, int kind, const char *name)
{
	size_t	 i;

	if (a == NULL)		/* no rules loaded yet: nothing listed */
		return NULL;
	for (i = 0; i < a->n[kind]; i++)
		if (strcmp(a->ent[kind][i].name, name) == 0)
			return &a->ent[kind][i];
	return NULL;
}

static void
grant_profile(struct authz_grant *g, const char *name)
{
	if (authz_profile_ok(g, name) || g->nprofiles >= AUTHZ_PROFILES_MAX)
		return;
	snprintf(g->profiles[g->nprofiles++], PROFILE_NAME_MAX, "%s", name);
}

static void
grant_bill(struct authz_grant *g, const char *prefix, const char *name,
    const struct authz_entry *e)
{
	if (!quota_limits_any(&e->lim) || g->bill.n >= QUOTA_BILL_MAX)
		return;
	snprintf(g->bill.a[g->bill.n].subject, QUOTA_SUBJECT_MAX, "%s:%s",
	    prefix, name);
	g->bill.a[g->bill.n++].lim = e->lim;
}

void
authz_grant(const struct authz *a, const char *principal,
    const struct tool_client *c, const char *server_default,
    struct authz_grant *g)
{
	const struct authz_entry *hit[1 + CLIENT_GROUPS_MAX];
	const char		*def = NULL;
	unsigned		 n = 0, i, j, np;
	int			 tools_set = 0;

	memset(g, 0, sizeof(*g));
	if ((hit[n] = entry_find(a, E_PRINCIPAL, principal)) != NULL)
		n++;
	np = n;
	for (i = 0; c != NULL && i < c->ngroups && i < CLIENT_GROUPS_MAX; i++)
		if ((hit[n] = entry_find(a, E_GROUP, c->groups[i])) != NULL)
			n++;
	/* Unlisted callers' quotas are each their own, not one shared. */
	if (n == 0 && a != NULL && a->has_unlisted) {
		hit[n++] = &a->unlisted;
		np = n;
	}
	/* The principal's own default first, then its groups' in order. */
	for (i = 0; i < n && def == NULL; i++)
		if (hit[i]->default_profile[0] != '\0')
			def = hit[i]->default_profile;
	for (i = 0; i < n && def == NULL; i++)
		if (hit[i]->nprofiles > 0)
			def = hit[i]->profiles[0];
	grant_profile(g, def != NULL ? def : server_default);
	for (i = 0; i < n; i++) {
		for (j = 0; j < hit[i]->nprofiles; j++)
			grant_profile(g, hit[i]->profiles[j]);
		if (hit[i]->tools_set) {
			tools_set = 1;
			g->tools |= hit[i]->tools;
		}
		g->choose |= hit[i]->choose;
		grant_bill(g, i < np ? "principal" : "group", i < np ?
		    principal : hit[i]->name, hit[i]);
	}
	if (!tools_set)
		g->tools = (1u << AUTHZ_TOOLS_N) - 1;
}

void
authz_configure_quotas(const struct authz *a, struct quota_table *qt)
{
	char	 subject[QUOTA_SUBJECT_MAX];
	size_t	 i;
	int	 k;

	quota_unconfigure(qt);
	if (a == NULL)
		return;
	for (k = E_PRINCIPAL; k <= E_GROUP; k++)
		for (i = 0; i < a->n[k]; i++) {
			if (!quota_limits_any(&a->ent[k][i].lim))
				continue;
			snprintf(subject, sizeof(subject), "%s:%s", k ==
			    E_GROUP ? "group" : "principal", a->ent[k][i].name);
			quota_configure(qt, subject, &a->ent[k][i].lim);
		}
}

int
authz_tool_ok(const struct authz_grant *g, const char *tool)
{
	int	 t = tool_index(tool);

	return t != -1 && (g->tools & (1u << t)) != 0;
}

int
authz_profile_ok(const struct authz_grant *g, const char *name)
{
	unsigned	 i;

	for (i = 0; i < g->nprofiles; i++)
		if (strcmp(g->profiles[i], name) == 0)
			return 1;
	return 0;
}
