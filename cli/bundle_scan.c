/*
 * One pass over audit log files for an evidence bundle: the records a
 * filter selects, the checkpoints, policy loads and sandbox digests among
 * them.  The files are untrusted (the chain check is verify's job): lines
 * that do not parse are skipped, never guessed at.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "util.h"

#define BUNDLE_LOG_READ_MAX	(1ULL << 40)

static int
str_is(const json_t *rec, const char *key, const char *want)
{
	const char	*s = json_string_value(json_object_get(rec, key));

	return s != NULL && strcmp(s, want) == 0;
}

int
bundle_filter_match(const struct bundle_filter *f, const json_t *rec)
{
	const char	*ts = json_string_value(json_object_get(rec, "ts"));

	if (f->session != NULL && !str_is(rec, "session_id", f->session))
		return 0;
	if (f->principal != NULL && !str_is(rec, "principal", f->principal))
		return 0;
	/* ts is fixed-width RFC 3339 UTC: strings order as times do. */
	if (f->since != NULL && (ts == NULL || strcmp(ts, f->since) < 0))
		return 0;
	if (f->until != NULL && (ts == NULL || strcmp(ts, f->until) >= 0))
		return 0;
	return 1;
}

int
bundle_filter_opt(struct bundle_filter *f, int ch, const char *arg)
{
	switch (ch) {
	case 's': f->session = arg; return 0;
	case 'P': f->principal = arg; return 0;
	case 'S': f->since = arg; return 0;
	case 'U': f->until = arg; return 0;
	}
	return -1;
}

json_t *
bundle_filter_json(const struct bundle_filter *f)
{
	json_t	*j = json_object();

	if (f->session != NULL)
		json_object_set_new(j, "session", json_string(f->session));
	if (f->principal != NULL)
		json_object_set_new(j, "principal", json_string(f->principal));
	if (f->since != NULL)
		json_object_set_new(j, "since", json_string(f->since));
	if (f->until != NULL)
		json_object_set_new(j, "until", json_string(f->until));
	return j;
}

void
bundle_filter_from_json(const json_t *j, struct bundle_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->session = json_string_value(json_object_get(j, "session"));
	f->principal = json_string_value(json_object_get(j, "principal"));
	f->since = json_string_value(json_object_get(j, "since"));
	f->until = json_string_value(json_object_get(j, "until"));
}

/* Records that name what confined a sandbox keep their digests. */
static void
scan_digest(struct bundle_scan *s, const json_t *rec)
{
	static const char *const keys[] = { "seccomp_sha256", "nft_sha256" };
	json_t		*d = NULL;
	size_t		 i;

	for (i = 0; i < nitems(keys); i++) {
		if (!json_is_string(json_object_get(rec, keys[i])))
			continue;
		if (d == NULL)
			d = json_pack("{s:O?, s:O?, s:O?}", "seq",
			    json_object_get(rec, "seq"), "event",
			    json_object_get(rec, "event"), "session_id",
			    json_object_get(rec, "session_id"));
		json_object_set(d, keys[i], json_object_get(rec, keys[i]));
	}
	if (d != NULL)
		json_array_append_new(s->digests, d);
}

static void
scan_record(struct bundle_scan *s, const struct bundle_filter *f, size_t fi,
    const char *line, size_t len, json_t *rec)
{
	json_int_t	 seq = json_integer_value(json_object_get(rec, "seq"));
	json_t		*e;

	if (str_is(rec, "event", "checkpoint") ||
	    (str_is(rec, "event", "policy_load") &&
	    json_is_true(json_object_get(rec, "ok")))) {
		e = json_pack("{s:I, s:I, s:O}", "file", (json_int_t)fi, "seq",
		    seq, "rec", rec);
		json_array_append_new(str_is(rec, "event", "checkpoint") ?
		    s->checkpoints : s->loads, e);
	}
	if (!bundle_filter_match(f, rec))
		return;
	scan_digest(s, rec);
	if (s->nrecords++ == 0) {
		s->first_file = fi;
		s->first_seq = (uint64_t)seq;
	}
	s->last_file = fi;
	s->last_seq = (uint64_t)seq;
	if (!str_is(rec, "event", "checkpoint"))
		s->need_signed = (uint64_t)seq;
	if (s->records != NULL) {
		fwrite(line, 1, len, s->records);
		fputc('\n', s->records);
	}
}

int
bundle_scan(const char *dir, const struct logfile *files, size_t from,
    size_t to, const struct bundle_filter *f, struct bundle_scan *s,
    char *err, size_t errlen)
{
	char		 path[PATH_MAX], *data;
	const char	*p, *nl, *end;
	size_t		 fi, len;
	json_t		*rec;

	s->loads = json_array();
	s->checkpoints = json_array();
	s->digests = json_array();
	for (fi = from; fi <= to; fi++) {
		if (xsnprintf(path, sizeof(path), "%s/%s", dir,
		    files[fi].name) == -1 ||
		    read_file(path, BUNDLE_LOG_READ_MAX, &data, &len) == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		end = data + len;
		for (p = data; p < end &&
		    (nl = memchr(p, '\n', (size_t)(end - p))) != NULL;
		    p = nl + 1) {
			rec = json_loadb(p, (size_t)(nl - p),
			    JSON_REJECT_DUPLICATES, NULL);
			if (json_is_object(rec))
				scan_record(s, f, fi, p, (size_t)(nl - p), rec);
			json_decref(rec);
		}
		free(data);
	}
	return 0;
}

void
bundle_scan_free(struct bundle_scan *s)
{
	json_decref(s->loads);
	json_decref(s->checkpoints);
	json_decref(s->digests);
	s->loads = s->checkpoints = s->digests = NULL;
}

static void
add_files(json_t *out, const json_t *load)
{
	const json_t	*rec = json_object_get(load, "rec"), *fe;
	const char	*prog = json_string_value(json_object_get(rec, "program"));
	const char	*path, *hex;
	size_t		 i;

	json_array_foreach(json_object_get(rec, "files"), i, fe) {
		path = json_string_value(json_object_get(fe, "path"));
		hex = json_string_value(json_object_get(fe, "sha256"));
		if (path == NULL || hex == NULL)
			continue;
		if (strncmp(hex, "sha256:", 7) == 0)
			hex += 7;
		json_array_append_new(out, json_pack("{s:s?, s:s, s:s, s:O}",
		    "program", prog, "path", path, "sha256", hex, "seq",
		    json_object_get(load, "seq")));
	}
}

json_t *
bundle_policies(const struct bundle_scan *s, size_t *min_file)
{
	json_t		*out = json_array(), *before = json_object(), *l;
	const char	*prog, *key;
	uint64_t	 seq;
	size_t		 i;

	if (s->nrecords == 0)
		goto done;
	json_array_foreach(s->loads, i, l) {
		seq = (uint64_t)json_integer_value(json_object_get(l, "seq"));
		prog = json_string_value(json_object_get(json_object_get(l,
		    "rec"), "program"));
		if (seq < s->first_seq)		/* the last one wins */
			json_object_set(before, prog ? prog : "", l);
		else if (seq <= s->last_seq) {
			add_files(out, l);
			if ((size_t)json_integer_value(json_object_get(l,
			    "file")) < *min_file)
				*min_file = (size_t)json_integer_value(
				    json_object_get(l, "file"));
		}
	}
	json_object_foreach(before, key, l) {
		add_files(out, l);
		if ((size_t)json_integer_value(json_object_get(l, "file")) <
		    *min_file)
			*min_file = (size_t)json_integer_value(json_object_get(l,
			    "file"));
	}
done:
	json_decref(before);
	return out;
}
