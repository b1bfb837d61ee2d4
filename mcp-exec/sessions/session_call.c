/*
 * A session's calls: the exec frame out to the driver, its output pipes
 * read into bounded captures, the call's clock (interrupt, then kill), and
 * the driver's protocol on the control socket.  The driver runs the
 * caller's code in its own process, so everything it says there, and
 * everything on the pipes, is untrusted: messages are size-capped and
 * checked, output is bounded, and the wall clock does not depend on the
 * driver's cooperation.  Split from session.c for length.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "log.h"
#include "sandbox/capture.h"
#include "session.h"
#include "session_int.h"
#include "util.h"

#define READ_CHUNK		65536
#define DRAIN_NOW_MAX		16	/* reads per pipe when "done" comes */
/* The largest exec frame: the code, which JSON may grow sixfold (\u0001),
 * and the envelope.  The driver accepts up to 16 MiB. */
#define DRIVER_EXEC_MAX		(6 * CODE_BYTES_MAX + 256)

enum call_phase {
	CALL_STARTING,		/* the driver's "ready" is still to come: the
				   exec frame waits, the code has not left */
	CALL_SENDING,		/* the exec frame is still going out */
	CALL_RUNNING,
	CALL_INTERRUPTING,	/* SIGINT sent, grace running */
	CALL_DRAINING,		/* the driver is done; reading what is left */
};

struct call {
	struct session		*s;
	struct call_hooks	 hooks;
	enum call_phase		 phase;
	uint64_t		 exec_id;
	int			 fd[2];		/* stdout, stderr read ends */
	struct event		*ev[2];
	struct capture		 cap[2];
	struct event		*timer;
	unsigned		 timeout_ms;
	uint64_t		 t0;
	uint64_t		 cpu0;		/* the cgroup's, at the start */
	int			 done;		/* the driver reported */
	int			 exit_code;
	int			 timed_out, cancelled, killed;
	int			 interrupt_when_sent;	/* cancelled while sending */
	int			 driver_died;	/* its control socket closed */
	const char		*kill_reason;	/* why the session ends */
	const char		*abort_reason;	/* call_abort's: why the
						   session ends */
	json_t			*results;	/* checked, from "done" */
	int			 results_truncated;
};

static void	call_finish(struct call *);
static void	call_send(struct call *);

static void
call_free(struct call *c)
{
	int	 i;

	for (i = 0; i < 2; i++) {
		if (c->ev[i] != NULL)
			event_free(c->ev[i]);
		if (c->fd[i] != -1)
			close(c->fd[i]);
		capture_free(&c->cap[i]);
	}
	if (c->timer != NULL)
		event_free(c->timer);
	json_decref(c->results);
	free(c);
}

/* The call is over: answer, free it, and end the session if it was killed. */
static void
call_finish(struct call *c)
{
	struct session		*s = c->s;
	struct call_result	 r;
	json_t			*changed = NULL, *skipped = NULL;
	size_t			 olen, elen;
	int			 killed, oom;
	uint64_t		 cpu, kills = 0;
	const char		*why = NULL, *end;
	struct sandbox_exit	 ex;

	/* Half an exec frame would be read as the start of the next: a
	 * session that cannot take its frame whole cannot be used again. */
	if (frame_out_pending(&s->ctl_out) && !c->killed) {
		c->killed = 1;
		c->kill_reason = "the session's Python driver did not take "
		    "the code";
		sandbox_kill(&s->sb);
	}
	event_del(s->ctl_wev);
	frame_out_free(&s->ctl_out);
	sandbox_reap_interrupt(&s->sb);
	killed = c->killed;
	/* The kernel counts its kills before the process is gone, so a
	 * driver that died of it shows here (a child's death, too). */
	if (s->sb.cg != NULL)
		kills = cgroup_oom_kills(s->sb.cg);
	oom = kills > s->oom_counted;
	memset(&ex, 0, sizeof(ex));
	ex.exit_code = -1;
	if (killed && c->driver_died && !oom && sandbox_await_exit(&s->sb,
	    CALL_CRASH_WAIT_MS) == 1)
		(void)sandbox_wait(&s->sb, &ex);
	/* Each way of ending has its own word: the audit's, the client's. */
	if (oom) {
		end = "oom";
		why = SESSION_OOM_REASON;
	} else if (c->timed_out) {
		end = "timeout";
		why = "killed after the call could not be stopped";
	} else if (c->cancelled) {
		end = "cancelled";
		why = "killed after the call could not be stopped";
	} else if (killed && c->kill_reason != NULL) {
		end = "driver_failed";
		why = c->kill_reason;
	} else if (killed && c->driver_died) {
		end = "crash";
		why = "the session's Python process ended";
	} else if (killed) {
		end = "driver_failed";
		/* Ended with its session (mcp-exec stops, a drain's grace
		 * ran out): the client hears why. */
		why = c->abort_reason != NULL ? c->abort_reason :
		    "killed after the call could not be stopped";
	} else
		end = "exited";
	if (c->kill_reason != NULL && !oom)
		why = c->kill_reason;

	memset(&r, 0, sizeof(r));
	r.session_id = s->id;
	r.stdout_text = capture_text(&c->cap[0], &olen);
	r.stderr_text = capture_text(&c->cap[1], &elen);
	r.stdout_bytes = c->cap[0].total;
	r.stderr_bytes = c->cap[1].total;
	r.truncated = capture_truncated(&c->cap[0]) ||
	    capture_truncated(&c->cap[1]);
	r.timed_out = c->timed_out;
	r.cancelled = c->cancelled;
	r.session_gone = killed;
	r.oom_killed = oom;
	r.memory_limit = s->limits.memory;
	r.end = end;
	r.crash_status = ex.exit_code;
	r.why = killed ? why : NULL;
	r.exit_code = killed ? 128 + SIGKILL : c->exit_code;
	r.duration_ms = mono_ms() - c->t0;
	/* A counter that went back (processes gone from /proc) adds 0.
	 * Read once a call, and only for a quota: its value now is the
	 * next billed call's start, so what background processes use
	 * between calls is billed to the next one (it is the session's
	 * either way).  An unbilled call leaves no mark. */
	s->cpu_marked = 0;
	if (s->sb.cg != NULL && c->hooks.cpu) {
		cpu = cgroup_cpu_usec(s->sb.cg);
		if (cpu > c->cpu0)
			r.cpu_ms = (cpu - c->cpu0) / 1000;
		s->cpu_mark = cpu;
		s->cpu_marked = 1;
	}
	session_count_oom(s, kills);
	if (!killed)
		session_collect_artifacts(s, &changed, &skipped);
	r.artifacts = changed ? changed : json_array();
	r.skipped = skipped;
	if (c->results == NULL)
		c->results = json_array();
	session_results_link(s, c->results);
	r.results = c->results;
	r.results_truncated = c->results_truncated;
	/* Before the session can go: the layer is in its sandbox. */
	r.packages = killed ? NULL : packages_list(&s->pkg, s->spec.dir);
	s->call = NULL;
	s->srv->ncalls--;
	s->last_used = mono_ms();
	/* The hook may end the session; a session_end may be why we are
	 * here (call_abort): s stays ours until released. */
	session_retain(s);
	c->hooks.done(c->hooks.arg, &r);
	free(r.stdout_text);
	free(r.stderr_text);
	json_decref(r.artifacts);
	json_decref(r.packages);
	json_decref(skipped);
	call_free(c);
	/* A killed call's session goes too, unless it is going already. */
	if (killed && !s->srv->stopping)
		session_close(s, why);
	session_release(s);
}

static void
call_maybe_finish(struct call *c)
{
	if (c->done && c->fd[0] == -1 && c->fd[1] == -1)
		call_finish(c);
}

/* One read of the call's stdout (i 0) or stderr (1): 1 bytes came, 0
 * none yet, -1 end of file (the pipe is closed). */
static int
pipe_read(struct call *c, int i)
{
	char		 buf[READ_CHUNK];
	ssize_t		 n;

	n = read(c->fd[i], buf, sizeof(buf));
	if (n > 0) {
		capture_add(&c->cap[i], buf, (size_t)n);
		if (c->hooks.progress != NULL)
			c->hooks.progress(c->hooks.arg, i + 1, buf, (size_t)n,
			    c->cap[i].total);
		return 1;
	}
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	event_free(c->ev[i]);
	c->ev[i] = NULL;
	close(c->fd[i]);
	c->fd[i] = -1;
	return -1;
}

static void
pipe_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct call	*c = arg;

	if (pipe_read(c, fd == c->fd[0] ? 0 : 1) == -1)
		call_maybe_finish(c);
}

/*
 * The driver closes the call's pipes before it says "done": what is left
 * in them, and their end, is usually there already.  Read now, so the
 * call ends in this turn instead of one loop turn (and often one wake-up)
 * per pipe later; a pipe a background process still holds stays with
 * the drain timer.  Bounded by the capture: past its cap bytes are only
 * counted, and DRAIN_NOW_MAX reads at most.
 */
static void
call_drain_now(struct call *c)
{
	int	 i, k;

	for (i = 0; i < 2; i++)
		for (k = 0; c->fd[i] != -1 && k < DRAIN_NOW_MAX; k++)
			if (pipe_read(c, i) != 1)
				break;
}

/* SIGINT to the driver: KeyboardInterrupt in the code, if it listens. */
static void
call_interrupt(struct call *c)
{
	struct timeval	 tv = { CALL_GRACE_MS / 1000,
			    (CALL_GRACE_MS % 1000) * 1000 };

	c->phase = CALL_INTERRUPTING;
	sandbox_interrupt(&c->s->sb);
	evtimer_add(c->timer, &tv);
}

static void
timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct call	*c = arg;
	int		 i;

	switch (c->phase) {
	case CALL_STARTING:
		/* No "ready" within DRIVER_READY_MS, or cancelled first:
		 * nothing ran, and a driver that never came up is no session. */
		if (c->kill_reason == NULL)
			c->kill_reason = DRIVER_NOT_STARTED;
		c->killed = 1;
		sandbox_kill(&c->s->sb);
		call_finish(c);
		break;
	case CALL_SENDING:
		/* The code never reached the driver whole: nothing ran, and
		 * the session cannot be used with half a frame in it. */
		if (c->kill_reason == NULL) {
			c->timed_out = 1;
			counters_timeout(&c->s->srv->counters);
			c->kill_reason = "the session's Python driver did not "
			    "take the code in time";
		}
		c->killed = 1;
		sandbox_kill(&c->s->sb);
		call_finish(c);
		break;
	case CALL_RUNNING:
		c->timed_out = 1;
		counters_timeout(&c->s->srv->counters);
		call_interrupt(c);
		break;
	case CALL_INTERRUPTING:
		/* It did not stop: the whole sandbox goes, state and all. */
		c->killed = 1;
		sandbox_kill(&c->s->sb);
		call_finish(c);
		break;
	case CALL_DRAINING:
		/* Background processes keep the pipes: stop waiting. */
		for (i = 0; i < 2; i++) {
			if (c->ev[i] != NULL)
				event_free(c->ev[i]);
			c->ev[i] = NULL;
			if (c->fd[i] != -1)
				close(c->fd[i]);
			c->fd[i] = -1;
		}
		call_finish(c);
		break;
	}
}

void
call_cancel(struct call *c)
{
	struct timeval	 now = { 0, 0 };

	if (c->done || c->cancelled)
		return;
	if (c->phase == CALL_STARTING) {
		/* The code never left: the call ends from the loop, and the
		 * session made for it with it. */
		c->cancelled = 1;
		c->kill_reason = "cancelled before the code ran";
		evtimer_add(c->timer, &now);
		return;
	}
	if (c->phase == CALL_SENDING) {
		/* It runs once the driver has it all; interrupt it then. */
		c->cancelled = c->interrupt_when_sent = 1;
		return;
	}
	if (c->phase != CALL_RUNNING)
		return;
	c->cancelled = 1;
	call_interrupt(c);
}

/* The exec frame is out: the code runs now. */
static void
call_sent(struct call *c)
{
	c->phase = CALL_RUNNING;
	server_poll(c->s->srv, 1);
	if (c->interrupt_when_sent)
		call_interrupt(c);
}

/* The driver can take more of the exec frame. */
void
session_ctl_write_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct session	*s = arg;
	struct call	*c = s->call;
	struct timeval	 now = { 0, 0 };
	int		 r;

	if ((r = frame_out_flush(&s->ctl_out, s->ctl)) == 0)
		return;
	event_del(s->ctl_wev);
	if (c == NULL || c->phase != CALL_SENDING)
		return;
	if (r == 1) {
		call_sent(c);
		return;
	}
	/* The socket failed mid-frame: end it from the timer, as a kill. */
	c->kill_reason = "the session's Python driver is not listening";
	evtimer_add(c->timer, &now);
}

/*
 * The wasm driver's output (Node cannot take the call's pipes): {"op":
 * "out", "id", "fd": 1|2, "data"} for the running call, into the same
 * bounded captures and progress as bytes from a pipe.  Anything else, or
 * output between calls, counts for nothing.
 */
static void
driver_output(struct call *c, json_t *msg)
{
	json_t		*data = json_object_get(msg, "data");
	json_int_t	 fd = json_integer_value(json_object_get(msg, "fd"));
	const char	*p = json_string_value(data);
	size_t		 n = json_string_length(data);
	int		 i = (int)fd - 1;

	if (c == NULL || c->done || (c->phase != CALL_RUNNING &&
	    c->phase != CALL_INTERRUPTING) || p == NULL || (fd != 1 &&
	    fd != 2) || json_integer_value(json_object_get(msg, "id")) !=
	    (json_int_t)c->exec_id || n == 0)
		return;
	capture_add(&c->cap[i], p, n);
	if (c->hooks.progress != NULL)
		c->hooks.progress(c->hooks.arg, i + 1, p, n, c->cap[i].total);
}

/* A message from the driver: only "done" for the running call counts
 * (and the wasm driver's "out"). */
static void
driver_message(struct session *s, json_t *msg)
{
	struct call	*c = s->call;
	const char	*op = json_string_value(json_object_get(msg, "op"));
	json_t		*code = json_object_get(msg, "exit_code");
	struct timeval	 tv = { 0, CALL_DRAIN_MS * 1000 };

	if (s->prof.runtime == SANDBOX_WASM && op != NULL &&
	    strcmp(op, "out") == 0) {
		driver_output(c, msg);
		return;
	}

	/* No "done" counts for code the driver has not had whole. */
	if (c == NULL || c->done || c->phase == CALL_STARTING ||
	    c->phase == CALL_SENDING || op == NULL ||
	    strcmp(op, "done") != 0 ||
	    json_integer_value(json_object_get(msg, "id")) !=
	    (json_int_t)c->exec_id || !json_is_integer(code))
		return;
	c->done = 1;
	c->exit_code = (int)(json_integer_value(code) & 0xff);
	c->results = session_results_check(s, msg, &c->results_truncated);
	call_drain_now(c);
	if (c->fd[0] == -1 && c->fd[1] == -1) {
		call_finish(c);
		return;
	}
	c->phase = CALL_DRAINING;
	evtimer_add(c->timer, &tv);
}

/*
 * The first words of a driver started for a request (sessions made ahead
 * are the pool's): "ready", or it is no driver of ours.  -1: killed, its
 * end comes as the socket's.  The call waiting for it goes out now.
 */
static int
driver_started(struct session *s, json_t *msg)
{
	const char	*op = json_string_value(json_object_get(msg, "op"));

	if (op == NULL || strcmp(op, "ready") != 0 || session_started(s) == -1) {
		if (s->call != NULL) {
			s->call->killed = 1;
			s->call->kill_reason = session_start_failure(s);
		}
		sandbox_kill(&s->sb);
		return -1;
	}
	s->starting = 0;
	if (s->call != NULL)
		call_send(s->call);
	return 0;
}

void
session_ctl_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct session	*s = arg;
	char		 err[128];
	const char	*why;
	size_t		 len;
	ssize_t		 n;
	json_t		*msg;

	n = read(s->ctl, s->ctl_buf + s->ctl_len, sizeof(s->ctl_buf) -
	    s->ctl_len);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* The driver is gone (killed, exited, OOM): so is the state.
		 * One that never started says why if init did (a failed
		 * checklist: nothing of it ran). */
		why = s->starting ? session_start_failure(s) :
		    "the session's Python process ended";
		if (s->call != NULL) {
			s->call->killed = s->call->driver_died = 1;
			if (s->starting && s->call->kill_reason == NULL)
				s->call->kill_reason = why;
			call_finish(s->call);
		} else if (s->starting && s->held) {
			/* The call about to start hears why (session_exec),
			 * and its session then goes with that reason. */
			s->start_failed = 1;
			event_del(s->ctl_ev);
		} else
			session_close(s, why);
		return;
	}
	s->ctl_len += (size_t)n;
	while (s->ctl_len >= FRAME_HDR_LEN) {
		if (frame_header(s->ctl_buf, DRIVER_MSG_MAX, &len) == -1) {
			/* Nonsense from the driver: treat as a dead session. */
			s->ctl_len = 0;
			if (s->call != NULL) {
				s->call->killed = 1;
				s->call->kill_reason = "the session's Python "
				    "driver sent a malformed message";
			}
			sandbox_kill(&s->sb);
			return;
		}
		if (s->ctl_len < FRAME_HDR_LEN + len)
			return;
		msg = frame_parse(s->ctl_buf + FRAME_HDR_LEN, len, err,
		    sizeof(err));
		if (s->starting) {
			if (driver_started(s, msg) == -1) {
				json_decref(msg);
				s->ctl_len = 0;
				return;
			}
		} else if (msg != NULL)
			driver_message(s, msg);
		json_decref(msg);
		/* A "done" never ends the session, so s is still ours. */
		memmove(s->ctl_buf, s->ctl_buf + FRAME_HDR_LEN + len,
		    s->ctl_len - FRAME_HDR_LEN - len);
		s->ctl_len -= FRAME_HDR_LEN + len;
	}
}

/*
 * The exec frame goes out to a driver that is ready: the code runs once it
 * has the frame whole (call_sent), and the call's clock starts now.
 */
static void
call_send(struct call *c)
{
	struct session	*s = c->s;
	struct timeval	 tv = { c->timeout_ms / 1000,
			    (c->timeout_ms % 1000) * 1000 };
	struct timeval	 now = { 0, 0 };
	int		 r;

	r = frame_out_flush(&s->ctl_out, s->ctl);
	c->phase = r == 1 ? CALL_RUNNING : CALL_SENDING;
	if (r == 1)
		server_poll(s->srv, 1);
	c->t0 = mono_ms();
	/* A billed call starts where the last billed one ended, or reads
	 * the counter (after the driver's start: that is not the code's);
	 * an unbilled one reads nothing. */
	c->cpu0 = !c->hooks.cpu || s->sb.cg == NULL ? 0 : s->cpu_marked ?
	    s->cpu_mark : cgroup_cpu_usec(s->sb.cg);
	if (r == -1) {
		/* Failed mid-frame: the call ends from the loop, as a kill,
		 * and the session with it (done never runs before we return). */
		c->kill_reason = "the session's Python driver is not listening";
		evtimer_add(c->timer, &now);
		return;
	}
	/* The call's own clock bounds the sending too.  From now, not from
	 * the loop's cached time (this turn's start): the code gets all of
	 * its timeout, as the call's duration measures it. */
	event_base_update_cache_time(s->srv->base);
	evtimer_add(c->timer, &tv);
	if (r == 0 && event_add(s->ctl_wev, NULL) == -1)
		fatalx("event_add");
}

struct call *
session_exec(struct session *s, const char *code, size_t len,
    unsigned timeout_ms, const struct call_hooks *hooks, char *err,
    size_t errlen)
{
	struct call	*c;
	struct timeval	 ready = { DRIVER_READY_MS / 1000,
			    (DRIVER_READY_MS % 1000) * 1000 };
	json_t		*msg;
	int		 po[2] = { -1, -1 }, pe[2] = { -1, -1 }, fds[2], i, r;
	/* Node takes no descriptors: the wasm driver's output comes in
	 * "out" frames on the control socket (driver_output). */
	int		 pipes = s->prof.runtime != SANDBOX_WASM;

	if (s->start_failed) {
		snprintf(err, errlen, "%s", session_start_failure(s));
		return NULL;
	}
	if (s->call != NULL || frame_out_pending(&s->ctl_out)) {
		snprintf(err, errlen, "the session is running another call");
		return NULL;
	}
	if (pipes && (pipe2(po, O_CLOEXEC) == -1 ||
	    pipe2(pe, O_CLOEXEC) == -1)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	/* The driver keeps results within what the done message can hold;
	 * session_results_check holds it to that. */
	msg = json_pack("{s:s, s:I, s:s%, s:I}", "op", "exec", "id",
	    (json_int_t)++s->next_exec, "code", code, len, "results_max",
	    (json_int_t)(s->prof.stdout_max < RESULTS_TEXT_MAX ?
	    s->prof.stdout_max : RESULTS_TEXT_MAX));
	fds[0] = po[1];
	fds[1] = pe[1];
	/* The frame takes the write ends and closes them once sent. */
	r = msg ? frame_out_give(&s->ctl_out, msg, DRIVER_EXEC_MAX, fds,
	    pipes ? 2 : 0) : -1;
	json_decref(msg);
	if (r == -1) {
		/* Nothing was sent: the session is as it was. */
		snprintf(err, errlen, "the code could not be framed for the "
		    "session's Python driver");
		goto fail;
	}
	po[1] = pe[1] = -1;
	c = xcalloc(1, sizeof(*c));
	c->s = s;
	c->hooks = *hooks;
	c->exec_id = s->next_exec;
	c->fd[0] = po[0];
	c->fd[1] = pe[0];
	c->timeout_ms = timeout_ms;
	c->t0 = mono_ms();
	c->phase = CALL_STARTING;
	capture_init(&c->cap[0], s->prof.stdout_max);
	capture_init(&c->cap[1], s->prof.stderr_max);
	/* Fresh read ends: O_RDONLY is all their flags hold. */
	for (i = 0; pipes && i < 2; i++) {
		if (fcntl(c->fd[i], F_SETFL, O_NONBLOCK) == -1 ||
		    (c->ev[i] = event_new(s->srv->base, c->fd[i], EV_READ |
		    EV_PERSIST, pipe_cb, c)) == NULL)
			fatalx("call events");
		event_add(c->ev[i], NULL);
	}
	if ((c->timer = evtimer_new(s->srv->base, timer_cb, c)) == NULL)
		fatalx("evtimer_new");
	s->call = c;
	s->srv->ncalls++;
	s->last_used = mono_ms();
	/* A driver still starting takes the frame once it is "ready"
	 * (driver_started), within DRIVER_READY_MS. */
	if (s->starting)
		evtimer_add(c->timer, &ready);
	else
		call_send(c);
	return c;
fail:
	for (i = 0; i < 2; i++) {
		if (po[i] != -1)
			close(po[i]);
		if (pe[i] != -1)
			close(pe[i]);
	}
	return NULL;
}

void
call_abort(struct call *c, const char *why)
{
	c->killed = 1;
	c->abort_reason = why;
	call_finish(c);
}
