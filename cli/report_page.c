/*
 * The report page: the verdict, the policy in force, and per session a
 * timeline, a table of its calls and the first calls in full.  Records are
 * untrusted; every string from them goes through report_esc*().  Nothing
 * here reads the clock or iterates in hash order: same input, same bytes.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "blobstore.h"
#include "hash.h"
#include "report.h"
#include "util.h"

#define CODE_PREFIX	"sha256:"

static const char style[] =
"body{font:14px/1.4 sans-serif;margin:1.5em;color:#111}"
"h1{font-size:1.5em}h2{font-size:1.2em;border-top:1px solid #999;"
"padding-top:.5em}h3{font-size:1em}"
"table{border-collapse:collapse;margin:.3em 0}"
"section table{display:block;overflow-x:auto;max-width:100%}"
"td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;"
"vertical-align:top;font-size:13px}th{background:#eee}"
"pre{background:#f6f6f6;padding:4px;white-space:pre-wrap;"
"word-break:break-all;max-height:30em;overflow:auto}"
"mark{background:#fc6}.cut{color:#a40}"
"del{background:#fdd;text-decoration:none}ins{background:#dfd;"
"text-decoration:none}"
".verdict{padding:.8em;border:3px solid;margin-bottom:1em}"
".intact{border-color:#070;background:#efe}"
".unsigned{border-color:#a70;background:#ffe}"
".tampered{border-color:#b00;background:#fee}"
".hash{font-family:monospace;font-size:12px;word-break:break-all}"
"svg text{font-size:11px}rect.call{fill:#4a4}rect.fail{fill:#e90}"
"rect.timeout,rect.oom,rect.lost{fill:#c00}rect.open{fill:#999}"
"rect.mark{fill:#36c}rect.call_refused,rect.egress_denied,"
"rect.artifact_refused,rect.dns_tunnel_suspected{fill:#c0c}"
".legend span{padding:0 4px;color:#fff}.legend .ok{background:#4a4}"
".legend .fail{background:#e90}.legend .bad{background:#c00}"
".legend .open{background:#999}.legend .deny{background:#c0c}"
".legend .ev{background:#36c}"
"@media print{details::details-content{content-visibility:visible;"
"display:block}pre{max-height:none}"
"body{margin:0}}";

static const char *
str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int
is(const char *s, const char *want)
{
	return s != NULL && want != NULL && strcmp(s, want) == 0;
}

static void
esc(FILE *f, const char *s)
{
	if (s != NULL)
		report_esc_cap(f, s, strlen(s), REPORT_TEXT_MAX);
}

/* <tr><th>label</th><td>value</td></tr>, when o has key. */
static void
row(FILE *f, const char *label, const json_t *o, const char *key)
{
	const json_t	*v = json_object_get(o, key);

	if (v == NULL)
		return;
	fprintf(f, "<tr><th>%s</th><td>", label);
	report_esc_json(f, v, REPORT_TEXT_MAX);
	fputs("</td></tr>\n", f);
}

/*
 * Every cap above bounds one part; this bounds their sum: once the page
 * holds REPORT_PAGE_MAX bytes, details stop (saying so) and only the
 * closing sections follow.
 */
static int
page_full(FILE *f)
{
	long	 at = ftell(f);

	return at < 0 || at >= REPORT_PAGE_MAX;
}

/* <td>v</td>; v NULL gives an empty cell. */
static void
cell(FILE *f, const json_t *v)
{
	fputs("<td>", f);
	report_esc_json(f, v, REPORT_CELL_MAX);
	fputs("</td>", f);
}

/* An array of objects as a table of the given columns. */
static void
table(FILE *f, const char *caption, const json_t *a, const char *const *cols,
    size_t ncols)
{
	const json_t	*e;
	size_t		 i, j;

	if (!json_is_array(a) || json_array_size(a) == 0)
		return;
	fprintf(f, "<table><caption>%s</caption><tr>", caption);
	for (j = 0; j < ncols; j++)
		fprintf(f, "<th>%s</th>", cols[j]);
	fputs("</tr>\n", f);
	json_array_foreach(a, i, e) {
		if (i >= REPORT_ROWS_MAX) {
			fprintf(f, "<tr><td colspan=%zu class=cut>%zu more not "
			    "shown</td></tr>\n", ncols, json_array_size(a) - i);
			break;
		}
		fputs("<tr>", f);
		for (j = 0; j < ncols; j++)
			cell(f, json_object_get(e, cols[j]));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void
verdict(FILE *f, const struct report_verdict *v)
{
	static const char *const cls[] = { "intact", "unsigned", "tampered" };
	static const char *const head[] = {
		"Verified: the chain is intact and its checkpoints are signed",
		"Chain intact, but no public key was given: the signatures "
		    "prove nothing yet",
		"TAMPERED: the audit trail does not verify",
	};
	const json_t	*c = v->cover;

	fprintf(f, "<section id=verdict class=\"verdict %s\"><h1>%s</h1>\n"
	    "<p>How: <code>", cls[v->state], head[v->state]);
	esc(f, v->summary);
	fputs("</code></p>\n", f);
	if (v->warning != NULL && v->warning[0] != '\0') {
		fputs("<p>Warning: ", f);
		esc(f, v->warning);
		fputs("</p>\n", f);
	}
	if (v->state == REPORT_TAMPERED)
		fputs("<p><strong>Nothing below is authenticated.</strong> It "
		    "is shown as the files hold it, to help find what was "
		    "changed.</p>\n", f);
	if (c != NULL && v->state == REPORT_TAMPERED) {
		fprintf(f, "<p>A checkpoint record at seq %lld claims to sign "
		    "seq %lld (key id <span class=hash>", json_integer_value(
		    json_object_get(c, "seq")), json_integer_value(
		    json_object_get(c, "cp_seq")));
		esc(f, str(c, "key_id"));
		fputs("</span>); the chain does not verify, so it proves "
		    "nothing here.</p>\n", f);
	} else if (c != NULL) {
		fprintf(f, "<p>The selection (last record seq %llu) is complete "
		    "up to the checkpoint at seq %lld, which signs seq %lld, "
		    "key id <span class=hash>", (unsigned long long)
		    v->need_signed, json_integer_value(json_object_get(c,
		    "seq")), json_integer_value(json_object_get(c, "cp_seq")));
		esc(f, str(c, "key_id"));
		fputs("</span>, at ", f);
		esc(f, str(c, "cp_ts"));
		fprintf(f, "%s.</p>\n", v->state == REPORT_INTACT ? "" :
		    " (signature not checked against a key you hold)");
	} else if (v->need_signed > 0)
		fprintf(f, "<p class=cut>No checkpoint signs the selection's "
		    "last record (seq %llu) yet: records after the last "
		    "checkpoint could still be cut without trace.</p>\n",
		    (unsigned long long)v->need_signed);
	fputs("<p>Source: <code>", f);
	esc(f, v->source);
	fputs("</code>; selection: ", f);
	esc(f, v->filter);
	fputs("</p></section>\n", f);
}

static void	code_lines(FILE *, const char *, size_t, const json_t *);

/* hex without its "sha256:", when it has one. */
static const char *
bare_hex(const char *h)
{
	return h != NULL && strncmp(h, CODE_PREFIX, strlen(CODE_PREFIX)) == 0 ?
	    h + strlen(CODE_PREFIX) : h;
}

/*
 * A policy file's text: the version auditd kept beside the log (a
 * bundle carries those of its log files), else the bundle's copy of the
 * file in force.  Only bytes that still hash to what the load recorded
 * (the files may be the tampered ones).  0, caller frees *out.
 */
static int
policy_read(const char *log_dir, const char *policy_dir, const char *hex,
    char **out, size_t *len)
{
	char	 path[PATH_MAX], got[SHA256_HEX + 1];

	if (!blobstore_hex_ok(hex))
		return -1;
	if (log_dir != NULL && blobstore_read(log_dir, hex, out, len) == 0)
		return 0;
	if (policy_dir == NULL || xsnprintf(path, sizeof(path), "%s/%s",
	    policy_dir, hex) == -1 ||
	    read_file(path, REPORT_POLICY_MAX, out, len) == -1)
		return -1;
	sha256_hex(*out, *len, got);
	if (strcmp(got, hex) == 0)
		return 0;
	free(*out);
	return -1;
}

/*
 * What a file row shows of the text: in full where the file is first
 * seen or added, a line diff where it changed (and the new text folded),
 * nothing where it is the same; and says so when no copy was kept.
 */
static void
policy_text(FILE *f, const char *log_dir, const char *policy_dir,
    const char *was, const char *now)
{
	char	*a = NULL, *b = NULL;
	size_t	 alen, blen;
	int	 changed = was != NULL && strcmp(was, now) != 0;

	if (was != NULL && !changed)
		return;
	if (policy_read(log_dir, policy_dir, now, &b, &blen) == -1) {
		fputs("<br><span class=cut>its text was not kept</span>", f);
		return;
	}
	if (changed && policy_read(log_dir, policy_dir, was, &a, &alen) == 0) {
		report_diff(f, a, alen, b, blen);
		free(a);
	} else if (changed)
		fputs("<br><span class=cut>the version before was not kept: no "
		    "diff</span>", f);
	fputs("<details class=policy><summary>the file as loaded</summary>",
	    f);
	code_lines(f, b, blen, NULL);
	fputs("</details>", f);
	free(b);
}

/* The loads shown: per program the last before the selection, then all. */
static void
policies(FILE *f, const json_t *loads, uint64_t first, uint64_t last,
    const char *log_dir, const char *policy_dir)
{
	json_t		*before = json_object(), *prev = json_object();
	const json_t	*l, *rec, *file, *old;
	const char	*prog, *path;
	json_int_t	 seq;
	size_t		 i, j, shown = 0;

	json_array_foreach(loads, i, l) {
		seq = json_integer_value(json_object_get(l, "seq"));
		prog = str(json_object_get(l, "rec"), "program");
		if ((uint64_t)seq < first && prog != NULL)
			json_object_set_new(before, prog, json_integer(seq));
	}
	fputs("<section id=policy><h2>Policy in force</h2>\n", f);
	json_array_foreach(loads, i, l) {
		rec = json_object_get(l, "rec");
		seq = json_integer_value(json_object_get(l, "seq"));
		prog = str(rec, "program");
		if (prog == NULL || (uint64_t)seq > last || ((uint64_t)seq <
		    first && json_integer_value(json_object_get(before,
		    prog)) != seq))
			continue;
		if (shown++ >= REPORT_LOADS_MAX || page_full(f)) {
			fputs("<p class=cut>More loads not shown.</p>\n", f);
			break;
		}
		fprintf(f, "<h3>seq %lld: ", seq);
		esc(f, prog);
		fputs(" loaded at ", f);
		esc(f, str(rec, "ts"));
		fputs("</h3><table><tr><th>file</th><th>sha256</th><th>since "
		    "the load before</th></tr>\n", f);
		old = json_object_get(prev, prog);
		json_array_foreach(json_object_get(rec, "files"), j, file) {
			const char *was = NULL;
			const char *now = bare_hex(str(file, "sha256"));

			path = str(file, "path");
			if (old != NULL && path != NULL)
				was = str(old, path);
			fputs("<tr><td>", f);
			esc(f, path);
			fputs("</td><td class=hash>", f);
			esc(f, now);
			fprintf(f, "</td><td>%s", old == NULL ?
			    "first load shown" : was == NULL ? "added" :
			    now != NULL && strcmp(was, now) == 0 ? "same" :
			    "<strong>changed</strong>");
			if (now != NULL)
				policy_text(f, log_dir, policy_dir, was, now);
			fputs("</td></tr>\n", f);
		}
		fputs("</table>\n", f);
		{
			json_t *m = json_object();

			json_array_foreach(json_object_get(rec, "files"), j,
			    file)
				if ((path = str(file, "path")) != NULL &&
				    str(file, "sha256") != NULL)
					json_object_set_new(m, path,
					    json_string(bare_hex(str(file,
					    "sha256"))));
			json_object_set_new(prev, prog, m);
		}
	}
	if (shown == 0)
		fputs("<p>No successful policy load in the files read.</p>\n",
		    f);
	fputs("</section>\n", f);
	json_decref(before);
	json_decref(prev);
}

/* Hit lines of pattern_hits, as a set of line numbers. */
static int
is_hit(const json_t *hits, json_int_t line)
{
	const json_t	*h;
	size_t		 i;

	json_array_foreach(hits, i, h)
		if (json_integer_value(json_object_get(h, "line")) == line)
			return 1;
	return 0;
}

/* Code in a <pre>, line by line, hit lines marked. */
static void
code_lines(FILE *f, const char *code, size_t len, const json_t *hits)
{
	size_t		 off = 0, n, budget = REPORT_TEXT_MAX;
	json_int_t	 line = 1;
	const char	*nl;

	fputs("<pre class=code>", f);
	while (off < len && budget > 0) {
		nl = memchr(code + off, '\n', len - off);
		n = nl ? (size_t)(nl - code - off) : len - off;
		if (n >= budget)
			n = budget - 1;
		budget -= n + 1;	/* a line costs its newline too */
		fputs(is_hit(hits, line) ? "<mark>" : "", f);
		report_esc(f, code + off, n);
		fputs(is_hit(hits, line) ? "</mark>\n" : "\n", f);
		off += n + (nl != NULL && code + off + n == nl);
		line++;
	}
	if (off < len)
		fprintf(f, "<span class=cut>\u2026 %zu more bytes not shown"
		    "</span>", len - off);
	fputs("</pre>\n", f);
}

static void
code(FILE *f, const json_t *s, const json_t *d, const char *log_dir)
{
	const json_t	*rec = s ? s : d;
	const json_t	*hits = json_object_get(d ? d : s, "pattern_hits");
	const char	*hash = str(rec, "code_hash"), *ret;
	char		*blob;
	size_t		 len;

	ret = s ? str(s, "code_retention") : NULL;
	fputs("<p>Code <span class=hash>", f);
	esc(f, hash);
	fputs("</span>, ", f);
	report_esc_json(f, json_object_get(rec, "code_size"),
	    REPORT_CELL_MAX);
	fputs(" bytes. ", f);
	if (ret != NULL && strcmp(ret, "full") == 0 && log_dir != NULL &&
	    hash != NULL && strncmp(hash, CODE_PREFIX, strlen(CODE_PREFIX)) ==
	    0 && blobstore_hex_ok(hash + strlen(CODE_PREFIX)) &&
	    blobstore_read(log_dir, hash + strlen(CODE_PREFIX), &blob, &len) ==
	    0) {
		fputs("Retained in full (the blob hashes as recorded):</p>\n",
		    f);
		code_lines(f, blob, len, hits);
		free(blob);
	} else if (ret != NULL && strcmp(ret, "sample") == 0) {
		fputs("Only a sample was retained: the first and last "
		    "bytes.</p>\n", f);
		code_lines(f, str(s, "code_head") ? str(s, "code_head") : "",
		    strlen(str(s, "code_head") ? str(s, "code_head") : ""),
		    hits);
		fputs("<p>\u2026</p>\n", f);
		code_lines(f, str(s, "code_tail") ? str(s, "code_tail") : "",
		    strlen(str(s, "code_tail") ? str(s, "code_tail") : ""),
		    NULL);
	} else
		fprintf(f, "%s</p>\n", s == NULL ? "Its execution_started "
		    "record, which says what was retained, is not in the "
		    "selection." : ret != NULL && strcmp(ret, "full") == 0 ?
		    "Retained in full, but no intact copy was found." :
		    "Only its hash was retained.");
}

/* What the log kept of the output: a sample of each stream, or nothing. */
static void
output_samples(FILE *f, const json_t *d)
{
	static const char *const streams[] = { "stdout", "stderr" };
	char		 key[32];
	const json_t	*v;
	size_t		 i;

	if (d == NULL)
		return;
	if (!is(str(d, "output_retention"), "sample")) {
		fputs("<p>Output: only its size was retained.</p>\n", f);
		return;
	}
	for (i = 0; i < nitems(streams); i++) {
		snprintf(key, sizeof(key), "%s_sample", streams[i]);
		if ((v = json_object_get(d, key)) == NULL || !json_is_string(v))
			continue;
		snprintf(key, sizeof(key), "%s_bytes", streams[i]);
		fprintf(f, "<p>%s: a sample was retained, the first %zu bytes "
		    "of ", streams[i], json_string_length(v));
		report_esc_json(f, json_object_get(d, key), REPORT_CELL_MAX);
		fputs(":</p>\n", f);
		code_lines(f, json_string_value(v), json_string_length(v),
		    NULL);
	}
}

static void
artifacts(FILE *f, const json_t *d, const json_t *deliv)
{
	static const char *const cols[] = { "how", "dest", "client", "seq",
	    "ts" };
	const json_t	*a;
	size_t		 i;

	json_array_foreach(json_object_get(d, "artifacts"), i, a) {
		if (i >= REPORT_ROWS_MAX || page_full(f))
			break;
		fputs("<p>Artifact <code>", f);
		esc(f, str(a, "name"));
		fputs("</code> <span class=hash>", f);
		esc(f, str(a, "sha256"));
		fputs("</span> ", f);
		report_esc_json(f, json_object_get(a, "size"),
		    REPORT_CELL_MAX);
		fputs(" bytes</p>\n", f);
		if (str(a, "sha256") != NULL)
			table(f, "where it went", json_object_get(deliv,
			    str(a, "sha256")), cols, nitems(cols));
	}
}

static void
call_detail(FILE *f, const json_t *c, size_t n, const json_t *sess,
    const char *log_dir)
{
	static const char *const in_cols[] = { "name", "size", "sha256" };
	static const char *const pk_cols[] = { "name", "version", "sha256",
	    "url" };
	static const char *const hit_cols[] = { "id", "severity", "action",
	    "line" };
	const json_t	*s = json_object_get(c, "started");
	const json_t	*d = json_object_get(c, "done");
	const json_t	*r = d ? d : s;

	fprintf(f, "<details class=call><summary>Call %zu: seq %lld, ", n,
	    json_integer_value(json_object_get(r, "seq")));
	esc(f, str(r, "tool"));
	fputs("</summary>\n<table>", f);
	row(f, "principal", r, "principal");
	row(f, "client", r, "client");
	row(f, "request", r, "request");
	row(f, "task", r, "task_id");
	row(f, "started", s, "ts");
	row(f, "ended", d, "ts");
	row(f, "profile", r, "profile");
	row(f, "runtime", d, "sandbox");
	row(f, "limits", d, "limits");
	row(f, "network", d, "network");
	row(f, "seccomp_sha256", s, "seccomp_sha256");
	row(f, "argv", r, "argv");
	row(f, "end", d, "end");
	row(f, "exit code", d, "exit_code");
	row(f, "duration ms", d, "duration_ms");
	row(f, "timed out", d, "timed_out");
	row(f, "OOM killed", d, "oom_killed");
	row(f, "reason", d, "reason");
	row(f, "stdout bytes", d, "stdout_bytes");
	row(f, "stderr bytes", d, "stderr_bytes");
	row(f, "package index", d, "package_index");
	fputs("</table>\n", f);
	code(f, s, d, log_dir);
	output_samples(f, d);
	table(f, "pattern hits", json_object_get(r, "pattern_hits"), hit_cols,
	    nitems(hit_cols));
	table(f, "inputs", json_object_get(r, "inputs"), in_cols,
	    nitems(in_cols));
	table(f, "packages", json_object_get(d, "packages"), pk_cols,
	    nitems(pk_cols));
	artifacts(f, d, json_object_get(sess, "deliveries"));
	fputs("</details>\n", f);
}

/* What confined the session: each distinct digest its records name. */
static void
digests(FILE *f, const json_t *sess)
{
	static const char *const lists[] = { "events", "net" };
	static const char *const keys[] = { "seccomp_sha256", "nft_sha256" };
	json_t		*seen = json_object();
	const json_t	*rec;
	const char	*d;
	size_t		 l, k, i;

	for (k = 0; k < nitems(keys); k++)
		for (l = 0; l < nitems(lists); l++)
			json_array_foreach(json_object_get(sess, lists[l]), i,
			    rec) {
				if ((d = str(rec, keys[k])) == NULL ||
				    json_object_get(seen, d) != NULL ||
				    json_object_size(seen) >= REPORT_LOADS_MAX)
					continue;
				json_object_set_new(seen, d, json_true());
				fprintf(f, "<p>%s <span class=hash>", keys[k]);
				esc(f, d);
				fputs("</span></p>\n", f);
			}
	json_decref(seen);
}

static void
session(FILE *f, const json_t *sess, const char *log_dir)
{
	static const char *const ref_cols[] = { "seq", "ts", "tool", "reason",
	    "rule_id", "severity", "detail" };
	static const char *const net_cols[] = { "seq", "ts", "event",
	    "protocol", "dst_ip", "dst_port", "name", "rule", "bytes_out",
	    "bytes_in", "decision", "policy", "nft_sha256" };
	static const char *const ev_cols[] = { "seq", "ts", "event", "reason",
	    "profile", "sandbox", "seccomp_sha256", "nft_sha256", "message" };
	static const char *const end_cols[] = { "exit_code", "duration_ms",
	    "stdout_bytes", "stderr_bytes" };
	const json_t	*calls = json_object_get(sess, "calls"), *c, *s, *d;
	size_t		 i, j;

	fputs("<section class=session><h2>Session <code>", f);
	esc(f, str(sess, "id"));
	fprintf(f, "</code>: %zu call(s)</h2>\n", json_array_size(calls));
	digests(f, sess);
	report_timeline(f, calls, json_object_get(sess, "marks"));
	fputs("<table><caption>calls</caption><tr><th>#</th><th>seq</th>"
	    "<th>ts</th><th>tool</th><th>end</th><th>exit</th><th>ms</th>"
	    "<th>stdout</th><th>stderr</th><th>code</th></tr>\n", f);
	json_array_foreach(calls, i, c) {
		if (i >= REPORT_ROWS_MAX) {
			fprintf(f, "<tr><td colspan=10 class=cut>%zu more calls "
			    "not listed: narrow the selection (--since, "
			    "--until)</td></tr>\n", json_array_size(calls) - i);
			break;
		}
		s = json_object_get(c, "started");
		d = json_object_get(c, "done");
		fprintf(f, "<tr><td>%zu</td>", i + 1);
		cell(f, json_object_get(d ? d : s, "seq"));
		cell(f, json_object_get(s ? s : d, "ts"));
		cell(f, json_object_get(d ? d : s, "tool"));
		if (d == NULL)
			fputs("<td>no end recorded</td>", f);
		else
			cell(f, json_object_get(d, "end"));
		for (j = 0; j < nitems(end_cols); j++)
			cell(f, json_object_get(d, end_cols[j]));
		cell(f, json_object_get(s ? s : d, "code_hash"));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	json_array_foreach(calls, i, c) {
		if (i >= REPORT_CALLS_DETAIL || page_full(f)) {
			fprintf(f, "<p class=cut>%zu more calls are listed "
			    "above but not shown in full.</p>\n",
			    json_array_size(calls) - i);
			break;
		}
		call_detail(f, c, i + 1, sess, log_dir);
	}
	table(f, "refusals", json_object_get(sess, "refusals"), ref_cols,
	    nitems(ref_cols));
	table(f, "network", json_object_get(sess, "net"), net_cols,
	    nitems(net_cols));
	table(f, "session events", json_object_get(sess, "events"), ev_cols,
	    nitems(ev_cols));
	fputs("</section>\n", f);
}

static json_t *
sess_get(json_t *by_id, json_t *order, const char *id)
{
	json_t	*s;

	if ((s = json_object_get(by_id, id)) != NULL)
		return s;
	s = json_pack("{s:s, s:[], s:[], s:[], s:[], s:[], s:{}}", "id", id,
	    "calls", "marks", "refusals", "net", "events", "deliveries");
	json_object_set_new(by_id, id, s);
	json_array_append(order, s);
	return s;
}

/* The latest call of the session still without an end, of that code. */
static json_t *
open_call(json_t *calls, const char *hash)
{
	json_t	*c;
	size_t	 i = json_array_size(calls);

	while (i-- > 0) {
		c = json_array_get(calls, i);
		if (json_object_get(c, "done") == NULL &&
		    is(str(json_object_get(c, "started"), "code_hash"), hash))
			return c;
	}
	return NULL;
}

/* Sorts each record into its session: calls, marks, tables. */
static void
sessions_build(const json_t *records, json_t *by_id, json_t *order,
    json_t *other)
{
	const json_t	*rec;
	json_t		*s, *c, *list;
	const char	*ev, *id;
	size_t		 i;

	json_array_foreach(records, i, rec) {
		ev = str(rec, "event");
		if ((id = str(rec, "session_id")) == NULL) {
			json_array_append(other, (json_t *)rec);
			continue;
		}
		s = sess_get(by_id, order, id);
		if (is(ev, "execution_started")) {
			json_array_append_new(json_object_get(s, "calls"),
			    json_pack("{s:O}", "started", rec));
			continue;
		}
		if (is(ev, "code_execution") || is(ev, "execution_lost")) {
			if ((c = open_call(json_object_get(s, "calls"),
			    str(rec, "code_hash"))) != NULL)
				json_object_set(c, "done", (json_t *)rec);
			else
				json_array_append_new(json_object_get(s,
				    "calls"), json_pack("{s:O}", "done", rec));
			continue;
		}
		if (is(ev, "artifact_delivered") && str(rec, "sha256")) {
			list = json_object_get(json_object_get(s,
			    "deliveries"), str(rec, "sha256"));
			if (list == NULL) {
				list = json_array();
				json_object_set_new(json_object_get(s,
				    "deliveries"), str(rec, "sha256"), list);
			}
			json_array_append(list, (json_t *)rec);
			continue;
		}
		if (is(ev, "call_refused") || is(ev, "artifact_refused"))
			json_array_append(json_object_get(s, "refusals"),
			    (json_t *)rec);
		else if (ev != NULL && (strncmp(ev, "egress_", 7) == 0 ||
		    strncmp(ev, "dns_", 4) == 0))
			json_array_append(json_object_get(s, "net"),
			    (json_t *)rec);
		else
			json_array_append(json_object_get(s, "events"),
			    (json_t *)rec);
		if (!is(ev, "session_created") && !is(ev, "egress_attached"))
			json_array_append(json_object_get(s, "marks"),
			    (json_t *)rec);
	}
}

int
report_render(FILE *f, const struct report_verdict *v, const json_t *records,
    const json_t *loads, const char *log_dir, const char *policy_dir)
{
	static const char *const other_cols[] = { "seq", "ts", "event",
	    "principal", "reason", "rule_id", "detail", "message", "auth",
	    "issuer",
	    "subject", "client_id", "remote_addr" };
	json_t		*by_id = json_object(), *order = json_array();
	json_t		*other = json_array();
	const json_t	*s;
	uint64_t	 first = 0, last = 0;
	size_t		 i, n = json_array_size(records);

	if (n > 0) {
		first = json_integer_value(json_object_get(json_array_get(
		    records, 0), "seq"));
		last = json_integer_value(json_object_get(json_array_get(
		    records, n - 1), "seq"));
	}
	sessions_build(records, by_id, order, other);
	fprintf(f, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
	    "\n<meta http-equiv=\"Content-Security-Policy\" content=\""
	    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
	    "form-action 'none'; base-uri 'none'\">\n<meta name=referrer "
	    "content=no-referrer>\n<title>Stockade audit report</title>\n"
	    "<style>%s</style></head><body>\n", style);
	verdict(f, v);
	fprintf(f, "<p id=selection>%zu record(s), seq %llu..%llu, in %zu "
	    "session(s).</p>\n", n, (unsigned long long)first,
	    (unsigned long long)last, json_array_size(order));
	policies(f, loads, first, last, log_dir, policy_dir);
	json_array_foreach(order, i, s) {
		if (i >= REPORT_SESSIONS_MAX || page_full(f)) {
			fprintf(f, "<p class=cut>%zu more sessions not shown: "
			    "select one with --session.</p>\n",
			    json_array_size(order) - i);
			break;
		}
		session(f, s, log_dir);
	}
	fputs("<section id=other><h2>Records outside any session</h2>\n", f);
	report_timeline(f, NULL, other);	/* notes, sign-ins, refusals */
	table(f, "refusals, sign-ins, notes and daemon records", other,
	    other_cols, nitems(other_cols));
	fputs("</section>\n</body></html>\n", f);
	json_decref(by_id);
	json_decref(order);
	json_decref(other);
	return ferror(f) ? -1 : 0;
}
