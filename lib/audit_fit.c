/*
 * Holds what a sandbox or a client can grow in a record to a byte budget,
 * so that the record stays under stockade-auditd's limit and is kept (see
 * audit_fit.h).  The values are the writer's own jansson trees: their
 * strings are valid UTF-8, whoever chose them.  Policy texts are read
 * from the files the writer itself just loaded and hashed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_fit.h"
#include "hash.h"
#include "log.h"
#include "util.h"

#define AUDIT_KEY_MAX	64	/* a key with its _count or _truncated */

size_t
audit_json_size(const json_t *v)
{
	if (v == NULL)
		return 0;
	return json_dumpb(v, NULL, 0, JSON_COMPACT | JSON_ENSURE_ASCII |
	    JSON_ENCODE_ANY);
}

/* key + suffix into out; 0 when it does not fit (keys here are ours). */
static int
suffixed(char *out, size_t len, const char *key, const char *suffix)
{
	int	 n = snprintf(out, len, "%s%s", key, suffix);

	return n > 0 && (size_t)n < len;
}

void
audit_fit_list(json_t *obj, const char *key, size_t budget)
{
	json_t		*a = json_object_get(obj, key), *cut;
	char		 k[AUDIT_KEY_MAX];
	size_t		 n, used = 2, keep, cost, i;	/* the brackets */

	if (!json_is_array(a))
		return;
	n = json_array_size(a);
	for (keep = 0; keep < n; keep++) {
		/* Each item after the first costs its comma too. */
		cost = audit_json_size(json_array_get(a, keep)) + (keep > 0);
		if (used + cost > budget)
			break;
		used += cost;
	}
	if (keep == n)
		return;
	/* A new array: the list may be shared (a call's hits go in two
	 * records, its packages stay with the session). */
	if ((cut = json_array()) == NULL)
		fatalx("audit_fit_list: out of memory");
	for (i = 0; i < keep; i++)
		json_array_append(cut, json_array_get(a, i));
	json_object_set_new(obj, key, cut);
	if (!suffixed(k, sizeof(k), key, "_truncated"))
		fatalx("audit_fit_list: key %s too long", key);
	json_object_set_new(obj, k, json_true());
	(void)suffixed(k, sizeof(k), key, "_count");	/* shorter */
	json_object_set_new(obj, k, json_integer((json_int_t)n));
}

/* What one character takes escaped (jansson's JSON_ENSURE_ASCII), at most;
 * *len is its length in bytes. */
static size_t
char_cost(const unsigned char *p, size_t *len)
{
	if (*p < 0x80) {
		*len = 1;
		return *p < 0x20 ? 6 : (*p == '"' || *p == '\\') ? 2 : 1;
	}
	*len = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
	return *len == 4 ? 12 : 6;	/* a surrogate pair, or \uXXXX */
}

void
audit_fit_string(json_t *obj, const char *key, size_t max)
{
	json_t			*s = json_object_get(obj, key);
	const unsigned char	*p;
	char			 k[AUDIT_KEY_MAX];
	size_t			 n, at = 0, used = 2, len, cost;	/* quotes */

	if (!json_is_string(s) || audit_json_size(s) <= max)
		return;
	p = (const unsigned char *)json_string_value(s);
	n = json_string_length(s);
	while (at < n) {
		cost = char_cost(p + at, &len);
		if (used + cost > max || len > n - at)
			break;
		used += cost;
		at += len;
	}
	json_object_set_new(obj, key, json_stringn((const char *)p, at));
	if (!suffixed(k, sizeof(k), key, "_truncated"))
		fatalx("audit_fit_string: key %s too long", key);
	json_object_set_new(obj, k, json_true());
}

void
audit_fit_call(json_t *ev)
{
	json_t	*argv = json_object_get(ev, "argv");

	if (ev == NULL)
		return;
	audit_fit_list(ev, "packages", AUDIT_PACKAGES_BUDGET);
	audit_fit_list(ev, "artifacts", AUDIT_ARTIFACTS_BUDGET);
	audit_fit_list(ev, "pattern_hits", AUDIT_HITS_BUDGET);
	audit_fit_list(ev, "inputs", AUDIT_INPUTS_BUDGET);
	/* A refusal may come before the session a client named is looked up. */
	audit_fit_string(ev, "session_id", AUDIT_NAME_MAX);
	/* run_command's {command, args}; `mcp-exec run`'s command line. */
	if (json_is_object(argv)) {
		/* A copy of its own to cut: the call keeps its argv. */
		argv = json_copy(argv);
		json_object_set_new(ev, "argv", argv);
		audit_fit_string(argv, "command", AUDIT_NAME_MAX);
		audit_fit_list(argv, "args", AUDIT_ARGS_BUDGET);
	} else
		audit_fit_list(ev, "argv", AUDIT_ARGS_BUDGET);
}

/* The first AUDIT_OUTPUT_SAMPLE_MAX bytes of s at most, cut at a character,
 * then to their budget in the record. */
static void
sample_set(json_t *ev, const char *key, const char *s)
{
	size_t	 n;
	json_t	*v;

	if (s == NULL)
		return;
	n = strnlen(s, AUDIT_OUTPUT_SAMPLE_MAX);
	if (n == AUDIT_OUTPUT_SAMPLE_MAX)
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	if ((v = json_stringn(s, n)) == NULL)
		return;		/* not UTF-8: capture_text makes it so */
	json_object_set_new(ev, key, v);
	audit_fit_string(ev, key, AUDIT_OUTPUT_SAMPLE_MAX);
}

void
audit_output_sample(json_t *ev, const char *out, const char *err)
{
	if (ev == NULL)
		return;
	sample_set(ev, "stdout_sample", out);
	sample_set(ev, "stderr_sample", err);
}

void
audit_policy_content(json_t *files)
{
	size_t		 i, len, left = AUDIT_POLICY_KEEP_MAX;
	json_t		*f, *text;
	const char	*path, *want;
	char		 hex[SHA256_HEX + 1], *data;

	json_array_foreach(files, i, f) {
		path = json_string_value(json_object_get(f, "path"));
		want = json_string_value(json_object_get(f, "sha256"));
		if (path == NULL || want == NULL || left == 0 ||
		    read_file(path, left, &data, &len) == -1)
			continue;	/* gone, or too big: the hash stays */
		if (strncmp(want, "sha256:", 7) == 0)
			want += 7;
		sha256_hex(data, len, hex);
		/* Changed since the load, or no text: not this version. */
		if (strcmp(hex, want) == 0 && memchr(data, '\0', len) == NULL &&
		    (text = json_stringn(data, len)) != NULL) {
			json_object_set_new(f, "content", text);
			left -= len;
		}
		free(data);
	}
}
