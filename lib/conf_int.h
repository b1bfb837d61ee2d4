/*
 * Private to lib/conf_load.c, conf_scalar.c and conf_check.c, not part of
 * the API: the scalar syntax the loader resolves with, the one position
 * lookup the validation context needs beyond conf.h, and the sanitiser
 * both use to put untrusted text into a message.
 *
 * Ownership: struct conf_doc stays opaque outside conf_load.c.  Nothing
 * here allocates; out buffers are the caller's.
 */
#ifndef STOCKADE_CONF_INT_H
#define STOCKADE_CONF_INT_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"

#define CONF_QUOTE_MAX	48	/* bytes of untrusted text in a message */
#define CONF_QUOTE_LEN	(CONF_QUOTE_MAX * 4 + 4) /* as \xNN, "...", NUL */

/*
 * Where the value of a mapping member starts, looked up by its key: key
 * must be the string the document's tree holds (json_object_iter_key(), or
 * the key of json_object_foreach()), not a copy.  This places null, true
 * and false, which conf_doc_where() cannot.  0 with *line and *column; -1,
 * with both 0, when doc is NULL or the key is not one of its own.
 * (conf_load.c)
 */
int	conf_doc_member_where(const struct conf_doc *, const char *key,
	    unsigned *line, unsigned *column);

/*
 * Copies untrusted text into out: printable ASCII as is, anything else
 * (control bytes, terminal escapes, all of UTF-8) and the quote and
 * backslash as \xNN, and at most CONF_QUOTE_MAX bytes of s, then "...".
 * (conf_check.c)
 */
void	conf_quote(char out[CONF_QUOTE_LEN], const char *s, size_t n);

/*
 * Plain-scalar syntax (conf_scalar.c).  null and bool: 1 when s is one,
 * else 0.  int and real: 1 with *out; 0 when s is not written as one; -1
 * with *why (a static string) when it is but has no value in range.
 */
int	conf_text_null(const char *s, size_t n);
int	conf_text_bool(const char *s, size_t n, int *out);
int	conf_text_int(const char *s, size_t n, int64_t *out, const char **why);
int	conf_text_real(const char *s, size_t n, double *out, const char **why);

/* ASCII digits only, whatever the locale. */
static inline int
conf_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

#endif
