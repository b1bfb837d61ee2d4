/*
 * Builds the sandbox's root.  Runs in the child, in a new mount namespace
 * whose propagation is private first, so nothing done here is seen by the
 * host.  What the sandbox sees of the host is exactly the list below, all
 * read-only; everything writable is a size-capped tmpfs of its own.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mounts.h"
#include "sandbox.h"
#include "trust.h"
#include "util.h"

#define ROOT_TMPFS_SIZE	(1024 * 1024)	/* the root holds only mountpoints */
#define OLD_ROOT	"/.old-root"

/* Linked as on the host (merged /usr) or bound read-only when a directory. */
static const char *const top_links[] = {
	"bin", "sbin", "lib", "lib32", "lib64", "libx32",
};
/* Host /etc entries the default image needs, bound read-only if present. */
static const char *const etc_binds[] = {
	"ld.so.cache", "matplotlibrc", "localtime", "alternatives",
	"mime.types", "fonts",
};
static const char *const dev_nodes[] = {
	"null", "zero", "full", "random", "urandom",
};

struct ctx {
	const struct mount_spec	*spec;
	char			 root[PATH_MAX];
	char			*err;
	size_t			 errlen;
};

static int
fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
fail(struct ctx *c, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 n;
	int	 saved = errno;

	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	n = strlen(c->err);
	snprintf(c->err + n, c->errlen - n, ": %s", strerror(saved));
	return -1;
}

/* A path under the new root. */
static int
at(struct ctx *c, char *out, const char *rel)
{
	if (xsnprintf(out, PATH_MAX, "%s/%s", c->root, rel) == -1) {
		errno = ENAMETOOLONG;
		return fail(c, "%s/%s", c->root, rel);
	}
	return 0;
}

static int
make_dir(struct ctx *c, const char *rel, mode_t mode)
{
	char	 p[PATH_MAX];

	if (at(c, p, rel) == -1)
		return -1;
	if (mkdir(p, mode) == -1 && errno != EEXIST)
		return fail(c, "mkdir %s", rel);
	return 0;
}

static int
write_file(struct ctx *c, const char *rel, const char *text)
{
	char	 p[PATH_MAX];
	int	 fd;

	if (at(c, p, rel) == -1)
		return -1;
	if ((fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0444)) == -1)
		return fail(c, "create %s", rel);
	if (write_all(fd, text, strlen(text)) == -1) {
		close(fd);
		return fail(c, "write %s", rel);
	}
	close(fd);
	return 0;
}

/*
 * Remounts a bind with flags.  In a user namespace the flags the source
 * mount already had (nosuid, nodev, noexec, ro) are locked and must be
 * repeated, or the kernel refuses: read them with statvfs first.
 */
static int
remount(struct ctx *c, const char *path, unsigned long flags)
{
	struct statvfs	 sv;

	if (statvfs(path, &sv) == -1)
		return fail(c, "statvfs %s", path);
	if (sv.f_flag & ST_NOSUID)
		flags |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		flags |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		flags |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		flags |= MS_NOATIME;
	if (sv.f_flag & ST_RELATIME)
		flags |= MS_RELATIME;
	if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | flags, NULL) == -1)
		return fail(c, "remount %s", path);
	return 0;
}

/* Binds host src at rel (a directory or a file), read-only unless rw. */
static int
bind(struct ctx *c, const char *src, const char *rel, int rw,
    unsigned long flags)
{
	struct stat	 st;
	char		 p[PATH_MAX];
	int		 fd;

	if (stat(src, &st) == -1)
		return fail(c, "stat %s", src);
	if (at(c, p, rel) == -1)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		if (mkdir(p, 0755) == -1 && errno != EEXIST)
			return fail(c, "mkdir %s", rel);
	} else {
		if ((fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0444)) == -1)
			return fail(c, "create %s", rel);
		close(fd);
	}
	if (mount(src, p, NULL, MS_BIND | MS_REC, NULL) == -1)
		return fail(c, "bind %s", src);
	return remount(c, p, flags | (rw ? 0 : MS_RDONLY));
}

static int
mount_tmpfs(struct ctx *c, const char *rel, uint64_t size, mode_t mode,
    unsigned long flags)
{
	char	 p[PATH_MAX], opts[128];

	if (at(c, p, rel) == -1 || make_dir(c, rel, 0755) == -1)
		return -1;
	/* uid/gid are read in our user namespace: the sandbox user. */
	snprintf(opts, sizeof(opts), "size=%llu,mode=%o,uid=%d,gid=%d",
	    (unsigned long long)size, (unsigned)mode, SANDBOX_INNER_ID,
	    SANDBOX_INNER_ID);
	if (mount("tmpfs", p, "tmpfs", flags, opts) == -1)
		return fail(c, "mount tmpfs on %s", rel);
	return 0;
}

static int
top_level(struct ctx *c)
{
	char	 host[PATH_MAX], p[PATH_MAX], target[PATH_MAX];
	struct stat st;
	ssize_t	 n;
	size_t	 i;

	if (bind(c, "/usr", "usr", 0, MS_NOSUID | MS_NODEV) == -1)
		return -1;
	for (i = 0; i < nitems(top_links); i++) {
		snprintf(host, sizeof(host), "/%s", top_links[i]);
		if (lstat(host, &st) == -1)
			continue;
		if (S_ISLNK(st.st_mode)) {
			if ((n = readlink(host, target, sizeof(target) - 1)) == -1)
				return fail(c, "readlink %s", host);
			target[n] = '\0';
			if (at(c, p, top_links[i]) == -1)
				return -1;
			if (symlink(target, p) == -1)
				return fail(c, "symlink %s", top_links[i]);
		} else if (S_ISDIR(st.st_mode) &&
		    bind(c, host, top_links[i], 0, MS_NOSUID | MS_NODEV) == -1)
			return -1;
	}
	return 0;
}

static int
etc(struct ctx *c)
{
	char	 hosts[256], host[PATH_MAX], rel[PATH_MAX], resolv[128];
	size_t	 i;

	/* The only resolver a networked sandbox can reach: netguard's. */
	resolv[0] = '\0';
	if (c->spec->resolver != NULL)
		snprintf(resolv, sizeof(resolv), "nameserver %s\n"
		    "options timeout:2 attempts:2\n", c->spec->resolver);

	snprintf(hosts, sizeof(hosts), "127.0.0.1\tlocalhost %s\n"
	    "::1\t\tlocalhost ip6-localhost ip6-loopback\n", c->spec->hostname);
	if (make_dir(c, "etc", 0755) == -1 ||
	    write_file(c, "etc/passwd", "root:x:0:0:root:/root:/usr/sbin/nologin\n"
	    "sandbox:x:65534:65534:sandbox:/tmp:/usr/sbin/nologin\n") == -1 ||
	    write_file(c, "etc/group", "root:x:0:\nsandbox:x:65534:\n") == -1 ||
	    write_file(c, "etc/hosts", hosts) == -1 ||
	    write_file(c, "etc/nsswitch.conf", "passwd: files\ngroup: files\n"
	    "hosts: files dns\n") == -1 ||
	    write_file(c, "etc/resolv.conf", resolv) == -1)
		return -1;
	snprintf(hosts, sizeof(hosts), "%s\n", c->spec->hostname);
	if (write_file(c, "etc/hostname", hosts) == -1)
		return -1;
	for (i = 0; i < nitems(etc_binds); i++) {
		snprintf(host, sizeof(host), "/etc/%s", etc_binds[i]);
		snprintf(rel, sizeof(rel), "etc/%s", etc_binds[i]);
		if (access(host, F_OK) == 0 &&
		    bind(c, host, rel, 0, MS_NOSUID | MS_NODEV) == -1)
			return -1;
	}
	return 0;
}

/*
 * The host's CA certificates (its symlinks point into /usr/share, which
 * /usr brings) and the bundle built for this sandbox, both read-only.
 */
static int
trust(struct ctx *c)
{
	char	 src[PATH_MAX];

	if (!c->spec->trust && !c->spec->trust_system)
		return 0;
	if (make_dir(c, "etc/ssl", 0755) == -1)
		return -1;
	if (c->spec->trust_system && bind(c, TRUST_SYSTEM_DIR,
	    TRUST_SYSTEM_DIR + 1, 0, MS_NOSUID | MS_NODEV | MS_NOEXEC) == -1)
		return -1;
	if (!c->spec->trust)
		return 0;
	if (xsnprintf(src, sizeof(src), "%s/%s", c->spec->dir,
	    TRUST_BUNDLE_NAME) == -1) {
		errno = ENAMETOOLONG;
		return fail(c, "%s/%s", c->spec->dir, TRUST_BUNDLE_NAME);
	}
	if (make_dir(c, TRUST_CA_DIR + 1, 0755) == -1)
		return -1;
	return bind(c, src, TRUST_CA_FILE + 1, 0, MS_NOSUID | MS_NODEV |
	    MS_NOEXEC);
}

static int
dev(struct ctx *c)
{
	static const char *const links[][2] = {
		{ "/proc/self/fd", "dev/fd" }, { "/proc/self/fd/0", "dev/stdin" },
		{ "/proc/self/fd/1", "dev/stdout" },
		{ "/proc/self/fd/2", "dev/stderr" },
	};
	char	 host[PATH_MAX], rel[PATH_MAX], p[PATH_MAX];
	size_t	 i;

	if (mount_tmpfs(c, "dev", 64 * 1024, 0755, MS_NOSUID | MS_NOEXEC) == -1)
		return -1;
	for (i = 0; i < nitems(dev_nodes); i++) {
		snprintf(host, sizeof(host), "/dev/%s", dev_nodes[i]);
		snprintf(rel, sizeof(rel), "dev/%s", dev_nodes[i]);
		if (bind(c, host, rel, 1, MS_NOSUID | MS_NOEXEC) == -1)
			return -1;
	}
	for (i = 0; i < nitems(links); i++) {
		if (at(c, p, links[i][1]) == -1)
			return -1;
		if (symlink(links[i][0], p) == -1)
			return fail(c, "symlink %s", links[i][1]);
	}
	if (mount_tmpfs(c, "dev/shm", c->spec->shm_size, 01777,
	    MS_NOSUID | MS_NODEV | MS_NOEXEC) == -1 || at(c, p, "dev") == -1)
		return -1;
	/* Populated: nothing more is made in /dev (the nodes stay writable). */
	if (mount(NULL, p, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC,
	    NULL) == -1)
		return fail(c, "remount /dev read-only");
	return 0;
}

static int
proc(struct ctx *c)
{
	char	 p[PATH_MAX];

	if (make_dir(c, "proc", 0555) == -1 || at(c, p, "proc") == -1)
		return -1;
	/*
	 * Our own pid namespace's processes only (subset=pid): no
	 * /proc/kcore, /proc/sys, /proc/sysrq-trigger or other host views.
	 */
	if (mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "subset=pid,hidepid=invisible") == -1)
		return fail(c, "mount /proc");
	return 0;
}

static int
host_dirs(struct ctx *c)
{
	char	 src[PATH_MAX];

	if (xsnprintf(src, sizeof(src), "%s/workspace", c->spec->dir) == -1 ||
	    bind(c, src, "workspace", 1, MS_NOSUID | MS_NODEV | MS_NOEXEC) == -1)
		return -1;
	if ((c->spec->driver_dir != NULL || c->spec->packages) &&
	    (make_dir(c, "opt", 0755) == -1 ||
	    make_dir(c, "opt/stockade", 0755) == -1))
		return -1;
	if (c->spec->driver_dir != NULL && bind(c, c->spec->driver_dir,
	    SANDBOX_DRIVER_DIR + 1, 0, MS_NOSUID | MS_NODEV | MS_NOEXEC) == -1)
		return -1;
	/*
	 * The one writable place that allows exec: wheels carry compiled
	 * extensions, which are mapped executable.  Only profiles with
	 * packages.install have it; seccomp, Landlock and the namespaces
	 * hold what runs from it as they hold the interpreter.
	 */
	if (c->spec->packages && (xsnprintf(src, sizeof(src),
	    "%s/disk/packages", c->spec->dir) == -1 || bind(c, src,
	    SANDBOX_PACKAGES_DIR + 1, 1, MS_NOSUID | MS_NODEV) == -1))
		return -1;
	if (!c->spec->has_inputs)
		return 0;
	if (xsnprintf(src, sizeof(src), "%s/inputs", c->spec->dir) == -1)
		return -1;
	return bind(c, src, "inputs", 0, MS_NOSUID | MS_NODEV | MS_NOEXEC);
}

static int
pivot(struct ctx *c)
{
	char	 old[PATH_MAX];

	if (at(c, old, OLD_ROOT + 1) == -1 || mkdir(old, 0700) == -1)
		return fail(c, "mkdir %s", OLD_ROOT);
	if (syscall(SYS_pivot_root, c->root, old) == -1)
		return fail(c, "pivot_root %s", c->root);
	if (chdir("/") == -1)
		return fail(c, "chdir /");
	/* The host's tree leaves our namespace here. */
	if (umount2(OLD_ROOT, MNT_DETACH) == -1)
		return fail(c, "umount %s", OLD_ROOT);
	if (rmdir(OLD_ROOT) == -1)
		return fail(c, "rmdir %s", OLD_ROOT);
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID |
	    MS_NODEV, NULL) == -1)
		return fail(c, "remount / read-only");
	return 0;
}

int
mounts_setup(const struct mount_spec *spec, char *err, size_t errlen)
{
	struct ctx	 c;
	char		 opts[64];

	memset(&c, 0, sizeof(c));
	c.spec = spec;
	c.err = err;
	c.errlen = errlen;
	if (xsnprintf(c.root, sizeof(c.root), "%s/root", spec->dir) == -1) {
		errno = ENAMETOOLONG;
		return fail(&c, "%s/root", spec->dir);
	}
	/* Nothing we mount may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return fail(&c, "making / private");
	snprintf(opts, sizeof(opts), "size=%d,mode=0755", ROOT_TMPFS_SIZE);
	if (mount("tmpfs", c.root, "tmpfs", MS_NOSUID | MS_NODEV, opts) == -1)
		return fail(&c, "mount root tmpfs on %s", c.root);
	if (top_level(&c) == -1 || etc(&c) == -1 || trust(&c) == -1 ||
	    proc(&c) == -1 ||
	    dev(&c) == -1 ||
	    mount_tmpfs(&c, "tmp", spec->tmp_size, 01777,
	    MS_NOSUID | MS_NODEV | MS_NOEXEC) == -1 ||
	    host_dirs(&c) == -1 || pivot(&c) == -1)
		return -1;
	return 0;
}
