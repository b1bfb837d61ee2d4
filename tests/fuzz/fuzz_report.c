/*
 * libFuzzer target for cli/report*.c: arbitrary bytes as audit log lines
 * (one JSON record each, as a tampered log may hold), rendered twice; and
 * the same bytes cut in two as two versions of a policy file, diffed.
 * Every '<' on the page must open one of the report's own elements (no
 * record or file can add markup), and the same records give the same
 * bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report.h"
#include "util.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The elements the report writes; anything else is injected markup. */
static const char *const fuzz_tags[] = {
	"!DOCTYPE html>", "html ", "/html>", "head>", "/head>", "meta ",
	"title>", "/title>", "style>", "/style>", "body>", "/body>",
	"section ", "section>", "/section>", "h1>", "/h1>", "h2>", "/h2>",
	"h3>", "/h3>", "p>", "p ", "/p>", "code>", "/code>", "span ",
	"/span>", "strong>", "/strong>", "table>", "/table>", "caption>",
	"/caption>", "tr>", "/tr>", "th>", "/th>", "td>", "td ", "/td>",
	"pre ", "/pre>", "mark>", "/mark>", "details ", "/details>",
	"summary>", "/summary>", "svg ", "/svg>", "text ", "/text>",
	"rect ", "/rect>", "title>", "/title>", "br>", "del>", "/del>",
	"ins>", "/ins>",
};

/* Traps unless every '<' in page opens one of the report's elements. */
static void
fuzz_check_tags(const char *page)
{
	const char	*lt;
	size_t		 i;

	for (lt = page; (lt = strchr(lt, '<')) != NULL; lt++) {
		for (i = 0; i < nitems(fuzz_tags); i++)
			if (strncmp(lt + 1, fuzz_tags[i],
			    strlen(fuzz_tags[i])) == 0)
				break;
		if (i == nitems(fuzz_tags))
			__builtin_trap();
	}
}

static char *
fuzz_render(const json_t *recs, const json_t *loads)
{
	struct report_verdict	 v = { REPORT_INTACT, "s", "", "src", "all",
	    NULL, 0 };
	char			*buf = NULL;
	size_t			 n = 0;
	FILE			*f;

	if ((f = open_memstream(&buf, &n)) == NULL)
		abort();
	if (report_render(f, &v, recs, loads, NULL, NULL) == -1)
		__builtin_trap();
	fclose(f);
	return buf;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t		*recs = json_array(), *loads = json_array(), *rec;
	const char	*p = (const char *)data, *end = p + size, *nl;
	char		*a, *b;
	size_t		 n = 0;
	FILE		*f;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if ((rec = json_loadb(p, nl ? (size_t)(nl - p) :
		    (size_t)(end - p), 0, NULL)) != NULL) {
			/* A policy_load is also a load, as bundle_scan lists it. */
			if (json_is_object(rec) && json_is_string(
			    json_object_get(rec, "program")))
				json_array_append_new(loads, json_pack("{s:i, "
				    "s:O}", "seq", (int)json_array_size(recs),
				    "rec", rec));
			json_array_append_new(recs, rec);
		}
		p = nl ? nl + 1 : end;
	}
	a = fuzz_render(recs, loads);
	b = fuzz_render(recs, loads);
	if (strcmp(a, b) != 0)
		__builtin_trap();
	fuzz_check_tags(a);
	free(a);
	a = NULL;
	if ((f = open_memstream(&a, &n)) == NULL)
		abort();
	report_diff(f, (const char *)data, size / 2, (const char *)data +
	    size / 2, size - size / 2);
	fclose(f);
	fuzz_check_tags(a);
	free(a);
	free(b);
	json_decref(recs);
	json_decref(loads);
	return 0;
}
