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
/*
 * JSON bigger than this is judged by its first character only: parsing
 * costs many times the file's size in memory, and the file is hostile.
 */
#define ARTIFACT_JSON_PARSE_MAX	(1024 * 1024)
#define ARTIFACT_READ_FIRST	(64 * 1024)	/* when st_size says 0 */
#define CSV_RECORDS_MIN		2
#define DIR_MODE		0750
#define FILE_MODE		0640

static const struct {
	const char	*name;
	const char	*mime;
} art_types[ART_NTYPES] = {
	[ART_PNG] =	{ "png",	"image/png" },
	[ART_JPEG] =	{ "jpeg",	"image/jpeg" },
	[ART_SVG] =	{ "svg",	"image/svg+xml" },
	[ART_CSV] =	{ "csv",	"text/csv" },
	[ART_JSON] =	{ "json",	"application/json" },
	[ART_TXT] =	{ "txt",	"text/plain" },
	[ART_HTML] =	{ "html",	"text/html" },
};

static const uint8_t	png_magic[] = {
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a
};
static const uint8_t	jpeg_magic[] = { 0xff, 0xd8, 0xff };
static const uint8_t	utf8_bom[] = { 0xef, 0xbb, 0xbf };

int
artifact_type_parse(const char *s)
{
	int	 t;

	for (t = 0; t < ART_NTYPES; t++)
		if (strcmp(s, art_types[t].name) == 0)
			return t;
	return -1;
}

const char *
artifact_type_name(enum artifact_type t)
{
	return (unsigned)t < ART_NTYPES ? art_types[t].name : "unknown";
}

const char *
artifact_mime(enum artifact_type t)
{
	return (unsigned)t < ART_NTYPES ? art_types[t].mime :
	    "application/octet-stream";
}

/* ---------------------------------------------------------------- sniff */

/*
 * Length of the well-formed UTF-8 sequence at p, 0 when the buffer ends
 * inside a sequence that could still be well-formed, -1 when ill-formed
 * (overlong, surrogate, past U+10FFFF, stray continuation) or NUL.
 */
static int
utf8_step(const uint8_t *p, size_t len)
{
	size_t	 n, bad;
	int	 cut;

	if ((n = utf8_next(p, len, &bad, &cut)) > 0)
		return (int)n;
	return cut ? 0 : -1;
}

/* 1 when p is UTF-8 without NUL; a cut-off last character is fine when the
 * buffer is only the start of the file. */
static int
utf8_text(const uint8_t *p, size_t len, int complete)
{
	size_t	 i = 0;
	int	 n;

	while (i < len) {
		if (p[i] >= 0x01 && p[i] < 0x80) {
			i++;
			continue;
		}
		if ((n = utf8_step(p + i, len - i)) == -1)
			return 0;
		if (n == 0)
			return !complete;
		i += (size_t)n;
	}
	return 1;
}

static int
is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static size_t
skip_space(const uint8_t *p, size_t len, size_t i)
{
	while (i < len && is_space(p[i]))
		i++;
	return i;
}

static size_t
skip_bom(const uint8_t *p, size_t len)
{
	return len >= sizeof(utf8_bom) &&
	    memcmp(p, utf8_bom, sizeof(utf8_bom)) == 0 ? sizeof(utf8_bom) : 0;
}

/* Does p[i..] start with s?  ASCII case folded when nocase. */
static int
at(const uint8_t *p, size_t len, size_t i, const char *s, int nocase)
{
	size_t	 n = strlen(s), k;
	uint8_t	 a, b;

	if (i > len || len - i < n)
		return 0;
	for (k = 0; k < n; k++) {
		a = p[i + k];
		b = (uint8_t)s[k];
		if (nocase && a >= 'A' && a <= 'Z')
			a = (uint8_t)(a - 'A' + 'a');
		if (a != b)
			return 0;
	}
	return 1;
}

/* The index just past the first `end` at or after i, or 0 when none. */
static size_t
past(const uint8_t *p, size_t len, size_t i, const char *end)
{
	const uint8_t	*q;

	if (i >= len)
		return 0;
	if ((q = memmem(p + i, len - i, end, strlen(end))) == NULL)
		return 0;
	return (size_t)(q - p) + strlen(end);
}

/* After "<!DOCTYPE": the '>' that closes it, stepping over an internal
 * subset in brackets. */
static size_t
past_doctype(const uint8_t *p, size_t len, size_t i)
{
	int	 depth = 0;

	for (; i < len; i++) {
		if (p[i] == '[')
			depth++;
		else if (p[i] == ']' && depth > 0)
			depth--;
		else if (p[i] == '>' && depth == 0)
			return i + 1;
	}
	return 0;
}

/* A tag name ends at whitespace, '>' or "/>"; "<svgx" is not "<svg". */
static int
name_ends(const uint8_t *p, size_t len, size_t i)
{
	return i < len && (is_space(p[i]) || p[i] == '>' || p[i] == '/');
}

/*
 * SVG: after an optional BOM, whitespace, processing instructions (the XML
 * declaration), comments and a doctype, the first element is <svg.  A
 * prolog longer than the window is not recognised.
 */
static int
sniff_svg(const uint8_t *p, size_t len)
{
	size_t	 i = skip_bom(p, len);

	for (;;) {
		i = skip_space(p, len, i);
		if (at(p, len, i, "<?", 0))
			i = past(p, len, i + 2, "?>");
		else if (at(p, len, i, "<!--", 0))
			i = past(p, len, i + 4, "-->");
		else if (at(p, len, i, "<!doctype", 1))
			i = past_doctype(p, len, i + 9);
		else
			break;
		if (i == 0)
			return 0;
	}
	return at(p, len, i, "<svg", 0) && name_ends(p, len, i + 4);
}

/* HTML: after an optional BOM, whitespace and comments, "<!DOCTYPE html"
 * or "<html", in any case. */
static int
sniff_html(const uint8_t *p, size_t len)
{
	size_t	 i = skip_bom(p, len), j;

	for (;;) {
		i = skip_space(p, len, i);
		if (!at(p, len, i, "<!--", 0))
			break;
		if ((i = past(p, len, i + 4, "-->")) == 0)
			return 0;
	}
	if (at(p, len, i, "<!doctype", 1)) {
		j = skip_space(p, len, i + 9);
		return j > i + 9 && at(p, len, j, "html", 1) &&
		    name_ends(p, len, j + 4);
	}
	return at(p, len, i, "<html", 1) && name_ends(p, len, i + 5);
}

/*
 * JSON: the first non-space byte opens an object or array; when the buffer
 * is the whole file (and not too big to parse) jansson must accept all of
 * it.
 */
static int
sniff_json(const uint8_t *p, size_t len, int complete)
{
	json_error_t	 e;
	json_t		*j;
	size_t		 i = skip_space(p, len, 0);

	if (i >= len || (p[i] != '{' && p[i] != '['))
		return 0;
	if (!complete || len > ARTIFACT_JSON_PARSE_MAX)
		return 1;
	if ((j = json_loadb((const char *)p, len, 0, &e)) == NULL)
		return 0;
	json_decref(j);
	return 1;
}

/*
 * CSV, kept simple: within the first ARTIFACT_SNIFF_LEN bytes, records end
 * at a newline outside double quotes (a quote toggles quoting, so "" inside
 * a quoted field nets out); empty records are ignored; there are at least
 * CSV_RECORDS_MIN others and every one has the same number, at least one,
 * of commas outside quotes.  The last record counts only when it is known
 * to be whole: the window is the entire file and it closes its quotes.
 */
static int
sniff_csv(const uint8_t *p, size_t len, int complete)
{
	size_t	 wl = len < ARTIFACT_SNIFF_LEN ? len : ARTIFACT_SNIFF_LEN;
	size_t	 i, start = 0, end, records = 0, commas = 0, want = 0;
	int	 quoted = 0, whole = complete && len <= ARTIFACT_SNIFF_LEN;

	for (i = 0; i <= wl; i++) {
		if (i < wl) {
			if (p[i] == '"')
				quoted = !quoted;
			else if (p[i] == ',' && !quoted)
				commas++;
			if (p[i] != '\n' || quoted)
				continue;
		} else if (!whole)
			break;
		else if (quoted)
			return 0;
		end = i;
		if (end > start && p[end - 1] == '\r')
			end--;
		if (end > start) {
			if (commas == 0 || (records > 0 && commas != want))
				return 0;
			want = commas;
			records++;
		}
		commas = 0;
		start = i + 1;
	}
	return records >= CSV_RECORDS_MIN;
}

int
artifact_sniff(const uint8_t *p, size_t len, int complete)
{
	if (len >= sizeof(png_magic) &&
	    memcmp(p, png_magic, sizeof(png_magic)) == 0)
		return ART_PNG;
	if (len >= sizeof(jpeg_magic) &&
	    memcmp(p, jpeg_magic, sizeof(jpeg_magic)) == 0)
		return ART_JPEG;
	/* Everything else is text: every byte given must be UTF-8. */
	if (!utf8_text(p, len, complete))
		return -1;
	if (sniff_svg(p, len < ARTIFACT_SNIFF_LEN ? len : ARTIFACT_SNIFF_LEN))
		return ART_SVG;
	if (sniff_html(p, len < ARTIFACT_SNIFF_LEN ? len : ARTIFACT_SNIFF_LEN))
		return ART_HTML;
	if (sniff_json(p, len, complete))
		return ART_JSON;
	if (sniff_csv(p, len, complete))
		return ART_CSV;
	return ART_TXT;
}

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
	if (json_array_append_new(w->skipped, json_pack("{s:s, s:s}",
	    "name", name, "reason", reason)) == -1)
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
	/* The type comes from exactly the bytes that will be copied. */
	if ((t = artifact_sniff(data, len, 1)) == -1) {
		skip(w, rel, "unrecognised content");
		goto out;
	}
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
		json_array_append_new(w.skipped, json_pack("{s:s, s:s}",
		    "name", "", "reason", reason));
	}
	*found = w.found;
	*skipped = w.skipped;
	return 0;
fail:
	json_decref(w.found);
	json_decref(w.skipped);
	return -1;
}
