/*
 * MCP over stdio: one JSON-RPC message per line on stdin and stdout; logs
 * go to stderr only.  When stdin closes, every session's sandbox is
 * killed and the loop ends.
 */
#ifndef STOCKADE_TRANSPORT_STDIO_H
#define STOCKADE_TRANSPORT_STDIO_H

#include "sessions/server.h"

int	transport_stdio_start(struct server *);

#endif
