/*
 * Running a sandbox on gVisor.  The parent forks a launcher, places it in
 * the sandbox's cgroup and its own new network namespace, lets netguard
 * attach the profile's policy there (before_go), writes the bundle and
 * releases it; the launcher becomes `runsc run`, whose gofer, sentry and
 * the code's tasks all inherit that cgroup and namespace.  Trusts runsc;
 * what the code writes is the command's output, nothing more.
 */
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gvisor.h"
#include "log.h"
#include "util.h"

#define GVISOR_CONTAINER	"stockade"	/* one per --root: per sandbox */
#define GVISOR_ERR_MAX		256
#define GVISOR_ARGV_MAX		16
#define GVISOR_ROOT_SIZE	"1m"	/* mountpoints and /etc files */

const char *
gvisor_runsc(void)
{
	const char	*p = getenv("STOCKADE_RUNSC");

	return p != NULL && p[0] == '/' ? p : GVISOR_RUNSC;
}

/* Waits for pid within ms; SIGKILLs it when late.  Its wait status. */
static int
wait_bounded(pid_t pid, int ms)
{
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	int		 st, waited = 0;
	pid_t		 r;

	for (;;) {
		r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r == -1 && errno != EINTR)
			return -1;
		if (waited >= ms) {
			(void)kill(pid, SIGKILL);
			(void)waitpid(pid, &st, 0);
			return -1;
		}
		nanosleep(&ts, NULL);
		waited += 10;
	}
}

/*
 * runsc with argv, stdio on /dev/null (stderr to errfd, or -1); in the
 * network namespace of netns_of when it is not -1: runsc's control socket
 * is an abstract one, which only the sandbox's own namespace reaches.
 */
static pid_t
run_runsc(const char *const *argv, int errfd, pid_t netns_of)
{
	char	 ns[64];
	pid_t	 pid;
	int	 null, fd;

	if ((pid = fork()) != 0)
		return pid;
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (netns_of != -1) {
		snprintf(ns, sizeof(ns), "/proc/%ld/ns/net", (long)netns_of);
		if ((fd = open(ns, O_RDONLY | O_CLOEXEC)) == -1 ||
		    setns(fd, CLONE_NEWNET) == -1)
			_exit(127);
	}
	if ((null = open("/dev/null", O_RDWR)) == -1 || dup2(null, 0) == -1 ||
	    dup2(null, 1) == -1 || dup2(errfd != -1 ? errfd : null, 2) == -1)
		_exit(127);
	(void)syscall(SYS_close_range, 3, ~0U, 0);
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

/*
 * One trial container on the platform we use, as root, bounded: a kvm or
 * ptrace platform that cannot work here fails or hangs, never both
 * silently.  runsc's own complaint, if any, is the reason given.
 */
int
gvisor_probe(char *err, size_t errlen)
{
	static int	 probed, ok;
	static char	 why[GVISOR_ERR_MAX];
	char		 dir[] = "/tmp/stockade-gvisor-probe.XXXXXX", root[64];
	char		 log[96], *text = NULL, *nl;
	const char	*argv[GVISOR_ARGV_MAX];
	size_t		 len, n = 0;
	int		 st, fd;
	pid_t		 pid;

	if (probed)
		goto out;
	probed = 1;
	if (access(gvisor_runsc(), X_OK) == -1) {
		snprintf(why, sizeof(why), "%s: %s (install Debian's runsc)",
		    gvisor_runsc(), strerror(errno));
		goto out;
	}
	if (mkdtemp(dir) == NULL) {
		snprintf(why, sizeof(why), "mkdtemp: %s", strerror(errno));
		goto out;
	}
	snprintf(root, sizeof(root), "%s/state", dir);
	snprintf(log, sizeof(log), "%s/stderr", dir);
	if ((fd = open(log, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		snprintf(why, sizeof(why), "%s: %s", log, strerror(errno));
		(void)rmtree(dir);
		goto out;
	}
	argv[n++] = gvisor_runsc();
	argv[n++] = "--root";
	argv[n++] = root;
	argv[n++] = "--network=none";
	argv[n++] = "--platform=" GVISOR_PLATFORM;
	/* A runsc that cannot load the bundle's filter fails here, by name. */
	argv[n++] = GVISOR_OCI_SECCOMP;
	argv[n++] = "--ignore-cgroups";
	argv[n++] = "do";
	argv[n++] = "/bin/true";
	argv[n] = NULL;
	pid = run_runsc(argv, fd, -1);
	close(fd);
	st = pid == -1 ? -1 : wait_bounded(pid, GVISOR_PROBE_MS);
	if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		ok = 1;
	else if (st == -1)
		snprintf(why, sizeof(why), "runsc (platform %s) did not start a "
		    "container within %d ms", GVISOR_PLATFORM, GVISOR_PROBE_MS);
	else {
		if (read_file(log, 4096, &text, &len) == 0 && len > 0) {
			if ((nl = strchr(text, '\n')) != NULL)
				*nl = '\0';
		}
		snprintf(why, sizeof(why), "runsc (platform %s) cannot run a "
		    "container here: %s", GVISOR_PLATFORM,
		    text != NULL && text[0] != '\0' ? text : "it failed");
		free(text);
	}
	(void)rmtree(dir);
out:
	if (!ok)
		snprintf(err, errlen, "%s", why);
	return ok ? 0 : -1;
}

/* ------------------------------------------------------------ launcher */

/* Becomes runsc once released; writes errno to errp if exec fails. */
static void __attribute__((noreturn))
launcher(const struct sandbox_spec *s, int go, int errp)
{
	char		 root[PATH_MAX], logf[PATH_MAX], net[32];
	const char	*argv[GVISOR_ARGV_MAX];
	size_t		 n = 0;
	pid_t		 parent = getppid();
	char		 c;
	int		 null, e;

	/*
	 * If mcp-exec dies, runsc does (and its sentry with it: --attached).
	 * The network namespace first, so the host's user namespace owns it;
	 * then ours, in which runsc runs as root = the gofer's lease and
	 * starts its sentry as 65534 = the sandbox's (the parent writes the
	 * maps before the release).
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    unshare(CLONE_NEWNET) == -1 || unshare(CLONE_NEWUSER) == -1)
		goto fail;
	/* 0: the namespace is made, for the parent's before_go. */
	e = 0;
	if (write(errp, &e, sizeof(e)) != (ssize_t)sizeof(e) ||
	    read(go, &c, 1) != 1)
		_exit(127);
	/*
	 * Root of our user namespace, no host group: then runsc.  Changing
	 * credentials clears the parent-death signal: set it again, and
	 * leave if mcp-exec went in between.
	 */
	if (setgroups(0, NULL) == -1 || setresgid(0, 0, 0) == -1 ||
	    setresuid(0, 0, 0) == -1 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		goto fail;
	if (getppid() != parent)
		_exit(127);
	/* stdin: the control socket, if any; stdout and stderr the call's. */
	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
	    (errp = fcntl(errp, F_DUPFD_CLOEXEC, 64)) == -1 ||
	    dup2(s->control_fd != -1 ? s->control_fd : null, 0) == -1 ||
	    dup2(s->stdout_fd, 1) == -1 || dup2(s->stderr_fd, 2) == -1 ||
	    dup3(errp, 3, O_CLOEXEC) == -1)
		goto fail;
	errp = 3;
	if (syscall(SYS_close_range, 4, ~0U, 0) == -1)
		goto fail;
	if (xsnprintf(root, sizeof(root), "%s/runsc", s->dir) == -1 ||
	    xsnprintf(logf, sizeof(logf), "--log=%s/runsc/runsc.log", s->dir) ==
	    -1) {
		errno = ENAMETOOLONG;
		goto fail;
	}
	/*
	 * Without a netguard policy: runsc's own network stack, loopback
	 * alone, no host socket at all.  With one: the sentry's sockets are
	 * host sockets made in the namespace made above, which netguard
	 * filled before the release; it belongs to the host's user namespace,
	 * so nothing in ours (runsc, gofer, sentry) may change its rules or
	 * open a raw or packet socket there.  (runsc's own stack on the veth,
	 * --network=sandbox, would send through AF_PACKET, which netguard's
	 * inet rules never see.)
	 */
	snprintf(net, sizeof(net), "--network=%s",
	    s->before_go != NULL ? "host" : "none");
	argv[n++] = gvisor_runsc();
	argv[n++] = "--root";
	argv[n++] = root;
	argv[n++] = logf;
	argv[n++] = net;
	argv[n++] = "--platform=" GVISOR_PLATFORM;
	/* The sentry enforces the spec's linux.seccomp, the native sandbox's
	 * allowlist, on every call the code makes; without this flag runsc
	 * ignores it (gvisor_oci.c). */
	argv[n++] = GVISOR_OCI_SECCOMP;
	/* Ours already holds this process: runsc would otherwise move its
	 * sentry and gofer into a cgroup named after the container, at
	 * the top of each hierarchy, without our limits. */
	argv[n++] = "--ignore-cgroups";
	argv[n++] = "run";
	argv[n++] = "--bundle";
	argv[n++] = s->dir;
	argv[n++] = GVISOR_CONTAINER;
	argv[n] = NULL;
	execve(argv[0], (char *const *)argv, (char *const *)sandbox_env);
fail:
	e = errno;
	if (write(errp, &e, sizeof(e)) != (ssize_t)sizeof(e))
		e = 0;	/* the parent reads EOF: the same failure, no errno */
	_exit(127);
}

/* ------------------------------------------------------------ parent */

/*
 * The launcher's user namespace: root inside is the gofer's lease, 65534
 * the sandbox's.  runsc runs as that root, so nothing of it, gofer,
 * sentry or stubs, holds any host uid but the two leases.
 */
static int
write_maps(pid_t pid, const struct sandbox *sb, char *err, size_t errlen)
{
	static const char *const files[] = { "uid_map", "gid_map" };
	char	 p[64], map[96];
	size_t	 i;
	int	 fd;

	snprintf(map, sizeof(map), "0 %lu 1\n%d %lu 1\n",
	    (unsigned long)sb->gofer.uid, SANDBOX_INNER_ID,
	    (unsigned long)sb->lease.uid);
	for (i = 0; i < nitems(files); i++) {
		snprintf(p, sizeof(p), "/proc/%ld/%s", (long)pid, files[i]);
		if ((fd = open(p, O_WRONLY | O_CLOEXEC)) == -1 ||
		    write(fd, map, strlen(map)) != (ssize_t)strlen(map)) {
			snprintf(err, errlen, "%s: %s", p, strerror(errno));
			if (fd != -1)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

int
gvisor_start(const struct sandbox_spec *s, struct sandbox *sb, char *err,
    size_t errlen)
{
	struct sandbox_limits	 lim = *s->limits;
	char			 resolver[SANDBOX_RESOLVER_LEN], root[PATH_MAX];
	int			 gop[2] = { -1, -1 }, errp[2] = { -1, -1 };
	int			 e = 0;
	ssize_t			 n;
	pid_t			 pid;

	resolver[0] = '\0';
	if (gvisor_probe(err, errlen) == -1)
		return -1;
	/* Root inside the sandbox's user namespace: runsc's gofer. */
	if (idmap_lease(s->idmap, &sb->gofer, err, errlen) == -1)
		return -1;
	/*
	 * The root: a tmpfs of its own holding only mountpoints, links and
	 * /etc files.  Mounted here without nosuid/nodev, which a user
	 * namespace could not clear: runsc's gofer remounts it read-only
	 * from inside one, and a bind of a flagged mount (a state_dir on a
	 * nosuid /tmp) would be locked.  Nothing in it is executable or a
	 * device, and the sandbox sees it read-only.
	 */
	if (xsnprintf(root, sizeof(root), "%s/root", s->dir) == -1 ||
	    mount("tmpfs", root, "tmpfs", 0, "size=" GVISOR_ROOT_SIZE
	    ",mode=0755") == -1) {
		snprintf(err, errlen, "mount gvisor root in %s: %s", s->dir,
		    strerror(errno));
		return -1;
	}
	sb->root_mounted = 1;
	/* runsc's state, written by runsc as the gofer's uid. */
	if (xsnprintf(root, sizeof(root), "%s/runsc", s->dir) == -1 ||
	    mkdir(root, 0700) == -1 || chown(root, sb->gofer.uid,
	    sb->gofer.uid) == -1) {
		snprintf(err, errlen, "runsc state dir in %s: %s", s->dir,
		    strerror(errno));
		return -1;
	}
	/*
	 * The profile's limits hold the whole sandbox, sentry and gofer with
	 * the code (a memory limit is the host's memory the sandbox may
	 * take, whoever in it takes it); only pids has room for runsc's own
	 * host threads, since the code's tasks are counted in the sentry.
	 */
	lim.pids += GVISOR_PIDS_EXTRA;
	if ((sb->cg = cgroup_create(s->cgroup, s->id, &lim, err,
	    errlen)) == NULL)
		return -1;
	if (pipe2(gop, O_CLOEXEC) == -1 || pipe2(errp, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		close(gop[1]);
		close(errp[0]);
		launcher(s, gop[0], errp[1]);
	}
	close(gop[0]);
	close(errp[1]);
	gop[0] = errp[1] = -1;
	sb->init = pid;
	if ((sb->sync = (int)syscall(SYS_pidfd_open, pid, 0)) == -1) {
		snprintf(err, errlen, "pidfd_open: %s", strerror(errno));
		goto kill;
	}
	while ((n = read(errp[0], &e, sizeof(e))) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(e) || e != 0) {
		snprintf(err, errlen, "gvisor launcher: %s", n ==
		    (ssize_t)sizeof(e) ? strerror(e) : "died");
		goto kill;
	}
	if (write_maps(pid, sb, err, errlen) == -1)
		goto kill;
	/* Nothing of the sandbox runs before its cgroup and policy. */
	if (cgroup_add(sb->cg, pid, err, errlen) == -1 ||
	    (s->before_go != NULL && s->before_go(s->before_go_arg, pid,
	    resolver, sizeof(resolver), err, errlen) == -1) ||
	    gvisor_bundle_write(s, sb, resolver, err, errlen) == -1)
		goto kill;
	if (write(gop[1], "G", 1) != 1) {
		snprintf(err, errlen, "releasing runsc: %s", strerror(errno));
		goto kill;
	}
	close(gop[1]);
	gop[1] = -1;
	/* End of file: runsc was executed; an errno: it was not. */
	while ((n = read(errp[0], &e, sizeof(e))) == -1 && errno == EINTR)
		;
	close(errp[0]);
	errp[0] = -1;
	if (n > 0) {
		snprintf(err, errlen, "starting %s: %s", gvisor_runsc(),
		    strerror(e));
		goto kill;
	}
	return 0;
kill:
	sandbox_kill(sb);
	(void)waitpid(sb->init, NULL, 0);
	sb->init = -1;
fail:
	if (gop[0] != -1)
		close(gop[0]);
	if (gop[1] != -1)
		close(gop[1]);
	if (errp[0] != -1)
		close(errp[0]);
	if (errp[1] != -1)
		close(errp[1]);
	return -1;
}

/*
 * SIGINT to the container's init (the driver or the command): the code's
 * tasks live in the sentry, where no host signal reaches them.  `runsc
 * kill` is a Go program that takes tens of milliseconds, and its sentry
 * may be slow to answer: it runs beside the server's loop, never waited
 * for here.  The call's grace period bounds it: an interrupt that has not
 * landed by then ends in the sandbox's kill, and the kill reaps it.  One
 * in flight per sandbox; one still running when the next is asked for is
 * stuck, and is replaced.
 */
void
gvisor_interrupt(struct sandbox *sb)
{
	char		 root[PATH_MAX];
	const char	*argv[GVISOR_ARGV_MAX];
	size_t		 n = 0;

	gvisor_reap_signaller(sb, 1);
	if (sb->init <= 0 || xsnprintf(root, sizeof(root), "%s/runsc",
	    sb->dir) == -1)
		return;
	argv[n++] = gvisor_runsc();
	argv[n++] = "--root";
	argv[n++] = root;
	argv[n++] = "kill";
	argv[n++] = GVISOR_CONTAINER;
	argv[n++] = "INT";
	argv[n] = NULL;
	if ((sb->signaller = run_runsc(argv, -1, sb->init)) == -1)
		log_warn("fork (runsc kill)");
}

void
gvisor_reap_signaller(struct sandbox *sb, int force)
{
	pid_t	 r;

	if (sb->signaller <= 0)
		return;
	/* Our own child, unreaped: its pid cannot have been reused. */
	if (force)
		(void)kill(sb->signaller, SIGKILL);
	while ((r = waitpid(sb->signaller, NULL, force ? 0 : WNOHANG)) == -1 &&
	    errno == EINTR)
		;
	if (r != 0)
		sb->signaller = -1;
}

int
gvisor_wait(struct sandbox *sb, struct sandbox_exit *ex)
{
	int	 st;

	memset(ex, 0, sizeof(*ex));
	while (waitpid(sb->init, &st, 0) == -1) {
		if (errno != EINTR)
			return -1;
	}
	sb->init = -1;
	/* runsc exits with the container's status, 128 + signal when a
	 * signal ended it; runsc itself killed: by us or the OOM killer. */
	if (WIFSIGNALED(st)) {
		ex->signaled = 1;
		ex->exit_code = 128 + WTERMSIG(st);
	} else {
		ex->exit_code = WEXITSTATUS(st);
		ex->signaled = ex->exit_code > 128 && ex->exit_code < 128 + 65;
	}
	ex->oom_killed = sb->cg != NULL && cgroup_oom_killed(sb->cg);
	return 0;
}
