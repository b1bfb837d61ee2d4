/*
 * stockade-auditd settings: rules/audit.yaml, then command-line overrides.
 * The config is parsed whole and validated before anything uses it, so a
 * reload either swaps in a complete config or keeps the old one.
 */
#ifndef STOCKADE_AUDITD_CONFIG_H
#define STOCKADE_AUDITD_CONFIG_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "blobstore.h"
#include "checkpoint.h"
#include "hash.h"

#define AUDIT_WRITERS_MAX	32
#define AUDIT_FORWARD_MAX	4	/* SIEM collectors */
#define AUDIT_FORWARD_NAME_MAX	32
#define AUDIT_DEFAULT_CONFIG	"/etc/stockade/rules/audit.yaml"
#define AUDIT_CODE_MAX		BLOBSTORE_MAX	/* mcp-exec's CODE_BYTES_MAX */
#define AUDIT_SAMPLE_MAX	4096		/* bytes of head and of tail */
/* How long the loop polls after a durable ack to a writer whose next
 * event came that soon after its last ack (server.c, busy polling). */
#define AUDIT_BUSY_POLL_US	100

enum audit_action {
	ACTION_SUSPEND,		/* refuse new events until the disk recovers */
	ACTION_HALT,		/* stop the daemon; writers then refuse to run code */
	ACTION_KEEP_GOING,	/* drop events, count them, record the count later */
};

/* How much of the code a run carries the log keeps (docs/policy.md). */
enum audit_retention {
	RETAIN_HASH,		/* sha256 and size only */
	RETAIN_SAMPLE,		/* and the first and last sample_bytes */
	RETAIN_FULL,		/* and the whole code, in the blob store */
};

/* One RFC 5425 (syslog over TLS) collector. */
struct audit_forward {
	char		 name[AUDIT_FORWARD_NAME_MAX + 1];	/* names its cursor */
	char		 host[256];
	char		 port[8];
	char		 server_name[256];	/* checked in its certificate */
	char		 ca[PATH_MAX];
	char		 cert[PATH_MAX];	/* "": no client certificate */
	char		 key[PATH_MAX];
	unsigned	 resend_window_s;
};

struct audit_conf {
	char		 path[PATH_MAX];	/* the file it came from */
	char		 sha256[SHA256_HEX + 1];	/* of that file */
	char		 socket_path[PATH_MAX];
	mode_t		 socket_mode;
	char		 log_dir[PATH_MAX];
	uid_t		 writers[AUDIT_WRITERS_MAX];
	size_t		 nwriters;
	size_t		 max_event_bytes;	/* one frame from a writer */
	enum audit_retention code_retention;
	size_t		 code_sample_bytes;
	size_t		 code_max_bytes;	/* code a writer may send along */
	unsigned	 max_clients;
	uint64_t	 max_file_bytes;	/* rotate past this size */
	unsigned	 keep_files;		/* log files kept, active included */
	unsigned	 batch_max_events;	/* group commit ceiling */
	unsigned	 busy_poll_us;		/* after a hot writer's ack */
	int		 zero_ahead;		/* zero-fill the active file ahead */
	char		 key_path[PATH_MAX];	/* Ed25519 private key */
	char		 checkpoint_dir[PATH_MAX];	/* off-host copy; "" = none */
	/* This node of a fleet ("" = a single host): names its checkpoints
	 * and their off-host file, offhost_dir/<node_id>/ (the fleet witness). */
	char		 node_id[CHECKPOINT_NODE_MAX];
	unsigned	 checkpoint_events;
	unsigned	 checkpoint_seconds;
	enum audit_action disk_full_action;
	enum audit_action disk_error_action;
	unsigned	 retry_seconds;
	unsigned	 refused_per_second;	/* writer_refused events, rate cap */
	struct audit_forward forward[AUDIT_FORWARD_MAX];
	size_t		 nforward;
};

/* offhost_dir/<node_id> once node_id is set: where this node's witness
 * file goes.  -1 when the path does not fit. */
int		 audit_conf_witness_dir(struct audit_conf *);
/* Loads and validates; on error prints file:line:column messages, returns -1. */
int		 audit_conf_load(const char *path, struct audit_conf *);
void		 audit_conf_defaults(struct audit_conf *);
const char	*audit_action_name(enum audit_action);
const char	*audit_retention_name(enum audit_retention);
/* The largest frame a writer may send: an event plus its code, escaped. */
size_t		 audit_frame_max(const struct audit_conf *);

#endif
