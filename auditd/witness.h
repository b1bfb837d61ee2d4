/*
 * A fleet witness: the checkpoints every node of a fleet sent somewhere
 * none of them can rewrite.  Read from a shared folder (offhost_dir, one
 * <node>/checkpoints.log per node) or from a SIEM's file of forwarded
 * records (rsyslog's omfile: any prefix, then the record).  Its files are
 * untrusted input; with public keys, every checkpoint must be signed.
 */
#ifndef STOCKADE_WITNESS_H
#define STOCKADE_WITNESS_H

#include <limits.h>
#include <stddef.h>

#include "checkpoint.h"
#include "hash.h"

#define WITNESS_KEYS_MAX	64	/* one key per node, or one for all */

struct witness_cp {
	struct checkpoint	 cp;		/* cp.node: the node it names */
	const char		*src;		/* its file (owned by the witness) */
	unsigned long		 line;
};

struct witness {
	struct witness_cp	*cps;
	size_t			 n, cap;
	char			**srcs;
	size_t			 nsrcs;
	unsigned long		 skipped;	/* syslog lines of other records */
};

void	witness_init(struct witness *);
void	witness_free(struct witness *);
/*
 * Adds what path holds: a folder (its checkpoints.log and every
 * <sub>/checkpoints.log) or one file.  With keys (nkeys > 0) a checkpoint
 * must verify under the key of its key_id.  -1 with err on unreadable or
 * forged input.
 */
int	witness_load(struct witness *, const char *path, EVP_PKEY *const *keys,
	    size_t nkeys, char *err, size_t errlen);
/*
 * One line of a witness file into cp: 1 a checkpoint, 0 a line that is
 * none (another forwarded record, a collector's own line), -1 with *why.
 */
int	witness_line(const char *, size_t, struct checkpoint *,
	    const char **why);
/* The key among keys whose id is key_id, or NULL. */
EVP_PKEY *witness_key(EVP_PKEY *const *keys, size_t nkeys,
	    const char *key_id);

#endif
