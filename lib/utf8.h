/*
 * UTF-8 checks and repair for text that came from untrusted code.
 * utf8_sanitize returns a new string (caller frees).
 */
#ifndef STOCKADE_UTF8_H
#define STOCKADE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Length of the well-formed sequence at p (len >= 1), or 0 when it is
 * ill-formed: then *bad is the length of its maximal subpart (Unicode's
 * best practice for U+FFFD) and *cut is 1 when the buffer ended inside a
 * sequence that could still have been well-formed.
 */
size_t	 utf8_next(const uint8_t *p, size_t len, size_t *bad, int *cut);
/* A copy of p with each maximal ill-formed subpart and NUL as U+FFFD. */
char	*utf8_sanitize(const void *p, size_t len, size_t *outlen);

#endif
