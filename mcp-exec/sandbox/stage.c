/*
 * Stages a caller's input files into the sandbox's /inputs.  The input
 * roots come from the operator's profile and are trusted; the path comes
 * from the caller and is not, nor is anything beneath the roots: the file
 * is opened once with openat2, which refuses links, mounts and escapes,
 * and is judged and copied through that one descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "stage.h"
#include "utf8.h"
#include "util.h"

#define STAGE_COPY_CHUNK	(64 * 1024)
#define STAGE_NAME_MAX		255	/* NAME_MAX on Linux */
#define STAGE_LIST_MAX		1024	/* roots listed in a refusal */
#define STAGE_FILE_MODE		0444	/* read-only to the run */
/* Written first, then renamed over the name: a replaced input is never
 * half old, half new.  Names starting with '.' are never staged. */
#define STAGE_TMP_NAME		".staging"

/* Absolute, and no "//", ".", ".." or trailing '/' to make prefixes lie. */
static int
root_ok(const char *r)
{
	size_t	 len = strlen(r);

	if (r[0] != '/')
		return 0;
	if (len == 1)
		return 1;
	if (r[len - 1] == '/' || strstr(r, "//") != NULL ||
	    strstr(r, "/./") != NULL || strstr(r, "/../") != NULL)
		return 0;
	if ((len >= 2 && strcmp(r + len - 2, "/.") == 0) ||
	    (len >= 3 && strcmp(r + len - 3, "/..") == 0))
		return 0;
	return 1;
}

/* The path relative to root when it is root or beneath it, else NULL. */
static const char *
root_rel(const char *root, const char *path)
{
	size_t	 rl = strlen(root);

	if (rl == 1)		/* "/" */
		return path + 1;
	if (strncmp(path, root, rl) != 0 ||
	    (path[rl] != '\0' && path[rl] != '/'))
		return NULL;
	return path + rl;
}

static void
roots_list(const struct input_rules *r, char *out, size_t len)
{
	size_t	 i, o = 0;
	int	 n;

	out[0] = '\0';
	for (i = 0; i < r->nroots && i < STAGE_ROOTS_MAX; i++) {
		n = snprintf(out + o, len - o, "%s%s", i > 0 ? ", " : "",
		    r->roots[i]);
		if (n < 0 || (size_t)n >= len - o)
			break;
		o += (size_t)n;
	}
}

static const char *
file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "directory";
	if (S_ISCHR(m))
		return "character device";
	if (S_ISBLK(m))
		return "block device";
	if (S_ISFIFO(m))
		return "fifo";
	if (S_ISSOCK(m))
		return "socket";
	return "special file";
}

/*
 * The only lookup of the caller's path: beneath rootfd, through no symlink
 * or magic link (/proc/self/fd/...), on no other mount.  O_NONBLOCK keeps
 * a fifo from hanging us, O_NOCTTY a tty from adopting us.
 */
static int
open_beneath(int rootfd, const char *rel)
{
	struct open_how	 how;
	long		 fd;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	do {
		fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
	} while (fd == -1 && errno == EINTR);
	return (int)fd;
}

static void
open_refusal(const char *path, const char *root, int e, char *err,
    size_t errlen)
{
	switch (e) {
	case ELOOP:
		snprintf(err, errlen, "%s: a symlink on the way (inputs are "
		    "opened without following links)", path);
		break;
	case EXDEV:
		snprintf(err, errlen, "%s: crosses a mount point or leaves "
		    "the root %s", path, root);
		break;
	case ENOENT:
		snprintf(err, errlen, "%s: no such file", path);
		break;
	case ENOTDIR:
		snprintf(err, errlen, "%s: no such file (a component is not "
		    "a directory)", path);
		break;
	case EACCES:
	case EPERM:
		snprintf(err, errlen, "%s: permission denied", path);
		break;
	case ENOSYS:
		snprintf(err, errlen, "%s: openat2 is not supported by this "
		    "kernel (5.6 or later is needed)", path);
		break;
	default:
		snprintf(err, errlen, "%s: open: %s", path, strerror(e));
		break;
	}
}

/* The base name must make a plain, visible file name in /inputs. */
static int
name_check(const char *path, const char *base, size_t namelen, char *err,
    size_t errlen)
{
	enum utf8_name	 why;

	if (*base == '\0') {
		snprintf(err, errlen, "%s: no file name", path);
		return -1;
	}
	if (*base == '.') {
		snprintf(err, errlen, "%s: names starting with '.' are not "
		    "staged", path);
		return -1;
	}
	/* The name is shown to people as it is: same rules as artifacts. */
	if ((why = utf8_name_check(base, strlen(base), NULL)) !=
	    UTF8_NAME_OK) {
		snprintf(err, errlen, "%s: %s in the name", path,
		    utf8_name_why(why));
		return -1;
	}
	if (strlen(base) > STAGE_NAME_MAX || strlen(base) >= namelen) {
		snprintf(err, errlen, "%s: name too long", path);
		return -1;
	}
	return 0;
}

/* fd to a new file `name` in destfd, refusing past `budget` bytes. */
static int
copy_out(int fd, const char *path, int destfd, const char *name,
    uint64_t budget, uint64_t maxbytes, uint64_t *copied,
    char hex[SHA256_HEX + 1], char *err, size_t errlen)
{
	struct sha256_ctx	 ctx;
	uint8_t			*buf, md[SHA256_LEN];
	ssize_t			 n;
	int			 out, rv = -1;

	*copied = 0;
	(void)unlinkat(destfd, STAGE_TMP_NAME, 0);
	if ((out = openat(destfd, STAGE_TMP_NAME, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, STAGE_FILE_MODE)) == -1) {
		snprintf(err, errlen, "%s: create %s: %s", path, name,
		    strerror(errno));
		return -1;
	}
	buf = xmalloc(STAGE_COPY_CHUNK);
	/* Hashed as copied: the record names the bytes the sandbox gets. */
	sha256_ctx_init(&ctx);
	sha256_begin(&ctx);
	for (;;) {
		if ((n = read(fd, buf, STAGE_COPY_CHUNK)) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: read: %s", path,
			    strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		/* The size checked before may have grown since. */
		if ((uint64_t)n > budget - *copied) {
			snprintf(err, errlen, "%s: grew past the input limit "
			    "of %llu bytes in all", path,
			    (unsigned long long)maxbytes);
			goto out;
		}
		if (write_all(out, buf, (size_t)n) == -1) {
			snprintf(err, errlen, "%s: write %s: %s", path, name,
			    strerror(errno));
			goto out;
		}
		sha256_update(&ctx, buf, (size_t)n);
		*copied += (uint64_t)n;
	}
	sha256_end(&ctx, md);
	hex_encode(md, SHA256_LEN, hex);
	rv = 0;
out:
	sha256_ctx_free(&ctx);
	free(buf);
	if (close(out) == -1 && rv == 0) {
		snprintf(err, errlen, "%s: close %s: %s", path, name,
		    strerror(errno));
		rv = -1;
	}
	if (rv == 0 && renameat(destfd, STAGE_TMP_NAME, destfd, name) == -1) {
		snprintf(err, errlen, "%s: rename to %s: %s", path, name,
		    strerror(errno));
		rv = -1;
	}
	if (rv == -1)
		(void)unlinkat(destfd, STAGE_TMP_NAME, 0);
	return rv;
}

/*
 * An input staged before under name (in this session) is replaced: its
 * bytes are given back to the budget.  1 when there was one, 0 when not,
 * -1 when something else has the name.
 */
static int
staged_before(int destfd, const char *what, const char *name,
    uint64_t *size, char *err, size_t errlen)
{
	struct stat	 sb;

	*size = 0;
	if (fstatat(destfd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s: %s", what, name,
		    strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: %s is not a staged file", what,
		    name);
		return -1;
	}
	*size = (uint64_t)sb.st_size;
	return 1;
}

/* Room for size bytes (replacing old) under max_files and max_bytes. */
static int
stage_room(const struct input_rules *r, const struct stage *st,
    const char *what, int had, uint64_t old, uint64_t size, char *err,
    size_t errlen)
{
	uint64_t	 others = st->bytes > old ? st->bytes - old : 0;

	if (!had && st->files >= r->max_files) {
		snprintf(err, errlen, "%s: more than %u input files", what,
		    r->max_files);
		return -1;
	}
	if (others > r->max_bytes || size > r->max_bytes - others) {
		snprintf(err, errlen, "%s: inputs would exceed %llu bytes in "
		    "all (%llu staged, this file has %llu)", what,
		    (unsigned long long)r->max_bytes,
		    (unsigned long long)others, (unsigned long long)size);
		return -1;
	}
	return 0;
}

int
stage_inline(const struct input_rules *r, struct stage *st, const char *name,
    const uint8_t *data, size_t len, int destfd, char *err, size_t errlen)
{
	uint64_t	 old;
	int		 had, out, rv = -1;

	if (strchr(name, '/') != NULL) {
		snprintf(err, errlen, "%s: a file name, not a path", name);
		return -1;
	}
	if (name_check(name, name, STAGE_NAME_MAX + 1, err, errlen) == -1)
		return -1;
	if (len > r->inline_max_file) {
		snprintf(err, errlen, "%s: %zu bytes is more than an inline "
		    "input may have (inputs.inline_max_file, %llu)", name, len,
		    (unsigned long long)r->inline_max_file);
		return -1;
	}
	if ((had = staged_before(destfd, name, name, &old, err, errlen)) ==
	    -1 || stage_room(r, st, name, had, old, len, err, errlen) == -1)
		return -1;
	(void)unlinkat(destfd, STAGE_TMP_NAME, 0);
	if ((out = openat(destfd, STAGE_TMP_NAME, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, STAGE_FILE_MODE)) == -1) {
		snprintf(err, errlen, "%s: create: %s", name, strerror(errno));
		return -1;
	}
	if (write_all(out, data, len) == -1)
		snprintf(err, errlen, "%s: write: %s", name, strerror(errno));
	else if (close(out) == -1) {
		out = -1;
		snprintf(err, errlen, "%s: close: %s", name, strerror(errno));
	} else if (out = -1, renameat(destfd, STAGE_TMP_NAME, destfd,
	    name) == -1)
		snprintf(err, errlen, "%s: rename: %s", name, strerror(errno));
	else
		rv = 0;
	if (out != -1)
		close(out);
	if (rv == -1) {
		(void)unlinkat(destfd, STAGE_TMP_NAME, 0);
		return -1;
	}
	st->bytes = st->bytes - old + len;
	st->last_size = len;
	sha256_hex(data, len, st->last_sha256);
	st->files += !had;
	return 0;
}

int
stage_input(const struct input_rules *r, struct stage *st, const char *path,
    int destfd, char *name, size_t namelen, char *err, size_t errlen)
{
	char		 list[STAGE_LIST_MAX];
	const char	*root = NULL, *rel = NULL, *base, *q;
	size_t		 i, best = 0, plen = strlen(path);
	struct stat	 sb;
	uint64_t	 copied, old, others;
	int		 rootfd = -1, fd = -1, rv = -1, had;

	if (path[0] != '/') {
		snprintf(err, errlen, "%s: not an absolute path", path);
		return -1;
	}
	/* openat2 would refuse these too; say why in plain words. */
	if (strstr(path, "/../") != NULL ||
	    (plen >= 3 && strcmp(path + plen - 3, "/..") == 0)) {
		snprintf(err, errlen, "%s: '..' is not allowed in input "
		    "paths", path);
		return -1;
	}
	if (r->nroots > STAGE_ROOTS_MAX) {
		snprintf(err, errlen, "%s: more than %d input roots", path,
		    STAGE_ROOTS_MAX);
		return -1;
	}
	/* The longest matching root: a nested mount may be a root itself. */
	for (i = 0; i < r->nroots; i++) {
		if (r->roots[i] == NULL || !root_ok(r->roots[i])) {
			snprintf(err, errlen, "%s: input root %s is not an "
			    "absolute, normalised path", path,
			    r->roots[i] ? r->roots[i] : "(null)");
			return -1;
		}
		if ((q = root_rel(r->roots[i], path)) != NULL &&
		    strlen(r->roots[i]) >= best) {
			root = r->roots[i];
			rel = q;
			best = strlen(root);
		}
	}
	if (root == NULL) {
		roots_list(r, list, sizeof(list));
		snprintf(err, errlen, "%s: not beneath an input root (%s)",
		    path, list);
		return -1;
	}
	while (*rel == '/')
		rel++;
	if (*rel == '\0')
		rel = ".";
	base = strrchr(path, '/') + 1;
	if (name_check(path, base, namelen, err, errlen) == -1)
		return -1;
	if ((had = staged_before(destfd, path, base, &old, err, errlen)) == -1)
		return -1;
	if (!had && st->files >= r->max_files) {
		snprintf(err, errlen, "%s: more than %u input files", path,
		    r->max_files);
		return -1;
	}

	/* The root is the operator's: following links in it is fine. */
	if ((rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: input root %s: %s", path, root,
		    strerror(errno));
		return -1;
	}
	if ((fd = open_beneath(rootfd, rel)) == -1) {
		open_refusal(path, root, errno, err, errlen);
		goto out;
	}
	/* Opening a directory read-only succeeds: the type is checked here. */
	if (fstat(fd, &sb) == -1) {
		snprintf(err, errlen, "%s: fstat: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file (%s)", path,
		    file_kind(sb.st_mode));
		goto out;
	}
	if (stage_room(r, st, path, had, old, (uint64_t)sb.st_size, err,
	    errlen) == -1)
		goto out;
	others = st->bytes > old ? st->bytes - old : 0;
	if (copy_out(fd, path, destfd, base, r->max_bytes - others,
	    r->max_bytes, &copied, st->last_sha256, err, errlen) == -1)
		goto out;
	st->last_size = copied;
	/* Replacing an input staged before gives its bytes back. */
	st->bytes = others + copied;
	st->files += !had;
	/* Fits: name_check measured it against namelen. */
	memcpy(name, base, strlen(base) + 1);
	rv = 0;
out:
	if (fd != -1)
		close(fd);
	close(rootfd);
	return rv;
}
