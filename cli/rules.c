/*
 * `stockade rules check DIR`: validates every policy file under DIR
 * without running anything, printing file:line:column for each error.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "util.h"

int
cmd_rules(int argc, char *argv[])
{
	struct audit_conf	 ac;
	char			 path[PATH_MAX];
	int			 bad = 0;

	if (argc != 3 || strcmp(argv[1], "check") != 0) {
		fprintf(stderr, "usage: stockade rules check DIR\n");
		return EXIT_USAGE;
	}
	if (xsnprintf(path, sizeof(path), "%s/audit.yaml", argv[2]) == -1) {
		fprintf(stderr, "stockade: %s: path too long\n", argv[2]);
		return EXIT_USAGE;
	}
	if (access(path, F_OK) == 0) {
		if (audit_conf_load(path, &ac) == -1)
			bad = 1;
		else
			printf("%s: OK (sha256 %s)\n", path, ac.sha256);
	}
	if (bad)
		return EXIT_NEGATIVE;
	printf("configuration OK\n");
	return 0;
}
