/*
 * What each call changes in state_dir (the quota usage file, the status
 * file `stockade status` reads), written at most once per
 * PERSIST_DELAY_MS instead of twice per call.  The loop's thread owns it.
 */
#ifndef STOCKADE_PERSIST_H
#define STOCKADE_PERSIST_H

struct server;

/*
 * The bound on how stale the status file's usage and the quota file may
 * be: a crash loses at most this much of the usage (docs/operations.md).
 */
#define PERSIST_DELAY_MS	200

/* Usage changed: both files are written within PERSIST_DELAY_MS. */
void	persist_soon(struct server *);
/* Whatever is pending, now (at exit); frees the timer. */
void	persist_flush(struct server *);

#endif
