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

/* The code to store in the blob store (full retention). */
struct retained_code {
	char	 hex[SHA256_HEX + 1];
	char	*data;		/* NULL: nothing to store; caller frees */
	size_t	 len;
};

/*
 * Checks ev's `code` against its code_hash and code_size, removes it and
 * adds code_retention (and code_head / code_tail for sample).  With full
 * retention out->data is the code to store before the record.  An event
 * without `code` is left as it is, except that execution_started must
 * carry it when the policy keeps more than the hash.  -1 with err when
 * the event is refused.
 */
int	retention_apply(const struct audit_conf *, json_t *ev,
	    struct retained_code *out, char *err, size_t errlen);

#endif
