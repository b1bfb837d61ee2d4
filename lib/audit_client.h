/*
 * Client side of stockade-auditd's socket, for every program that writes
 * audit events.  Blocking and single-threaded; a caller that wants many
 * events in flight sends several, then reads their replies by id.
 * Replies are matched by the integer ids this client assigns.
 */
#ifndef STOCKADE_AUDIT_CLIENT_H
#define STOCKADE_AUDIT_CLIENT_H

#include <stdint.h>
#include <jansson.h>

#include "hash.h"

#define AUDIT_REPLY_MAX		(64 * 1024)
/* How long a caller polls for a reply before it sleeps (audit_client.c). */
#define AUDIT_CLIENT_POLL_US	300

struct audit_client {
	int		fd;
	uint64_t	next_id;
};

struct audit_ack {
	uint64_t	id;
	int		ok;		/* 1: ack; 0: error (see code) */
	uint64_t	seq;
	char		hash[SHA256_HEX + 1];
	int		durable;
	char		code[32];	/* error code: invalid, suspended, ... */
	char		message[256];
};

int	audit_client_open(struct audit_client *, const char *socket_path,
	    char *err, size_t errlen);
void	audit_client_close(struct audit_client *);
/* Sends one append; *id is what its reply will carry.  event is borrowed. */
int	audit_client_send(struct audit_client *, const json_t *event, int sync,
	    uint64_t *id);
/* Reads the next reply to an append (ack or error). */
int	audit_client_recv(struct audit_client *, struct audit_ack *,
	    char *err, size_t errlen);
/* Send one event synchronously and wait for its reply. */
int	audit_client_append(struct audit_client *, const json_t *event,
	    struct audit_ack *, char *err, size_t errlen);
/*
 * One event on a connection of its own (a program with no link open, e.g.
 * at a failed start): 0 once acknowledged, else -1 with err set.  A NULL
 * event (a json_pack that failed) is an error, so callers need not check.
 */
int	audit_client_once(const char *socket_path, const json_t *event,
	    char *err, size_t errlen);
/* The daemon's status object (new reference) or NULL. */
json_t	*audit_client_status(struct audit_client *, char *err, size_t errlen);

#endif
