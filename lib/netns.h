/*
 * Network namespaces by descriptor.  setns() moves only the calling
 * thread, and a socket stays in the namespace it was created in, so work
 * that must happen inside another namespace runs on a short-lived thread
 * that joins it; sockets made there are then used from anywhere.
 */
#ifndef STOCKADE_NETNS_H
#define STOCKADE_NETNS_H

#include <sys/types.h>

/*
 * Opens a namespace: a path, or a name under /run/netns.  Returns an
 * O_CLOEXEC descriptor that is checked to be a network namespace, or -1.
 */
int	netns_open(const char *name_or_path);
/* Checks that fd refers to a network namespace. */
int	netns_check(int fd);
/* Identity of a namespace descriptor (device and inode of nsfs). */
int	netns_id(int fd, dev_t *dev, ino_t *ino);
/*
 * Runs fn(arg) on a new thread that has joined nsfd (-1: this one);
 * returns what fn returned, or -1 with errno when the thread could not
 * join.  fn must not keep the thread: it ends when fn returns.
 */
int	netns_call(int nsfd, int (*fn)(void *), void *arg);
/* socket(2) inside nsfd (-1: here); O_CLOEXEC is always added. */
int	netns_socket(int nsfd, int domain, int type, int protocol);

#endif
