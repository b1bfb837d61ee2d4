/*
 * What cgroup.c and cgroup_stat.c share: the cgroup itself and how a
 * cgroup file is read.  Nothing outside these two files includes it.
 */
#ifndef STOCKADE_CGROUP_INT_H
#define STOCKADE_CGROUP_INT_H

#include "cgroup.h"

#define CG_V1_MAX	CGROUP_V1_MAX
#define CG_FILE_MAX	65536	/* a cgroup file we read */
/* Where the kernel counts its OOM kills: read at the end of every call. */
#define OOM_FILE(cg)	((cg)->v == CGROUP_V2 ? "memory.events" : \
			    "memory.oom_control")

struct cgroup {
	enum cgroup_version	v;
	char			path[CG_V1_MAX][PATH_MAX];
	int			npaths;
	int			fd;		/* v2 directory, or -1 */
	int			oomfd;		/* OOM_FILE, or -1 */
	/* v1: each hierarchy's tasks file, opened by the parent for the
	 * child to join itself through (cgroup_join_self); -1 when shut. */
	int			tasks[CG_V1_MAX];
};

/* dir/file's contents (NUL-terminated, at most CG_FILE_MAX), or NULL. */
char	*cg_read(const char *dir, const char *file);

#endif
