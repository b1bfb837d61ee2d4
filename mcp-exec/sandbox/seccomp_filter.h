/*
 * The sandbox's system call filter: default deny, built with libseccomp
 * (never hand-assembled BPF), enough for CPython, numpy, pandas and
 * matplotlib.  Denied calls fail with EPERM; clone3 fails with ENOSYS so
 * glibc falls back to clone, whose namespace flags are then refused.
 * One policy (seccomp_rules.c) for both walls: compiled for the native
 * sandbox (seccomp.c), written as the OCI spec's for gVisor (gvisor_oci.c).
 */
#ifndef STOCKADE_SANDBOX_SECCOMP_FILTER_H
#define STOCKADE_SANDBOX_SECCOMP_FILTER_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>

/* What a call no rule allows returns. */
#define SECCOMP_DENY_ERRNO	EPERM
/* Argument comparisons in one rule, at most. */
#define SECCOMP_CMP_MAX		3

/* A rule allows its call, or answers it ENOSYS without running it. */
enum seccomp_verdict {
	SECCOMP_ALLOW,
	SECCOMP_ENOSYS,
};

/* Holds when (argument arg & mask) == value. */
struct seccomp_cmp {
	unsigned	 arg;
	uint64_t	 mask;
	uint64_t	 value;
};

/* One rule: the call by name, when all of its comparisons hold. */
struct seccomp_rule {
	const char		*name;
	enum seccomp_verdict	 verdict;
	unsigned		 ncmp;
	struct seccomp_cmp	 cmp[SECCOMP_CMP_MAX];
};

/* Returns 0, or -1 with err to stop the walk. */
typedef int	(*seccomp_rule_fn)(const struct seccomp_rule *, void *arg,
		    char *err, size_t errlen);

/*
 * The policy (seccomp_rules.c): calls fn with each rule in order, the
 * rule borrowed for the call.  A name the consumer does not know is its
 * to skip.  Returns 0, or -1 with err (fn's, or an inconsistent policy).
 */
int	sandbox_seccomp_rules(seccomp_rule_fn, void *arg, char *err,
	    size_t errlen);
/* The wasm runtime's: the same rules, only those node needs
 * (seccomp_wasm.c). */
int	sandbox_seccomp_rules_wasm(seccomp_rule_fn, void *arg, char *err,
	    size_t errlen);

/* A compiled filter: built once, loaded into every sandbox. */
struct seccomp_prog {
	struct sock_filter	*filter;	/* owned; sandbox_seccomp_free */
	unsigned short		 len;
};

/* The filter compiled at build time (a copy; sandbox_seccomp_free it). */
void	sandbox_seccomp_builtin(struct seccomp_prog *);
void	sandbox_seccomp_builtin_wasm(struct seccomp_prog *);
/* Compiles the filter (libseccomp) now. */
int	sandbox_seccomp_build(struct seccomp_prog *, char *err, size_t errlen);
int	sandbox_seccomp_build_wasm(struct seccomp_prog *, char *err,
	    size_t errlen);
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
