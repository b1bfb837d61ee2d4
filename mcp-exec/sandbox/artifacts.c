/*
 * Artifacts: copies what a run left in its workspace out of it.  The whole
 * workspace was written by sandboxed code and is hostile: names, types,
 * sizes, links and the shape of the tree.  Each entry is opened once,
 * relative to its directory and without following links, and is judged by
 * fstat and by the bytes read from that same descriptor.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifacts.h"
#include "utf8.h"
#include "hash.h"
#include "util.h"

#define ARTIFACT_ENTRIES_MAX	65536	/* entries looked at in all */
#define ARTIFACT_SKIPPED_MAX	256	/* skips listed one by one */
#define ARTIFACT_READ_FIRST	(64 * 1024)	/* when st_size says 0 */
#define DIR_MODE		0750
#define FILE_MODE		0640

/* ---------------------------------------------------------------- walk */

struct walk {
	const struct artifact_rules	*rules;
	const json_t			*known;
	const char			*uri_prefix;
	json_t				*found;
	json_t				*skipped;
	uint64_t			 total;		/* bytes taken */
	unsigned			 count;		/* files taken */
	unsigned			 entries;	/* looked at */
	unsigned			 unlisted;	/* skips not listed */
	int				 stop;		/* capped */
	json_int_t			 cur_size;	/* the entry's, for skip() */
	char				*err;
	size_t				 errlen;
};

struct dent {
	char		*name;
	unsigned char	 type;	/* d_type: a hint; fstat decides */
};

static void
skip(struct walk *w, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records an entry not taken; past ARTIFACT_SKIPPED_MAX they are counted. */
static void
skip(struct walk *w, const char *name, const char *fmt, ...)
{
	char	 reason[128];
	va_list	 ap;

	if (json_array_size(w->skipped) >= ARTIFACT_SKIPPED_MAX) {
		w->unlisted++;
		return;
	}
	va_start(ap, fmt);
	(void)vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (json_array_append_new(w->skipped, json_pack("{s:s, s:I, s:s}",
	    "name", name, "size", w->cur_size, "reason", reason)) == -1)
		w->unlisted++;
}

/*
 * A name is safe when it fits and lib/utf8.c finds nothing in it that
 * would show a person something other than what it is: it ends up in
 * JSON, in URIs, in the audit trail and on someone's terminal.
 */
static int
name_safe(const char *s)
{
	size_t	 len = strlen(s);

	return len > 0 && len <= ARTIFACT_NAME_MAX &&
	    utf8_name_check(s, len, NULL) == UTF8_NAME_OK;
}

/* "dir/name" for a skip record when the name itself is unfit: printable
 * ASCII, cut to ARTIFACT_NAME_MAX. */
static void
skip_unsafe(struct walk *w, const char *prefix, const char *name)
{
	char	 shown[ARTIFACT_NAME_MAX + 1];

	if (snprintf(shown, sizeof(shown), "%s%s%s", prefix,
	    *prefix != '\0' ? "/" : "", name) < 0)
		shown[0] = '\0';
	str_ascii(shown);
	skip(w, shown, "unsafe name");
}

/* The URI of an artifact: prefix, then the name with every byte outside
 * RFC 3986 "unreserved" and '/' percent-encoded. */
static char *
artifact_uri(const char *prefix, const char *name)
{
	static const char	 hex[] = "0123456789ABCDEF";
	size_t			 plen = strlen(prefix), o;
	const uint8_t		*p;
	char			*u;

	u = xmalloc(plen + 3 * strlen(name) + 1);
	memcpy(u, prefix, plen);
	o = plen;
	for (p = (const uint8_t *)name; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' ||
		    *p == '_' || *p == '~' || *p == '/')
			u[o++] = (char)*p;
		else {
			u[o++] = '%';
			u[o++] = hex[*p >> 4];
			u[o++] = hex[*p & 0xf];
		}
	}
	u[o] = '\0';
	return u;
}

/*
 * Reads fd to its end into a new buffer, stopping at limit bytes; hint is
 * the size fstat reported (a first guess, since the file may change).
 */
static int
read_capped(int fd, size_t hint, size_t limit, uint8_t **out, size_t *outlen)
{
	size_t	 cap, len = 0;
	uint8_t	*p;
	ssize_t	 n;

	cap = hint < limit ? hint : limit;
	if (cap == 0)
		cap = limit < ARTIFACT_READ_FIRST ? limit : ARTIFACT_READ_FIRST;
	p = xmalloc(cap);
	for (;;) {
		if (len == cap) {
			if (cap == limit)
				break;
			cap = cap > limit / 2 ? limit : cap * 2;
			p = xrealloc(p, cap);
		}
		if ((n = read(fd, p + len, cap - len)) == -1) {
			if (errno == EINTR)
				continue;
			free(p);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*out = p;
	*outlen = len;
	return 0;
}

/* Copies data to a new file `name` in outfd; -1 with w->err on our side. */
static int
write_out(struct walk *w, int outfd, const char *name, const char *rel,
    const uint8_t *data, size_t len)
{
	int	 fd;

	if ((fd = openat(outfd, name, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, FILE_MODE)) == -1) {
		snprintf(w->err, w->errlen, "create %s: %s", rel,
		    strerror(errno));
		return -1;
	}
	if (write_all(fd, data, len) == -1) {
		snprintf(w->err, w->errlen, "write %s: %s", rel,
		    strerror(errno));
		close(fd);
		unlinkat(outfd, name, 0);
		return -1;
	}
	/* Some file systems report write errors only at close. */
	if (close(fd) == -1) {
		snprintf(w->err, w->errlen, "close %s: %s", rel,
		    strerror(errno));
		unlinkat(outfd, name, 0);
		return -1;
	}
	return 0;
}

/* Whether the caller already holds rel with this content. */
static int
already_known(const struct walk *w, const char *rel, const char *hex)
{
	const char	*sha;

	sha = json_string_value(json_object_get(json_object_get(w->known, rel),
	    "sha256"));
	return sha != NULL && strcmp(sha, hex) == 0;
}

/* A regular file with one link: size caps, then content, then copy. */
static int
take_file(struct walk *w, int fd, const struct stat *st, int outfd,
    const char *name, const char *rel)
{
	const struct artifact_rules	*r = w->rules;
	uint8_t				*data = NULL;
	size_t				 len, limit;
	char				 hex[SHA256_HEX + 1], *uri;
	json_t				*o;
	int				 t, rv = 0;

	if ((uint64_t)st->st_size > r->max_file) {
		skip(w, rel, "larger than %llu bytes",
		    (unsigned long long)r->max_file);
		return 0;
	}
	if (w->count >= r->max_count) {
		skip(w, rel, "more than %u artifacts", r->max_count);
		return 0;
	}
	if ((uint64_t)st->st_size > r->max_total - w->total)
		goto over_total;
	/* One byte past the cap, so a file that grew is noticed. */
	limit = r->max_file >= SIZE_MAX - 1 ? SIZE_MAX - 1 :
	    (size_t)r->max_file + 1;
	if (read_capped(fd, (size_t)st->st_size + 1, limit, &data,
	    &len) == -1) {
		skip(w, rel, "read: %s", strerror(errno));
		return 0;
	}
	if (len > r->max_file) {
		skip(w, rel, "larger than %llu bytes",
		    (unsigned long long)r->max_file);
		goto out;
	}
	if (len > r->max_total - w->total)
		goto over_total;
	/* The type comes from exactly the bytes that will be copied; the
	 * name only tells apart kinds the content leaves open (md, txt). */
	if ((t = artifact_sniff(data, len, 1)) == -1) {
		skip(w, rel, "unrecognised content");
		goto out;
	}
	t = artifact_refine(t, data, len, rel);
	if ((r->types & (1u << t)) == 0) {
		skip(w, rel, "type %s not allowed", artifact_type_name(t));
		goto out;
	}
	sha256_hex(data, len, hex);
	w->count++;
	w->total += len;
	if (already_known(w, rel, hex))
		goto out;
	if (write_out(w, outfd, name, rel, data, len) == -1) {
		rv = -1;
		goto out;
	}
	uri = artifact_uri(w->uri_prefix, rel);
	o = json_pack("{s:s, s:s, s:s, s:I, s:s}", "name", rel, "uri", uri,
	    "mime", artifact_mime(t), "size", (json_int_t)len, "sha256", hex);
	free(uri);
	if (o == NULL || json_array_append_new(w->found, o) == -1) {
		snprintf(w->err, w->errlen, "%s: cannot describe", rel);
		rv = -1;
		goto out;
	}
	goto out;
over_total:
	skip(w, rel, "artifacts exceed %llu bytes in all",
	    (unsigned long long)r->max_total);
out:
	free(data);
	return rv;
}

static int	walk_dir(struct walk *, int, int, const char *, int);

/* A subdirectory: mirrored in outfd, removed again if nothing was taken. */
static int
take_dir(struct walk *w, int fd, int outfd, const char *name,
    const char *rel, int depth)
{
	unsigned	 before = w->count;
	int		 subout, rv;

	if (depth >= ARTIFACT_DEPTH_MAX) {
		skip(w, rel, "deeper than %d directories", ARTIFACT_DEPTH_MAX);
		close(fd);
		return 0;
	}
	if (mkdirat(outfd, name, DIR_MODE) == -1 ||
	    (subout = openat(outfd, name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1) {
		snprintf(w->err, w->errlen, "mkdir %s: %s", rel,
		    strerror(errno));
		close(fd);
		return -1;
	}
	rv = walk_dir(w, fd, subout, rel, depth + 1);
	close(subout);
	if (rv == 0 && w->count == before)
		(void)unlinkat(outfd, name, AT_REMOVEDIR);
	return rv;
}

static int
take_entry(struct walk *w, int dirfd, int outfd, const char *prefix,
    const struct dent *e, int depth)
{
	char		 rel[ARTIFACT_NAME_MAX + 1];
	struct stat	 st;
	int		 fd, rv = 0;

	/* A size for the skip records: lstat opens nothing. */
	w->cur_size = fstatat(dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 ?
	    (json_int_t)st.st_size : 0;
	if (xsnprintf(rel, sizeof(rel), "%s%s%s", prefix,
	    *prefix != '\0' ? "/" : "", e->name) == -1 || !name_safe(rel)) {
		skip_unsafe(w, prefix, e->name);
		return 0;
	}
	/*
	 * d_type is the workspace's word and may be stale; it only spares
	 * us opening what is plainly not a file (a device's open can have
	 * effects).  fstat on the opened descriptor is what decides.
	 */
	switch (e->type) {
	case DT_LNK:
		skip(w, rel, "symlink");
		return 0;
	case DT_FIFO:
	case DT_SOCK:
	case DT_CHR:
	case DT_BLK:
		skip(w, rel, "not a regular file");
		return 0;
	}
	/* O_NOFOLLOW: a symlink fails with ELOOP; O_NONBLOCK: a fifo
	 * swapped in cannot hang us; O_NOCTTY: nor can a tty adopt us. */
	if ((fd = openat(dirfd, e->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
	    O_NONBLOCK | O_NOCTTY)) == -1) {
		if (errno == ELOOP)
			skip(w, rel, "symlink");
		else if (errno == ENXIO)
			skip(w, rel, "not a regular file");
		else
			skip(w, rel, "open: %s", strerror(errno));
		return 0;
	}
	if (fstat(fd, &st) == -1) {
		skip(w, rel, "fstat: %s", strerror(errno));
		close(fd);
		return 0;
	}
	w->cur_size = (json_int_t)st.st_size;
	/* The descriptor already is the directory: walking it needs no
	 * second lookup of the name. */
	if (S_ISDIR(st.st_mode))
		return take_dir(w, fd, outfd, e->name, rel, depth);
	if (!S_ISREG(st.st_mode))
		skip(w, rel, "not a regular file");
	else if (st.st_nlink > 1)
		skip(w, rel, "hard link");
	else
		rv = take_file(w, fd, &st, outfd, e->name, rel);
	close(fd);
	return rv;
}

static int
dent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dent *)a)->name,
	    ((const struct dent *)b)->name);
}

/* Takes ownership of fd.  Entries are sorted by name (bytewise) so the
 * result does not depend on the file system's order. */
static int
walk_dir(struct walk *w, int fd, int outfd, const char *prefix, int depth)
{
	DIR		*d;
	struct dirent	*de;
	struct dent	*ents = NULL;
	size_t		 n = 0, cap = 0, i;
	int		 rv = 0;

	if ((d = fdopendir(fd)) == NULL) {
		snprintf(w->err, w->errlen, "fdopendir %s: %s",
		    *prefix != '\0' ? prefix : ".", strerror(errno));
		close(fd);
		return -1;
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL)
			break;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (w->entries >= ARTIFACT_ENTRIES_MAX) {
			skip(w, *prefix != '\0' ? prefix : ".",
			    "more than %d entries in the workspace",
			    ARTIFACT_ENTRIES_MAX);
			w->stop = 1;
			break;
		}
		w->entries++;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			ents = xrealloc(ents, cap * sizeof(*ents));
		}
		ents[n].name = xstrdup(de->d_name);
		ents[n].type = de->d_type;
		n++;
	}
	if (de == NULL && errno != 0)
		skip(w, *prefix != '\0' ? prefix : ".", "readdir: %s",
		    strerror(errno));
	if (n > 0)
		qsort(ents, n, sizeof(*ents), dent_cmp);
	for (i = 0; i < n && rv == 0 && !w->stop; i++)
		rv = take_entry(w, dirfd(d), outfd, prefix, &ents[i], depth);
	for (i = 0; i < n; i++)
		free(ents[i].name);
	free(ents);
	closedir(d);
	return rv;
}

int
artifacts_collect(int dirfd, const struct artifact_rules *rules, int outfd,
    const json_t *known, const char *uri_prefix, json_t **found,
    json_t **skipped, char *err, size_t errlen)
{
	struct walk	 w;
	char		 reason[64];
	int		 fd;

	memset(&w, 0, sizeof(w));
	w.rules = rules;
	w.known = known;
	w.uri_prefix = uri_prefix != NULL ? uri_prefix : "";
	w.err = err;
	w.errlen = errlen;
	*found = *skipped = NULL;
	/* A description of our own, so the caller's offset stays put. */
	if ((fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		snprintf(err, errlen, "workspace: %s", strerror(errno));
		return -1;
	}
	w.found = json_array();
	w.skipped = json_array();
	if (w.found == NULL || w.skipped == NULL) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		goto fail;
	}
	if (walk_dir(&w, fd, outfd, "", 0) == -1)
		goto fail;
	if (w.unlisted > 0) {
		/* The empty name is no file's: it marks the summary. */
		snprintf(reason, sizeof(reason), "%u more entries not listed",
		    w.unlisted);
		json_array_append_new(w.skipped, json_pack("{s:s, s:i, s:s}",
		    "name", "", "size", 0, "reason", reason));
	}
	*found = w.found;
	*skipped = w.skipped;
	return 0;
fail:
	json_decref(w.found);
	json_decref(w.skipped);
	return -1;
}
