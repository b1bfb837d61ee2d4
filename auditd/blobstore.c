/*
 * The code blob store (blobstore.h).  Blobs are written by the writer's
 * I/O thread before the batch whose records name them, and read by the
 * verifier and `stockade audit show-code`; a blob is trusted only as far
 * as its bytes still hash to its name.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blobstore.h"
#include "hash.h"
#include "log.h"
#include "util.h"

int
blobstore_hex_ok(const char *s)
{
	return strlen(s) == SHA256_HEX && hex_lower(s, SHA256_HEX);
}

int
blobstore_dir(const char *log_dir, const char *file, char *out,
    size_t outlen)
{
	return xsnprintf(out, outlen, "%s/%s/%s", log_dir, BLOBSTORE_DIR,
	    file) == -1 ? -1 : 0;
}

int
blobstore_put(const char *dir, const char *hex, const void *data,
    size_t len)
{
	char		 path[PATH_MAX], tmp[PATH_MAX];
	struct stat	 st;
	int		 fd, saved;

	if (xsnprintf(path, sizeof(path), "%s/%s", dir, hex) == -1 ||
	    xsnprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, hex) == -1)
		return -1;
	if (stat(path, &st) == 0)
		return 0;
	if (mkdir_p(dir, BLOBSTORE_DIR_MODE) == -1)
		return -1;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    BLOBSTORE_FILE_MODE)) == -1)
		return -1;
	if (write_all(fd, data, len) == -1 || fsync(fd) == -1) {
		saved = errno;
		close(fd);
		unlink(tmp);
		errno = saved;
		return -1;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		saved = errno;
		unlink(tmp);
		errno = saved;
		return -1;
	}
	return 0;
}

int
blobstore_sync(const char *log_dir, const char *dir)
{
	char	 top[PATH_MAX];

	if (xsnprintf(top, sizeof(top), "%s/%s", log_dir, BLOBSTORE_DIR) == -1)
		return -1;
	/* The blobs' names, then the folders' own entries up to log_dir. */
	if (fsync_dir(dir) == -1 || fsync_dir(top) == -1 ||
	    fsync_dir(log_dir) == -1)
		return -1;
	return 0;
}

int
blobstore_remove(const char *log_dir, const char *file)
{
	char		 dir[PATH_MAX];
	struct stat	 st;

	if (blobstore_dir(log_dir, file, dir, sizeof(dir)) == -1)
		return -1;
	if (lstat(dir, &st) == -1)
		return errno == ENOENT ? 0 : -1;
	return rmtree(dir);
}

/* Hashes the blob at path; -1 with errno when it cannot be read. */
static int
hash_file(const char *path, char hex[SHA256_HEX + 1])
{
	char	*data;
	size_t	 len;

	if (read_file(path, BLOBSTORE_MAX, &data, &len) == -1)
		return -1;
	sha256_hex(data, len, hex);
	free(data);
	return 0;
}

enum blob_check
blobstore_check(const char *dir, const char *hex)
{
	char	 path[PATH_MAX], got[SHA256_HEX + 1];

	if (xsnprintf(path, sizeof(path), "%s/%s", dir, hex) == -1)
		return BLOB_ERROR;
	if (hash_file(path, got) == -1)
		/* Grown past any code a writer may send: not what was put. */
		return errno == ENOENT ? BLOB_MISSING : errno == EFBIG ?
		    BLOB_CHANGED : BLOB_ERROR;
	return strcmp(got, hex) == 0 ? BLOB_OK : BLOB_CHANGED;
}

int
blobstore_read(const char *log_dir, const char *hex, char **out,
    size_t *outlen)
{
	char		 top[PATH_MAX], dir[PATH_MAX], path[PATH_MAX];
	char		 got[SHA256_HEX + 1];
	struct dirent	*de;
	DIR		*d;
	int		 rv = -1;

	if (!blobstore_hex_ok(hex) || xsnprintf(top, sizeof(top), "%s/%s",
	    log_dir, BLOBSTORE_DIR) == -1 || (d = opendir(top)) == NULL)
		return -1;
	while (rv == -1 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || xsnprintf(dir, sizeof(dir),
		    "%s/%s", top, de->d_name) == -1 ||
		    xsnprintf(path, sizeof(path), "%s/%s", dir, hex) == -1)
			continue;
		if (read_file(path, BLOBSTORE_MAX, out, outlen) == -1)
			continue;
		sha256_hex(*out, *outlen, got);
		if (strcmp(got, hex) == 0)
			rv = 0;
		else {
			log_warnx("%s: its content no longer matches its name",
			    path);
			free(*out);
			*out = NULL;
		}
	}
	closedir(d);
	return rv;
}
