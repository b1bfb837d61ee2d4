/*
 * The cgroup backend, with the same assertions on whichever backend the
 * machine has (v1 here, v2 in the guest of tests/guest).  Everything
 * happens under a scratch cgroup, stockade-ck-<pid>, made at the top of
 * each hierarchy and removed (its processes killed) after the suite.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <time.h>

#include "sandbox/cgroup.h"
#include "sandbox/sandbox.h"
#include "testutil.h"

#define CK_CYCLES	40

static char	 scratch[64];		/* "stockade-ck-<pid>" */
static int	 version;		/* CGROUP_V1 or CGROUP_V2 */
/* The hierarchies mcp-exec uses: cpuacct only where it stands apart. */
static int
nhier(void)
{
	return version == CGROUP_V2 ? 1 : cgroup_v1_cpuacct_apart() ?
	    CGROUP_V1_MAX : CGROUP_V1_MAX - 1;
}

/* The directory of relative cgroup path rel in hierarchy i. */
static void
hier_path(char *out, size_t len, int i, const char *rel)
{
	if (version == CGROUP_V2)
		ck_assert_int_ne(xsnprintf(out, len, "%s/%s", CGROUP_ROOT, rel),
		    -1);
	else
		ck_assert_int_ne(xsnprintf(out, len, "%s/%s/%s", CGROUP_ROOT,
		    cgroup_v1_controllers[i], rel), -1);
}

static int
write_str(const char *dir, const char *file, const char *v)
{
	char	 p[PATH_MAX];
	int	 fd, rv;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	if ((fd = open(p, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	rv = write_all(fd, v, strlen(v));
	close(fd);
	return rv;
}

static char *
read_str(const char *dir, const char *file)
{
	char	 p[PATH_MAX], *d = NULL;
	size_t	 len;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	if (read_file(p, 65536, &d, &len) == -1)
		return NULL;
	return d;
}

/* A directory in every hierarchy; on v2 its children get the controllers. */
static void
mk_cgroup(const char *rel, int delegate)
{
	char	 p[PATH_MAX];
	int	 i;

	for (i = 0; i < nhier(); i++) {
		hier_path(p, sizeof(p), i, rel);
		ck_assert_msg(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir %s: "
		    "%s", p, strerror(errno));
		if (delegate && version == CGROUP_V2)
			ck_assert_msg(write_str(p, "cgroup.subtree_control",
			    "+memory +pids +cpu") == 0, "%s: %s", p,
			    strerror(errno));
	}
}

/* Moves pid into rel in every hierarchy. */
static void
join(const char *rel, pid_t pid)
{
	char	 p[PATH_MAX], v[32];
	int	 i;

	snprintf(v, sizeof(v), "%ld", (long)pid);
	for (i = 0; i < nhier(); i++) {
		hier_path(p, sizeof(p), i, rel);
		ck_assert_msg(write_str(p, "cgroup.procs", v) == 0, "join %s: %s",
		    p, strerror(errno));
	}
}

/* Kills what is in dir and below, then removes it deepest first. */
static void
rm_tree(const char *dir, int depth)
{
	char		 p[PATH_MAX], *procs, *s;
	DIR		*d;
	struct dirent	*de;
	int		 t;

	if (depth > 20 || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
		    (size_t)snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) <
		    sizeof(p))
			rm_tree(p, depth + 1);
	closedir(d);
	for (t = 0; t < 100 && rmdir(dir) == -1 && errno == EBUSY; t++) {
		if ((procs = read_str(dir, "cgroup.procs")) != NULL) {
			for (s = procs; *s != '\0'; ) {
				long pid = strtol(s, &s, 10);

				if (pid > 0)
					kill((pid_t)pid, SIGKILL);
				while (*s == '\n')
					s++;
				if (pid <= 0)
					break;
			}
			free(procs);
		}
		usleep(10000);
	}
}

static void
suite_setup(void)
{
	char	 p[PATH_MAX];
	int	 i;

	version = cgroup_detect(CGROUP_AUTO);
	if (version == -1)
		return;
	snprintf(scratch, sizeof(scratch), "stockade-ck-%ld", (long)getpid());
	/* v2: the root may not pass the controllers on yet (a bare guest). */
	if (version == CGROUP_V2)
		(void)write_str(CGROUP_ROOT, "cgroup.subtree_control",
		    "+memory +pids +cpu");
	for (i = 0; i < nhier(); i++) {
		hier_path(p, sizeof(p), i, scratch);
		(void)mkdir(p, 0755);
		if (version == CGROUP_V2)
			(void)write_str(p, "cgroup.subtree_control",
			    "+memory +pids +cpu");
	}
}

static void
suite_teardown(void)
{
	char	 p[PATH_MAX];
	int	 i;

	if (version == -1)
		return;
	for (i = 0; i < nhier(); i++) {
		hier_path(p, sizeof(p), i, scratch);
		rm_tree(p, 0);
	}
}

/* A conf whose base is scratch/<name> (made, readied). */
static void
conf_for(struct cgroup_conf *c, const char *name)
{
	char	 rel[PATH_MAX], err[256];

	ck_assert_msg(version != -1, "no cgroup v1 or v2 hierarchy");
	memset(c, 0, sizeof(*c));
	c->version = CGROUP_AUTO;
	snprintf(rel, sizeof(rel), "%s/%s", scratch, name);
	mk_cgroup(rel, 0);
	snprintf(c->parent, sizeof(c->parent), "%s", rel);
	ck_assert_msg(cgroup_init(c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq((int)c->resolved, version);
}

static void
limits(struct sandbox_limits *l, uint64_t mem, unsigned pids)
{
	memset(l, 0, sizeof(*l));
	l->memory = mem;
	l->pids = pids;
	l->cpu_millis = 500;
	l->swap = 0;
}

/* The sandbox's cgroup directory in hierarchy i. */
static void
box_path(char *out, size_t len, const struct cgroup_conf *c, int i,
    const char *id)
{
	ck_assert_int_ne(xsnprintf(out, len, "%s/" CGROUP_PREFIX "%s",
	    c->base[i], id), -1);
}

/* memory, pids, cpu quota (µs per 100 ms) as the kernel reports them. */
static void
read_limits(const struct cgroup_conf *c, const char *id, uint64_t out[3])
{
	char	 d[PATH_MAX], *s;
	int	 i;
	static const char *const v2f[3] = { "memory.max", "pids.max", "cpu.max" };
	static const char *const v1f[3] = { "memory.limit_in_bytes", "pids.max",
	    "cpu.cfs_quota_us" };

	for (i = 0; i < 3; i++) {
		box_path(d, sizeof(d), c, version == CGROUP_V2 ? 0 : i, id);
		s = read_str(d, version == CGROUP_V2 ? v2f[i] : v1f[i]);
		ck_assert_msg(s != NULL, "%s: %s", d, strerror(errno));
		out[i] = strtoull(s, NULL, 10);
		free(s);
	}
}

static int
in_procs(const char *dir, pid_t pid)
{
	char	*s, *p;
	int	 yes = 0;

	if ((s = read_str(dir, "cgroup.procs")) == NULL)
		return 0;
	for (p = s; *p != '\0'; ) {
		if (strtol(p, &p, 10) == (long)pid)
			yes = 1;
		while (*p == '\n')
			p++;
		if (*p == '\0' || (*p < '0' || *p > '9'))
			break;
	}
	free(s);
	return yes;
}

static int
nprocs(const char *dir)
{
	char	*s, *p;
	int	 n = 0;

	if ((s = read_str(dir, "cgroup.procs")) == NULL)
		return -1;
	for (p = s; *p != '\0'; p++)
		n += *p == '\n';
	free(s);
	return n;
}

static pid_t
sleeper(void)
{
	pid_t	 pid = fork();

	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

/* Names of the cgroups under dir, "a b c " (sorted by the kernel). */
static void
children(const char *dir, char *out, size_t len)
{
	DIR		*d;
	struct dirent	*de;
	size_t		 n = 0;

	out[0] = '\0';
	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((de = readdir(d)) != NULL)
		if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
		    n + strlen(de->d_name) + 2 < len)
			n += (size_t)snprintf(out + n, len - n, "%s ",
			    de->d_name);
	closedir(d);
}

START_TEST(test_create_sets_limits_that_read_back)
{
	struct cgroup_conf	 c;
	struct sandbox_limits	 l;
	struct cgroup		*cg;
	char			 err[256], d[PATH_MAX];
	uint64_t		 v[3];
	int			 i;

	conf_for(&c, "limits");
	limits(&l, 64 << 20, 17);
	cg = cgroup_create(&c, "00000000000000a1", &l, err, sizeof(err));
	ck_assert_msg(cg != NULL, "%s", err);
	read_limits(&c, "00000000000000a1", v);
	ck_assert_uint_eq(v[0], 64 << 20);
	ck_assert_uint_eq(v[1], 17);
	ck_assert_uint_eq(v[2], 50000);		/* 500 millis of 100 ms */
	ck_assert_str_eq(cgroup_version_name(cg), version == CGROUP_V2 ? "v2" :
	    "v1");
	cgroup_destroy(cg);
	for (i = 0; i < nhier(); i++) {
		box_path(d, sizeof(d), &c, i, "00000000000000a1");
		ck_assert_msg(access(d, F_OK) == -1, "%s survived destroy", d);
	}
}
END_TEST

START_TEST(test_add_places_the_process_in_every_hierarchy)
{
	struct cgroup_conf	 c;
	struct sandbox_limits	 l;
	struct cgroup		*cg;
	char			 err[256], d[PATH_MAX];
	pid_t			 pid;
	int			 i;

	conf_for(&c, "add");
	limits(&l, 64 << 20, 16);
	ck_assert_ptr_nonnull(cg = cgroup_create(&c, "00000000000000a2", &l,
	    err, sizeof(err)));
	pid = sleeper();
	ck_assert_msg(cgroup_add(cg, pid, err, sizeof(err)) == 0, "%s", err);
	for (i = 0; i < nhier(); i++) {
		box_path(d, sizeof(d), &c, i, "00000000000000a2");
		ck_assert_msg(in_procs(d, pid), "%d not in %s", (int)pid, d);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cgroup_destroy(cg);
}
END_TEST

/* How many of our descriptors point at a cgroup's tasks file. */
static int
tasks_fds(void)
{
	char		 p[PATH_MAX], l[PATH_MAX];
	DIR		*d;
	struct dirent	*de;
	ssize_t		 n;
	int		 found = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		snprintf(p, sizeof(p), "/proc/self/fd/%s", de->d_name);
		if ((n = readlink(p, l, sizeof(l) - 1)) > 0) {
			l[n] = '\0';
			/* A tasks file: the way into a cgroup (the OOM
			 * counter a cgroup keeps open is no way in). */
			found += strncmp(l, CGROUP_ROOT "/", strlen(CGROUP_ROOT)
			    + 1) == 0 && n > 6 && strcmp(l + n - 6, "/tasks")
			    == 0;
		}
	}
	closedir(d);
	return found;
}

/* v1: a child joins every hierarchy itself and keeps no descriptor. */
START_TEST(test_join_self_places_the_child_and_leaves_no_descriptor)
{
	struct cgroup_conf	 c;
	struct sandbox_limits	 l;
	struct cgroup		*cg;
	char			 err[256], d[PATH_MAX];
	int			 i, r, st, go[2];
	pid_t			 pid;

	conf_for(&c, "join");
	limits(&l, 64 << 20, 16);
	ck_assert_ptr_nonnull(cg = cgroup_create(&c, "00000000000000aa", &l,
	    err, sizeof(err)));
	r = cgroup_join_prepare(cg, err, sizeof(err));
	ck_assert_msg(r == (version == CGROUP_V1), "prepare: %d %s", r, err);
	if (r == 0) {		/* v2: CLONE_INTO_CGROUP, nothing to join */
		cgroup_destroy(cg);
		return;
	}
	ck_assert_int_eq(tasks_fds(), nhier());
	ck_assert_int_eq(pipe(go), 0);
	if ((pid = fork()) == 0) {
		close(go[1]);
		/* 2: joined but a descriptor left; 3: not joined. */
		st = cgroup_join_self(cg, err, sizeof(err)) == -1 ? 3 :
		    tasks_fds() != 0 ? 2 : 0;
		(void)read(go[0], &r, 1);	/* until the parent looked */
		_exit(st);
	}
	close(go[0]);
	cgroup_join_done(cg);
	ck_assert_int_eq(tasks_fds(), 0);
	for (i = 0; i < nhier(); i++) {
		box_path(d, sizeof(d), &c, i, "00000000000000aa");
		for (r = 0; r < 200 && !in_procs(d, pid); r++)
			usleep(5000);
		ck_assert_msg(in_procs(d, pid), "%d not in %s", (int)pid, d);
	}
	close(go[1]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %#x", st);
	cgroup_destroy(cg);
}
END_TEST

START_TEST(test_oom_kill_is_counted)
{
	struct cgroup_conf	 c;
	struct sandbox_limits	 l;
	struct cgroup		*cg;
	char			 err[256], go;
	int			 p[2], st;
	pid_t			 pid;

	conf_for(&c, "oom");
	limits(&l, 16 << 20, 16);
	ck_assert_ptr_nonnull(cg = cgroup_create(&c, "00000000000000a3", &l,
	    err, sizeof(err)));
	ck_assert_uint_eq(cgroup_oom_kills(cg), 0);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		size_t	 len = 256 << 20, o;
		char	*m;

		close(p[1]);
		if (read(p[0], &go, 1) != 1)
			_exit(2);
		/* Touch far more than the limit: only the OOM killer stops it. */
		if ((m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		    MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
			_exit(3);
		for (o = 0; o < len; o += 4096)
			m[o] = 1;
		_exit(0);
	}
	close(p[0]);
	ck_assert_msg(cgroup_add(cg, pid, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(write(p[1], "g", 1), 1);
	close(p[1]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %#x",
	    st);
	ck_assert_uint_ge(cgroup_oom_kills(cg), 1);
	ck_assert_int_eq(cgroup_oom_killed(cg), 1);
	ck_assert_uint_ge(cgroup_memory_peak(cg), 8 << 20);
	cgroup_destroy(cg);
}
END_TEST

/*
 * The CPU time quotas bill counts a child nobody waited for.  The kernel
 * reaps the children of a parent that ignores SIGCHLD without adding
 * their time to it, so a sum over /proc misses them: a way under a CPU
 * quota.  cpuacct (v1, apart from cpu or with it) and cpu.stat (v2)
 * count the cgroup itself.
 */
START_TEST(test_cpu_counts_children_nobody_waited_for)
{
	struct cgroup_conf	 c;
	struct sandbox_limits	 l;
	struct cgroup		*cg;
	char			 err[256], go;
	int			 p[2], q[2], st;
	uint64_t		 usec;
	pid_t			 pid;

	conf_for(&c, "cpu");
	limits(&l, 64 << 20, 16);
	l.cpu_millis = 1000;
	ck_assert_ptr_nonnull(cg = cgroup_create(&c, "00000000000000c0", &l,
	    err, sizeof(err)));
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(pipe(q), 0);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		struct timespec	 t;
		pid_t		 w;

		close(p[1]);
		close(q[0]);
		if (read(p[0], &go, 1) != 1)
			_exit(2);
		signal(SIGCHLD, SIG_IGN);	/* nobody will wait */
		if ((w = fork()) == 0) {
			do	/* 0.3 s of CPU */
				clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
			while (t.tv_sec == 0 && t.tv_nsec < 300000000);
			_exit(0);
		}
		while (w > 0 && kill(w, 0) == 0)
			usleep(10000);
		(void)write(q[1], "d", 1);
		pause();			/* alive, so /proc lists us */
		_exit(0);
	}
	close(p[0]);
	close(q[1]);
	ck_assert_msg(cgroup_add(cg, pid, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(write(p[1], "g", 1), 1);
	ck_assert_int_eq(read(q[0], &go, 1), 1);
	usec = cgroup_cpu_usec(cg);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	close(p[1]);
	close(q[0]);
	ck_assert_msg(usec >= 250000, "the cgroup's CPU time: %" PRIu64 " us "
	    "after a child burnt 300 ms unwaited-for", usec);
	cgroup_destroy(cg);
}
END_TEST

START_TEST(test_kill_empties_it_and_destroy_removes_it)
{
	struct cgroup_conf	 c;
	struct sandbox_limits	 l;
	struct cgroup		*cg;
	char			 err[256], d[PATH_MAX];
	int			 i, k;

	/* Reaped by the kernel: a zombie would stay listed on v1. */
	signal(SIGCHLD, SIG_IGN);
	conf_for(&c, "kill");
	limits(&l, 64 << 20, 16);
	ck_assert_ptr_nonnull(cg = cgroup_create(&c, "00000000000000a4", &l,
	    err, sizeof(err)));
	for (k = 0; k < 3; k++)
		ck_assert_int_eq(cgroup_add(cg, sleeper(), err, sizeof(err)), 0);
	box_path(d, sizeof(d), &c, version == CGROUP_V2 ? 0 : 1,
	    "00000000000000a4");
	ck_assert_int_eq(nprocs(d), 3);
	cgroup_kill(cg);
	for (k = 0; k < 100 && nprocs(d) != 0; k++)
		usleep(10000);
	ck_assert_int_eq(nprocs(d), 0);
	cgroup_destroy(cg);
	for (i = 0; i < nhier(); i++) {
		box_path(d, sizeof(d), &c, i, "00000000000000a4");
		ck_assert_msg(access(d, F_OK) == -1, "%s survived destroy", d);
	}
}
END_TEST

/*
 * As mcp-exec starts in a service cgroup: it sits in the base itself.  Many
 * sandboxes later, and a second mcp-exec started in the first one's cgroup,
 * every sandbox is still a child of the base, and (v2) we sit in the leaf.
 */
START_TEST(test_cycles_stay_one_level_under_the_base)
{
	struct cgroup_conf	 c, again;
	struct sandbox_limits	 l;
	struct cgroup		*cg;
	char			 err[256], rel[PATH_MAX], base[PATH_MAX],
				 d[PATH_MAX], id[SANDBOX_ID_HEX + 1], kids[4096];
	int			 n, i;

	snprintf(rel, sizeof(rel), "%s/service", scratch);
	mk_cgroup(rel, 0);
	join(rel, getpid());
	memset(&c, 0, sizeof(c));
	ck_assert_msg(cgroup_init(&c, err, sizeof(err)) == 0, "%s", err);
	limits(&l, 64 << 20, 16);
	for (n = 0; n < CK_CYCLES; n++) {
		/* The second half: a fresh mcp-exec wherever the first sits. */
		if (n == CK_CYCLES / 2) {
			memset(&again, 0, sizeof(again));
			ck_assert_msg(cgroup_init(&again, err, sizeof(err)) == 0,
			    "%s", err);
			for (i = 0; i < nhier(); i++)
				ck_assert_str_eq(again.base[i], c.base[i]);
			c = again;
		}
		snprintf(id, sizeof(id), "%016x", 0xc0000 + n);
		cg = cgroup_create(&c, id, &l, err, sizeof(err));
		ck_assert_msg(cg != NULL, "cycle %d: %s", n, err);
		for (i = 0; i < nhier(); i++) {
			hier_path(base, sizeof(base), i, rel);
			box_path(d, sizeof(d), &c, i, id);
			ck_assert_str_eq(c.base[i], base);
			ck_assert_msg(access(d, F_OK) == 0, "cycle %d: no %s", n,
			    d);
		}
		cgroup_destroy(cg);
	}
	for (i = 0; i < nhier(); i++) {
		hier_path(base, sizeof(base), i, rel);
		children(base, kids, sizeof(kids));
		ck_assert_str_eq(kids, version == CGROUP_V2 ? CGROUP_LEAF " " :
		    "");
	}
	if (version == CGROUP_V2) {
		tu_path(d, sizeof(d), base, CGROUP_LEAF);
		ck_assert_int_eq(nprocs(base), 0);
		ck_assert(in_procs(d, getpid()));
		children(d, kids, sizeof(kids));
		ck_assert_str_eq(kids, "");
	}
}
END_TEST

static void
backdate(const char *dir)
{
	struct timespec	 ts[2] = { { time(NULL) - 600, 0 },
			    { time(NULL) - 600, 0 } };

	ck_assert_msg(utimensat(AT_FDCWD, dir, ts, 0) == 0, "%s: %s", dir,
	    strerror(errno));
}

START_TEST(test_sweep_removes_leftovers_and_leaves_live_ones)
{
	struct cgroup_conf	 c;
	char			 rel[PATH_MAX], d[PATH_MAX];
	const char		*orphan = CGROUP_PREFIX "00000000000000b1",
				*busy = CGROUP_PREFIX "00000000000000b2",
				*young = CGROUP_PREFIX "00000000000000b3",
				*other = "not-a-sandbox";
	pid_t			 pid;
	int			 i, n;

	conf_for(&c, "sweep");
	for (i = 0; i < nhier(); i++) {
		const char *const mk[] = { orphan, busy, young, other,
		    CGROUP_LEAF, CGROUP_LEAF "/" CGROUP_LEAF,
		    CGROUP_LEAF "/" CGROUP_LEAF "/" CGROUP_PREFIX "00000000000000b4" };
		size_t	 k;

		for (k = 0; k < sizeof(mk) / sizeof(mk[0]); k++) {
			tu_path(d, sizeof(d), c.base[i], mk[k]);
			ck_assert_msg(mkdir(d, 0755) == 0, "%s: %s", d,
			    strerror(errno));
			if (strcmp(mk[k], young) != 0)
				backdate(d);
		}
	}
	snprintf(rel, sizeof(rel), "%s/sweep/%s", scratch, busy);
	join(rel, pid = sleeper());
	n = cgroup_sweep(&c, SANDBOX_SWEEP_AGE_S);
	/* orphan and the one nested by an older build, in each hierarchy. */
	ck_assert_int_eq(n, 2 * nhier());
	for (i = 0; i < nhier(); i++) {
		snprintf(d, sizeof(d), "%s/%s", c.base[i], orphan);
		ck_assert_msg(access(d, F_OK) == -1, "%s not swept", d);
		snprintf(d, sizeof(d), "%s/%s/%s", c.base[i], CGROUP_LEAF,
		    CGROUP_LEAF);
		ck_assert_msg(access(d, F_OK) == -1, "%s not swept", d);
		snprintf(d, sizeof(d), "%s/%s", c.base[i], CGROUP_LEAF);
		ck_assert_msg(access(d, F_OK) == 0, "the leaf %s swept", d);
		snprintf(d, sizeof(d), "%s/%s", c.base[i], busy);
		ck_assert_msg(access(d, F_OK) == 0, "busy %s swept", d);
		snprintf(d, sizeof(d), "%s/%s", c.base[i], young);
		ck_assert_msg(access(d, F_OK) == 0, "young %s swept", d);
		snprintf(d, sizeof(d), "%s/%s", c.base[i], other);
		ck_assert_msg(access(d, F_OK) == 0, "foreign %s swept", d);
	}
	ck_assert_int_eq(kill(pid, 0), 0);

	/* A sandbox our own state names is nobody's: killed and removed. */
	cgroup_remove_stale(&c, "00000000000000b2");
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	for (i = 0; i < nhier(); i++) {
		snprintf(d, sizeof(d), "%s/%s", c.base[i], busy);
		ck_assert_msg(access(d, F_OK) == -1, "%s not removed", d);
	}
}
END_TEST

START_TEST(test_uninitialised_conf_is_refused)
{
	struct cgroup_conf	 c;
	struct sandbox_limits	 l;
	char			 err[256] = "";

	memset(&c, 0, sizeof(c));
	limits(&l, 64 << 20, 16);
	ck_assert_ptr_null(cgroup_create(&c, "00000000000000a9", &l, err,
	    sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "not initialised"));
	ck_assert_int_eq(cgroup_sweep(&c, 0), 0);
}
END_TEST

static Suite *
cgroup_suite(void)
{
	Suite	*s = suite_create("cgroup");
	TCase	*tc = tcase_create("backend");

	tcase_add_unchecked_fixture(tc, suite_setup, suite_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_create_sets_limits_that_read_back);
	tcase_add_test(tc, test_add_places_the_process_in_every_hierarchy);
	tcase_add_test(tc, test_join_self_places_the_child_and_leaves_no_descriptor);
	tcase_add_test(tc, test_oom_kill_is_counted);
	tcase_add_test(tc, test_cpu_counts_children_nobody_waited_for);
	tcase_add_test(tc, test_kill_empties_it_and_destroy_removes_it);
	tcase_add_test(tc, test_cycles_stay_one_level_under_the_base);
	tcase_add_test(tc, test_sweep_removes_leftovers_and_leaves_live_ones);
	tcase_add_test(tc, test_uninitialised_conf_is_refused);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(cgroup_suite)
