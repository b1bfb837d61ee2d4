/*
 * What the CLI reads of a fleet's logs (fleet.h): which chain a node's log
 * directory holds, its newest file, and the newest checkpoint a witness
 * saw of a chain.  Logs are untrusted: nothing here verifies, it names.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet.h"
#include "logdir.h"
#include "util.h"

#define FIRST_LINE_MAX		(64 * 1024)	/* chain_start, rotate: small */
#define NEWEST_FILE_MAX		(1ULL << 32)

int
fleet_chain_of(const char *dir, char id[CHAIN_ID_HEX + 1])
{
	struct logfile	*files = NULL;
	char		 path[PATH_MAX], *buf = NULL, *nl;
	const char	*s;
	size_t		 n = 0;
	ssize_t		 len;
	json_t		*j = NULL;
	int		 fd, rv = -1;

	id[0] = '\0';
	if (logdir_list(dir, &files, &n) == -1 || n == 0 ||
	    xsnprintf(path, sizeof(path), "%s/%s", dir, files[0].name) == -1 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		goto out;
	buf = xmalloc(FIRST_LINE_MAX);
	len = read(fd, buf, FIRST_LINE_MAX);
	close(fd);
	if (len <= 0 || (nl = memchr(buf, '\n', (size_t)len)) == NULL ||
	    (j = json_loadb(buf, (size_t)(nl - buf), 0, NULL)) == NULL)
		goto out;
	s = json_string_value(json_object_get(j, "chain_id"));
	if (s != NULL && strlen(s) == CHAIN_ID_HEX && hex_lower(s, CHAIN_ID_HEX)) {
		memcpy(id, s, CHAIN_ID_HEX + 1);
		rv = 0;
	}
out:
	json_decref(j);
	free(buf);
	free(files);
	return rv;
}

const struct witness_cp *
fleet_witnessed(const struct witness *w, const char *chain_id)
{
	const struct witness_cp	*best = NULL;
	size_t			 i;

	for (i = 0; i < w->n; i++)
		if (strcmp(w->cps[i].cp.chain_id, chain_id) == 0 &&
		    (best == NULL || w->cps[i].cp.seq > best->cp.seq))
			best = &w->cps[i];
	return best;
}

int
fleet_newest(const char *dir, char **data, size_t *len)
{
	struct logfile	*files = NULL;
	char		 path[PATH_MAX];
	size_t		 n = 0;
	int		 rv = -1;

	if (logdir_list(dir, &files, &n) == 0 && n > 0 &&
	    xsnprintf(path, sizeof(path), "%s/%s", dir, files[n - 1].name) !=
	    -1 && read_file(path, NEWEST_FILE_MAX, data, len) == 0)
		rv = 0;
	free(files);
	return rv;
}

int
fleet_last_line(const char *data, size_t len, const char *mark,
    json_t **rec)
{
	const char	*p, *end;

	*rec = NULL;
	for (end = data + len; end > data; end = p) {
		p = memrchr(data, '\n', (size_t)(end - data - 1));
		p = p != NULL ? p + 1 : data;
		/* Complete lines only: a torn last one is no record. */
		if (end[-1] != '\n' || (mark != NULL && memmem(p,
		    (size_t)(end - p), mark, strlen(mark)) == NULL))
			continue;
		if ((*rec = json_loadb(p, (size_t)(end - p), 0, NULL)) != NULL)
			return 0;
	}
	return -1;
}
