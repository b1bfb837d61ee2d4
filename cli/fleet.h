/*
 * The fleet's audit trail as the CLI reads it: which chain a node's log
 * directory holds, its newest records, and the newest checkpoint a
 * witness saw of a chain.  All read untrusted files and only name what
 * they found.
 */
#ifndef STOCKADE_CLI_FLEET_H
#define STOCKADE_CLI_FLEET_H

#include <stddef.h>
#include <jansson.h>

#include "chain.h"
#include "witness.h"

/* The chain id in the first record of dir's oldest log file; -1: none. */
int	 fleet_chain_of(const char *dir, char id[CHAIN_ID_HEX + 1]);
/* dir's newest log file, whole (caller frees *data); -1: none. */
int	 fleet_newest(const char *dir, char **data, size_t *len);
/*
 * The last complete line of data that holds mark (any line when NULL) and
 * parses as JSON, into *rec (caller decrefs); -1: none.
 */
int	 fleet_last_line(const char *data, size_t len, const char *mark,
	    json_t **rec);
/* The witness's newest checkpoint of chain_id (borrowed), or NULL. */
const struct witness_cp *fleet_witnessed(const struct witness *,
	    const char *chain_id);

#endif
