/*
 * Who may use the HTTP transport (rules/principals.yaml): bearer tokens,
 * kept only as SHA-256 hashes, each standing for one principal; OAuth
 * issuers (oauth.h) and client certificate rules (mtls.h).  The file
 * is operator input, validated whole; a presented token is the client's,
 * untrusted, and is looked up in time that does not depend on its value.
 *
 * Ownership: a struct principals owns its entries; principals_lookup()
 * returns a string borrowed until principals_free().
 */
#ifndef STOCKADE_PRINCIPALS_H
#define STOCKADE_PRINCIPALS_H

#include <stddef.h>

#include "sessions/profile.h"
#include "tools/tools.h"

#define PRINCIPALS_FILE		"principals.yaml"
#define PRINCIPALS_TOKENS_MAX	256
#define PRINCIPALS_TOKEN_LEN_MAX 4096	/* bytes of a presented token */

struct principals;
struct oauth_issuers;
struct mtls_conf;

/* NULL after printing file:line:column errors; a missing file has no tokens. */
struct principals	*principals_load(const char *rules_dir);
void			 principals_free(struct principals *);
size_t			 principals_count(const struct principals *);
/* The principal the token stands for, or NULL (unknown, empty, too long). */
const char		*principals_lookup(const struct principals *,
			    const char *token, size_t len);
/* Whether an HTTP client must prove who it is: tokens, issuers or mTLS. */
int			 principals_auth_required(const struct principals *);
/*
 * For a server (not `stockade rules check`): fetches the issuers' keys
 * (bounded in time, see jwks.c) and loads the mTLS files; -1 when the
 * mTLS files do not load.
 */
int			 principals_prepare(struct principals *);
struct oauth_issuers	*principals_issuers(struct principals *);
struct mtls_conf	*principals_mtls(struct principals *);
/* The groups the principal's token entries name, into out[max]. */
unsigned		 principals_groups(const struct principals *,
			    const char *principal,
			    char out[][CLIENT_GROUP_MAX], unsigned max);
/* 1 for a principal name: printable ASCII, no spaces, 1 to 255 bytes. */
int			 principal_name_ok(const char *);

#endif
