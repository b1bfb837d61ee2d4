/*
 * Code retention: what the log keeps of the code an execution_started
 * event carries (`code`), by rules/audit.yaml's code.retention.  The
 * writer sends the code whatever the policy; the daemon alone decides.
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
 * carry it when the policy keeps more than the hash.  -1 with err when
 * the event is refused.
 */
/*
 * Also takes each policy_load files[].content that hashes to its sha256
 * (AUDIT_POLICY_KEEP_MAX bytes in all) out of the record into the list,
 * marking the file kept: true.
 */
int	retention_apply(const struct audit_conf *, json_t *ev,
	    struct retained_code *out, char *err, size_t errlen);
/* Frees what the writer did not take: out's data and its list. */
void	retention_free(struct retained_code *out);

#endif
