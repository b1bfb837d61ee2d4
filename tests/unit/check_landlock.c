/*
 * mcp-exec/sandbox/landlock.c: after sandbox_landlock_apply the process
 * writes beneath its writable directory and to its devices, and nowhere
 * else: not next door, not in /tmp, not by rename, hard link or symlink.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <signal.h>
#include <spawn.h>

#include "childtest.h"
#include "sandbox/landlock.h"


extern char **environ;

/* The scratch layout: root/w is writable, root/other only readable. */
static char	 root[PATH_MAX], wdir[PATH_MAX], odir[PATH_MAX];

/* Landlock says EXDEV when only REFER is missing, EACCES otherwise. */
#define CHILD_REFUSED(call) do {					\
	errno = 0;							\
	if ((long)(call) != -1 || (errno != EACCES && errno != EXDEV))	\
		child_fail(__LINE__, #call " should be refused");	\
} while (0)

static const char *
in(const char *dir, const char *name)
{
	static char	 bufs[4][PATH_MAX];
	static int	 next;
	char		*b = bufs[next++ % 4];

	if (xsnprintf(b, PATH_MAX, "%s/%s", dir, name) == -1)
		child_fail(__LINE__, "path too long");
	return b;
}

static void
setup(void)
{
	tu_tmpdir(root, sizeof(root));
	tu_path(wdir, sizeof(wdir), root, "w");
	tu_path(odir, sizeof(odir), root, "other");
	ck_assert_int_eq(mkdir(wdir, 0700), 0);
	ck_assert_int_eq(mkdir(odir, 0700), 0);
	tu_write(in(odir, "f"), "data", 4);
	tu_write(in(wdir, "existing"), "old", 3);
}

/* Forks; the child sets no_new_privs, applies the walls (w writable,
 * /dev/null writable) and runs body. */
static int
landlock_wall(char *err, size_t errlen)
{
	const char	*writable[] = { wdir };
	const char	*devices[] = { "/dev/null" };

	return sandbox_landlock_apply(writable, nitems(writable), devices,
	    nitems(devices), err, errlen);
}

static void
run_restricted(void (*body)(void))
{
	child_run_ok(landlock_wall, body);
}

static void
body_inside_writable(void)
{
	int	 fd;

	CHILD_ASSERT((fd = open(in(wdir, "new"), O_WRONLY | O_CREAT | O_EXCL,
	    0600)) != -1);
	CHILD_ASSERT(write(fd, "hello", 5) == 5);
	CHILD_ASSERT(ftruncate(fd, 2) == 0);
	close(fd);
	CHILD_ASSERT(truncate(in(wdir, "new"), 1) == 0);
	CHILD_ASSERT((fd = open(in(wdir, "existing"), O_WRONLY | O_TRUNC))
	    != -1);
	close(fd);
	CHILD_ASSERT(mkdir(in(wdir, "d"), 0700) == 0);
	CHILD_ASSERT(rename(in(wdir, "new"), in(wdir, "d/moved")) == 0);
	CHILD_ASSERT(link(in(wdir, "d/moved"), in(wdir, "hard")) == 0);
	CHILD_ASSERT(symlink("d/moved", in(wdir, "sym")) == 0);
	CHILD_ASSERT(mkfifo(in(wdir, "fifo"), 0600) == 0);
	CHILD_ASSERT(unlink(in(wdir, "d/moved")) == 0);
	CHILD_ASSERT(unlink(in(wdir, "hard")) == 0);
	CHILD_ASSERT(unlink(in(wdir, "sym")) == 0);
	CHILD_ASSERT(unlink(in(wdir, "fifo")) == 0);
	CHILD_ASSERT(rmdir(in(wdir, "d")) == 0);
	/* O_TRUNC: what a shell's "> /dev/null" asks for. */
	CHILD_ASSERT((fd = open("/dev/null", O_WRONLY | O_TRUNC)) != -1);
	CHILD_ASSERT(write(fd, "x", 1) == 1);
	close(fd);
}

START_TEST(test_writes_beneath_writable_and_to_dev_null)
{
	setup();
	run_restricted(body_inside_writable);
}
END_TEST

static void
body_outside_writable(void)
{
	char	 path[PATH_MAX], buf[8];
	int	 fd;

	CHILD_ERRNO(open(in(odir, "new"), O_WRONLY | O_CREAT, 0600), EACCES);
	CHILD_ERRNO(open(in(odir, "f"), O_WRONLY), EACCES);
	CHILD_ERRNO(open(in(odir, "f"), O_RDWR), EACCES);
	CHILD_ERRNO(unlink(in(odir, "f")), EACCES);
	CHILD_ERRNO(mkdir(in(odir, "d"), 0700), EACCES);
	CHILD_ERRNO(symlink("f", in(odir, "sym")), EACCES);
	CHILD_ERRNO(mkfifo(in(odir, "fifo"), 0600), EACCES);
	CHILD_ERRNO(rmdir(wdir), EACCES);	/* its parent is not writable */
	if (sandbox_landlock_abi() >= 3)
		CHILD_ERRNO(truncate(in(odir, "f"), 0), EACCES);
	CHILD_ASSERT(xsnprintf(path, sizeof(path), "/tmp/stockade-landlock-%d",
	    (int)getpid()) != -1);
	errno = 0;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd != -1)
		unlink(path);
	CHILD_ASSERT(fd == -1 && errno == EACCES);
	CHILD_ERRNO(open("/dev/zero", O_WRONLY), EACCES);
	/* Reading is the mount table's business, not Landlock's. */
	CHILD_ASSERT((fd = open(in(odir, "f"), O_RDONLY)) != -1);
	CHILD_ASSERT(read(fd, buf, sizeof(buf)) == 4 &&
	    memcmp(buf, "data", 4) == 0);
	close(fd);
}

START_TEST(test_writes_elsewhere_refused_reads_allowed)
{
	setup();
	run_restricted(body_outside_writable);
}
END_TEST

static void
body_refer(void)
{
	int	 fd;

	CHILD_ASSERT((fd = open(in(wdir, "x"), O_WRONLY | O_CREAT, 0600))
	    != -1);
	close(fd);
	CHILD_REFUSED(rename(in(wdir, "x"), in(odir, "x")));
	CHILD_REFUSED(link(in(wdir, "x"), in(odir, "x")));
	CHILD_ERRNO(access(in(odir, "x"), F_OK), ENOENT);
	/* Pulling a file in would let it be written through the new name. */
	CHILD_REFUSED(link(in(odir, "f"), in(wdir, "g")));
	CHILD_REFUSED(rename(in(odir, "f"), in(wdir, "g")));
	CHILD_ERRNO(access(in(wdir, "g"), F_OK), ENOENT);
	CHILD_REFUSED(renameat2(AT_FDCWD, in(wdir, "x"), AT_FDCWD,
	    in(odir, "f"), RENAME_EXCHANGE));
}

START_TEST(test_rename_and_link_across_the_wall_refused)
{
	setup();
	if (sandbox_landlock_abi() < 2)
		return;	/* ABI 1 refuses every reparenting, tested above */
	run_restricted(body_refer);
}
END_TEST

static void
body_symlink(void)
{
	CHILD_ASSERT(symlink(in(odir, "f"), in(wdir, "to-f")) == 0);
	CHILD_ASSERT(symlink(odir, in(wdir, "to-other")) == 0);
	CHILD_ERRNO(open(in(wdir, "to-f"), O_WRONLY), EACCES);
	CHILD_ERRNO(open(in(wdir, "to-f"), O_WRONLY | O_TRUNC), EACCES);
	CHILD_ERRNO(open(in(wdir, "to-other/new"), O_WRONLY | O_CREAT, 0600),
	    EACCES);
	CHILD_ERRNO(unlink(in(wdir, "to-other/f")), EACCES);
	/* The link itself is ours to remove. */
	CHILD_ASSERT(unlink(in(wdir, "to-f")) == 0);
}

START_TEST(test_symlink_inside_cannot_write_outside)
{
	setup();
	run_restricted(body_symlink);
}
END_TEST

static int
sh(const char *cmd)
{
	char	*argv[] = { "sh", "-c", (char *)cmd, NULL };
	pid_t	 pid;
	int	 st;

	if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) != 0 ||
	    waitpid(pid, &st, 0) != pid)
		child_fail(__LINE__, "posix_spawn /bin/sh");
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
body_children(void)
{
	char	 cmd[2 * PATH_MAX];

	CHILD_ASSERT(xsnprintf(cmd, sizeof(cmd), "echo x > '%s/f2'", wdir)
	    != -1);
	CHILD_ASSERT(sh(cmd) == 0);
	CHILD_ASSERT(xsnprintf(cmd, sizeof(cmd), "echo x 2>/dev/null > '%s/f2'",
	    odir) != -1);
	CHILD_ASSERT(sh(cmd) != 0);
	CHILD_ERRNO(access(in(odir, "f2"), F_OK), ENOENT);
}

START_TEST(test_children_inherit_the_walls)
{
	setup();
	run_restricted(body_children);
}
END_TEST

START_TEST(test_abi_reported)
{
	ck_assert_int_ge(sandbox_landlock_abi(), 1);
}
END_TEST

/* Bad arguments fail before anything is restricted. */
static void
body_bad_paths(void)
{
	const char	*rel[] = { "relative/dir" };
	const char	*missing[] = { "/nonexistent-stockade" };
	const char	*dir_as_dev[] = { "/dev" };
	const char	*file_as_dir[] = { "/dev/null" };
	char		 err[256];
	int		 fd;

	CHILD_ASSERT(sandbox_landlock_apply(rel, 1, NULL, 0, err,
	    sizeof(err)) == -1 && errno == EINVAL);
	CHILD_ASSERT(strstr(err, "relative/dir") != NULL);
	CHILD_ASSERT(sandbox_landlock_apply(missing, 1, NULL, 0, err,
	    sizeof(err)) == -1 && errno == ENOENT);
	CHILD_ASSERT(strstr(err, "/nonexistent-stockade") != NULL);
	CHILD_ASSERT(sandbox_landlock_apply(NULL, 0, dir_as_dev, 1, err,
	    sizeof(err)) == -1);
	CHILD_ASSERT(sandbox_landlock_apply(file_as_dir, 1, NULL, 0, err,
	    sizeof(err)) == -1 && errno == ENOTDIR);
	/* None of them left the process restricted. */
	CHILD_ASSERT((fd = open(in(odir, "free"), O_WRONLY | O_CREAT, 0600))
	    != -1);
	close(fd);
}

START_TEST(test_bad_paths_refused_before_restricting)
{
	char	 msg[CHILD_MSG_MAX];
	int	 p[2], st;
	ssize_t	 n;
	pid_t	 pid;

	setup();
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		close(p[0]);
		child_fd = p[1];
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
			child_fail(__LINE__, "prctl(PR_SET_NO_NEW_PRIVS)");
		body_bad_paths();
		_exit(0);
	}
	close(p[1]);
	n = read_all(p[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %s", msg);
}
END_TEST

START_TEST(test_refuses_without_no_new_privs)
{
	const char	*writable[] = { "/tmp" };
	char		 err[256] = "";

	ck_assert_int_eq(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
	ck_assert_int_eq(sandbox_landlock_apply(writable, 1, NULL, 0, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no_new_privs"));
}
END_TEST

static Suite *
landlock_suite(void)
{
	Suite	*s = suite_create("landlock");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_abi_reported);
	tcase_add_test(tc, test_writes_beneath_writable_and_to_dev_null);
	tcase_add_test(tc, test_writes_elsewhere_refused_reads_allowed);
	tcase_add_test(tc, test_rename_and_link_across_the_wall_refused);
	tcase_add_test(tc, test_symlink_inside_cannot_write_outside);
	tcase_add_test(tc, test_children_inherit_the_walls);
	tcase_add_test(tc, test_bad_paths_refused_before_restricting);
	tcase_add_test(tc, test_refuses_without_no_new_privs);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(landlock_suite)
