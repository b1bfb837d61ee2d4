/*
 * Bounded capture of a sandboxed program's stdout or stderr.  The bytes are
 * the program's and so hostile: they are only counted and copied here, and
 * are turned into valid UTF-8 before anyone else sees them as text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "utf8.h"
#include "log.h"
#include "util.h"

/* Room for "\n[... 18446744073709551615 bytes omitted ...]\n" and a NUL. */
#define CAPTURE_MARKER_MAX	64

/* U+FFFD REPLACEMENT CHARACTER */

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
