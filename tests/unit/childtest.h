/*
 * Tests of walls a process cannot take down again (seccomp, Landlock):
 * each body runs in a forked child behind the wall, reports a failure as
 * text on a pipe and leaves with _exit (exit would run LeakSanitizer,
 * which needs ptrace, which the walls refuse).
 */
#ifndef STOCKADE_CHILDTEST_H
#define STOCKADE_CHILDTEST_H

#include <sys/prctl.h>
#include <sys/wait.h>

#include "testutil.h"

#define CHILD_MSG_MAX	512

static int	 child_fd = -1;

static void __attribute__((noreturn, unused))
child_fail(int line, const char *what)
{
	char	 msg[CHILD_MSG_MAX];
	int	 saved = errno, n;

	n = snprintf(msg, sizeof(msg), "line %d: %s (errno %d, %s)", line,
	    what, saved, strerror(saved));
	if (n > 0 && child_fd != -1)
		(void)write_all(child_fd, msg, (size_t)n < sizeof(msg) ?
		    (size_t)n : sizeof(msg) - 1);
	_exit(1);
}

#define CHILD_ASSERT(c) do {						\
	if (!(c))							\
		child_fail(__LINE__, #c);				\
} while (0)

/* The call must fail with exactly errno e. */
#define CHILD_ERRNO(call, e) do {					\
	errno = 0;							\
	if ((long)(call) != -1 || errno != (e))				\
		child_fail(__LINE__, #call " should fail with " #e);	\
} while (0)

/*
 * Forks; the child sets no_new_privs, raises the wall, runs body.  Returns
 * the wait status, with the child's message (empty if none) in msg.
 */
static int __attribute__((unused))
child_run(int (*wall)(char *, size_t), void (*body)(void), char *msg,
    size_t msglen)
{
	char	 err[256];
	int	 p[2], st;
	ssize_t	 n;
	pid_t	 pid;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		close(p[0]);
		child_fd = p[1];
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
			child_fail(__LINE__, "prctl(PR_SET_NO_NEW_PRIVS)");
		if (wall(err, sizeof(err)) == -1)
			child_fail(__LINE__, err);
		body();
		_exit(0);
	}
	close(p[1]);
	n = read_all(p[0], msg, msglen - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return st;
}

/* child_run, expecting the body to finish cleanly. */
static void __attribute__((unused))
child_run_ok(int (*wall)(char *, size_t), void (*body)(void))
{
	char	 msg[CHILD_MSG_MAX];
	int	 st;

	st = child_run(wall, body, msg, sizeof(msg));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "walled child: %s (status %#x)", msg, (unsigned)st);
}

#endif
