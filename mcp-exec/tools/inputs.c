/*
 * A call's files[].  Paths and inline contents come from the agent: the
 * shapes are checked here, sizes are capped before anything is decoded,
 * and names and budgets are checked again where the bytes land
 * (sandbox/stage.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "inputs.h"
#include "util.h"

int
inputs_check(struct tool_req *rq, const json_t *files)
{
	static const char *const keys[] = { "name", "content", "encoding",
	    NULL };
	const json_t	*v, *x;
	const char	*key, *enc;
	size_t		 i, k;

	if (files == NULL)
		return 0;
	if (!json_is_array(files) || json_array_size(files) > TOOL_FILES_MAX) {
		tool_fault(rq, TOOL_BAD_PARAMS, "arguments.files: an array "
		    "of at most %d items", TOOL_FILES_MAX);
		return -1;
	}
	json_array_foreach(files, i, v) {
		if (json_is_string(v))
			continue;
		if (!json_is_object(v) ||
		    !json_is_string(json_object_get(v, "name")) ||
		    !json_is_string(json_object_get(v, "content"))) {
			tool_fault(rq, TOOL_BAD_PARAMS, "arguments.files[%zu]:"
			    " a host path, or {name, content, encoding}", i);
			return -1;
		}
		json_object_foreach((json_t *)v, key, x) {
			for (k = 0; keys[k] != NULL; k++)
				if (strcmp(key, keys[k]) == 0)
					break;
			if (keys[k] == NULL) {
				tool_fault(rq, TOOL_BAD_PARAMS, "arguments."
				    "files[%zu].%.64s: unknown property", i,
				    key);
				return -1;
			}
		}
		if ((x = json_object_get(v, "encoding")) != NULL &&
		    (!json_is_string(x) || ((enc = json_string_value(x)),
		    strcmp(enc, "utf-8") != 0 && strcmp(enc, "base64") != 0))) {
			tool_fault(rq, TOOL_BAD_PARAMS, "arguments.files[%zu]."
			    "encoding: \"utf-8\" or \"base64\"", i);
			return -1;
		}
	}
	return 0;
}

/* One inline item: decoded (capped first), then staged. */
static int
stage_one(struct session *s, size_t i, const json_t *v, uint64_t *total,
    char *err, size_t errlen)
{
	const struct input_rules *r = &session_profile(s)->inputs;
	const char	*name = json_string_value(json_object_get(v, "name"));
	const char	*content = json_string_value(json_object_get(v,
			    "content"));
	const char	*enc = json_string_value(json_object_get(v,
			    "encoding"));
	size_t		 clen = json_string_length(json_object_get(v,
			    "content"));
	const uint8_t	*data = (const uint8_t *)content;
	uint8_t		*buf = NULL;
	size_t		 len = clen;
	int		 n, rv;

	if (enc != NULL && strcmp(enc, "base64") == 0) {
		/* Never decode more than a file may have. */
		if (clen / 4 * 3 > r->inline_max_file + 2) {
			snprintf(err, errlen, "files[%zu] (%s): about %zu bytes "
			    "is more than an inline input may have "
			    "(inputs.inline_max_file, %llu)", i, name,
			    clen / 4 * 3, (unsigned long long)r->inline_max_file);
			return -1;
		}
		buf = xmalloc(clen / 4 * 3 + 1);
		if ((n = base64_decode(content, clen, buf, clen / 4 * 3)) < 0) {
			snprintf(err, errlen, "files[%zu] (%s): content is not "
			    "valid base64", i, name);
			free(buf);
			return -1;
		}
		data = buf;
		len = (size_t)n;
	}
	if (len > r->inline_max_call - *total) {
		snprintf(err, errlen, "files[%zu] (%s): the call's inline inputs"
		    " would exceed %llu bytes (inputs.inline_max_call)", i, name,
		    (unsigned long long)r->inline_max_call);
		free(buf);
		return -1;
	}
	rv = session_stage_inline(s, name, data, len, err, errlen);
	if (rv == 0)
		*total += len;
	free(buf);
	return rv;
}

int
inputs_stage(struct session *s, const json_t *files, json_t *staged,
    char *err, size_t errlen)
{
	const json_t	*v;
	const char	*hex;
	uint64_t	 total = 0, size;
	char		 name[256], sum[SHA256_HEX + 8];
	size_t		 i;

	json_array_foreach(files, i, v) {
		if (json_is_string(v) ? session_stage(s, json_string_value(v),
		    name, sizeof(name), err, errlen) == -1 :
		    stage_one(s, i, v, &total, err, errlen) == -1)
			return -1;
		if (!json_is_string(v))
			snprintf(name, sizeof(name), "%s", json_string_value(
			    json_object_get(v, "name")));
		session_staged_last(s, &size, &hex);
		snprintf(sum, sizeof(sum), "sha256:%s", hex);
		json_array_append_new(staged, json_pack("{s:s, s:I, s:s}",
		    "name", name, "size", (json_int_t)size, "sha256", sum));
	}
	return 0;
}
