/*
 * The code blob store beside the audit log: LOG_DIR/blobs/<log file>/<hex>,
 * one folder per log file holding the code its records retain in full,
 * each blob named by its sha256.  The record names the hash, so the chain
 * covers the blob; a folder goes when its log file does.
 */
#ifndef STOCKADE_BLOBSTORE_H
#define STOCKADE_BLOBSTORE_H

#include <limits.h>
#include <stddef.h>

#include "hash.h"

#define BLOBSTORE_DIR		"blobs"
#define BLOBSTORE_FILE_MODE	0640
#define BLOBSTORE_DIR_MODE	0750
#define BLOBSTORE_MAX		(1024 * 1024)	/* = AUDIT_CODE_MAX */

enum blob_check {
	BLOB_OK,
	BLOB_MISSING,
	BLOB_CHANGED,		/* its bytes no longer hash to its name */
	BLOB_ERROR,		/* could not be read */
};

/* LOG_DIR/blobs/FILE into out; -1 if too long. */
int	 blobstore_dir(const char *log_dir, const char *file, char *out,
	    size_t outlen);
/*
 * Writes one blob durably: a temporary file, fsync, rename to its hash.
 * An existing blob is kept (the name is its content).  The caller fsyncs
 * the folder once for all blobs of a batch (blobstore_sync).  -1, errno.
 */
int	 blobstore_put(const char *dir, const char *hex, const void *data,
	    size_t len);
/* Makes the folder and its entries durable, parents included. */
int	 blobstore_sync(const char *log_dir, const char *dir);
/* Removes the folder of one log file and what it holds. */
int	 blobstore_remove(const char *log_dir, const char *file);
/* Checks the blob hex in dir: present and still hashing to its name. */
enum blob_check blobstore_check(const char *dir, const char *hex);
/*
 * Finds blob hex in any folder of log_dir and reads it (caller frees
 * *out).  0, or -1 when no folder holds an intact copy.
 */
int	 blobstore_read(const char *log_dir, const char *hex, char **out,
	    size_t *outlen);
/* 1 when s is 64 lowercase hex digits. */
int	 blobstore_hex_ok(const char *s);

#endif
