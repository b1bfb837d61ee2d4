/*
 * Fuzz target for the one base64 decoder everything a client sends goes
 * through (lib/hash.c): the first byte picks the form (even: standard,
 * odd: URL).  Strictness as a property: whatever decodes re-encodes to
 * exactly the bytes it came from, so no two spellings mean one value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FUZZ_B64_MAX	4096	/* longer inputs teach nothing new */

/* RFC 4648 §5 → §4: the other two characters, and the padding back. */
static size_t
url_to_std(const char *s, size_t len, char *out)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		out[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
	while (i % 4 != 0)
		out[i++] = '=';
	return i;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t	 out[FUZZ_B64_MAX];
	static char	 std[FUZZ_B64_MAX + 4], again[BASE64_LEN(FUZZ_B64_MAX)];
	const char	*s = (const char *)data + 1;
	size_t		 len, slen;
	int		 n;

	if (size < 1 || size - 1 > FUZZ_B64_MAX)
		return 0;
	len = size - 1;
	if (data[0] % 2 == 0) {
		n = base64_decode(s, len, out, sizeof(out));
		if (n != base64_check(BASE64_STD, s, len))
			abort();
		if (n == -1)
			return 0;
		base64_encode(out, (size_t)n, again);
		if (strlen(again) != len || memcmp(again, s, len) != 0)
			abort();
		return 0;
	}
	if ((n = base64_check(BASE64_URL, s, len)) == -1)
		return 0;
	/* A valid URL spelling is the standard one with two letters swapped. */
	slen = url_to_std(s, len, std);
	if (base64_decode(std, slen, out, sizeof(out)) != n)
		abort();
	base64_encode(out, (size_t)n, again);
	if (strlen(again) != slen || memcmp(again, std, slen) != 0)
		abort();
	return 0;
}
