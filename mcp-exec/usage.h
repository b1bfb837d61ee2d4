/*
 * What `mcp-exec` (the one-shot runner and front) and `mcp-exec-server`
 * (the MCP server it execs) say alike: the usage text, the root check and
 * where the rules live by default.
 */
#ifndef STOCKADE_USAGE_H
#define STOCKADE_USAGE_H

#define MCPEXEC_DEFAULT_RULES	"/etc/stockade/rules"
/* The server, beside the front (build/ and PREFIX/sbin alike). */
#define MCPEXEC_SERVER		"mcp-exec-server"

/* Prints the usage of both and exits 2. */
void	mcpexec_usage(void) __attribute__((noreturn));
/* -h, --help: the same on stdout, exit 0. */
void	mcpexec_help(void) __attribute__((noreturn));
/* 0 as root; otherwise says why root is needed and returns -1. */
int	mcpexec_need_root(void);

#endif
