/*
 * Resource limits by cgroup, behind one interface with a v2 (unified) and
 * a v1 (memory, pids, cpu hierarchies, and cpuacct's where it is mounted
 * apart) backend.  Each sandbox gets its own
 * cgroup, stockade-<id>, directly under one base cgroup that cgroup_init
 * resolves once at start: cgroup.parent, or by default the cgroup mcp-exec
 * was started in.  On v2 mcp-exec moves itself once into the leaf
 * <base>/mcp-exec (no process may sit beside child cgroups that use
 * controllers), so every sandbox stays one level below the base however
 * many come and go.  All of this runs in the parent, as root, before the
 * child is released, but for the v1 child's own join (cgroup_join_self).
 */
#ifndef STOCKADE_SANDBOX_CGROUP_H
#define STOCKADE_SANDBOX_CGROUP_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#define CGROUP_ROOT	"/sys/fs/cgroup"
#define CGROUP_LEAF	"mcp-exec"	/* v2: where mcp-exec itself sits */
#define CGROUP_PREFIX	"stockade-"	/* + sandbox id: one per sandbox */
/* v1 hierarchies: memory, pids, cpu, and cpuacct where it is mounted
 * apart from cpu (cgroup_v1_cpuacct_apart). */
#define CGROUP_V1_MAX	4

enum cgroup_version {
	CGROUP_AUTO,
	CGROUP_V1,
	CGROUP_V2,
};

struct cgroup_conf {
	enum cgroup_version	version;
	char			parent[PATH_MAX];	/* "" = our own cgroup */
	/* Filled by cgroup_init: the backend and the base directories
	 * (one on v2; on v1 one per cgroup_v1_controllers entry in use)
	 * sandboxes are made in. */
	int			ready;
	enum cgroup_version	resolved;
	char			base[CGROUP_V1_MAX][PATH_MAX];
};

struct sandbox_limits;
struct cgroup;

/* v1: the hierarchy of each base[i]. */
extern const char *const cgroup_v1_controllers[CGROUP_V1_MAX];
/*
 * v1: 1 when cpuacct is a hierarchy of its own, not mounted with cpu.  A
 * sandbox's cgroup is then made there too, for its CPU time: without it
 * the time would be summed from /proc, which misses every child nobody
 * waited for (a parent that ignores SIGCHLD), a way under a CPU quota.
 */
int		 cgroup_v1_cpuacct_apart(void);
/* Which backend this host offers (AUTO resolved), or -1. */
int		 cgroup_detect(enum cgroup_version want);
/*
 * Once, at start, before any other call with this conf: picks the backend
 * and the base, and on v2 readies the base (controllers for its children,
 * mcp-exec into the leaf unless it is there already).  Idempotent.
 */
int		 cgroup_init(struct cgroup_conf *, char *err, size_t errlen);
struct cgroup	*cgroup_create(const struct cgroup_conf *, const char *name,
		    const struct sandbox_limits *, char *err, size_t errlen);
int		 cgroup_add(struct cgroup *, pid_t, char *err, size_t errlen);
/*
 * v2: a descriptor of the cgroup's directory, for clone3's
 * CLONE_INTO_CGROUP (born inside, no migration); -1 on v1.  Owned by the
 * cgroup.
 */
int		 cgroup_fd(struct cgroup *);
/*
 * v1: a child that moves itself.  The parent, before clone, opens each
 * hierarchy's tasks file (O_CLOEXEC) and returns 1 (0 on v2, where
 * CLONE_INTO_CGROUP places the child; -1 with err).  The child,
 * single-threaded and before anything else of it runs, calls
 * cgroup_join_self: it writes "0" to each and closes every one, failing
 * or not.  The parent closes its copies with cgroup_join_done once the
 * child is cloned (cgroup_destroy does too).
 */
int		 cgroup_join_prepare(struct cgroup *, char *err, size_t errlen);
int		 cgroup_join_self(struct cgroup *, char *err, size_t errlen);
void		 cgroup_join_done(struct cgroup *);
/* 1 when the kernel's OOM killer killed a process of this cgroup. */
int		 cgroup_oom_killed(struct cgroup *);
/* How many processes of this cgroup it killed so far. */
uint64_t	 cgroup_oom_kills(struct cgroup *);
/* Highest memory use seen, bytes (0 when unknown). */
uint64_t	 cgroup_memory_peak(struct cgroup *);
/* CPU time the cgroup's processes used so far, in microseconds. */
uint64_t	 cgroup_cpu_usec(struct cgroup *);
/* SIGKILL to every process in the cgroup, until it is empty (bounded). */
void		 cgroup_kill(struct cgroup *);
/* Removes the cgroup (once empty, waiting a little) and frees it; -1 when
 * a directory of it is left. */
int		 cgroup_destroy(struct cgroup *);
/* Kills and removes what is left of sandbox `name`'s cgroup, if any; -1
 * when some of it is left (its processes not gone yet). */
int		 cgroup_remove_stale(const struct cgroup_conf *, const char *name);
/*
 * Removes every empty stockade-<id> cgroup under the base (and under the
 * leaves that earlier mcp-exec builds nested) that is at least
 * min_age_s old; returns how many.  Never kills: a cgroup that holds
 * processes may be a live sandbox of another mcp-exec.
 */
int		 cgroup_sweep(const struct cgroup_conf *, int min_age_s);
const char	*cgroup_version_name(const struct cgroup *);

#endif
