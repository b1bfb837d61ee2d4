/*
 * Evidence bundles (`stockade audit evidence`, `verify --bundle`): a
 * directory or tar holding whole log files cut from the chain, the signed
 * checkpoints over them, code blobs, policy files by hash and a MANIFEST.
 * A bundle is read as untrusted input: everything in it is re-derived
 * from the chain, which only the checkpoint signature authenticates.
 */
#ifndef STOCKADE_BUNDLE_H
#define STOCKADE_BUNDLE_H

#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "hash.h"
#include "logdir.h"

#define BUNDLE_FORMAT		"stockade-evidence-v1"
#define BUNDLE_LOG_DIR		"log"
#define BUNDLE_CP_DIR		"checkpoints"
#define BUNDLE_POLICY_DIR	"policy"
#define BUNDLE_PUBKEY		"checkpoint.pub"
#define BUNDLE_RECORDS		"records.jsonl"
#define BUNDLE_META		"bundle.json"
#define BUNDLE_MANIFEST		"MANIFEST"
#define BUNDLE_README		"README.md"
#define BUNDLE_FLEET_FORMAT	"stockade-evidence-fleet-v1"
#define BUNDLE_FLEET_META	"fleet.json"
#define BUNDLE_FILE_MAX		(1ULL << 36)	/* any one file, 64 GiB */
#define BUNDLE_FILES_MAX	100000		/* entries in a bundle */

/* Which records a bundle is about; NULL fields match anything. */
struct bundle_filter {
	const char	*session;	/* session_id */
	const char	*principal;
	const char	*since;		/* ts >= since (RFC 3339 prefix) */
	const char	*until;		/* ts < until */
};

/* What one pass over log files found. */
struct bundle_scan {
	size_t		 first_file, last_file;	/* files with matches */
	uint64_t	 first_seq, last_seq, nrecords;	/* of the matches */
	uint64_t	 need_signed;	/* last match that is no checkpoint
					 * (one signs what is before it) */
	json_t		*loads;		/* ok policy_load: {file, seq, rec} */
	json_t		*checkpoints;	/* {file, seq, rec} */
	json_t		*digests;	/* {seq, event, session_id, *_sha256} */
	FILE		*records;	/* if set, matching lines go here */
};

int	 bundle_filter_match(const struct bundle_filter *, const json_t *rec);
/* getopt_long entries for the filter, shared by evidence and report. */
#define BUNDLE_FILTER_LONGOPTS						\
	{ "session", required_argument, NULL, 's' },			\
	{ "principal", required_argument, NULL, 'P' },			\
	{ "since", required_argument, NULL, 'S' },			\
	{ "until", required_argument, NULL, 'U' }
/* Sets f's field for option ch of BUNDLE_FILTER_LONGOPTS; -1: not one. */
int	 bundle_filter_opt(struct bundle_filter *f, int ch, const char *arg);
/* The filter as JSON and back (borrowed strings point into j). */
json_t	*bundle_filter_json(const struct bundle_filter *);
void	 bundle_filter_from_json(const json_t *j, struct bundle_filter *);

/*
 * Reads files[from..to] of dir (complete lines only) into s; caller
 * calls bundle_scan_free.  -1 with err when a file cannot be read.
 */
int	 bundle_scan(const char *dir, const struct logfile *files, size_t from,
	    size_t to, const struct bundle_filter *, struct bundle_scan *,
	    char *err, size_t errlen);
void	 bundle_scan_free(struct bundle_scan *);
/*
 * The policy files in force for the matches: per program the last good
 * load before the first match and every good load up to the last one.
 * [{program, path, sha256 (hex), seq}]; *min_file is the oldest file
 * holding one of those loads (unchanged if none).
 */
json_t	*bundle_policies(const struct bundle_scan *, size_t *min_file);

/* The README every bundle of this format carries, byte for byte. */
const char *bundle_readme(void);
/* Writes a bundle directory out (must not exist) from the log in log_dir. */
int	 bundle_create(const char *log_dir, const struct bundle_filter *,
	    const char *pubkey, const char *out, char *err, size_t errlen);
/*
 * Verifies a bundle directory; pub NULL: the bundle's own key, with a
 * warning that says so.  0 intact, 1 tampered, 2 error; msg says what.
 */
int	 bundle_verify(const char *dir, EVP_PKEY *pub, char *msg,
	    size_t msglen, char *warn, size_t warnlen);

/*
 * A fleet bundle (cli/bundle_fleet.c): out/<node>/ an ordinary bundle per
 * log dir with a match, out/fleet.json, out/MANIFEST.  pubs: the nodes'
 * public key files, each bundle given the one of its checkpoints' key id.
 */
int	 bundle_create_fleet(char *const *dirs, size_t ndirs,
	    const struct bundle_filter *, const char *const *pubs,
	    size_t npubs, const char *out, char *err, size_t errlen);
int	 bundle_is_fleet(const char *dir);
/* As bundle_verify, for every node's bundle; keys: none (each bundle's
 * own, with a warning), one for all, or one per node. */
int	 bundle_verify_fleet(const char *dir, EVP_PKEY *const *keys,
	    size_t nkeys, char *msg, size_t msglen, char *warn, size_t warnlen);

/* MANIFEST: sha256sum lines for every regular file under dir. */
int	 bundle_manifest_write(const char *dir, char *err, size_t errlen);
/* 0 when MANIFEST lists exactly the files present, each hashing right. */
int	 bundle_manifest_check(const char *dir, char *msg, size_t msglen);

/* tar (through libarchive) of a bundle directory, and back. */
int	 bundle_tar_write(const char *dir, const char *tarpath, char *err,
	    size_t errlen);
int	 bundle_tar_extract(const char *tarpath, const char *dir, char *err,
	    size_t errlen);

#endif
