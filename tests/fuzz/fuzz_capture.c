/*
 * Fuzz target for output capture: the input is fed in chunks whose sizes
 * come from the input itself into a capture whose size does too, and
 * through utf8_sanitize.  Whatever the bytes, the text must be valid UTF-8
 * without NUL and must equal head + marker + tail of the stream.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/capture.h"
#include "util.h"

#define FUZZ_MAX_LIMIT	97	/* small, so most inputs wrap the ring */
#define FUZZ_CHUNK_MOD	41

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* An independent check: decode each code point and test its range. */
static int
valid_utf8(const uint8_t *p, size_t len)
{
	size_t		 i = 0, n, k;
	uint32_t	 cp;

	while (i < len) {
		if (p[i] == 0)
			return 0;
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if ((p[i] & 0xe0) == 0xc0) {
			n = 1;
			cp = p[i] & 0x1f;
		} else if ((p[i] & 0xf0) == 0xe0) {
			n = 2;
			cp = p[i] & 0x0f;
		} else if ((p[i] & 0xf8) == 0xf0) {
			n = 3;
			cp = p[i] & 0x07;
		} else
			return 0;
		if (len - i <= n)
			return 0;
		for (k = 1; k <= n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) ||
		    (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += n + 1;
	}
	return 1;
}

static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_capture: %s\n", what);
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct capture	 c;
	size_t		 max, off = 0, k = 0, n, len, mlen, slen, s2len;
	uint8_t		*raw;
	char		*t, *m, *s, *s2, marker[64];
	int		 ml;

	max = size > 0 ? data[0] % FUZZ_MAX_LIMIT : 0;
	capture_init(&c, max);
	while (off < size) {
		/* Chunk sizes read from the data, wrapping around it. */
		if ((n = data[k++ % size] % FUZZ_CHUNK_MOD) == 0) {
			capture_add(&c, data + off, 0);
			n = 1;	/* progress even over a run of zeros */
		}
		if (n > size - off)
			n = size - off;
		capture_add(&c, data + off, n);
		off += n;
	}
	check(c.total == size, "total");
	t = capture_text(&c, &len);
	check(valid_utf8((const uint8_t *)t, len), "capture text not UTF-8");
	check(t[len] == '\0' && strlen(t) == len, "capture text length");

	/* However it was chunked, the text is the obvious model's. */
	if (size <= max)
		m = utf8_sanitize(data, size, &mlen);
	else {
		ml = snprintf(marker, sizeof(marker),
		    "\n[... %zu bytes omitted ...]\n",
		    size - c.headmax - c.tailmax);
		raw = xmalloc(max + (size_t)ml);
		memcpy(raw, data, c.headmax);
		memcpy(raw + c.headmax, marker, (size_t)ml);
		memcpy(raw + c.headmax + (size_t)ml, data + size - c.tailmax,
		    c.tailmax);
		m = utf8_sanitize(raw, max + (size_t)ml, &mlen);
		free(raw);
	}
	check(len == mlen && memcmp(t, m, len) == 0, "capture != model");
	free(t);
	free(m);
	capture_free(&c);

	s = utf8_sanitize(data, size, &slen);
	check(valid_utf8((const uint8_t *)s, slen), "sanitized not UTF-8");
	/* Valid input passes unchanged; sanitising twice changes nothing. */
	if (valid_utf8(data, size))
		check(slen == size && memcmp(s, data, size) == 0,
		    "valid input changed");
	s2 = utf8_sanitize(s, slen, &s2len);
	check(s2len == slen && memcmp(s, s2, slen) == 0, "not idempotent");
	free(s);
	free(s2);
	return 0;
}
