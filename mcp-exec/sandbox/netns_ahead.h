/*
 * A network namespace made ahead of the sandbox, on a thread of its own,
 * while the caller loads its settings, audits and prepares: creating one
 * (loopback, sysctl tables) is most of what cloning into new namespaces
 * costs.  The sandbox is then cloned into it instead of a new one.
 * Started before the profile is known: a profile whose network is made
 * otherwise (netguard, gVisor) leaves it unused.
 *
 * Ownership: struct netns_ahead owns its thread until netns_ahead_take or
 * netns_ahead_done, and its descriptor until netns_ahead_done.
 */
#ifndef STOCKADE_SANDBOX_NETNS_AHEAD_H
#define STOCKADE_SANDBOX_NETNS_AHEAD_H

#include <pthread.h>
#include <stddef.h>

struct netns_ahead {
	pthread_t	 thread;
	int		 running;	/* thread not joined yet */
	int		 fd;		/* O_CLOEXEC; -1 until taken, or failed */
	int		 error;		/* errno of the failing step, or 0 */
	const char	*step;		/* which step failed */
};

/*
 * Starts making one, loopback down.  -1: no thread; the sandbox then gets
 * a new network namespace from clone, as without this.
 */
int	netns_ahead_start(struct netns_ahead *);
/*
 * Waits for it; returns its descriptor (still owned by the struct), or -1
 * with err when it could not be made.
 */
int	netns_ahead_take(struct netns_ahead *, char *err, size_t errlen);
/*
 * Parent side, around the clone: the calling thread steps into the
 * namespace (and brings lo up when loopback); returns a descriptor of the
 * namespace it left, for netns_ahead_leave, or -1 with err (then it is back).
 */
int	netns_ahead_enter(int fd, int loopback, char *err, size_t errlen);
/* Steps back and closes host; fatal if it cannot. */
void	netns_ahead_leave(int host);
/* Joins the thread if need be and closes the descriptor.  Idempotent. */
void	netns_ahead_done(struct netns_ahead *);

#endif
