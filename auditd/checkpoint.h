/*
 * Signed checkpoints: an Ed25519 signature over (chain id, seq, hash, ts)
 * of a record.  Checkpoints are written into the log itself and, when
 * configured, appended to a file meant to live off-host; the off-host copy
 * is what detects truncation of the log's tail.
 */
#ifndef STOCKADE_CHECKPOINT_H
#define STOCKADE_CHECKPOINT_H

#include <stdint.h>
#include <jansson.h>

#include "buf.h"
#include "chain.h"
#include "hash.h"
#include "util.h"

#define CHECKPOINT_FILE		"checkpoints.log"
#define CHECKPOINT_MSG_MAX	256
#define CHECKPOINT_NODE_MAX	64	/* a DNS label and its NUL */

struct checkpoint {
	char		chain_id[CHAIN_ID_HEX + 1];
	uint64_t	seq;
	uint8_t		hash[SHA256_LEN];
	char		ts[TS_LEN + 1];
	char		key_id[KEY_ID_HEX + 1];
	uint8_t		sig[ED25519_SIG_LEN];
	/*
	 * The node of a fleet that wrote it ("" = none given).  A label, not
	 * signed: what ties a checkpoint to a log is its chain id, which is.
	 */
	char		node[CHECKPOINT_NODE_MAX];
};

/* A node id is a DNS label: a-z, 0-9 and '-', 1 to 63, no '-' at either end. */
int	 checkpoint_node_ok(const char *);

/*
 * The exact text a checkpoint signs (what `openssl pkeyutl -verify -rawin`
 * checks); its length, or -1 if it does not fit.
 */
int	 checkpoint_message(const struct checkpoint *, char *out, size_t outlen);
/* Fills cp->sig and cp->key_id. */
int	 checkpoint_sign(struct checkpoint *, EVP_PKEY *);
/* 1 when the signature verifies with pub and the key ids match. */
int	 checkpoint_verify(const struct checkpoint *, EVP_PKEY *pub);

/* The fields of a "checkpoint" record in the log (new reference). */
json_t	*checkpoint_record(const struct checkpoint *);
/* Parses those fields back; -1 with *why. */
int	 checkpoint_from_record(const json_t *, struct checkpoint *,
	    const char **why);

/* One line of the off-host file, '\n' included. */
int	 checkpoint_line(const struct checkpoint *, struct buf *);
int	 checkpoint_from_line(const char *, size_t, struct checkpoint *,
	    const char **why);

#endif
