/*
 * A call's files and inline_files.  Paths and contents come from the
 * agent: the shapes are args.c's, sizes are capped before anything is
 * decoded, and the whole call is checked against the profile's rules
 * here, and against the session's /inputs where the bytes land
 * (sandbox/stage.c), before any of it is written.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "inputs.h"
#include "util.h"

/* The one base64 decoder of inputs: -1 when content is not base64. */
static int
inline_decode(struct arg_file *f)
{
	int	 n;

	f->data = xmalloc(f->clen / 4 * 3 + 1);
	if ((n = base64_decode(f->content, f->clen, f->data,
	    f->clen / 4 * 3)) < 0)
		return -1;
	f->len = (size_t)n;
	return 0;
}

/* One inline file's bytes, decoded when base64 (never more than a file
 * may have). */
static int
inline_bytes(struct arg_file *f, const struct input_rules *r,
    struct stage_item *it, char *err, size_t errlen)
{
	it->name = f->name;
	if (!f->base64) {
		it->data = (const uint8_t *)f->content;
		it->len = f->clen;
		return 0;
	}
	if (f->clen / 4 * 3 > r->inline_max_file + 2) {
		snprintf(err, errlen, "%s: about %zu bytes is more than an "
		    "inline input may have (inputs.inline_max_file, %llu)",
		    f->name, f->clen / 4 * 3,
		    (unsigned long long)r->inline_max_file);
		return -1;
	}
	if (inline_decode(f) == -1) {
		snprintf(err, errlen, "%s: content is not valid base64",
		    f->name);
		return -1;
	}
	it->data = f->data;
	it->len = f->len;
	return 0;
}

int
inputs_check(struct exec_args *x, const struct input_rules *r,
    struct stage_item items[INPUTS_MAX], size_t *n, char *err,
    size_t errlen)
{
	size_t	 i;

	*n = 0;
	memset(items, 0, INPUTS_MAX * sizeof(*items));
	for (i = 0; i < INPUTS_MAX; i++)
		items[i].fd = -1;
	for (i = 0; i < x->files.n; i++)
		items[(*n)++].path = x->files.v[i];
	for (i = 0; i < x->inline_files.n; i++)
		if (inline_bytes(&x->inline_files.v[i], r, &items[(*n)++],
		    err, errlen) == -1)
			return -1;
	return stage_check(r, items, *n, err, errlen);
}

int
inputs_stage(struct session *s, struct stage_item *items, size_t n,
    json_t *staged, char *err, size_t errlen)
{
	char	 sum[SHA256_HEX + 8];
	size_t	 i;

	if (session_stage_files(s, items, n, err, errlen) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		snprintf(sum, sizeof(sum), "sha256:%s", items[i].sha256);
		json_array_append_new(staged, json_pack("{s:s, s:I, s:s}",
		    "name", items[i].name, "size", (json_int_t)items[i].size,
		    "sha256", sum));
	}
	return 0;
}
