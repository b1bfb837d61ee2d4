/*
 * The audit trail of `mcp-exec run`: the same execution_started /
 * code_execution pair a tool call writes, the OS user as principal, and
 * artifact_delivered for each artifact the run copies out.  Blocking
 * (lib/audit_client.c): execution_started is acked (durable) before the
 * command runs, or the run is refused when the audit is required; the
 * sandbox is built while that ack is on its way.
 */
#ifndef STOCKADE_RUN_AUDIT_H
#define STOCKADE_RUN_AUDIT_H

#include <stddef.h>
#include <jansson.h>

#include "audit_client.h"
#include "run.h"

#define RUN_PRINCIPAL_MAX	300	/* "user:" and a login name */
#define RUN_AUDIT_INFLIGHT	32	/* records sent, acks not read yet */

struct run_audit {
	struct audit_client	 ac;
	int			 open;		/* 0: unaudited run */
	char			 principal[RUN_PRINCIPAL_MAX];
	char			 code_hash[7 + SHA256_HEX + 1];
	size_t			 code_size;
	json_t			*argv;
	json_t			*client;
	char			 session[64];	/* "run-<sandbox id>" */
	uint64_t		 started_id;	/* execution_started's ack */
	int			 pending;	/* ... not read yet */
	int			 refused;	/* required, and unavailable */
	int			 sent;		/* code_execution is on its way */
	unsigned		 inflight;	/* acks of those not read yet */
};

/*
 * Sends execution_started for rq (session_id "run-<sandbox id>"); its ack
 * is run_audit_confirm's.  0: go on building (audited, or not required: a
 * warning was logged); -1 with err: the run must not start.
 */
int	run_audit_start(struct run_audit *, const struct run_request *,
	    const char *socket_path, const char *session, char *err,
	    size_t errlen);
/*
 * Waits for execution_started's ack: the record is durable.  0: the
 * command may run (audited, or not required: a warning was logged); -1
 * with err: it must not.  Called before the command runs, and by
 * run_audit_end when the run never got that far.
 */
int	run_audit_confirm(struct run_audit *, const struct run_request *,
	    char *err, size_t errlen);
/*
 * Sends code_execution from the run's result (NULL: it failed with err)
 * and artifact_delivered for each artifact copied out, without waiting:
 * the sandbox is torn down meanwhile.  Once only.
 */
void	run_audit_result(struct run_audit *, const struct run_request *,
	    const json_t *result, const char *err);
/* run_audit_result unless done, then reads every ack; closes. */
void	run_audit_end(struct run_audit *, const struct run_request *,
	    const json_t *result, const char *err);

#endif
