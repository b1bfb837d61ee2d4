/*
 * The audit log verifier behind `stockade audit verify`.  It hashes the
 * bytes on disk, never re-serialized JSON, and names the first record
 * that fails: file:line seq N and why.
 */
#ifndef STOCKADE_VERIFY_H
#define STOCKADE_VERIFY_H

#include <limits.h>
#include <stdint.h>

#include "chain.h"
#include "hash.h"
#include "witness.h"

enum verify_result {
	VERIFY_OK = 0,
	VERIFY_TAMPERED = 1,
	VERIFY_ERROR = 2,	/* could not read, or nothing to verify */
};

struct verify_opts {
	EVP_PKEY	*pubkey;	/* checks checkpoint signatures */
	const char	*checkpoints;	/* directory holding the off-host copy */
	/* A fleet witness (any chains): its checkpoints of this log's chain
	 * are checked as the off-host copy's are.  Borrowed. */
	const struct witness *witness;
	int		 segment;	/* a run of files cut from a longer log
					 * (an evidence bundle): the first may
					 * follow a file that is not there */
};

struct verify_report {
	enum verify_result	result;
	int			truncated;	/* tampered: the log ends before
						 * an off-host checkpoint */
	char			where[PATH_MAX + 64];	/* file:line seq N */
	char			reason[PATH_MAX + 512];
	char			warning[PATH_MAX + 512];	/* not tampering, worth saying */
	uint64_t		first_seq, last_seq, records, files;
	uint64_t		checkpoints;		/* records in the log */
	uint64_t		checkpoints_verified;	/* signatures checked */
	uint64_t		offhost_checked;	/* off-host matched */
	uint64_t		offhost_skipped;	/* older than the log */
	uint64_t		unsigned_tail;	/* records after the last checkpoint */
	uint64_t		last_signed;	/* seq of the last verified checkpoint */
	uint64_t		blobs;		/* code blobs checked */
	char			head[SHA256_HEX + 1];
	char			chain_id[CHAIN_ID_HEX + 1];
};

enum verify_result verify_dir(const char *dir, const struct verify_opts *,
		    struct verify_report *);
/* Verifies one in-memory file as a whole log (tests and fuzzing). */
enum verify_result verify_buffer(const char *name, const char *data,
		    size_t len, const struct verify_opts *,
		    struct verify_report *);

#endif
