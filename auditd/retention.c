/*
 * Code retention (retention.h).  The code and policy texts come from an
 * authenticated but untrusted writer: each is stored only under the hash
 * it really has, and only when the record says that hash, so a blob's
 * name is always the sha256 of its bytes and the chain covers it through
 * the record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_fit.h"
#include "retention.h"
#include "util.h"

/* Start of the UTF-8 sequence holding byte i (the code is valid UTF-8). */
static size_t
char_start(const char *s, size_t i)
{
	while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
		i--;
	return i;
}

/* The first and last n bytes, cut at character boundaries, never overlapping. */
static int
add_sample(json_t *ev, const char *code, size_t len, size_t n)
{
	size_t	 head, tail;

	head = len <= n ? len : char_start(code, n);
	tail = len - head <= n ? head : char_start(code, len - n);
	if (tail < head)
		tail = head;
	if (json_object_set_new(ev, "code_head", json_stringn(code, head)) ||
	    json_object_set_new(ev, "code_tail", json_stringn(code + tail,
	    len - tail)) || json_object_set_new(ev, "code_sample_bytes",
	    json_integer((json_int_t)n)))
		return -1;
	return 0;
}

/*
 * What to keep: audit.yaml's code.retention, or the stricter one a writer
 * asks for in code_retention_min (a profile's).  A writer can only make
 * the log keep more, never less.
 */
static int
retention_wanted(const struct audit_conf *c, const json_t *ev,
    const char *name, enum audit_retention *keep, char *err, size_t errlen)
{
	const json_t	*v = json_object_get(ev, "code_retention_min");
	const char	*s;
	int		 r;

	*keep = c->code_retention;
	if (v == NULL)
		return 0;
	if (name == NULL || (strcmp(name, "execution_started") != 0 &&
	    strcmp(name, "code_execution") != 0)) {
		snprintf(err, errlen, "field 'code_retention_min' is accepted "
		    "only in execution_started and code_execution");
		return -1;
	}
	s = json_string_value(v);
	for (r = RETAIN_HASH; r <= RETAIN_FULL; r++)
		if (s != NULL && strcmp(s, audit_retention_name(
		    (enum audit_retention)r)) == 0)
			break;
	if (r > RETAIN_FULL) {
		snprintf(err, errlen, "%s: code_retention_min: hash, sample or "
		    "full", name);
		return -1;
	}
	if ((enum audit_retention)r > *keep)
		*keep = (enum audit_retention)r;
	return 0;
}

/*
 * A policy_load's files[].content: kept under the hash the record names
 * when the text really has it, so the chain covers the blob as it does
 * code.  The text leaves the record; kept: true says the blob is there.
 */
static int
policy_keep(json_t *ev, struct retained_code *out, char *err, size_t errlen)
{
	struct retained_code	*rc = out;
	json_t			*f, *v;
	const char		*want;
	char			 hex[SHA256_HEX + 1];
	size_t			 i, len, total = 0;

	json_array_foreach(json_object_get(ev, "files"), i, f) {
		if (json_object_get(f, "kept") != NULL) {
			snprintf(err, errlen, "policy_load: field 'kept' is set "
			    "by stockade-auditd, not by writers");
			return -1;
		}
		if ((v = json_object_get(f, "content")) == NULL)
			continue;
		want = json_string_value(json_object_get(f, "sha256"));
		if (want != NULL && strncmp(want, "sha256:", 7) == 0)
			want += 7;
		if (!json_is_string(v) || want == NULL) {
			snprintf(err, errlen, "policy_load: files[%zu]: content "
			    "must be a string beside a sha256", i);
			return -1;
		}
		len = json_string_length(v);
		if ((total += len) > AUDIT_POLICY_KEEP_MAX) {
			snprintf(err, errlen, "policy_load: file contents exceed "
			    "%d bytes", AUDIT_POLICY_KEEP_MAX);
			return -1;
		}
		sha256_hex(json_string_value(v), len, hex);
		if (strcmp(hex, want) != 0) {
			snprintf(err, errlen, "policy_load: files[%zu]: sha256 "
			    "is not the sha256 of content", i);
			return -1;
		}
		if (rc->data != NULL) {
			rc->next = xcalloc(1, sizeof(*rc));
			rc = rc->next;
		}
		memcpy(rc->hex, hex, sizeof(rc->hex));
		rc->data = xmalloc(len + 1);
		memcpy(rc->data, json_string_value(v), len);
		rc->len = len;
		json_object_del(f, "content");
		json_object_set_new(f, "kept", json_true());
	}
	return 0;
}

/*
 * A code_execution's stdout_sample and stderr_sample (the writer holds
 * them to AUDIT_OUTPUT_SAMPLE_MAX): kept where the code would be kept at
 * least as a sample, dropped otherwise; output_retention says which.
 */
static int
output_keep(json_t *ev, enum audit_retention keep, char *err, size_t errlen)
{
	static const char *const keys[] = { "stdout_sample", "stderr_sample" };
	const json_t	*v;
	size_t		 i, sent = 0;

	for (i = 0; i < nitems(keys); i++) {
		if ((v = json_object_get(ev, keys[i])) == NULL)
			continue;
		if (!json_is_string(v) ||
		    audit_json_size(v) > AUDIT_OUTPUT_SAMPLE_MAX) {
			snprintf(err, errlen, "code_execution: %s must be a "
			    "string of at most %d bytes", keys[i],
			    AUDIT_OUTPUT_SAMPLE_MAX);
			return -1;
		}
		sent++;
		if (keep == RETAIN_HASH)
			json_object_del(ev, keys[i]);
	}
	if (sent > 0 && json_object_set_new(ev, "output_retention",
	    json_string(keep == RETAIN_HASH ? "none" : "sample")) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

void
retention_free(struct retained_code *out)
{
	struct retained_code	*rc, *next;

	free(out->data);
	for (rc = out->next; rc != NULL; rc = next) {
		next = rc->next;
		free(rc->data);
		free(rc);
	}
	memset(out, 0, sizeof(*out));
}

int
retention_apply(const struct audit_conf *c, json_t *ev,
    struct retained_code *out, char *err, size_t errlen)
{
	const char	*name, *code, *want;
	const json_t	*v, *size;
	char		 hex[SHA256_HEX + 1];
	size_t		 len;
	enum audit_retention keep;

	static const char *const own[] = { "code_retention", "code_head",
	    "code_tail", "code_sample_bytes", "output_retention", NULL };
	size_t		 i;

	memset(out, 0, sizeof(*out));
	/* A writer must not claim a retention the daemon did not apply. */
	for (i = 0; own[i] != NULL; i++)
		if (json_object_get(ev, own[i]) != NULL) {
			snprintf(err, errlen, "field '%s' is set by "
			    "stockade-auditd, not by writers", own[i]);
			return -1;
		}
	name = json_string_value(json_object_get(ev, "event"));
	if (name != NULL && strcmp(name, "policy_load") == 0 &&
	    policy_keep(ev, out, err, errlen) == -1)
		return -1;	/* the caller frees out */
	if (retention_wanted(c, ev, name, &keep, err, errlen) == -1)
		return -1;
	if (name != NULL && strcmp(name, "code_execution") == 0 &&
	    output_keep(ev, keep, err, errlen) == -1)
		return -1;
	if ((v = json_object_get(ev, "code")) == NULL) {
		if (name != NULL && strcmp(name, "execution_started") == 0 &&
		    keep != RETAIN_HASH) {
			snprintf(err, errlen, "execution_started: field 'code' "
			    "is required: code.retention is %s",
			    audit_retention_name(keep));
			return -1;
		}
		return 0;
	}
	if (name == NULL || strcmp(name, "execution_started") != 0) {
		snprintf(err, errlen, "field 'code' is accepted only in "
		    "execution_started");
		return -1;
	}
	if (!json_is_string(v)) {
		snprintf(err, errlen, "execution_started: field 'code' must be "
		    "a string");
		return -1;
	}
	code = json_string_value(v);
	len = json_string_length(v);
	if (len > c->code_max_bytes) {
		snprintf(err, errlen, "execution_started: code of %zu bytes "
		    "exceeds code.max_bytes (%zu)", len, c->code_max_bytes);
		return -1;
	}
	/* event_validate has checked both are present and well-formed. */
	want = json_string_value(json_object_get(ev, "code_hash"));
	size = json_object_get(ev, "code_size");
	sha256_hex(code, len, hex);
	if (want == NULL || strcmp(want + 7, hex) != 0) {
		snprintf(err, errlen, "execution_started: code_hash is not the "
		    "sha256 of code");
		return -1;
	}
	if (json_integer_value(size) != (json_int_t)len) {
		snprintf(err, errlen, "execution_started: code_size is not the "
		    "length of code");
		return -1;
	}
	if (keep == RETAIN_SAMPLE &&
	    add_sample(ev, code, len, c->code_sample_bytes) == -1)
		goto nomem;
	if (keep == RETAIN_FULL) {
		memcpy(out->hex, hex, sizeof(out->hex));
		out->data = xmalloc(len + 1);
		memcpy(out->data, code, len);
		out->len = len;
	}
	/* code is freed here: copy first, then drop. */
	if (json_object_set_new(ev, "code_retention", json_string(
	    audit_retention_name(keep))) == -1)
		goto nomem;
	json_object_del(ev, "code");
	return 0;
nomem:
	free(out->data);
	out->data = NULL;
	snprintf(err, errlen, "out of memory");
	return -1;
}
