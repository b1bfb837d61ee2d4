/*
 * Host uid leases and the uid/gid maps of a sandbox's user namespace.
 * The lock directory is root's; nothing a sandbox can reach is trusted.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"
#include "idmap.h"
#include "util.h"

int
idmap_lease(const struct idmap_conf *c, struct uid_lease *l, char *err,
    size_t errlen)
{
	char		 path[PATH_MAX];
	uint32_t	 start;
	unsigned	 i;
	uid_t		 uid;
	int		 fd;

	l->fd = -1;
	if (c->count == 0 || mkdir_p(c->lock_dir, 0700) == -1) {
		snprintf(err, errlen, "uid leases in %s: %s", c->lock_dir,
		    c->count ? strerror(errno) : "empty uid range");
		return -1;
	}
	/* Start at a random place so leases spread over the range. */
	if (getentropy(&start, sizeof(start)) == -1)
		start = (uint32_t)getpid();
	for (i = 0; i < c->count; i++) {
		uid = c->first + (start + i) % c->count;
		if (xsnprintf(path, sizeof(path), "%s/%lu.lock", c->lock_dir,
		    (unsigned long)uid) == -1)
			break;
		if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		    0600)) == -1)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			l->uid = uid;
			l->fd = fd;
			return 0;
		}
		close(fd);
	}
	snprintf(err, errlen, "no free uid in %lu..%lu (%u sandboxes live)",
	    (unsigned long)c->first, (unsigned long)(c->first + c->count - 1),
	    c->count);
	return -1;
}

void
idmap_release(struct uid_lease *l)
{
	if (l->fd != -1)
		close(l->fd);
	l->fd = -1;
}

static int
write_proc(pid_t pid, const char *file, const char *text, char *err,
    size_t errlen)
{
	char	 path[64];
	int	 fd, rv = 0;

	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, file);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1 ||
	    write_all(fd, text, strlen(text)) == -1) {
		snprintf(err, errlen, "write %s: %s", path, strerror(errno));
		rv = -1;
	}
	if (fd != -1)
		close(fd);
	return rv;
}

int
idmap_write(pid_t pid, uid_t inner, const struct uid_lease *l, char *err,
    size_t errlen)
{
	char	 map[64];

	/* One line each: nothing else of the host exists inside. */
	snprintf(map, sizeof(map), "%lu %lu 1\n", (unsigned long)inner,
	    (unsigned long)l->uid);
	if (write_proc(pid, "uid_map", map, err, errlen) == -1 ||
	    write_proc(pid, "gid_map", map, err, errlen) == -1)
		return -1;
	return 0;
}

int
idmap_become(uid_t inner, char *err, size_t errlen)
{
	/* Supplementary groups come from the root parent: drop them first. */
	if (setgroups(0, NULL) == -1) {
		snprintf(err, errlen, "setgroups: %s", strerror(errno));
		return -1;
	}
	if (setresgid(inner, inner, inner) == -1 ||
	    setresuid(inner, inner, inner) == -1) {
		snprintf(err, errlen, "setresuid(%lu): %s", (unsigned long)inner,
		    strerror(errno));
		return -1;
	}
	return 0;
}
