/*
 * A session's /workspace for list_files and read_file: the owning
 * principal may look at any file the code left, not only the artifacts.
 * The workspace is the sandbox's and hostile: every path is opened beneath
 * the session's workspace descriptor (openat_beneath: no symlinks, no
 * "..", no mount crossing), only regular files with one link are read,
 * names must pass utf8_name_check, and counts and sizes are capped.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/artifacts.h"
#include "session_int.h"
#include "utf8.h"

#define WORKSPACE_PREFIX	"/workspace"

/*
 * The path as the workspace descriptor takes it: "/workspace/x" and "x"
 * are the same file, "" and "/workspace" the workspace itself.  Other
 * absolute paths and unfit names are refused here; openat_beneath
 * refuses "..", symlinks and mounts on the way.
 */
static int
files_path(const char *path, char *out, size_t outlen, char *err,
    size_t errlen)
{
	size_t	 plen = strlen(WORKSPACE_PREFIX), len;

	if (path == NULL || *path == '\0')
		path = ".";
	else if (strncmp(path, WORKSPACE_PREFIX, plen) == 0 &&
	    (path[plen] == '\0' || path[plen] == '/')) {
		path += plen;
		while (*path == '/')
			path++;
		if (*path == '\0')
			path = ".";
	} else if (*path == '/') {
		snprintf(err, errlen, "paths are relative to /workspace");
		return -1;
	}
	len = strlen(path);
	if (len > PATH_MAX - 1 || utf8_name_check(path, len, NULL) !=
	    UTF8_NAME_OK) {
		snprintf(err, errlen, "not a usable path");
		return -1;
	}
	if (xsnprintf(out, outlen, "%s", path) == -1) {
		snprintf(err, errlen, "not a usable path");
		return -1;
	}
	return 0;
}

/* Why a workspace path could not be opened, in the caller's words. */
static void
files_open_error(int e, char *err, size_t errlen)
{
	if (e == ELOOP)
		snprintf(err, errlen, "refused: the path is or passes "
		    "through a symlink");
	else if (e == EXDEV)
		snprintf(err, errlen, "refused: the path leads out of "
		    "/workspace");
	else if (e == ENOENT)
		snprintf(err, errlen, "no such file in /workspace");
	else if (e == ENOTDIR)
		snprintf(err, errlen, "not a directory");
	else
		snprintf(err, errlen, "cannot open: %s", strerror(e));
}

/*
 * Whether rel's last component is a symlink, for the message only: an
 * O_PATH descriptor of the link itself (openat2 gives one for O_PATH |
 * O_NOFOLLOW), nothing followed.
 */
static int
files_symlink(int wsfd, const char *rel)
{
	struct stat	 st;
	int		 fd, link;

	if ((fd = openat_beneath(wsfd, rel, O_PATH)) == -1)
		return 0;
	link = fstat(fd, &st) == 0 && S_ISLNK(st.st_mode);
	close(fd);
	return link;
}

static const char *
files_type(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISDIR(m))
		return "directory";
	if (S_ISLNK(m))
		return "symlink";
	return "other";
}

json_t *
session_list_files(struct server *srv, const char *principal,
    const char *id, const char *path, int *truncated, char *err,
    size_t errlen)
{
	struct session	*s;
	struct dirent	*de;
	struct stat	 st;
	struct tm	 tm;
	char		 rel[PATH_MAX], when[32];
	json_t		*list = NULL, *o;
	DIR		*d = NULL;
	int		 fd;
	unsigned	 n = 0;

	*truncated = 0;
	if ((s = session_find(srv, id, principal)) == NULL) {
		snprintf(err, errlen, "session not found");
		return NULL;
	}
	if (files_path(path, rel, sizeof(rel), err, errlen) == -1)
		return NULL;
	if ((fd = openat_beneath(s->wsfd, rel, O_RDONLY | O_DIRECTORY)) ==
	    -1) {
		files_open_error(files_symlink(s->wsfd, rel) ? ELOOP : errno,
		    err, errlen);
		return NULL;
	}
	if ((d = fdopendir(fd)) == NULL) {
		snprintf(err, errlen, "cannot list: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	list = json_array();
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n >= FILES_LIST_MAX) {
			*truncated = 1;
			break;
		}
		/* A name that would show something else is left out. */
		if (strlen(de->d_name) > ARTIFACT_NAME_MAX ||
		    utf8_name_check(de->d_name, strlen(de->d_name), NULL) !=
		    UTF8_NAME_OK) {
			*truncated = 1;
			continue;
		}
		/* lstat: a symlink is listed as one, never followed. */
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    -1)
			continue;
		gmtime_r(&st.st_mtim.tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		o = json_pack("{s:s, s:s, s:I, s:s}", "name", de->d_name,
		    "type", files_type(st.st_mode), "size",
		    (json_int_t)st.st_size, "mtime", when);
		if (o != NULL && S_ISREG(st.st_mode) && st.st_nlink > 1)
			json_object_set_new(o, "hard_link", json_true());
		json_array_append_new(list, o);
		n++;
	}
	closedir(d);
	return list;
}

/* The type of a file from its first bytes (sandbox/artifacts.c's sniff). */
static const char *
files_mime(int fd, uint64_t size, const char *name)
{
	uint8_t	 head[ARTIFACT_SNIFF_LEN];
	ssize_t	 n;
	int	 t;

	if ((n = pread(fd, head, sizeof(head), 0)) <= 0)
		return n == 0 ? "text/plain" : "application/octet-stream";
	t = artifact_sniff(head, (size_t)n, (uint64_t)n >= size);
	if (t == -1)
		return "application/octet-stream";
	return artifact_mime(artifact_refine(t, head, (size_t)n, name));
}

int
session_read_file(struct server *srv, const char *principal, const char *id,
    const char *path, uint64_t off, size_t want, struct session_file *f,
    char *err, size_t errlen)
{
	struct session	*s;
	struct stat	 st;
	char		 rel[PATH_MAX];
	ssize_t		 n;
	size_t		 got = 0;
	int		 fd, rv = -1;

	memset(f, 0, sizeof(*f));
	if ((s = session_find(srv, id, principal)) == NULL) {
		snprintf(err, errlen, "session not found");
		return -1;
	}
	if (files_path(path, rel, sizeof(rel), err, errlen) == -1)
		return -1;
	/* O_NONBLOCK: a fifo swapped in cannot hang us; O_NOCTTY: nor a tty
	 * adopt us.  fstat on this descriptor is what decides. */
	if ((fd = openat_beneath(s->wsfd, rel, O_RDONLY | O_NONBLOCK |
	    O_NOCTTY)) == -1) {
		files_open_error(errno, err, errlen);
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "cannot read: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "refused: not a regular file");
		goto out;
	}
	if (st.st_nlink > 1) {
		snprintf(err, errlen, "refused: a hard link");
		goto out;
	}
	f->size = (uint64_t)st.st_size;
	f->mime = files_mime(fd, f->size, rel);
	if (want > FILES_READ_MAX)
		want = FILES_READ_MAX;
	f->data = xmalloc(want + 1);
	/* The file may change meanwhile: what is read is what is sent. */
	while (got < want && off <= (uint64_t)INT64_MAX - got) {
		n = pread(fd, f->data + got, want - got, (off_t)(off + got));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "cannot read: %s",
			    strerror(errno));
			free(f->data);
			f->data = NULL;
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	f->len = got;
	f->eof = off + got >= f->size;
	rv = 0;
out:
	close(fd);
	return rv;
}
