/*
 * A session's package layer (profile packages.install): pip's environment
 * inside the sandbox, and after each call what the layer holds, for the
 * audit.  The layer is written by sandboxed code (pip runs there), so the
 * list is what the session claims to have installed, read with care.
 *
 * Ownership: a pkg_layer holds its strings and hashes until packages_free;
 * it must outlive the sandbox_spec it was prepared for.
 */
#ifndef STOCKADE_PACKAGES_H
#define STOCKADE_PACKAGES_H

#include <jansson.h>

#include "profile.h"
#include "sandbox/sandbox.h"

#define PKG_ENV_MAX	24		/* trust_env and pip's, with NULL */
#define PKG_LIST_MAX	1024		/* dist-info dirs listed */
#define PKG_REPORT_MAX	(1024 * 1024)	/* pip's --report, bytes */
#define PKG_REPORT	".pip-report.json"	/* in the layer's root */

struct pkg_layer {
	int		 on;
	char		 index_env[PROFILE_URL_MAX + 16];
	const char	*env[PKG_ENV_MAX];
	json_t		*hashes;	/* "name==version" -> {sha256, url} */
};

/*
 * When p has packages.install: spec gets the layer and pip's environment
 * (after what spec->env_extra already held).
 */
void	 packages_prepare(struct pkg_layer *, struct sandbox_spec *,
	    const struct profile *p);
/*
 * After a call: takes pip's report (the wheels' sha256) out of the layer
 * under sandbox_dir and lists what it holds, [{name, version, sha256,
 * url}] sorted by name (sha256 and url null when no report named the
 * wheel).  A new reference; NULL when the session has no layer.
 */
json_t	*packages_list(struct pkg_layer *, const char *sandbox_dir);
void	 packages_free(struct pkg_layer *);
/* pip's --report (untrusted, len bytes) into pl->hashes; what is not a
 * well-formed install entry with a sha256 is left out. */
void	 packages_report_parse(struct pkg_layer *, const char *buf,
	    size_t len);

#endif
