/*
 * Spawning a sandbox.  The parent clones the child into new namespaces and
 * its cgroup (v2: born there; v1: the child joins itself through
 * descriptors the parent opened), writes its uid/gid maps, and releases it
 * over a socketpair.
 * The child runs the containment checklist in order and stops at the
 * first failure, reporting it; then it is the sandbox's init: it runs the
 * command, reaps everything, and reports the command's wait status.  When
 * init exits, the kernel kills every process left in the pid namespace,
 * grandchildren that called setsid() included.
 */
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gvisor.h"
#include "hash.h"
#include "log.h"
#include "ns.h"
#include "sandbox.h"
#include "spawn_int.h"
#include "util.h"

#define SETUP_TIMEOUT_MS	10000	/* the checklist takes milliseconds */
#define DIR_LOCK_TRIES		3	/* a sweep may beat our lock */

void
sandbox_new_id(char out[SANDBOX_ID_HEX + 1])
{
	uint8_t	 rnd[SANDBOX_ID_HEX / 2];

	if (getentropy(rnd, sizeof(rnd)) == -1)
		fatal("getentropy");
	hex_encode(rnd, sizeof(rnd), out);
}

/* ------------------------------------------------------------ parent */

static int
make_dir(const char *path, mode_t mode, char *err, size_t errlen)
{
	if (mkdir(path, mode) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", path, strerror(errno));
		return -1;
	}
	if (chmod(path, mode) == -1) {
		snprintf(err, errlen, "chmod %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The sandbox's directory, traversable by the sandbox's uid, listable by
 * no one but root; locked while we live, so a sweep knows it is not left
 * over.  A sweep (ours, or another mcp-exec's on this state_dir) that takes
 * it between the mkdir and the lock removes it: then it is made again.
 * The lock descriptor, or -1.
 */
static int
dir_make_locked(const char *dir, char *err, size_t errlen)
{
	struct stat	 fst, st;
	int		 fd, i;

	for (i = 0; i < DIR_LOCK_TRIES; i++) {
		if (make_dir(dir, 0711, err, errlen) == -1)
			return -1;
		if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) == -1) {
			if (errno == ENOENT)
				continue;
			break;
		}
		if (flock(fd, LOCK_EX) == -1 || fstat(fd, &fst) == -1) {
			close(fd);
			break;
		}
		if (stat(dir, &st) == 0 && st.st_dev == fst.st_dev &&
		    st.st_ino == fst.st_ino)
			return fd;
		close(fd);
		errno = ENOENT;
	}
	snprintf(err, errlen, "lock %s: %s", dir, strerror(errno));
	return -1;
}

/*
 * One tmpfs for the workspace and the package layer, so both count
 * against workspace_size: dir/disk, its workspace/ bound at dir/workspace
 * (noexec, as the plain workspace is) and its packages/ left for the child
 * to bind.  The tmpfs itself allows exec, for the layer's extensions.
 */
static int
disk_prepare(const struct sandbox_spec *s, struct sandbox *sb,
    const char *opts, char *err, size_t errlen)
{
	static const char *const subs[] = { "workspace", "packages" };
	char	 disk[PATH_MAX], p[PATH_MAX], src[PATH_MAX];
	size_t	 i;

	if (xsnprintf(disk, sizeof(disk), "%s/disk", s->dir) == -1 ||
	    make_dir(disk, 0700, err, errlen) == -1)
		return -1;
	if (mount("tmpfs", disk, "tmpfs", MS_NOSUID | MS_NODEV, opts) == -1) {
		snprintf(err, errlen, "mount disk on %s: %s", disk,
		    strerror(errno));
		return -1;
	}
	sb->disk_mounted = 1;
	for (i = 0; i < nitems(subs); i++) {
		if (xsnprintf(p, sizeof(p), "%s/%s", disk, subs[i]) == -1 ||
		    make_dir(p, 0700, err, errlen) == -1)
			return -1;
		if (chown(p, sb->lease.uid, sb->lease.uid) == -1) {
			snprintf(err, errlen, "chown %s: %s", p,
			    strerror(errno));
			return -1;
		}
	}
	if (xsnprintf(src, sizeof(src), "%s/workspace", disk) == -1 ||
	    xsnprintf(p, sizeof(p), "%s/workspace", s->dir) == -1)
		return -1;
	if (mount(src, p, NULL, MS_BIND, NULL) == -1) {
		snprintf(err, errlen, "bind workspace on %s: %s", p,
		    strerror(errno));
		return -1;
	}
	sb->workspace_mounted = 1;
	if (mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, NULL) == -1) {
		snprintf(err, errlen, "remount workspace noexec: %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
sandbox_prepare(const struct sandbox_spec *s, struct sandbox *sb, char *err,
    size_t errlen)
{
	char	 p[PATH_MAX], opts[128];

	memset(sb, 0, sizeof(*sb));
	sb->init = -1;
	sb->sync = -1;
	sb->dir_lock = -1;
	sb->lease.fd = -1;
	sb->gofer.fd = -1;
	sb->signaller = -1;
	sb->runtime = s->runtime;
	snprintf(sb->dir, sizeof(sb->dir), "%s", s->dir);
	if (idmap_lease(s->idmap, &sb->lease, err, errlen) == -1)
		return -1;
	if ((sb->dir_lock = dir_make_locked(s->dir, err, errlen)) == -1)
		goto fail;
	if (xsnprintf(p, sizeof(p), "%s/root", s->dir) == -1 ||
	    make_dir(p, 0755, err, errlen) == -1 ||
	    xsnprintf(p, sizeof(p), "%s/workspace", s->dir) == -1 ||
	    make_dir(p, 0700, err, errlen) == -1)
		goto fail;
	/* Size-capped, and only the sandbox's uid can enter it. */
	snprintf(opts, sizeof(opts), "size=%llu,mode=0700,uid=%lu,gid=%lu",
	    (unsigned long long)s->limits->workspace_size,
	    (unsigned long)sb->lease.uid, (unsigned long)sb->lease.uid);
	if (s->packages) {
		if (disk_prepare(s, sb, opts, err, errlen) == -1)
			goto fail;
	} else if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    opts) == -1) {
		snprintf(err, errlen, "mount workspace on %s: %s", p,
		    strerror(errno));
		goto fail;
	} else
		sb->workspace_mounted = 1;
	if (s->has_inputs && (xsnprintf(p, sizeof(p), "%s/inputs", s->dir) ==
	    -1 || make_dir(p, 0755, err, errlen) == -1))
		goto fail;
	/* Per sandbox: the profile's extra CA reaches no other profile. */
	if (s->trust != NULL && trust_bundle_write(s->dir, s->trust, err,
	    errlen) == -1)
		goto fail;
	return 0;
fail:
	sandbox_destroy(sb);
	return -1;
}

/* Waits up to timeout_ms for init's word that it reached a step (want):
 * its namespace made, or its verdict on the checklist. */
static int
await_init(struct sandbox *sb, char want, int timeout_ms, char *err,
    size_t errlen)
{
	struct pollfd	 pfd = { sb->sync, POLLIN, 0 };
	char		 msg[SANDBOX_ERR_MAX + 1];
	ssize_t		 n;
	int		 r;

	while ((r = poll(&pfd, 1, timeout_ms)) == -1 && errno == EINTR)
		;
	if (r == 0) {
		snprintf(err, errlen, timeout_ms > 0 ? "sandbox setup timed "
		    "out" : "sandbox setup: no word from init");
		return -1;
	}
	/* The verdict is in: whatever it says, it is no longer pending. */
	if (want == MSG_READY)
		sb->verdict_pending = 0;
	if ((n = read(sb->sync, msg, sizeof(msg) - 1)) <= 0) {
		snprintf(err, errlen, "sandbox setup failed: init exited");
		return -1;
	}
	msg[n] = '\0';
	if (msg[0] == want)
		return 0;
	if (msg[0] == MSG_ERROR)
		snprintf(err, errlen, "sandbox setup failed: %s", msg + 1);
	else
		snprintf(err, errlen, "sandbox setup failed: bad message");
	return -1;
}

/*
 * Like fork(), into new namespaces.  On cgroup v2 the child is born in its
 * cgroup (CLONE_INTO_CGROUP): moving a task between cgroups later waits
 * for an RCU grace period, milliseconds on a busy host.  *placed says
 * whether that happened.
 */
static pid_t
clone_child(struct sandbox *sb, int *placed)
{
	struct clone_args	 ca;
	pid_t			 pid;

	*placed = 0;
	if (cgroup_fd(sb->cg) != -1) {
		memset(&ca, 0, sizeof(ca));
		ca.flags = NS_CLONE_FLAGS | CLONE_INTO_CGROUP;
		ca.exit_signal = SIGCHLD;
		ca.cgroup = (uint64_t)cgroup_fd(sb->cg);
		pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
		if (pid != -1) {
			*placed = 1;
			return pid;
		}
		/* Older kernels: fall back to clone and a migration. */
		if (errno != ENOSYS && errno != E2BIG && errno != EINVAL)
			return -1;
	}
	return (pid_t)syscall(SYS_clone, NS_CLONE_FLAGS | SIGCHLD, NULL, NULL,
	    NULL, 0);
}

/* A failure init reported before it died, in place of ours: it says why. */
static void
child_said(struct sandbox *sb, char *err, size_t errlen)
{
	struct pollfd	 pfd = { sb->sync, POLLIN, 0 };
	char		 msg[SANDBOX_ERR_MAX + 1];
	ssize_t		 n;

	if (poll(&pfd, 1, 0) != 1 ||
	    (n = recv(sb->sync, msg, sizeof(msg) - 1, MSG_DONTWAIT)) < 1 ||
	    msg[0] != MSG_ERROR)
		return;
	msg[n] = '\0';
	snprintf(err, errlen, "sandbox setup failed: %s", msg + 1);
}

/* A start that failed: init's own reason in err if it gave one, and gone. */
static void
start_failed(struct sandbox *sb, char *err, size_t errlen)
{
	child_said(sb, err, errlen);
	sandbox_kill(sb);
	(void)waitpid(sb->init, NULL, 0);
	sb->init = -1;
	sb->verdict_pending = 0;
}

int
sandbox_launch(const struct sandbox_spec *s, struct sandbox *sb, char *err,
    size_t errlen)
{
	struct go_msg	 go;
	int		 sv[2], placed, self, me;
	pid_t		 pid;

	if (s->runtime == SANDBOX_GVISOR)
		return gvisor_start(s, sb, err, errlen);
	if ((sb->cg = cgroup_create(s->cgroup, s->id, s->limits, err,
	    errlen)) == NULL)
		return -1;
	sv[0] = sv[1] = -1;
	/* For the child to tell whether we died before its signal was set. */
	if ((me = (int)syscall(SYS_pidfd_open, getpid(), 0)) == -1) {
		snprintf(err, errlen, "pidfd_open: %s", strerror(errno));
		goto fail;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		goto fail;
	}
	/* v1: the descriptors the child joins its cgroups through. */
	if ((self = cgroup_join_prepare(sb->cg, err, errlen)) == -1)
		goto fail;
	if ((pid = clone_child(sb, &placed)) == -1) {
		snprintf(err, errlen, "clone: %s", strerror(errno));
		cgroup_join_done(sb->cg);
		goto fail;
	}
	if (pid == 0) {
		close(sv[0]);
		sandbox_child_main(s, sb->cg, sv[1], me);
	}
	close(me);
	cgroup_join_done(sb->cg);
	placed |= self;
	close(sv[1]);
	sb->init = pid;
	sb->sync = sv[0];
	memset(&go, 0, sizeof(go));
	go.type = MSG_GO;
	if (idmap_write(pid, SANDBOX_INNER_ID, &sb->lease, err, errlen) == -1 ||
	    (!placed && cgroup_add(sb->cg, pid, err, errlen) == -1) ||
	    (s->before_go != NULL && (await_init(sb, MSG_NETNS,
	    SETUP_TIMEOUT_MS, err, errlen) == -1 || s->before_go(
	    s->before_go_arg, pid, go.resolver, sizeof(go.resolver), err,
	    errlen) == -1)) ||
	    write(sb->sync, &go, sizeof(go)) != (ssize_t)sizeof(go)) {
		start_failed(sb, err, errlen);
		return -1;
	}
	sb->verdict_pending = 1;
	return 0;
fail:
	if (me != -1)
		close(me);
	if (sv[0] != -1)
		close(sv[0]);
	if (sv[1] != -1)
		close(sv[1]);
	return -1;
}

int
sandbox_start(const struct sandbox_spec *s, struct sandbox *sb, char *err,
    size_t errlen)
{
	if (sandbox_launch(s, sb, err, errlen) == -1)
		return -1;
	if (sb->verdict_pending && await_init(sb, MSG_READY, SETUP_TIMEOUT_MS,
	    err, errlen) == -1) {
		start_failed(sb, err, errlen);
		return -1;
	}
	return 0;
}

int
sandbox_started(struct sandbox *sb, char *err, size_t errlen)
{
	if (!sb->verdict_pending)
		return 0;
	return await_init(sb, MSG_READY, 0, err, errlen);
}

int
sandbox_release(struct sandbox *sb, char *err, size_t errlen)
{
	const char	 run = MSG_RUN;

	/* init may have died meanwhile: an error, never SIGPIPE. */
	if (send(sb->sync, &run, 1, MSG_NOSIGNAL) != 1) {
		snprintf(err, errlen, "sandbox release: %s", strerror(errno));
		return -1;
	}
	return 0;
}

pid_t
sandbox_command_pid(struct sandbox *sb)
{
	char	 path[64], *data;
	size_t	 len;
	long	 pid;

	/* init has one child of its own: the command. */
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children",
	    (long)sb->init, (long)sb->init);
	if (sb->init <= 0 || read_file(path, 4096, &data, &len) == -1)
		return -1;
	pid = strtol(data, NULL, 10);
	free(data);
	return pid > 0 ? (pid_t)pid : -1;
}

void
sandbox_interrupt(struct sandbox *sb)
{
	pid_t	 pid;

	if (sb->runtime == SANDBOX_GVISOR)
		gvisor_interrupt(sb);
	else if ((pid = sandbox_command_pid(sb)) > 0)
		(void)kill(pid, SIGINT);
}

void
sandbox_reap_interrupt(struct sandbox *sb)
{
	gvisor_reap_signaller(sb, 0);
}

const char *
sandbox_runtime_name(enum sandbox_runtime rt)
{
	return rt == SANDBOX_GVISOR ? "gvisor" : rt == SANDBOX_WASM ? "wasm" :
	    "native";
}

int
sandbox_await_exit(struct sandbox *sb, int timeout_ms)
{
	struct pollfd	 pfd = { sb->sync, POLLIN, 0 };
	int		 r;

	/* A verdict not read yet is no status: out of the way first. */
	if (sb->verdict_pending) {
		char	 err[SANDBOX_ERR_MAX + 64];

		(void)sandbox_started(sb, err, sizeof(err));
	}
	/* init reports the command's status, or dies and closes the socket. */
	while ((r = poll(&pfd, 1, timeout_ms)) == -1 && errno == EINTR)
		;
	return r > 0;
}

void
sandbox_kill(struct sandbox *sb)
{
	if (sb->init > 0)
		(void)kill(sb->init, SIGKILL);
	if (sb->cg != NULL)
		cgroup_kill(sb->cg);
}

int
sandbox_wait(struct sandbox *sb, struct sandbox_exit *ex)
{
	char	 msg[1 + sizeof(int)];
	int	 st, cmd;
	ssize_t	 n;

	if (sb->runtime == SANDBOX_GVISOR)
		return gvisor_wait(sb, ex);
	memset(ex, 0, sizeof(*ex));
	while (waitpid(sb->init, &st, 0) == -1) {
		if (errno != EINTR)
			return -1;
	}
	sb->init = -1;
	/* init's report, if it lived to send one (after its verdict, if
	 * that was never read).  init is gone: what it sent is queued. */
	while ((n = recv(sb->sync, msg, sizeof(msg), MSG_DONTWAIT)) > 0 &&
	    msg[0] != MSG_STATUS)
		;
	if (n == (ssize_t)sizeof(msg) && msg[0] == MSG_STATUS)
		memcpy(&cmd, msg + 1, sizeof(cmd));
	else
		cmd = W_EXITCODE(0, SIGKILL);	/* init itself was killed */
	if (WIFSIGNALED(cmd)) {
		ex->signaled = 1;
		ex->exit_code = 128 + WTERMSIG(cmd);
	} else
		ex->exit_code = WEXITSTATUS(cmd);
	/* The kernel's OOM killer sends SIGKILL: 137 when it hit the command. */
	ex->oom_killed = sb->cg != NULL && cgroup_oom_killed(sb->cg);
	return 0;
}

void
sandbox_destroy(struct sandbox *sb)
{
	char	 p[PATH_MAX];

	if (sb->init > 0) {
		sandbox_kill(sb);
		(void)waitpid(sb->init, NULL, 0);
		sb->init = -1;
	}
	gvisor_reap_signaller(sb, 1);
	if (sb->sync != -1)
		close(sb->sync);
	sb->sync = -1;
	cgroup_destroy(sb->cg);
	sb->cg = NULL;
	if (sb->workspace_mounted &&
	    xsnprintf(p, sizeof(p), "%s/workspace", sb->dir) != -1 &&
	    umount2(p, MNT_DETACH) == -1)
		log_warn("umount %s", p);
	sb->workspace_mounted = 0;
	if (sb->root_mounted && xsnprintf(p, sizeof(p), "%s/root", sb->dir) !=
	    -1 && umount2(p, MNT_DETACH) == -1)
		log_warn("umount %s", p);
	sb->root_mounted = 0;
	if (sb->disk_mounted &&
	    xsnprintf(p, sizeof(p), "%s/disk", sb->dir) != -1 &&
	    umount2(p, MNT_DETACH) == -1)
		log_warn("umount %s", p);
	sb->disk_mounted = 0;
	if (sb->dir[0] != '\0' && rmtree(sb->dir) == -1 && errno != ENOENT)
		log_warn("removing %s", sb->dir);
	if (sb->dir_lock != -1)
		close(sb->dir_lock);
	sb->dir_lock = -1;
	idmap_release(&sb->lease);
	idmap_release(&sb->gofer);
}
