/*
 * The fleet's audit trail as the CLI reads it: which chain a node's log
 * directory holds, and the newest checkpoint a witness saw of a chain.
 * Both read untrusted files and only name what they found.
 */
#ifndef STOCKADE_CLI_FLEET_H
#define STOCKADE_CLI_FLEET_H

#include "chain.h"
#include "witness.h"

/* The chain id in the first record of dir's oldest log file; -1: none. */
int	 fleet_chain_of(const char *dir, char id[CHAIN_ID_HEX + 1]);
/* The witness's newest checkpoint of chain_id (borrowed), or NULL. */
const struct witness_cp *fleet_witnessed(const struct witness *,
	    const char *chain_id);

#endif
