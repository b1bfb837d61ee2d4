/*
 * SHA-256 (GNU Nettle) and hex, apart from hash.c's OpenSSL: a program
 * that only hashes, such as `mcp-exec run`, then never loads libcrypto,
 * whose relocations alone cost ~2.5 ms of every start here (and whose
 * first EVP digest another 2.5-3 ms).  Pure functions of their input.
 */
#include <assert.h>
#include <pthread.h>
#include <stdalign.h>
#include <string.h>

/* Nettle names its context as we name ours: its own name here. */
#define sha256_ctx	nettle_sha256_state
#include <nettle/sha2.h>
#undef sha256_ctx
#undef sha256_init
#undef sha256_update
#undef sha256_digest

#include "hash.h"

static_assert(sizeof(struct nettle_sha256_state) <=
    sizeof(((struct sha256_ctx *)0)->state), "sha256_ctx too small");
static_assert(alignof(struct nettle_sha256_state) <= alignof(uint64_t),
    "sha256_ctx misaligned");

#define NETTLE(c)	((struct nettle_sha256_state *)(void *)(c)->state)

void
sha256(const void *p, size_t n, uint8_t out[SHA256_LEN])
{
	struct nettle_sha256_state	 c;

	nettle_sha256_init(&c);
	nettle_sha256_update(&c, n, p);
	nettle_sha256_digest(&c, SHA256_LEN, out);
	explicit_bzero(&c, sizeof(c));
}

void
sha256_hex(const void *p, size_t n, char out[SHA256_HEX + 1])
{
	uint8_t	 md[SHA256_LEN];

	sha256(p, n, md);
	hex_encode(md, sizeof(md), out);
}

void
sha256_ctx_init(struct sha256_ctx *c)
{
	nettle_sha256_init(NETTLE(c));
}

void
sha256_ctx_free(struct sha256_ctx *c)
{
	explicit_bzero(c, sizeof(*c));
}

void
sha256_begin(struct sha256_ctx *c)
{
	nettle_sha256_init(NETTLE(c));
}

void
sha256_update(struct sha256_ctx *c, const void *p, size_t len)
{
	nettle_sha256_update(NETTLE(c), len, p);
}

void
sha256_end(struct sha256_ctx *c, uint8_t out[SHA256_LEN])
{
	/* Nettle's digest also resets the context for the next message. */
	nettle_sha256_digest(NETTLE(c), SHA256_LEN, out);
}

void
sha256_pair(struct sha256_ctx *c, const void *a, size_t alen,
    const void *b, size_t blen, uint8_t out[SHA256_LEN])
{
	nettle_sha256_init(NETTLE(c));
	nettle_sha256_update(NETTLE(c), alen, a);
	nettle_sha256_update(NETTLE(c), blen, b);
	nettle_sha256_digest(NETTLE(c), SHA256_LEN, out);
}

static const char hexdigits[] = "0123456789abcdef";

/* "00".."ff" as pairs: one lookup per byte on the verifier's hot path. */
static char hexpairs[256][2];

static void
hexpairs_init(void)
{
	int	 i;

	for (i = 0; i < 256; i++) {
		hexpairs[i][0] = hexdigits[i >> 4];
		hexpairs[i][1] = hexdigits[i & 0xf];
	}
}

void
hex_encode(const uint8_t *p, size_t n, char *out)
{
	static pthread_once_t	 once = PTHREAD_ONCE_INIT;
	size_t			 i;

	pthread_once(&once, hexpairs_init);
	for (i = 0; i < n; i++)
		memcpy(out + 2 * i, hexpairs[p[i]], 2);
	out[2 * n] = '\0';
}

/* 0..15 for lowercase hex digits, 0xff for anything else. */
static const uint8_t hexval[256] = {
	['0'] = 0, ['1'] = 1, ['2'] = 2, ['3'] = 3, ['4'] = 4,
	['5'] = 5, ['6'] = 6, ['7'] = 7, ['8'] = 8, ['9'] = 9,
	['a'] = 10, ['b'] = 11, ['c'] = 12, ['d'] = 13, ['e'] = 14,
	['f'] = 15,
};

static int
hexdigit(unsigned char c)
{
	/* The table's zero entries are ambiguous only for '0' itself. */
	return hexval[c] != 0 || c == '0' ? hexval[c] : -1;
}

int
hex_lower(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (hexdigit((unsigned char)s[i]) == -1)
			return 0;
	return 1;
}

int
hex_decode(const char *s, size_t hexlen, uint8_t *out)
{
	size_t	 i;
	int	 hi, lo;

	if (hexlen % 2 != 0)
		return -1;
	for (i = 0; i < hexlen / 2; i++) {
		if ((hi = hexdigit((unsigned char)s[2 * i])) == -1 ||
		    (lo = hexdigit((unsigned char)s[2 * i + 1])) == -1)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

