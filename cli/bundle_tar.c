/*
 * Bundles as tar files, written and read by libarchive (pax format).  A
 * tar to verify is untrusted: only regular files and folders are taken,
 * with relative paths that stay beneath the target, each size-capped.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "util.h"

#define TAR_BLOCK		(64 * 1024)

static struct {
	struct archive	*a;
	size_t		 root;
	const char	*prefix;
	int		 failed;
	char		 err[PATH_MAX + 128];
} tw;

static int
tar_add_cb(const char *path, const struct stat *st, int type, struct FTW *f)
{
	struct archive_entry	*e;
	char			 name[PATH_MAX], *data = NULL;
	size_t			 len = 0;

	if (type != FTW_F && type != FTW_D) {
		snprintf(tw.err, sizeof(tw.err), "%s: not a file or folder", path);
		return 1;
	}
	if (xsnprintf(name, sizeof(name), "%s%s", tw.prefix,
	    path + tw.root) == -1)
		return 1;
	if (type == FTW_F && read_file(path, BUNDLE_FILE_MAX, &data, &len) == -1) {
		snprintf(tw.err, sizeof(tw.err), "%s: %s", path, strerror(errno));
		return 1;
	}
	e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, type == FTW_D ? AE_IFDIR : AE_IFREG);
	archive_entry_set_perm(e, type == FTW_D ? 0755 : 0644);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_mtime(e, st->st_mtime, 0);
	if (archive_write_header(tw.a, e) != ARCHIVE_OK ||
	    (len > 0 && archive_write_data(tw.a, data, len) != (la_ssize_t)len)) {
		snprintf(tw.err, sizeof(tw.err), "%s: %s", name,
		    archive_error_string(tw.a));
		archive_entry_free(e);
		free(data);
		return 1;
	}
	archive_entry_free(e);
	free(data);
	return 0;
}

int
bundle_tar_write(const char *dir, const char *tarpath, char *err,
    size_t errlen)
{
	const char	*base = strrchr(tarpath, '/');
	char		 prefix[PATH_MAX];
	size_t		 blen;
	int		 rv;

	/* Entries under one folder named as the tar, without ".tar". */
	base = base ? base + 1 : tarpath;
	blen = strlen(base);
	if (blen > 4 && strcmp(base + blen - 4, ".tar") == 0)
		blen -= 4;
	if (xsnprintf(prefix, sizeof(prefix), "%.*s", (int)blen, base) == -1)
		return -1;
	memset(&tw, 0, sizeof(tw));
	tw.root = strlen(dir);
	tw.prefix = prefix;
	tw.a = archive_write_new();
	if (archive_write_set_format_pax_restricted(tw.a) != ARCHIVE_OK ||
	    archive_write_open_filename(tw.a, tarpath) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s: %s", tarpath,
		    archive_error_string(tw.a));
		archive_write_free(tw.a);
		return -1;
	}
	rv = nftw(dir, tar_add_cb, 16, FTW_PHYS) == 0 ? 0 : -1;
	if (rv == -1)
		snprintf(err, errlen, "%s", tw.err[0] ? tw.err : strerror(errno));
	if (archive_write_close(tw.a) != ARCHIVE_OK && rv == 0) {
		snprintf(err, errlen, "%s: %s", tarpath,
		    archive_error_string(tw.a));
		rv = -1;
	}
	archive_write_free(tw.a);
	return rv;
}

/* A path from the archive, made relative to its top folder; NULL if unsafe. */
static const char *
safe_name(const char *p)
{
	const char	*s, *c;

	if (p == NULL || p[0] == '/' || p[0] == '\0')
		return NULL;
	for (c = p; c != NULL; c = (s = strchr(c, '/')) ? s + 1 : NULL)
		if (strncmp(c, "..", 2) == 0 && (c[2] == '/' || c[2] == '\0'))
			return NULL;
	/* Drop the top folder. */
	if ((s = strchr(p, '/')) == NULL)
		return "";
	return s + 1;
}

static int
extract_entry(struct archive *a, struct archive_entry *e, const char *dir,
    char *err, size_t errlen)
{
	const char	*rel = safe_name(archive_entry_pathname(e));
	char		 path[PATH_MAX], buf[TAR_BLOCK];
	la_ssize_t	 n;
	la_int64_t	 total = 0;
	int		 fd;

	if (rel == NULL) {
		snprintf(err, errlen, "tar entry %s: unsafe path",
		    archive_entry_pathname(e) ?: "(none)");
		return -1;
	}
	if (xsnprintf(path, sizeof(path), "%s/%s", dir, rel) == -1)
		return -1;
	if (archive_entry_filetype(e) == AE_IFDIR)
		return rel[0] == '\0' || mkdir_p(path, 0755) == 0 ? 0 : -1;
	if (archive_entry_filetype(e) != AE_IFREG || rel[0] == '\0') {
		snprintf(err, errlen, "tar entry %s: not a regular file",
		    archive_entry_pathname(e));
		return -1;
	}
	/* O_EXCL and O_NOFOLLOW: a second entry of one name is refused. */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1) {
		snprintf(err, errlen, "%s: %s", rel, strerror(errno));
		return -1;
	}
	while ((n = archive_read_data(a, buf, sizeof(buf))) > 0) {
		total += n;
		if ((unsigned long long)total > BUNDLE_FILE_MAX ||
		    write_all(fd, buf, (size_t)n) == -1) {
			snprintf(err, errlen, "%s: too large or not written", rel);
			close(fd);
			return -1;
		}
	}
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", rel, archive_error_string(a));
		return -1;
	}
	return 0;
}

int
bundle_tar_extract(const char *tarpath, const char *dir, char *err,
    size_t errlen)
{
	struct archive		*a = archive_read_new();
	struct archive_entry	*e;
	size_t			 count = 0;
	int			 r, rv = -1;

	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, tarpath, TAR_BLOCK) != ARCHIVE_OK) {
		snprintf(err, errlen, "%s: %s", tarpath, archive_error_string(a));
		goto out;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		if (++count > BUNDLE_FILES_MAX) {
			snprintf(err, errlen, "%s: more than %d entries", tarpath,
			    BUNDLE_FILES_MAX);
			goto out;
		}
		if (extract_entry(a, e, dir, err, errlen) == -1)
			goto out;
	}
	if (r != ARCHIVE_EOF) {
		snprintf(err, errlen, "%s: %s", tarpath, archive_error_string(a));
		goto out;
	}
	rv = 0;
out:
	archive_read_free(a);
	return rv;
}
