/*
 * The tool port's calls (tools.h): a tool answers, logs and notifies
 * through the protocol's port, never through protocol/ itself.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"
#include "tools.h"

void
tool_result(struct tool_req *rq, json_t *result)
{
	/* A reply that could not be built is still a reply. */
	if (result == NULL) {
		log_warnx("a tool result could not be encoded");
		rq->port->fault(rq, TOOL_INTERNAL, "internal error");
		return;
	}
	rq->port->result(rq, result);
}

void
tool_fault(struct tool_req *rq, enum tool_fault f, const char *fmt, ...)
{
	char	 text[TOOL_FAULT_MAX];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	rq->port->fault(rq, f, text);
}

void
tool_fault_data(struct tool_req *rq, enum tool_fault f, json_t *data,
    const char *fmt, ...)
{
	char	 text[TOOL_FAULT_MAX];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	rq->fault_data = data;
	rq->port->fault(rq, f, text);
}

void
tool_drop(struct tool_req *rq)
{
	rq->port->drop(rq);
}

void
tool_notify(struct tool_req *rq, const char *method, json_t *params)
{
	rq->port->notify(rq, method, params);
}

void
tool_log(struct tool_req *rq, const char *level, json_t *data)
{
	rq->port->log(rq, level, data);
}

int
tool_reachable(struct tool_req *rq)
{
	return rq->port->reachable(rq);
}

void
tool_cancel(struct tool_req *rq)
{
	if (rq->cancelled)
		return;
	rq->cancelled = 1;
	if (rq->cancel != NULL)
		rq->cancel(rq);
}
