/*
 * The gVisor runtime's OCI bundle: the native sandbox's policy (mounts.c,
 * privs.c, idmap.c, seccomp_rules.c) written as config.json and a root
 * directory that holds only mountpoints, links and the generated /etc
 * files.  Trusts the spec (built by mcp-exec from a validated profile);
 * writes only beneath the sandbox's own directory, which only root can
 * list.
 */
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gvisor.h"
#include "sandbox.h"
#include "seccomp_filter.h"
#include "trust.h"
#include "util.h"

/* As mounts.c: linked like the host (merged /usr) or bound read-only. */
static const char *const top_links[] = {
	"bin", "sbin", "lib", "lib32", "lib64", "libx32",
};
static const char *const etc_binds[] = {
	"ld.so.cache", "matplotlibrc", "localtime", "alternatives",
	"mime.types", "fonts",
};

struct bundle {
	const struct sandbox_spec *s;
	char			 root[PATH_MAX];
	json_t			*mounts;
	char			*err;
	size_t			 errlen;
};

static int
bfail(struct bundle *b, const char *what, const char *path)
{
	snprintf(b->err, b->errlen, "gvisor bundle: %s %s: %s", what, path,
	    strerror(errno));
	return -1;
}

/* rel beneath the bundle's root; a directory, or an empty file. */
static int
mountpoint(struct bundle *b, const char *rel, int dir)
{
	char	 p[PATH_MAX];
	int	 fd;

	if (xsnprintf(p, sizeof(p), "%s/%s", b->root, rel) == -1) {
		errno = ENAMETOOLONG;
		return bfail(b, "path", rel);
	}
	if (dir) {
		if (mkdir_p(p, 0755) == -1)
			return bfail(b, "mkdir", rel);
		return 0;
	}
	if ((fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0444)) == -1)
		return bfail(b, "create", rel);
	close(fd);
	return 0;
}

static int
root_file(struct bundle *b, const char *rel, const char *text)
{
	char	 p[PATH_MAX];
	int	 fd;

	if (xsnprintf(p, sizeof(p), "%s/%s", b->root, rel) == -1) {
		errno = ENAMETOOLONG;
		return bfail(b, "path", rel);
	}
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0444)) == -1)
		return bfail(b, "create", rel);
	if (write_all(fd, text, strlen(text)) == -1) {
		close(fd);
		return bfail(b, "write", rel);
	}
	close(fd);
	return 0;
}

/* One OCI mount; opts is a NULL-terminated list. */
static void
add_mount(struct bundle *b, const char *dst, const char *type,
    const char *src, const char *const *opts)
{
	json_t	*o = json_array();
	size_t	 i;

	for (i = 0; opts[i] != NULL; i++)
		json_array_append_new(o, json_string(opts[i]));
	json_array_append_new(b->mounts, json_pack("{s:s, s:s, s:s, s:o}",
	    "destination", dst, "type", type, "source", src, "options", o));
}

/* A read-only bind of host src at dst (mountpoint made in the root). */
static int
bind_ro(struct bundle *b, const char *src, const char *dst, int noexec)
{
	static const char *const ro[] = { "rbind", "ro", "nosuid", "nodev",
	    NULL };
	static const char *const ro_nx[] = { "rbind", "ro", "nosuid", "nodev",
	    "noexec", NULL };
	struct stat	 st;

	if (stat(src, &st) == -1)
		return bfail(b, "stat", src);
	if (mountpoint(b, dst + 1, S_ISDIR(st.st_mode)) == -1)
		return -1;
	add_mount(b, dst, "bind", src, noexec ? ro_nx : ro);
	return 0;
}

static int
tmpfs(struct bundle *b, const char *dst, uint64_t size, const char *mode)
{
	char		 sz[64], md[32];
	const char	*opts[] = { "nosuid", "nodev", "noexec", sz, md, NULL };

	snprintf(sz, sizeof(sz), "size=%llu", (unsigned long long)size);
	snprintf(md, sizeof(md), "mode=%s", mode);
	if (mountpoint(b, dst + 1, 1) == -1)
		return -1;
	add_mount(b, dst, "tmpfs", "tmpfs", opts);
	return 0;
}

static int
root_top(struct bundle *b)
{
	char		 host[PATH_MAX], target[PATH_MAX], p[PATH_MAX];
	struct stat	 st;
	ssize_t		 n;
	size_t		 i;

	if (bind_ro(b, "/usr", "/usr", 0) == -1)
		return -1;
	for (i = 0; i < nitems(top_links); i++) {
		snprintf(host, sizeof(host), "/%s", top_links[i]);
		if (lstat(host, &st) == -1)
			continue;
		if (S_ISLNK(st.st_mode)) {
			if ((n = readlink(host, target, sizeof(target) - 1)) ==
			    -1)
				return bfail(b, "readlink", host);
			target[n] = '\0';
			if (xsnprintf(p, sizeof(p), "%s/%s", b->root,
			    top_links[i]) == -1 || (symlink(target, p) == -1 &&
			    errno != EEXIST))
				return bfail(b, "symlink", top_links[i]);
		} else if (S_ISDIR(st.st_mode) && bind_ro(b, host, host, 0) == -1)
			return -1;
	}
	return 0;
}

static int
root_etc(struct bundle *b, const char *resolver)
{
	const struct sandbox_spec *s = b->s;
	char	 hosts[256], host[PATH_MAX], resolv[128];
	size_t	 i;

	resolv[0] = '\0';
	if (resolver != NULL && resolver[0] != '\0')
		snprintf(resolv, sizeof(resolv), "nameserver %s\n"
		    "options timeout:2 attempts:2\n", resolver);
	snprintf(hosts, sizeof(hosts), "127.0.0.1\tlocalhost %s\n"
	    "::1\t\tlocalhost ip6-localhost ip6-loopback\n", s->hostname);
	if (mountpoint(b, "etc", 1) == -1 ||
	    root_file(b, "etc/passwd", "root:x:0:0:root:/root:/usr/sbin/nologin\n"
	    "sandbox:x:65534:65534:sandbox:/tmp:/usr/sbin/nologin\n") == -1 ||
	    root_file(b, "etc/group", "root:x:0:\nsandbox:x:65534:\n") == -1 ||
	    root_file(b, "etc/hosts", hosts) == -1 ||
	    root_file(b, "etc/nsswitch.conf", "passwd: files\ngroup: files\n"
	    "hosts: files dns\n") == -1 ||
	    root_file(b, "etc/resolv.conf", resolv) == -1)
		return -1;
	snprintf(hosts, sizeof(hosts), "%s\n", s->hostname);
	if (root_file(b, "etc/hostname", hosts) == -1)
		return -1;
	for (i = 0; i < nitems(etc_binds); i++) {
		snprintf(host, sizeof(host), "/etc/%s", etc_binds[i]);
		if (access(host, F_OK) == 0 && bind_ro(b, host, host, 0) == -1)
			return -1;
	}
	if (s->trust != NULL && s->trust->system &&
	    bind_ro(b, TRUST_SYSTEM_DIR, TRUST_SYSTEM_DIR, 1) == -1)
		return -1;
	if (s->trust != NULL && s->trust->extra_ca != NULL) {
		if (xsnprintf(host, sizeof(host), "%s/%s", s->dir,
		    TRUST_BUNDLE_NAME) == -1) {
			errno = ENAMETOOLONG;
			return bfail(b, "path", TRUST_BUNDLE_NAME);
		}
		if (bind_ro(b, host, TRUST_CA_FILE, 1) == -1)
			return -1;
	}
	return 0;
}

static int
root_rest(struct bundle *b)
{
	static const char *const ws[] = { "rbind", "rw", "nosuid", "nodev",
	    "noexec", NULL };
	static const char *const proc[] = { "nosuid", "nodev", "noexec",
	    NULL };
	const struct sandbox_spec *s = b->s;
	char	 src[PATH_MAX];

	/* gVisor's own /proc, the sentry's view of its own tasks. */
	if (mountpoint(b, "proc", 1) == -1 || mountpoint(b, "dev", 1) == -1)
		return -1;
	add_mount(b, "/proc", "proc", "proc", proc);
	/* gVisor would add its synthetic /sys: the native sandbox has none,
	 * so an empty read-only tmpfs stands in its place. */
	if (tmpfs(b, "/sys", 4096, "0555") == -1 ||
	    tmpfs(b, "/tmp", s->limits->tmp_size, "1777") == -1 ||
	    tmpfs(b, "/dev/shm", s->limits->shm_size, "1777") == -1)
		return -1;
	if (xsnprintf(src, sizeof(src), "%s/workspace", s->dir) == -1 ||
	    mountpoint(b, "workspace", 1) == -1)
		return bfail(b, "path", "workspace");
	add_mount(b, "/workspace", "bind", src, ws);
	if (s->driver_dir != NULL &&
	    bind_ro(b, s->driver_dir, SANDBOX_DRIVER_DIR, 1) == -1)
		return -1;
	if (s->has_inputs && (xsnprintf(src, sizeof(src), "%s/inputs",
	    s->dir) == -1 || bind_ro(b, src, "/inputs", 1) == -1))
		return -1;
	return 0;
}

static json_t *
rlimit(const char *name, uint64_t v)
{
	/* v as given: 0 is a limit (CORE), never "unlimited"; JSON's
	 * integers stop at INT64_MAX, which is as good as unlimited. */
	json_int_t	 j = v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v;

	return json_pack("{s:s, s:I, s:I}", "type", name, "hard", j, "soft", j);
}

/* The same rlimits as privs_rlimits(), which gVisor's sentry enforces. */
static json_t *
rlimits(const struct sandbox_limits *l)
{
	json_t	*a = json_array();

	json_array_append_new(a, rlimit("RLIMIT_CORE", 0));
	json_array_append_new(a, rlimit("RLIMIT_NOFILE", l->nofile));
	json_array_append_new(a, rlimit("RLIMIT_NPROC", l->pids));
	json_array_append_new(a, rlimit("RLIMIT_FSIZE", l->file_size));
	json_array_append_new(a, rlimit("RLIMIT_CPU", l->cpu_seconds));
	json_array_append_new(a, json_pack("{s:s, s:i, s:i}", "type",
	    "RLIMIT_MEMLOCK", "hard", 0, "soft", 0));
	json_array_append_new(a, json_pack("{s:s, s:i, s:i}", "type",
	    "RLIMIT_MSGQUEUE", "hard", 0, "soft", 0));
	if (l->address_space != 0)
		json_array_append_new(a, rlimit("RLIMIT_AS", l->address_space));
	return a;
}

static json_t *
environment(const struct sandbox_spec *s)
{
	json_t	*a = json_array();
	size_t	 i, n = 0;

	for (i = 0; s->envp != NULL && s->envp[i] != NULL; i++)
		if (n++ < SANDBOX_ENV_MAX)
			json_array_append_new(a, json_string(s->envp[i]));
	for (i = 0; s->env_extra != NULL && s->env_extra[i] != NULL; i++)
		if (n++ < SANDBOX_ENV_MAX)
			json_array_append_new(a, json_string(s->env_extra[i]));
	/* The control socket is the container's stdin (runsc passes only
	 * stdio): the driver takes it from there (driver.py). */
	if (s->control_fd != -1)
		json_array_append_new(a, json_string("STOCKADE_CONTROL_FD=0"));
	return a;
}

/*
 * runsc runs in a user namespace of the launcher's (gvisor.c) where root
 * is the gofer's leased uid and 65534 the sandbox's; the spec's maps are
 * the identity of those two, so the gofer holds no power over any host
 * file that is not world-readable or the sandbox's own, and the sentry
 * and the code's stubs run as the sandbox's uid.
 */
static json_t *
idmaps(const struct sandbox *sb)
{
	return json_pack("[{s:i, s:i, s:i}, {s:i, s:i, s:i}]",
	    "containerID", 0, "hostID", 0, "size", 1,
	    "containerID", SANDBOX_INNER_ID, "hostID", SANDBOX_INNER_ID,
	    "size", 1);
}

/*
 * With a netguard policy the sentry must stay in the namespace netguard
 * guards (the launcher's, gvisor.c): no network entry, or runsc would make
 * an empty one.  Without, runsc's own stack in a new one.
 */
static json_t *
namespaces(const struct sandbox_spec *s)
{
	json_t	*a = json_pack("[{s:s}, {s:s}, {s:s}, {s:s}, {s:s}]", "type",
		    "pid", "type", "ipc", "type", "uts", "type", "mount", "type",
		    "user");

	if (s->before_go == NULL)
		json_array_append_new(a, json_pack("{s:s}", "type", "network"));
	return a;
}

/*
 * One rule of the native allowlist as an OCI syscall entry, appended to
 * the array arg; an unconditional allow joins the one before it when that
 * is one too, so the sentry looks the whole plain list up in one rule set
 * (runsc makes one per entry and tries them in order on every call).
 */
static int
seccomp_entry(const struct seccomp_rule *r, void *arg, char *err,
    size_t errlen)
{
	json_t		*syscalls = arg, *last, *args;
	const char	*action;
	unsigned	 i, j;

	last = json_array_get(syscalls, json_array_size(syscalls) - 1);
	if (r->verdict == SECCOMP_ALLOW && r->ncmp == 0 && last != NULL &&
	    json_array_size(json_object_get(last, "args")) == 0 &&
	    strcmp(json_string_value(json_object_get(last, "action")),
	    "SCMP_ACT_ALLOW") == 0)
		return json_array_append_new(json_object_get(last, "names"),
		    json_string(r->name)) == 0 ? 0 : -1;
	args = json_array();
	for (i = 0; i < r->ncmp; i++) {
		/*
		 * runsc ORs two comparisons of one argument in an entry (runc's
		 * legacy reading) where libseccomp ANDs them: refuse a rule
		 * the two walls would read apart.  JSON's integers stop at
		 * INT64_MAX.
		 */
		for (j = 0; j < i; j++)
			if (r->cmp[j].arg == r->cmp[i].arg)
				goto bad;
		if (r->cmp[i].mask > INT64_MAX || r->cmp[i].value > INT64_MAX)
			goto bad;
		json_array_append_new(args, json_pack("{s:i, s:I, s:I, s:s}",
		    "index", (int)r->cmp[i].arg,
		    "value", (json_int_t)r->cmp[i].mask,
		    "valueTwo", (json_int_t)r->cmp[i].value,
		    "op", "SCMP_CMP_MASKED_EQ"));
	}
	/*
	 * ENOSYS (clone3, so that glibc falls back to clone): this runsc
	 * ignores errnoRet and would answer EPERM, on which glibc's
	 * pthread_create fails.  SCMP_ACT_TRACE without a tracer is ENOSYS
	 * by seccomp(2), in the sentry as in Linux, and no tracer can be
	 * attached: ptrace is refused by this same filter.
	 */
	action = r->verdict == SECCOMP_ENOSYS ? "SCMP_ACT_TRACE" :
	    "SCMP_ACT_ALLOW";
	return json_array_append_new(syscalls, json_pack("{s:[s], s:s, s:o}",
	    "names", r->name, "action", action, "args", args)) == 0 ? 0 : -1;
bad:
	json_decref(args);
	snprintf(err, errlen, "gvisor bundle: seccomp rule for %s cannot be "
	    "written for runsc", r->name);
	return -1;
}

/*
 * The native sandbox's seccomp allowlist as linux.seccomp, which the
 * sentry enforces on the code's calls (runsc --oci-seccomp, gvisor.c):
 * the sentry is the wall, and each call it emulates is its attack
 * surface.  Names this runsc does not know it skips, as libseccomp's are.
 * The native filter kills the i386 and x32 ABIs; OCI cannot say so, and
 * need not: the sentry takes int 0x80 as the x86_64 call of the same
 * number, which this filter judges, and an x32 number matches no rule.
 */
static json_t *
seccomp(char *err, size_t errlen)
{
	json_t	*syscalls = json_array();

	if (sandbox_seccomp_rules(seccomp_entry, syscalls, err, errlen) ==
	    -1) {
		json_decref(syscalls);
		return NULL;
	}
	return json_pack("{s:s, s:i, s:[s], s:o}", "defaultAction",
	    "SCMP_ACT_ERRNO", "defaultErrnoRet", SECCOMP_DENY_ERRNO,
	    "architectures", "SCMP_ARCH_X86_64", "syscalls", syscalls);
}

int
gvisor_bundle_write(const struct sandbox_spec *s, const struct sandbox *sb,
    const char *resolver, char *err, size_t errlen)
{
	struct bundle	 b;
	json_t		*cfg = NULL, *args, *filter;
	char		 path[PATH_MAX];
	size_t		 i;
	int		 rv = -1;

	memset(&b, 0, sizeof(b));
	b.s = s;
	b.err = err;
	b.errlen = errlen;
	b.mounts = json_array();
	if (xsnprintf(b.root, sizeof(b.root), "%s/root", s->dir) == -1 ||
	    xsnprintf(path, sizeof(path), "%s/config.json", s->dir) == -1) {
		snprintf(err, errlen, "gvisor bundle: path too long");
		goto out;
	}
	if (root_top(&b) == -1 || root_etc(&b, resolver) == -1 ||
	    root_rest(&b) == -1 || (filter = seccomp(err, errlen)) == NULL)
		goto out;
	args = json_array();
	for (i = 0; s->argv[i] != NULL && i < SANDBOX_ARGS_MAX; i++)
		json_array_append_new(args, json_string(s->argv[i]));
	/* No capability in any set; no_new_privs; the sandbox user. */
	cfg = json_pack("{s:s, s:{s:b, s:{s:i, s:i}, s:o, s:o, s:s, "
	    "s:{s:[], s:[], s:[], s:[], s:[]}, s:o, s:b}, "
	    "s:{s:s, s:b}, s:s, s:o, "
	    "s:{s:o, s:o, s:o, s:o}}",
	    "ociVersion", "1.0.2",
	    "process", "terminal", 0, "user", "uid", SANDBOX_INNER_ID, "gid",
	    SANDBOX_INNER_ID, "args", args, "env", environment(s),
	    "cwd", "/workspace", "capabilities", "bounding", "effective",
	    "inheritable", "permitted", "ambient", "rlimits",
	    rlimits(s->limits), "noNewPrivileges", 1,
	    "root", "path", b.root, "readonly", 1,
	    "hostname", s->hostname, "mounts", b.mounts,
	    "linux", "namespaces", namespaces(s),
	    "uidMappings", idmaps(sb), "gidMappings", idmaps(sb),
	    "seccomp", filter);
	b.mounts = NULL;		/* cfg's now */
	if (cfg == NULL) {
		snprintf(err, errlen, "gvisor bundle: building config.json");
		goto out;
	}
	if (json_dump_file(cfg, path, JSON_COMPACT) == -1) {
		snprintf(err, errlen, "gvisor bundle: writing %s", path);
		goto out;
	}
	rv = 0;
out:
	json_decref(b.mounts);
	json_decref(cfg);
	return rv;
}
