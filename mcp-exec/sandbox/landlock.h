/*
 * Landlock, the second wall behind the mount table: the sandbox may read
 * and execute what its mounts show, but write only beneath the given
 * directories (and to the few device files that are written, like
 * /dev/null).
 */
#ifndef STOCKADE_SANDBOX_LANDLOCK_H
#define STOCKADE_SANDBOX_LANDLOCK_H

#include <stddef.h>

/* Best ABI the kernel offers, 0 when Landlock is unavailable. */
int	sandbox_landlock_abi(void);
/*
 * Restricts the calling process (and its future children) to writing
 * beneath `writable` (absolute paths) and to `devices` (files).  Requires
 * PR_SET_NO_NEW_PRIVS.  Returns 0, or -1 with err (errno ENOSYS or
 * EOPNOTSUPP when the kernel has no Landlock).
 */
int	sandbox_landlock_apply(const char *const writable[], size_t nwritable,
	    const char *const devices[], size_t ndevices, char *err,
	    size_t errlen);

#endif
