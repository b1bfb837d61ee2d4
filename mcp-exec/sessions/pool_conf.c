/*
 * A profile's pool: section, for the profile loader (profile.c): on its
 * own so that what loads rules links nothing of the pool itself.  Operator
 * input; the module names go on the driver's command line, so they are
 * held to dotted Python names.
 */
#include <string.h>

#include <jansson.h>

#include "conf.h"
#include "pool.h"
#include "util.h"

/*
 * pool: {size: N, preimport: [MODULE, ...]}.
 */
void
pool_profile_section(struct conf_ctx *ctx, const json_t *root, struct profile *p)
{
	static const char *const keys[] = { "size", "preimport", NULL };
	const json_t	*v;
	json_t		*sub, *arr;
	const char	*m;
	size_t		 i, len;
	int64_t		 n;

	if (conf_get_object(ctx, root, "pool", &sub) != 1)
		return;
	conf_check_keys(ctx, sub, keys);
	if (conf_get_int(ctx, sub, "size", 0, PROFILE_POOL_MAX, &n) == 1)
		p->pool_size = (unsigned)n;
	if (conf_get_array(ctx, sub, "preimport", &arr) != 1)
		return;
	json_array_foreach(arr, i, v) {
		m = json_string_value(v);
		len = strlen(p->pool_preimport);
		if (m == NULL || m[0] == '\0' || strchr("0123456789.", m[0]) ||
		    m[strlen(m) - 1] == '.' ||
		    strspn(m, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789_.") != strlen(m) || strstr(m, "..") != NULL ||
		    xsnprintf(p->pool_preimport + len, sizeof(p->pool_preimport) -
		    len, "%s%s", len ? "," : "", m) == -1) {
			conf_error(ctx, v, "preimport: module names (letters, "
			    "digits, '_', '.'), at most %d characters in all",
			    PROFILE_PREIMPORT_MAX - 1);
			p->pool_preimport[len] = '\0';
		}
	}
}
