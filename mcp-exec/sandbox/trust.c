/*
 * Builds the sandbox's CA bundle on the host side.  The inputs are the
 * host's bundle and a file the operator named in a profile: trusted in
 * origin, still checked (size, PEM, certificates only) before they are
 * copied, since a wrong file would be handed to every sandbox.
 * OpenSSL parses those certificates, opened only when there are some:
 * nothing else `mcp-exec run` does needs libcrypto, whose loading alone
 * costs every start ~2.5 ms here (docs/benchmarks.md).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/opensslv.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "trust.h"
#include "util.h"

const char *const trust_env[] = {
	"SSL_CERT_FILE=" TRUST_CA_FILE,		/* OpenSSL, Python's ssl */
	"REQUESTS_CA_BUNDLE=" TRUST_CA_FILE,	/* requests (certifi otherwise) */
	"PIP_CERT=" TRUST_CA_FILE,		/* pip's --cert */
	"CURL_CA_BUNDLE=" TRUST_CA_FILE,
	NULL
};

#define TRUST_STR(x)	#x
#define TRUST_XSTR(x)	TRUST_STR(x)
/* The libcrypto of the headers we were built with. */
#define TRUST_LIBCRYPTO	"libcrypto.so." TRUST_XSTR(OPENSSL_SHLIB_VERSION)

/* The few OpenSSL functions pem_count calls, found once. */
static struct {
	BIO		*(*bio_new_mem_buf)(const void *, int);
	int		 (*bio_free)(BIO *);
	X509		*(*pem_read_bio_x509)(BIO *, X509 **, pem_password_cb *,
			    void *);
	void		 (*x509_free)(X509 *);
	void		 (*err_clear_error)(void);
	unsigned long	 (*err_peek_last_error)(void);
	const char	*(*err_reason_error_string)(unsigned long);
} ossl;

static int
ossl_open(char *err, size_t errlen)
{
	static const char *const names[] = { "BIO_new_mem_buf", "BIO_free",
	    "PEM_read_bio_X509", "X509_free", "ERR_clear_error",
	    "ERR_peek_last_error", "ERR_reason_error_string" };
	void	**slot[] = { (void **)&ossl.bio_new_mem_buf,
	    (void **)&ossl.bio_free, (void **)&ossl.pem_read_bio_x509,
	    (void **)&ossl.x509_free, (void **)&ossl.err_clear_error,
	    (void **)&ossl.err_peek_last_error,
	    (void **)&ossl.err_reason_error_string };
	void	*lib;
	size_t	 i;

	if (ossl.x509_free != NULL)
		return 0;
	if ((lib = dlopen(TRUST_LIBCRYPTO, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(err, errlen, "cannot check certificates: %s",
		    dlerror());
		return -1;
	}
	for (i = 0; i < nitems(names); i++)
		if ((*slot[i] = dlsym(lib, names[i])) == NULL) {
			snprintf(err, errlen, "cannot check certificates: %s: "
			    "no %s", TRUST_LIBCRYPTO, names[i]);
			memset(&ossl, 0, sizeof(ossl));
			return -1;
		}
	return 0;
}

/* Counts the certificates in a PEM text; -1 on anything else in it. */
static int
pem_count(const char *text, size_t len, char *err, size_t errlen)
{
	BIO		*bio;
	X509		*x;
	unsigned long	 e;
	int		 n = 0;

	if (memmem(text, len, "PRIVATE KEY-----", 16) != NULL) {
		snprintf(err, errlen, "holds a private key");
		return -1;
	}
	if (ossl_open(err, errlen) == -1)
		return -1;
	if ((bio = ossl.bio_new_mem_buf(text, (int)len)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ossl.err_clear_error();
	while ((x = ossl.pem_read_bio_x509(bio, NULL, NULL, NULL)) != NULL) {
		ossl.x509_free(x);
		n++;
	}
	/* The end of the text is "no start line"; anything else is broken. */
	e = ossl.err_peek_last_error();
	ossl.bio_free(bio);
	ossl.err_clear_error();
	if (e != 0 && !(ERR_GET_LIB(e) == ERR_LIB_PEM &&
	    ERR_GET_REASON(e) == PEM_R_NO_START_LINE)) {
		snprintf(err, errlen, "certificate %d: %s", n + 1,
		    ossl.err_reason_error_string(e) ?
		    ossl.err_reason_error_string(e) : "not parsed");
		return -1;
	}
	if (n == 0) {
		snprintf(err, errlen, "no PEM certificate in it");
		return -1;
	}
	return n;
}

static int
extra_load(const char *path, char **text, size_t *len, char *err,
    size_t errlen)
{
	char	 e[256];

	if (read_file(path, TRUST_EXTRA_MAX, text, len) == -1) {
		snprintf(err, errlen, "%s: %s", path, errno == EFBIG ?
		    "larger than 1 MiB" : errno == EINVAL ? "not a regular file" :
		    strerror(errno));
		return -1;
	}
	if (pem_count(*text, *len, e, sizeof(e)) == -1) {
		snprintf(err, errlen, "%s: %s", path, e);
		free(*text);
		*text = NULL;
		return -1;
	}
	return 0;
}

int
trust_pem_check(const char *path, char *err, size_t errlen)
{
	char	*text;
	size_t	 len;

	if (extra_load(path, &text, &len, err, errlen) == -1)
		return -1;
	free(text);
	return 0;
}

int
trust_bundle_write(const char *dir, const struct sandbox_trust *t, char *err,
    size_t errlen)
{
	char	 path[PATH_MAX], *sys = NULL, *extra = NULL;
	size_t	 syslen = 0, extralen = 0;
	int	 fd = -1, rv = -1;

	if (t->system && read_file(TRUST_SYSTEM_BUNDLE, TRUST_SYSTEM_MAX, &sys,
	    &syslen) == -1) {
		snprintf(err, errlen, "%s: %s (install ca-certificates)",
		    TRUST_SYSTEM_BUNDLE, strerror(errno));
		goto out;
	}
	/* Checked at load too; the file may have changed since. */
	if (t->extra_ca != NULL && extra_load(t->extra_ca, &extra, &extralen,
	    err, errlen) == -1)
		goto out;
	if (xsnprintf(path, sizeof(path), "%s/%s", dir, TRUST_BUNDLE_NAME) ==
	    -1) {
		snprintf(err, errlen, "%s: path too long", dir);
		goto out;
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0444)) == -1 ||
	    (sys != NULL && write_all(fd, sys, syslen) == -1) ||
	    (extra != NULL && (write_all(fd, "\n", 1) == -1 ||
	    write_all(fd, extra, extralen) == -1))) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	rv = 0;
out:
	if (fd != -1)
		close(fd);
	free(sys);
	free(extra);
	return rv;
}
