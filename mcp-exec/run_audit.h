/*
 * The audit trail of `mcp-exec run`: the same execution_started /
 * code_execution pair a tool call writes, the OS user as principal, and
 * artifact_delivered for each artifact the run copies out.  Blocking
 * (lib/audit_client.c): execution_started is acked before the command
 * runs, or the run is refused when the audit is required.
 */
#ifndef STOCKADE_RUN_AUDIT_H
#define STOCKADE_RUN_AUDIT_H

#include <stddef.h>
#include <jansson.h>

#include "audit_client.h"
#include "run.h"

#define RUN_PRINCIPAL_MAX	300	/* "user:" and a login name */

struct run_audit {
	struct audit_client	 ac;
	int			 open;		/* 0: unaudited run */
	char			 principal[RUN_PRINCIPAL_MAX];
	char			 code_hash[7 + SHA256_HEX + 1];
	size_t			 code_size;
	json_t			*argv;
	json_t			*client;
};

/*
 * Writes execution_started for rq (session_id "run-<sandbox id>") and
 * waits for its ack.  0: go on (audited, or not required: a warning was
 * logged); -1 with err: the run must not start.
 */
int	run_audit_start(struct run_audit *, const struct run_request *,
	    const char *socket_path, const char *session, char *err,
	    size_t errlen);
/* code_execution from the run's result (NULL: it failed with err), and
 * artifact_delivered for each artifact copied out; then closes. */
void	run_audit_end(struct run_audit *, const struct run_request *,
	    const char *session, const json_t *result, const char *err);

#endif
