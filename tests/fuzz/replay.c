/*
 * Runs a libFuzzer target over every file of a corpus directory without
 * libFuzzer, so `make check` replays the corpus under ASan and UBSan.
 */
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
main(int argc, char *argv[])
{
	DIR		*d;
	struct dirent	*de;
	char		 path[PATH_MAX], *data;
	size_t		 len;
	unsigned	 n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s corpus-dir\n", argv[0]);
		return 2;
	}
	if ((d = opendir(argv[1])) == NULL) {
		perror(argv[1]);
		return 2;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (xsnprintf(path, sizeof(path), "%s/%s", argv[1],
		    de->d_name) == -1 || read_file(path, 1 << 24, &data,
		    &len) == -1) {
			perror(path);
			return 2;
		}
		LLVMFuzzerTestOneInput((const uint8_t *)data, len);
		free(data);
		n++;
	}
	closedir(d);
	printf("%u inputs replayed from %s\n", n, argv[1]);
	return n > 0 ? 0 : 1;
}
