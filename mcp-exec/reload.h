/*
 * The policy mcp-exec serves, from the rules directory named on its
 * command line: loaded whole at start and on SIGHUP, swapped only when
 * every file loads (reload.c).
 */
#ifndef STOCKADE_RELOAD_H
#define STOCKADE_RELOAD_H

struct server;

/* Loads the rules named by srv->opts; prints errors, -1 when invalid. */
int	server_load(struct server *);
/*
 * After server_load failed at start: a policy_load ok:false record with
 * the loaders' file:line:column text, sent synchronously (the server
 * exits next; nothing else would record why).
 */
void	server_audit_load_failed(void);
/* SIGHUP: all of the rules again, or nothing (audited either way). */
int	server_reload(struct server *);
/* The policy_load record of the rules in force. */
void	server_audit_loaded(struct server *);
void	server_unload(struct server *);

#endif
