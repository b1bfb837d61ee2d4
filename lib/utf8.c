/*
 * UTF-8 at the edges: everything a sandbox prints or names is checked or
 * repaired here before it reaches JSON.  Well-formed means Unicode's
 * table 3-7 (no overlongs, surrogates or code points past U+10FFFF); NUL
 * counts as ill-formed.
 */
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
