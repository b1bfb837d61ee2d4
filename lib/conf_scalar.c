/*
 * YAML scalar syntax: which plain scalars are null, booleans, integers and
 * reals, as conf.h documents.  Pure functions over untrusted bytes (s, n):
 * nothing is allocated and no input is assumed NUL-terminated.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf_int.h"

#define CONF_REAL_MAX	64	/* characters in a real literal */

static unsigned
digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return (unsigned)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (unsigned)(c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (unsigned)(c - 'A' + 10);
	return 99;
}

static int
text_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

int
conf_text_null(const char *s, size_t n)
{
	return n == 0 || text_is(s, n, "~") || text_is(s, n, "null") ||
	    text_is(s, n, "Null") || text_is(s, n, "NULL");
}

/* 1 and *out set when s is a boolean, else 0. */
int
conf_text_bool(const char *s, size_t n, int *out)
{
	if (text_is(s, n, "true") || text_is(s, n, "True") ||
	    text_is(s, n, "TRUE")) {
		*out = 1;
		return 1;
	}
	if (text_is(s, n, "false") || text_is(s, n, "False") ||
	    text_is(s, n, "FALSE")) {
		*out = 0;
		return 1;
	}
	return 0;
}

/*
 * Integers: [-+]digits, 0o17, 0x1F.  A decimal with a leading zero, such as
 * 0660, is octal: YAML 1.1 read it that way and operators write file modes
 * so; YAML 1.2 would make it 660, which is the wrong mode.  Leading-zero
 * digits 8 and 9 are refused rather than guessed at.  Returns 1 and *out,
 * 0 when s is not written as an integer, -1 with *why when it is but has
 * no int64 value.
 */
int
conf_text_int(const char *s, size_t n, int64_t *out, const char **why)
{
	uint64_t	 v = 0, limit;
	unsigned	 base = 10, d;
	size_t		 i = 0, j;
	int		 neg = 0;

	if (n >= 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
		base = s[1] == 'o' ? 8 : 16;
		i = 2;
	} else if (n >= 1 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == n)
		return 0;
	for (j = i; j < n; j++)
		if (digit_value(s[j]) >= base)
			return 0;
	if (base == 10 && s[i] == '0' && n - i > 1) {
		base = 8;
		for (j = i; j < n; j++)
			if (s[j] > '7') {
				*why = "a leading zero makes a number octal, "
				    "but it has the digit 8 or 9 (quote it "
				    "if it is a string)";
				return -1;
			}
	}
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		d = digit_value(s[i]);
		if (v > (limit - d) / base) {
			*why = "integer out of range";
			return -1;
		}
		v = v * base + d;
	}
	if (!neg)
		*out = (int64_t)v;
	else if (v == (uint64_t)INT64_MAX + 1)
		*out = INT64_MIN;
	else
		*out = -(int64_t)v;
	return 1;
}

/*
 * Reals: [-+] then .5, 1. or 1.5, then an optional exponent; a dot or an
 * exponent is required, or it would be an integer.  Same returns as
 * conf_text_int().
 */
int
conf_text_real(const char *s, size_t n, double *out, const char **why)
{
	char	 copy[CONF_REAL_MAX + 1], *end;
	size_t	 i = 0, digits = 0;
	int	 dot = 0, exp = 0;
	double	 d;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	for (; i < n && conf_is_digit(s[i]); i++)
		digits++;
	if (i < n && s[i] == '.') {
		dot = 1;
		for (i++; i < n && conf_is_digit(s[i]); i++)
			digits++;
	}
	if (digits == 0)
		return 0;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		exp = 1;
		if (++i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i == n || !conf_is_digit(s[i]))
			return 0;
		while (i < n && conf_is_digit(s[i]))
			i++;
	}
	if (i != n || (!dot && !exp))
		return 0;
	/* A bound on strtod's work; no policy needs 64 significant digits. */
	if (n > CONF_REAL_MAX) {
		*why = "number too long";
		return -1;
	}
	memcpy(copy, s, n);
	copy[n] = '\0';
	d = strtod(copy, &end);
	if (end != copy + n) {		/* a locale whose radix is not '.' */
		*why = "cannot parse number";
		return -1;
	}
	if (!isfinite(d)) {
		*why = "number out of range";
		return -1;
	}
	*out = d;
	return 1;
}
