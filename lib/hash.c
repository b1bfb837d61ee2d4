/*
 * Base64 and Ed25519 signatures on OpenSSL's EVP interface (SHA-256 and
 * hex are digest.c's).  Key files are read from paths the operator
 * configured; a private key readable by group or others is refused, as
 * ssh does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>

#include "hash.h"
#include "log.h"

void
base64_encode(const uint8_t *p, size_t n, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, p, (int)n);
}

/* A character's 6 bits in the form's alphabet (RFC 4648 §4, §5), or -1. */
static int
base64_value(enum base64_form f, unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == (f == BASE64_URL ? '-' : '+'))
		return 62;
	if (c == (f == BASE64_URL ? '_' : '/'))
		return 63;
	return -1;
}

int
base64_check(enum base64_form f, const char *s, size_t len)
{
	size_t	 data = len, i, tail;
	int	 v = 0;

	if (len > BASE64_INPUT_MAX)
		return -1;
	if (f == BASE64_STD) {
		if (len % 4 != 0)
			return -1;
		/* Up to two '=', only at the very end. */
		while (data > 0 && len - data < 2 && s[data - 1] == '=')
			data--;
	}
	for (i = 0; i < data; i++)
		if ((v = base64_value(f, (unsigned char)s[i])) == -1)
			return -1;
	/* A last group of one character holds no whole byte; of two or
	 * three, the bits past the data must be zero (§3.5), so that a
	 * byte string has one spelling. */
	tail = data % 4;
	if (tail == 1 || (tail == 2 && (v & 0x0f) != 0) ||
	    (tail == 3 && (v & 0x03) != 0))
		return -1;
	return (int)(data / 4 * 3 + (tail > 0 ? tail - 1 : 0));
}

int
base64_decode(const char *s, size_t len, uint8_t *out, size_t outmax)
{
	int	 n;

	/* Checked first: EVP_DecodeBlock skips whitespace, takes '-' as an
	 * end and '=' anywhere; past the check it sees whole groups only. */
	if ((n = base64_check(BASE64_STD, s, len)) == -1 ||
	    len / 4 * 3 > outmax)
		return -1;
	if (EVP_DecodeBlock(out, (const unsigned char *)s, (int)len) < 0)
		return -1;
	return n;
}

static void
ssl_error(char *err, size_t errlen, const char *what, const char *path)
{
	unsigned long	 e = ERR_get_error();

	snprintf(err, errlen, "%s: %s: %s", path, what,
	    e ? ERR_reason_error_string(e) : "failed");
	ERR_clear_error();
}

int
ed25519_keygen(const char *privpath, const char *pubpath, char *err,
    size_t errlen)
{
	EVP_PKEY	*pk = NULL;
	FILE		*f = NULL;
	int		 fd = -1, rv = -1;

	if ((pk = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519")) == NULL) {
		ssl_error(err, errlen, "key generation", privpath);
		goto out;
	}
	/* O_EXCL: never overwrite an existing key, whose loss breaks verification. */
	if ((fd = open(privpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1) {
		snprintf(err, errlen, "%s: %s", privpath, strerror(errno));
		goto out;
	}
	if ((f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errlen, "%s: %s", privpath, strerror(errno));
		goto out;
	}
	fd = -1;
	if (PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL) != 1 ||
	    fflush(f) != 0 || fsync(fileno(f)) != 0) {
		ssl_error(err, errlen, "write", privpath);
		goto out;
	}
	fclose(f);
	f = NULL;
	if ((fd = open(pubpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errlen, "%s: %s", pubpath, strerror(errno));
		goto out;
	}
	fd = -1;
	if (PEM_write_PUBKEY(f, pk) != 1 || fflush(f) != 0 ||
	    fsync(fileno(f)) != 0) {
		ssl_error(err, errlen, "write", pubpath);
		goto out;
	}
	rv = 0;
out:
	if (f != NULL)
		fclose(f);
	if (fd != -1)
		close(fd);
	EVP_PKEY_free(pk);
	return rv;
}

static EVP_PKEY *
load_key(const char *path, int private, char *err, size_t errlen)
{
	EVP_PKEY	*pk = NULL;
	struct stat	 st;
	FILE		*f;

	if ((f = fopen(path, "re")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if (private && (st.st_mode & 077) != 0) {
		snprintf(err, errlen, "%s: private key is accessible by group "
		    "or others (mode %04o); chmod 600", path,
		    (unsigned)(st.st_mode & 07777));
		goto out;
	}
	pk = private ? PEM_read_PrivateKey(f, NULL, NULL, NULL) :
	    PEM_read_PUBKEY(f, NULL, NULL, NULL);
	if (pk == NULL) {
		ssl_error(err, errlen, "cannot read key", path);
		goto out;
	}
	if (EVP_PKEY_get_id(pk) != EVP_PKEY_ED25519) {
		snprintf(err, errlen, "%s: not an Ed25519 key", path);
		EVP_PKEY_free(pk);
		pk = NULL;
	}
out:
	fclose(f);
	return pk;
}

EVP_PKEY *
ed25519_load_private(const char *path, char *err, size_t errlen)
{
	return load_key(path, 1, err, errlen);
}

EVP_PKEY *
ed25519_load_public(const char *path, char *err, size_t errlen)
{
	return load_key(path, 0, err, errlen);
}

int
ed25519_sign(EVP_PKEY *pk, const void *msg, size_t len,
    uint8_t sig[ED25519_SIG_LEN])
{
	EVP_MD_CTX	*ctx;
	size_t		 siglen = ED25519_SIG_LEN;
	int		 rv = -1;

	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return -1;
	if (EVP_DigestSignInit(ctx, NULL, NULL, NULL, pk) == 1 &&
	    EVP_DigestSign(ctx, sig, &siglen, msg, len) == 1 &&
	    siglen == ED25519_SIG_LEN)
		rv = 0;
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return rv;
}

int
ed25519_verify(EVP_PKEY *pk, const void *msg, size_t len,
    const uint8_t sig[ED25519_SIG_LEN])
{
	EVP_MD_CTX	*ctx;
	int		 ok = 0;

	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return 0;
	if (EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pk) == 1 &&
	    EVP_DigestVerify(ctx, sig, ED25519_SIG_LEN, msg, len) == 1)
		ok = 1;
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return ok;
}

int
ed25519_key_id(EVP_PKEY *pk, char out[KEY_ID_HEX + 1])
{
	uint8_t	 raw[32], md[SHA256_LEN];
	size_t	 len = sizeof(raw);

	if (EVP_PKEY_get_raw_public_key(pk, raw, &len) != 1 || len != 32)
		return -1;
	sha256(raw, len, md);
	hex_encode(md, KEY_ID_HEX / 2, out);
	return 0;
}
