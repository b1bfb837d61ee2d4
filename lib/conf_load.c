/*
 * Policy files: YAML read with libyaml's event parser into a jansson tree,
 * with each node's line and column kept aside for error messages.  The
 * file's bytes are untrusted: size, depth and node count are capped before
 * anything grows, and what YAML allows but a policy never needs (aliases,
 * anchors, custom tags, several documents) is refused.  Text from the file
 * reaches a message only through conf_quote().
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "conf.h"
#include "conf_int.h"
#include "hash.h"

#define CONF_POS_MIN	64	/* first size of the position table */
#define CONF_CORE_TAG	"tag:yaml.org,2002:"

/*
 * Where a node starts.  jansson's null, true and false are singletons
 * shared by every tree, so their addresses say nothing; each mapping member
 * is therefore also recorded under the address of its key string, which
 * jansson keeps in place for the object's lifetime (the same fact that
 * json_object_key_to_iter() relies on).
 */
struct conf_pos {
	const void	*addr;
	unsigned	 line, column;	/* the node, or the member's value */
	unsigned	 kline, kcolumn; /* the member's key; 0: a node */
};

struct conf_doc {
	char		*name;
	json_t		*root;
	char		 sha256[SHA256_HEX + 1];	/* "" until asked for */
	char		*bytes;		/* the file, kept for conf_doc_sha256 */
	size_t		 len;
	struct conf_pos	*pos;		/* open addressing, linear probing */
	size_t		 npos;
	size_t		 poscap;	/* a power of two; 0 until first use */
};

enum conf_tag {
	TAG_NONE, TAG_STR, TAG_INT, TAG_BOOL, TAG_NULL, TAG_FLOAT, TAG_MAP,
	TAG_SEQ
};
static const char *const conf_tag_names[] = {
	"", "str", "int", "bool", "null", "float", "map", "seq", NULL
};

struct conf_frame {
	json_t		*node;	/* borrowed: its parent or the doc owns it */
	char		*key;	/* a mapping's key awaiting its value */
	unsigned	 kline, kcolumn;
};

struct conf_loader {
	struct conf_doc		*doc;
	const char		*buf;
	size_t			 len;
	struct conf_frame	 stack[CONF_DEPTH_MAX];
	int			 depth;
	size_t			 nodes;
	int			 ndocs;
	char			*err;
	size_t			 errlen;
};

/* ---------------------------------------------------------------- positions */

static size_t
pos_slot(const void *addr, size_t cap)
{
	uint64_t	 h = (uint64_t)(uintptr_t)addr * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 32) & (cap - 1);
}

static struct conf_pos *
pos_find(const struct conf_doc *doc, const void *addr)
{
	size_t	 i;

	if (doc == NULL || doc->poscap == 0 || addr == NULL)
		return NULL;
	/* Terminates: the table is never more than half full. */
	for (i = pos_slot(addr, doc->poscap);;
	    i = (i + 1) & (doc->poscap - 1)) {
		if (doc->pos[i].addr == addr)
			return &doc->pos[i];
		if (doc->pos[i].addr == NULL)
			return NULL;
	}
}

static void
pos_insert(struct conf_pos *tab, size_t cap, const struct conf_pos *p)
{
	size_t	 i;

	for (i = pos_slot(p->addr, cap); tab[i].addr != NULL &&
	    tab[i].addr != p->addr; i = (i + 1) & (cap - 1))
		;
	tab[i] = *p;
}

/* The table's size follows the node count, which CONF_NODES_MAX caps. */
static int
pos_add(struct conf_doc *doc, const void *addr, unsigned line,
    unsigned column, unsigned kline, unsigned kcolumn)
{
	struct conf_pos	 p = { addr, line, column, kline, kcolumn };
	struct conf_pos	*tab;
	size_t		 cap, i;

	if ((doc->npos + 1) * 2 > doc->poscap) {
		cap = doc->poscap ? doc->poscap * 2 : CONF_POS_MIN;
		if ((tab = calloc(cap, sizeof(*tab))) == NULL)
			return -1;
		for (i = 0; i < doc->poscap; i++)
			if (doc->pos[i].addr != NULL)
				pos_insert(tab, cap, &doc->pos[i]);
		free(doc->pos);
		doc->pos = tab;
		doc->poscap = cap;
	}
	if (pos_find(doc, addr) == NULL)
		doc->npos++;
	pos_insert(doc->pos, doc->poscap, &p);
	return 0;
}

/* ---------------------------------------------------------------- errors */

/* The position libyaml would give the byte at off: lines and characters. */
static void
offset_position(const char *buf, size_t len, size_t off, unsigned *line,
    unsigned *column)
{
	unsigned char	 c;
	size_t		 i;

	*line = *column = 1;
	if (off > len)
		off = len;
	for (i = 0; i < off; i++) {
		c = (unsigned char)buf[i];
		if (c == '\r' && i + 1 < len && buf[i + 1] == '\n')
			continue;
		if (c == '\n' || c == '\r') {
			(*line)++;
			*column = 1;
		} else if ((c & 0xc0) != 0x80)	/* not a continuation byte */
			(*column)++;
	}
}

/*
 * Where a reader error's character starts.  For a bad trailing octet
 * libyaml gives that octet's offset; the character begins at its lead byte,
 * at most three bytes earlier.
 */
static size_t
reader_error_start(const char *buf, size_t len, const yaml_parser_t *p)
{
	size_t		 off = p->problem_offset, j;
	unsigned char	 c;

	if (off > len || p->problem == NULL ||
	    strcmp(p->problem, "invalid trailing UTF-8 octet") != 0)
		return off;
	for (j = off; j > 0 && off - j < 3; j--) {
		c = (unsigned char)buf[j - 1];
		if ((c & 0xc0) == 0xc0)
			return j - 1;
		if ((c & 0xc0) != 0x80)
			break;
	}
	return off;
}

static void load_error(struct conf_loader *, unsigned, unsigned,
    const char *, ...) __attribute__((format(printf, 4, 5)));

/* The one message a failed load leaves: "name:line:column: reason". */
static void
load_error(struct conf_loader *l, unsigned line, unsigned column,
    const char *fmt, ...)
{
	char	 msg[CONF_ERROR_LEN];
	va_list	 ap;

	if (l->err == NULL || l->errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(l->err, l->errlen, "%s:%u:%u: %s", l->doc->name, line,
		    column, msg);
	else
		snprintf(l->err, l->errlen, "%s: %s", l->doc->name, msg);
}

static void
load_yaml_error(struct conf_loader *l, const yaml_parser_t *p)
{
	const char	*problem = p->problem ? p->problem : "syntax error";
	unsigned	 line, column;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		load_error(l, 0, 0, "out of memory");
		break;
	case YAML_READER_ERROR:
		/* Bad encoding: libyaml gives a byte offset, not a mark. */
		offset_position(l->buf, l->len, reader_error_start(l->buf,
		    l->len, p), &line, &column);
		load_error(l, line, column, "%s", problem);
		break;
	default:
		line = (unsigned)p->problem_mark.line + 1;
		column = (unsigned)p->problem_mark.column + 1;
		if (p->context != NULL)
			load_error(l, line, column, "%s (%s at line %u)",
			    problem, p->context,
			    (unsigned)p->context_mark.line + 1);
		else
			load_error(l, line, column, "%s", problem);
		break;
	}
}

/* ---------------------------------------------------------------- scalars */

static int
load_string(struct conf_loader *l, const char *s, size_t n, unsigned line,
    unsigned column, json_t **out)
{
	/* libyaml has checked the UTF-8; json_stringn checks it again. */
	if ((*out = json_stringn(s, n)) == NULL) {
		load_error(l, line, column, "invalid UTF-8 or out of memory");
		return -1;
	}
	return 0;
}

/* The value of a scalar that is not a mapping key; see conf.h for the rules. */
static int
load_resolve(struct conf_loader *l, const char *s, size_t n, int plain,
    enum conf_tag tag, unsigned line, unsigned column, json_t **out)
{
	char		 q[CONF_QUOTE_LEN];
	const char	*why = NULL;
	int64_t		 i;
	double		 d;
	int		 b, r;

	switch (tag) {
	case TAG_NONE:
		if (!plain)
			return load_string(l, s, n, line, column, out);
		if (conf_text_null(s, n)) {
			*out = json_null();
			return 0;
		}
		if (conf_text_bool(s, n, &b)) {
			*out = json_boolean(b);
			return 0;
		}
		if ((r = conf_text_int(s, n, &i, &why)) == 1)
			goto integer;
		if (r == 0 && (r = conf_text_real(s, n, &d, &why)) == 1)
			goto real;
		if (r == -1)
			goto bad;
		return load_string(l, s, n, line, column, out);
	case TAG_STR:
		return load_string(l, s, n, line, column, out);
	case TAG_NULL:
		if (conf_text_null(s, n)) {
			*out = json_null();
			return 0;
		}
		break;
	case TAG_BOOL:
		if (conf_text_bool(s, n, &b)) {
			*out = json_boolean(b);
			return 0;
		}
		break;
	case TAG_INT:
		if ((r = conf_text_int(s, n, &i, &why)) == 1)
			goto integer;
		if (r == -1)
			goto bad;
		break;
	case TAG_FLOAT:
		if ((r = conf_text_real(s, n, &d, &why)) == 1)
			goto real;
		if (r == 0 && (r = conf_text_int(s, n, &i, &why)) == 1) {
			d = (double)i;
			goto real;
		}
		if (r == -1)
			goto bad;
		break;
	case TAG_MAP:
	case TAG_SEQ:
		load_error(l, line, column,
		    "tag !!%s cannot be used on a scalar", conf_tag_names[tag]);
		return -1;
	}
	conf_quote(q, s, n);
	load_error(l, line, column, "'%s' is not a valid !!%s", q,
	    conf_tag_names[tag]);
	return -1;
 integer:
	if ((*out = json_integer(i)) == NULL)
		goto oom;
	return 0;
 real:
	if ((*out = json_real(d)) == NULL)
		goto oom;
	return 0;
 bad:
	conf_quote(q, s, n);
	load_error(l, line, column, "%s: '%s'", why, q);
	return -1;
 oom:
	load_error(l, line, column, "out of memory");
	return -1;
}

/* ---------------------------------------------------------------- events */

static int
load_tag(struct conf_loader *l, const yaml_char_t *tag, unsigned line,
    unsigned column, enum conf_tag *out)
{
	const char	*t = (const char *)tag;
	char		 q[CONF_QUOTE_LEN];
	size_t		 plen = strlen(CONF_CORE_TAG);
	int		 i;

	*out = TAG_NONE;
	if (t == NULL)
		return 0;
	if (strncmp(t, CONF_CORE_TAG, plen) == 0)
		for (i = TAG_STR; conf_tag_names[i] != NULL; i++)
			if (strcmp(t + plen, conf_tag_names[i]) == 0) {
				*out = (enum conf_tag)i;
				return 0;
			}
	conf_quote(q, t, strlen(t));
	load_error(l, line, column, "tag '%s' is not supported (only the YAML "
	    "core tags are)", q);
	return -1;
}

static int
load_count(struct conf_loader *l, const yaml_char_t *anchor, unsigned line,
    unsigned column)
{
	if (anchor != NULL) {
		load_error(l, line, column,
		    "aliases and anchors are not supported");
		return -1;
	}
	if (++l->nodes > CONF_NODES_MAX) {
		load_error(l, line, column, "more than %d nodes",
		    CONF_NODES_MAX);
		return -1;
	}
	return 0;
}

static struct conf_frame *
load_top(struct conf_loader *l)
{
	return l->depth > 0 ? &l->stack[l->depth - 1] : NULL;
}

/* Hangs v (ours to give) under the current collection, or makes it the root. */
static int
load_attach(struct conf_loader *l, json_t *v, unsigned line, unsigned column)
{
	struct conf_frame	*top = load_top(l);
	void			*it;

	if (!json_is_null(v) && !json_is_boolean(v) &&
	    pos_add(l->doc, v, line, column, 0, 0) == -1)
		goto oom;
	if (top == NULL) {
		/* A second root needs a second document, refused earlier. */
		json_decref(l->doc->root);
		l->doc->root = v;
		return 0;
	}
	if (json_is_array(top->node)) {
		if (json_array_append_new(top->node, v) == -1)
			goto oom_owned;
		return 0;
	}
	if (json_object_set_new(top->node, top->key, v) == -1)
		goto oom_owned;
	if ((it = json_object_iter_at(top->node, top->key)) == NULL ||
	    pos_add(l->doc, json_object_iter_key(it), line, column,
	    top->kline, top->kcolumn) == -1)
		goto oom_owned;
	free(top->key);
	top->key = NULL;
	return 0;
 oom:
	json_decref(v);
 oom_owned:
	load_error(l, line, column, "out of memory");
	return -1;
}

static int
load_key(struct conf_loader *l, struct conf_frame *top, const char *s,
    size_t n, enum conf_tag tag, unsigned line, unsigned column)
{
	const struct conf_pos	*first;
	char			 q[CONF_QUOTE_LEN];
	void			*it;

	if (tag != TAG_NONE && tag != TAG_STR) {
		load_error(l, line, column, "mapping keys must be strings, "
		    "not !!%s", conf_tag_names[tag]);
		return -1;
	}
	if (n == 0) {
		load_error(l, line, column, "empty mapping key");
		return -1;
	}
	if ((it = json_object_iter_at(top->node, s)) != NULL) {
		first = pos_find(l->doc, json_object_iter_key(it));
		conf_quote(q, s, n);
		load_error(l, line, column, "duplicate key '%s' (first at line "
		    "%u, again at line %u)", q, first ? first->kline : 0, line);
		return -1;
	}
	if ((top->key = malloc(n + 1)) == NULL) {
		load_error(l, line, column, "out of memory");
		return -1;
	}
	memcpy(top->key, s, n);
	top->key[n] = '\0';
	top->kline = line;
	top->kcolumn = column;
	return 0;
}

static int
load_scalar(struct conf_loader *l, const yaml_event_t *ev, unsigned line,
    unsigned column)
{
	const char		*s = (const char *)ev->data.scalar.value;
	size_t			 n = ev->data.scalar.length;
	struct conf_frame	*top = load_top(l);
	enum conf_tag		 tag;
	json_t			*v;

	if (load_count(l, ev->data.scalar.anchor, line, column) == -1 ||
	    load_tag(l, ev->data.scalar.tag, line, column, &tag) == -1)
		return -1;
	/* Only escapes get here ("\0"): the raw input was checked for NUL. */
	if (memchr(s, '\0', n) != NULL) {
		load_error(l, line, column, "NUL character in a scalar");
		return -1;
	}
	if (top != NULL && json_is_object(top->node) && top->key == NULL)
		return load_key(l, top, s, n, tag, line, column);
	if (load_resolve(l, s, n, ev->data.scalar.style ==
	    YAML_PLAIN_SCALAR_STYLE, tag, line, column, &v) == -1)
		return -1;
	return load_attach(l, v, line, column);
}

static int
load_open(struct conf_loader *l, const yaml_char_t *anchor,
    const yaml_char_t *tagstr, int is_map, unsigned line, unsigned column)
{
	struct conf_frame	*top = load_top(l);
	const char		*what = is_map ? "mapping" : "sequence";
	enum conf_tag		 tag;
	json_t			*v;

	if (load_count(l, anchor, line, column) == -1 ||
	    load_tag(l, tagstr, line, column, &tag) == -1)
		return -1;
	if (tag != TAG_NONE && tag != (is_map ? TAG_MAP : TAG_SEQ)) {
		load_error(l, line, column, "tag !!%s cannot be used on a %s",
		    conf_tag_names[tag], what);
		return -1;
	}
	if (top != NULL && json_is_object(top->node) && top->key == NULL) {
		load_error(l, line, column, "mapping keys must be strings, "
		    "not a %s", what);
		return -1;
	}
	if (l->depth >= CONF_DEPTH_MAX) {
		load_error(l, line, column, "nested deeper than %d levels",
		    CONF_DEPTH_MAX);
		return -1;
	}
	if ((v = is_map ? json_object() : json_array()) == NULL) {
		load_error(l, line, column, "out of memory");
		return -1;
	}
	if (load_attach(l, v, line, column) == -1)
		return -1;
	top = &l->stack[l->depth++];
	top->node = v;
	top->key = NULL;
	return 0;
}

/* 1 at the end of the stream, 0 to go on, -1 after an error. */
static int
load_event(struct conf_loader *l, const yaml_event_t *ev)
{
	unsigned	 line = (unsigned)ev->start_mark.line + 1;
	unsigned	 column = (unsigned)ev->start_mark.column + 1;

	switch (ev->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
		return 0;
	case YAML_STREAM_END_EVENT:
		return 1;
	case YAML_DOCUMENT_START_EVENT:
		if (++l->ndocs > 1) {
			load_error(l, line, column,
			    "multiple documents are not supported");
			return -1;
		}
		return 0;
	case YAML_ALIAS_EVENT:
		load_error(l, line, column,
		    "aliases and anchors are not supported");
		return -1;
	case YAML_SCALAR_EVENT:
		return load_scalar(l, ev, line, column);
	case YAML_SEQUENCE_START_EVENT:
		return load_open(l, ev->data.sequence_start.anchor,
		    ev->data.sequence_start.tag, 0, line, column);
	case YAML_MAPPING_START_EVENT:
		return load_open(l, ev->data.mapping_start.anchor,
		    ev->data.mapping_start.tag, 1, line, column);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (l->depth > 0) {
			l->depth--;
			free(l->stack[l->depth].key);
			l->stack[l->depth].key = NULL;
		}
		return 0;
	default:
		break;
	}
	load_error(l, line, column, "unexpected YAML event %d", (int)ev->type);
	return -1;
}

static int
load_parse(struct conf_loader *l)
{
	yaml_parser_t	 parser;
	yaml_event_t	 ev;
	int		 r = 0;

	if (!yaml_parser_initialize(&parser)) {
		load_error(l, 0, 0, "out of memory");
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)l->buf,
	    l->len);
	/* No guessing from a BOM: a policy is UTF-8, never UTF-16. */
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	while (r == 0) {
		if (!yaml_parser_parse(&parser, &ev)) {
			load_yaml_error(l, &parser);
			r = -1;
			break;
		}
		r = load_event(l, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return r == 1 ? 0 : -1;
}

/* ---------------------------------------------------------------- documents */

struct conf_doc *
conf_doc_load_buf(const char *name, const char *buf, size_t len, char *err,
    size_t errlen)
{
	struct conf_loader	 l;
	struct conf_doc		*doc;
	const char		*nul;
	unsigned		 line, column;
	int			 i;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (name == NULL)
		name = "<input>";
	if (buf == NULL)
		len = 0;
	if ((doc = calloc(1, sizeof(*doc))) == NULL ||
	    (doc->name = strdup(name)) == NULL) {
		free(doc);
		if (err != NULL)
			snprintf(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	memset(&l, 0, sizeof(l));
	l.doc = doc;
	l.buf = buf != NULL ? buf : "";
	l.len = len;
	l.err = err;
	l.errlen = errlen;

	if (len > CONF_FILE_MAX) {
		load_error(&l, 0, 0, "file too large (%zu bytes, limit %d)",
		    len, CONF_FILE_MAX);
		goto fail;
	}
	if ((nul = memchr(l.buf, '\0', len)) != NULL) {
		offset_position(l.buf, len, (size_t)(nul - l.buf), &line,
		    &column);
		load_error(&l, line, column, "NUL byte in input");
		goto fail;
	}
	/* Hashed on request: OpenSSL's first digest costs a millisecond. */
	if ((doc->bytes = malloc(len + 1)) == NULL) {
		load_error(&l, 0, 0, "out of memory");
		goto fail;
	}
	memcpy(doc->bytes, l.buf, len);
	doc->len = len;
	if (load_parse(&l) == -1)
		goto fail;
	/* No document, or an empty one, is an empty policy. */
	if (doc->root == NULL || json_is_null(doc->root)) {
		if ((doc->root = json_object()) == NULL ||
		    pos_add(doc, doc->root, 1, 1, 0, 0) == -1) {
			load_error(&l, 0, 0, "out of memory");
			goto fail;
		}
	}
	return doc;
 fail:
	for (i = 0; i < CONF_DEPTH_MAX; i++)
		free(l.stack[i].key);
	conf_doc_free(doc);
	return NULL;
}

struct conf_doc *
conf_doc_load_file(const char *path, char *err, size_t errlen)
{
	struct conf_doc	*doc = NULL;
	struct stat	 st;
	char		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 n;
	int		 fd;

	if (err == NULL)
		errlen = 0;
	/* O_NONBLOCK: a FIFO in the policy directory must not hang us. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) ==
	    -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: fstat: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_size > CONF_FILE_MAX) {
		snprintf(err, errlen, "%s: file too large (%jd bytes, "
		    "limit %d)", path, (intmax_t)st.st_size, CONF_FILE_MAX);
		goto out;
	}
	/* One byte over the cap tells a file that grew after fstat. */
	if ((buf = malloc(CONF_FILE_MAX + 1)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	while (len < CONF_FILE_MAX + 1) {
		n = read(fd, buf + len, CONF_FILE_MAX + 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "%s: read: %s", path,
			    strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	/* load_buf refuses len > CONF_FILE_MAX with the right message. */
	doc = conf_doc_load_buf(path, buf, len, err, errlen);
 out:
	free(buf);
	close(fd);
	return doc;
}

void
conf_doc_free(struct conf_doc *doc)
{
	if (doc == NULL)
		return;
	json_decref(doc->root);
	free(doc->pos);
	free(doc->name);
	free(doc->bytes);
	free(doc);
}

json_t *
conf_doc_root(const struct conf_doc *doc)
{
	return doc->root;
}

const char *
conf_doc_name(const struct conf_doc *doc)
{
	return doc->name;
}

const char *
conf_doc_sha256(struct conf_doc *doc)
{
	if (doc->sha256[0] == '\0')
		sha256_hex(doc->bytes, doc->len, doc->sha256);
	return doc->sha256;
}

int
conf_doc_where(const struct conf_doc *doc, const json_t *node, unsigned *line,
    unsigned *column)
{
	const struct conf_pos	*p;

	if ((p = pos_find(doc, node)) == NULL || p->kline != 0)
		return -1;
	if (line != NULL)
		*line = p->line;
	if (column != NULL)
		*column = p->column;
	return 0;
}

int
conf_doc_member_where(const struct conf_doc *doc, const char *key,
    unsigned *line, unsigned *column)
{
	const struct conf_pos	*p;

	*line = *column = 0;
	if ((p = pos_find(doc, key)) == NULL)
		return -1;
	*line = p->line;
	*column = p->column;
	return 0;
}
