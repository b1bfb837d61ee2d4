/*
 * Loads rules/audit.yaml into struct audit_conf.  The file is operator
 * input: every key is checked for type and range, unknown keys are errors
 * (they are usually typos that would otherwise be silently ignored), and
 * relative paths are taken relative to the file's own directory.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_fit.h"
#include "checkpoint.h"
#include "conf.h"
#include "frame.h"
#include "config.h"
#include "util.h"

static const char *const action_names[] = {
	"suspend", "halt", "keep_going", NULL
};

static const char *const retention_names[] = {
	"hash", "sample", "full", NULL
};

const char *
audit_action_name(enum audit_action a)
{
	return action_names[a];
}

const char *
audit_retention_name(enum audit_retention r)
{
	return retention_names[r];
}

/*
 * Code travels as a JSON string: each byte may take up to six ("\u0001"),
 * so the frame cap leaves room for that, within what frame.c allows.
 */
size_t
audit_frame_max(const struct audit_conf *c)
{
	/* Code and policy texts travel escaped: 6 bytes a byte at worst. */
	size_t	 n = c->max_event_bytes + 6 * c->code_max_bytes +
	    6 * AUDIT_POLICY_KEEP_MAX;

	return n > FRAME_MAX ? FRAME_MAX : n;
}

void
audit_conf_defaults(struct audit_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->socket_path, sizeof(c->socket_path),
	    "/run/stockade/auditd.sock");
	c->socket_mode = 0660;
	snprintf(c->log_dir, sizeof(c->log_dir), "/var/log/stockade/audit");
	c->writers[0] = 0;
	c->nwriters = 1;
	c->max_event_bytes = 64 * 1024;
	c->code_retention = RETAIN_HASH;
	c->code_sample_bytes = 256;
	c->code_max_bytes = AUDIT_CODE_MAX;
	c->max_clients = 256;
	c->max_file_bytes = 64ULL * 1024 * 1024;
	c->keep_files = 50;
	c->batch_max_events = 4096;
	c->busy_poll_us = AUDIT_BUSY_POLL_US;
	c->zero_ahead = 0;	/* the active file stays text (policy.md) */
	snprintf(c->key_path, sizeof(c->key_path),
	    "/etc/stockade/keys/checkpoint.key");
	c->checkpoint_events = 10000;
	c->checkpoint_seconds = 60;
	c->disk_full_action = ACTION_SUSPEND;
	c->disk_error_action = ACTION_SUSPEND;
	c->retry_seconds = 5;
	c->refused_per_second = 10;
}

/* Resolves a configured path against the config file's directory. */
static int
set_path(struct conf_ctx *ctx, const json_t *obj, const char *key,
    const char *base, char *out, size_t outlen)
{
	const char	*s;
	int		 r;

	if ((r = conf_get_string(ctx, obj, key, &s)) != 1)
		return r;
	if (*s == '\0') {
		out[0] = '\0';
		return 1;
	}
	if (s[0] == '/' ? xsnprintf(out, outlen, "%s", s) == -1 :
	    xsnprintf(out, outlen, "%s/%s", base, s) == -1) {
		conf_error(ctx, json_object_get(obj, key), "%s: path too long",
		    key);
		return -1;
	}
	return 1;
}

/* "host:port", "[v6]:port"; the host is also the default server_name. */
static int
split_address(const char *s, struct audit_forward *f)
{
	const char	*colon;
	uint64_t	 port;
	size_t		 hl;

	if (*s == '[') {
		if ((colon = strstr(s, "]:")) == NULL)
			return -1;
		hl = (size_t)(colon - s - 1);
		s++;
		colon++;
	} else {
		if ((colon = strrchr(s, ':')) == NULL)
			return -1;
		hl = (size_t)(colon - s);
	}
	if (hl == 0 || hl >= sizeof(f->host) ||
	    parse_u64(colon + 1, 1, 65535, &port) == -1)
		return -1;
	memcpy(f->host, s, hl);
	f->host[hl] = '\0';
	snprintf(f->port, sizeof(f->port), "%u", (unsigned)port);
	memcpy(f->server_name, f->host, hl + 1);
	return 0;
}

static void
load_forward(struct conf_ctx *ctx, const json_t *arr, const char *base,
    struct audit_conf *c)
{
	static const char *const keys[] = { "name", "address", "server_name",
	    "ca", "cert", "key", "resend_window_s", NULL };
	const json_t	*o;
	const char	*s;
	size_t		 i, j;
	int64_t		 n;

	json_array_foreach(arr, i, o) {
		struct audit_forward	*f = &c->forward[c->nforward];

		if (c->nforward == AUDIT_FORWARD_MAX) {
			conf_error(ctx, o, "forward: at most %d collectors",
			    AUDIT_FORWARD_MAX);
			return;
		}
		if (conf_expect_object(ctx, o, "forward entry") == -1)
			continue;
		conf_check_keys(ctx, o, keys);
		memset(f, 0, sizeof(*f));
		f->resend_window_s = 10;
		if (conf_get_string(ctx, o, "name", &s) != 1 ||
		    strlen(s) > AUDIT_FORWARD_NAME_MAX ||
		    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
		    strlen(s))
			conf_error(ctx, json_object_get(o, "name") ?
			    json_object_get(o, "name") : o, "forward: name: "
			    "required, [a-z0-9_-], at most %d",
			    AUDIT_FORWARD_NAME_MAX);
		else
			snprintf(f->name, sizeof(f->name), "%s", s);
		for (j = 0; j < c->nforward; j++)
			if (strcmp(c->forward[j].name, f->name) == 0)
				conf_error(ctx, o, "forward: name '%s' twice",
				    f->name);
		if (conf_get_string(ctx, o, "address", &s) != 1 ||
		    split_address(s, f) == -1)
			conf_error(ctx, json_object_get(o, "address") ?
			    json_object_get(o, "address") : o, "forward: "
			    "address: required, host:port");
		if (conf_get_string(ctx, o, "server_name", &s) == 1)
			snprintf(f->server_name, sizeof(f->server_name), "%s",
			    s);
		if (set_path(ctx, o, "ca", base, f->ca, sizeof(f->ca)) != 1)
			conf_error(ctx, o, "forward: ca: required (the "
			    "collector's certificate is always verified)");
		set_path(ctx, o, "cert", base, f->cert, sizeof(f->cert));
		set_path(ctx, o, "key", base, f->key, sizeof(f->key));
		if ((f->cert[0] == '\0') != (f->key[0] == '\0'))
			conf_error(ctx, o, "forward: cert and key go together");
		if (conf_get_int(ctx, o, "resend_window_s", 0, 3600, &n) == 1)
			f->resend_window_s = (unsigned)n;
		c->nforward++;
	}
}

static int
parse_doc(struct conf_ctx *ctx, const json_t *root, const char *base,
    struct audit_conf *c)
{
	static const char *const top[] = { "socket", "socket_mode", "log_dir",
	    "writers", "limits", "rotation", "flush", "checkpoint",
	    "disk_full_action", "disk_error_action", "retry_seconds", "forward",
	    "code", "node_id", NULL };
	static const char *const code_keys[] = { "retention", "sample_bytes",
	    "max_bytes", NULL };
	static const char *const limits_keys[] = { "max_event_bytes",
	    "max_clients", "refused_writer_events_per_second", NULL };
	static const char *const rot_keys[] = { "max_file_bytes",
	    "keep_files", NULL };
	static const char *const flush_keys[] = { "max_batch_events",
	    "busy_poll_us", "zero_ahead", NULL };
	static const char *const cp_keys[] = { "key", "every_events",
	    "every_seconds", "offhost_dir", NULL };
	json_t		*sub, *arr;
	const char	*str;
	int64_t		 i;
	uint64_t	 u;
	int		 e;

	if (conf_expect_object(ctx, root, "audit.yaml") == -1)
		return -1;
	conf_check_keys(ctx, root, top);
	set_path(ctx, root, "socket", base, c->socket_path,
	    sizeof(c->socket_path));
	if (conf_get_int(ctx, root, "socket_mode", 0, 0777, &i) == 1)
		c->socket_mode = (mode_t)i;
	set_path(ctx, root, "log_dir", base, c->log_dir, sizeof(c->log_dir));
	if (conf_get_array(ctx, root, "writers", &arr) == 1)
		c->nwriters = conf_users(ctx, arr, "writers", c->writers,
		    AUDIT_WRITERS_MAX);
	if (conf_get_object(ctx, root, "limits", &sub) == 1) {
		conf_check_keys(ctx, sub, limits_keys);
		/* Not below what Stockade's writers hold their records to:
		 * a record a sandbox made big must still be kept. */
		if (conf_get_size(ctx, sub, "max_event_bytes",
		    AUDIT_RECORD_MAX, FRAME_MAX, &u) == 1)
			c->max_event_bytes = (size_t)u;
		if (conf_get_int(ctx, sub, "max_clients", 1, 4096, &i) == 1)
			c->max_clients = (unsigned)i;
		if (conf_get_int(ctx, sub, "refused_writer_events_per_second",
		    1, 1000, &i) == 1)
			c->refused_per_second = (unsigned)i;
	}
	if (conf_get_object(ctx, root, "rotation", &sub) == 1) {
		conf_check_keys(ctx, sub, rot_keys);
		if (conf_get_size(ctx, sub, "max_file_bytes", 64 * 1024,
		    1ULL << 40, &u) == 1)
			c->max_file_bytes = u;
		if (conf_get_int(ctx, sub, "keep_files", 2, 1000000, &i) == 1)
			c->keep_files = (unsigned)i;
	}
	if (conf_get_object(ctx, root, "flush", &sub) == 1) {
		conf_check_keys(ctx, sub, flush_keys);
		if (conf_get_int(ctx, sub, "max_batch_events", 1, 65536, &i) == 1)
			c->batch_max_events = (unsigned)i;
		if (conf_get_int(ctx, sub, "busy_poll_us", 0, 1000, &i) == 1)
			c->busy_poll_us = (unsigned)i;
		(void)conf_get_bool(ctx, sub, "zero_ahead", &c->zero_ahead);
	}
	if (conf_get_object(ctx, root, "checkpoint", &sub) == 1) {
		conf_check_keys(ctx, sub, cp_keys);
		set_path(ctx, sub, "key", base, c->key_path,
		    sizeof(c->key_path));
		if (conf_get_int(ctx, sub, "every_events", 1, 100000000, &i) == 1)
			c->checkpoint_events = (unsigned)i;
		if (conf_get_int(ctx, sub, "every_seconds", 1, 86400, &i) == 1)
			c->checkpoint_seconds = (unsigned)i;
		set_path(ctx, sub, "offhost_dir", base, c->checkpoint_dir,
		    sizeof(c->checkpoint_dir));
	}
	if (conf_get_object(ctx, root, "code", &sub) == 1) {
		conf_check_keys(ctx, sub, code_keys);
		if (conf_get_enum(ctx, sub, "retention", retention_names,
		    &e) == 1)
			c->code_retention = (enum audit_retention)e;
		if (conf_get_size(ctx, sub, "sample_bytes", 16,
		    AUDIT_SAMPLE_MAX, &u) == 1)
			c->code_sample_bytes = (size_t)u;
		if (conf_get_size(ctx, sub, "max_bytes", 1024, AUDIT_CODE_MAX,
		    &u) == 1)
			c->code_max_bytes = (size_t)u;
	}
	if (conf_get_enum(ctx, root, "disk_full_action", action_names, &e) == 1)
		c->disk_full_action = (enum audit_action)e;
	if (conf_get_enum(ctx, root, "disk_error_action", action_names, &e) == 1)
		c->disk_error_action = (enum audit_action)e;
	if (conf_get_int(ctx, root, "retry_seconds", 1, 3600, &i) == 1)
		c->retry_seconds = (unsigned)i;
	if (conf_get_array(ctx, root, "forward", &arr) == 1)
		load_forward(ctx, arr, base, c);
	if (conf_get_string(ctx, root, "node_id", &str) == 1) {
		if (!checkpoint_node_ok(str))
			conf_error(ctx, json_object_get(root, "node_id"),
			    "node_id: a DNS label (a-z, 0-9, '-'; 1 to 63 "
			    "characters)");
		else
			snprintf(c->node_id, sizeof(c->node_id), "%s", str);
	}
	return ctx->nerrors ? -1 : 0;
}

int
audit_conf_witness_dir(struct audit_conf *c)
{
	char	 dir[PATH_MAX];

	if (c->node_id[0] == '\0' || c->checkpoint_dir[0] == '\0')
		return 0;
	if (xsnprintf(dir, sizeof(dir), "%s/%s", c->checkpoint_dir,
	    c->node_id) == -1)
		return -1;
	memcpy(c->checkpoint_dir, dir, sizeof(dir));
	return 0;
}

int
audit_conf_load(const char *path, struct audit_conf *c)
{
	struct conf_doc	*doc;
	struct conf_ctx	 ctx;
	char		 err[CONF_ERROR_LEN], dir[PATH_MAX];
	int		 rv;

	audit_conf_defaults(c);
	if ((doc = conf_doc_load_file(path, err, sizeof(err))) == NULL) {
		conf_report("%s", err);
		return -1;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(c->sha256, sizeof(c->sha256), "%s", conf_doc_sha256(doc));
	snprintf(dir, sizeof(dir), "%s", path);
	conf_ctx_init(&ctx, doc);
	rv = parse_doc(&ctx, conf_doc_root(doc), dirname(dir), c);
	if (rv == -1)
		conf_ctx_report(&ctx);
	conf_doc_free(doc);
	return rv;
}
