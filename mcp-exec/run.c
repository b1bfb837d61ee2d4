/*
 * One-shot runs (`mcp-exec run`).  Everything coming back from the
 * sandbox is hostile: output is bounded and sanitised as it is read, and
 * the workspace is only ever opened beneath its own descriptor without
 * following links.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "preflight.h"
#include "run.h"
#include "sandbox/artifacts.h"
#include "sandbox/capture.h"
#include "sandbox/stage.h"
#include "sandbox/wasm.h"
#include "sessions/network.h"
#include "sessions/packages.h"
#include "util.h"

#define READ_CHUNK	65536

struct streams {
	struct capture	 out, err;
	int		 fd[2];		/* read ends; -1 once at EOF */
};

static int64_t
now_ms(void)
{
	return (int64_t)mono_ms();
}

/* Reads whatever is ready; returns 0 while any stream is open. */
static int
pump(struct streams *st, int timeout_ms)
{
	struct pollfd	 pfd[2];
	char		 buf[READ_CHUNK];
	ssize_t		 n;
	int		 i, nfds = 0, r;

	for (i = 0; i < 2; i++) {
		pfd[i].fd = st->fd[i];
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
		nfds += st->fd[i] != -1;
	}
	if (nfds == 0)
		return 1;
	if ((r = poll(pfd, 2, timeout_ms)) <= 0)
		return 0;
	for (i = 0; i < 2; i++) {
		if (pfd[i].fd == -1 || pfd[i].revents == 0)
			continue;
		n = read(pfd[i].fd, buf, sizeof(buf));
		if (n > 0)
			capture_add(i == 0 ? &st->out : &st->err, buf, (size_t)n);
		else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(st->fd[i]);
			st->fd[i] = -1;
		}
	}
	return st->fd[0] == -1 && st->fd[1] == -1;
}

static void
streams_close(struct streams *st)
{
	int	 i;

	for (i = 0; i < 2; i++)
		if (st->fd[i] != -1)
			close(st->fd[i]);
	capture_free(&st->out);
	capture_free(&st->err);
}

/* The run's files, checked whole, then copied all or none. */
static int
stage_all(const struct run_request *rq, const char *dir, json_t *inputs,
    char *err, size_t errlen)
{
	struct stage		 sg = { 0 };
	struct stage_item	 items[RUN_FILES_MAX];
	char			 path[PATH_MAX];
	size_t			 i;
	int			 fd, rv;

	if (xsnprintf(path, sizeof(path), "%s/inputs", dir) == -1 ||
	    (fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	memset(items, 0, sizeof(items));
	for (i = 0; i < rq->nfiles; i++)
		items[i].path = rq->files[i];
	rv = stage_plan(&rq->profile->inputs, &sg, fd, items, rq->nfiles, err,
	    errlen) == 0 && stage_commit(&rq->profile->inputs, &sg, fd, items,
	    rq->nfiles, err, errlen) == 0 ? 0 : -1;
	stage_release(items, rq->nfiles);
	for (i = 0; rv == 0 && i < rq->nfiles; i++)
		json_array_append_new(inputs, json_sprintf("/inputs/%s",
		    items[i].name));
	close(fd);
	return rv;
}

/* The artifact folder, opened beneath the workspace without following links. */
static int
open_artifact_dir(const char *dir, const char *sub)
{
	char	 ws[PATH_MAX];
	int	 wsfd, fd;

	if (xsnprintf(ws, sizeof(ws), "%s/workspace", dir) == -1 ||
	    (wsfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	fd = openat_beneath(wsfd, sub[0] ? sub : ".", O_RDONLY | O_DIRECTORY);
	close(wsfd);
	return fd;
}

/* 1 when the directory (a descriptor we keep) holds no entry. */
static int
dir_empty(int fd)
{
	struct dirent	*de;
	DIR		*d;
	int		 dfd, empty = 1;

	if ((dfd = dup(fd)) == -1 || (d = fdopendir(dfd)) == NULL) {
		if (dfd != -1)
			close(dfd);
		return 0;
	}
	while (empty && (de = readdir(d)) != NULL)
		empty = strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0;
	closedir(d);
	return empty;
}

static void
collect(const struct run_request *rq, const char *dir, const char *id,
    json_t *result)
{
	char	 out[PATH_MAX], uri[PATH_MAX + 16], err[512];
	json_t	*found = NULL, *skipped = NULL;
	int	 infd = -1, outfd = -1;

	if ((rq->artifacts_dir != NULL ? xsnprintf(out, sizeof(out), "%s",
	    rq->artifacts_dir) : xsnprintf(out, sizeof(out), "%s/artifacts/%s",
	    rq->conf->state_dir, id)) == -1) {
		log_warnx("artifacts: directory name too long");
		json_object_set_new(result, "artifacts", json_array());
		return;
	}
	snprintf(uri, sizeof(uri), "file://%s/", out);
	/* No such folder, or an empty one: the code made no artifacts, and
	 * state_dir/artifacts gets no directory for them. */
	if ((infd = open_artifact_dir(dir, rq->profile->artifact_dir)) == -1 ||
	    dir_empty(infd)) {
		json_object_set_new(result, "artifacts", json_array());
		if (infd != -1)
			close(infd);
		return;
	}
	if (mkdir_p(out, 0700) == -1 ||
	    (outfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		log_warn("artifacts: %s", out);
		json_object_set_new(result, "artifacts", json_array());
		close(infd);
		return;
	}
	if (artifacts_collect(infd, &rq->profile->artifacts, outfd, NULL, uri, &found,
	    &skipped, err, sizeof(err)) == -1) {
		log_warnx("artifacts: %s", err);
		found = json_array();
	}
	json_object_set_new(result, "artifacts", found);
	/* Everything was skipped: no empty directory left in state_dir. */
	if (json_array_size(found) == 0 && rq->artifacts_dir == NULL)
		(void)rmdir(out);
	if (skipped != NULL && json_array_size(skipped) > 0)
		json_object_set_new(result, "artifacts_skipped", skipped);
	else
		json_decref(skipped);
	close(infd);
	close(outfd);
}

static json_t *
limits_json(const struct profile *p, unsigned timeout_ms)
{
	const struct sandbox_limits *l = &p->limits;

	return json_pack("{s:f, s:I, s:I, s:i, s:i, s:I, s:I, s:I, s:I}",
	    "cpu", l->cpu_millis / 1000.0,
	    "mem_mb", (json_int_t)(l->memory >> 20),
	    "swap_mb", (json_int_t)(l->swap >> 20),
	    "pids", (int)l->pids, "timeout_ms", (int)timeout_ms,
	    "tmp_mb", (json_int_t)(l->tmp_size >> 20),
	    "workspace_mb", (json_int_t)(l->workspace_size >> 20),
	    "stdout_max", (json_int_t)p->stdout_max,
	    "stderr_max", (json_int_t)p->stderr_max);
}

static void
put_text(json_t *result, const char *key, const struct capture *c)
{
	size_t	 len;
	char	*s = capture_text(c, &len);

	json_object_set_new(result, key, json_stringn(s, len));
	free(s);
}

/*
 * Reads until both streams close, then waits for the sandbox to end, all
 * within the deadline; at the deadline everything in the sandbox dies and
 * what was already written is drained for a bounded time.  Closing both
 * streams does not stop the clock.
 */
static int
supervise(struct sandbox *sb, struct streams *st, int64_t deadline)
{
	int64_t	 left, drain_end;

	for (;;) {
		left = deadline - now_ms();
		if (pump(st, left > 0 ? (int)left : 0)) {
			if (sandbox_await_exit(sb, left > 0 ? (int)left : 0))
				return 0;
		}
		if (now_ms() >= deadline)
			break;
	}
	sandbox_kill(sb);
	drain_end = now_ms() + RUN_DRAIN_MS;
	while (!pump(st, (left = drain_end - now_ms()) > 0 ? (int)left : 0) &&
	    now_ms() < drain_end)
		;
	return 1;
}

int
run_state_init(const struct mcpexec_conf *c, char *err, size_t errlen)
{
	static const struct {
		const char	*sub;
		mode_t		 mode;
	} dirs[] = {
		{ "", 0711 }, { "/sandboxes", 0711 }, { "/uids", 0700 },
		{ "/artifacts", 0700 }, { "/tasks", 0700 },
	};
	char		 p[PATH_MAX];
	size_t		 i;

	/* Sandbox uids must be able to walk down to their directories. */
	if (preflight_state_dir(c->state_dir, err, errlen) == -1)
		return -1;
	for (i = 0; i < nitems(dirs); i++) {
		if (xsnprintf(p, sizeof(p), "%s%s", c->state_dir, dirs[i].sub) ==
		    -1 || mkdir_p(p, dirs[i].mode) == -1 ||
		    chmod(p, dirs[i].mode) == -1) {
			snprintf(err, errlen, "state directory %s: %s", p,
			    strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 * The wasm runtime's one-shot: the code (python3 -c CODE) goes to the
 * driver, which runs it in Pyodide; the driver directory is found as a
 * server finds it (a one-shot run's settings leave it unset).
 */
static int
wasm_prepare(const struct run_request *rq, struct sandbox_spec *spec,
    const char **argv, char **oneshot, char *err, size_t errlen)
{
	static struct mcpexec_conf	 found;

	if (found.server.driver_dir[0] == '\0') {
		found = *rq->conf;
		if (preflight_driver(&found, err, errlen) == -1)
			return -1;
	}
	if (wasm_engine(found.server.driver_dir, err, errlen) == NULL ||
	    wasm_oneshot_argv(rq->argv, argv, oneshot, err, errlen) == -1)
		return -1;
	spec->argv = argv;
	spec->driver_dir = found.server.driver_dir;
	return 0;
}

json_t *
run_once(const struct run_request *rq, char *err, size_t errlen)
{
	const struct profile	*p = rq->profile;
	struct sandbox_limits	 lim = p->limits;
	const char		*wasm_cmd[WASM_ARGV_MAX + 1];
	char			*oneshot = NULL;
	struct sandbox_spec	 spec;
	struct sandbox		 sb;
	struct sandbox_exit	 ex;
	struct streams		 st;
	struct net_link		 net;
	struct pkg_layer	 pkg;
	json_t			*pk;
	char			 session[64];
	json_t			*result = NULL, *inputs = json_array();
	unsigned		 timeout = rq->timeout_ms ? rq->timeout_ms :
				    p->timeout_default_ms;
	int			 po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	int64_t			 t0;
	int			 timed_out, started = 0;

	memset(&pkg, 0, sizeof(pkg));	/* freed on every way out */
	if (rq->argv[0] == NULL || rq->argv[0][0] != '/') {
		snprintf(err, errlen, "the command must be an absolute path "
		    "(there is no PATH lookup in a sandbox)");
		goto out;
	}
	if (timeout > p->timeout_max_ms) {
		snprintf(err, errlen, "timeout %u ms is above the profile's "
		    "maximum of %u ms", timeout, p->timeout_max_ms);
		goto out;
	}
	if (rq->nfiles > 0 && p->inputs.nroots == 0) {
		snprintf(err, errlen, "profile %s allows no input files (no "
		    "inputs.roots)", p->name);
		goto out;
	}
	/* CPU time as a backstop behind the wall clock. */
	lim.cpu_seconds = timeout / 1000 + 2;
	memset(&spec, 0, sizeof(spec));
	/* The caller's id when it audited the run under it already. */
	if (rq->id != NULL)
		snprintf(spec.id, sizeof(spec.id), "%s", rq->id);
	else
		sandbox_new_id(spec.id);
	if (xsnprintf(spec.dir, sizeof(spec.dir), "%s/sandboxes/%s",
	    rq->conf->state_dir, spec.id) == -1) {
		snprintf(err, errlen, "state_dir too long");
		goto out;
	}
	spec.limits = &lim;
	spec.runtime = p->runtime;
	spec.net = p->net;
	spec.hostname = p->hostname;
	spec.landlock_required = p->landlock_required;
	spec.cgroup = &rq->conf->cgroup;
	spec.idmap = &rq->conf->idmap;
	spec.seccomp = rq->seccomp;
	spec.argv = rq->argv;
	/* Without RLIMIT_AS on wasm: session_build.c says why. */
	if (p->runtime == SANDBOX_WASM) {
		if (wasm_prepare(rq, &spec, wasm_cmd, &oneshot, err,
		    errlen) == -1)
			goto out;
		lim.address_space = 0;
	}
	spec.scrub_argv = rq->caller_argv;
	spec.envp = sandbox_env;
	spec.has_inputs = rq->nfiles > 0;
	spec.control_fd = -1;
	/* gVisor's sandbox cannot be held: it waits before it starts. */
	spec.hold = rq->ready != NULL && p->runtime == SANDBOX_NATIVE;
	snprintf(session, sizeof(session), "run-%s", spec.id);
	network_prepare(&net, &spec, p, rq->conf->server.netguard_socket,
	    session, "operator");
	packages_prepare(&pkg, &spec, p);
	if (sandbox_prepare(&spec, &sb, err, errlen) == -1)
		goto out;
	if (rq->nfiles > 0 && stage_all(rq, spec.dir, inputs, err, errlen) == -1)
		goto destroy;
	if (pipe2(po, O_CLOEXEC) == -1 || pipe2(pe, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto destroy;
	}
	spec.stdout_fd = po[1];
	spec.stderr_fd = pe[1];
	memset(&st, 0, sizeof(st));
	capture_init(&st.out, p->stdout_max);
	capture_init(&st.err, p->stderr_max);
	st.fd[0] = po[0];
	st.fd[1] = pe[0];
	started = (spec.hold || rq->ready == NULL ||
	    rq->ready(rq->hook_arg, err, errlen) == 0) &&
	    sandbox_start(&spec, &sb, err, errlen) == 0;
	/* Only the sandbox holds the write ends now. */
	close(po[1]);
	close(pe[1]);
	/* Held until ready says the command may run (native runtime). */
	if (started && spec.hold)
		started = rq->ready(rq->hook_arg, err, errlen) == 0 &&
		    sandbox_release(&sb, err, errlen) == 0;
	if (!started) {
		streams_close(&st);
		goto destroy;
	}
	t0 = now_ms();
	timed_out = supervise(&sb, &st, t0 + timeout);
	sandbox_wait(&sb, &ex);
	result = json_object();
	put_text(result, "stdout", &st.out);
	put_text(result, "stderr", &st.err);
	json_object_set_new(result, "exit_code", json_integer(ex.exit_code));
	json_object_set_new(result, "timed_out", json_boolean(timed_out));
	json_object_set_new(result, "oom_killed", json_boolean(ex.oom_killed));
	json_object_set_new(result, "truncated",
	    json_boolean(capture_truncated(&st.out) ||
	    capture_truncated(&st.err)));
	json_object_set_new(result, "stdout_bytes",
	    json_integer((json_int_t)st.out.total));
	json_object_set_new(result, "stderr_bytes",
	    json_integer((json_int_t)st.err.total));
	json_object_set_new(result, "duration_ms",
	    json_integer((json_int_t)(now_ms() - t0)));
	collect(rq, spec.dir, spec.id, result);
	/* What the run's package layer held, for the audit (run_audit.c). */
	if ((pk = packages_list(&pkg, spec.dir)) != NULL) {
		json_object_set_new(result, "packages", pk);
		json_object_set_new(result, "package_index",
		    json_string(p->pkg_index));
	}
	json_object_set_new(result, "inputs", inputs);
	inputs = NULL;
	json_object_set_new(result, "limits", limits_json(p, timeout));
	json_object_set_new(result, "sandbox", json_pack("{s:s, s:s, s:s, "
	    "s:s, s:I}", "id", spec.id, "runtime", sandbox_runtime_name(p->runtime), "profile",
	    p->name, "cgroup", cgroup_version_name(sb.cg), "memory_peak",
	    (json_int_t)cgroup_memory_peak(sb.cg)));
	if (p->runtime == SANDBOX_WASM)
		wasm_describe(json_object_get(result, "sandbox"));
	streams_close(&st);
	if (rq->done != NULL)
		rq->done(rq->hook_arg, result);
destroy:
	sandbox_destroy(&sb);
	network_detach(&net);
out:
	packages_free(&pkg);
	json_decref(inputs);
	free(oneshot);
	return result;
}
