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

enum netns_state {
	NETNS_IDLE,		/* the thread has not begun */
	NETNS_MAKING,		/* it has: the caller waits for it */
	NETNS_GIVEN_UP,		/* the caller went without; it does nothing */
};

struct netns_ahead {
	pthread_t	 thread;
	int		 state;		/* enum netns_state, atomic */
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
 * Returns its descriptor (still owned by the struct), waiting for it if
 * the thread has begun; -1 with err "" when it had not (the caller then
 * clones a new namespace, as without this), or with err saying why it
 * could not be made.  The thread is joined when this returns: the caller
 * may clone.
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
