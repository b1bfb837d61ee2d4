/*
 * The warm pool: per profile with pool.size, sandboxes built ahead with
 * their driver waiting for its first call, handed out once (never reused),
 * refilled from the event loop after a hand-out (one build per turn, never
 * on a request), torn down on a reload and at stop.
 */
#ifndef STOCKADE_POOL_H
#define STOCKADE_POOL_H

#include "server.h"

#define POOL_REFILL_MS		25	/* after a hand-out: its answer first */
/* A build holds the loop (40-80 ms here): while calls are in flight it
 * waits, POOL_REFILL_MS at a time, up to this long. */
#define POOL_DEFER_MAX_MS	500

struct session;

void		 pool_init(struct server *);
/* A built session of this profile, out of the pool (NULL: none, a miss
 * when the profile is pooled); a refill is scheduled either way. */
struct session	*pool_take(struct server *, const struct profile *);
/* Room again (a session ended): the pool may fill up. */
void		 pool_kick(struct server *);
/* Tears down one pooled sandbox (the cap needs room); 0 when none. */
int		 pool_evict(struct server *);
/* Tears them all down (a reload, a stop); refill starts again unless
 * the server is stopping. */
void		 pool_drain(struct server *);
void		 pool_free(struct server *);

struct conf_ctx;
/* A profile's pool: section (the profile loader's, kept with the pool). */
void		 pool_profile_section(struct conf_ctx *, const json_t *root,
		    struct profile *);

#endif
