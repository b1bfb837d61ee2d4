/*
 * A compiled seccomp filter at run time: loaded into the calling process,
 * and freed.  Apart from seccomp.c, which compiles it with libseccomp, so
 * that a program loading the build-time filter (mcp-exec run) does not
 * link libseccomp at all.  Trusts the filter it is given.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seccomp_filter.h"

void
sandbox_seccomp_free(struct seccomp_prog *prog)
{
	free(prog->filter);
	prog->filter = NULL;
	prog->len = 0;
}

int
sandbox_seccomp_load(const struct seccomp_prog *prog, char *err,
    size_t errlen)
{
	struct sock_fprog	 fp;

	/* The kernel would accept it from root without; we never do. */
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(err, errlen, "seccomp: no_new_privs is not set");
		errno = EPERM;
		return -1;
	}
	fp.len = prog->len;
	fp.filter = prog->filter;
	/* TSYNC: a filter on one thread must not leave its siblings free. */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_TSYNC, &fp) != 0) {
		snprintf(err, errlen, "seccomp(SECCOMP_SET_MODE_FILTER): %s",
		    errno ? strerror(errno) : "a thread could not be synced");
		if (errno == 0)
			errno = EINVAL;
		return -1;
	}
	return 0;
}
