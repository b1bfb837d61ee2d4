/*
 * OAuth 2.1 resource server: JWT access tokens from the issuers listed in
 * rules/principals.yaml (`issuers:`).  The issuers' metadata and keys come
 * over HTTPS (jwks.c); a token is untrusted until libcjose has verified
 * its signature with a key of the issuer its `iss` names, and then its
 * claims are checked here (oauth.c).  No JWT is parsed by hand.
 *
 * Ownership: struct oauth_issuers owns its keys (oauth_issuers_clear);
 * struct oauth_ident is the caller's, filled by oauth_verify.
 */
#ifndef STOCKADE_OAUTH_H
#define STOCKADE_OAUTH_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "hash.h"
#include "sessions/profile.h"
#include "tools/tools.h"

#define OAUTH_ISSUERS_MAX	8
#define OAUTH_URL_MAX		512
#define OAUTH_SCOPES_MAX	8
#define OAUTH_SCOPE_LEN		64
#define OAUTH_CLAIM_LEN		64
#define OAUTH_PREFIX_LEN	32
#define OAUTH_PREFIX_DEFAULT	"oidc:"	/* of the only issuer, unless set */
#define OAUTH_GROUPS_MAX	32	/* entries of one issuer's groups: */
#define OAUTH_GROUP_CLAIM_LEN	256	/* a group as the token names it */
#define OAUTH_KEYS_MAX		16	/* keys kept of one JWKS */
#define OAUTH_KID_MAX		128
#define OAUTH_TOKEN_MAX		8192	/* bytes of a presented JWT */
#define OAUTH_LEEWAY_S		30	/* clock skew allowed on exp/nbf */
#define OAUTH_LEEWAY_MAX_S	300
#define OAUTH_REFRESH_MIN_S	30	/* between refreshes on unknown kid */
#define OAUTH_LOAD_TIMEOUT_MS	5000	/* one document at load or SIGHUP */
#define OAUTH_REFRESH_TIMEOUT_MS 2000	/* one document on unknown kid */
#define OAUTH_DOC_MAX		(256 * 1024)	/* metadata or JWKS bytes */
#define OAUTH_RSA_BITS_MIN	2048	/* RFC 7518 section 3.3 */
#define OAUTH_TIME_MAX		INT64_C(253402300799)	/* 9999-12-31 */

/* Signature algorithms, as a bit set; never none nor HMAC. */
enum oauth_alg {
	OAUTH_RS256 = 1 << 0, OAUTH_RS384 = 1 << 1, OAUTH_RS512 = 1 << 2,
	OAUTH_PS256 = 1 << 3, OAUTH_PS384 = 1 << 4, OAUTH_PS512 = 1 << 5,
	OAUTH_ES256 = 1 << 6, OAUTH_ES384 = 1 << 7, OAUTH_ES512 = 1 << 8,
};
#define OAUTH_ALGS_DEFAULT	(OAUTH_RS256 | OAUTH_PS256 | OAUTH_ES256)

struct jwks_fetch;

struct oauth_key {
	void		*jwk;		/* cjose_jwk_t */
	char		 kid[OAUTH_KID_MAX];	/* "" if the JWK has none */
	unsigned	 alg;		/* the JWK's alg; 0 if it names none */
};

/* A group an issuer's tokens name, and the group of ours it stands for. */
struct oauth_group {
	char		 claim[OAUTH_GROUP_CLAIM_LEN];	/* exact bytes */
	char		 group[CLIENT_GROUP_MAX];
};

struct oauth_issuer {
	char		 issuer[OAUTH_URL_MAX];
	char		 audience[OAUTH_URL_MAX];	/* our resource URI */
	char		 scopes[OAUTH_SCOPES_MAX][OAUTH_SCOPE_LEN]; /* required */
	size_t		 nscopes;
	char		 principal_claim[OAUTH_CLAIM_LEN];	/* "sub" */
	char		 principal_prefix[OAUTH_PREFIX_LEN];	/* never "" */
	char		 groups_claim[OAUTH_CLAIM_LEN];		/* "" none */
	/* Only these of its groups count, each as the group of ours it maps
	 * to: no other issuer's, and no static token's (principals.c). */
	struct oauth_group groups[OAUTH_GROUPS_MAX];
	size_t		 ngroups;
	unsigned	 algs;
	int64_t		 leeway_s;
	int64_t		 refresh_min_s;
	int		 insecure_http_loopback;	/* tests only */
	char		 ca_file[PATH_MAX];	/* "" system trust store */
	char		 jwks_uri[OAUTH_URL_MAX];	/* set, or discovered */
	int		 jwks_configured;
	struct oauth_key keys[OAUTH_KEYS_MAX];
	size_t		 nkeys;
	uint64_t	 refreshed_ms;	/* last refresh on demand; 0 never */
	struct jwks_fetch *fetch;	/* under way (jwks.c); NULL none */
};

struct oauth_issuers {
	struct oauth_issuer	 v[OAUTH_ISSUERS_MAX];
	size_t			 n;
};

/* What a verified token says; strings are "" when the token lacks them. */
struct oauth_ident {
	char		 principal[PRINCIPAL_MAX];
	char		 issuer[OAUTH_URL_MAX];
	char		 subject[CLIENT_SUBJECT_MAX];
	char		 client_id[CLIENT_ID_MAX];
	char		 jti_sha256[SHA256_HEX + 1];
	char		 groups[CLIENT_GROUPS_MAX][CLIENT_GROUP_MAX];	/* ours */
	size_t		 ngroups;
	char		 scope_needed[OAUTH_SCOPES_MAX * OAUTH_SCOPE_LEN];
};

enum oauth_verdict {
	OAUTH_OK,
	OAUTH_INVALID,		/* 401 invalid_token */
	OAUTH_SCOPE,		/* 403 insufficient_scope, scope_needed set */
	OAUTH_PENDING,		/* ask again when an issuer's fetch ends */
};

/* What a verification may do about a kid it lacks. */
enum oauth_wait {
	OAUTH_FETCH,		/* start a refetch (rate-limited) and wait */
	OAUTH_WAIT,		/* wait for one under way, start none */
	OAUTH_NOWAIT,		/* neither: refuse */
};

struct conf_ctx;
/* The `issuers:` list of principals.yaml (node may be NULL: none). */
void	oauth_conf_load(struct conf_ctx *, const json_t *arr,
	    struct oauth_issuers *);
/*
 * An issuer of set without keys yet takes those it had in old (the rules
 * before a SIGHUP) until its own fetch brings new ones: a provider slow
 * or down at reload time locks no client out.
 */
void	oauth_issuers_inherit(struct oauth_issuers *set,
	    const struct oauth_issuers *old);
/* Frees every key. */
void	oauth_issuers_clear(struct oauth_issuers *);
/* One alg name's bit, 0 for a name we do not verify. */
unsigned oauth_alg_bit(const char *);

/*
 * Discovery and JWKS for every issuer, each document bounded by
 * OAUTH_LOAD_TIMEOUT_MS: waited for before jwks_attach (at start), beside
 * the loop after it (SIGHUP).  An issuer that cannot be reached keeps the
 * keys it has (none at start: its tokens are refused, and refetch is
 * tried on demand).
 */
void	jwks_load_all(struct oauth_issuers *);
/*
 * Refetch one issuer's keys, at most once per refresh_min_s: 1 under way
 * (ask again once it ends), 0 done (before jwks_attach, which waits),
 * -1 not now (rate-limited).
 */
int	jwks_refresh(struct oauth_issuer *, uint64_t now_ms);
/* Stops the issuer's fetch under way, if any (oauth_issuers_clear). */
void	jwks_fetch_cancel(struct oauth_issuer *);
/*
 * From now on fetches run on base's loop; done(arg) is called on it each
 * time one ends.  jwks_detach stops those under way (shutdown).
 */
struct event_base;
void	jwks_attach(struct event_base *, void (*done)(void *), void *arg);
void	jwks_detach(void);
/* Replaces the issuer's keys with those of a JWKS document (a JSON
 * object, borrowed); returns how many were kept. */
size_t	jwks_set_keys(struct oauth_issuer *, const json_t *jwks);

/*
 * Verifies token (untrusted bytes) against the issuers at time now
 * (seconds).  On a kid its issuer lacks, wait says whether it may start
 * a refetch or wait for one under way: then OAUTH_PENDING.  why gets a
 * reason for the audit trail and the log, never for the client.
 */
enum oauth_verdict oauth_verify(struct oauth_issuers *, const char *token,
	    size_t len, int64_t now, enum oauth_wait wait,
	    struct oauth_ident *, char *why, size_t whylen);
/* The checks after the signature: claims is the verified payload. */
enum oauth_verdict oauth_claims_check(const struct oauth_issuer *,
	    const json_t *claims, int64_t now, struct oauth_ident *,
	    char *why, size_t whylen);

#endif
