/*
 * `stockade rules check DIR`: validates every policy file under DIR
 * without running anything, printing file:line:column for each error.
 * Each file goes through the loader of the program that reads it, so a
 * file that passes here is a file that program accepts.
 */
#include <arpa/inet.h>

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "netguard.h"
#include "sessions/profile.h"
#include "tools/authz.h"
#include "tools/commands.h"
#include "tools/patterns.h"
#include "transport/principals.h"
#include "util.h"

static int
check_audit(const char *dir)
{
	struct audit_conf	 ac;
	char			 path[PATH_MAX];

	if (xsnprintf(path, sizeof(path), "%s/audit.yaml", dir) == -1 ||
	    access(path, F_OK) == -1)
		return 0;
	if (audit_conf_load(path, &ac) == -1)
		return -1;
	printf("%s: OK\n", path);
	return 0;
}

/* A profile's network names netguard's policy file, or the check fails. */
static int
network_policy_exists(const char *dir, const char *name)
{
	char	 path[PATH_MAX];

	return xsnprintf(path, sizeof(path), "%s/network/%s.yaml", dir,
	    name) != -1 && access(path, R_OK) == 0;
}

/*
 * packages.index's host must be a name the profile's netguard policy
 * allows, or every pip install fails at the resolver: say so here, not
 * at the first install.  An address literal is left to the policy's
 * CIDRs at run time.
 */
static int
index_reachable(const struct profile *p, const struct policy_set *set)
{
	const struct policy	*pol;
	const char		*h;
	char			 host[256];
	size_t			 n, i;
	unsigned char		 a[16];

	if (!p->pkg_install || set == NULL ||
	    (pol = policy_find(set, p->network)) == NULL)
		return 0;
	h = p->pkg_index + strlen("https://");
	n = strcspn(h, ":/?#");
	if (n == 0 || n >= sizeof(host) || h[0] == '[')
		return 0;
	for (i = 0; i < n; i++)
		host[i] = tolower((unsigned char)h[i]);
	host[n] = '\0';
	if (inet_pton(AF_INET, host, a) == 1 ||
	    policy_match_name(pol, host) != -1)
		return 0;
	fprintf(stderr, "%s: packages: index host %s is not allowed by "
	    "network/%s.yaml: pip could not reach it\n", p->path, host,
	    p->network);
	return -1;
}

static int
check_mcpexec(const char *dir, const struct policy_set *set)
{
	struct mcpexec_conf	 mc;
	struct profile		*p;
	struct dirent		*de;
	char			 path[PATH_MAX], name[PROFILE_NAME_MAX];
	size_t			 len;
	DIR			*d;
	int			 rv = 0;

	if (xsnprintf(path, sizeof(path), "%s/%s", dir, MCPEXEC_CONFIG) != -1 &&
	    access(path, F_OK) == 0) {
		if (mcpexec_conf_load(dir, &mc) == -1)
			rv = -1;
		else
			printf("%s: OK\n", path);
	}
	if (xsnprintf(path, sizeof(path), "%s/profiles", dir) == -1 ||
	    (d = opendir(path)) == NULL)
		return rv;
	p = xmalloc(sizeof(*p));
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len <= 5 || strcmp(de->d_name + len - 5, ".yaml") != 0)
			continue;
		if (len - 5 >= sizeof(name)) {
			fprintf(stderr, "%s/%s: profile name too long\n", path,
			    de->d_name);
			rv = -1;
			continue;
		}
		memcpy(name, de->d_name, len - 5);
		name[len - 5] = '\0';
		if (profile_load(dir, name, p) == -1)
			rv = -1;
		else if (p->netguard && !network_policy_exists(dir, p->network)) {
			fprintf(stderr, "%s: network: no policy %s/network/%s.yaml "
			    "for netguard\n", p->path, dir, p->network);
			rv = -1;
		} else if (index_reachable(p, set) == -1)
			rv = -1;
		else
			printf("%s: OK\n", p->path);
	}
	closedir(d);
	free(p);
	return rv;
}

/* netguard.yaml and every network/NAME.yaml, through netguard's loaders;
 * the policies, when they load, for the profiles' check. */
static int
check_netguard(const char *dir, struct policy_set **setp)
{
	struct ng_conf		 nc;
	struct policy_set	*set;
	char			 path[PATH_MAX];
	size_t			 i;
	int			 rv = 0;

	memset(&nc, 0, sizeof(nc));
	if (xsnprintf(path, sizeof(path), "%s/%s", dir, NETGUARD_CONF_FILE) !=
	    -1 && access(path, F_OK) == 0) {
		if (ng_conf_load(dir, &nc) == -1)
			rv = -1;
		else
			printf("%s: OK\n", path);
	}
	if (xsnprintf(path, sizeof(path), "%s/network", dir) == -1 ||
	    access(path, F_OK) == -1)
		return rv;
	if ((set = policy_set_load(dir)) == NULL)
		return -1;
	for (i = 0; i < set->npolicies; i++)
		printf("%s: OK, level %s\n", set->policies[i].path,
		    policy_level_name(set->policies[i].level));
	/* netguard would not start: its proxy needs the deployment CA. */
	if (proxy_wanted(set) && rv == 0 && (nc.proxy.ca_cert[0] == '\0' ||
	    nc.proxy.ca_key[0] == '\0')) {
		fprintf(stderr, "%s/%s: http_proxy: ca_cert and ca_key are "
		    "needed: a policy in network/ has http rules\n", dir,
		    NETGUARD_CONF_FILE);
		rv = -1;
	}
	*setp = set;
	return rv;
}

/*
 * mcp-exec's rule files that hold a list: each loader returns the number
 * of entries, or -1 after printing its errors.
 */
static long
count_principals(const char *dir)
{
	struct principals	*p;
	long			 n;

	struct authz		*a;

	if ((p = principals_load(dir)) == NULL)
		return -1;
	n = (long)principals_count(p);
	principals_free(p);
	/* The same loader mcp-exec runs: principals, groups, profiles. */
	if ((a = authz_load(dir)) == NULL)
		return -1;
	authz_free(a);
	return n;
}

static long
count_commands(const char *dir)
{
	struct commands	*c;
	long		 n;

	if ((c = commands_load(dir)) == NULL)
		return -1;
	n = (long)commands_count(c);
	commands_free(c);
	return n;
}

static long
count_patterns(const char *dir)
{
	struct patterns	*p;
	long		 n;

	if ((p = patterns_load(dir)) == NULL)
		return -1;
	n = (long)patterns_count(p);
	patterns_free(p);
	return n;
}

static const struct {
	const char	*file;
	const char	*unit;		/* what the file lists, singular */
	long		(*count)(const char *dir);
} lists[] = {
	{ PRINCIPALS_FILE, "token", count_principals },
	{ COMMANDS_FILE, "command", count_commands },
	{ PATTERNS_FILE, "rule", count_patterns },
};

/* An absent file is not checked: mcp-exec runs without it (no entries). */
static int
check_lists(const char *dir)
{
	char	 path[PATH_MAX];
	size_t	 i;
	long	 n;
	int	 rv = 0;

	for (i = 0; i < nitems(lists); i++) {
		if (xsnprintf(path, sizeof(path), "%s/%s", dir,
		    lists[i].file) == -1 || access(path, F_OK) == -1)
			continue;
		if ((n = lists[i].count(dir)) == -1) {
			rv = -1;
			continue;
		}
		printf("%s: OK, %ld %s%s\n", path, n, lists[i].unit,
		    n == 1 ? "" : "s");
	}
	return rv;
}

int
cmd_rules(int argc, char *argv[])
{
	struct policy_set	*set = NULL;
	char			*dir;
	size_t			 len;
	int			 bad = 0;

	if (argc != 3 || strcmp(argv[1], "check") != 0) {
		fprintf(stderr, "usage: stockade rules check DIR\n");
		return EXIT_USAGE;
	}
	dir = argv[2];
	if (access(dir, R_OK | X_OK) == -1) {
		perror(dir);
		return EXIT_USAGE;
	}
	/* "rules/" names files as rules/x.yaml, not rules//x.yaml. */
	while ((len = strlen(dir)) > 1 && dir[len - 1] == '/')
		dir[len - 1] = '\0';
	if (check_audit(dir) == -1)
		bad = 1;
	if (check_netguard(dir, &set) == -1)
		bad = 1;
	if (check_mcpexec(dir, set) == -1)
		bad = 1;
	if (set != NULL)
		policy_set_free(set);
	if (check_lists(dir) == -1)
		bad = 1;
	if (bad)
		return EXIT_NEGATIVE;
	printf("configuration OK\n");
	return 0;
}
