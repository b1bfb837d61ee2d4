/*
 * Making a session: the sandbox and its waiting driver first (what the
 * warm pool builds ahead, sessions/pool.c), then the hand-out to a
 * principal.  Split from session.c; the driver is as untrusted here: its
 * one "ready" is size-capped and checked, and nothing else it says counts.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet.h"
#include "frame.h"
#include "log.h"
#include "network.h"
#include "pool.h"
#include "sandbox/seccomp_filter.h"
#include "session.h"
#include "session_int.h"
#include "util.h"

#define SESSION_CPU_SECONDS	3600	/* the driver process, over its life */
/* Whom netguard's attach record names for a sandbox built ahead: the
 * principal is not known yet (session_created names it at hand-out). */
#define POOL_PRINCIPAL		"pool"

/* Reads one frame from the driver within timeout_ms (blocking). */
static json_t *
driver_read(struct session *s, int timeout_ms)
{
	struct pollfd	 pfd = { s->ctl, POLLIN, 0 };
	char		 err[128];
	json_t		*msg = NULL;

	if (poll(&pfd, 1, timeout_ms) == 1 && frame_recv(s->ctl,
	    DRIVER_MSG_MAX, &msg, NULL, NULL, err, sizeof(err)) == 1)
		return msg;
	return NULL;
}

/* The driver's command line; the profile's modules, if any, imported
 * before "ready" when built ahead (a session built for a request would
 * make its call wait for all of them: there the code imports its own). */
static void
driver_argv(struct session *s, int ahead)
{
	size_t	 n = 0;

	if (ahead && s->prof.pool_preimport[0] != '\0')
		snprintf(s->preimport, sizeof(s->preimport), "--preimport=%s",
		    s->prof.pool_preimport);
	if (s->prof.runtime == SANDBOX_WASM) {
		wasm_argv(s->argv, s->preimport[0] != '\0' ? s->preimport :
		    NULL);
		return;
	}
	s->argv[n++] = "/usr/bin/python3";
	s->argv[n++] = "-I";
	s->argv[n++] = "-X";
	s->argv[n++] = "utf8";
	s->argv[n++] = SANDBOX_DRIVER_DIR "/driver.py";
	if (s->preimport[0] != '\0')
		s->argv[n++] = s->preimport;
	s->argv[n] = NULL;
}

/* The sandbox started, its driver on its way to "ready". */
struct session *
session_build(struct server *srv, const char *principal,
    const struct profile *prof, char *err, size_t errlen)
{
	const struct server_conf	*sc = &srv->conf.server;
	struct session			*s;
	char				 ws[PATH_MAX];
	uint64_t			 t0 = mono_ns();
	int				 sv[2] = { -1, -1 }, null = -1;

	s = xcalloc(1, sizeof(*s));
	s->refs = 1;				/* its builder's, then the table's */
	s->srv = srv;
	s->ctl = s->wsfd = -1;
	frame_out_init(&s->ctl_out);
	/* 128 random bits, so ids cannot be probed; the node they name
	 * is where a router sends them (fleet.h). */
	fleet_handle(srv->conf.fleet.node_id, SESSION_ID_PREFIX,
	    SESSION_ID_RANDOM, s->id, sizeof(s->id));
	profile_copy(&s->prof, prof);
	s->limits = s->prof.limits;
	s->limits.cpu_seconds = SESSION_CPU_SECONDS;
	/* V8 reserves guard regions of many GiB for a WebAssembly memory,
	 * which any RLIMIT_AS a profile would set refuses: the cgroup's
	 * memory limit holds the wasm runtime (docs/runtimes.md). */
	if (s->prof.runtime == SANDBOX_WASM) {
		s->limits.address_space = 0;
		if (wasm_engine(sc->driver_dir, err, errlen) == NULL)
			goto fail;
	}
	s->seen = json_object();
	sandbox_new_id(s->spec.id);
	if (xsnprintf(s->spec.dir, sizeof(s->spec.dir), "%s/sandboxes/%s",
	    srv->conf.state_dir, s->spec.id) == -1 ||
	    xsnprintf(s->store, sizeof(s->store), "%s/artifacts",
	    s->spec.dir) == -1) {
		snprintf(err, errlen, "state_dir too long");
		goto fail;
	}
	driver_argv(s, principal == NULL);
	s->spec.limits = &s->limits;
	s->spec.runtime = s->prof.runtime;
	s->spec.net = s->prof.net;
	s->spec.hostname = s->prof.hostname;
	s->spec.landlock_required = s->prof.landlock_required;
	s->spec.cgroup = &srv->conf.cgroup;
	s->spec.idmap = &srv->conf.idmap;
	/* node's own list on the wasm runtime (seccomp_wasm.c). */
	s->spec.seccomp = s->prof.runtime == SANDBOX_WASM ? &srv->seccomp_wasm :
	    &srv->seccomp;
	sandbox_seccomp_sha256(s->spec.seccomp, s->seccomp_sha256,
	    sizeof(s->seccomp_sha256));
	s->spec.argv = s->argv;
	s->spec.envp = sandbox_env;
	s->spec.scrub_argv = srv->caller_argv;
	s->spec.has_inputs = 1;
	s->spec.driver_dir = sc->driver_dir;
	network_prepare(&s->net, &s->spec, &s->prof, sc->netguard_socket,
	    s->id, principal != NULL ? principal : POOL_PRINCIPAL);
	packages_prepare(&s->pkg, &s->spec, &s->prof);
	if (sandbox_prepare(&s->spec, &s->sb, err, errlen) == -1)
		goto fail;
	s->started = 1;
	/* Until a call attaches its pipes, the driver's stdio is /dev/null. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1 ||
	    (null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		goto fail;
	}
	s->ctl = sv[0];
	s->spec.control_fd = sv[1];
	s->spec.stdout_fd = s->spec.stderr_fd = null;
	/* Not waiting for init's checklist: its verdict is read when the
	 * driver, which runs only after it, says "ready" (session_started). */
	if (sandbox_launch(&s->spec, &s->sb, err, errlen) == -1)
		goto fail;
	close(sv[1]);
	sv[1] = -1;
	close(null);
	null = -1;
	if (xsnprintf(ws, sizeof(ws), "%s/workspace", s->spec.dir) == -1 ||
	    (s->wsfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    mkdir_p(s->store, 0700) == -1 || xsnprintf(ws, sizeof(ws),
	    "%s/.incoming", s->store) == -1 || mkdir(ws, 0700) == -1) {
		snprintf(err, errlen, "artifact store: %s", strerror(errno));
		goto fail;
	}
	counters_build(&srv->counters, mono_ns() - t0);
	return s;
fail:
	if (sv[1] != -1)
		close(sv[1]);
	if (null != -1)
		close(null);
	session_discard(s);
	counters_build(&srv->counters, mono_ns() - t0);
	return NULL;
}

/* The driver's first words, within timeout_ms: 0 when they are "ready". */
int
session_ready(struct session *s, int timeout_ms)
{
	json_t		*ready;
	const char	*op;
	int		 rv;

	ready = driver_read(s, timeout_ms);
	op = json_string_value(json_object_get(ready, "op"));
	rv = op != NULL && strcmp(op, "ready") == 0 ? 0 : -1;
	json_decref(ready);
	return rv == 0 ? session_started(s) : -1;
}

/*
 * The driver spoke, so init's verdict on the checklist is there: 0 when
 * it passed; else -1, its reason in s->why.  The driver cannot have run
 * without it, so this is a check on init, not a wait.
 */
int
session_started(struct session *s)
{
	return sandbox_started(&s->sb, s->why, sizeof(s->why));
}

const char *
session_start_failure(struct session *s)
{
	if (s->why[0] == '\0')
		(void)session_started(s);
	return s->why[0] != '\0' ? s->why : DRIVER_NOT_STARTED;
}

void
session_discard(struct session *s)
{
	if (s->ctl != -1)
		close(s->ctl);
	if (s->ctl_ev != NULL)
		event_free(s->ctl_ev);
	if (s->ctl_wev != NULL)
		event_free(s->ctl_wev);
	frame_out_free(&s->ctl_out);
	if (s->wsfd != -1)
		close(s->wsfd);
	if (s->started)
		sandbox_destroy(&s->sb);	/* the artifacts store with it */
	network_detach(&s->net);		/* nothing runs there any more */
	packages_free(&s->pkg);			/* the layer went with the sandbox */
	json_decref(s->seen);
	s->seen = NULL;
	session_release(s);
}

/* A waiting driver says nothing: anything readable is its end (or worse). */
int
session_dead(const struct session *s)
{
	struct pollfd	 pfd = { s->ctl, POLLIN, 0 };

	return poll(&pfd, 1, 0) != 0;
}

int
session_handout(struct session *s, const char *principal,
    const struct quota_bill *bill, const json_t *client, char *err,
    size_t errlen)
{
	struct server	*srv = s->srv;

	snprintf(s->principal, sizeof(s->principal), "%s", principal);
	if (bill != NULL)
		s->bill = *bill;
	/* Non-blocking: code goes out as the driver takes it, never
	 * blocking the loop, never half a frame (lib/frame.h). */
	if (session_nonblock(s->ctl) == -1 ||
	    (s->ctl_ev = event_new(srv->base, s->ctl, EV_READ | EV_PERSIST,
	    session_ctl_cb, s)) == NULL || event_add(s->ctl_ev, NULL) == -1 ||
	    (s->ctl_wev = event_new(srv->base, s->ctl, EV_WRITE | EV_PERSIST,
	    session_ctl_write_cb, s)) == NULL) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return -1;
	}
	s->last_used = mono_ms();
	ts_now(s->since);
	LIST_INSERT_HEAD(&srv->sessions, s, entry);
	srv->nsessions++;
	if (srv->quota != NULL)
		quota_session_open(srv->quota, &s->bill);
	counters_session_created(&srv->counters);
	/* First on the request path: the audit daemon starts its write
	 * before the call's execution_started comes to wait on it. */
	server_audit(srv, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:O*}",
	    "event", "session_created", "principal", s->principal, "session_id",
	    s->id, "profile", s->prof.name, "sandbox", s->spec.id, "network",
	    s->prof.network, "seccomp_sha256", s->seccomp_sha256, "client",
	    client));
	/* The live list now; the status file once this request has gone
	 * to wait on the audit daemon (sessions_publish_soon). */
	sessions_publish_soon(srv);
	return 0;
}

struct session *
session_create(struct server *srv, const char *principal,
    const struct profile *prof, const struct quota_bill *bill,
    const json_t *client, char *err, size_t errlen)
{
	struct session	*s;

	if (prof == NULL)
		prof = &srv->profile;
	/* Taken first: it no longer counts against the cap it makes room in. */
	s = pool_take(srv, prof);
	if (sessions_make_room(srv, principal, err, errlen) == -1) {
		if (s != NULL)
			session_discard(s);
		return NULL;
	}
	if (s == NULL) {
		if ((s = session_build(srv, principal, prof, err,
		    errlen)) == NULL)
			return NULL;
		/* Its driver starts while the loop serves others: the call
		 * waits for "ready" (driver_started), not the server. */
		s->starting = 1;
	}
	if (session_handout(s, principal, bill, client, err, errlen) == -1) {
		session_discard(s);
		return NULL;
	}
	return s;
}
