/*
 * Landlock through its raw system calls: the sandbox may write only
 * beneath the directories it is given and to a few device files.  Trusts
 * the caller's paths (opened here, once) and the kernel's ABI number.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/landlock.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "landlock.h"

/*
 * Debian 12's header stops at ABI 2.  TRUNCATE is bit 14 since Linux 6.2
 * (ABI 3) and is only handled when the kernel reports ABI 3 or later.
 */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif

#define LL_ABI_REFER		2
#define LL_ABI_TRUNCATE		3

/*
 * Everything that changes the file system, as of ABI 1.  Reading and
 * executing are left unhandled: the mount table (read-only binds) decides
 * those, and handling them here would mean listing every library path.
 */
#define LL_WRITE_ABI1	(LANDLOCK_ACCESS_FS_WRITE_FILE |		\
			 LANDLOCK_ACCESS_FS_REMOVE_DIR |		\
			 LANDLOCK_ACCESS_FS_REMOVE_FILE |		\
			 LANDLOCK_ACCESS_FS_MAKE_CHAR |			\
			 LANDLOCK_ACCESS_FS_MAKE_DIR |			\
			 LANDLOCK_ACCESS_FS_MAKE_REG |			\
			 LANDLOCK_ACCESS_FS_MAKE_SOCK |			\
			 LANDLOCK_ACCESS_FS_MAKE_FIFO |			\
			 LANDLOCK_ACCESS_FS_MAKE_BLOCK |		\
			 LANDLOCK_ACCESS_FS_MAKE_SYM)

/* The rights that make sense on a file rather than a directory. */
#define LL_FILE_RIGHTS	(LANDLOCK_ACCESS_FS_WRITE_FILE |		\
			 LANDLOCK_ACCESS_FS_TRUNCATE)

static int
ll_create_ruleset(const struct landlock_ruleset_attr *attr, size_t size,
    uint32_t flags)
{
	return (int)syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

int
sandbox_landlock_abi(void)
{
	int	 abi;

	abi = ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : abi;
}

/* The write rights this kernel understands; a right it does not know
 * makes landlock_create_ruleset fail with EINVAL. */
static uint64_t
ll_handled(int abi)
{
	uint64_t	 h = LL_WRITE_ABI1;

	/* From ABI 2, moving and linking across directories is refused
	 * unless both sides grant REFER; on ABI 1 it is always refused. */
	if (abi >= LL_ABI_REFER)
		h |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= LL_ABI_TRUNCATE)
		h |= LANDLOCK_ACCESS_FS_TRUNCATE;
	return h;
}

/* Grants `access` beneath (or on) path; dir says which it must be. */
static int
ll_add_path(int ruleset, const char *path, int dir, uint64_t access,
    char *err, size_t errlen)
{
	struct landlock_path_beneath_attr	 pb;
	struct stat				 st;
	int					 fd, saved, ret = -1;

	if (path[0] != '/') {
		snprintf(err, errlen, "landlock: %s: not an absolute path",
		    path);
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_PATH | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
	if (fd == -1) {
		saved = errno;
		snprintf(err, errlen, "landlock: %s: %s", path,
		    strerror(saved));
		errno = saved;
		return -1;
	}
	/* A directory given as a device would grant writes to every file
	 * beneath it; the kernel would accept it. */
	if (!dir && (fstat(fd, &st) == -1 || S_ISDIR(st.st_mode))) {
		snprintf(err, errlen, "landlock: %s: not a file", path);
		errno = EINVAL;
		goto out;
	}
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = access;
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH,
	    &pb, 0) == -1) {
		snprintf(err, errlen, "landlock_add_rule(%s): %s", path,
		    strerror(errno));
		goto out;
	}
	ret = 0;
out:
	close(fd);
	return ret;
}

int
sandbox_landlock_apply(const char *const writable[], size_t nwritable,
    const char *const devices[], size_t ndevices, char *err, size_t errlen)
{
	struct landlock_ruleset_attr	 attr;
	uint64_t			 handled;
	size_t				 i;
	int				 abi, ruleset, saved, ret = -1;

	abi = ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		/* ENOSYS: built without it; EOPNOTSUPP: disabled at boot. */
		saved = errno;
		snprintf(err, errlen, "landlock unavailable: %s",
		    strerror(saved));
		errno = saved;
		return -1;
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(err, errlen, "landlock: no_new_privs is not set");
		errno = EPERM;
		return -1;
	}
	handled = ll_handled(abi);
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = handled;
	if ((ruleset = ll_create_ruleset(&attr, sizeof(attr), 0)) == -1) {
		snprintf(err, errlen, "landlock_create_ruleset: %s",
		    strerror(errno));
		return -1;
	}
	for (i = 0; i < nwritable; i++)
		if (ll_add_path(ruleset, writable[i], 1, handled, err,
		    errlen) == -1)
			goto out;
	for (i = 0; i < ndevices; i++)
		if (ll_add_path(ruleset, devices[i], 0,
		    handled & LL_FILE_RIGHTS, err, errlen) == -1)
			goto out;
	/* From here on this process and its children write only there. */
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) == -1) {
		snprintf(err, errlen, "landlock_restrict_self: %s",
		    strerror(errno));
		goto out;
	}
	ret = 0;
out:
	saved = errno;
	close(ruleset);
	errno = saved;
	return ret;
}
