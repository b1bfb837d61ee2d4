/*
 * Private to tools.c and call_start.c: one execute_python or run_command
 * call on its way.  call_start.c audits its start and runs it (or records
 * why it does not run); tools.c answers it from its result and frees it.
 */
#ifndef STOCKADE_PYCALL_H
#define STOCKADE_PYCALL_H

#include <event2/event.h>
#include <jansson.h>

#include "sessions/inflight.h"
#include "sessions/quota.h"
#include "sessions/session.h"
#include "tools_int.h"

/* One execute_python call on its way. */
struct pycall {
	struct tool_req	*rq;
	struct server	*srv;
	struct call	*call;
	char		 sid[SESSION_ID_MAX];
	char		*code;		/* until it runs */
	size_t		 code_len;
	json_t		*progress_token;
	uint64_t	 progress;
	char		 principal[PRINCIPAL_MAX];
	char		 code_hash[7 + SHA256_HEX + 1];
	size_t		 code_size;
	unsigned	 timeout_ms;
	json_t		*hits;
	const char	*tool;		/* execute_python or run_command */
	const struct profile *prof;	/* the session's: it outlives the call */
	json_t		*argv;		/* run_command's, for the audit */
	json_t		*inputs;	/* staged files, for the audit */
	int		 oneshot;	/* close the session afterwards */
	int		 created;	/* the session was made for this call */
	struct quota_bill bill;		/* charged when it ends */
	int		 billed;	/* quota_call_begin was called */
	uint64_t	 lease;		/* fleet concurrent_calls (fleet_quota.h) */
	/* Its line in the in-flight journal: closed by its end's record. */
	struct inflight	*inflight;
	int		 unjournaled;	/* the journal could not be written */
	/* The call's timeout bounds its wait for execution_started's ack:
	 * past it the call is answered, refused, and gave_up set until the
	 * ack (or its failure) comes and frees it. */
	struct event	*audit_wait;
	uint64_t	 t0;		/* mono ms, execution_started sent */
	int		 gave_up;
};

/* tools.c: the hooks of a running call, its bill, its end. */
void	pycall_done(void *arg, const struct call_result *);
void	pycall_progress(void *arg, int stream, const char *data, size_t len,
	    uint64_t total);
void	pycall_cancel(struct tool_req *);
/* Charges the call's quotas once (r NULL: it never ran). */
void	pycall_bill(struct pycall *, const struct call_result *r);
void	pycall_free(struct pycall *);

#endif
