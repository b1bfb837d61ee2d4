/*
 * stockade-auditd: receives audit events from Stockade's daemons over a
 * Unix socket and appends them to a hash-chained, signed log.  Runs as a
 * dedicated user that owns the log directory; trusts only the uids listed
 * as writers, and even their events are validated.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "audit_fit.h"
#include "config.h"
#include "forward.h"
#include "conf.h"
#include "evbase.h"
#include "log.h"
#include "logdir.h"
#include "retention.h"
#include "server.h"
#include "util.h"
#include "version.h"
#include "writer.h"

#define NPRIORITIES	3	/* completions, clients, commit */
#define CATCHUP_POLL_US	20000	/* stopping: are the collectors there yet */

struct overrides {
	const char	*socket;
	const char	*log_dir;
	const char	*key;
	const char	*checkpoints;
	const char	*node_id;
};

struct daemon {
	struct event_base	*base;
	const char		*config_path;
	struct overrides	 ov;
	struct audit_conf	 conf;
	struct writer		*w;
	struct server		*srv;
	struct forwarders	*fwd;
	struct event		*catchup_ev;
	EVP_PKEY		*key;
	int			 exit_status;
	int			 stopping;
};

/* -h, --help: on stdout, exit 0; a bad command line: stderr, 2. */
static __attribute__((noreturn)) void
usage(int help)
{
	fprintf(help ? stdout : stderr, "usage: stockade-auditd [-dhnv] "
	    "[-f config] [--socket path] [--log-dir dir]\n"
	    "                       [--key file] [--checkpoints dir] "
	    "[--node-id id]\n");
	exit(help ? (fflush(stdout) == 0 ? 0 : 1) : 2);
}

static void
apply_path(char *dst, size_t len, const char *src)
{
	if (src != NULL && xsnprintf(dst, len, "%s", src) == -1)
		fatalx("path too long: %s", src);
}

static void
apply_overrides(struct audit_conf *c, const struct overrides *ov)
{
	apply_path(c->socket_path, sizeof(c->socket_path), ov->socket);
	apply_path(c->log_dir, sizeof(c->log_dir), ov->log_dir);
	apply_path(c->key_path, sizeof(c->key_path), ov->key);
	apply_path(c->checkpoint_dir, sizeof(c->checkpoint_dir),
	    ov->checkpoints);
	if (ov->node_id != NULL) {
		if (!checkpoint_node_ok(ov->node_id))
			fatalx("--node-id %s: not a DNS label", ov->node_id);
		snprintf(c->node_id, sizeof(c->node_id), "%s", ov->node_id);
	}
	/* Each node appends to a file of its own on the shared witness. */
	if (audit_conf_witness_dir(c) == -1)
		fatalx("path too long: %s/%s", c->checkpoint_dir, c->node_id);
}

static int
load_conf(const char *path, const struct overrides *ov, struct audit_conf *c)
{
	if (path == NULL) {
		if (access(AUDIT_DEFAULT_CONFIG, F_OK) == 0)
			path = AUDIT_DEFAULT_CONFIG;
		else {
			audit_conf_defaults(c);
			snprintf(c->path, sizeof(c->path), "(built-in defaults)");
		}
	}
	if (path != NULL && audit_conf_load(path, c) == -1)
		return -1;
	apply_overrides(c, ov);
	return 0;
}

static json_t *
settings_json(const struct audit_conf *c)
{
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:s, s:s, s:s*, "
	    "s:s*}",
	    "log_dir", c->log_dir, "socket", c->socket_path,
	    "max_file_bytes", (json_int_t)c->max_file_bytes,
	    "keep_files", (json_int_t)c->keep_files,
	    "checkpoint_events", (json_int_t)c->checkpoint_events,
	    "checkpoint_seconds", (json_int_t)c->checkpoint_seconds,
	    "max_event_bytes", (json_int_t)c->max_event_bytes,
	    "disk_full_action", audit_action_name(c->disk_full_action),
	    "disk_error_action", audit_action_name(c->disk_error_action),
	    "offhost_checkpoints",
	    c->checkpoint_dir[0] ? c->checkpoint_dir : NULL,
	    "node_id", c->node_id[0] ? c->node_id : NULL);
}

static void
stopped_cb(void *arg)
{
	struct daemon	*d = arg;
	struct timeval	 tv = { 0, 200000 };

	/* Give the last acks a moment to leave, then end the loop. */
	event_base_loopexit(d->base, &tv);
}

static void
halted_cb(void *arg)
{
	struct daemon	*d = arg;

	log_warnx("halting: disk_*_action is halt");
	d->exit_status = 3;
	server_stop(d->srv);
	event_base_loopexit(d->base, NULL);
}

/*
 * A good reload's record, with audit.yaml's text kept beside the log as
 * the writers' policy texts are (retention_apply checks it the same way).
 */
static void
own_policy_load(struct daemon *d, json_t *ev)
{
	struct retained_code	 rc;
	json_t			*f;
	char			 err[256];
	size_t			 i;

	memset(&rc, 0, sizeof(rc));
	if (ev == NULL) {
		writer_append_own(d->w, "policy_load", NULL);
		return;
	}
	audit_policy_content(json_object_get(ev, "files"));
	if (retention_apply(&d->conf, ev, &rc, err, sizeof(err)) == -1) {
		/* The record goes without the text, never with it inline. */
		log_warnx("audit.yaml's text not kept: %s", err);
		retention_free(&rc);
		json_array_foreach(json_object_get(ev, "files"), i, f) {
			json_object_del(f, "content");
			json_object_del(f, "kept");
		}
	}
	json_object_del(ev, "event");
	writer_append_own_kept(d->w, "policy_load", ev, &rc);
	retention_free(&rc);
}

static void
reload(struct daemon *d)
{
	struct audit_conf	 c;
	json_t			*files;

	log_info("reloading %s", d->conf.path);
	conf_errors_clear();
	if (load_conf(d->config_path, &d->ov, &c) == -1) {
		log_warnx("reload failed; keeping the running configuration");
		files = json_pack("[{s:s}]", "path", d->conf.path);
		writer_append_own(d->w, "policy_load", json_pack(
		    "{s:s, s:o, s:b, s:s}", "program", "stockade-auditd",
		    "files", files, "ok", 0, "error",
		    conf_errors_text()[0] != '\0' ? conf_errors_text() :
		    "invalid configuration; previous one kept"));
		return;
	}
	if (strcmp(c.log_dir, d->conf.log_dir) != 0 ||
	    strcmp(c.socket_path, d->conf.socket_path) != 0 ||
	    strcmp(c.key_path, d->conf.key_path) != 0 ||
	    strcmp(c.checkpoint_dir, d->conf.checkpoint_dir) != 0 ||
	    strcmp(c.node_id, d->conf.node_id) != 0)
		log_warnx("log_dir, socket, checkpoint key, offhost_dir and "
		    "node_id change only on restart");
	memcpy(c.log_dir, d->conf.log_dir, sizeof(c.log_dir));
	memcpy(c.socket_path, d->conf.socket_path, sizeof(c.socket_path));
	memcpy(c.key_path, d->conf.key_path, sizeof(c.key_path));
	memcpy(c.checkpoint_dir, d->conf.checkpoint_dir,
	    sizeof(c.checkpoint_dir));
	memcpy(c.node_id, d->conf.node_id, sizeof(c.node_id));
	d->conf = c;
	server_reconfigure(d->srv, &c);
	writer_reconfigure(d->w, &c);
	files = json_pack("[{s:s, s:s}]", "path", c.path, "sha256", c.sha256);
	own_policy_load(d, json_pack("{s:s, s:s, s:o, s:b, s:o}", "event",
	    "policy_load", "program", "stockade-auditd", "files", files, "ok",
	    1, "settings", settings_json(&c)));
}

/*
 * Stopping, first step: the socket keeps serving until every connected
 * collector has what was on disk at the signal (at most 3 s), so writers
 * are refused only for the short second step, however slow a SIEM is.
 */
static void
catchup_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct daemon	*d = arg;
	struct timeval	 tv = { 0, CATCHUP_POLL_US };

	if (!forward_caught_up(d->fwd)) {
		evtimer_add(d->catchup_ev, &tv);
		return;
	}
	server_stop(d->srv);
	writer_shutdown(d->w, stopped_cb, d);
}

static void
signal_cb(evutil_socket_t sig, short ev, void *arg)
{
	struct daemon	*d = arg;

	if (sig == SIGHUP) {
		if (!d->stopping)
			reload(d);
		return;
	}
	if (d->stopping)
		return;
	log_info("%s: stopping", strsignal((int)sig));
	d->stopping = 1;
	forward_catch_up(d->fwd, writer_durable_seq(d->w));
	catchup_cb(-1, 0, d);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "log-dir", required_argument, NULL, 'L' },
		{ "key", required_argument, NULL, 'K' },
		{ "checkpoints", required_argument, NULL, 'C' },
		{ "node-id", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct daemon	 d;
	struct event	*sigs[3];
	const int	 signos[3] = { SIGTERM, SIGINT, SIGHUP };
	char		 err[1024], kid[KEY_ID_HEX + 1];
	int		 ch, foreground = 0, verbose = 0, check_only = 0, i;

	memset(&d, 0, sizeof(d));
	while ((ch = getopt_long(argc, argv, "df:hnv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			foreground = 1;
			break;
		case 'h':
			usage(1);
		case 'f':
			d.config_path = optarg;
			break;
		case 'n':
			check_only = 1;
			break;
		case 'v':
			verbose++;
			break;
		case 'S':
			d.ov.socket = optarg;
			break;
		case 'L':
			d.ov.log_dir = optarg;
			break;
		case 'K':
			d.ov.key = optarg;
			break;
		case 'C':
			d.ov.checkpoints = optarg;
			break;
		case 'N':
			d.ov.node_id = optarg;
			break;
		default:
			usage(0);
		}
	}
	if (optind != argc)
		usage(0);
	log_init("stockade-auditd", foreground || check_only, verbose);
	if (load_conf(d.config_path, &d.ov, &d.conf) == -1)
		exit(1);
	if ((d.key = ed25519_load_private(d.conf.key_path, err,
	    sizeof(err))) == NULL)
		fatalx("checkpoint key: %s (create one with 'stockade audit "
		    "keygen DIR')", err);
	if (check_only) {
		fprintf(stderr, "configuration OK\n");
		exit(0);
	}

	umask(027);
	signal(SIGPIPE, SIG_IGN);
	if (mkdir_p(d.conf.log_dir, 0750) == -1)
		fatal("%s", d.conf.log_dir);
	if (d.conf.checkpoint_dir[0] != '\0' &&
	    mkdir_p(d.conf.checkpoint_dir, 0750) == -1)
		fatal("%s", d.conf.checkpoint_dir);
	if (logdir_lock(d.conf.log_dir) == -1)
		exit(1);

	if ((d.base = evbase_new(NPRIORITIES)) == NULL)
		fatalx("event_base_new");
	if ((d.w = writer_start(d.base, &d.conf, d.key, err, sizeof(err))) == NULL)
		fatalx("%s", err);
	if (ed25519_key_id(d.key, kid) == -1)
		fatalx("checkpoint key id");
	writer_append_own(d.w, "daemon_start", json_pack(
	    "{s:s, s:s, s:{s:s, s:s}, s:s, s:o}",
	    "program", "stockade-auditd", "version", STOCKADE_VERSION,
	    "config", "path", d.conf.path,
	    "sha256", d.conf.sha256[0] ? d.conf.sha256 : "none",
	    "key_id", kid, "settings", settings_json(&d.conf)));
	/* Sign the head at once: a verifier with the public key can then
	 * authenticate the log from its very first records. */
	writer_checkpoint(d.w);
	if ((d.srv = server_start(d.base, &d.conf, d.w)) == NULL)
		fatalx("cannot listen on %s", d.conf.socket_path);
	d.fwd = forward_start(&d.conf, d.w);
	server_set_forwarders(d.srv, d.fwd);
	writer_on_halt(d.w, halted_cb, &d);
	if ((d.catchup_ev = evtimer_new(d.base, catchup_cb, &d)) == NULL)
		fatalx("evtimer_new");
	for (i = 0; i < 3; i++) {
		sigs[i] = evsignal_new(d.base, signos[i], signal_cb, &d);
		if (sigs[i] == NULL || event_priority_set(sigs[i], 0) == -1 ||
		    event_add(sigs[i], NULL) == -1)
			fatalx("evsignal_new");
	}
	log_info("listening on %s, logging to %s", d.conf.socket_path,
	    d.conf.log_dir);

	evbase_dispatch(d.base);

	/* Everything is on disk now: the forwarders send the rest. */
	server_set_forwarders(d.srv, NULL);
	forward_stop(d.fwd);
	for (i = 0; i < 3; i++)
		event_free(sigs[i]);
	event_free(d.catchup_ev);
	server_free(d.srv);
	writer_free(d.w);
	EVP_PKEY_free(d.key);
	event_base_free(d.base);
	log_info("stopped");
	return d.exit_status;
}
