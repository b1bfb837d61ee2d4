/*
 * cgroup backends.  v1: one directory per controller (memory, pids, cpu);
 * v2: one directory in the unified hierarchy.  Files written here are the
 * kernel's; what is read back (OOM counters, process lists) comes from the
 * kernel too, but is parsed defensively.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "sandbox.h"
#include "util.h"

#define CG_V1_MAX	3
#define CG_FILE_MAX	65536	/* a cgroup file we read */
#define CG_KILL_ROUNDS	100	/* v1: kill passes until the cgroup is empty */
#define CG_RMDIR_TRIES	100
#define CG_WAIT_NS	10000000	/* 10 ms between tries */
#define CPU_PERIOD_US	100000

static const char *const v1_controllers[CG_V1_MAX] = { "memory", "pids", "cpu" };

struct cgroup {
	enum cgroup_version	v;
	char			path[CG_V1_MAX][PATH_MAX];
	int			npaths;
	int			fd;		/* v2 directory, or -1 */
};

static void
nap(void)
{
	struct timespec	 ts = { 0, CG_WAIT_NS };

	nanosleep(&ts, NULL);
}

static int
cg_write(const char *dir, const char *file, const char *value)
{
	char	 path[PATH_MAX];
	int	 fd, rv = 0;

	if (xsnprintf(path, sizeof(path), "%s/%s", dir, file) == -1)
		return -1;
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	if (write_all(fd, value, strlen(value)) == -1)
		rv = -1;
	close(fd);
	return rv;
}

static int
cg_writef(const char *dir, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
cg_writef(const char *dir, const char *file, const char *fmt, ...)
{
	char	 v[64];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	return cg_write(dir, file, v);
}

static char *
cg_read(const char *dir, const char *file)
{
	char	 path[PATH_MAX], *data;
	size_t	 len;

	if (xsnprintf(path, sizeof(path), "%s/%s", dir, file) == -1)
		return NULL;
	/* cgroup files report a size of 0 or 4096: read up to the cap. */
	if (read_file(path, CG_FILE_MAX, &data, &len) == -1)
		return NULL;
	return data;
}

/* The value after `key ` in a "key value" per line file. */
static int
cg_keyed(const char *dir, const char *file, const char *key, uint64_t *out)
{
	char		*data, *p;
	size_t		 klen = strlen(key);
	int		 rv = -1;

	if ((data = cg_read(dir, file)) == NULL)
		return -1;
	for (p = data; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ' ') {
			*out = strtoull(p + klen + 1, NULL, 10);
			rv = 0;
			break;
		}
	}
	free(data);
	return rv;
}

static int
file_exists(const char *dir, const char *file)
{
	char	 path[PATH_MAX];

	return xsnprintf(path, sizeof(path), "%s/%s", dir, file) != -1 &&
	    access(path, F_OK) == 0;
}

int
cgroup_detect(enum cgroup_version want)
{
	char	*ctl;
	int	 v2 = 0;

	if ((ctl = cg_read(CGROUP_ROOT, "cgroup.controllers")) != NULL) {
		v2 = strstr(ctl, "memory") != NULL && strstr(ctl, "pids") != NULL;
		free(ctl);
	}
	if (want == CGROUP_V2 || (want == CGROUP_AUTO && v2))
		return v2 ? CGROUP_V2 : -1;
	if (access(CGROUP_ROOT "/memory/memory.limit_in_bytes", F_OK) == 0 &&
	    access(CGROUP_ROOT "/pids", F_OK) == 0)
		return CGROUP_V1;
	return -1;
}

/*
 * Our own cgroup in a hierarchy, from /proc/self/cgroup: "0::/path" for
 * v2, "N:memory:/path" (controllers comma-separated) for v1.
 */
static int
own_cgroup(const char *controller, char *out, size_t outlen)
{
	char	*data, *line, *next, *c, *p;
	size_t	 len;
	int	 rv = -1;

	if (read_file("/proc/self/cgroup", CG_FILE_MAX, &data, &len) == -1)
		return -1;
	for (line = data; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if ((c = strchr(line, ':')) == NULL ||
		    (p = strchr(c + 1, ':')) == NULL)
			continue;
		*p++ = '\0';
		c++;
		if (controller == NULL ? *c == '\0' :
		    strstr(c, controller) != NULL) {
			rv = xsnprintf(out, outlen, "%s", p) == -1 ? -1 : 0;
			break;
		}
	}
	free(data);
	return rv;
}

static int
parent_dir(const struct cgroup_conf *conf, const char *mount,
    const char *controller, char *out, size_t outlen)
{
	char	 own[PATH_MAX];

	if (conf->parent[0] != '\0')
		return xsnprintf(out, outlen, "%s/%s", mount, conf->parent);
	if (own_cgroup(controller, own, sizeof(own)) == -1)
		return -1;
	return xsnprintf(out, outlen, "%s%s", mount, strcmp(own, "/") ? own : "");
}

/*
 * v2's "no internal processes" rule: controllers can be enabled for the
 * children of a cgroup only while it holds no process itself.  When
 * mcp-exec sits in the parent, it moves itself to a leaf first.
 */
static int
v2_enable_controllers(const char *parent, char *err, size_t errlen)
{
	static const char *const want = "+memory +pids +cpu";
	char	 leaf[PATH_MAX];

	if (cg_write(parent, "cgroup.subtree_control", want) == 0)
		return 0;
	if (errno != EBUSY ||
	    xsnprintf(leaf, sizeof(leaf), "%s/mcp-exec", parent) == -1 ||
	    (mkdir(leaf, 0755) == -1 && errno != EEXIST) ||
	    cg_writef(leaf, "cgroup.procs", "%ld", (long)getpid()) == -1 ||
	    cg_write(parent, "cgroup.subtree_control", want) == -1) {
		snprintf(err, errlen, "%s: cannot enable memory, pids and cpu "
		    "for sandboxes: %s (delegate the cgroup to mcp-exec)",
		    parent, strerror(errno));
		return -1;
	}
	return 0;
}

static int
v2_limits(const char *dir, const struct sandbox_limits *l)
{
	if (cg_writef(dir, "memory.max", "%" PRIu64, l->memory) == -1 ||
	    cg_writef(dir, "pids.max", "%u", l->pids) == -1 ||
	    cg_writef(dir, "cpu.max", "%u %u", l->cpu_millis * (CPU_PERIOD_US /
	    1000), CPU_PERIOD_US) == -1)
		return -1;
	/* Without swap accounting the file is absent: nothing to limit. */
	if (file_exists(dir, "memory.swap.max") &&
	    cg_writef(dir, "memory.swap.max", "%" PRIu64, l->swap) == -1)
		return -1;
	return 0;
}

static int
v1_limits(struct cgroup *cg, const struct sandbox_limits *l)
{
	const char	*mem = cg->path[0], *pids = cg->path[1], *cpu = cg->path[2];

	if (cg_writef(mem, "memory.limit_in_bytes", "%" PRIu64, l->memory) == -1)
		return -1;
	if (file_exists(mem, "memory.memsw.limit_in_bytes") &&
	    cg_writef(mem, "memory.memsw.limit_in_bytes", "%" PRIu64,
	    l->memory + l->swap) == -1)
		return -1;
	/* No swap allowed and no memsw accounting: at least do not swap. */
	if (l->swap == 0)
		(void)cg_write(mem, "memory.swappiness", "0");
	if (cg_writef(pids, "pids.max", "%u", l->pids) == -1 ||
	    cg_writef(cpu, "cpu.cfs_period_us", "%u", CPU_PERIOD_US) == -1 ||
	    cg_writef(cpu, "cpu.cfs_quota_us", "%u", l->cpu_millis *
	    (CPU_PERIOD_US / 1000)) == -1)
		return -1;
	return 0;
}

/*
 * The cgroup's paths, one per v1 controller or one on v2 (made = 0: not
 * created by us).  With mk, the parents are readied and the directories
 * made.
 */
static struct cgroup *
cgroup_paths(const struct cgroup_conf *conf, const char *name, int mk,
    char *err, size_t errlen)
{
	struct cgroup	*cg = xcalloc(1, sizeof(*cg));
	char		 parent[PATH_MAX], mount[PATH_MAX];
	int		 v, i;

	cg->fd = -1;
	if ((v = cgroup_detect(conf->version)) == -1) {
		snprintf(err, errlen, "no usable cgroup %s hierarchy (memory "
		    "and pids controllers) under %s", conf->version ==
		    CGROUP_V2 ? "v2" : conf->version == CGROUP_V1 ? "v1" :
		    "v1 or v2", CGROUP_ROOT);
		free(cg);
		return NULL;
	}
	cg->v = (enum cgroup_version)v;
	cg->npaths = cg->v == CGROUP_V2 ? 1 : CG_V1_MAX;
	for (i = 0; i < cg->npaths; i++) {
		if (cg->v == CGROUP_V2)
			snprintf(mount, sizeof(mount), "%s", CGROUP_ROOT);
		else
			snprintf(mount, sizeof(mount), "%s/%s", CGROUP_ROOT,
			    v1_controllers[i]);
		if (parent_dir(conf, mount, cg->v == CGROUP_V2 ? NULL :
		    v1_controllers[i], parent, sizeof(parent)) == -1 ||
		    xsnprintf(cg->path[i], sizeof(cg->path[i]),
		    "%s/stockade-%s", parent, name) == -1) {
			snprintf(err, errlen, "cannot find the parent cgroup in "
			    "%s", mount);
			cg->path[i][0] = '\0';
			goto fail;
		}
		if (!mk)
			continue;
		if (cg->v == CGROUP_V2 &&
		    v2_enable_controllers(parent, err, errlen) == -1)
			goto fail;
		if (mkdir(cg->path[i], 0755) == -1) {
			snprintf(err, errlen, "mkdir %s: %s", cg->path[i],
			    strerror(errno));
			cg->path[i][0] = '\0';
			goto fail;
		}
	}
	return cg;
fail:
	cgroup_destroy(cg);
	return NULL;
}

struct cgroup *
cgroup_create(const struct cgroup_conf *conf, const char *name,
    const struct sandbox_limits *l, char *err, size_t errlen)
{
	struct cgroup	*cg;

	if ((cg = cgroup_paths(conf, name, 1, err, errlen)) == NULL)
		return NULL;
	if ((cg->v == CGROUP_V2 ? v2_limits(cg->path[0], l) :
	    v1_limits(cg, l)) == -1) {
		snprintf(err, errlen, "setting limits in %s: %s", cg->path[0],
		    strerror(errno));
		goto fail;
	}
	if (cg->v == CGROUP_V2 && (cg->fd = open(cg->path[0], O_RDONLY |
	    O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "open %s: %s", cg->path[0],
		    strerror(errno));
		goto fail;
	}
	return cg;
fail:
	cgroup_destroy(cg);
	return NULL;
}

void
cgroup_remove_stale(const struct cgroup_conf *conf, const char *name)
{
	struct cgroup	*cg;
	char		 err[256];
	struct stat	 st;
	int		 i;

	if ((cg = cgroup_paths(conf, name, 0, err, sizeof(err))) == NULL)
		return;
	for (i = 0; i < cg->npaths; i++)
		if (stat(cg->path[i], &st) == -1)
			cg->path[i][0] = '\0';
	if (cg->path[cg->v == CGROUP_V2 ? 0 : 1][0] != '\0')
		cgroup_kill(cg);
	cgroup_destroy(cg);
}

int
cgroup_add(struct cgroup *cg, pid_t pid, char *err, size_t errlen)
{
	int	 i;

	for (i = 0; i < cg->npaths; i++) {
		if (cg_writef(cg->path[i], "cgroup.procs", "%ld", (long)pid) ==
		    -1) {
			snprintf(err, errlen, "%s/cgroup.procs: %s", cg->path[i],
			    strerror(errno));
			return -1;
		}
	}
	return 0;
}

int
cgroup_fd(struct cgroup *cg)
{
	return cg->fd;
}

int
cgroup_oom_killed(struct cgroup *cg)
{
	return cgroup_oom_kills(cg) > 0;
}

uint64_t
cgroup_oom_kills(struct cgroup *cg)
{
	uint64_t	 n = 0;

	if (cg->v == CGROUP_V2)
		(void)cg_keyed(cg->path[0], "memory.events", "oom_kill", &n);
	else
		(void)cg_keyed(cg->path[0], "memory.oom_control", "oom_kill", &n);
	return n;
}

uint64_t
cgroup_memory_peak(struct cgroup *cg)
{
	char		*s;
	uint64_t	 v = 0;

	s = cg_read(cg->path[0], cg->v == CGROUP_V2 ? "memory.peak" :
	    "memory.max_usage_in_bytes");
	if (s != NULL)
		v = strtoull(s, NULL, 10);
	free(s);
	return v;
}

/* v1 has no cgroup.kill: kill what is listed until nothing is. */
static void
v1_kill(const char *dir)
{
	char	*procs, *p;
	int	 round, any;
	long	 pid;

	for (round = 0; round < CG_KILL_ROUNDS; round++) {
		if ((procs = cg_read(dir, "cgroup.procs")) == NULL)
			return;
		any = 0;
		for (p = procs; *p != '\0'; ) {
			pid = strtol(p, &p, 10);
			if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
				any = 1;
			while (*p == '\n')
				p++;
			if (pid <= 0)
				break;
		}
		free(procs);
		if (!any)
			return;
		nap();
	}
	log_warnx("%s: processes survive SIGKILL", dir);
}

void
cgroup_kill(struct cgroup *cg)
{
	if (cg->v == CGROUP_V2 && cg_write(cg->path[0], "cgroup.kill", "1") == 0)
		return;
	/* pids is the controller every process of the sandbox is in. */
	v1_kill(cg->v == CGROUP_V2 ? cg->path[0] : cg->path[1]);
}

void
cgroup_destroy(struct cgroup *cg)
{
	int	 i, t;

	if (cg == NULL)
		return;
	if (cg->fd != -1)
		close(cg->fd);
	for (i = 0; i < cg->npaths; i++) {
		if (cg->path[i][0] == '\0')
			continue;
		/* Exiting processes leave the cgroup a moment after dying. */
		for (t = 0; t < CG_RMDIR_TRIES; t++) {
			if (rmdir(cg->path[i]) == 0 || errno == ENOENT)
				break;
			if (errno != EBUSY) {
				log_warn("rmdir %s", cg->path[i]);
				break;
			}
			nap();
		}
	}
	free(cg);
}

const char *
cgroup_version_name(const struct cgroup *cg)
{
	return cg->v == CGROUP_V2 ? "v2" : "v1";
}
