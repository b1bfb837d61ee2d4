/*
 * Identity: every live sandbox gets a host uid (and the same gid) of its
 * own from a configured range, mapped to 65534 inside, so two sandboxes
 * can never signal, ptrace or read each other, even through a kernel
 * object they share.  A lease is an flock()ed file per uid: it is released
 * by the kernel if mcp-exec dies, and the sandbox dies with it.
 */
#ifndef STOCKADE_SANDBOX_IDMAP_H
#define STOCKADE_SANDBOX_IDMAP_H

#include <limits.h>
#include <sys/types.h>

struct idmap_conf {
	uid_t		first;		/* first host uid of the range */
	unsigned	count;
	char		lock_dir[PATH_MAX];	/* where leases are held */
};

struct uid_lease {
	uid_t	uid;
	int	fd;		/* -1: none */
};

/* Parent side: takes a free uid of the range. */
int	idmap_lease(const struct idmap_conf *, struct uid_lease *, char *err,
	    size_t errlen);
void	idmap_release(struct uid_lease *);
/* Parent side: maps `inner` in pid's user namespace to the leased uid/gid. */
int	idmap_write(pid_t pid, uid_t inner, const struct uid_lease *,
	    char *err, size_t errlen);
/* Child side: becomes `inner` (uid and gid), with no supplementary groups. */
int	idmap_become(uid_t inner, char *err, size_t errlen);

#endif
