/*
 * A sandbox's init, from clone to the command (spawn_int.h): the
 * containment checklist in order (namespaces, maps awaited, mounts and
 * pivot_root, hostname, loopback, rlimits, capabilities dropped,
 * no_new_privs, Landlock, seccomp last), each failure reported to the
 * parent and fatal; then it runs the command with a fixed environment,
 * reaps everything, and reports the command's wait status.  Trusts
 * nothing it inherited: descriptors beyond its own are closed first.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "landlock.h"
#include "log.h"
#include "mounts.h"
#include "ns.h"
#include "privs.h"
#include "sandbox.h"
#include "seccomp_filter.h"
#include "spawn_int.h"
#include "util.h"

const char *const sandbox_env[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"HOME=/tmp",
	"TMPDIR=/tmp",
	"LANG=C.UTF-8",
	"LC_ALL=C.UTF-8",
	"USER=sandbox",
	"LOGNAME=sandbox",
	"TERM=dumb",
	"MPLBACKEND=Agg",
	"MPLCONFIGDIR=/tmp/.matplotlib",
	"PYTHONDONTWRITEBYTECODE=1",
	"PYTHONUNBUFFERED=1",
	"OPENBLAS_NUM_THREADS=1",
	"OMP_NUM_THREADS=1",
	NULL
};

/* The package layer last: only sandboxes that have one get it. */
static const char *const writable_dirs[] = { "/workspace", "/tmp", "/dev/shm",
	SANDBOX_PACKAGES_DIR };
static const char *const writable_devs[] = { "/dev/null", "/dev/zero", "/dev/full" };

static void __attribute__((noreturn))
child_fail(int sync, const char *err)
{
	char	 msg[SANDBOX_ERR_MAX + 1];
	size_t	 n = strlen(err);

	msg[0] = MSG_ERROR;
	if (n > SANDBOX_ERR_MAX)
		n = SANDBOX_ERR_MAX;
	memcpy(msg + 1, err, n);
	/* Nothing to do if the parent is gone: it will see init exit. */
	if (write(sync, msg, n + 1) == -1)
		_exit(127);
	_exit(127);
}

/*
 * Keeps exactly the three descriptors init needs, at fixed numbers:
 * nothing else of mcp-exec (leases, sockets, logs) reaches the sandbox.
 */
static int
fds_keep(int sync, int out, int err_fd, int ctl, char *err, size_t errlen)
{
	int	 hi = 64, null;

	/* Move above anything we overwrite, then down into place. */
	if ((sync = fcntl(sync, F_DUPFD_CLOEXEC, hi)) == -1 ||
	    (out = fcntl(out, F_DUPFD_CLOEXEC, hi)) == -1 ||
	    (err_fd = fcntl(err_fd, F_DUPFD_CLOEXEC, hi)) == -1 ||
	    (ctl != -1 && (ctl = fcntl(ctl, F_DUPFD_CLOEXEC, hi)) == -1) ||
	    dup3(sync, FD_SYNC, O_CLOEXEC) == -1 ||
	    dup3(out, FD_OUT, O_CLOEXEC) == -1 ||
	    dup3(err_fd, FD_ERR, O_CLOEXEC) == -1 ||
	    (ctl != -1 && dup3(ctl, FD_CTL, O_CLOEXEC) == -1)) {
		snprintf(err, errlen, "arranging descriptors: %s",
		    strerror(errno));
		return -1;
	}
	if (syscall(SYS_close_range, (ctl != -1 ? FD_CTL : FD_ERR) + 1, ~0U,
	    0) == -1) {
		snprintf(err, errlen, "close_range: %s", strerror(errno));
		return -1;
	}
	/* mcp-exec's own stdio is the caller's: not for the sandbox. */
	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
	    dup2(null, 0) == -1 || dup2(null, 1) == -1 || dup2(null, 2) == -1) {
		snprintf(err, errlen, "stdio to /dev/null: %s", strerror(errno));
		return -1;
	}
	if (null > 2)
		close(null);
	return 0;
}

/*
 * init is a copy of mcp-exec: its memory still holds the caller's argv
 * and environment, which /proc/1/cmdline shows to anyone.  Wipe them.
 */
static void
scrub_inherited(char **argv_start)
{
	extern char	**environ;
	char		**p;

	for (p = environ; p != NULL && *p != NULL; p++)
		explicit_bzero(*p, strlen(*p));
	for (p = argv_start; p != NULL && *p != NULL; p++)
		explicit_bzero(*p, strlen(*p));
	environ = NULL;
}

static void __attribute__((noreturn))
exec_command(const struct sandbox_spec *s)
{
	const char	*env[SANDBOX_ENV_MAX + 1];
	size_t		 n = 0, i;
	int		 null;

	/* The fixed list, then what the profile adds (never the caller's). */
	for (i = 0; s->envp != NULL && s->envp[i] != NULL; i++)
		if (n < SANDBOX_ENV_MAX)
			env[n++] = s->envp[i];
	for (i = 0; s->env_extra != NULL && s->env_extra[i] != NULL; i++)
		if (n < SANDBOX_ENV_MAX)
			env[n++] = s->env_extra[i];
	env[n] = NULL;
	if ((null = open("/dev/null", O_RDONLY)) == -1 ||
	    dup2(null, 0) == -1 || dup2(FD_OUT, 1) == -1 ||
	    dup2(FD_ERR, 2) == -1 ||
	    (s->control_fd != -1 && dup2(FD_CTL, SANDBOX_CONTROL_FD) == -1))
		_exit(127);
	execve(s->argv[0], (char *const *)s->argv, (char *const *)env);
	dprintf(2, "sandbox: cannot execute %s: %s\n", s->argv[0],
	    strerror(errno));
	_exit(127);
}

/* Runs the command and reaps everything; reports how the command ended. */
static void __attribute__((noreturn))
init_loop(const struct sandbox_spec *s)
{
	char	 msg[1 + sizeof(int)];
	pid_t	 cmd, p;
	int	 st;

	if ((cmd = fork()) == -1) {
		dprintf(FD_ERR, "sandbox: fork: %s\n", strerror(errno));
		_exit(127);
	}
	if (cmd == 0)
		exec_command(s);
	close(FD_OUT);
	close(FD_ERR);
	if (s->control_fd != -1)
		close(FD_CTL);
	scrub_inherited(s->scrub_argv);
	for (;;) {
		p = waitpid(-1, &st, 0);
		if (p == -1 && errno == EINTR)
			continue;
		if (p == -1 || p == cmd)
			break;
	}
	if (p == -1)
		st = W_EXITCODE(127, 0);
	msg[0] = MSG_STATUS;
	memcpy(msg + 1, &st, sizeof(st));
	if (write(FD_SYNC, msg, sizeof(msg)) == -1)
		_exit(127);
	/* Our exit takes the rest of the pid namespace with it. */
	_exit(0);
}

/*
 * The containment checklist, in order.  Each step either succeeds or the
 * sandbox is not started.
 */
void
sandbox_child_main(const struct sandbox_spec *s, struct cgroup *cg, int sync,
    int parent)
{
	struct mount_spec	 ms;
	struct go_msg		 go;
	char			 err[SANDBOX_ERR_MAX];

	err[0] = '\0';
	/* If mcp-exec dies, so does the sandbox: init, and with it its pid
	 * namespace, the command and all it started. */
	memset(&go, 0, sizeof(go));
	if (privs_die_with_parent(parent, err, sizeof(err)) == -1)
		_exit(127);
	/*
	 * v1: into our cgroups, by ourselves, first of all (while the
	 * parent writes our maps): one thread moving itself takes
	 * microseconds where the parent moving us waits for RCU.  The
	 * tasks descriptors are closed here, so nothing later sees them.
	 */
	if (cgroup_join_self(cg, err, sizeof(err)) == -1)
		child_fail(sync, err);
	/* Our mount and network namespaces: ours to make, on our CPU and
	 * our cgroup's account, while the parent writes our maps; its
	 * before_go needs the network namespace made. */
	go.type = MSG_NETNS;
	if (ns_enter_own(err, sizeof(err)) == -1)
		child_fail(sync, err);
	if (s->before_go != NULL && write(sync, &go.type, 1) != 1)
		_exit(127);
	if (read(sync, &go, sizeof(go)) < 1 || go.type != MSG_GO)
		_exit(127);
	go.resolver[sizeof(go.resolver) - 1] = '\0';
	/*
	 * Become the sandbox user now, keeping this user namespace's
	 * capabilities a little longer: files made below must belong to a
	 * uid that exists inside.  The uid change is the last change of
	 * credentials that clears the parent-death signal (capset and
	 * Landlock keep it): arm it again, while mcp-exec's pidfd is open.
	 */
	if (privs_keep_caps(err, sizeof(err)) == -1 ||
	    idmap_become(SANDBOX_INNER_ID, err, sizeof(err)) == -1 ||
	    privs_raise_effective(err, sizeof(err)) == -1 ||
	    privs_die_with_parent(parent, err, sizeof(err)) == -1)
		child_fail(sync, err);
	if (fds_keep(sync, s->stdout_fd, s->stderr_fd, s->control_fd, err,
	    sizeof(err)) == -1)
		child_fail(sync, err);
	sync = FD_SYNC;
	/* In our cgroup (born there, or joined above): our cgroup root. */
	if (ns_enter_cgroup(err, sizeof(err)) == -1)
		child_fail(sync, err);
	/*
	 * init's memory is mcp-exec's: never dumpable, so the sandbox can
	 * neither read nor write it through /proc/1 (the command, after
	 * execve, is dumpable again with its own memory).
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 || setsid() == -1) {
		snprintf(err, sizeof(err), "dumpable/setsid: %s",
		    strerror(errno));
		child_fail(sync, err);
	}
	memset(&ms, 0, sizeof(ms));
	ms.dir = s->dir;
	ms.hostname = s->hostname;
	ms.tmp_size = s->limits->tmp_size;
	ms.shm_size = s->limits->shm_size;
	ms.has_inputs = s->has_inputs;
	ms.driver_dir = s->driver_dir;
	ms.resolver = go.resolver[0] != '\0' ? go.resolver : NULL;
	ms.trust = s->trust != NULL;
	ms.trust_system = s->trust != NULL && s->trust->system;
	ms.packages = s->packages;
	if (mounts_setup(&ms, err, sizeof(err)) == -1 ||
	    ns_set_hostname(s->hostname, err, sizeof(err)) == -1 ||
	    ns_loopback(s->net == NET_LOOPBACK, err, sizeof(err)) == -1)
		child_fail(sync, err);
	if (chdir("/workspace") == -1) {
		snprintf(err, sizeof(err), "chdir /workspace: %s",
		    strerror(errno));
		child_fail(sync, err);
	}
	if (privs_rlimits(s->limits, err, sizeof(err)) == -1)
		child_fail(sync, err);
	/* Privilege ends here: no capability in any set, ever again. */
	if (privs_drop_caps(err, sizeof(err)) == -1 ||
	    privs_no_new_privs(err, sizeof(err)) == -1)
		child_fail(sync, err);
	if (sandbox_landlock_apply(writable_dirs, nitems(writable_dirs) -
	    (s->packages ? 0 : 1), writable_devs, nitems(writable_devs), err,
	    sizeof(err)) == -1 &&
	    s->landlock_required)
		child_fail(sync, err);
	if (sandbox_seccomp_load(s->seccomp, err, sizeof(err)) == -1)
		child_fail(sync, err);
	go.type = MSG_READY;
	if (write(sync, &go.type, 1) != 1)
		_exit(127);
	/* Held: nothing of the command's runs until the parent says so;
	 * a parent that gives up kills us instead. */
	if (s->hold && (read(sync, &go.type, 1) != 1 || go.type != MSG_RUN))
		_exit(127);
	init_loop(s);
}
