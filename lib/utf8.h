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

/*
 * Names shown to people (artifact and input file names, resource URIs,
 * audit records) must look like what they are.  The one place that says
 * which code points may not appear in them:
 *   UTF8_NAME_ILLFORMED	not well-formed UTF-8 (NUL included)
 *   UTF8_NAME_CONTROL		C0, DEL, C1 (general category Cc)
 *   UTF8_NAME_INVISIBLE	format characters (Cf, every Bidi_Control
 *				among them), line and paragraph separators,
 *				Default_Ignorable_Code_Point (fillers,
 *				variation selectors, tags), spaces other than
 *				U+0020, noncharacters, private use, unassigned
 * utf8_name_check returns UTF8_NAME_OK or the first problem; *off (when
 * not NULL) is the byte offset of the offending sequence.
 */
enum utf8_name {
	UTF8_NAME_OK, UTF8_NAME_ILLFORMED, UTF8_NAME_CONTROL,
	UTF8_NAME_INVISIBLE,
};
enum utf8_name	 utf8_name_check(const char *s, size_t len, size_t *off);
/* Words for a reason: "not UTF-8", "control character", ... */
const char	*utf8_name_why(enum utf8_name);

#endif
