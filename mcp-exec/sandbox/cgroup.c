/*
 * cgroup backends.  v1: one directory per controller (memory, pids, cpu,
 * and cpuacct where it is mounted apart from cpu);
 * v2: one directory in the unified hierarchy.  Files written here are the
 * kernel's; what is read back (OOM counters, process lists) comes from the
 * kernel too, but is parsed defensively.
 */
#include <sys/stat.h>

#include <dirent.h>
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
#include "cgroup_int.h"
#include "log.h"
#include "sandbox.h"
#include "util.h"

#define CG_NEST_MAX	16	/* leaves nested by earlier builds we undo */
#define CG_KILL_ROUNDS	100	/* v1: kill passes until the cgroup is empty */
#define CG_RMDIR_TRIES	300	/* 3 s: a busy host reaps slowly */
#define CG_WAIT_NS	10000000	/* 10 ms between tries */
#define CPU_PERIOD_US	100000

const char *const cgroup_v1_controllers[CG_V1_MAX] = { "memory", "pids",
    "cpu", "cpuacct" };
static const char *const v2_want = "+memory +pids +cpu";

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

char *
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

int
cgroup_v1_cpuacct_apart(void)
{
	static int	 apart = -1;
	struct stat	 a, c;

	/* Mounted with cpu, both names lead to one directory. */
	if (apart == -1)
		apart = stat(CGROUP_ROOT "/cpuacct", &a) == 0 &&
		    S_ISDIR(a.st_mode) && stat(CGROUP_ROOT "/cpu", &c) == 0 &&
		    (a.st_dev != c.st_dev || a.st_ino != c.st_ino);
	return apart;
}

/* The v1 hierarchies in use: cpuacct only where it stands apart. */
static int
v1_count(void)
{
	return cgroup_v1_cpuacct_apart() ? CG_V1_MAX : CG_V1_MAX - 1;
}

/* 1 when the comma-separated list names word: "cpu" is not "cpuacct". */
static int
has_token(const char *list, const char *word)
{
	size_t	 n = strlen(word);
	const char *p;

	for (p = list; p != NULL; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (strncmp(p, word, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
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
		    has_token(c, controller)) {
			rv = xsnprintf(out, outlen, "%s", p) == -1 ? -1 : 0;
			break;
		}
	}
	free(data);
	return rv;
}

/* 1 when the v2 cgroup dir enables memory and pids for its children. */
static int
v2_prepared(const char *dir)
{
	char	*ctl;
	int	 yes;

	if ((ctl = cg_read(dir, "cgroup.subtree_control")) == NULL)
		return 0;
	yes = strstr(ctl, "memory") != NULL && strstr(ctl, "pids") != NULL;
	free(ctl);
	return yes;
}

/* 1 for "stockade-" followed by a sandbox id. */
static int
is_sandbox_name(const char *name)
{
	size_t	 n = strlen(CGROUP_PREFIX);

	return strncmp(name, CGROUP_PREFIX, n) == 0 &&
	    strlen(name + n) == SANDBOX_ID_HEX &&
	    strspn(name + n, "0123456789abcdef") == SANDBOX_ID_HEX;
}

/*
 * Undoes what earlier builds left in a leaf: they moved into
 * <leaf>/mcp-exec at every start, nesting one level per restart, and made
 * sandboxes at each level.  Empty ones go (rmdir refuses any that holds a
 * process), then the leaf's own controllers, so a process may join it.
 */
static void
v2_prune(const char *dir, int depth)
{
	char		 sub[PATH_MAX];
	DIR		*d;
	struct dirent	*de;

	if (depth >= CG_NEST_MAX || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || (strcmp(de->d_name, CGROUP_LEAF) &&
		    !is_sandbox_name(de->d_name)) ||
		    xsnprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) == -1)
			continue;
		v2_prune(sub, depth + 1);
		(void)rmdir(sub);
	}
	closedir(d);
	(void)cg_write(dir, "cgroup.subtree_control", "-memory -pids -cpu");
}

/*
 * v2: the base is cgroup.parent, or the cgroup we were started in, or,
 * when that is a leaf an mcp-exec made (a restart that kept its cgroup,
 * an `mcp-exec run` started beside the server), the leaf's parent.
 * "No internal processes": controllers can be enabled for the base's
 * children only while it holds no process, so when mcp-exec sits in the
 * base it moves itself, once, into <base>/mcp-exec.
 */
static int
v2_init(struct cgroup_conf *conf, char *err, size_t errlen)
{
	char	 own[PATH_MAX], self[PATH_MAX], leaf[PATH_MAX], *base, *slash;

	base = conf->base[0];
	if (own_cgroup(NULL, own, sizeof(own)) == -1 ||
	    xsnprintf(self, sizeof(self), "%s%s", CGROUP_ROOT,
	    strcmp(own, "/") ? own : "") == -1 ||
	    xsnprintf(base, PATH_MAX, "%s", self) == -1) {
		snprintf(err, errlen, "cannot find our cgroup in "
		    "/proc/self/cgroup");
		return -1;
	}
	if (conf->parent[0] != '\0') {
		if (xsnprintf(base, PATH_MAX, "%s/%s", CGROUP_ROOT,
		    conf->parent) == -1)
			goto toolong;
	} else if ((slash = strrchr(base, '/')) != NULL &&
	    strcmp(slash + 1, CGROUP_LEAF) == 0) {
		*slash = '\0';
		if (!v2_prepared(base))
			*slash = '/';
	}
	if (xsnprintf(leaf, sizeof(leaf), "%s/%s", base, CGROUP_LEAF) == -1)
		goto toolong;
	if (cg_write(base, "cgroup.subtree_control", v2_want) == 0)
		return 0;
	if (errno != EBUSY || strcmp(self, base) != 0) {
		snprintf(err, errlen, "%s: cannot enable memory, pids and cpu "
		    "for sandboxes: %s (delegate the cgroup to mcp-exec%s)",
		    base, strerror(errno), errno == EBUSY ? ", and run nothing "
		    "else in it" : "");
		return -1;
	}
	if (mkdir(leaf, 0755) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", leaf, strerror(errno));
		return -1;
	}
	v2_prune(leaf, 0);
	if (cg_writef(leaf, "cgroup.procs", "%ld", (long)getpid()) == -1) {
		snprintf(err, errlen, "%s/cgroup.procs: %s", leaf,
		    strerror(errno));
		return -1;
	}
	if (cg_write(base, "cgroup.subtree_control", v2_want) == -1) {
		snprintf(err, errlen, "%s: cannot enable memory, pids and cpu "
		    "for sandboxes: %s (other processes share mcp-exec's "
		    "cgroup: give it one of its own)", base, strerror(errno));
		return -1;
	}
	return 0;
toolong:
	snprintf(err, errlen, "cgroup path too long");
	return -1;
}

int
cgroup_init(struct cgroup_conf *conf, char *err, size_t errlen)
{
	char	 own[PATH_MAX];
	int	 v, i;

	if (conf->ready)
		return 0;
	if ((v = cgroup_detect(conf->version)) == -1) {
		snprintf(err, errlen, "no usable cgroup %s hierarchy (memory "
		    "and pids controllers) under %s", conf->version ==
		    CGROUP_V2 ? "v2" : conf->version == CGROUP_V1 ? "v1" :
		    "v1 or v2", CGROUP_ROOT);
		return -1;
	}
	conf->resolved = (enum cgroup_version)v;
	if (v == CGROUP_V2) {
		if (v2_init(conf, err, errlen) == -1)
			return -1;
	} else {
		/* v1 has no rule against processes beside child cgroups:
		 * the base is just where we are (or cgroup.parent). */
		for (i = 0; i < v1_count(); i++) {
			if (conf->parent[0] != '\0') {
				if (xsnprintf(own, sizeof(own), "/%s",
				    conf->parent) == -1) {
					snprintf(err, errlen, "cgroup path too "
					    "long");
					return -1;
				}
			} else if (own_cgroup(cgroup_v1_controllers[i], own,
			    sizeof(own)) == -1) {
				snprintf(err, errlen, "cannot find our %s "
				    "cgroup in /proc/self/cgroup",
				    cgroup_v1_controllers[i]);
				return -1;
			}
			if (xsnprintf(conf->base[i], sizeof(conf->base[i]),
			    "%s/%s%s", CGROUP_ROOT, cgroup_v1_controllers[i],
			    strcmp(own, "/") ? own : "") == -1) {
				snprintf(err, errlen, "cgroup path too long");
				return -1;
			}
		}
	}
	conf->ready = 1;
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
 * The cgroup's paths, one per v1 controller or one on v2, directly under
 * the base cgroup_init resolved.  With mk, the directories are made.
 */
static struct cgroup *
cgroup_paths(const struct cgroup_conf *conf, const char *name, int mk,
    char *err, size_t errlen)
{
	struct cgroup	*cg;
	int		 i;

	if (!conf->ready) {
		snprintf(err, errlen, "cgroups not initialised");
		return NULL;
	}
	cg = xcalloc(1, sizeof(*cg));
	cg->fd = cg->oomfd = -1;
	for (i = 0; i < CG_V1_MAX; i++)
		cg->tasks[i] = -1;
	cg->v = conf->resolved;
	cg->npaths = cg->v == CGROUP_V2 ? 1 : v1_count();
	for (i = 0; i < cg->npaths; i++) {
		if (xsnprintf(cg->path[i], sizeof(cg->path[i]), "%s/%s%s",
		    conf->base[i], CGROUP_PREFIX, name) == -1) {
			snprintf(err, errlen, "cgroup path too long");
			cg->path[i][0] = '\0';
			goto fail;
		}
		if (mk && mkdir(cg->path[i], 0755) == -1) {
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
	char		 path[PATH_MAX];

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
	/* Kept open, for one pread a call; without it, by its path. */
	if (xsnprintf(path, sizeof(path), "%s/%s", cg->path[0],
	    OOM_FILE(cg)) != -1)
		cg->oomfd = open(path, O_RDONLY | O_CLOEXEC);
	return cg;
fail:
	cgroup_destroy(cg);
	return NULL;
}

int
cgroup_remove_stale(const struct cgroup_conf *conf, const char *name)
{
	struct cgroup	*cg;
	char		 err[256];
	struct stat	 st;
	int		 i;

	if ((cg = cgroup_paths(conf, name, 0, err, sizeof(err))) == NULL)
		return 0;
	for (i = 0; i < cg->npaths; i++)
		if (stat(cg->path[i], &st) == -1)
			cg->path[i][0] = '\0';
	if (cg->path[cg->v == CGROUP_V2 ? 0 : 1][0] != '\0')
		cgroup_kill(cg);
	return cgroup_destroy(cg);
}

/* Empty sandbox cgroups in dir, and in the leaves earlier builds nested. */
static int
sweep_dir(const char *dir, int depth, time_t cutoff)
{
	char		 sub[PATH_MAX];
	struct stat	 st;
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	if (depth >= CG_NEST_MAX || (d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR ||
		    xsnprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) == -1)
			continue;
		if (strcmp(de->d_name, CGROUP_LEAF) == 0) {
			n += sweep_dir(sub, depth + 1, cutoff);
			/* Ours (depth 0) stays; nested ones go once empty. */
			if (depth > 0)
				(void)rmdir(sub);
			continue;
		}
		/* Young: its owner may not have placed a process yet.
		 * Busy (rmdir fails): someone's live sandbox. */
		if (is_sandbox_name(de->d_name) && stat(sub, &st) == 0 &&
		    st.st_mtime <= cutoff && rmdir(sub) == 0) {
			log_warnx("removed cgroup %s, left by an mcp-exec that "
			    "did not stop cleanly", sub);
			n++;
		}
	}
	closedir(d);
	return n;
}

int
cgroup_sweep(const struct cgroup_conf *conf, int min_age_s)
{
	int	 i, n = 0;

	if (!conf->ready)
		return 0;
	for (i = 0; i < (conf->resolved == CGROUP_V2 ? 1 : v1_count()); i++)
		n += sweep_dir(conf->base[i], 0, time(NULL) - min_age_s);
	return n;
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
cgroup_join_prepare(struct cgroup *cg, char *err, size_t errlen)
{
	char	 path[PATH_MAX];
	int	 i;

	if (cg->v == CGROUP_V2)
		return 0;
	for (i = 0; i < cg->npaths; i++) {
		/* O_CLOEXEC: no exec may inherit a way out of the limits;
		 * the child closes them before anything of it runs anyway. */
		if (xsnprintf(path, sizeof(path), "%s/tasks", cg->path[i]) ==
		    -1 || (cg->tasks[i] = open(path, O_WRONLY | O_CLOEXEC)) ==
		    -1) {
			snprintf(err, errlen, "open %s: %s", path,
			    strerror(errno));
			cgroup_join_done(cg);
			return -1;
		}
	}
	return 1;
}

int
cgroup_join_self(struct cgroup *cg, char *err, size_t errlen)
{
	int	 i, rv = 0;

	/*
	 * "0" in tasks moves the writing thread alone: the kernel's
	 * single-thread path, no RCU grace period as a whole process's
	 * move from the parent waits for.  The permission check is the
	 * opener's (root's), not ours.  Every descriptor is closed
	 * whatever happens, so none outlives this call.
	 */
	for (i = 0; i < CG_V1_MAX; i++) {
		if (cg->tasks[i] == -1)
			continue;
		if (rv == 0 && write(cg->tasks[i], "0", 1) != 1) {
			snprintf(err, errlen, "joining %s: %s", cg->path[i],
			    strerror(errno));
			rv = -1;
		}
		close(cg->tasks[i]);
		cg->tasks[i] = -1;
	}
	return rv;
}

void
cgroup_join_done(struct cgroup *cg)
{
	int	 i;

	for (i = 0; i < CG_V1_MAX; i++) {
		if (cg->tasks[i] != -1)
			close(cg->tasks[i]);
		cg->tasks[i] = -1;
	}
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

int
cgroup_destroy(struct cgroup *cg)
{
	int	 i, t, rv = 0;

	if (cg == NULL)
		return 0;
	cgroup_join_done(cg);
	if (cg->fd != -1)
		close(cg->fd);
	if (cg->oomfd != -1)
		close(cg->oomfd);
	for (i = 0; i < cg->npaths; i++) {
		if (cg->path[i][0] == '\0')
			continue;
		/* Exiting processes leave the cgroup a moment after dying. */
		for (t = 0; t < CG_RMDIR_TRIES; t++) {
			if (rmdir(cg->path[i]) == 0 || errno == ENOENT)
				break;
			if (errno != EBUSY) {
				log_warn("rmdir %s", cg->path[i]);
				rv = -1;
				break;
			}
			nap();
		}
		/* Still busy: a later sweep takes it once empty. */
		if (t == CG_RMDIR_TRIES) {
			log_warnx("rmdir %s: still busy, left to the sweep",
			    cg->path[i]);
			rv = -1;
		}
	}
	free(cg);
	return rv;
}

const char *
cgroup_version_name(const struct cgroup *cg)
{
	return cg->v == CGROUP_V2 ? "v2" : "v1";
}
