/*
 * The report's one escaper and its timeline drawing.  Input is untrusted
 * UTF-8 (or not UTF-8 at all, for code blobs): markup characters become
 * entities, and characters that could reorder or hide text (bidi controls,
 * zero-width, C0/C1 controls) or bytes that are no UTF-8 are shown by name.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "export.h"
#include "report.h"
#include "util.h"

#define SVG_WIDTH	1000
#define SVG_LANE	18	/* px per lane: calls, refusals, network */
#define SVG_LEFT	90	/* px for lane names */

/* Decodes one UTF-8 sequence; its length, or 0 when it is not valid. */
static size_t
utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
	size_t	 n, i;
	uint32_t c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2; c = s[0] & 0x1f; min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3; c = s[0] & 0x0f; min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4; c = s[0] & 0x07; min = 0x10000;
	} else
		return 0;
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* Characters shown by name: they reorder, hide or break text. */
static int
shown_by_name(uint32_t c)
{
	return (c < 0x20 && c != '\n' && c != '\t') ||
	    (c >= 0x7f && c <= 0x9f) ||		/* DEL, C1 controls */
	    c == 0xad || c == 0x061c || c == 0x180e ||
	    (c >= 0x200b && c <= 0x200f) ||	/* zero-width, LRM, RLM */
	    (c >= 0x2028 && c <= 0x202e) ||	/* separators, embeddings */
	    (c >= 0x2060 && c <= 0x206f) ||	/* joiners, isolates */
	    c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb) ||
	    (c >= 0xe0000 && c <= 0xe007f);	/* tag characters */
}

void
report_esc(FILE *f, const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, n;
	uint32_t		 c;

	while (i < len) {
		if ((n = utf8_decode(p + i, len - i, &c)) == 0) {
			fprintf(f, "\u27e80x%02X\u27e9", p[i]);
			i++;
			continue;
		}
		i += n;
		switch (c) {
		case '&': fputs("&amp;", f); continue;
		case '<': fputs("&lt;", f); continue;
		case '>': fputs("&gt;", f); continue;
		case '"': fputs("&quot;", f); continue;
		case '\'': fputs("&#39;", f); continue;
		}
		if (shown_by_name(c))
			fprintf(f, "\u27e8U+%04X\u27e9", (unsigned)c);
		else
			fwrite(p + i - n, 1, n, f);
	}
}

void
report_esc_cap(FILE *f, const char *s, size_t len, size_t cap)
{
	size_t	 n = len;

	if (n > cap) {
		n = cap;
		/* Do not cut a UTF-8 sequence: back off its continuation. */
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	report_esc(f, s, n);
	if (n < len)
		fprintf(f, "<span class=cut> \u2026 %zu more bytes not shown"
		    "</span>", len - n);
}

void
report_esc_json(FILE *f, const json_t *v, size_t cap)
{
	char	*text;

	if (json_is_string(v)) {
		report_esc_cap(f, json_string_value(v), json_string_length(v),
		    cap);
		return;
	}
	if (v == NULL)
		return;
	/* Sorted keys: the same record prints the same whatever its order. */
	if ((text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS |
	    JSON_ENCODE_ANY)) == NULL)
		return;
	report_esc_cap(f, text, strlen(text), cap);
	free(text);
}

static int64_t
rec_ms(const json_t *rec)
{
	int64_t	 ms;

	if (export_ts_ms(json_string_value(json_object_get(rec, "ts")),
	    &ms) == -1)
		return -1;
	return ms;
}

static long
xpos(int64_t ms, int64_t t0, int64_t span)
{
	if (ms < t0)
		ms = t0;
	return SVG_LEFT + (long)((ms - t0) * (SVG_WIDTH - SVG_LEFT - 10) /
	    span);
}

/* A mark's tooltip: the event, its seq and what it was about, escaped. */
static void
svg_title(FILE *f, const json_t *rec, const char *what)
{
	static const char *const keys[] = { "ts", "reason", "rule_id",
	    "dst_ip", "dst_port", "name", "bytes_out", "bytes_in",
	    "duration_ms", "exit_code", "message" };
	const json_t	*v;
	size_t		 i;

	fputs("<title>", f);
	report_esc(f, what, strlen(what));
	fprintf(f, " seq %lld", json_integer_value(json_object_get(rec,
	    "seq")));
	for (i = 0; i < nitems(keys); i++) {
		if ((v = json_object_get(rec, keys[i])) == NULL)
			continue;
		fprintf(f, " %s=", keys[i]);
		report_esc_json(f, v, REPORT_CELL_MAX);
	}
	fputs("</title>", f);
}

static const char *
call_class(const json_t *done)
{
	const char	*end = json_string_value(json_object_get(done, "end"));

	if (done == NULL)
		return "open";
	if (json_is_string(json_object_get(done, "event")) && strcmp(
	    json_string_value(json_object_get(done, "event")),
	    "execution_lost") == 0)
		return "lost";
	if (json_is_true(json_object_get(done, "oom_killed")) ||
	    (end != NULL && strcmp(end, "oom") == 0))
		return "oom";
	if (json_is_true(json_object_get(done, "timed_out")) ||
	    (end != NULL && strcmp(end, "timeout") == 0))
		return "timeout";
	return json_integer_value(json_object_get(done, "exit_code")) == 0 ?
	    "ok" : "fail";
}

/*
 * calls: [{started, done}] (either may be absent); events: records drawn
 * as marks (refusals, denials, flows, notes).  Time runs left to right
 * from the first to the last record of the session.
 */
void
report_timeline(FILE *f, const json_t *calls, const json_t *events)
{
	const json_t	*c, *s, *d, *e;
	int64_t		 t0 = INT64_MAX, t1 = 0, a, b, ms;
	size_t		 i, n = 0;
	long		 xa, xb;
	int		 lane;
	const char	*ev, *cls;

	json_array_foreach(calls, i, c) {
		s = json_object_get(c, "started");
		d = json_object_get(c, "done");
		if ((ms = rec_ms(s ? s : d)) >= 0 && ms < t0)
			t0 = ms;
		if ((ms = rec_ms(d ? d : s)) > t1)
			t1 = ms;
	}
	json_array_foreach(events, i, e) {
		if ((ms = rec_ms(e)) >= 0 && ms < t0)
			t0 = ms;
		if (ms > t1)
			t1 = ms;
	}
	if (t0 == INT64_MAX)
		return;
	fprintf(f, "<svg class=timeline role=img width=%d height=%d "
	    "viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\">"
	    "<text x=2 y=13>calls</text><text x=2 y=31>events</text>"
	    "<text x=2 y=49>network</text>", SVG_WIDTH, 3 * SVG_LANE + 16,
	    SVG_WIDTH, 3 * SVG_LANE + 16);
	json_array_foreach(calls, i, c) {
		if (n++ >= REPORT_MARKS_MAX)
			break;
		s = json_object_get(c, "started");
		d = json_object_get(c, "done");
		b = rec_ms(d ? d : s);
		a = s ? rec_ms(s) : b - json_integer_value(json_object_get(d,
		    "duration_ms"));
		xa = xpos(a, t0, t1 - t0 + 1);
		xb = xpos(b, t0, t1 - t0 + 1);
		cls = call_class(d);
		fprintf(f, "<rect class=\"call %s\" x=%ld y=2 width=%ld "
		    "height=14>", cls, xa, xb - xa < 2 ? 2 : xb - xa);
		svg_title(f, d ? d : s, cls);
		fputs("</rect>", f);
	}
	json_array_foreach(events, i, e) {
		if (n++ >= REPORT_MARKS_MAX)
			break;
		ev = json_string_value(json_object_get(e, "event"));
		lane = ev != NULL && strncmp(ev, "egress_", 7) == 0 ? 2 :
		    ev != NULL && strncmp(ev, "dns_", 4) == 0 ? 2 : 1;
		xa = xpos(rec_ms(e), t0, t1 - t0 + 1);
		/* The event name is the writer's: escaped like any text. */
		fputs("<rect class=\"mark ", f);
		report_esc(f, ev ? ev : "other", strlen(ev ? ev : "other"));
		fprintf(f, "\" x=%ld y=%d width=3 height=14>", xa - 1,
		    2 + lane * SVG_LANE);
		svg_title(f, e, ev ? ev : "record");
		fputs("</rect>", f);
	}
	fputs("</svg>\n<p class=legend>Calls: <span class=ok>exited 0</span>"
	    ", <span class=fail>other exit</span>, <span class=bad>timeout, "
	    "OOM or lost</span>, <span class=open>no end recorded</span>; "
	    "marks: <span class=deny>refusals and denials</span>, <span "
	    "class=ev>other events</span> (hover for details).</p>\n", f);
	if (n > REPORT_MARKS_MAX)
		fprintf(f, "<p class=cut>The timeline draws the first %d calls "
		    "and events; the tables below count them all.</p>\n",
		    REPORT_MARKS_MAX);
}
