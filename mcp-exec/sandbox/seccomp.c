/*
 * The sandbox's system call filter compiled for the native sandbox: the
 * rules of seccomp_rules.c, x86_64 only, built with libseccomp.  Trusts
 * libseccomp to compile the rules and the kernel to enforce them.
 */
#include <sys/prctl.h>

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "util.h"
#include "seccomp_filter.h"

/* libseccomp's binary-tree layout: a long allowlist costs log(n) jumps. */
#define SC_OPTIMIZE_BTREE	2

/* One rule of the walk into the libseccomp context arg. */
static int
sc_add(const struct seccomp_rule *r, void *arg, char *err, size_t errlen)
{
	struct scmp_arg_cmp	 cmp[SECCOMP_CMP_MAX];
	uint32_t		 action;
	unsigned		 i;
	int			 sys, rc;

	sys = seccomp_syscall_resolve_name(r->name);
	if (sys == __NR_SCMP_ERROR) {
		log_debug("seccomp: %s unknown to libseccomp, skipped",
		    r->name);
		return 0;
	}
	for (i = 0; i < r->ncmp; i++)
		cmp[i] = SCMP_CMP(r->cmp[i].arg, SCMP_CMP_MASKED_EQ,
		    r->cmp[i].mask, r->cmp[i].value);
	action = r->verdict == SECCOMP_ENOSYS ? SCMP_ACT_ERRNO(ENOSYS) :
	    SCMP_ACT_ALLOW;
	if ((rc = seccomp_rule_add_array(arg, action, sys, r->ncmp, cmp)) <
	    0) {
		snprintf(err, errlen, "seccomp_rule_add(%s): %s", r->name,
		    strerror(-rc));
		return -1;
	}
	return 0;
}

static int
sc_attr(scmp_filter_ctx ctx, enum scmp_filter_attr attr, uint32_t value,
    const char *what, char *err, size_t errlen)
{
	int	 rc;

	if ((rc = seccomp_attr_set(ctx, attr, value)) < 0) {
		snprintf(err, errlen, "seccomp_attr_set(%s): %s", what,
		    strerror(-rc));
		return -1;
	}
	return 0;
}

/* Writes the compiled filter to a memory file and reads it back. */
static int
sc_export(scmp_filter_ctx ctx, struct seccomp_prog *prog, char *err,
    size_t errlen)
{
	off_t	 size;
	ssize_t	 n;
	int	 fd, rc, rv = -1;

	if ((fd = memfd_create("seccomp", MFD_CLOEXEC)) == -1) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return -1;
	}
	if ((rc = seccomp_export_bpf(ctx, fd)) < 0) {
		snprintf(err, errlen, "seccomp_export_bpf: %s", strerror(-rc));
		goto out;
	}
	if ((size = lseek(fd, 0, SEEK_END)) <= 0 ||
	    size % (off_t)sizeof(struct sock_filter) != 0 ||
	    size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS ||
	    lseek(fd, 0, SEEK_SET) == -1) {
		snprintf(err, errlen, "seccomp: unexpected filter size");
		goto out;
	}
	prog->filter = xmalloc((size_t)size);
	if ((n = read_all(fd, prog->filter, (size_t)size)) != (ssize_t)size) {
		snprintf(err, errlen, "seccomp: reading the filter back failed");
		free(prog->filter);
		prog->filter = NULL;
		goto out;
	}
	prog->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	rv = 0;
out:
	close(fd);
	return rv;
}

static int
sc_build(struct seccomp_prog *prog, int (*walk)(seccomp_rule_fn, void *,
    char *, size_t), char *err, size_t errlen)
{
	scmp_filter_ctx	 ctx;
	int		 ret = -1;

	memset(prog, 0, sizeof(*prog));
	if ((ctx = seccomp_init(SCMP_ACT_ERRNO(SECCOMP_DENY_ERRNO))) == NULL) {
		snprintf(err, errlen, "seccomp_init failed");
		errno = ENOMEM;
		return -1;
	}
	/*
	 * Only the native ABI gets rules.  A 32-bit (int 0x80) or x32 call
	 * kills the process: those tables number calls differently, and
	 * nothing we run uses them.  The load itself (TSYNC, no_new_privs)
	 * is sandbox_seccomp_load's.
	 */
	if (sc_attr(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS,
	    "ACT_BADARCH", err, errlen) == -1 ||
	    sc_attr(ctx, SCMP_FLTATR_CTL_OPTIMIZE, SC_OPTIMIZE_BTREE,
	    "CTL_OPTIMIZE", err, errlen) == -1)
		goto out;
	if (walk(sc_add, ctx, err, errlen) == -1 ||
	    sc_export(ctx, prog, err, errlen) == -1)
		goto out;
	ret = 0;
out:
	seccomp_release(ctx);
	return ret;
}

int
sandbox_seccomp_build(struct seccomp_prog *prog, char *err, size_t errlen)
{
	return sc_build(prog, sandbox_seccomp_rules, err, errlen);
}

int
sandbox_seccomp_build_wasm(struct seccomp_prog *prog, char *err,
    size_t errlen)
{
	return sc_build(prog, sandbox_seccomp_rules_wasm, err, errlen);
}

int
sandbox_seccomp_apply(char *err, size_t errlen)
{
	struct seccomp_prog	 prog;
	int			 rv;

	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(err, errlen, "seccomp: no_new_privs is not set");
		errno = EPERM;
		return -1;
	}
	if (sandbox_seccomp_build(&prog, err, errlen) == -1)
		return -1;
	rv = sandbox_seccomp_load(&prog, err, errlen);
	sandbox_seccomp_free(&prog);
	return rv;
}
