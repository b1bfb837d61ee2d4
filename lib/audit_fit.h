/*
 * Records within what stockade-auditd keeps.  A writer's record is at most
 * AUDIT_RECORD_MAX bytes as the log writes it (compact JSON, every
 * non-ASCII character escaped), execution_started's code aside: auditd
 * refuses a limits.max_event_bytes below it.  What a sandbox or a client
 * can grow (a list of packages, artifacts, inputs, pattern hits, a
 * command's arguments, a long name) gets a byte budget of its own; a cut
 * list says so with <key>_count (the true count) and <key>_truncated.
 *
 * The budgets and the fixed fields of the largest record (code_execution:
 * client, trace, principal, limits, ...) add up to less than
 * AUDIT_RECORD_MAX; tests/unit/check_audit_fit.c builds that record.
 */
#ifndef STOCKADE_AUDIT_FIT_H
#define STOCKADE_AUDIT_FIT_H

#include <stddef.h>
#include <jansson.h>

#define AUDIT_RECORD_MAX	(32 * 1024)
#define AUDIT_PACKAGES_BUDGET	(12 * 1024)	/* code_execution.packages */
#define AUDIT_ARTIFACTS_BUDGET	(6 * 1024)	/* code_execution.artifacts */
#define AUDIT_HITS_BUDGET	(2 * 1024)	/* pattern_hits */
#define AUDIT_INPUTS_BUDGET	(2 * 1024)	/* inputs */
#define AUDIT_ARGS_BUDGET	(2 * 1024)	/* argv (its args) */
#define AUDIT_NAME_MAX		256		/* argv.command */
#define AUDIT_OUTPUT_SAMPLE_MAX	1024	/* stdout_sample, stderr_sample */
/* Bytes of policy file text one policy_load carries (files[].content),
 * all files together; auditd keeps them as blobs beside the log. */
#define AUDIT_POLICY_KEEP_MAX	(256 * 1024)

/* Bytes v takes in a record (compact, ASCII-escaped); 0 for NULL. */
size_t	 audit_json_size(const json_t *v);
/*
 * Cuts the array obj[key] to its first items that fit in budget bytes;
 * when it cut, sets obj[<key>_count] (how many there were) and
 * obj[<key>_truncated].  Nothing happens when obj[key] is no array.
 */
void	 audit_fit_list(json_t *obj, const char *key, size_t budget);
/*
 * Cuts the string obj[key] at a character boundary to what takes at most
 * max bytes in a record; when it cut, sets obj[<key>_truncated].
 */
void	 audit_fit_string(json_t *obj, const char *key, size_t max);
/*
 * Holds each list of a tool call's record (code_execution,
 * execution_started, call_refused) that the call's code or client can
 * grow to its budget: packages, artifacts, pattern_hits, inputs, argv.
 */
void	 audit_fit_call(json_t *ev);
/*
 * Adds the first bytes of a call's stdout and stderr (as the client got
 * them) to its code_execution as stdout_sample and stderr_sample, each
 * within AUDIT_OUTPUT_SAMPLE_MAX record bytes; auditd keeps them only
 * where code.retention (or the profile's) is sample or full.
 */
void	 audit_output_sample(json_t *ev, const char *out, const char *err);
/*
 * Adds content (the file's text) to each {path, sha256} of a policy_load's
 * files while it still hashes to sha256, is UTF-8 and fits what is left
 * of AUDIT_POLICY_KEEP_MAX: the audit side keeps each version loaded, so
 * a report can show what changed between loads.
 */
void	 audit_policy_content(json_t *files);

#endif
