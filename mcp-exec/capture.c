/*
 * Bounded capture of a sandboxed program's stdout or stderr.  The bytes are
 * the program's and so hostile: they are only counted and copied here, and
 * are turned into valid UTF-8 before anyone else sees them as text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "log.h"
#include "util.h"

/* Room for "\n[... 18446744073709551615 bytes omitted ...]\n" and a NUL. */
#define CAPTURE_MARKER_MAX	64

/* U+FFFD REPLACEMENT CHARACTER */
static const uint8_t	utf8_replacement[] = { 0xef, 0xbf, 0xbd };

void
capture_init(struct capture *c, size_t max)
{
	memset(c, 0, sizeof(*c));
	c->max = max;
	/* max * 2 / 3 without overflowing for max near SIZE_MAX. */
	c->headmax = max / 3 * 2 + max % 3 * 2 / 3;
	c->tailmax = max - c->headmax;
	/*
	 * Both halves are allocated once, here: capture_add then only
	 * copies.  Large untouched allocations cost address space, not RAM.
	 */
	c->head = xmalloc(c->headmax);
	c->tail = xmalloc(c->tailmax);
}

void
capture_add(struct capture *c, const void *p, size_t n)
{
	const uint8_t	*b = p;
	size_t		 k;

	c->total += n;
	if (c->headlen < c->headmax && n > 0) {
		k = c->headmax - c->headlen;
		if (k > n)
			k = n;
		memcpy(c->head + c->headlen, b, k);
		c->headlen += k;
		b += k;
		n -= k;
	}
	if (n == 0 || c->tailmax == 0)
		return;
	if (n >= c->tailmax) {
		/* Only this chunk's last tailmax bytes can survive. */
		memcpy(c->tail, b + n - c->tailmax, c->tailmax);
		c->tailpos = 0;
		c->taillen = c->tailmax;
		return;
	}
	/* n < tailmax: at most two copies, up to the ring's end and after. */
	k = c->tailmax - c->tailpos;
	if (k > n)
		k = n;
	memcpy(c->tail + c->tailpos, b, k);
	if (k < n) {
		memcpy(c->tail, b + k, n - k);
		c->tailpos = n - k;
	} else if ((c->tailpos += k) == c->tailmax)
		c->tailpos = 0;
	if (c->taillen > c->tailmax - n)
		c->taillen = c->tailmax;
	else
		c->taillen += n;
}

int
capture_truncated(const struct capture *c)
{
	return c->total > c->max;
}

char *
capture_text(const struct capture *c, size_t *len)
{
	char	 marker[CAPTURE_MARKER_MAX];
	uint8_t	*raw, *t;
	size_t	 mlen = 0, start, first, rawlen;
	char	*out;
	int	 r;

	if (capture_truncated(c)) {
		r = snprintf(marker, sizeof(marker),
		    "\n[... %llu bytes omitted ...]\n",
		    (unsigned long long)(c->total - c->headlen - c->taillen));
		if (r < 0 || (size_t)r >= sizeof(marker))
			fatalx("capture marker");
		mlen = (size_t)r;
	}
	/*
	 * Sanitised as one stream: when nothing was dropped, a character
	 * split between head and ring must come out whole.
	 */
	rawlen = c->headlen + mlen + c->taillen;
	raw = t = xmalloc(rawlen);
	if (c->headlen > 0)
		memcpy(t, c->head, c->headlen);
	t += c->headlen;
	if (mlen > 0)
		memcpy(t, marker, mlen);
	t += mlen;
	if (c->taillen > 0) {
		/* The oldest byte is taillen behind the write position. */
		start = (c->tailpos + c->tailmax - c->taillen) % c->tailmax;
		first = c->tailmax - start;
		if (first > c->taillen)
			first = c->taillen;
		memcpy(t, c->tail + start, first);
		if (first < c->taillen)
			memcpy(t + first, c->tail, c->taillen - first);
	}
	out = utf8_sanitize(raw, rawlen, len);
	free(raw);
	return out;
}

void
capture_free(struct capture *c)
{
	free(c->head);
	free(c->tail);
	memset(c, 0, sizeof(*c));
}

/*
 * The length of the well-formed sequence at p (Unicode table 3-7), or 0
 * when it is ill-formed; then *bad is the length of its maximal subpart:
 * the lead byte and the continuation bytes that were still possible.  A
 * sequence cut short by the end of the buffer is one maximal subpart.
 */
static size_t
utf8_next(const uint8_t *p, size_t len, size_t *bad)
{
	uint8_t	 lo = 0x80, hi = 0xbf;
	size_t	 need, i;

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

	/* Valid runs are copied in one memcpy each, not byte by byte. */
	while (i < len) {
		if (p[i] >= 0x01 && p[i] < 0x80) {	/* the common case */
			i++;
			continue;
		}
		if ((n = utf8_next(p + i, len - i, &bad)) > 0) {
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
