/*
 * A call's results: what the driver says the cell displayed (the trailing
 * expression, display() calls, figures).  The driver runs the caller's
 * code, so its list is untrusted: only known keys of known types are kept,
 * in new objects, within the profile's stdout cap, and an image must name
 * an artifact this session really collected.  Split from session.c for
 * length; the same concern.
 */
#include <stdio.h>
#include <string.h>

#include "session_int.h"
#include "utf8.h"

static const char *const result_types[] = { "text", "image", "html", "json",
	NULL };

/* The bytes an item's text costs against the cap. */
static size_t
item_cost(const json_t *o)
{
	const json_t	*j;
	size_t		 n = 0;

	n += json_string_length(json_object_get(o, "text"));
	n += json_string_length(json_object_get(o, "html"));
	if ((j = json_object_get(o, "json")) != NULL)
		n += json_dumpb(j, NULL, 0, JSON_COMPACT);
	return n;
}

/* One item rebuilt from the driver's, or NULL when it is malformed. */
static json_t *
result_item(const json_t *in)
{
	const char	*type = json_string_value(json_object_get(in, "type"));
	const json_t	*text = json_object_get(in, "text");
	const json_t	*html = json_object_get(in, "html");
	const json_t	*j = json_object_get(in, "json");
	const json_t	*art = json_object_get(in, "artifact");
	const char	*name;
	json_t		*o;
	size_t		 i;

	if (!json_is_object(in) || type == NULL || !json_is_string(text))
		return NULL;
	for (i = 0; result_types[i] != NULL; i++)
		if (strcmp(type, result_types[i]) == 0)
			break;
	if (result_types[i] == NULL)
		return NULL;
	o = json_pack("{s:s, s:O}", "type", type, "text", text);
	if (o == NULL)
		return NULL;
	if (json_is_true(json_object_get(in, "main")))
		json_object_set_new(o, "main", json_true());
	if (strcmp(type, "html") == 0) {
		if (!json_is_string(html))
			goto bad;
		json_object_set(o, "html", (json_t *)html);
	} else if (strcmp(type, "json") == 0) {
		if (j == NULL)
			goto bad;
		json_object_set_new(o, "json", json_deep_copy(j));
	} else if (strcmp(type, "image") == 0) {
		/* A name as the workspace rules have it; the artifact itself
		 * is looked up once collection is over. */
		if ((name = json_string_value(art)) == NULL ||
		    json_string_length(art) > ARTIFACT_NAME_MAX ||
		    utf8_name_check(name, json_string_length(art), NULL) !=
		    UTF8_NAME_OK)
			goto bad;
		json_object_set(o, "artifact", (json_t *)art);
	}
	return o;
bad:
	json_decref(o);
	return NULL;
}

json_t *
session_results_check(const struct session *s, const json_t *raw,
    int *truncated)
{
	json_t		*out = json_array(), *o;
	const json_t	*v;
	size_t		 i, budget = s->prof.stdout_max, cost;

	*truncated = json_is_true(json_object_get(raw, "results_truncated"));
	raw = json_object_get(raw, "results");
	if (!json_is_array(raw))
		return out;
	json_array_foreach(raw, i, v) {
		if (i >= SESSION_RESULTS_MAX) {
			*truncated = 1;
			break;
		}
		if ((o = result_item(v)) == NULL)
			continue;
		if ((cost = item_cost(o)) > budget) {
			json_decref(o);
			*truncated = 1;
			break;
		}
		budget -= cost;
		json_array_append_new(out, o);
	}
	return out;
}

/* Images point at their artifacts; one the session does not hold (not
 * written, of a type not collected, over a cap) is dropped. */
void
session_results_link(const struct session *s, json_t *results)
{
	const char	*name;
	json_t		*o, *meta;
	size_t		 i;

	for (i = 0; i < json_array_size(results); ) {
		o = json_array_get(results, i);
		name = json_string_value(json_object_get(o, "artifact"));
		if (name == NULL) {
			i++;
			continue;
		}
		if ((meta = json_object_get(s->seen, name)) == NULL) {
			json_array_remove(results, i);
			continue;
		}
		json_object_set(o, "uri", json_object_get(meta, "uri"));
		json_object_set(o, "mime", json_object_get(meta, "mime"));
		i++;
	}
}
