/*
 * The wasm runtime's system call policy: the native allowlist cut down to
 * what node (V8, libuv, its permission model) and the sandbox's init need
 * to run Pyodide.  WebAssembly code makes no system call itself; what is
 * left here is node's, so a V8 or wasm escape meets this shorter list.
 * The rules are seccomp_rules.c's, argument filters included: this file
 * only drops rules, never adds or loosens one.
 */
#include <stdio.h>
#include <string.h>

#include "seccomp_filter.h"
#include "util.h"

/*
 * Measured (strace -f of node running the driver and the escape suite's
 * cases, the integration tests) plus the file operations Python's os
 * module maps to through Pyodide's NODEFS, and the sandbox's init, which
 * runs under the filter (fork through clone, wait4, execve of node).
 */
static const char *const sc_wasm_kept[] = {
	/* node's threads and memory: V8 maps JIT code and wasm memory */
	"execve", "exit", "exit_group", "clone", "clone3", "wait4",
	"set_tid_address", "set_robust_list", "get_robust_list", "rseq",
	"arch_prctl", "prctl", "futex", "sched_yield", "sched_getaffinity",
	"getcpu", "membarrier", "brk", "mmap", "munmap", "mremap", "mprotect",
	"madvise", "mincore", "pkey_alloc", "pkey_free", "pkey_mprotect",
	"prlimit64", "getrlimit", "uname", "sysinfo", "getrandom", "getpid",
	"getppid", "gettid", "getuid", "geteuid", "getgid", "getegid",
	"getresuid", "getresgid", "getgroups", "capget", "kill", "tkill",
	"tgkill",
	/* signals (SIGINT is the interrupt) and time */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait",
	"sigaltstack", "clock_gettime", "clock_getres", "clock_nanosleep",
	"nanosleep", "gettimeofday",
	/* libuv's loop */
	"epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
	"epoll_pwait2", "eventfd2", "pipe2", "poll", "ppoll", "ioctl",
	/* files: node's own, and what NODEFS does for Python's os module */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "open",
	"openat", "close", "close_range", "dup", "dup2", "dup3", "lseek",
	"fcntl", "fstat", "stat", "lstat", "newfstatat", "statx", "statfs",
	"fstatfs", "access", "faccessat", "faccessat2", "readlink",
	"readlinkat", "getdents64", "getcwd", "chdir", "mkdir", "mkdirat",
	"rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2",
	"symlink", "symlinkat", "link", "linkat", "chmod", "fchmod",
	"fchmodat", "utimensat", "truncate", "ftruncate", "fsync",
	"fdatasync", "fadvise64",
	/* sockets: the control socket, and node's (ws) where the profile's
	 * network policy lets any through; socket() keeps its filter */
	"socket", "socketpair", "connect", "bind", "listen", "accept4",
	"getsockname", "getpeername", "sendto", "recvfrom", "sendmsg",
	"recvmsg", "shutdown", "setsockopt", "getsockopt",
};

struct sc_wasm_walk {
	seccomp_rule_fn	 fn;
	void		*arg;
};

static int
sc_wasm_keep(const struct seccomp_rule *r, void *arg, char *err,
    size_t errlen)
{
	struct sc_wasm_walk	*w = arg;
	size_t			 i;

	for (i = 0; i < nitems(sc_wasm_kept); i++)
		if (strcmp(r->name, sc_wasm_kept[i]) == 0)
			return w->fn(r, w->arg, err, errlen);
	return 0;
}

int
sandbox_seccomp_rules_wasm(seccomp_rule_fn fn, void *arg, char *err,
    size_t errlen)
{
	struct sc_wasm_walk	 w = { fn, arg };

	return sandbox_seccomp_rules(sc_wasm_keep, &w, err, errlen);
}
