/*
 * Resource limits by cgroup, behind one interface with a v2 (unified) and
 * a v1 (memory, pids, cpu hierarchies) backend.  Each sandbox gets its own
 * cgroup under a parent that is, by default, the one mcp-exec itself runs
 * in.  All of this runs in the parent, as root, before the child is
 * released.
 */
#ifndef STOCKADE_SANDBOX_CGROUP_H
#define STOCKADE_SANDBOX_CGROUP_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#define CGROUP_ROOT	"/sys/fs/cgroup"

enum cgroup_version {
	CGROUP_AUTO,
	CGROUP_V1,
	CGROUP_V2,
};

struct cgroup_conf {
	enum cgroup_version	version;
	char			parent[PATH_MAX];	/* "" = our own cgroup */
};

struct sandbox_limits;
struct cgroup;

/* Which backend this host offers (AUTO resolved), or -1. */
int		 cgroup_detect(enum cgroup_version want);
struct cgroup	*cgroup_create(const struct cgroup_conf *, const char *name,
		    const struct sandbox_limits *, char *err, size_t errlen);
int		 cgroup_add(struct cgroup *, pid_t, char *err, size_t errlen);
/*
 * v2: a descriptor of the cgroup's directory, for clone3's
 * CLONE_INTO_CGROUP (born inside, no migration); -1 on v1.  Owned by the
 * cgroup.
 */
int		 cgroup_fd(struct cgroup *);
/* 1 when the kernel's OOM killer killed a process of this cgroup. */
int		 cgroup_oom_killed(struct cgroup *);
/* How many processes of this cgroup it killed so far. */
uint64_t	 cgroup_oom_kills(struct cgroup *);
/* Highest memory use seen, bytes (0 when unknown). */
uint64_t	 cgroup_memory_peak(struct cgroup *);
/* SIGKILL to every process in the cgroup, until it is empty (bounded). */
void		 cgroup_kill(struct cgroup *);
/* Removes the cgroup (once empty) and frees it. */
void		 cgroup_destroy(struct cgroup *);
/* Kills and removes what is left of sandbox `name`'s cgroup, if any. */
void		 cgroup_remove_stale(const struct cgroup_conf *, const char *name);
const char	*cgroup_version_name(const struct cgroup *);

#endif
