/*
 * Code retention: what the log keeps of the code an execution_started
 * event carries (`code`), by rules/audit.yaml's code.retention, and with
 * it of a code_execution's output samples; and the policy texts a
 * policy_load carries.  The writer sends them whatever the policy; the
 * daemon alone decides.
 */
#ifndef STOCKADE_RETENTION_H
#define STOCKADE_RETENTION_H

#include <stddef.h>
#include <jansson.h>

#include "config.h"
#include "hash.h"

/* What to store in the blob store: code (full retention), or the
 * policy files a policy_load carries, one per file in a list. */
struct retained_code {
	char	 hex[SHA256_HEX + 1];
	char	*data;		/* NULL: nothing to store; caller frees */
	size_t	 len;
	struct retained_code *next;	/* heap; retention_free */
};

/*
 * Checks ev's `code` against its code_hash and code_size, removes it and
 * adds code_retention (and code_head / code_tail for sample).  With full
 * retention out->data is the code to store before the record.  An event
 * without `code` is left as it is, except that execution_started must
 * carry it when the policy keeps more than the hash.  A code_execution's
 * stdout_sample / stderr_sample stay only where the code is kept at least
 * as a sample (output_retention says which).  Each policy_load
 * files[].content that hashes to its sha256 (AUDIT_POLICY_KEEP_MAX bytes
 * in all) moves out of the record into out's list, the file marked kept.
 * -1 with err when the event is refused; the caller frees out either way.
 */
int	retention_apply(const struct audit_conf *, json_t *ev,
	    struct retained_code *out, char *err, size_t errlen);
/* Frees what the writer did not take: out's data and its list. */
void	retention_free(struct retained_code *out);

#endif
