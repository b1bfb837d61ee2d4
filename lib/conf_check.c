/*
 * Validation of a loaded policy: a context that collects errors as
 * "name:line:column: message", and typed getters over the tree.  Trusts the
 * tree's shape (conf_load.c built it) but not its text: keys and strings
 * from the file reach a message only through conf_quote().
 */
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "conf_int.h"

#define CONF_LIST_LEN	256	/* "a, b, c" in messages */

/* ---------------------------------------------------------------- messages */

/*
 * Copies untrusted text into a message: printable ASCII as is, anything
 * else (control bytes, terminal escapes, all of UTF-8) as \xNN, and no
 * more than CONF_QUOTE_MAX bytes of it.
 */
void
conf_quote(char out[CONF_QUOTE_LEN], const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t		 i, o = 0;
	unsigned char	 c;

	for (i = 0; i < n && i < CONF_QUOTE_MAX; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')
			out[o++] = (char)c;
		else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 0xf];
		}
	}
	if (i < n) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* "a, b, c", cut short (never mid-name) when it does not fit. */
static void
join_list(char *out, size_t outlen, const char *const list[])
{
	size_t	 off = 0, i;
	int	 n;

	out[0] = '\0';
	for (i = 0; list != NULL && list[i] != NULL; i++) {
		n = snprintf(out + off, outlen - off, "%s%s", i ? ", " : "",
		    list[i]);
		if (n < 0 || (size_t)n >= outlen - off) {
			out[off] = '\0';
			break;
		}
		off += (size_t)n;
	}
}

/* ------------------------------------------------------------- validation */

static const char *
type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "a mapping";
	case JSON_ARRAY:
		return "a sequence";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

void
conf_ctx_init(struct conf_ctx *ctx, const struct conf_doc *doc)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->doc = doc;
}

static void ctx_verror(struct conf_ctx *, unsigned, unsigned, const char *,
    va_list) __attribute__((format(printf, 4, 0)));
static void ctx_error(struct conf_ctx *, unsigned, unsigned, const char *,
    ...) __attribute__((format(printf, 4, 5)));

/* line 0: no position known. */
static void
ctx_verror(struct conf_ctx *ctx, unsigned line, unsigned column,
    const char *fmt, va_list ap)
{
	const char	*name = ctx->doc != NULL ? conf_doc_name(ctx->doc) :
	    "config";
	char		*slot;
	int		 n;

	if (ctx->nerrors < UINT_MAX)
		ctx->nerrors++;
	if (ctx->nerrors > CONF_ERRORS_MAX)
		return;
	slot = ctx->errors[ctx->nerrors - 1];
	if (line > 0)
		n = snprintf(slot, CONF_ERROR_LEN, "%s:%u:%u: ", name, line,
		    column);
	else
		n = snprintf(slot, CONF_ERROR_LEN, "%s: ", name);
	if (n < 0 || n >= CONF_ERROR_LEN - 1)
		return;		/* a name that long leaves no room */
	vsnprintf(slot + n, CONF_ERROR_LEN - (size_t)n, fmt, ap);
}

static void
ctx_error(struct conf_ctx *ctx, unsigned line, unsigned column,
    const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	ctx_verror(ctx, line, column, fmt, ap);
	va_end(ap);
}

void
conf_error(struct conf_ctx *ctx, const json_t *node, const char *fmt, ...)
{
	unsigned	 line = 0, column = 0;
	va_list		 ap;

	if (ctx->doc != NULL)
		(void)conf_doc_where(ctx->doc, node, &line, &column);
	va_start(ap, fmt);
	ctx_verror(ctx, line, column, fmt, ap);
	va_end(ap);
}

/*
 * The value under key, and where it starts; NULL when obj is not a mapping,
 * or the key is missing or null ("key: ~" asks for the default).
 */
static json_t *
member(const struct conf_ctx *ctx, const json_t *obj, const char *key,
    unsigned *line, unsigned *column)
{
	json_t	*v;
	void	*it;

	*line = *column = 0;
	if (!json_is_object(obj) || key == NULL)
		return NULL;
	/* jansson's iterator API is not const; nothing is modified. */
	if ((it = json_object_iter_at((json_t *)obj, key)) == NULL)
		return NULL;
	v = json_object_iter_value(it);
	if (v == NULL || json_is_null(v))
		return NULL;
	(void)conf_doc_member_where(ctx->doc, json_object_iter_key(it), line,
	    column);
	return v;
}

int
conf_check_keys(struct conf_ctx *ctx, const json_t *obj,
    const char *const allowed[])
{
	char		 list[CONF_LIST_LEN], q[CONF_QUOTE_LEN];
	const char	*key;
	unsigned	 line, column;
	json_t		*v;
	size_t		 i;
	int		 r = 0;

	/* Not a mapping: the caller's type check reports that, once. */
	if (!json_is_object(obj))
		return 0;
	join_list(list, sizeof(list), allowed);
	json_object_foreach((json_t *)obj, key, v) {
		for (i = 0; allowed != NULL && allowed[i] != NULL; i++)
			if (strcmp(allowed[i], key) == 0)
				break;
		if (allowed != NULL && allowed[i] != NULL)
			continue;
		/* The value's position, as the getters report it. */
		(void)conf_doc_member_where(ctx->doc, key, &line, &column);
		conf_quote(q, key, strlen(key));
		if (list[0] != '\0')
			ctx_error(ctx, line, column, "unknown key '%s' "
			    "(expected one of: %s)", q, list);
		else
			ctx_error(ctx, line, column, "unknown key '%s' "
			    "(no keys are allowed here)", q);
		r = -1;
	}
	return r;
}

int
conf_expect_object(struct conf_ctx *ctx, const json_t *node, const char *what)
{
	if (json_is_object(node))
		return 0;
	if (node == NULL)
		ctx_error(ctx, 0, 0, "%s: missing", what);
	else
		conf_error(ctx, node, "%s: expected a mapping, got %s", what,
		    type_name(node));
	return -1;
}

/* member() of one type: 1 with *v, 0 absent, -1 after an error. */
static int
member_typed(struct conf_ctx *ctx, const json_t *obj, const char *key,
    json_type want, json_t **v, unsigned *line, unsigned *column)
{
	const char	*what;

	if ((*v = member(ctx, obj, key, line, column)) == NULL)
		return 0;
	if (json_typeof(*v) == want ||
	    (want == JSON_TRUE && json_is_boolean(*v)))
		return 1;
	switch (want) {
	case JSON_OBJECT:
		what = "a mapping";
		break;
	case JSON_ARRAY:
		what = "a sequence";
		break;
	case JSON_INTEGER:
		what = "an integer";
		break;
	case JSON_TRUE:
		what = "a boolean (true or false)";
		break;
	default:
		what = "a string";
		break;
	}
	ctx_error(ctx, *line, *column, "key '%s': expected %s, got %s", key,
	    what, type_name(*v));
	return -1;
}

int
conf_get_object(struct conf_ctx *ctx, const json_t *obj, const char *key,
    json_t **out)
{
	unsigned	 line, column;
	json_t		*v;
	int		 r;

	if ((r = member_typed(ctx, obj, key, JSON_OBJECT, &v, &line,
	    &column)) == 1)
		*out = v;
	return r;
}

int
conf_get_array(struct conf_ctx *ctx, const json_t *obj, const char *key,
    json_t **out)
{
	unsigned	 line, column;
	json_t		*v;
	int		 r;

	if ((r = member_typed(ctx, obj, key, JSON_ARRAY, &v, &line,
	    &column)) == 1)
		*out = v;
	return r;
}

int
conf_get_string(struct conf_ctx *ctx, const json_t *obj, const char *key,
    const char **out)
{
	unsigned	 line, column;
	json_t		*v;
	int		 r;

	if ((r = member_typed(ctx, obj, key, JSON_STRING, &v, &line,
	    &column)) == 1)
		*out = json_string_value(v);
	return r;
}

int
conf_get_bool(struct conf_ctx *ctx, const json_t *obj, const char *key,
    int *out)
{
	unsigned	 line, column;
	json_t		*v;
	int		 r;

	if ((r = member_typed(ctx, obj, key, JSON_TRUE, &v, &line,
	    &column)) == 1)
		*out = json_is_true(v);
	return r;
}

int
conf_get_int(struct conf_ctx *ctx, const json_t *obj, const char *key,
    int64_t min, int64_t max, int64_t *out)
{
	unsigned	 line, column;
	json_t		*v;
	int64_t		 i;
	int		 r;

	if ((r = member_typed(ctx, obj, key, JSON_INTEGER, &v, &line,
	    &column)) != 1)
		return r;
	i = (int64_t)json_integer_value(v);
	if (i < min || i > max) {
		ctx_error(ctx, line, column, "key '%s': %" PRId64 " is out of "
		    "range (%" PRId64 " to %" PRId64 ")", key, i, min, max);
		return -1;
	}
	*out = i;
	return 1;
}

int
conf_get_enum(struct conf_ctx *ctx, const json_t *obj, const char *key,
    const char *const choices[], int *out)
{
	char		 list[CONF_LIST_LEN], q[CONF_QUOTE_LEN];
	unsigned	 line, column;
	const char	*s;
	json_t		*v;
	int		 i;

	if ((v = member(ctx, obj, key, &line, &column)) == NULL)
		return 0;
	join_list(list, sizeof(list), choices);
	if (!json_is_string(v)) {
		ctx_error(ctx, line, column, "key '%s': expected one of: %s; "
		    "got %s", key, list, type_name(v));
		return -1;
	}
	s = json_string_value(v);
	for (i = 0; choices != NULL && choices[i] != NULL; i++)
		if (strcmp(choices[i], s) == 0) {
			*out = i;
			return 1;
		}
	conf_quote(q, s, json_string_length(v));
	ctx_error(ctx, line, column, "key '%s': unknown value '%s' (expected "
	    "one of: %s)", key, q, list);
	return -1;
}

/*
 * "512", "512B", "64K", "8M", "8MiB", "1G", "2T" (powers of 1024, unit
 * letters in either case).  0 and *out, or -1 with *why.
 */
static int
parse_size(const char *s, uint64_t *out, const char **why)
{
	uint64_t	 n = 0;
	unsigned	 shift = 0, d;

	if (!conf_is_digit(*s)) {
		*why = "expected digits, then K, M, G or T";
		return -1;
	}
	for (; conf_is_digit(*s); s++) {
		d = (unsigned)(*s - '0');
		if (n > (UINT64_MAX - d) / 10) {
			*why = "too large";
			return -1;
		}
		n = n * 10 + d;
	}
	switch (*s) {
	case 'K': case 'k':
		shift = 10;
		break;
	case 'M': case 'm':
		shift = 20;
		break;
	case 'G': case 'g':
		shift = 30;
		break;
	case 'T': case 't':
		shift = 40;
		break;
	}
	if (shift > 0)
		s++;
	if (shift > 0 && s[0] == 'i' && s[1] == 'B')
		s += 2;
	else if (s[0] == 'B')
		s++;
	if (*s == '.') {
		*why = "fractions are not supported (use a smaller unit)";
		return -1;
	}
	if (*s != '\0') {
		*why = "unknown unit (expected K, M, G or T)";
		return -1;
	}
	if (n > (UINT64_MAX >> shift)) {
		*why = "too large";
		return -1;
	}
	*out = n << shift;
	return 0;
}

int
conf_get_size(struct conf_ctx *ctx, const json_t *obj, const char *key,
    uint64_t min, uint64_t max, uint64_t *out)
{
	char		 q[CONF_QUOTE_LEN];
	const char	*why;
	unsigned	 line, column;
	uint64_t	 n;
	json_t		*v;

	if ((v = member(ctx, obj, key, &line, &column)) == NULL)
		return 0;
	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0) {
			ctx_error(ctx, line, column, "key '%s': a size cannot "
			    "be negative", key);
			return -1;
		}
		n = (uint64_t)json_integer_value(v);
	} else if (json_is_string(v)) {
		if (parse_size(json_string_value(v), &n, &why) == -1) {
			conf_quote(q, json_string_value(v),
			    json_string_length(v));
			ctx_error(ctx, line, column, "key '%s': invalid size "
			    "'%s': %s", key, q, why);
			return -1;
		}
	} else {
		ctx_error(ctx, line, column, "key '%s': expected a size such "
		    "as 4096, 64K or 8M, got %s", key, type_name(v));
		return -1;
	}
	if (n < min || n > max) {
		ctx_error(ctx, line, column, "key '%s': size %" PRIu64
		    " is out of range (%" PRIu64 " to %" PRIu64 " bytes)", key,
		    n, min, max);
		return -1;
	}
	*out = n;
	return 1;
}

/* Per thread: a reload on one thread never reads another's errors. */
static _Thread_local struct {
	char	 text[CONF_ERRORS_TEXT_MAX];
	size_t	 len;
	int	 cut;
} conf_errs;

void
conf_errors_clear(void)
{
	conf_errs.len = 0;
	conf_errs.cut = 0;
	conf_errs.text[0] = '\0';
}

const char *
conf_errors_text(void)
{
	return conf_errs.text;
}

/* Keeps one line, or marks the text cut when it does not fit. */
static void
conf_errors_keep(const char *line)
{
	size_t	 n = strlen(line), room;

	if (conf_errs.cut)
		return;
	room = sizeof(conf_errs.text) - sizeof(CONF_ERRORS_TEXT_CUT) - 1;
	if (conf_errs.len + n + 1 > room) {
		snprintf(conf_errs.text + conf_errs.len, sizeof(conf_errs.text) -
		    conf_errs.len, "%s", CONF_ERRORS_TEXT_CUT);
		conf_errs.cut = 1;
		return;
	}
	snprintf(conf_errs.text + conf_errs.len, sizeof(conf_errs.text) -
	    conf_errs.len, "%s%s", conf_errs.len ? "\n" : "", line);
	conf_errs.len += n + (conf_errs.len ? 1 : 0);
}

void
conf_report(const char *fmt, ...)
{
	char	 line[CONF_ERROR_LEN];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
	conf_errors_keep(line);
}

unsigned
conf_ctx_report(const struct conf_ctx *ctx)
{
	char		 more[64];
	unsigned	 i, kept;

	kept = ctx->nerrors < CONF_ERRORS_MAX ? ctx->nerrors : CONF_ERRORS_MAX;
	for (i = 0; i < kept; i++) {
		fprintf(stderr, "%s\n", ctx->errors[i]);
		conf_errors_keep(ctx->errors[i]);
	}
	if (ctx->nerrors > kept) {
		snprintf(more, sizeof(more), "... and %u more",
		    ctx->nerrors - kept);
		fprintf(stderr, "%s\n", more);
		conf_errors_keep(more);
	}
	return ctx->nerrors;
}

size_t
conf_users(struct conf_ctx *ctx, const json_t *arr, const char *what,
    uid_t *out, size_t max)
{
	const json_t	*v;
	struct passwd	*pw;
	size_t		 i, n = 0;

	json_array_foreach(arr, i, v) {
		if (n == max) {
			conf_error(ctx, v, "%s: more than %zu entries", what, max);
			break;
		}
		if (json_is_integer(v) && json_integer_value(v) >= 0 &&
		    json_integer_value(v) < (json_int_t)UINT32_MAX)
			out[n++] = (uid_t)json_integer_value(v);
		else if (!json_is_string(v))
			conf_error(ctx, v, "%s: expected a user name or uid",
			    what);
		else if ((pw = getpwnam(json_string_value(v))) == NULL)
			conf_error(ctx, v, "%s: no such user '%s'", what,
			    json_string_value(v));
		else
			out[n++] = pw->pw_uid;
	}
	return n;
}

struct conf_doc *
conf_doc_load_report(const char *path)
{
	struct conf_doc	*doc;
	char		 err[CONF_ERROR_LEN];

	if ((doc = conf_doc_load_file(path, err, sizeof(err))) == NULL)
		conf_report("%s", err);
	return doc;
}

int
conf_ctx_finish(struct conf_ctx *ctx, struct conf_doc *doc)
{
	int	 rv = ctx->nerrors ? -1 : 0;

	if (rv == -1)
		conf_ctx_report(ctx);
	conf_doc_free(doc);
	return rv;
}
