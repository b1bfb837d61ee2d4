/*
 * A networked sandbox's trust store: the host's CA bundle (Debian's
 * ca-certificates) and at most one extra CA file named by the operator's
 * profile, combined on the host side into the sandbox's directory and bound
 * read-only at TRUST_CA_FILE.  Nothing here reads what a sandbox wrote.
 */
#ifndef STOCKADE_SANDBOX_TRUST_H
#define STOCKADE_SANDBOX_TRUST_H

#include <stddef.h>

#define TRUST_SYSTEM_DIR	"/etc/ssl/certs"	/* bound read-only */
#define TRUST_SYSTEM_BUNDLE	"/etc/ssl/certs/ca-certificates.crt"
#define TRUST_CA_DIR		"/etc/ssl/stockade"
#define TRUST_CA_FILE		"/etc/ssl/stockade/ca.pem"	/* inside */
#define TRUST_BUNDLE_NAME	"ca.pem"	/* in the sandbox's host dir */
#define TRUST_EXTRA_MAX		(1024 * 1024)	/* an extra CA file */
#define TRUST_SYSTEM_MAX	(8 * 1024 * 1024)	/* Debian's is ~220 KiB */

struct sandbox_trust {
	int		 system;	/* the host's bundle and TRUST_SYSTEM_DIR */
	const char	*extra_ca;	/* NULL, or a PEM file on the host */
};

/* What points TLS clients at TRUST_CA_FILE (NULL-terminated). */
extern const char *const trust_env[];

/*
 * 0 when path is a regular PEM file of at most TRUST_EXTRA_MAX bytes
 * holding at least one certificate, every one OpenSSL parses, and no
 * private key (it would be copied into every sandbox); else -1 with err.
 */
int	trust_pem_check(const char *path, char *err, size_t errlen);
/* Writes dir/TRUST_BUNDLE_NAME (mode 0444) from t; -1 with err. */
int	trust_bundle_write(const char *dir, const struct sandbox_trust *t,
	    char *err, size_t errlen);

#endif
