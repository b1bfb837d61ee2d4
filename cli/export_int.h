/*
 * Private to cli/export*.c: the checked record, the event table's row and
 * the document helpers that export.c shares with the per-format builders
 * (export_ecs.c, export_ocsf.c).  The API is export.h; include it, not this.
 *
 * Ownership: a struct record borrows obj and every string in it from the
 * caller of export_record() until that call returns; message is its own.
 * The rule is a row of export.c's static table.  The export_put*() helpers
 * take over the reference they are handed even when they fail (the failure
 * latches in doc.err); every export_get*() result is borrowed from obj.
 */
#ifndef STOCKADE_EXPORT_INT_H
#define STOCKADE_EXPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "export.h"

#define EXPORT_PRODUCT		"Stockade"
#define EXPORT_PROVIDER		"stockade-auditd"
#define EXPORT_MESSAGE_MAX	512	/* a rendered message, NUL included */
#define EXPORT_PORT_MAX		65535

/* ECS event.outcome; OCSF status_id and status. */
enum outcome {
	OUT_UNKNOWN,
	OUT_SUCCESS,
	OUT_FAILURE,
};

/* An OCSF security control decision (action_id, disposition_id). */
enum control {
	CTL_NONE,
	CTL_ALLOWED,
	CTL_BLOCKED,
};

/* The OCSF class an event maps to; export_ocsf.c has the uids and names. */
enum oclass {
	OC_BASE,
	OC_PROCESS,
	OC_FINDING,
	OC_NETWORK,
	OC_DNS,
	OC_LIFECYCLE,
	OC_API,
	OC_AUTH,
	OC_CONFIG,
	OC_FILE,
	OC_HTTP,
};

/* Extra mappings a rule turns on. */
#define X_ALERT		0x01	/* ECS event.kind "alert" */
#define X_DNS		0x02	/* name and qtype are a DNS question */
#define X_WRITER	0x04	/* writer{} is the peer (daemon-written only) */
#define X_FLOW		0x08	/* bytes_/packets_ out and in, start, end */
#define X_HTTP		0x10	/* method, host, port, path, status, bytes */

/*
 * One row of the event table in export.c.  message and detail are
 * templates for export_render(): "{key}" or "{key.sub}" becomes that field.
 */
struct rule {
	const char	*event;
	int		 requires;	/* R_* in export.c; all must hold */
	int		 flags;		/* X_* */
	const char	*category[2];	/* ECS event.category */
	const char	*type[2];	/* ECS event.type */
	enum outcome	 outcome;
	enum oclass	 oclass;
	int		 activity_id;
	const char	*activity;
	int		 severity_id;	/* OCSF severity_id, 0-6 */
	enum control	 control;
	const char	*message;
	const char	*detail;	/* OCSF status_detail, NULL: none */
};

/* A record's framing, checked, and the rule that maps it. */
struct record {
	const json_t		*obj;
	const char		*event;
	const char		*ts;
	int64_t			 ms;
	json_int_t		 seq;
	const char		*hash;
	const struct rule	*rule;
	char			 message[EXPORT_MESSAGE_MAX];
};

/* A document under construction; err latches the first failed insertion. */
struct doc {
	json_t	*root;
	int	 err;
};

/* Per-format builders: a new reference, or NULL if any insertion failed. */
json_t		*export_ecs_map(const struct record *, const char *hostname);
json_t		*export_ocsf_map(const struct record *, const char *hostname);

/* Starts d with an empty object; -1 when out of memory. */
int		 export_doc_init(struct doc *d);
/* d's root (the caller's reference), or NULL, d freed, if anything failed. */
json_t		*export_doc_finish(struct doc *d);

/* Sets the member at a dotted path of ours, making objects on the way. */
void		 export_put(struct doc *d, const char *path, json_t *v);
/* A copy of s at path; nothing when s is NULL. */
void		 export_put_str(struct doc *d, const char *path, const char *s);
/* obj's string field key, copied to path when it is a string. */
void		 export_put_str_from(struct doc *d, const char *path,
		    const json_t *obj, const char *key);
/* obj's integer field key, copied to path when it is in [min, max]. */
void		 export_put_int_from(struct doc *d, const char *path,
		    const json_t *obj, const char *key, json_int_t min,
		    json_int_t max);

const char	*export_get_str(const json_t *obj, const char *key);
/* 0 and *v when obj's field key is an integer in [min, max], else -1. */
int		 export_get_int(const json_t *obj, const char *key,
		    json_int_t min, json_int_t max, json_int_t *v);
/* obj's field key when it parses as an IPv4 or IPv6 address, else NULL. */
const char	*export_ip(const json_t *obj, const char *key);
/* dst_ip when it parses as an IPv4 or IPv6 address, else NULL. */
const char	*export_dst_ip(const json_t *obj);
/* The source address (src_ip, remote_addr, client.remote_addr), the
 * object and key of its port, or NULL. */
const char	*export_src_ip(const json_t *obj, const json_t **from,
		    const char **port_key);
/* A delivered file's sha256 in hex without the prefix, or NULL. */
const char	*export_file_sha256(const json_t *obj);
/* The hex digits of a "sha256:" code_hash, else NULL. */
const char	*export_code_sha256(const json_t *obj);
/* proto in lowercase, or NULL when it is longer than any protocol name. */
json_t		*export_transport_lower(const char *proto);
/* Every field of obj but the framing, deep-copied: a new reference. */
json_t		*export_original_fields(const json_t *obj);
/* Expands a template; a missing or compound field renders "?". */
void		 export_render(const char *tmpl, const json_t *obj, char *out,
		    size_t outlen);

#endif
