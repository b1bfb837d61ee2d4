/*
 * A bundle's MANIFEST: one `sha256sum` line per regular file, sorted, so
 * `sha256sum -c MANIFEST` and `openssl dgst` check it too.  When checking,
 * the MANIFEST and the tree are untrusted: every path is checked for
 * escapes, and anything but regular files and folders is refused.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blobstore.h"
#include "bundle.h"
#include "util.h"

#define MANIFEST_MAX		(64 * 1024 * 1024)

static struct {
	size_t	  root;		/* length of the top folder's path */
	char	**names;
	size_t	  n, cap;
	int	  odd;		/* a symlink, device, socket... */
	char	  odd_name[PATH_MAX];
} walk;

static int
walk_cb(const char *path, const struct stat *st, int type, struct FTW *f)
{
	const char	*rel = path + walk.root + 1;

	if (f->level == 0)
		return 0;
	if (type == FTW_D || type == FTW_DP)
		return 0;
	if (type != FTW_F || !S_ISREG(st->st_mode)) {
		walk.odd = 1;
		snprintf(walk.odd_name, sizeof(walk.odd_name), "%s", rel);
		return 1;
	}
	if (f->level == 1 && strcmp(rel, BUNDLE_MANIFEST) == 0)
		return 0;
	if (walk.n >= BUNDLE_FILES_MAX)
		return 1;
	if (walk.n == walk.cap) {
		walk.cap = walk.cap ? walk.cap * 2 : 64;
		walk.names = xrealloc(walk.names, walk.cap * sizeof(char *));
	}
	walk.names[walk.n++] = xstrdup(rel);
	return 0;
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
walk_free(void)
{
	size_t	 i;

	for (i = 0; i < walk.n; i++)
		free(walk.names[i]);
	free(walk.names);
	memset(&walk, 0, sizeof(walk));
}

/* The regular files under dir, sorted, relative; -1 on odd entries. */
static int
walk_dir(const char *dir, char *msg, size_t msglen)
{
	memset(&walk, 0, sizeof(walk));
	walk.root = strlen(dir);
	if (nftw(dir, walk_cb, 16, FTW_PHYS) != 0) {
		if (walk.odd)
			snprintf(msg, msglen, "%s: not a regular file or folder",
			    walk.odd_name);
		else
			snprintf(msg, msglen, "%s: %s", dir, walk.n >=
			    BUNDLE_FILES_MAX ? "too many files" : strerror(errno));
		walk_free();
		return -1;
	}
	/* A bundle of only its MANIFEST walks to no names, and no array:
	 * qsort's pointer may not be NULL even for none. */
	if (walk.n > 1)
		qsort(walk.names, walk.n, sizeof(char *), str_cmp);
	return 0;
}

static int
file_hex(const char *dir, const char *rel, char hex[SHA256_HEX + 1])
{
	char	 path[PATH_MAX], *data;
	size_t	 len;

	if (xsnprintf(path, sizeof(path), "%s/%s", dir, rel) == -1 ||
	    read_file(path, BUNDLE_FILE_MAX, &data, &len) == -1)
		return -1;
	sha256_hex(data, len, hex);
	free(data);
	return 0;
}

int
bundle_manifest_write(const char *dir, char *err, size_t errlen)
{
	char	 path[PATH_MAX], hex[SHA256_HEX + 1];
	FILE	*fp;
	size_t	 i;
	int	 rv = -1;

	if (walk_dir(dir, err, errlen) == -1)
		return -1;
	if (xsnprintf(path, sizeof(path), "%s/%s", dir, BUNDLE_MANIFEST) == -1 ||
	    (fp = fopen(path, "wx")) == NULL) {
		snprintf(err, errlen, "%s/%s: %s", dir, BUNDLE_MANIFEST,
		    strerror(errno));
		goto out;
	}
	for (i = 0; i < walk.n; i++) {
		if (file_hex(dir, walk.names[i], hex) == -1) {
			snprintf(err, errlen, "%s: %s", walk.names[i],
			    strerror(errno));
			fclose(fp);
			goto out;
		}
		fprintf(fp, "%s  %s\n", hex, walk.names[i]);
	}
	rv = fclose(fp) == 0 ? 0 : -1;
	if (rv == -1)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
out:
	walk_free();
	return rv;
}

int
bundle_manifest_check(const char *dir, char *msg, size_t msglen)
{
	char		 path[PATH_MAX], hex[SHA256_HEX + 1], *data = NULL;
	char		*p, *nl;
	size_t		 len, i = 0;
	int		 rv = -1;

	if (xsnprintf(path, sizeof(path), "%s/%s", dir, BUNDLE_MANIFEST) == -1 ||
	    read_file(path, MANIFEST_MAX, &data, &len) == -1) {
		snprintf(msg, msglen, "%s: %s", BUNDLE_MANIFEST, strerror(errno));
		return -1;
	}
	if (walk_dir(dir, msg, msglen) == -1) {
		free(data);
		return -1;
	}
	/* Written sorted; one line per file present, in the same order. */
	for (p = data; p < data + len; p = nl + 1, i++) {
		if ((nl = memchr(p, '\n', (size_t)(data + len - p))) == NULL ||
		    nl - p < SHA256_HEX + 3 || p[SHA256_HEX] != ' ' ||
		    p[SHA256_HEX + 1] != ' ') {
			snprintf(msg, msglen, "%s: line %zu malformed",
			    BUNDLE_MANIFEST, i + 1);
			goto out;
		}
		*nl = '\0';
		p[SHA256_HEX] = '\0';
		if (i >= walk.n || strcmp(p + SHA256_HEX + 2, walk.names[i]) != 0) {
			snprintf(msg, msglen, "%s lists %s, but the bundle %s",
			    BUNDLE_MANIFEST, p + SHA256_HEX + 2, i >= walk.n ?
			    "has no more files" : "holds another file there "
			    "(a file missing or added)");
			goto out;
		}
		if (!blobstore_hex_ok(p) || file_hex(dir, walk.names[i], hex) == -1 ||
		    strcmp(hex, p) != 0) {
			snprintf(msg, msglen, "%s: sha256 differs from %s",
			    walk.names[i], BUNDLE_MANIFEST);
			goto out;
		}
	}
	if (i != walk.n) {
		snprintf(msg, msglen, "%s is not in %s", walk.names[i],
		    BUNDLE_MANIFEST);
		goto out;
	}
	rv = 0;
out:
	free(data);
	walk_free();
	return rv;
}
