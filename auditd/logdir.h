/*
 * The files of an audit log directory: naming (audit-<first seq>.log),
 * listing in chain order, the single-writer lock, crash recovery of the
 * newest file, and the retention choice made at each rotation.
 */
#ifndef STOCKADE_LOGDIR_H
#define STOCKADE_LOGDIR_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "chain.h"
#include "hash.h"

#define LOGFILE_PREFIX		"audit-"
#define LOGFILE_SUFFIX		".log"
#define LOGFILE_NAME_MAX	40	/* "audit-" + 20 digits + ".log" + NUL */
#define LOGFILE_MODE		0640
#define RECOVERY_EXCERPT_MAX	192	/* cut bytes quoted (base64) in the event */

struct logfile {
	char		name[LOGFILE_NAME_MAX];
	uint64_t	first_seq;
};

/* The newest file as recovery left it, open for appending. */
struct log_state {
	int		 fd;
	char		 name[LOGFILE_NAME_MAX];
	uint64_t	 size;
	uint64_t	 seq;			/* head: last record */
	uint8_t		 hash[SHA256_LEN];
	char		 chain_id[CHAIN_ID_HEX + 1];
	int		 empty;			/* no log yet: start a chain */
};

/* What recovery cut or dropped, for the "recovery" event. */
struct recovery_note {
	int		 cut;
	char		 file[LOGFILE_NAME_MAX];
	uint64_t	 offset;		/* where the cut began */
	uint64_t	 bytes;
	char		 sha256[SHA256_HEX + 1];	/* of the cut bytes */
	char		 excerpt[(RECOVERY_EXCERPT_MAX / 3) * 4 + 1];
	int		 dropped;		/* newest file had no record */
	char		 dropped_file[LOGFILE_NAME_MAX];
};

void	 logfile_name(uint64_t first_seq, char out[LOGFILE_NAME_MAX]);
int	 logfile_parse_name(const char *, uint64_t *first_seq);
/* Sorted by first seq; caller frees *out.  Other files are ignored. */
int	 logdir_list(const char *dir, struct logfile **out, size_t *n);
/* flock()s DIR/.lock for the life of the process; -1 if held elsewhere. */
int	 logdir_lock(const char *dir);

/*
 * Finds the head of the chain and makes the newest file appendable: a torn
 * or garbage tail (nothing verifiable after it) is cut; a broken record
 * followed by good ones is tampering or corruption, and recovery refuses
 * (-1, err names file:line).
 */
int	 logdir_recover(const char *dir, struct log_state *,
	    struct recovery_note *, char *err, size_t errlen);
/* Creates DIR/audit-<seq>.log exclusively; returns the fd or -1. */
int	 logdir_create(const char *dir, uint64_t first_seq);
/*
 * Bytes of data that are records or a record being written: up to the
 * first NUL.  The active file is zero-filled ahead of its records (the
 * writer's I/O thread), and no record holds a NUL.
 */
size_t	 logfile_records_len(const char *data, size_t len);
#define LOGFILE_SECTOR	512	/* the unit a write torn by a crash shows in */
/*
 * Names of the oldest files to delete so that keep files remain once a new
 * one is added (new reference, array of strings).  pending names the
 * active file, which may not be on disk yet.
 */
json_t	*logdir_expired(const char *dir, unsigned keep, const char *pending);

/* Reads the first record of a file's bytes as JSON (new reference). */
json_t	*logdir_first_record(const char *data, size_t len);

#endif
