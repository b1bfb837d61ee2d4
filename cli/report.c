/*
 * `stockade audit report`: verifies a live log directory or an evidence
 * bundle with the code `audit verify` runs, selects records as `audit
 * evidence` selects them, and writes the page (cli/report_page.c).  The
 * verdict is verify's; the records are shown even when it is "tampered".
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "cli.h"
#include "hash.h"
#include "logdir.h"
#include "report.h"
#include "util.h"
#include "verify.h"

#define REPORT_META_MAX		(16 * 1024 * 1024)
#define REPORT_RECORD_MAX	(64 * 1024 * 1024)	/* one line */

struct verdict_text {
	char	summary[2 * PATH_MAX + 1024];
	char	warning[PATH_MAX + 512];
	char	filter[1024];
};

/* Live log: verify_dir's answer, worded as `audit verify` words it. */
static int
verify_live(const char *dir, EVP_PKEY *pub, struct report_verdict *v,
    struct verdict_text *t)
{
	struct verify_opts	 o;
	struct verify_report	 r;

	memset(&o, 0, sizeof(o));
	o.pubkey = pub;
	switch (verify_dir(dir, &o, &r)) {
	case VERIFY_ERROR:
		fprintf(stderr, "stockade: %s\n", r.reason);
		return -1;
	case VERIFY_TAMPERED:
		v->state = REPORT_TAMPERED;
		snprintf(t->summary, sizeof(t->summary), "stockade audit verify:"
		    " %s: %s", r.where, r.reason);
		break;
	case VERIFY_OK:
		v->state = pub != NULL ? REPORT_INTACT : REPORT_UNSIGNED;
		snprintf(t->summary, sizeof(t->summary), "stockade audit verify:"
		    " audit log intact: %llu records (seq %llu..%llu) in %llu "
		    "file(s), chain %s; %llu checkpoint(s)%s",
		    (unsigned long long)r.records,
		    (unsigned long long)r.first_seq,
		    (unsigned long long)r.last_seq, (unsigned long long)r.files,
		    r.chain_id, (unsigned long long)(pub != NULL ?
		    r.checkpoints_verified : r.checkpoints), pub != NULL ?
		    " signed by the given key" : ", signatures not checked (no "
		    "--pubkey)");
		break;
	}
	snprintf(t->warning, sizeof(t->warning), "%s", r.warning);
	return 0;
}

/* A bundle: bundle_verify's answer; its filter when none was given. */
static int
verify_bundle_dir(const char *dir, EVP_PKEY *pub, struct report_verdict *v,
    struct verdict_text *t, struct bundle_filter *f, json_t **meta)
{
	char	 path[PATH_MAX], *data;
	size_t	 len;
	int	 rv;

	rv = bundle_verify(dir, pub, t->summary, sizeof(t->summary),
	    t->warning, sizeof(t->warning));
	if (rv == 2) {
		fprintf(stderr, "stockade: %s\n", t->summary);
		return -1;
	}
	v->state = rv == 1 ? REPORT_TAMPERED : pub != NULL ? REPORT_INTACT :
	    REPORT_UNSIGNED;
	if (f->session || f->principal || f->since || f->until)
		return 0;
	if (xsnprintf(path, sizeof(path), "%s/%s", dir, BUNDLE_META) != -1 &&
	    read_file(path, REPORT_META_MAX, &data, &len) == 0) {
		*meta = json_loadb(data, len, 0, NULL);
		free(data);
		bundle_filter_from_json(json_object_get(*meta, "filter"), f);
	}
	return 0;
}

/* The selected records, parsed, in chain order. */
static json_t *
parse_lines(char *buf, size_t len)
{
	json_t	*a = json_array(), *rec;
	char	*p = buf, *nl;

	while (p < buf + len && (nl = memchr(p, '\n', buf + len - p)) != NULL) {
		if ((rec = json_loadb(p, (size_t)(nl - p), 0, NULL)) != NULL)
			json_array_append_new(a, rec);
		p = nl + 1;
	}
	return a;
}

/* The first checkpoint at or after seq (bundle_scan's list), or NULL. */
static const json_t *
covering(const json_t *cps, uint64_t seq)
{
	const json_t	*e, *rec;
	size_t		 i;

	json_array_foreach(cps, i, e) {
		rec = json_object_get(e, "rec");
		if ((uint64_t)json_integer_value(json_object_get(rec,
		    "cp_seq")) >= seq)
			return rec;
	}
	return NULL;
}

static void
filter_words(const struct bundle_filter *f, char *out, size_t len)
{
	snprintf(out, len, "%s%s%s%s%s%s%s%s%s", f->session ? "session " : "",
	    f->session ? f->session : "", f->principal ? " principal " : "",
	    f->principal ? f->principal : "", f->since ? " since " : "",
	    f->since ? f->since : "", f->until ? " until " : "",
	    f->until ? f->until : "", f->session || f->principal ||
	    f->since || f->until ? "" : "everything");
}

/*
 * Reads log_dir's files through bundle_scan and writes the page to out;
 * policy_dir: a bundle's policy files, or NULL.
 */
static int
render(const char *log_dir, const char *policy_dir,
    const struct bundle_filter *f, struct report_verdict *v, const char *out)
{
	struct bundle_scan	 s;
	struct logfile		*files = NULL;
	json_t			*records = NULL;
	char			*buf = NULL, tmp[PATH_MAX];
	size_t			 n = 0, len = 0;
	FILE			*fp = NULL;
	int			 rv = -1;
	char			 err[PATH_MAX + 512];

	memset(&s, 0, sizeof(s));
	if (logdir_list(log_dir, &files, &n) == -1 || n == 0) {
		fprintf(stderr, "stockade: %s: %s\n", log_dir, n == 0 ?
		    "no audit log files" : strerror(errno));
		goto out;
	}
	if ((s.records = open_memstream(&buf, &len)) == NULL ||
	    bundle_scan(log_dir, files, 0, n - 1, f, &s, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "stockade: %s\n", s.records ? err :
		    strerror(errno));
		goto out;
	}
	if (fclose(s.records) != 0) {
		s.records = NULL;
		goto out;
	}
	s.records = NULL;
	records = parse_lines(buf, len);
	v->need_signed = s.need_signed;
	v->cover = s.nrecords > 0 ? covering(s.checkpoints, s.need_signed) :
	    NULL;
	/* Written beside out and renamed: no half page under its name. */
	if (xsnprintf(tmp, sizeof(tmp), "%s.tmp.%d", out, (int)getpid()) ==
	    -1 || (fp = fopen(tmp, "wx")) == NULL) {
		fprintf(stderr, "stockade: %s: %s\n", out, strerror(errno));
		goto out;
	}
	if (report_render(fp, v, records, s.loads, log_dir,
	    policy_dir) == -1 ||
	    fclose(fp) != 0 || rename(tmp, out) == -1) {
		fprintf(stderr, "stockade: %s: %s\n", out, strerror(errno));
		fp = NULL;
		(void)unlink(tmp);
		goto out;
	}
	fp = NULL;
	rv = 0;
out:
	if (fp != NULL) {
		fclose(fp);
		(void)unlink(tmp);
	}
	if (s.records != NULL)
		fclose(s.records);
	free(buf);
	json_decref(records);
	bundle_scan_free(&s);
	free(files);
	return rv;
}

/*
 * report DIR|BUNDLE -o FILE [--session ID] [--principal P] [--since TS]
 * [--until TS] [--pubkey FILE].  0 verified, 1 tampered (the page is
 * still written), 2 usage or I/O error.
 */
int
audit_report(int argc, char *argv[])
{
	static const struct option longopts[] = {
		BUNDLE_FILTER_LONGOPTS,
		{ "pubkey", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 }
	};
	struct bundle_filter	 f;
	struct report_verdict	 v;
	struct verdict_text	 t;
	struct stat		 st;
	EVP_PKEY		*pub = NULL;
	json_t			*meta = NULL;
	const char		*out = NULL, *pubpath = NULL, *src, *td;
	char			 dir[PATH_MAX], log_dir[PATH_MAX], err[512];
	char			 policy_dir[PATH_MAX];
	int			 ch, rv = EXIT_USAGE, bundle;

	memset(&f, 0, sizeof(f));
	memset(&v, 0, sizeof(v));
	memset(&t, 0, sizeof(t));
	dir[0] = '\0';
	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		if (bundle_filter_opt(&f, ch, optarg) == 0)
			continue;
		switch (ch) {
		case 'o': out = optarg; break;
		case 'p': pubpath = optarg; break;
		default: return EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || out == NULL) {
		fprintf(stderr, "usage: stockade audit report DIR|BUNDLE -o FILE"
		    " [--session ID] [--principal P] [--since TS] [--until TS]"
		    " [--pubkey FILE]\n");
		return EXIT_USAGE;
	}
	src = argv[optind];
	if (pubpath != NULL &&
	    (pub = ed25519_load_public(pubpath, err, sizeof(err))) == NULL) {
		fprintf(stderr, "stockade: %s\n", err);
		return EXIT_USAGE;
	}
	if (stat(src, &st) == -1) {
		fprintf(stderr, "stockade: %s: %s\n", src, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {	/* a bundle tar, unpacked to scratch */
		td = getenv("TMPDIR");
		if (xsnprintf(dir, sizeof(dir), "%s/stockade-report.XXXXXX",
		    td && *td ? td : "/tmp") == -1 || mkdtemp(dir) == NULL) {
			fprintf(stderr, "stockade: scratch folder: %s\n",
			    strerror(errno));
			dir[0] = '\0';
			goto out;
		}
		if (bundle_tar_extract(src, dir, t.summary,
		    sizeof(t.summary)) == -1) {
			fprintf(stderr, "stockade: %s: %s\n", src, t.summary);
			rv = EXIT_NEGATIVE;
			goto out;
		}
	}
	bundle = dir[0] != '\0' || (xsnprintf(log_dir, sizeof(log_dir),
	    "%s/%s", src, BUNDLE_META) != -1 && access(log_dir, F_OK) == 0);
	if (bundle) {
		if (verify_bundle_dir(dir[0] ? dir : src, pub, &v, &t, &f,
		    &meta) == -1 || xsnprintf(log_dir, sizeof(log_dir),
		    "%s/%s", dir[0] ? dir : src, BUNDLE_LOG_DIR) == -1)
			goto out;
	} else if (verify_live(src, pub, &v, &t) == -1 ||
	    xsnprintf(log_dir, sizeof(log_dir), "%s", src) == -1)
		goto out;
	filter_words(&f, t.filter, sizeof(t.filter));
	v.summary = t.summary;
	v.warning = t.warning;
	v.source = src;
	v.filter = t.filter;
	if (bundle && xsnprintf(policy_dir, sizeof(policy_dir), "%s/%s",
	    dir[0] ? dir : src, BUNDLE_POLICY_DIR) == -1)
		goto out;
	if (render(log_dir, bundle ? policy_dir : NULL, &f, &v, out) == -1)
		goto out;
	printf("wrote %s: %s\n", out, t.summary);
	rv = v.state == REPORT_TAMPERED ? EXIT_NEGATIVE : 0;
out:
	if (dir[0] != '\0')
		(void)rmtree(dir);
	json_decref(meta);
	EVP_PKEY_free(pub);
	return rv;
}
