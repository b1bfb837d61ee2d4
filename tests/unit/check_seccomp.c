/*
 * mcp-exec/sandbox/seccomp.c: what the filter refuses (namespaces, ptrace,
 * raw sockets, TIOCSTI in both widths, other ABIs) and what it must let
 * through, down to a real CPython + numpy + pandas + matplotlib workload.
 */
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <linux/netlink.h>
#include <netinet/in.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>

#include "childtest.h"
#include "sandbox/seccomp_filter.h"

#define PY			"/usr/bin/python3"
#define WORKLOAD_TIMEOUT	120	/* seconds; about 2 s on a laptop */
#define X32_SYSCALL_BIT		0x40000000L
#define I386_NR_GETPID		20L
#define HIGH_BITS		0x100000000UL
#define SIGN_EXTENDED		0xffffffff00000000UL
#define CLONE_ARGS_WORDS	11	/* struct clone_args, version 2 */
#define IOCTL_SWEEP_LOW		0x10000	/* every request below this */
#define IOCTL_SWEEP_RANDOM	100000	/* then random 64-bit requests */

extern char **environ;

/* Arguments for the bodies that run Python. */
static char	 py_dir[PATH_MAX];

static int
filtered_status(void (*body)(void), char *msg, size_t msglen)
{
	return child_run(sandbox_seccomp_apply, body, msg, msglen);
}

static void
run_filtered(void (*body)(void))
{
	child_run_ok(sandbox_seccomp_apply, body);
}

static void
body_namespaces(void)
{
	uint64_t	 ca[CLONE_ARGS_WORDS] = { 0 };
	long		 r;
	int		 fd;

	CHILD_ERRNO(unshare(CLONE_NEWUSER), EPERM);
	CHILD_ERRNO(unshare(CLONE_NEWNS), EPERM);
	/* glibc's fork goes through clone; a namespace flag must not. */
	r = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), 0, 0,
	    0, 0);
	if (r == 0)
		_exit(0);
	CHILD_ASSERT(r == -1 && errno == EPERM);
	r = syscall(SYS_clone, (unsigned long)(CLONE_NEWNET | SIGCHLD), 0, 0,
	    0, 0);
	if (r == 0)
		_exit(0);
	CHILD_ASSERT(r == -1 && errno == EPERM);
	ca[4] = SIGCHLD;	/* exit_signal */
	r = syscall(SYS_clone3, ca, sizeof(ca));
	if (r == 0)
		_exit(0);
	CHILD_ASSERT(r == -1 && errno == ENOSYS);
	CHILD_ASSERT((fd = open("/proc/self/ns/net", O_RDONLY)) != -1);
	CHILD_ERRNO(setns(fd, 0), EPERM);
}

START_TEST(test_namespaces_refused_clone3_says_enosys)
{
	run_filtered(body_namespaces);
}
END_TEST

static void
body_dangerous(void)
{
	char		 buf[8];
	struct iovec	 local = { buf, sizeof(buf) };
	struct iovec	 remote = { buf, sizeof(buf) };

	CHILD_ERRNO(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM);
	CHILD_ERRNO(process_vm_readv(getppid(), &local, 1, &remote, 1, 0),
	    EPERM);
	CHILD_ERRNO(syscall(SYS_bpf, 0, NULL, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_add_key, "user", "k", "v", 1, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_request_key, "user", "k", NULL, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_userfaultfd, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_io_uring_setup, 1, NULL), EPERM);
	CHILD_ERRNO(syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_name_to_handle_at, AT_FDCWD, "/", NULL, NULL,
	    0), EPERM);
	CHILD_ERRNO(syscall(SYS_kexec_load, 0, 0, NULL, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_init_module, NULL, 0, ""), EPERM);
	CHILD_ERRNO(syscall(SYS_finit_module, -1, "", 0), EPERM);
	/* As root these would reach the kernel; the targets do not exist,
	 * so a broken filter shows as ENOENT rather than a mount. */
	CHILD_ERRNO(mount("none", "/nonexistent-stockade", "tmpfs", 0, NULL),
	    EPERM);
	CHILD_ERRNO(chroot("/nonexistent-stockade"), EPERM);
	CHILD_ERRNO(syscall(SYS_pivot_root, "/nonexistent-stockade", "/"),
	    EPERM);
	CHILD_ERRNO(mknod("/nonexistent-stockade/fifo", S_IFIFO | 0600, 0),
	    EPERM);
	CHILD_ERRNO(syscall(SYS_seccomp, 0, 0, NULL), EPERM);
	CHILD_ERRNO(syscall(SYS_landlock_create_ruleset, NULL, 0, 1), EPERM);
	CHILD_ERRNO(syscall(SYS_kcmp, getpid(), getppid(), 0, 0, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_pidfd_getfd, -1, 0, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_fsopen, "tmpfs", 0), EPERM);
	CHILD_ERRNO(syscall(SYS_vmsplice, -1, NULL, 0, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_modify_ldt, 0, NULL, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_clock_settime, CLOCK_REALTIME, NULL), EPERM);
	CHILD_ERRNO(syscall(SYS_sethostname, "x", 1), EPERM);
	CHILD_ERRNO(syscall(SYS_syslog, 3, NULL, 0), EPERM);
	/* A number no kernel has assigned: the default action, not ENOSYS. */
	CHILD_ERRNO(syscall(1000), EPERM);
}

START_TEST(test_dangerous_calls_refused)
{
	run_filtered(body_dangerous);
}
END_TEST

static void
body_sockets(void)
{
	int	 fd, sv[2];

	CHILD_ERRNO(socket(AF_PACKET, SOCK_RAW, 0), EPERM);
	CHILD_ERRNO(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), EPERM);
	CHILD_ERRNO(socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6),
	    EPERM);
	CHILD_ERRNO(socket(AF_VSOCK, SOCK_STREAM, 0), EPERM);
	CHILD_ERRNO(socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT), EPERM);
	CHILD_ERRNO(socket(AF_INET, SOCK_SEQPACKET, 0), EPERM);
	/* Bits the kernel ignores must not change the answer. */
	CHILD_ERRNO(syscall(SYS_socket, HIGH_BITS | AF_INET, SOCK_RAW, 0),
	    EPERM);
	CHILD_ERRNO(syscall(SYS_socket, AF_NETLINK, SOCK_RAW,
	    HIGH_BITS | NETLINK_AUDIT), EPERM);
	CHILD_ERRNO(socketpair(AF_INET, SOCK_STREAM, 0, sv), EPERM);

	CHILD_ASSERT((fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
	    NETLINK_ROUTE)) != -1);
	close(fd);
	CHILD_ASSERT((fd = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	close(fd);
	CHILD_ASSERT((fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, 0))
	    != -1);
	close(fd);
	CHILD_ASSERT((fd = socket(AF_UNIX, SOCK_SEQPACKET, 0)) != -1);
	close(fd);
	CHILD_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHILD_ASSERT(write(sv[0], "x", 1) == 1);
	close(sv[0]);
	close(sv[1]);
}

START_TEST(test_sockets_by_family_and_type)
{
	run_filtered(body_sockets);
}
END_TEST

static void
body_ioctl(void)
{
	char		 c = 'x';
	unsigned	 ptn;
	int		 m, s, n, p[2];

	CHILD_ASSERT((m = posix_openpt(O_RDWR | O_NOCTTY)) != -1);
	CHILD_ASSERT(grantpt(m) == 0 && unlockpt(m) == 0);
	CHILD_ASSERT((s = open(ptsname(m), O_RDWR | O_NOCTTY)) != -1);
	CHILD_ERRNO(ioctl(s, TIOCSTI, &c), EPERM);
	CHILD_ERRNO(ioctl(0, TIOCSTI, &c), EPERM);
	/* CVE-2019-10063: the kernel truncates the request to 32 bits. */
	CHILD_ERRNO(syscall(SYS_ioctl, s, HIGH_BITS | TIOCSTI, &c), EPERM);
	CHILD_ERRNO(syscall(SYS_ioctl, s, SIGN_EXTENDED | TIOCSTI, &c), EPERM);
	CHILD_ERRNO(ioctl(s, TIOCLINUX, &c), EPERM);
	CHILD_ERRNO(syscall(SYS_ioctl, s, HIGH_BITS | TIOCLINUX, &c), EPERM);
	/* Everything else passes, high bits or not. */
	CHILD_ASSERT(ioctl(m, TIOCGPTN, &ptn) == 0);
	CHILD_ASSERT(syscall(SYS_ioctl, m, SIGN_EXTENDED | TIOCGPTN, &ptn)
	    == 0);
	CHILD_ASSERT(pipe(p) == 0);
	CHILD_ASSERT(ioctl(p[0], FIONREAD, &n) == 0 && n == 0);
	CHILD_ASSERT(ioctl(p[0], FIOCLEX) == 0);
	CHILD_ASSERT(isatty(s) == 1);
}

/* A bad descriptor fails every ioctl with EBADF once the filter lets it
 * through, so the answer tells which requests the filter refuses. */
static int
ioctl_refused(unsigned long req)
{
	errno = 0;
	if (syscall(SYS_ioctl, -1, req, NULL) != -1)
		child_fail(__LINE__, "ioctl(-1) succeeded");
	if (errno != EPERM && errno != EBADF)
		child_fail(__LINE__, "ioctl(-1): unexpected errno");
	return errno == EPERM;
}

static void
body_ioctl_sweep(void)
{
	uint64_t	 x = 0x9e3779b97f4a7c15ULL, req;
	uint32_t	 low;
	unsigned	 i;

	for (i = 0; i < IOCTL_SWEEP_LOW; i++)
		CHILD_ASSERT(ioctl_refused(i) == (i == TIOCSTI ||
		    i == TIOCLINUX));
	for (i = 0; i < IOCTL_SWEEP_RANDOM; i++) {
		x ^= x << 13;	/* xorshift64 */
		x ^= x >> 7;
		x ^= x << 17;
		req = x;
		low = (uint32_t)req;
		CHILD_ASSERT(ioctl_refused(req) == (low == TIOCSTI ||
		    low == TIOCLINUX));
		CHILD_ASSERT(ioctl_refused((req & SIGN_EXTENDED) | TIOCSTI));
		CHILD_ASSERT(ioctl_refused((req & SIGN_EXTENDED) | TIOCLINUX));
	}
}

START_TEST(test_ioctl_tiocsti_refused_in_both_widths)
{
	run_filtered(body_ioctl);
}
END_TEST

START_TEST(test_ioctl_refuses_only_those_two_requests)
{
	run_filtered(body_ioctl_sweep);
}
END_TEST

static void
body_personality(void)
{
	CHILD_ASSERT(personality(0xffffffff) == PER_LINUX);
	CHILD_ASSERT(personality(PER_LINUX) == PER_LINUX);
	CHILD_ERRNO(personality(PER_LINUX | ADDR_NO_RANDOMIZE), EPERM);
	CHILD_ERRNO(personality(PER_LINUX32), EPERM);
	CHILD_ERRNO(personality(READ_IMPLIES_EXEC), EPERM);
}

START_TEST(test_personality_query_only)
{
	run_filtered(body_personality);
}
END_TEST

static void *
thread_main(void *arg)
{
	*(int *)arg = 42;
	return arg;
}

static void
body_processes(void)
{
	char		*argv[] = { "true", NULL };
	pthread_t	 t;
	pid_t		 pid;
	void		*ret;
	int		 v = 0, st;

	CHILD_ASSERT((pid = fork()) != -1);
	if (pid == 0)
		_exit(7);
	CHILD_ASSERT(waitpid(pid, &st, 0) == pid);
	CHILD_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 7);

	CHILD_ASSERT(pthread_create(&t, NULL, thread_main, &v) == 0);
	CHILD_ASSERT(pthread_join(t, &ret) == 0 && ret == &v && v == 42);

	/* posix_spawn is clone(CLONE_VM | CLONE_VFORK), then execve. */
	CHILD_ASSERT(posix_spawn(&pid, "/bin/true", NULL, NULL, argv,
	    environ) == 0);
	CHILD_ASSERT(waitpid(pid, &st, 0) == pid);
	CHILD_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	CHILD_ASSERT((pid = fork()) != -1);
	if (pid == 0) {
		execve("/bin/true", argv, environ);
		_exit(127);
	}
	CHILD_ASSERT(waitpid(pid, &st, 0) == pid);
	CHILD_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

START_TEST(test_fork_threads_spawn_and_exec_work)
{
	run_filtered(body_processes);
}
END_TEST

static void
body_i386(void)
{
	long	 r;

	/* 32-bit getpid through int 0x80; the process must not survive. */
	__asm__ volatile ("int $0x80" : "=a"(r) : "a"(I386_NR_GETPID)
	    : "memory", "r8", "r9", "r10", "r11");
	(void)r;
}

static void
body_x32(void)
{
	syscall(X32_SYSCALL_BIT | SYS_getpid);
}

START_TEST(test_other_abis_kill_the_process)
{
	char	 msg[CHILD_MSG_MAX];
	int	 st;

	st = filtered_status(body_i386, msg, sizeof(msg));
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "i386: status %#x %s", (unsigned)st, msg);
	st = filtered_status(body_x32, msg, sizeof(msg));
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "x32: status %#x %s", (unsigned)st, msg);
}
END_TEST

static void *
late_thread(void *arg)
{
	int	*fds = arg;
	char	 c;

	if (read(fds[0], &c, 1) != 1)
		return (void *)-1L;
	errno = 0;
	if (unshare(CLONE_NEWUSER) == -1 && errno == EPERM)
		return NULL;
	return (void *)-1L;
}

START_TEST(test_threads_started_before_apply_are_filtered)
{
	char		 err[256];
	pthread_t	 t;
	void		*ret;
	int		 fds[2], st;
	pid_t		 pid;

	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		if (pipe(fds) == -1 ||
		    pthread_create(&t, NULL, late_thread, fds) != 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
		    sandbox_seccomp_apply(err, sizeof(err)) == -1 ||
		    write(fds[1], "x", 1) != 1 ||
		    pthread_join(t, &ret) != 0)
			_exit(2);
		_exit(ret == NULL ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x",
	    (unsigned)st);
}
END_TEST

START_TEST(test_refuses_without_no_new_privs)
{
	char	 err[256] = "";

	/* As root the kernel itself would accept the filter without it. */
	ck_assert_int_eq(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
	ck_assert_int_eq(sandbox_seccomp_apply(err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no_new_privs"));
}
END_TEST

/* Everything a data-analysis script touches: imports, BLAS, a plot,
 * threads, subprocess, sockets, selectors, multiprocessing's fork pool,
 * ctypes, hashing, temp files, time zones, name lookup. */
static const char workload[] =
    "import os, sys, threading, subprocess, socket, multiprocessing\n"
    "import ctypes, hashlib, json, tempfile, select, selectors, time\n"
    "import datetime, zoneinfo\n"
    "import numpy as np\n"
    "import pandas as pd\n"
    "import matplotlib\n"
    "matplotlib.use('Agg')\n"
    "import matplotlib.pyplot as plt\n"
    "out = sys.argv[1]\n"
    "df = pd.DataFrame({'k': ['a', 'b', 'a', 'c'] * 25, 'v': range(100)})\n"
    "g = df.groupby('k')['v'].sum()\n"
    "assert g['a'] == sum(v for v in range(100) if v % 4 in (0, 2))\n"
    "a = np.random.default_rng(1).random((200, 200)) + np.eye(200) * 200\n"
    "assert np.allclose(a @ np.linalg.inv(a), np.eye(200))\n"
    "fig, ax = plt.subplots()\n"
    "ax.plot(range(10))\n"
    "png = os.path.join(out, 'plot.png')\n"
    "fig.savefig(png)\n"
    "assert os.path.getsize(png) > 1000\n"
    "res = []\n"
    "ts = [threading.Thread(target=lambda i=i: res.append(i * i))"
    " for i in range(4)]\n"
    "for t in ts: t.start()\n"
    "for t in ts: t.join()\n"
    "assert sorted(res) == [0, 1, 4, 9]\n"
    "subprocess.run(['/bin/true'], check=True)\n"
    "assert subprocess.run(['/bin/echo', 'hi'], capture_output=True)"
    ".stdout == b'hi\\n'\n"
    "s1, s2 = socket.socketpair()\n"
    "sel = selectors.DefaultSelector()\n"
    "sel.register(s2, selectors.EVENT_READ)\n"
    "s1.sendall(b'x')\n"
    "assert sel.select(timeout=5) and s2.recv(1) == b'x'\n"
    "r, w = os.pipe()\n"
    "os.write(w, b'y')\n"
    "assert select.select([r], [], [], 5)[0] == [r]\n"
    "def sq(x):\n"
    "    return x * x\n"
    "with multiprocessing.get_context('fork').Pool(2) as p:\n"
    "    assert p.map(sq, range(10)) == [x * x for x in range(10)]\n"
    "libc = ctypes.CDLL(None)\n"
    "assert libc.getpid() == os.getpid()\n"
    "cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda x: x + 1)\n"
    "assert cb(1) == 2\n"
    "assert len(hashlib.sha256(b'x').hexdigest()) == 64\n"
    "assert json.loads(json.dumps({'a': [1, 2]})) == {'a': [1, 2]}\n"
    "with tempfile.TemporaryDirectory() as d:\n"
    "    with open(os.path.join(d, 'f'), 'w') as f:\n"
    "        f.write('z')\n"
    "time.sleep(0.01)\n"
    "assert time.monotonic() > 0\n"
    "datetime.datetime.now(zoneinfo.ZoneInfo('Europe/Paris'))\n"
    "socket.getaddrinfo('localhost', 80)\n"
    "socket.getaddrinfo('localhost', 80, flags=socket.AI_ADDRCONFIG)\n"
    "print('workload ok')\n";

static const char segv[] = "import ctypes\nctypes.string_at(0)\n";

static void
body_python(const char *script)
{
	char	 mpl[PATH_MAX], tmp[PATH_MAX], home[PATH_MAX], log[PATH_MAX];
	char	 mplenv[PATH_MAX + 16], tmpenv[PATH_MAX + 16];
	char	 homeenv[PATH_MAX + 16];
	char	*argv[] = { PY, "-I", "-c", (char *)script, py_dir, NULL };
	char	*envp[] = { "PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", mplenv,
		    tmpenv, homeenv, NULL };
	int	 fd;

	CHILD_ASSERT(xsnprintf(mpl, sizeof(mpl), "%s/mpl", py_dir) != -1);
	CHILD_ASSERT(xsnprintf(tmp, sizeof(tmp), "%s/tmp", py_dir) != -1);
	CHILD_ASSERT(xsnprintf(home, sizeof(home), "%s/home", py_dir) != -1);
	CHILD_ASSERT(xsnprintf(log, sizeof(log), "%s/python.log", py_dir)
	    != -1);
	CHILD_ASSERT(xsnprintf(mplenv, sizeof(mplenv), "MPLCONFIGDIR=%s", mpl)
	    != -1);
	CHILD_ASSERT(xsnprintf(tmpenv, sizeof(tmpenv), "TMPDIR=%s", tmp)
	    != -1);
	CHILD_ASSERT(xsnprintf(homeenv, sizeof(homeenv), "HOME=%s", home)
	    != -1);
	CHILD_ASSERT(mkdir(mpl, 0700) == 0 && mkdir(tmp, 0700) == 0 &&
	    mkdir(home, 0700) == 0);
	CHILD_ASSERT((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600))
	    != -1);
	CHILD_ASSERT(dup2(fd, 1) == 1 && dup2(fd, 2) == 2);
	close(fd);
	execve(PY, argv, envp);
	child_fail(__LINE__, "execve " PY);
}

static void
body_workload(void)
{
	body_python(workload);
}

static void
body_segv(void)
{
	body_python(segv);
}

/* The last lines Python wrote, for a failure message. */
static const char *
python_log_tail(void)
{
	static char	 tail[2048];
	char		 path[PATH_MAX], *data;
	size_t		 len, off;

	tu_path(path, sizeof(path), py_dir, "python.log");
	data = tu_read(path, &len);
	off = len > sizeof(tail) - 1 ? len - (sizeof(tail) - 1) : 0;
	memcpy(tail, data + off, len - off);
	tail[len - off] = '\0';
	free(data);
	return tail;
}

/* The build-time copy must be exactly what the rules compile to now. */
static void
builtin_matches(int (*build)(struct seccomp_prog *, char *, size_t),
    void (*copy)(struct seccomp_prog *))
{
	struct seccomp_prog	 built, builtin;
	char			 err[512];

	ck_assert_msg(build(&built, err, sizeof(err)) == 0, "%s", err);
	copy(&builtin);
	ck_assert_uint_eq(built.len, builtin.len);
	ck_assert_int_eq(memcmp(built.filter, builtin.filter,
	    built.len * sizeof(*built.filter)), 0);
	sandbox_seccomp_free(&built);
	sandbox_seccomp_free(&builtin);
}

START_TEST(test_builtin_filter_matches_the_rules)
{
	builtin_matches(sandbox_seccomp_build, sandbox_seccomp_builtin);
}
END_TEST

/* The wasm runtime's build-time copy, likewise. */
START_TEST(test_builtin_wasm_filter_matches_the_rules)
{
	builtin_matches(sandbox_seccomp_build_wasm,
	    sandbox_seccomp_builtin_wasm);
}
END_TEST

static int
wasm_apply(char *err, size_t errlen)
{
	struct seccomp_prog	 prog;
	int			 rv;

	if (sandbox_seccomp_build_wasm(&prog, err, errlen) == -1)
		return -1;
	rv = sandbox_seccomp_load(&prog, err, errlen);
	sandbox_seccomp_free(&prog);
	return rv;
}

/*
 * What the native list allows and node never calls: refused to the wasm
 * runtime, whose only native code is node's.  The native filter's
 * refusals hold here too (same rules, fewer of them).
 */
static void
body_wasm_cut(void)
{
	CHILD_ERRNO(syscall(SYS_fork), EPERM);
	CHILD_ERRNO(syscall(SYS_vfork), EPERM);
	CHILD_ERRNO(syscall(SYS_execveat, AT_FDCWD, "/nonexistent", NULL,
	    NULL, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_shmget, 0, 4096, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_msgget, 0, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_memfd_create, "x", 0), EPERM);
	CHILD_ERRNO(syscall(SYS_io_setup, 1, NULL), EPERM);
	CHILD_ERRNO(syscall(SYS_inotify_init1, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_setuid, 65534), EPERM);
	CHILD_ERRNO(syscall(SYS_setpgid, 0, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_splice, -1, NULL, -1, NULL, 1, 0), EPERM);
	CHILD_ERRNO(syscall(SYS_personality, 0xffffffffUL), EPERM);
	CHILD_ERRNO(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM);
	CHILD_ERRNO(syscall(SYS_io_uring_setup, 1, NULL), EPERM);
	CHILD_ERRNO(unshare(CLONE_NEWUSER), EPERM);
	/* What node needs still works: a thread, a file, the clock. */
	CHILD_ASSERT(getpid() > 0 && time(NULL) > 0);
	CHILD_ASSERT(close(open("/dev/null", O_RDONLY)) == 0);
}

START_TEST(test_wasm_filter_refuses_what_node_never_calls)
{
	child_run_ok(wasm_apply, body_wasm_cut);
}
END_TEST

START_TEST(test_python_data_workload_runs)
{
	char	 msg[CHILD_MSG_MAX];
	int	 st;

	tu_tmpdir(py_dir, sizeof(py_dir));
	st = filtered_status(body_workload, msg, sizeof(msg));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "status %#x %s\n%s", (unsigned)st, msg, python_log_tail());
	ck_assert_ptr_nonnull(strstr(python_log_tail(), "workload ok"));
}
END_TEST

START_TEST(test_python_segfault_still_kills_with_sigsegv)
{
	char	 msg[CHILD_MSG_MAX];
	int	 st;

	tu_tmpdir(py_dir, sizeof(py_dir));
	st = filtered_status(body_segv, msg, sizeof(msg));
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
	    "status %#x %s\n%s", (unsigned)st, msg, python_log_tail());
}
END_TEST

static Suite *
seccomp_suite(void)
{
	Suite	*s = suite_create("seccomp");
	TCase	*tc = tcase_create("core");
	TCase	*py = tcase_create("python");

	tcase_add_test(tc, test_namespaces_refused_clone3_says_enosys);
	tcase_add_test(tc, test_dangerous_calls_refused);
	tcase_add_test(tc, test_sockets_by_family_and_type);
	tcase_add_test(tc, test_ioctl_tiocsti_refused_in_both_widths);
	tcase_add_test(tc, test_ioctl_refuses_only_those_two_requests);
	tcase_add_test(tc, test_personality_query_only);
	tcase_add_test(tc, test_fork_threads_spawn_and_exec_work);
	tcase_add_test(tc, test_other_abis_kill_the_process);
	tcase_add_test(tc, test_threads_started_before_apply_are_filtered);
	tcase_add_test(tc, test_refuses_without_no_new_privs);
	tcase_add_test(tc, test_builtin_filter_matches_the_rules);
	tcase_add_test(tc, test_builtin_wasm_filter_matches_the_rules);
	tcase_add_test(tc, test_wasm_filter_refuses_what_node_never_calls);
	suite_add_tcase(s, tc);
	tcase_set_timeout(py, WORKLOAD_TIMEOUT);
	tcase_add_test(py, test_python_data_workload_runs);
	tcase_add_test(py, test_python_segfault_still_kills_with_sigsegv);
	suite_add_tcase(s, py);
	return s;
}

CHECK_MAIN(seccomp_suite)
