/*
 * UTF-8 at the edges: everything a sandbox prints or names is checked or
 * repaired here before it reaches JSON.  Well-formed means Unicode's
 * table 3-7 (no overlongs, surrogates or code points past U+10FFFF); NUL
 * counts as ill-formed.
 */
#define PCRE2_CODE_UNIT_WIDTH	8

#include <pcre2.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "utf8.h"
#include "util.h"

static const uint8_t	utf8_replacement[] = { 0xef, 0xbf, 0xbd };

/*
 * The length of the well-formed sequence at p (Unicode table 3-7), or 0
 * when it is ill-formed; then *bad is the length of its maximal subpart:
 * the lead byte and the continuation bytes that were still possible.  A
 * sequence cut short by the end of the buffer is one maximal subpart.
 */
size_t
utf8_next(const uint8_t *p, size_t len, size_t *bad, int *cut)
{
	uint8_t	 lo = 0x80, hi = 0xbf;
	size_t	 need, i;

	*cut = 0;
	if (p[0] < 0x80) {
		*bad = 1;
		return p[0] != '\0';
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		need = 1;
	else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		need = 2;
		if (p[0] == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (p[0] == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		need = 3;
		if (p[0] == 0xf0)
			lo = 0x90;	/* overlong */
		else if (p[0] == 0xf4)
			hi = 0x8f;	/* past U+10FFFF */
	} else {
		/* Stray continuation, C0/C1 overlong leads, F5..FF. */
		*bad = 1;
		return 0;
	}
	for (i = 1; i <= need; i++) {
		if (i >= len || p[i] < lo || p[i] > hi) {
			*cut = i >= len;
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

/* Writes the sanitised form of p to out (when not NULL); returns its length. */
static size_t
utf8_fix(const uint8_t *p, size_t len, uint8_t *out)
{
	size_t	 i = 0, run = 0, o = 0, n, bad;
	int	 cut;

	/* Valid runs are copied in one memcpy each, not byte by byte. */
	while (i < len) {
		if (p[i] >= 0x01 && p[i] < 0x80) {	/* the common case */
			i++;
			continue;
		}
		if ((n = utf8_next(p + i, len - i, &bad, &cut)) > 0) {
			i += n;
			continue;
		}
		if (out != NULL) {
			memcpy(out + o, p + run, i - run);
			memcpy(out + o + (i - run), utf8_replacement,
			    sizeof(utf8_replacement));
		}
		o += i - run + sizeof(utf8_replacement);
		i += bad;
		run = i;
	}
	if (out != NULL && i > run)
		memcpy(out + o, p + run, i - run);
	return o + (i - run);
}

char *
utf8_sanitize(const void *p, size_t len, size_t *outlen)
{
	size_t	 n;
	char	*out;

	/* Every input byte can become three; the sum must fit. */
	if (len > (SIZE_MAX - 1) / sizeof(utf8_replacement))
		fatalx("utf8_sanitize: %zu bytes", len);
	n = utf8_fix(p, len, NULL);
	out = xmalloc(n + 1);
	utf8_fix(p, len, (uint8_t *)out);
	out[n] = '\0';
	if (outlen != NULL)
		*outlen = n;
	return out;
}

/* ------------------------------------------------------------ names */

/*
 * The classification is PCRE2's Unicode database (the library we already
 * trust for patterns), not a table of our own: one character class, built
 * once.  Cc is tested separately so the reason can say "control".
 */
#define UTF8_INVISIBLE_RE						\
	"[\\p{Cf}\\p{Cn}\\p{Co}\\p{Cs}\\p{Zl}\\p{Zp}\\p{Bidi_Control}"	\
	"\\p{Default_Ignorable_Code_Point}\\p{Noncharacter_Code_Point}]"	\
	"|(?! )\\p{Zs}"

static pcre2_code	*utf8_invisible;
static pthread_once_t	 utf8_once = PTHREAD_ONCE_INIT;

static void
utf8_compile(void)
{
	PCRE2_SIZE	 off;
	int		 rc;

	if ((utf8_invisible = pcre2_compile((PCRE2_SPTR)UTF8_INVISIBLE_RE,
	    PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK,
	    &rc, &off, NULL)) == NULL)
		fatalx("utf8: name class does not compile (%d at %zu)", rc,
		    (size_t)off);
}

enum utf8_name
utf8_name_check(const char *s, size_t len, size_t *off)
{
	const uint8_t		*p = (const uint8_t *)s;
	pcre2_match_data	*md;
	size_t			 i = 0, n, bad;
	int			 cut, rc;
	enum utf8_name		 why = UTF8_NAME_OK;

	while (i < len) {
		if ((n = utf8_next(p + i, len - i, &bad, &cut)) == 0) {
			why = UTF8_NAME_ILLFORMED;
			break;
		}
		/* C0, DEL, and C1 (U+0080..U+009F: 0xc2 0x80..0x9f). */
		if (p[i] < 0x20 || p[i] == 0x7f || (p[i] == 0xc2 &&
		    p[i + 1] <= 0x9f)) {
			why = UTF8_NAME_CONTROL;
			break;
		}
		i += n;
	}
	if (why != UTF8_NAME_OK) {
		if (off != NULL)
			*off = i;
		return why;
	}
	pthread_once(&utf8_once, utf8_compile);
	if ((md = pcre2_match_data_create(1, NULL)) == NULL)
		fatalx("pcre2: out of memory");
	/* Checked above: well-formed, so PCRE2 need not check again. */
	rc = pcre2_match(utf8_invisible, (PCRE2_SPTR)s, len, 0,
	    PCRE2_NO_UTF_CHECK, md, NULL);
	if (rc >= 0) {
		why = UTF8_NAME_INVISIBLE;
		if (off != NULL)
			*off = pcre2_get_ovector_pointer(md)[0];
	} else if (rc != PCRE2_ERROR_NOMATCH)
		why = UTF8_NAME_INVISIBLE;	/* unsure is unsafe */
	pcre2_match_data_free(md);
	return why;
}

const char *
utf8_name_why(enum utf8_name why)
{
	switch (why) {
	case UTF8_NAME_OK:
		return "fine";
	case UTF8_NAME_ILLFORMED:
		return "not UTF-8";
	case UTF8_NAME_CONTROL:
		return "control character";
	case UTF8_NAME_INVISIBLE:
		break;
	}
	return "unsafe character (format, bidi, invisible or unassigned)";
}
