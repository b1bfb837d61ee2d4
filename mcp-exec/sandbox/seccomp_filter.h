/*
 * The sandbox's system call filter: default deny, built with libseccomp
 * (never hand-assembled BPF), enough for CPython, numpy, pandas and
 * matplotlib.  Denied calls fail with EPERM; clone3 fails with ENOSYS so
 * glibc falls back to clone, whose namespace flags are then refused.
 */
#ifndef STOCKADE_SANDBOX_SECCOMP_FILTER_H
#define STOCKADE_SANDBOX_SECCOMP_FILTER_H

#include <stddef.h>
#include <linux/filter.h>

/* A compiled filter: built once, loaded into every sandbox. */
struct seccomp_prog {
	struct sock_filter	*filter;	/* owned; sandbox_seccomp_free */
	unsigned short		 len;
};

/* The filter compiled at build time (a copy; sandbox_seccomp_free it). */
void	sandbox_seccomp_builtin(struct seccomp_prog *);
/* Compiles the filter (libseccomp) now. */
int	sandbox_seccomp_build(struct seccomp_prog *, char *err, size_t errlen);
void	sandbox_seccomp_free(struct seccomp_prog *);
/*
 * "sha256:<hex>" of the filter's instructions (struct sock_filter, host
 * order) as loaded: which filter confined a sandbox, for its records.
 */
void	sandbox_seccomp_sha256(const struct seccomp_prog *, char *out,
	    size_t outlen);
/*
 * Loads a compiled filter into the calling process, all threads; it is
 * inherited across fork and execve.  PR_SET_NO_NEW_PRIVS must be set.
 */
int	sandbox_seccomp_load(const struct seccomp_prog *, char *err,
	    size_t errlen);

/* Both at once (tests).  Returns 0, or -1 with err. */
int	sandbox_seccomp_apply(char *err, size_t errlen);

#endif
