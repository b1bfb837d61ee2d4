/*
 * The sandbox's system call policy as data: a default-deny allowlist for
 * x86_64 and the calls allowed only for some arguments, walked one rule at
 * a time.  seccomp.c compiles the walk with libseccomp for the native
 * sandbox; gvisor_oci.c writes it into the OCI spec runsc loads into the
 * sentry.  Trusts nothing; links no library, so a program that only writes
 * gVisor bundles does not pull in libseccomp.
 */
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <linux/netlink.h>

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "seccomp_filter.h"

/* The namespace flags clone(2) may not carry. */
#define SC_CLONE_NS_FLAGS	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | \
				 CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
				 CLONE_NEWCGROUP)

/*
 * int and unsigned int arguments arrive in 64-bit registers whose upper
 * half the kernel ignores, so every comparison on them masks it off: a
 * filter that compared all 64 bits could be walked around by setting a
 * high bit (CVE-2019-10063, TIOCSTI through flatpak's filter).
 */
#define SC_LOW32		0xffffffffULL
#define SC_ARG_BITS		32

/* The socket type without SOCK_NONBLOCK/SOCK_CLOEXEC (SOCK_TYPE_MASK). */
#define SC_SOCK_TYPE_MASK	0xfULL

/* personality(0xffffffff) reads the persona without changing it. */
#define SC_PERSONA_QUERY	0xffffffffULL

/* Denied ioctl requests at most, for sc_allow_low32_except. */
#define SC_EXCEPT_MAX		4

/*
 * Allowed whatever their arguments.  Enough for CPython and its threads,
 * subprocess and multiprocessing ("fork"), numpy's BLAS threads, pandas,
 * matplotlib's Agg backend, and for the ASan runtime of our own tests.
 * Names a consumer does not know are skipped (seccomp.c, runsc), so
 * newer calls can be listed before libseccomp or gVisor learns them.
 */
static const char *const sc_allowed[] = {
	/* processes and threads; clone is argument-filtered below */
	"execve", "execveat", "exit", "exit_group", "fork", "vfork",
	"wait4", "waitid", "kill", "tkill", "tgkill", "rt_sigqueueinfo",
	"rt_tgsigqueueinfo", "pidfd_open", "pidfd_send_signal",
	"getpid", "getppid", "gettid", "getpgid", "getpgrp", "setpgid",
	"getsid", "setsid", "set_tid_address", "set_robust_list",
	"get_robust_list", "rseq", "arch_prctl", "map_shadow_stack",
	/* prctl: what it could loosen (PR_SET_MM, ambient capabilities)
	 * needs capabilities the sandbox has dropped; PR_SET_SECCOMP can
	 * only add filters */
	"prctl", "capget", "capset",
	"sched_yield", "sched_getaffinity", "sched_setaffinity",
	"sched_getparam", "sched_setparam", "sched_getscheduler",
	"sched_setscheduler", "sched_get_priority_max",
	"sched_get_priority_min", "sched_rr_get_interval", "sched_getattr",
	"sched_setattr", "getpriority", "setpriority", "ioprio_get",
	"ioprio_set", "getrlimit", "setrlimit", "prlimit64", "getrusage",
	"times", "getcpu", "uname", "sysinfo", "umask", "getrandom",
	"restart_syscall", "membarrier",

	/* credentials: the set* calls stay allowed because without
	 * CAP_SETUID/CAP_SETGID they can only shuffle the ids the process
	 * already has, and programs that drop privileges call them */
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid",
	"getgroups", "setuid", "setgid", "setreuid", "setregid",
	"setresuid", "setresgid", "setgroups", "setfsuid", "setfsgid",

	/* memory; memfd_create is for CPython and libffi (the pattern
	 * rules flag it elsewhere) */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise",
	"mincore", "msync", "mlock", "mlock2", "munlock", "mlockall",
	"munlockall", "get_mempolicy", "memfd_create", "pkey_alloc",
	"pkey_free", "pkey_mprotect",

	/* System V and POSIX IPC, confined by the IPC namespace */
	"shmget", "shmat", "shmdt", "shmctl", "semget", "semop",
	"semtimedop", "semctl", "msgget", "msgsnd", "msgrcv", "msgctl",
	"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
	"mq_notify", "mq_getsetattr",

	/* files; where the sandbox may write is Landlock's business */
	"read", "write", "readv", "writev", "pread64", "pwrite64",
	"preadv", "pwritev", "preadv2", "pwritev2", "open", "openat",
	"openat2", "creat", "close", "close_range", "dup", "dup2", "dup3",
	"lseek", "fcntl", "flock", "stat", "fstat", "lstat", "newfstatat",
	"statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2",
	"readlink", "readlinkat", "getdents", "getdents64", "getcwd",
	"chdir", "fchdir", "mkdir", "mkdirat", "rmdir", "unlink",
	"unlinkat", "rename", "renameat", "renameat2", "link", "linkat",
	"symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "fchmodat2",
	"chown", "fchown", "lchown", "fchownat", "utime", "utimes",
	"futimesat", "utimensat", "truncate", "ftruncate", "fallocate",
	"fsync", "fdatasync", "sync", "syncfs", "sync_file_range",
	"fadvise64", "readahead", "sendfile", "splice", "tee",
	"copy_file_range", "getxattr", "lgetxattr", "fgetxattr",
	"listxattr", "llistxattr", "flistxattr", "setxattr", "lsetxattr",
	"fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
	"inotify_init", "inotify_init1", "inotify_add_watch",
	"inotify_rm_watch",
	/* POSIX AIO's kernel side (io_uring is refused) */
	"io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents",
	"io_pgetevents",

	/* pipes, polling, events */
	"pipe", "pipe2", "poll", "ppoll", "select", "pselect6",
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
	"epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2", "signalfd",
	"signalfd4", "timerfd_create", "timerfd_settime",
	"timerfd_gettime", "futex", "futex_waitv",

	/* signals */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending",
	"rt_sigsuspend", "rt_sigtimedwait", "sigaltstack", "pause",

	/* time, read-only: setting clocks is refused */
	"clock_gettime", "clock_getres", "clock_nanosleep", "gettimeofday",
	"time", "nanosleep", "alarm", "getitimer", "setitimer",
	"timer_create", "timer_settime", "timer_gettime",
	"timer_getoverrun", "timer_delete",

	/* sockets once made; socket and socketpair are filtered below */
	"bind", "listen", "accept", "accept4", "connect", "getsockname",
	"getpeername", "sendto", "recvfrom", "sendmsg", "recvmsg",
	"sendmmsg", "recvmmsg", "shutdown", "setsockopt", "getsockopt",
};

/*
 * Deliberately refused.  The default action refuses them already; the
 * list exists so that an edit adding one of them to sc_allowed fails
 * loudly instead of quietly reopening it.
 */
static const char *const sc_refused[] = {
	/* other processes' memory and kernel objects */
	"ptrace", "process_vm_readv", "process_vm_writev", "process_madvise",
	"process_mrelease", "pidfd_getfd", "kcmp", "move_pages",
	"migrate_pages",
	/* namespaces, mounts and the file system tree */
	"unshare", "setns", "mount", "umount2", "pivot_root", "chroot",
	"move_mount", "open_tree", "fsopen", "fsmount", "fsconfig",
	"fspick", "mount_setattr", "open_by_handle_at", "name_to_handle_at",
	"mknod", "mknodat", "quotactl", "quotactl_fd", "fanotify_init",
	"fanotify_mark", "swapon", "swapoff", "acct",
	/* kernel attack surface with a record of exploits */
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup",
	"io_uring_enter", "io_uring_register", "keyctl", "add_key",
	"request_key", "vmsplice", "modify_ldt", "memfd_secret",
	"lookup_dcookie", "uselib", "remap_file_pages", "mbind",
	"set_mempolicy", "set_mempolicy_home_node",
	/* the machine, not the process */
	"reboot", "kexec_load", "kexec_file_load", "init_module",
	"finit_module", "delete_module", "syslog", "sethostname",
	"setdomainname", "settimeofday", "clock_settime", "adjtimex",
	"clock_adjtime", "iopl", "ioperm", "vhangup", "nfsservctl",
	"_sysctl", "sysfs", "ustat",
	/* our own walls: nothing in the sandbox needs to stack more */
	"seccomp", "landlock_create_ruleset", "landlock_add_rule",
	"landlock_restrict_self",
	/* argument-filtered below: an unconditional rule for one of them
	 * would make libseccomp drop the filtered ones */
	"clone", "clone3", "ioctl", "personality", "socket", "socketpair",
};

static int
sc_name_in(const char *name, const char *const *list, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return 1;
	return 0;
}

/* One rule of at most SECCOMP_CMP_MAX comparisons, handed to fn. */
static int
sc_emit(seccomp_rule_fn fn, void *arg, const char *name,
    enum seccomp_verdict verdict, unsigned ncmp,
    const struct seccomp_cmp *cmp, char *err, size_t errlen)
{
	struct seccomp_rule	 r;

	memset(&r, 0, sizeof(r));
	r.name = name;
	r.verdict = verdict;
	r.ncmp = ncmp;
	if (ncmp > 0)
		memcpy(r.cmp, cmp, ncmp * sizeof(*cmp));
	return fn(&r, arg, err, errlen);
}

static int
sc_allow(seccomp_rule_fn fn, void *arg, const char *name, unsigned ncmp,
    const struct seccomp_cmp *cmp, char *err, size_t errlen)
{
	return sc_emit(fn, arg, name, SECCOMP_ALLOW, ncmp, cmp, err, errlen);
}

/*
 * Allows `name` unless the low 32 bits of argument `argn` equal one of
 * deny[].  libseccomp has no masked "not equal", and an unconditional
 * allow would swallow any conditional refusal of the same call, so the
 * complement is spelled out: walking the bits from the top, each branch
 * that no denied value takes is allowed by one masked comparison.  That
 * is about 32 rules per denied value.
 */
static int
sc_allow_low32_except(seccomp_rule_fn fn, void *arg, const char *name,
    unsigned argn, const uint32_t *deny, size_t n, int bit, uint32_t prefix,
    char *err, size_t errlen)
{
	struct seccomp_cmp	 cmp;
	uint32_t		 sub[SC_EXCEPT_MAX], p;
	uint64_t		 mask = (SC_LOW32 >> bit) << bit;
	size_t			 i, nsub;
	uint32_t		 v;

	for (v = 0; v <= 1; v++) {
		p = prefix | v << bit;
		for (i = nsub = 0; i < n; i++)
			if ((deny[i] >> bit & 1) == v)
				sub[nsub++] = deny[i];
		if (nsub == 0) {
			cmp = (struct seccomp_cmp){ argn, mask, p };
			if (sc_allow(fn, arg, name, 1, &cmp, err, errlen) == -1)
				return -1;
		} else if (bit > 0 && sc_allow_low32_except(fn, arg, name,
		    argn, sub, nsub, bit - 1, p, err, errlen) == -1)
			return -1;
		/* else p is itself a denied value: no rule */
	}
	return 0;
}

static int
sc_add_allowed(seccomp_rule_fn fn, void *arg, char *err, size_t errlen)
{
	size_t	 i;

	for (i = 0; i < nitems(sc_allowed); i++) {
		if (sc_name_in(sc_allowed[i], sc_refused, nitems(sc_refused))) {
			snprintf(err, errlen, "seccomp: %s is both allowed "
			    "and refused", sc_allowed[i]);
			return -1;
		}
		if (sc_allow(fn, arg, sc_allowed[i], 0, NULL, err, errlen) ==
		    -1)
			return -1;
	}
	return 0;
}

/* fork and threads yes, new namespaces no. */
static int
sc_add_clone(seccomp_rule_fn fn, void *arg, char *err, size_t errlen)
{
	const struct seccomp_cmp cmp = { 0, SC_CLONE_NS_FLAGS, 0 };

	if (sc_allow(fn, arg, "clone", 1, &cmp, err, errlen) == -1)
		return -1;
	/* clone3 passes its flags in memory a filter cannot read; ENOSYS
	 * makes glibc fall back to clone, whose flags are checked above. */
	return sc_emit(fn, arg, "clone3", SECCOMP_ENOSYS, 0, NULL, err,
	    errlen);
}

/* Every ioctl but pushing input into a terminal (TIOCSTI, CVE-2017-5226)
 * and the console's TIOCLINUX, which can do the same through selections. */
static int
sc_add_ioctl(seccomp_rule_fn fn, void *arg, char *err, size_t errlen)
{
	static const uint32_t	 deny[] = { TIOCSTI, TIOCLINUX };

	_Static_assert(nitems(deny) <= SC_EXCEPT_MAX, "SC_EXCEPT_MAX");
	return sc_allow_low32_except(fn, arg, "ioctl", 1, deny, nitems(deny),
	    SC_ARG_BITS - 1, 0, err, errlen);
}

/* Only the plain Linux persona, and asking which one is set: the flags
 * (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE) switch off exploit mitigations. */
static int
sc_add_personality(seccomp_rule_fn fn, void *arg, char *err, size_t errlen)
{
	static const uint64_t	 ok[] = { PER_LINUX, SC_PERSONA_QUERY };
	struct seccomp_cmp	 cmp;
	size_t			 i;

	for (i = 0; i < nitems(ok); i++) {
		cmp = (struct seccomp_cmp){ 0, SC_LOW32, ok[i] };
		if (sc_allow(fn, arg, "personality", 1, &cmp, err, errlen) ==
		    -1)
			return -1;
	}
	return 0;
}

/*
 * Unix sockets of any kind; TCP and UDP over IPv4 and IPv6 (no raw or
 * packet sockets, no SCTP); netlink only for NETLINK_ROUTE, which
 * getaddrinfo uses to list addresses.  Every other family is refused.
 */
static int
sc_add_socket(seccomp_rule_fn fn, void *arg, char *err, size_t errlen)
{
	/*
	 * Internet sockets: TCP and UDP only, named by protocol or as the
	 * type's default (0).  UDP-Lite, MPTCP, SCTP, ICMP and raw are not.
	 */
	static const struct {
		int	type;
		int	protocol;
	} inet_kinds[] = {
		{ SOCK_STREAM, 0 }, { SOCK_STREAM, IPPROTO_TCP },
		{ SOCK_DGRAM, 0 }, { SOCK_DGRAM, IPPROTO_UDP },
	};
	static const int	 inet[] = { AF_INET, AF_INET6 };
	struct seccomp_cmp	 cmp[3];
	size_t			 i, j;

	cmp[0] = (struct seccomp_cmp){ 0, SC_LOW32, AF_UNIX };
	if (sc_allow(fn, arg, "socket", 1, cmp, err, errlen) == -1 ||
	    sc_allow(fn, arg, "socketpair", 1, cmp, err, errlen) == -1)
		return -1;
	for (i = 0; i < nitems(inet); i++) {
		for (j = 0; j < nitems(inet_kinds); j++) {
			cmp[0] = (struct seccomp_cmp){ 0, SC_LOW32,
			    (uint64_t)inet[i] };
			cmp[1] = (struct seccomp_cmp){ 1, SC_SOCK_TYPE_MASK,
			    (uint64_t)inet_kinds[j].type };
			cmp[2] = (struct seccomp_cmp){ 2, SC_LOW32,
			    (uint64_t)inet_kinds[j].protocol };
			if (sc_allow(fn, arg, "socket", 3, cmp, err, errlen) ==
			    -1)
				return -1;
		}
	}
	cmp[0] = (struct seccomp_cmp){ 0, SC_LOW32, AF_NETLINK };
	cmp[1] = (struct seccomp_cmp){ 2, SC_LOW32, NETLINK_ROUTE };
	return sc_allow(fn, arg, "socket", 2, cmp, err, errlen);
}

int
sandbox_seccomp_rules(seccomp_rule_fn fn, void *arg, char *err,
    size_t errlen)
{
	if (sc_add_allowed(fn, arg, err, errlen) == -1 ||
	    sc_add_clone(fn, arg, err, errlen) == -1 ||
	    sc_add_ioctl(fn, arg, err, errlen) == -1 ||
	    sc_add_personality(fn, arg, err, errlen) == -1 ||
	    sc_add_socket(fn, arg, err, errlen) == -1)
		return -1;
	return 0;
}
