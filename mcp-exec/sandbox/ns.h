/*
 * Namespaces: the flags the parent clones the sandbox with, and what the
 * child does inside them before it gives its privileges up.
 */
#ifndef STOCKADE_SANDBOX_NS_H
#define STOCKADE_SANDBOX_NS_H

#include <sched.h>
#include <stddef.h>

/*
 * The network namespace and the cgroup namespace come later, from the
 * child: the first costs half a millisecond to make (every pernet
 * subsystem's setup), which the parent would spend inside clone, and the
 * second must wait until the child is in its cgroup.
 */
#define NS_CLONE_FLAGS	(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | \
			 CLONE_NEWIPC | CLONE_NEWUTS)

/* Child side. */
int	ns_enter_net(char *err, size_t errlen);
int	ns_enter_cgroup(char *err, size_t errlen);
int	ns_set_hostname(const char *, char *err, size_t errlen);
/* Loopback up (L1) or left down (L0); a fresh netns has nothing else. */
int	ns_loopback(int up, char *err, size_t errlen);

#endif
