/*
 * A network namespace made ahead of the sandbox, on a thread of its own,
 * while the caller loads its settings, audits and prepares: creating one
 * (loopback, sysctl tables) is most of what cloning into new namespaces
 * costs.  The sandbox is then cloned into it instead of a new one.
 *
 * Ownership: struct netns_ahead owns its thread until netns_ahead_take or
 * netns_ahead_done, and its descriptor until netns_ahead_done.
 */
#ifndef STOCKADE_SANDBOX_NETNS_H
#define STOCKADE_SANDBOX_NETNS_H

#include <pthread.h>
#include <stddef.h>

struct netns_ahead {
	pthread_t	 thread;
	int		 running;	/* thread not joined yet */
	int		 loopback;	/* L1: lo brought up in it */
	int		 fd;		/* O_CLOEXEC; -1 until taken, or failed */
	int		 error;		/* errno of the failing step, or 0 */
	const char	*step;		/* which step failed */
};

/*
 * Starts making one (lo up when loopback).  -1: no thread; the sandbox
 * then gets a new network namespace from clone, as without this.
 */
int	netns_ahead_start(struct netns_ahead *, int loopback);
/*
 * Waits for it; returns its descriptor (still owned by the struct), or -1
 * with err when it could not be made.
 */
int	netns_ahead_take(struct netns_ahead *, char *err, size_t errlen);
/* Joins the thread if need be and closes the descriptor.  Idempotent. */
void	netns_ahead_done(struct netns_ahead *);

#endif
