/*
 * Certificates the egress proxy shows sandboxes: one per destination, a
 * fresh P-256 key, signed by the deployment CA (which only sandboxes
 * trust, through their profile's tls.extra_ca).  Trusts the CA files,
 * which are the operator's; writes the key 0600.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "proxy.h"
#include "util.h"

#define CERT_SERIAL_BYTES	16

static int
ssl_fail(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s: %s", what,
	    ERR_error_string(ERR_get_error(), NULL));
	return -1;
}

static int
ext_add(X509 *x, X509 *ca, int nid, const char *value)
{
	X509V3_CTX	 v3;
	X509_EXTENSION	*e;
	int		 rv;

	X509V3_set_ctx(&v3, ca, x, NULL, NULL, 0);
	if ((e = X509V3_EXT_conf_nid(NULL, &v3, nid, value)) == NULL)
		return -1;
	rv = X509_add_ext(x, e, -1) == 1 ? 0 : -1;
	X509_EXTENSION_free(e);
	return rv;
}

static int
pem_write(const char *path, mode_t mode, EVP_PKEY *key, X509 *x)
{
	FILE	*f;
	int	 fd, ok;

	(void)unlink(path);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, mode)) == -1)
		return -1;
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		return -1;
	}
	ok = key != NULL ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL,
	    NULL) : PEM_write_X509(f, x);
	if (fclose(f) != 0 || ok != 1)
		return -1;
	return 0;
}

int
proxy_cert_issue(const char *ca_cert, const char *ca_key, const char *host,
    const char *cert_out, const char *key_out, char *err, size_t errlen)
{
	EVP_PKEY	*cakey = NULL, *key = NULL;
	X509		*ca = NULL, *x = NULL;
	X509_NAME	*name;
	ASN1_INTEGER	*serial = NULL;
	BIGNUM		*bn = NULL;
	unsigned char	 rnd[CERT_SERIAL_BYTES];
	char		 san[DNS_NAME_MAX + 8];
	FILE		*f;
	int		 rv = -1;

	if ((f = fopen(ca_cert, "re")) == NULL) {
		snprintf(err, errlen, "%s: %s", ca_cert, strerror(errno));
		return -1;
	}
	ca = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (ca == NULL)
		return ssl_fail(err, errlen, ca_cert);
	if ((f = fopen(ca_key, "re")) == NULL) {
		snprintf(err, errlen, "%s: %s", ca_key, strerror(errno));
		goto out;
	}
	cakey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (cakey == NULL) {
		ssl_fail(err, errlen, ca_key);
		goto out;
	}
	if (X509_check_private_key(ca, cakey) != 1) {
		snprintf(err, errlen, "%s does not match %s", ca_key, ca_cert);
		goto out;
	}
	if ((key = EVP_EC_gen("P-256")) == NULL || (x = X509_new()) == NULL ||
	    RAND_bytes(rnd, sizeof(rnd)) != 1) {
		ssl_fail(err, errlen, "key");
		goto out;
	}
	rnd[0] &= 0x7f;		/* a positive serial */
	if ((bn = BN_bin2bn(rnd, sizeof(rnd), NULL)) == NULL ||
	    (serial = BN_to_ASN1_INTEGER(bn, NULL)) == NULL ||
	    X509_set_version(x, 2) != 1 ||
	    X509_set_serialNumber(x, serial) != 1 ||
	    X509_gmtime_adj(X509_getm_notBefore(x), -3600) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x),
	    (long)PROXY_CERT_DAYS * 86400) == NULL ||
	    X509_set_pubkey(x, key) != 1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(ca)) != 1) {
		ssl_fail(err, errlen, "certificate");
		goto out;
	}
	name = X509_get_subject_name(x);
	if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	    (const unsigned char *)host, -1, -1, 0) != 1 ||
	    xsnprintf(san, sizeof(san), "DNS:%s", host) == -1 ||
	    ext_add(x, ca, NID_subject_alt_name, san) == -1 ||
	    ext_add(x, ca, NID_basic_constraints, "critical,CA:FALSE") == -1 ||
	    ext_add(x, ca, NID_ext_key_usage, "serverAuth") == -1 ||
	    ext_add(x, ca, NID_key_usage,
	    "critical,digitalSignature") == -1 ||
	    X509_sign(x, cakey, EVP_sha256()) == 0) {
		ssl_fail(err, errlen, "certificate");
		goto out;
	}
	if (pem_write(key_out, 0600, key, NULL) == -1 ||
	    pem_write(cert_out, 0644, NULL, x) == -1) {
		snprintf(err, errlen, "%s: %s", cert_out, strerror(errno));
		goto out;
	}
	rv = 0;
out:
	ASN1_INTEGER_free(serial);
	BN_free(bn);
	X509_free(x);
	X509_free(ca);
	EVP_PKEY_free(key);
	EVP_PKEY_free(cakey);
	return rv;
}
