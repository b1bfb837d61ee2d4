/*
 * How a call ended, in words for the model (tools/messages.c).
 */
#ifndef STOCKADE_TOOLS_MESSAGES_H
#define STOCKADE_TOOLS_MESSAGES_H

#include <stddef.h>

#include "sessions/session.h"

/* Into buf; empty when the code simply exited. */
void	end_message(const struct call_result *, unsigned timeout_ms,
	    char *buf, size_t len);

#endif
