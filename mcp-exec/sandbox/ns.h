/*
 * Namespaces: the flags the parent clones the sandbox with, and what the
 * child does inside them before it gives its privileges up.
 */
#ifndef STOCKADE_SANDBOX_NS_H
#define STOCKADE_SANDBOX_NS_H

#include <sched.h>
#include <stddef.h>

/*
 * The mount and network namespaces come later, from the child: their cost
 * is the parent's inside clone, and it is large (a network namespace runs
 * every pernet subsystem's setup, ~0.5 ms; a mount namespace copies every
 * mount of the caller's, each live sandbox's workspace among them: 0.15 ms
 * at 21 mounts, 0.68 ms at 421).  The cgroup namespace must wait until the
 * child is in its cgroup.
 */
#define NS_CLONE_FLAGS	(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWIPC | \
			 CLONE_NEWUTS)

/* Child side. */
int	ns_enter_own(char *err, size_t errlen);
int	ns_enter_cgroup(char *err, size_t errlen);
int	ns_set_hostname(const char *, char *err, size_t errlen);
/* Loopback up (L1) or left down (L0); a fresh netns has nothing else. */
int	ns_loopback(int up, char *err, size_t errlen);

#endif
