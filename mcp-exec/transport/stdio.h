/*
 * MCP over stdio: one JSON-RPC message per line on stdin and stdout; logs
 * go to stderr only.  When stdin closes, every session's sandbox is
 * killed and the loop ends.
 */
#ifndef STOCKADE_TRANSPORT_STDIO_H
#define STOCKADE_TRANSPORT_STDIO_H

#include "sessions/server.h"

int	transport_stdio_start(struct server *);
/* After the loop (a signal ended it): what stdout still holds goes out,
 * and the transport is freed; nothing when stdin's end did it already. */
void	transport_stdio_stop(void);

#endif
