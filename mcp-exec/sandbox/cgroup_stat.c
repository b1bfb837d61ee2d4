/*
 * What the kernel counts for a sandbox's cgroup: its OOM kills, its CPU
 * time (what quotas bill), its memory peak.  The values are the kernel's;
 * the files are parsed defensively all the same.  Split from cgroup.c for
 * length.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_int.h"
#include "util.h"

/* The value after `key ` in "key value" lines. */
static int
keyed(const char *data, const char *key, uint64_t *out)
{
	const char	*p;
	size_t		 klen = strlen(key);

	for (p = data; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ' ') {
			*out = strtoull(p + klen + 1, NULL, 10);
			return 0;
		}
	}
	return -1;
}

static int
cg_keyed(const char *dir, const char *file, const char *key, uint64_t *out)
{
	char	*data;
	int	 rv;

	if ((data = cg_read(dir, file)) == NULL)
		return -1;
	rv = keyed(data, key, out);
	free(data);
	return rv;
}

int
cgroup_oom_killed(struct cgroup *cg)
{
	return cgroup_oom_kills(cg) > 0;
}

uint64_t
cgroup_oom_kills(struct cgroup *cg)
{
	char		 buf[1024];
	ssize_t		 n;
	uint64_t	 v = 0;

	/* A seq_file read at offset 0 is the kernel's count now. */
	if (cg->oomfd == -1 ||
	    (n = pread(cg->oomfd, buf, sizeof(buf) - 1, 0)) == -1) {
		(void)cg_keyed(cg->path[0], OOM_FILE(cg), "oom_kill", &v);
		return v;
	}
	buf[n] = '\0';
	(void)keyed(buf, "oom_kill", &v);
	return v;
}

/*
 * v1 without cpuacct: the CPU time of the cgroup's processes
 * from /proc, their own and that of children they waited for.  The
 * fields come from the kernel; the command name before them may hold
 * anything, so parsing starts after its last ')'.
 */
static uint64_t
procs_cpu_usec(struct cgroup *cg)
{
	char		*list, *p, *stat, *q, path[64];
	unsigned long long	 f[4];
	uint64_t	 ticks = 0;
	long		 hz = sysconf(_SC_CLK_TCK), pid;
	size_t		 len;

	if (hz <= 0 || (list = cg_read(cg->path[0], "cgroup.procs")) == NULL)
		return 0;
	for (p = list; *p != '\0'; p += strcspn(p, "\n"), p += *p == '\n') {
		if ((pid = strtol(p, NULL, 10)) <= 0 || snprintf(path,
		    sizeof(path), "/proc/%ld/stat", pid) >= (int)sizeof(path) ||
		    read_file(path, 4096, &stat, &len) == -1)
			continue;
		/* state ppid pgrp session tty tpgid flags minflt cminflt
		 * majflt cmajflt, then utime stime cutime cstime. */
		if ((q = strrchr(stat, ')')) != NULL && sscanf(q + 1,
		    " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
		    "%llu %llu", &f[0], &f[1], &f[2], &f[3]) == 4)
			ticks += f[0] + f[1] + f[2] + f[3];
		free(stat);
	}
	free(list);
	return ticks * (1000000 / (uint64_t)hz);
}

uint64_t
cgroup_cpu_usec(struct cgroup *cg)
{
	uint64_t	 v = 0;
	char		*s;

	if (cg->v == CGROUP_V2) {
		(void)cg_keyed(cg->path[0], "cpu.stat", "usage_usec", &v);
		return v;
	}
	/* v1: cpuacct's count (ns), in its own hierarchy or with cpu's;
	 * /proc only where there is no cpuacct at all. */
	if ((s = cg_read(cg->path[cg->npaths == CG_V1_MAX ? 3 : 2],
	    "cpuacct.usage")) != NULL)
		v = strtoull(s, NULL, 10) / 1000;
	else
		v = procs_cpu_usec(cg);
	free(s);
	return v;
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
