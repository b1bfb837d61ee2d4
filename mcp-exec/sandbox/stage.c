/*
 * Stages a call's input files into the sandbox's /inputs: checked whole,
 * then written all or none.  The input roots come from the operator's
 * profile and are trusted; paths, names and bytes come from the caller and
 * are not, nor is anything beneath the roots: a host file is opened once
 * with openat2, which refuses links, mounts and escapes, and is judged and
 * copied through that one descriptor.
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
#define STAGE_LIST_MAX		1024	/* roots listed in a refusal */
#define STAGE_FILE_MODE		0444	/* read-only to the run */
/* Each item is written under ".staging.N" first, and renamed over its
 * name once all are written: a call's inputs land all or none, and a
 * replaced input is never half old, half new.  Names starting with '.'
 * are never staged, so these cannot clash with one. */
#define STAGE_TMP_PREFIX	".staging."
#define STAGE_TMP_LEN		(sizeof(STAGE_TMP_PREFIX) + 20)	/* + %zu */

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

/* The name must make a plain, visible file name in /inputs. */
static int
name_check(const char *what, const char *name, char *err, size_t errlen)
{
	enum utf8_name	 why;

	if (*name == '\0') {
		snprintf(err, errlen, "%s: no file name", what);
		return -1;
	}
	if (*name == '.') {
		snprintf(err, errlen, "%s: names starting with '.' are not "
		    "staged", what);
		return -1;
	}
	/* The name is shown to people as it is: same rules as artifacts. */
	if ((why = utf8_name_check(name, strlen(name), NULL)) !=
	    UTF8_NAME_OK) {
		snprintf(err, errlen, "%s: %s in the name", what,
		    utf8_name_why(why));
		return -1;
	}
	if (strlen(name) > STAGE_NAME_MAX) {
		snprintf(err, errlen, "%s: name too long", what);
		return -1;
	}
	return 0;
}

/* What an item is called in a refusal: its path, or its name. */
static const char *
item_what(const struct stage_item *it)
{
	return it->path != NULL ? it->path : it->name;
}

/*
 * The root a path is beneath (the longest: a nested mount may be a root
 * itself), and the path relative to it.
 */
static int
root_of(const struct input_rules *r, const char *path, const char **root,
    const char **rel, char *err, size_t errlen)
{
	char		 list[STAGE_LIST_MAX];
	const char	*q;
	size_t		 i, best = 0;

	*root = *rel = NULL;
	if (r->nroots == 0) {
		snprintf(err, errlen, "%s: no host files may be staged (this "
		    "profile has no inputs.roots)", path);
		return -1;
	}
	if (r->nroots > STAGE_ROOTS_MAX) {
		snprintf(err, errlen, "%s: more than %d input roots", path,
		    STAGE_ROOTS_MAX);
		return -1;
	}
	for (i = 0; i < r->nroots; i++) {
		if (r->roots[i] == NULL || !root_ok(r->roots[i])) {
			snprintf(err, errlen, "%s: input root %s is not an "
			    "absolute, normalised path", path,
			    r->roots[i] ? r->roots[i] : "(null)");
			return -1;
		}
		if ((q = root_rel(r->roots[i], path)) != NULL &&
		    strlen(r->roots[i]) >= best) {
			*root = r->roots[i];
			*rel = q;
			best = strlen(*root);
		}
	}
	if (*root == NULL) {
		roots_list(r, list, sizeof(list));
		snprintf(err, errlen, "%s: not beneath an input root (%s)",
		    path, list);
		return -1;
	}
	while (**rel == '/')
		(*rel)++;
	if (**rel == '\0')
		*rel = ".";
	return 0;
}

/* A host path as the rules alone judge it; sets the item's name. */
static int
path_check(const struct input_rules *r, struct stage_item *it, char *err,
    size_t errlen)
{
	const char	*path = it->path, *root, *rel;
	size_t		 plen = strlen(path);

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
	if (root_of(r, path, &root, &rel, err, errlen) == -1)
		return -1;
	it->name = strrchr(path, '/') + 1;
	return name_check(path, it->name, err, errlen);
}

/* An inline item as the rules alone judge it. */
static int
inline_check(const struct input_rules *r, const struct stage_item *it,
    uint64_t *total, char *err, size_t errlen)
{
	if (strchr(it->name, '/') != NULL) {
		snprintf(err, errlen, "%s: a file name, not a path", it->name);
		return -1;
	}
	if (name_check(it->name, it->name, err, errlen) == -1)
		return -1;
	if (it->len > r->inline_max_file) {
		snprintf(err, errlen, "%s: %zu bytes is more than an inline "
		    "input may have (inputs.inline_max_file, %llu)", it->name,
		    it->len, (unsigned long long)r->inline_max_file);
		return -1;
	}
	if (it->len > r->inline_max_call - *total) {
		snprintf(err, errlen, "%s: the call's inline inputs would "
		    "exceed %llu bytes (inputs.inline_max_call)", it->name,
		    (unsigned long long)r->inline_max_call);
		return -1;
	}
	*total += it->len;
	return 0;
}

int
stage_check(const struct input_rules *r, struct stage_item *items, size_t n,
    char *err, size_t errlen)
{
	uint64_t	 inl = 0;
	size_t		 i, j;

	for (i = 0; i < n; i++) {
		if (i >= r->max_files) {
			snprintf(err, errlen, "%s: more than %u input files",
			    item_what(&items[i]), r->max_files);
			return -1;
		}
		if (items[i].path != NULL ? path_check(r, &items[i], err,
		    errlen) == -1 : inline_check(r, &items[i], &inl, err,
		    errlen) == -1)
			return -1;
		for (j = 0; j < i; j++)
			if (strcmp(items[j].name, items[i].name) == 0) {
				snprintf(err, errlen, "%s: %s is named twice "
				    "in this call (also by %s)",
				    item_what(&items[i]), items[i].name,
				    item_what(&items[j]));
				return -1;
			}
	}
	if (inl > r->max_bytes) {
		snprintf(err, errlen, "inline inputs would exceed %llu bytes "
		    "in all (this call sends %llu)",
		    (unsigned long long)r->max_bytes, (unsigned long long)inl);
		return -1;
	}
	return 0;
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

/* The host file, opened once and judged through that descriptor. */
static int
open_input(const struct input_rules *r, struct stage_item *it, char *err,
    size_t errlen)
{
	struct stat	 sb;
	const char	*root, *rel;
	int		 rootfd;

	if (root_of(r, it->path, &root, &rel, err, errlen) == -1)
		return -1;
	/* The root is the operator's: following links in it is fine. */
	if ((rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: input root %s: %s", it->path, root,
		    strerror(errno));
		return -1;
	}
	it->fd = open_beneath(rootfd, rel);
	if (it->fd == -1)
		open_refusal(it->path, root, errno, err, errlen);
	close(rootfd);
	if (it->fd == -1)
		return -1;
	/* Opening a directory read-only succeeds: the type is checked here. */
	if (fstat(it->fd, &sb) == -1) {
		snprintf(err, errlen, "%s: fstat: %s", it->path,
		    strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file (%s)", it->path,
		    file_kind(sb.st_mode));
		return -1;
	}
	it->size = (uint64_t)sb.st_size;
	return 0;
}

int
stage_plan(const struct input_rules *r, const struct stage *st, int destfd,
    struct stage_item *items, size_t n, char *err, size_t errlen)
{
	uint64_t	 bytes = st->bytes, files = st->files;
	size_t		 i;

	for (i = 0; i < n; i++)
		items[i].fd = -1;
	if (stage_check(r, items, n, err, errlen) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if ((items[i].had = staged_before(destfd, item_what(&items[i]),
		    items[i].name, &items[i].old, err, errlen)) == -1)
			return -1;
		if (items[i].path == NULL)
			items[i].size = items[i].len;
		else if (open_input(r, &items[i], err, errlen) == -1)
			return -1;
		/* What these replace is given back first. */
		bytes -= items[i].old < bytes ? items[i].old : bytes;
	}
	for (i = 0; i < n; i++) {
		if (!items[i].had && ++files > r->max_files) {
			snprintf(err, errlen, "%s: more than %u input files",
			    item_what(&items[i]), r->max_files);
			return -1;
		}
		if (bytes > r->max_bytes || items[i].size > r->max_bytes -
		    bytes) {
			snprintf(err, errlen, "%s: inputs would exceed %llu "
			    "bytes in all (%llu before it, this file has %llu)",
			    item_what(&items[i]),
			    (unsigned long long)r->max_bytes,
			    (unsigned long long)bytes,
			    (unsigned long long)items[i].size);
			return -1;
		}
		bytes += items[i].size;
	}
	return 0;
}

/* Item i's temporary name. */
static const char *
tmp_name(size_t i, char buf[STAGE_TMP_LEN])
{
	snprintf(buf, STAGE_TMP_LEN, STAGE_TMP_PREFIX "%zu", i);
	return buf;
}

/* The host file to out, past its planned size only by *slack. */
static int
copy_out(struct stage_item *it, int out, uint64_t *slack,
    uint64_t maxbytes, char *err, size_t errlen)
{
	struct sha256_ctx	 ctx;
	uint8_t			*buf, md[SHA256_LEN];
	uint64_t		 copied = 0;
	ssize_t			 n;
	int			 rv = -1;

	buf = xmalloc(STAGE_COPY_CHUNK);
	/* Hashed as copied: the record names the bytes the sandbox gets. */
	sha256_ctx_init(&ctx);
	sha256_begin(&ctx);
	for (;;) {
		if ((n = read(it->fd, buf, STAGE_COPY_CHUNK)) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: read: %s", it->path,
			    strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		/* The size planned may have grown since. */
		if ((uint64_t)n > it->size + *slack - copied) {
			snprintf(err, errlen, "%s: grew past the input limit "
			    "of %llu bytes in all", it->path,
			    (unsigned long long)maxbytes);
			goto out;
		}
		if (write_all(out, buf, (size_t)n) == -1) {
			snprintf(err, errlen, "%s: write %s: %s", it->path,
			    it->name, strerror(errno));
			goto out;
		}
		sha256_update(&ctx, buf, (size_t)n);
		copied += (uint64_t)n;
	}
	sha256_end(&ctx, md);
	hex_encode(md, SHA256_LEN, it->sha256);
	/* Growth takes from the room the others left; shrinking gives. */
	*slack = *slack + it->size - copied;
	it->size = copied;
	rv = 0;
out:
	sha256_ctx_free(&ctx);
	free(buf);
	return rv;
}

/* Item i under its temporary name; nothing of it left on failure. */
static int
write_tmp(struct stage_item *it, size_t i, int destfd, uint64_t *slack,
    uint64_t maxbytes, char *err, size_t errlen)
{
	char	 tmp[STAGE_TMP_LEN];
	int	 out, rv = -1;

	(void)unlinkat(destfd, tmp_name(i, tmp), 0);
	if ((out = openat(destfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, STAGE_FILE_MODE)) == -1) {
		snprintf(err, errlen, "%s: create: %s", item_what(it),
		    strerror(errno));
		return -1;
	}
	if (it->path != NULL)
		rv = copy_out(it, out, slack, maxbytes, err, errlen);
	else if (write_all(out, it->data, it->len) == -1)
		snprintf(err, errlen, "%s: write: %s", it->name,
		    strerror(errno));
	else {
		sha256_hex(it->data, it->len, it->sha256);
		rv = 0;
	}
	if (close(out) == -1 && rv == 0) {
		snprintf(err, errlen, "%s: close: %s", item_what(it),
		    strerror(errno));
		rv = -1;
	}
	if (rv == -1)
		(void)unlinkat(destfd, tmp, 0);
	return rv;
}

int
stage_commit(const struct input_rules *r, struct stage *st, int destfd,
    struct stage_item *items, size_t n, char *err, size_t errlen)
{
	char		 tmp[STAGE_TMP_LEN];
	uint64_t	 planned = st->bytes, slack;
	size_t		 i, written, renamed = 0;

	for (i = 0; i < n; i++)
		planned += items[i].size - items[i].old;
	slack = planned < r->max_bytes ? r->max_bytes - planned : 0;
	for (written = 0; written < n; written++)
		if (write_tmp(&items[written], written, destfd, &slack,
		    r->max_bytes, err, errlen) == -1)
			goto undo;
	for (; renamed < n; renamed++) {
		if (renameat(destfd, tmp_name(renamed, tmp), destfd,
		    items[renamed].name) == -1) {
			snprintf(err, errlen, "%s: rename: %s",
			    item_what(&items[renamed]), strerror(errno));
			goto undo;
		}
	}
	for (i = 0; i < n; i++) {
		st->bytes = st->bytes - items[i].old + items[i].size;
		st->files += !items[i].had;
	}
	return 0;
undo:
	/* What this call wrote goes; an input one of them had replaced is
	 * gone with it (only a rename can fail that late). */
	for (i = 0; i < renamed; i++) {
		(void)unlinkat(destfd, items[i].name, 0);
		if (items[i].had) {
			st->bytes -= items[i].old < st->bytes ? items[i].old :
			    st->bytes;
			st->files--;
		}
	}
	for (i = renamed; i < written; i++)
		(void)unlinkat(destfd, tmp_name(i, tmp), 0);
	return -1;
}

void
stage_release(struct stage_item *items, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (items[i].fd != -1) {
			close(items[i].fd);
			items[i].fd = -1;
		}
}
