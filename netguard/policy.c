/*
 * Loads rules/network/NAME.yaml into struct policy values.  The files are
 * operator input, validated like every policy file: unknown keys, bad
 * addresses, names and ports are errors that name file:line:column, and
 * one bad file fails the whole set (a reload never applies half).
 */
#include <sys/types.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "log.h"
#include "policy.h"
#include "util.h"

#define POLICY_DIR	"network"
#define POLICY_SUFFIX	".yaml"

static const char *const level_names[] = { "L0", "L1", "L2", "L3", NULL };

const char *
policy_level_name(enum policy_level l)
{
	return level_names[l];
}

/* "192.0.2.0/24", "2001:db8::/32" or a bare address (a /32 or /128). */
int
policy_parse_cidr(const char *s, struct policy_cidr *c)
{
	char		 buf[INET6_ADDRSTRLEN + 8], *slash;
	uint64_t	 prefix;
	unsigned	 i, max;

	memset(c, 0, sizeof(*c));
	if (xsnprintf(buf, sizeof(buf), "%s", s) == -1)
		return -1;
	if ((slash = strchr(buf, '/')) != NULL)
		*slash++ = '\0';
	if (inet_pton(AF_INET, buf, c->addr) == 1) {
		c->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, c->addr) == 1) {
		c->family = AF_INET6;
		max = 128;
	} else
		return -1;
	prefix = max;
	if (slash != NULL && parse_u64(slash, 0, max, &prefix) == -1)
		return -1;
	c->prefix = (uint8_t)prefix;
	/* Host bits set means the operator meant something else. */
	for (i = c->prefix; i < max; i++)
		if (c->addr[i / 8] & (0x80 >> (i % 8)))
			return -1;
	return 0;
}

/* A DNS name in presentation form, or "*." and one. */
static int
name_ok(const char *s)
{
	size_t	 len = strlen(s), label = 0, i;

	if (strncmp(s, "*.", 2) == 0)
		s += 2, len -= 2;
	if (len == 0 || len > DNS_NAME_MAX || s[len - 1] == '.' || *s == '.')
		return 0;
	for (i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (label == 0)
				return 0;
			label = 0;
			continue;
		}
		if (++label > 63 || !((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
			return 0;
	}
	return 1;
}

static void
load_group(struct conf_ctx *ctx, const json_t *o, struct policy *p,
    struct policy_group *g, size_t *ncidrs, size_t *nnames)
{
	static const char *const keys[] = { "names", "cidrs", "ports", NULL };
	json_t		*names = NULL, *cidrs = NULL, *ports = NULL, *v;
	size_t		 i;
	char		 low[DNS_NAME_MAX + 3];

	if (conf_expect_object(ctx, o, "allow entry") == -1)
		return;
	conf_check_keys(ctx, o, keys);
	if (conf_get_array(ctx, o, "ports", &ports) == 1) {
		if (json_array_size(ports) > POLICY_PORTS_MAX)
			conf_error(ctx, ports, "more than %d ports",
			    POLICY_PORTS_MAX);
		json_array_foreach(ports, i, v) {
			if (!json_is_integer(v) || json_integer_value(v) < 1 ||
			    json_integer_value(v) > 65535) {
				conf_error(ctx, v, "ports: integers 1-65535");
				continue;
			}
			if (g->nports < POLICY_PORTS_MAX)
				g->ports[g->nports++] =
				    (uint16_t)json_integer_value(v);
		}
		if (json_array_size(ports) == 0)
			conf_error(ctx, ports, "ports: an empty list allows "
			    "nothing; leave the key out for every port");
	}
	if (conf_get_array(ctx, o, "names", &names) == 1) {
		g->names = xcalloc(json_array_size(names) + 1, sizeof(char *));
		json_array_foreach(names, i, v) {
			const char	*s = json_string_value(v);
			size_t		 j;

			if (s == NULL || strlen(s) >= sizeof(low)) {
				conf_error(ctx, v, "names: strings");
				continue;
			}
			for (j = 0; s[j] != '\0'; j++)
				low[j] = (s[j] >= 'A' && s[j] <= 'Z') ?
				    s[j] - 'A' + 'a' : s[j];
			low[j] = '\0';
			if (!name_ok(low)) {
				conf_error(ctx, v, "'%s' is not a DNS name "
				    "(or \"*.\" and one)", s);
				continue;
			}
			if (++*nnames > POLICY_NAMES_MAX) {
				conf_error(ctx, v, "more than %d names in a "
				    "policy", POLICY_NAMES_MAX);
				break;
			}
			g->names[g->nnames++] = xstrdup(low);
		}
	}
	if (conf_get_array(ctx, o, "cidrs", &cidrs) == 1) {
		g->cidrs = xcalloc(json_array_size(cidrs) + 1, sizeof(*g->cidrs));
		json_array_foreach(cidrs, i, v) {
			if (!json_is_string(v) || policy_parse_cidr(
			    json_string_value(v), &g->cidrs[g->ncidrs]) == -1) {
				conf_error(ctx, v, "cidrs: an address or "
				    "address/prefix with no host bits set");
				continue;
			}
			if (++*ncidrs > POLICY_CIDRS_MAX) {
				conf_error(ctx, v, "more than %d CIDRs in a "
				    "policy", POLICY_CIDRS_MAX);
				break;
			}
			g->ncidrs++;
		}
	}
	if (names == NULL && cidrs == NULL)
		conf_error(ctx, o, "an allow entry needs names or cidrs");
	if (g->nnames > 0 && p->nupstreams == 0)
		conf_error(ctx, names, "names need resolver upstreams");
}

static void
load_resolver(struct conf_ctx *ctx, const json_t *o, struct policy *p)
{
	static const char *const keys[] = { "upstreams", NULL };
	json_t			*ups, *v;
	struct policy_cidr	 c;
	size_t			 i;

	if (conf_expect_object(ctx, o, "resolver") == -1)
		return;
	conf_check_keys(ctx, o, keys);
	if (conf_get_array(ctx, o, "upstreams", &ups) != 1)
		return;
	json_array_foreach(ups, i, v) {
		struct sockaddr_storage	*ss = &p->upstreams[p->nupstreams];

		if (!json_is_string(v) || policy_parse_cidr(
		    json_string_value(v), &c) == -1 || (c.family == AF_INET ?
		    c.prefix != 32 : c.prefix != 128)) {
			conf_error(ctx, v, "upstreams: IP addresses");
			continue;
		}
		if (p->nupstreams == POLICY_UPSTREAMS_MAX) {
			conf_error(ctx, v, "more than %d upstreams",
			    POLICY_UPSTREAMS_MAX);
			break;
		}
		memset(ss, 0, sizeof(*ss));
		if (c.family == AF_INET) {
			struct sockaddr_in	*sin = (struct sockaddr_in *)ss;

			sin->sin_family = AF_INET;
			sin->sin_port = htons(53);
			memcpy(&sin->sin_addr, c.addr, 4);
		} else {
			struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;

			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons(53);
			memcpy(&sin6->sin6_addr, c.addr, 16);
		}
		p->nupstreams++;
	}
}

/* Returns 0, or -1 after reporting the file's errors. */
static int
policy_load(const char *path, const char *name, struct policy *p)
{
	static const char *const keys[] = { "level", "description", "allow",
	    "resolver", "http", NULL };
	struct conf_doc	*doc;
	struct conf_ctx	 ctx;
	json_t		*root, *allow, *res, *http, *v;
	const char	*s;
	char		 err[CONF_ERROR_LEN];
	size_t		 i, ncidrs = 0, nnames = 0;
	int		 level;

	if ((doc = conf_doc_load_file(path, err, sizeof(err))) == NULL) {
		conf_report("%s", err);
		return -1;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->path, sizeof(p->path), "%s", path);
	snprintf(p->sha256, sizeof(p->sha256), "%s", conf_doc_sha256(doc));
	conf_ctx_init(&ctx, doc);
	root = conf_doc_root(doc);
	if (conf_expect_object(&ctx, root, "policy") == 0) {
		conf_check_keys(&ctx, root, keys);
		(void)conf_get_string(&ctx, root, "description", &s);
		if (conf_get_enum(&ctx, root, "level", level_names, &level) == 1)
			p->level = (enum policy_level)level;
		else if (json_object_get(root, "level") == NULL)
			conf_error(&ctx, root, "level: required (L0-L3)");
		if (conf_get_object(&ctx, root, "resolver", &res) == 1)
			load_resolver(&ctx, res, p);
		if (conf_get_array(&ctx, root, "allow", &allow) == 1) {
			if (p->level != LEVEL_L2)
				conf_error(&ctx, allow, "allow: only level L2 "
				    "has an allowlist");
			if (json_array_size(allow) > POLICY_GROUPS_MAX)
				conf_error(&ctx, allow, "more than %d allow "
				    "entries", POLICY_GROUPS_MAX);
			p->groups = xcalloc(json_array_size(allow) + 1,
			    sizeof(*p->groups));
			json_array_foreach(allow, i, v) {
				if (i == POLICY_GROUPS_MAX)
					break;
				load_group(&ctx, v, p, &p->groups[i], &ncidrs,
				    &nnames);
				p->ngroups++;
			}
		}
		/* After allow: each HTTP destination names its entry. */
		if (conf_get_array(&ctx, root, "http", &http) == 1)
			policy_http_load(&ctx, http, p);
		if (p->level == LEVEL_L3 && p->nupstreams == 0)
			conf_error(&ctx, root, "level L3 needs resolver "
			    "upstreams: sandboxes reach DNS only through "
			    "netguard");
	}
	if (ctx.nerrors) {
		conf_ctx_report(&ctx);
		conf_doc_free(doc);
		return -1;
	}
	conf_doc_free(doc);
	return 0;
}

static void
policy_clear(struct policy *p)
{
	size_t	 i, j;

	for (i = 0; i < p->ngroups; i++) {
		for (j = 0; j < p->groups[i].nnames; j++)
			free(p->groups[i].names[j]);
		free(p->groups[i].names);
		free(p->groups[i].cidrs);
	}
	free(p->groups);
	policy_http_clear(p);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct policy_set *
policy_set_load(const char *rules_dir)
{
	struct policy_set	*set = xcalloc(1, sizeof(*set));
	char			 dir[PATH_MAX], path[PATH_MAX];
	char			*names[POLICY_FILES_MAX + 1];
	size_t			 n = 0, i, len;
	struct dirent		*de;
	DIR			*d;
	int			 bad = 0;

	if (xsnprintf(dir, sizeof(dir), "%s/%s", rules_dir, POLICY_DIR) == -1 ||
	    (d = opendir(dir)) == NULL) {
		conf_report("%s/%s: %s", rules_dir, POLICY_DIR,
		    strerror(errno));
		free(set);
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len <= strlen(POLICY_SUFFIX) ||
		    strcmp(de->d_name + len - strlen(POLICY_SUFFIX),
		    POLICY_SUFFIX) != 0)
			continue;
		if (n == POLICY_FILES_MAX) {
			conf_report("%s: more than %d policies", dir,
			    POLICY_FILES_MAX);
			bad = 1;
			break;
		}
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	/* A stable order, so reloads and errors read the same each time. */
	qsort(names, n, sizeof(*names), name_cmp);
	set->policies = xcalloc(n + 1, sizeof(*set->policies));
	for (i = 0; i < n; i++) {
		struct policy	*p = &set->policies[set->npolicies];

		len = strlen(names[i]) - strlen(POLICY_SUFFIX);
		names[i][len] = '\0';
		if (len > POLICY_NAME_MAX) {
			conf_report("%s/%s%s: a policy name has at most "
			    "%d characters", dir, names[i], POLICY_SUFFIX,
			    POLICY_NAME_MAX);
			bad = 1;
		} else if (xsnprintf(path, sizeof(path), "%s/%s%s", dir,
		    names[i], POLICY_SUFFIX) == -1 ||
		    policy_load(path, names[i], p) == -1) {
			policy_clear(p);
			memset(p, 0, sizeof(*p));
			bad = 1;
		} else
			set->npolicies++;
		free(names[i]);
	}
	if (bad) {
		policy_set_free(set);
		return NULL;
	}
	return set;
}

void
policy_set_free(struct policy_set *set)
{
	size_t	 i;

	if (set == NULL)
		return;
	for (i = 0; i < set->npolicies; i++)
		policy_clear(&set->policies[i]);
	free(set->policies);
	free(set);
}

const struct policy *
policy_find(const struct policy_set *set, const char *name)
{
	size_t	 i;

	for (i = 0; i < set->npolicies; i++)
		if (strcmp(set->policies[i].name, name) == 0)
			return &set->policies[i];
	return NULL;
}

int
policy_match_name(const struct policy *p, const char *name)
{
	const char	*parent;
	size_t		 i, j;

	for (i = 0; i < p->ngroups; i++)
		for (j = 0; j < p->groups[i].nnames; j++)
			if (strcmp(p->groups[i].names[j], name) == 0)
				return (int)i;
	/* "*.example.org" stands for exactly one label before it. */
	if ((parent = strchr(name, '.')) == NULL || parent == name)
		return -1;
	for (i = 0; i < p->ngroups; i++)
		for (j = 0; j < p->groups[i].nnames; j++) {
			const char	*w = p->groups[i].names[j];

			if (w[0] == '*' && strcmp(w + 1, parent) == 0)
				return (int)i;
		}
	return -1;
}
