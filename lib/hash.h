/*
 * SHA-256 and hex (digest.c, on Nettle: no libcrypto for programs that
 * only hash), base64 and Ed25519 (hash.c, on OpenSSL).  Private keys are PEM
 * (PKCS#8) files that must not be readable by group or others; public keys
 * are PEM SubjectPublicKeyInfo.  Callers own returned EVP_PKEYs
 * (EVP_PKEY_free).
 */
#ifndef STOCKADE_HASH_H
#define STOCKADE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>

#define SHA256_LEN	32
#define SHA256_HEX	64
#define ED25519_SIG_LEN	64
#define ED25519_SIG_B64	88	/* base64 of 64 bytes, with padding */
#define KEY_ID_HEX	16	/* first 8 bytes of SHA-256 of the raw public key */

void	sha256(const void *, size_t, uint8_t out[SHA256_LEN]);
void	sha256_hex(const void *, size_t, char out[SHA256_HEX + 1]);

/* A reusable context for hashing many short messages. */
struct sha256_ctx {
	uint64_t	 state[16];	/* Nettle's context, opaque here */
};
void	sha256_ctx_init(struct sha256_ctx *);
void	sha256_ctx_free(struct sha256_ctx *);
/* A stream (a file as it is copied): begin, update as bytes pass, end. */
void	sha256_begin(struct sha256_ctx *);
void	sha256_update(struct sha256_ctx *, const void *, size_t);
void	sha256_end(struct sha256_ctx *, uint8_t out[SHA256_LEN]);
/* out = SHA-256(a ‖ b) */
void	sha256_pair(struct sha256_ctx *, const void *a, size_t alen,
	    const void *b, size_t blen, uint8_t out[SHA256_LEN]);

void	hex_encode(const uint8_t *, size_t, char *out);	/* 2n + 1 bytes */
int	hex_decode(const char *, size_t hexlen, uint8_t *out);	/* lowercase only */
/* 1 when the first n bytes of s are lowercase hex digits (stops at a NUL). */
int	hex_lower(const char *s, size_t n);
/* Bytes base64_encode writes for n bytes, NUL included. */
#define BASE64_LEN(n)	(4 * (((n) + 2) / 3) + 1)
/* out must hold BASE64_LEN(n) bytes. */
void	base64_encode(const uint8_t *, size_t, char *out);
/*
 * RFC 4648 base64, strictly: a character outside the alphabet is refused
 * (§3.3; whitespace and line ends too), padding is exact, and the bits
 * past the data must be zero (§3.5), so one byte string has one spelling
 * and whoever else decodes it (a gateway that routes on a header) reads
 * the same bytes.  BASE64_STD is §4, padded: the form MCP's
 * =?base64?...?= headers, inline files and our checkpoints use.
 * BASE64_URL is §5 unpadded, as JWS (RFC 7515 §2) has it.
 */
enum base64_form { BASE64_STD, BASE64_URL };
#define BASE64_INPUT_MAX	((size_t)1 << 30)	/* keeps lengths in an int */
/* The decoded length of s, or -1 when it is not strictly base64. */
int	base64_check(enum base64_form, const char *s, size_t len);
/* BASE64_STD: returns decoded length or -1; out must hold 3 * (len / 4)
 * bytes (outmax). */
int	base64_decode(const char *, size_t len, uint8_t *out, size_t outmax);

int	 ed25519_keygen(const char *privpath, const char *pubpath,
	    char *err, size_t errlen);
EVP_PKEY *ed25519_load_private(const char *path, char *err, size_t errlen);
EVP_PKEY *ed25519_load_public(const char *path, char *err, size_t errlen);
int	 ed25519_sign(EVP_PKEY *, const void *, size_t, uint8_t sig[ED25519_SIG_LEN]);
/* 1 valid, 0 invalid. */
int	 ed25519_verify(EVP_PKEY *, const void *, size_t,
	    const uint8_t sig[ED25519_SIG_LEN]);
int	 ed25519_key_id(EVP_PKEY *, char out[KEY_ID_HEX + 1]);

#endif
