/*
 * rlimits, capabilities and the parent-death signal.  After privs_drop_caps
 * the process holds no capability in any set, cannot regain one (bounding
 * set empty, securebits locked), and no_new_privs keeps execve from
 * granting any.
 */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "privs.h"
#include "sandbox.h"

#define CAP_PROBE_MAX	64	/* capability numbers tried for the bounding set */

int
privs_keep_caps(char *err, size_t errlen)
{
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == -1) {
		snprintf(err, errlen, "prctl(PR_SET_KEEPCAPS): %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
privs_raise_effective(char *err, size_t errlen)
{
	struct __user_cap_header_struct	 hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct	 data[2];

	/* The uid change may have emptied the effective set; refill it. */
	if (syscall(SYS_capget, &hdr, data) == -1) {
		snprintf(err, errlen, "capget: %s", strerror(errno));
		return -1;
	}
	data[0].effective = data[0].permitted;
	data[1].effective = data[1].permitted;
	if (syscall(SYS_capset, &hdr, data) == -1) {
		snprintf(err, errlen, "capset: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int
set_limit(int resource, rlim_t value, const char *name, char *err,
    size_t errlen)
{
	struct rlimit	 rl = { value, value };

	if (setrlimit(resource, &rl) == -1) {
		snprintf(err, errlen, "setrlimit(%s): %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

int
privs_rlimits(const struct sandbox_limits *l, char *err, size_t errlen)
{
	/*
	 * NPROC counts the host uid, which is this sandbox's alone, so it is
	 * a second pids limit; CORE 0 keeps memory out of files.
	 */
	if (set_limit(RLIMIT_CORE, 0, "CORE", err, errlen) == -1 ||
	    set_limit(RLIMIT_NOFILE, l->nofile, "NOFILE", err, errlen) == -1 ||
	    set_limit(RLIMIT_NPROC, l->pids, "NPROC", err, errlen) == -1 ||
	    set_limit(RLIMIT_FSIZE, l->file_size, "FSIZE", err, errlen) == -1 ||
	    set_limit(RLIMIT_CPU, l->cpu_seconds, "CPU", err, errlen) == -1 ||
	    set_limit(RLIMIT_MEMLOCK, 0, "MEMLOCK", err, errlen) == -1 ||
	    set_limit(RLIMIT_MSGQUEUE, 0, "MSGQUEUE", err, errlen) == -1)
		return -1;
	if (l->address_space != 0 &&
	    set_limit(RLIMIT_AS, l->address_space, "AS", err, errlen) == -1)
		return -1;
	return 0;
}

int
privs_drop_caps(char *err, size_t errlen)
{
	struct __user_cap_header_struct	 hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct	 data[2];
	int				 cap;

	for (cap = 0; cap < CAP_PROBE_MAX; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1 &&
		    errno != EINVAL) {
			snprintf(err, errlen, "prctl(PR_CAPBSET_DROP, %d): %s",
			    cap, strerror(errno));
			return -1;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1) {
		snprintf(err, errlen, "prctl(PR_CAP_AMBIENT_CLEAR_ALL): %s",
		    strerror(errno));
		return -1;
	}
	/* No way back to capabilities through uid 0 semantics either. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
	    SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
	    SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
	    SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0) == -1) {
		snprintf(err, errlen, "prctl(PR_SET_SECUREBITS): %s",
		    strerror(errno));
		return -1;
	}
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) == -1) {
		snprintf(err, errlen, "capset: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int
privs_no_new_privs(char *err, size_t errlen)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		snprintf(err, errlen, "prctl(PR_SET_NO_NEW_PRIVS): %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
privs_die_with_parent(int parent, char *err, size_t errlen)
{
	struct pollfd	 pfd = { parent, POLLIN, 0 };

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1) {
		snprintf(err, errlen, "prctl(PR_SET_PDEATHSIG): %s",
		    strerror(errno));
		return -1;
	}
	/* A pidfd polls readable once its process is gone (getppid() says
	 * 0 either way: the parent is outside our pid namespace). */
	if (poll(&pfd, 1, 0) != 0) {
		snprintf(err, errlen, "mcp-exec is gone");
		return -1;
	}
	return 0;
}
