/*
 * A network namespace made ahead (netns.h).  The thread runs as mcp-exec
 * (root on the host): the namespace belongs to the host's user namespace,
 * so the sandbox, whose root has capabilities only in its own user
 * namespace (and none at all once the command runs), can change nothing
 * in it.  Trusts nothing but the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "netns.h"
#include "ns.h"

static void *
netns_thread(void *arg)
{
	struct netns_ahead	*na = arg;
	char			 err[256];

	/* This thread alone moves into the new namespace; it exits there. */
	if (unshare(CLONE_NEWNET) == -1) {
		na->error = errno;
		na->step = "unshare(CLONE_NEWNET)";
		return NULL;
	}
	if (ns_loopback(na->loopback, err, sizeof(err)) == -1) {
		na->error = errno;
		na->step = "bringing lo up";
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
netns_ahead_start(struct netns_ahead *na, int loopback)
{
	pthread_attr_t	 attr;
	int		 rv;

	memset(na, 0, sizeof(*na));
	na->fd = -1;
	na->loopback = loopback;
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
	if (na->running) {
		(void)pthread_join(na->thread, NULL);
		na->running = 0;
	}
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
