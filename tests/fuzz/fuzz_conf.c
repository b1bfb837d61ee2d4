/*
 * libFuzzer target for lib/conf_load.c and lib/conf_check.c: loads arbitrary bytes as a policy and,
 * when they load, walks the tree through every getter and the position
 * table.  Trusts nothing in the input; errors are expected, crashes are not.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "conf.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const fuzz_keys[] = {
	"name", "mode", "size", "port", "enabled", "rules", "limits", NULL
};
static const char *const fuzz_modes[] = { "off", "log", "enforce", NULL };

/* Every getter on one mapping, then the same on each nested mapping. */
static void
fuzz_walk(struct conf_ctx *ctx, const json_t *obj, int depth)
{
	const char	*s, *key;
	json_t		*sub, *v;
	unsigned	 line, column;
	uint64_t	 n;
	int64_t		 i;
	int		 b, e;
	size_t		 k;

	(void)conf_expect_object(ctx, obj, "fuzz");
	(void)conf_check_keys(ctx, obj, fuzz_keys);
	(void)conf_get_string(ctx, obj, "name", &s);
	(void)conf_get_enum(ctx, obj, "mode", fuzz_modes, &e);
	(void)conf_get_size(ctx, obj, "size", 1, 1ULL << 40, &n);
	(void)conf_get_int(ctx, obj, "port", 1, 65535, &i);
	(void)conf_get_bool(ctx, obj, "enabled", &b);
	if (conf_get_array(ctx, obj, "rules", &sub) == 1)
		json_array_foreach(sub, k, v) {
			(void)conf_doc_where(ctx->doc, v, &line, &column);
			conf_error(ctx, v, "rule %zu", k);
		}
	if (conf_get_object(ctx, obj, "limits", &sub) == 1 && depth < 4)
		fuzz_walk(ctx, sub, depth + 1);
	if (json_is_object(obj))
		json_object_foreach((json_t *)obj, key, v) {
			(void)conf_doc_where(ctx->doc, v, &line, &column);
			(void)conf_get_size(ctx, obj, key, 0, UINT64_MAX, &n);
		}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		 err[CONF_ERROR_LEN];
	struct conf_ctx	 ctx;
	struct conf_doc	*doc;

	doc = conf_doc_load_buf("fuzz.yaml", (const char *)data, size, err,
	    sizeof(err));
	if (doc == NULL) {
		/* A failed load always says why, and says it in one line. */
		if (err[0] == '\0' || memchr(err, '\n', strlen(err)) != NULL)
			__builtin_trap();
		return 0;
	}
	if (strlen(conf_doc_sha256(doc)) != 64)
		__builtin_trap();
	conf_ctx_init(&ctx, doc);
	fuzz_walk(&ctx, conf_doc_root(doc), 0);
	conf_doc_free(doc);
	return 0;
}
