/*
 * The crash sweep: sandbox directories (and their cgroups and mounts) that
 * an mcp-exec which did not stop cleanly left in state_dir/sandboxes.  A
 * directory is its owner's while the owner holds its lock (the kernel lets
 * go of it when the owner dies), so one whose lock is free is removed,
 * however young.  Trusts state_dir, which only root writes.
 */
#include <sys/file.h>
#include <sys/mount.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "sandbox.h"
#include "util.h"

/*
 * One directory of state_dir/sandboxes: removed if nobody holds it.  An
 * owner about to lock its new directory finds it gone and makes it again
 * (sandbox_prepare).  A cgroup whose processes are still dying keeps the
 * directory, and with it the next sweep's right to kill and remove it.
 */
static int
sweep_one(int dirfd, const char *sbdir, const char *id,
    const struct cgroup_conf *cg)
{
	char		 p[PATH_MAX];
	int		 fd, gone = 0;

	if (strlen(id) != SANDBOX_ID_HEX || strspn(id, "0123456789abcdef") !=
	    SANDBOX_ID_HEX || xsnprintf(p, sizeof(p), "%s/%s", sbdir, id) == -1)
		return 0;
	if ((fd = openat(dirfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 &&
	    cgroup_remove_stale(cg, id) == 0) {
		if (xsnprintf(p, sizeof(p), "%s/%s/workspace", sbdir, id) != -1)
			(void)umount2(p, MNT_DETACH);
		/* A gVisor sandbox's root (gvisor.c); none for the native. */
		if (xsnprintf(p, sizeof(p), "%s/%s/root", sbdir, id) != -1)
			(void)umount2(p, MNT_DETACH);
		/* A package layer's tmpfs, when the profile had one. */
		if (xsnprintf(p, sizeof(p), "%s/%s/disk", sbdir, id) != -1)
			(void)umount2(p, MNT_DETACH);
		if (xsnprintf(p, sizeof(p), "%s/%s", sbdir, id) != -1 &&
		    rmtree(p) == 0)
			gone = 1;
		else
			log_warn("removing %s", p);
	}
	close(fd);
	return gone;
}

int
sandbox_sweep(const char *state_dir, const struct cgroup_conf *cg,
    void (*removed)(void *, const char *), void *arg)
{
	char		 sbdir[PATH_MAX];
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	if (xsnprintf(sbdir, sizeof(sbdir), "%s/sandboxes", state_dir) == -1 ||
	    (d = opendir(sbdir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    !sweep_one(dirfd(d), sbdir, de->d_name, cg))
			continue;
		log_warnx("removed sandbox %s, left by an mcp-exec that did not "
		    "stop cleanly", de->d_name);
		if (removed != NULL)
			removed(arg, de->d_name);
		n++;
	}
	closedir(d);
	/* Cgroups whose directory is gone (a sandbox_destroy that found
	 * its cgroup busy), or that another state_dir's mcp-exec left:
	 * those are nobody's we know, so only empty ones that no owner is
	 * about to fill. */
	(void)cgroup_sweep(cg, SANDBOX_SWEEP_AGE_S);
	return n;
}
