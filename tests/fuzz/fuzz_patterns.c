/*
 * libFuzzer target for mcp-exec/patterns.c: scans arbitrary bytes with the
 * shipped rules/patterns.yaml, loaded once.  Trusts nothing in the input;
 * hits are expected, crashes and scanner errors other than the clock are
 * not (a shipped regex that reaches pcre2's limits on small input is a bug).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tools/patterns.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* `make fuzz` runs targets from build/fuzz, `make check` from the root. */
static const char *const rules_dirs[] = { "rules", "../../rules" };

static struct patterns *
shipped(void)
{
	static struct patterns	*p;
	size_t			 i;

	for (i = 0; p == NULL && i < sizeof(rules_dirs) /
	    sizeof(rules_dirs[0]); i++) {
		p = patterns_load(rules_dirs[i]);
		/* A missing file loads as no rules: look further. */
		if (p != NULL && patterns_count(p) == 0) {
			patterns_free(p);
			p = NULL;
		}
	}
	if (p == NULL)
		__builtin_trap();
	return p;
}

/* Checks what patterns_scan() promises about its answer. */
static void
check_hits(int rc, json_t *hits, const uint8_t *data, size_t size)
{
	json_int_t	 lines = 1, line;
	const char	*id, *action, *err;
	json_t		*h;
	size_t		 i;
	int		 deny = 0, error = 0;

	for (i = 0; i < size; i++)
		if (data[i] == '\n')
			lines++;
	if (!json_is_array(hits))
		__builtin_trap();
	json_array_foreach(hits, i, h) {
		id = json_string_value(json_object_get(h, "id"));
		action = json_string_value(json_object_get(h, "action"));
		if (id == NULL || action == NULL ||
		    json_string_value(json_object_get(h, "severity")) == NULL)
			__builtin_trap();
		if (strcmp(id, "scanner_error") == 0) {
			err = json_string_value(json_object_get(h, "error"));
			if (err == NULL || strstr(err, "time limit") == NULL)
				__builtin_trap();
			error = 1;
			continue;
		}
		line = json_integer_value(json_object_get(h, "line"));
		if (line < 1 || line > lines)
			__builtin_trap();
		deny |= strcmp(action, "deny") == 0;
	}
	if (rc != (error ? -1 : deny))
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t	*hits;
	int	 rc;

	if (size > PATTERNS_CODE_MAX)
		return 0;
	rc = patterns_scan(shipped(), (const char *)data, size, &hits);
	check_hits(rc, hits, data, size);
	json_decref(hits);
	return 0;
}
