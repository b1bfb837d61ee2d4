/*
 * Reading a fleet witness (witness.h).  Two shapes of line: an off-host
 * checkpoint line (what the daemon appends to offhost_dir), and a
 * forwarded record, found after whatever prefix the collector wrote;
 * only "checkpoint" records of the latter count.  Everything read is
 * untrusted: a line that claims to be a checkpoint and is not one is an
 * error, never skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "checkpoint.h"
#include "util.h"
#include "witness.h"

#define WITNESS_FILE_MAX	(1ULL << 30)
#define RECORD_MARK		"{\"seq\":"
#define CHECKPOINT_MARK		"\"event\":\"checkpoint\""

void
witness_init(struct witness *w)
{
	memset(w, 0, sizeof(*w));
}

void
witness_free(struct witness *w)
{
	size_t	 i;

	for (i = 0; i < w->nsrcs; i++)
		free(w->srcs[i]);
	free(w->srcs);
	free(w->cps);
	memset(w, 0, sizeof(*w));
}

EVP_PKEY *
witness_key(EVP_PKEY *const *keys, size_t nkeys, const char *key_id)
{
	char	 id[KEY_ID_HEX + 1];
	size_t	 i;

	for (i = 0; i < nkeys; i++)
		if (ed25519_key_id(keys[i], id) == 0 && strcmp(id, key_id) == 0)
			return keys[i];
	return NULL;
}

int
witness_line(const char *p, size_t len, struct checkpoint *cp,
    const char **why)
{
	const char	*rec;
	json_t		*j;
	int		 rv;

	rec = memmem(p, len, RECORD_MARK, sizeof(RECORD_MARK) - 1);
	if (rec == NULL) {
		if (len > 0 && p[0] == '{')
			return checkpoint_from_line(p, len, cp, why) == 0 ? 1 :
			    -1;
		return 0;
	}
	len -= (size_t)(rec - p);
	if (memmem(rec, len, CHECKPOINT_MARK, sizeof(CHECKPOINT_MARK) - 1) ==
	    NULL)
		return 0;
	if ((j = json_loadb(rec, len, JSON_REJECT_DUPLICATES, NULL)) == NULL) {
		*why = "forwarded checkpoint record is not valid JSON";
		return -1;
	}
	if (!json_is_string(json_object_get(j, "event")) ||
	    strcmp(json_string_value(json_object_get(j, "event")),
	    "checkpoint") != 0)
		rv = 0;
	else
		rv = checkpoint_from_record(j, cp, why) == 0 ? 1 : -1;
	json_decref(j);
	return rv;
}

static int
load_file(struct witness *w, const char *path, EVP_PKEY *const *keys,
    size_t nkeys, char *err, size_t errlen)
{
	struct witness_cp	*e;
	EVP_PKEY		*key;
	char			*data, *p, *nl, *src;
	const char		*why;
	size_t			 len;
	unsigned long		 lineno = 0;
	int			 r, rv = -1;

	if (read_file(path, WITNESS_FILE_MAX, &data, &len) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	src = xstrdup(path);
	w->srcs = xrealloc(w->srcs, (w->nsrcs + 1) * sizeof(*w->srcs));
	w->srcs[w->nsrcs++] = src;
	/* A last line without '\n' was torn while appending: never relied on. */
	for (p = data; p < data + len &&
	    (nl = memchr(p, '\n', (size_t)(data + len - p))) != NULL;
	    p = nl + 1) {
		lineno++;
		if (w->n == w->cap) {
			w->cap = w->cap ? w->cap * 2 : 64;
			w->cps = xrealloc(w->cps, w->cap * sizeof(*w->cps));
		}
		e = &w->cps[w->n];
		memset(e, 0, sizeof(*e));
		if ((r = witness_line(p, (size_t)(nl - p), &e->cp, &why)) == -1) {
			snprintf(err, errlen, "%s:%lu: %s", path, lineno, why);
			goto out;
		}
		if (r == 0) {
			w->skipped++;
			continue;
		}
		if (nkeys > 0 && ((key = witness_key(keys, nkeys,
		    e->cp.key_id)) == NULL || !checkpoint_verify(&e->cp, key))) {
			snprintf(err, errlen, "%s:%lu: checkpoint seq %llu is "
			    "not signed by any given key (key id %s)", path,
			    lineno, (unsigned long long)e->cp.seq, e->cp.key_id);
			goto out;
		}
		e->src = src;
		e->line = lineno;
		w->n++;
	}
	rv = 0;
out:
	free(data);
	return rv;
}

/* A folder: its own checkpoints.log, then each node's folder's. */
static int
load_dir(struct witness *w, const char *path, EVP_PKEY *const *keys,
    size_t nkeys, char *err, size_t errlen)
{
	struct dirent	**ents = NULL;
	struct stat	 st;
	char		 f[PATH_MAX];
	int		 n, i, rv = 0, found = 0;

	if (xsnprintf(f, sizeof(f), "%s/%s", path, CHECKPOINT_FILE) != -1 &&
	    stat(f, &st) == 0) {
		found = 1;
		if (load_file(w, f, keys, nkeys, err, errlen) == -1)
			return -1;
	}
	if ((n = scandir(path, &ents, NULL, alphasort)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (rv == 0 && ents[i]->d_name[0] != '.' &&
		    checkpoint_node_ok(ents[i]->d_name) &&
		    xsnprintf(f, sizeof(f), "%s/%s/%s", path, ents[i]->d_name,
		    CHECKPOINT_FILE) != -1 && stat(f, &st) == 0) {
			found = 1;
			rv = load_file(w, f, keys, nkeys, err, errlen);
		}
		free(ents[i]);
	}
	free(ents);
	if (rv == 0 && !found) {
		snprintf(err, errlen, "%s: no %s in it or in a node's folder",
		    path, CHECKPOINT_FILE);
		rv = -1;
	}
	return rv;
}

int
witness_load(struct witness *w, const char *path, EVP_PKEY *const *keys,
    size_t nkeys, char *err, size_t errlen)
{
	struct stat	 st;

	if (stat(path, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return load_dir(w, path, keys, nkeys, err, errlen);
	return load_file(w, path, keys, nkeys, err, errlen);
}
