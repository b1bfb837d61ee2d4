/*
 * `stockade rules check DIR`: validates every policy file under DIR
 * without running anything, printing file:line:column for each error.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "profile.h"
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

static int
check_mcpexec(const char *dir)
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
		else
			printf("%s: OK\n", p->path);
	}
	closedir(d);
	free(p);
	return rv;
}

int
cmd_rules(int argc, char *argv[])
{
	int	 bad = 0;

	if (argc != 3 || strcmp(argv[1], "check") != 0) {
		fprintf(stderr, "usage: stockade rules check DIR\n");
		return EXIT_USAGE;
	}
	if (access(argv[2], R_OK | X_OK) == -1) {
		perror(argv[2]);
		return EXIT_USAGE;
	}
	if (check_audit(argv[2]) == -1)
		bad = 1;
	if (check_mcpexec(argv[2]) == -1)
		bad = 1;
	if (bad)
		return EXIT_NEGATIVE;
	printf("configuration OK\n");
	return 0;
}
