/*
 * mTLS for the HTTP listener: an SSL_CTX that asks for (or requires) a
 * client certificate, verified by OpenSSL against the configured CA and
 * CRL; rules pick the principal from the subject CN or a SAN.  The
 * certificate's bytes are the client's: only what OpenSSL verified and
 * decoded is read, and every name is checked as a principal name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "conf.h"
#include "log.h"
#include "mtls.h"
#include "principals.h"
#include "util.h"

static const char *const mtls_froms[] = { "cn", "san_email", "san_dns",
    "san_uri", NULL };

static void
get_path(struct conf_ctx *ctx, const json_t *o, const char *key, char *out,
    size_t max, int required)
{
	const char	*s;

	if (conf_get_string(ctx, o, key, &s) != 1) {
		if (required && json_object_get(o, key) == NULL)
			conf_error(ctx, o, "mtls: missing '%s'", key);
		return;
	}
	if (*s != '/' || strlen(s) >= max)
		conf_error(ctx, json_object_get(o, key), "%s: an absolute "
		    "path", key);
	else
		snprintf(out, max, "%s", s);
}

static void
load_rule(struct conf_ctx *ctx, const json_t *o, struct mtls_conf *m)
{
	static const char *const keys[] = { "from", "match", "prefix", NULL };
	struct mtls_rule	*r = &m->rules[m->nrules];
	const char		*s;
	int			 from;

	if (conf_expect_object(ctx, o, "mtls.principal entry") == -1)
		return;
	conf_check_keys(ctx, o, keys);
	memset(r, 0, sizeof(*r));
	if (conf_get_enum(ctx, o, "from", mtls_froms, &from) != 1) {
		if (json_object_get(o, "from") == NULL)
			conf_error(ctx, o, "mtls.principal: missing 'from' (cn, "
			    "san_email, san_dns or san_uri)");
		return;
	}
	r->from = (enum mtls_from)from;
	snprintf(r->prefix, sizeof(r->prefix), "cert:");
	if (conf_get_string(ctx, o, "match", &s) == 1) {
		if (strlen(s) >= sizeof(r->match))
			conf_error(ctx, json_object_get(o, "match"), "match: "
			    "at most %d bytes", MTLS_MATCH_LEN - 1);
		snprintf(r->match, sizeof(r->match), "%s", s);
	}
	if (conf_get_string(ctx, o, "prefix", &s) == 1) {
		if (strlen(s) >= sizeof(r->prefix) || (*s != '\0' &&
		    !principal_name_ok(s)))
			conf_error(ctx, json_object_get(o, "prefix"), "prefix: "
			    "at most %d bytes of printable ASCII, no spaces",
			    MTLS_PREFIX_LEN - 1);
		snprintf(r->prefix, sizeof(r->prefix), "%s", s);
	}
	m->nrules++;
}

void
mtls_conf_load(struct conf_ctx *ctx, const json_t *node, struct mtls_conf *m)
{
	static const char *const keys[] = { "cert_file", "key_file",
	    "ca_file", "crl_file", "require", "principal", NULL };
	const json_t	*v;
	json_t		*arr;
	size_t		 i;

	memset(m, 0, sizeof(*m));
	if (node == NULL || json_is_null(node))
		return;
	if (conf_expect_object(ctx, node, "mtls") == -1)
		return;
	conf_check_keys(ctx, node, keys);
	m->enabled = 1;
	m->require = 1;
	get_path(ctx, node, "cert_file", m->cert_file, sizeof(m->cert_file), 1);
	get_path(ctx, node, "key_file", m->key_file, sizeof(m->key_file), 1);
	get_path(ctx, node, "ca_file", m->ca_file, sizeof(m->ca_file), 1);
	get_path(ctx, node, "crl_file", m->crl_file, sizeof(m->crl_file), 0);
	(void)conf_get_bool(ctx, node, "require", &m->require);
	if (conf_get_array(ctx, node, "principal", &arr) != 1) {
		/* The default rule: the subject's CN, as cert:CN. */
		m->rules[0].from = MTLS_CN;
		snprintf(m->rules[0].prefix, sizeof(m->rules[0].prefix),
		    "cert:");
		m->nrules = 1;
		return;
	}
	if (json_array_size(arr) == 0 || json_array_size(arr) >
	    MTLS_RULES_MAX) {
		conf_error(ctx, arr, "mtls.principal: 1 to %d rules",
		    MTLS_RULES_MAX);
		return;
	}
	json_array_foreach(arr, i, v)
		load_rule(ctx, v, m);
}

int
mtls_rule_apply(const struct mtls_rule *r, const char *value, size_t vlen,
    char *out, size_t outlen)
{
	size_t	 mlen = strlen(r->match);

	/* A NUL inside an ASN.1 string would cut the name short: refused. */
	if (vlen == 0 || memchr(value, '\0', vlen) != NULL)
		return -1;
	if (vlen < mlen || memcmp(value, r->match, mlen) != 0)
		return -1;
	if (xsnprintf(out, outlen, "%s%.*s", r->prefix, (int)vlen, value) ==
	    -1 || !principal_name_ok(out))
		return -1;
	return 0;
}

static int
rule_cn(const struct mtls_rule *r, X509 *cert, char *out, size_t outlen)
{
	X509_NAME	*name = X509_get_subject_name(cert);
	X509_NAME_ENTRY	*e;
	ASN1_STRING	*d;
	int		 i;

	/* Exactly one CN: with two, which one is the client? */
	if ((i = X509_NAME_get_index_by_NID(name, NID_commonName, -1)) < 0 ||
	    X509_NAME_get_index_by_NID(name, NID_commonName, i) >= 0)
		return -1;
	e = X509_NAME_get_entry(name, i);
	d = X509_NAME_ENTRY_get_data(e);
	return mtls_rule_apply(r, (const char *)ASN1_STRING_get0_data(d),
	    (size_t)ASN1_STRING_length(d), out, outlen);
}

static int
rule_san(const struct mtls_rule *r, X509 *cert, char *out, size_t outlen)
{
	GENERAL_NAMES	*sans;
	GENERAL_NAME	*g;
	ASN1_STRING	*d;
	int		 i, type, ok = -1;

	type = r->from == MTLS_SAN_EMAIL ? GEN_EMAIL : r->from ==
	    MTLS_SAN_DNS ? GEN_DNS : GEN_URI;
	if ((sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL,
	    NULL)) == NULL)
		return -1;
	for (i = 0; ok == -1 && i < sk_GENERAL_NAME_num(sans); i++) {
		g = sk_GENERAL_NAME_value(sans, i);
		if (g->type != type)
			continue;
		d = g->d.ia5;
		ok = mtls_rule_apply(r, (const char *)ASN1_STRING_get0_data(d),
		    (size_t)ASN1_STRING_length(d), out, outlen);
	}
	GENERAL_NAMES_free(sans);
	return ok;
}

static void
cert_id(X509 *cert, char *subject, size_t sublen, char sha[SHA256_HEX + 1])
{
	uint8_t		 md[SHA256_LEN];
	unsigned	 n = 0;

	subject[0] = '\0';
	sha[0] = '\0';
	if (cert == NULL)
		return;
	X509_NAME_oneline(X509_get_subject_name(cert), subject, (int)sublen);
	str_ascii(subject);
	if (X509_digest(cert, EVP_sha256(), md, &n) == 1 && n == SHA256_LEN)
		hex_encode(md, SHA256_LEN, sha);
}

int
mtls_principal(const struct mtls_conf *m, X509 *cert, char *out,
    size_t outlen, char *subject, size_t sublen, char sha[SHA256_HEX + 1])
{
	size_t	 i;

	cert_id(cert, subject, sublen, sha);
	for (i = 0; cert != NULL && i < m->nrules; i++)
		if ((m->rules[i].from == MTLS_CN ? rule_cn(&m->rules[i], cert,
		    out, outlen) : rule_san(&m->rules[i], cert, out,
		    outlen)) == 0)
			return 0;
	return -1;
}

/* OpenSSL's verdict stands; a refusal is told to the transport. */
static int
mtls_verify_cb(int ok, X509_STORE_CTX *x)
{
	SSL		*ssl;
	struct mtls_hook *hook;
	char		 subject[256], sha[SHA256_HEX + 1];

	if (ok)
		return 1;
	ssl = X509_STORE_CTX_get_ex_data(x,
	    SSL_get_ex_data_X509_STORE_CTX_idx());
	if (ssl == NULL || (hook = SSL_get_app_data(ssl)) == NULL ||
	    hook->refused == NULL)
		return 0;
	cert_id(X509_STORE_CTX_get0_cert(x), subject, sizeof(subject), sha);
	hook->refused(hook->arg, ssl, X509_verify_cert_error_string(
	    X509_STORE_CTX_get_error(x)), subject, sha);
	return 0;
}

int
mtls_prepare(struct mtls_conf *m)
{
	X509_STORE	*store;
	X509_LOOKUP	*lookup;
	SSL_CTX		*ctx;

	if (!m->enabled)
		return 0;
	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL)
		fatalx("SSL_CTX_new");
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/* http_head.c writes through SSL_write, retrying from a moved buffer. */
	SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
	    SSL_MODE_ENABLE_PARTIAL_WRITE);
	if (SSL_CTX_use_certificate_chain_file(ctx, m->cert_file) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, m->key_file,
	    SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
		log_warnx("mtls: %s / %s: %s", m->cert_file, m->key_file,
		    ERR_reason_error_string(ERR_get_error()));
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(ctx, m->ca_file, NULL) != 1) {
		log_warnx("mtls: ca_file %s: %s", m->ca_file,
		    ERR_reason_error_string(ERR_get_error()));
		goto fail;
	}
	/* The client CAs are named in the handshake, so clients pick right. */
	SSL_CTX_set_client_CA_list(ctx, SSL_load_client_CA_file(m->ca_file));
	if (m->crl_file[0] != '\0') {
		store = SSL_CTX_get_cert_store(ctx);
		if ((lookup = X509_STORE_add_lookup(store,
		    X509_LOOKUP_file())) == NULL || X509_load_crl_file(lookup,
		    m->crl_file, X509_FILETYPE_PEM) < 1) {
			log_warnx("mtls: crl_file %s: %s", m->crl_file,
			    ERR_reason_error_string(ERR_get_error()));
			goto fail;
		}
		X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK |
		    X509_V_FLAG_CRL_CHECK_ALL);
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | (m->require ?
	    SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), mtls_verify_cb);
	SSL_CTX_set_verify_depth(ctx, 4);
	m->ctx = ctx;
	return 0;
fail:
	ERR_clear_error();
	SSL_CTX_free(ctx);
	return -1;
}

void
mtls_clear(struct mtls_conf *m)
{
	if (m->ctx != NULL)
		SSL_CTX_free(m->ctx);
	m->ctx = NULL;
}
