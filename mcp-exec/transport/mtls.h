/*
 * Client certificates on the HTTP listener (rules/principals.yaml `mtls:`):
 * the server's certificate and key, the CA that issues client
 * certificates and its CRL, and rules that turn a verified certificate
 * into a principal.  A certificate is the client's and untrusted until
 * OpenSSL has verified it against that CA; then only its subject CN or a
 * SAN, as the rules say, names the principal.
 *
 * Ownership: struct mtls_conf owns its SSL_CTX (mtls_clear).
 */
#ifndef STOCKADE_MTLS_H
#define STOCKADE_MTLS_H

#include <limits.h>
#include <stddef.h>

#include <jansson.h>
#include <openssl/ssl.h>

#include "hash.h"

#define MTLS_RULES_MAX		8
#define MTLS_MATCH_LEN		128
#define MTLS_PREFIX_LEN		32

enum mtls_from { MTLS_CN, MTLS_SAN_EMAIL, MTLS_SAN_DNS, MTLS_SAN_URI };

struct mtls_rule {
	enum mtls_from	 from;
	char		 match[MTLS_MATCH_LEN];	/* the value starts so; "" any */
	char		 prefix[MTLS_PREFIX_LEN];	/* prepended: "cert:" */
};

struct mtls_conf {
	int		 enabled;
	int		 require;	/* no valid certificate, no handshake */
	char		 cert_file[PATH_MAX], key_file[PATH_MAX];
	char		 ca_file[PATH_MAX], crl_file[PATH_MAX];
	struct mtls_rule rules[MTLS_RULES_MAX];
	size_t		 nrules;
	SSL_CTX		*ctx;	/* mtls_prepare; NULL before */
};

/*
 * Told of every certificate refused in a handshake (set on each SSL with
 * SSL_set_app_data): why, and the certificate's subject and sha256.
 */
struct mtls_hook {
	void	(*refused)(void *arg, SSL *, const char *why,
		    const char *subject, const char *cert_sha256);
	void	*arg;
};

struct conf_ctx;
void	mtls_conf_load(struct conf_ctx *, const json_t *node,
	    struct mtls_conf *);
/* Builds the SSL_CTX from the files; -1 after logging. */
int	mtls_prepare(struct mtls_conf *);
void	mtls_clear(struct mtls_conf *);
/*
 * The principal a verified certificate stands for, by the first rule
 * that matches (out), its subject and sha256; -1 when no rule matches.
 */
int	mtls_principal(const struct mtls_conf *, X509 *, char *out,
	    size_t outlen, char *subject, size_t sublen,
	    char sha[SHA256_HEX + 1]);
/* One rule's match of one value (the fuzzed part); 0 or -1. */
int	mtls_rule_apply(const struct mtls_rule *, const char *value,
	    size_t vlen, char *out, size_t outlen);

#endif
