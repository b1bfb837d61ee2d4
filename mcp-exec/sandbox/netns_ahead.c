/*
 * A network namespace made ahead (netns_ahead.h).  The thread runs as
 * mcp-exec (root on the host): the namespace belongs to the host's user namespace,
 * so the sandbox, whose root has capabilities only in its own user
 * namespace (and none at all once the command runs), can change nothing
 * in it.  L1's loopback is brought up by the parent (spawn.c), which
 * steps into the namespace to clone the sandbox there.  Trusts nothing but
 * the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "netns_ahead.h"
#include "ns.h"

static void *
netns_thread(void *arg)
{
	struct netns_ahead	*na = arg;
	int			 idle = NETNS_IDLE;

	/*
	 * On a busy host this thread may get a CPU only once the caller
	 * waits for it: by then the caller has given up on it and clones a
	 * namespace itself, as it would without this.
	 */
	if (!__atomic_compare_exchange_n(&na->state, &idle, NETNS_MAKING, 0,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return NULL;
	/* This thread alone moves into the new namespace; it exits there. */
	if (unshare(CLONE_NEWNET) == -1) {
		na->error = errno;
		na->step = "unshare(CLONE_NEWNET)";
		return NULL;
	}
	if ((na->fd = open("/proc/thread-self/ns/net", O_RDONLY |
	    O_CLOEXEC)) == -1) {
		na->error = errno;
		na->step = "open /proc/thread-self/ns/net";
	}
	return NULL;
}

int
netns_ahead_start(struct netns_ahead *na)
{
	pthread_attr_t	 attr;
	int		 rv;

	memset(na, 0, sizeof(*na));
	na->fd = -1;
	/* A small stack: the thread makes four system calls. */
	if (pthread_attr_init(&attr) != 0)
		return -1;
	(void)pthread_attr_setstacksize(&attr, 64 * 1024);
	rv = pthread_create(&na->thread, &attr, netns_thread, na);
	pthread_attr_destroy(&attr);
	if (rv != 0)
		return -1;
	na->running = 1;
	return 0;
}

int
netns_ahead_take(struct netns_ahead *na, char *err, size_t errlen)
{
	int	 idle = NETNS_IDLE, given_up;

	err[0] = '\0';
	/* Not begun yet: not worth waiting for. */
	given_up = __atomic_compare_exchange_n(&na->state, &idle,
	    NETNS_GIVEN_UP, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	/*
	 * Joined either way (a thread given up only exits): the caller
	 * clones next, and a raw clone of a process with a second thread
	 * would copy whatever lock that thread holds (malloc's, as it
	 * exits) into a child that can never take it.
	 */
	if (na->running) {
		(void)pthread_join(na->thread, NULL);
		na->running = 0;
	}
	if (given_up)
		return -1;
	if (na->fd == -1)
		snprintf(err, errlen, "%s: %s", na->step ? na->step :
		    "network namespace not made", strerror(na->error));
	return na->fd;
}

void
netns_ahead_done(struct netns_ahead *na)
{
	if (na->running) {
		(void)pthread_join(na->thread, NULL);
		na->running = 0;
	}
	if (na->fd != -1)
		close(na->fd);
	na->fd = -1;
}

int
netns_ahead_enter(int fd, int loopback, char *err, size_t errlen)
{
	int	 host;

	if ((host = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) ==
	    -1) {
		snprintf(err, errlen, "open /proc/thread-self/ns/net: %s",
		    strerror(errno));
		return -1;
	}
	if (setns(fd, CLONE_NEWNET) == -1) {
		snprintf(err, errlen, "entering the network namespace made "
		    "ahead: %s", strerror(errno));
		close(host);
		return -1;
	}
	if (ns_loopback(loopback, err, errlen) == -1) {
		netns_ahead_leave(host);
		return -1;
	}
	return host;
}

void
netns_ahead_leave(int host)
{
	/* mcp-exec never works on in a sandbox's network namespace. */
	if (setns(host, CLONE_NEWNET) == -1)
		fatal("setns back to the host's network namespace");
	close(host);
}
