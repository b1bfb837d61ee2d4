/*
 * Running things inside a network namespace given by descriptor.  Trusts
 * its callers (the daemons) with the descriptors; checks that each is a
 * network namespace before joining it.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/nsfs.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "netns.h"
#include "util.h"

#define NETNS_RUN_DIR	"/run/netns"

int
netns_check(int fd)
{
	int	 type;

	/* NS_GET_NSTYPE: the namespace's kind, whatever the path said. */
	if ((type = ioctl(fd, NS_GET_NSTYPE)) == -1)
		return -1;
	if (type != CLONE_NEWNET) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int
netns_open(const char *name)
{
	char	 path[4096];
	int	 fd, saved;

	if (strchr(name, '/') != NULL) {
		if (xsnprintf(path, sizeof(path), "%s", name) == -1)
			return -1;
	} else if (*name == '\0' || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0) {
		errno = EINVAL;
		return -1;
	} else if (xsnprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR,
	    name) == -1)
		return -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (netns_check(fd) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int
netns_id(int fd, dev_t *dev, ino_t *ino)
{
	struct stat	 st;

	if (fstat(fd, &st) == -1)
		return -1;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

struct netns_job {
	int	 nsfd;
	int	 (*fn)(void *);
	void	*arg;
	int	 ret;
	int	 err;
};

static void *
netns_thread(void *p)
{
	struct netns_job	*job = p;

	if (job->nsfd != -1 && setns(job->nsfd, CLONE_NEWNET) == -1) {
		job->ret = -1;
		job->err = errno;
		return NULL;
	}
	errno = 0;
	job->ret = job->fn(job->arg);
	job->err = errno;
	return NULL;
}

int
netns_call(int nsfd, int (*fn)(void *), void *arg)
{
	struct netns_job	 job = { nsfd, fn, arg, -1, 0 };
	pthread_t		 t;
	int			 rc;

	if (nsfd == -1)
		return fn(arg);
	if (netns_check(nsfd) == -1)
		return -1;
	if ((rc = pthread_create(&t, NULL, netns_thread, &job)) != 0) {
		errno = rc;
		return -1;
	}
	if ((rc = pthread_join(t, NULL)) != 0)
		fatalx("pthread_join: %s", strerror(rc));
	errno = job.err;
	return job.ret;
}

struct netns_sock {
	int	 domain, type, protocol;
};

static int
netns_socket_fn(void *p)
{
	struct netns_sock	*s = p;

	return socket(s->domain, s->type | SOCK_CLOEXEC, s->protocol);
}

int
netns_socket(int nsfd, int domain, int type, int protocol)
{
	struct netns_sock	 s = { domain, type, protocol };

	return netns_call(nsfd, netns_socket_fn, &s);
}
