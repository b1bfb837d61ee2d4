/*
 * `stockade audit verify --bundle`: checks an evidence bundle offline.
 * Nothing in the bundle is believed: the chain is checked from the log
 * files, authenticated by a checkpoint signature, and every other file is
 * re-derived from it or checked against a hash the chain holds.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blobstore.h"
#include "bundle.h"
#include "checkpoint.h"
#include "log.h"
#include "util.h"
#include "verify.h"

#define META_MAX		(16 * 1024 * 1024)
#define RECORDS_MAX		(1ULL << 36)

static int
bad(char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
bad(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return 1;
}

/* checkpoints/: exactly one .msg and .sig per checkpoint record. */
static int
check_cp_files(const char *dir, const json_t *cps, char *msg, size_t msglen)
{
	struct checkpoint	 cp;
	const json_t		*e;
	const char		*why;
	char			 path[PATH_MAX], text[CHECKPOINT_MSG_MAX], *data;
	size_t			 i, len, want = 0;
	struct dirent		*de;
	DIR			*dp;
	int			 n, rv;

	json_array_foreach(cps, i, e) {
		if (checkpoint_from_record(json_object_get(e, "rec"), &cp,
		    &why) == -1 ||
		    (n = checkpoint_message(&cp, text, sizeof(text))) == -1)
			return bad(msg, msglen, "checkpoint seq %lld: %s",
			    json_integer_value(json_object_get(e, "seq")), why);
		if (xsnprintf(path, sizeof(path), "%s/%s/%llu.msg", dir,
		    BUNDLE_CP_DIR, (unsigned long long)cp.seq) == -1 ||
		    read_file(path, CHECKPOINT_MSG_MAX, &data, &len) == -1)
			return bad(msg, msglen, "%s/%llu.msg: %s", BUNDLE_CP_DIR,
			    (unsigned long long)cp.seq, strerror(errno));
		rv = len == (size_t)n && memcmp(data, text, len) == 0;
		free(data);
		if (!rv)
			return bad(msg, msglen, "%s/%llu.msg is not what the "
			    "checkpoint record signs", BUNDLE_CP_DIR,
			    (unsigned long long)cp.seq);
		if (xsnprintf(path, sizeof(path), "%s/%s/%llu.sig", dir,
		    BUNDLE_CP_DIR, (unsigned long long)cp.seq) == -1 ||
		    read_file(path, CHECKPOINT_MSG_MAX, &data, &len) == -1)
			return bad(msg, msglen, "%s/%llu.sig: %s", BUNDLE_CP_DIR,
			    (unsigned long long)cp.seq, strerror(errno));
		rv = len == sizeof(cp.sig) && memcmp(data, cp.sig, len) == 0;
		free(data);
		if (!rv)
			return bad(msg, msglen, "%s/%llu.sig is not the checkpoint "
			    "record's signature", BUNDLE_CP_DIR,
			    (unsigned long long)cp.seq);
		want += 2;
	}
	if (xsnprintf(path, sizeof(path), "%s/%s", dir, BUNDLE_CP_DIR) == -1 ||
	    (dp = opendir(path)) == NULL)
		return bad(msg, msglen, "%s: %s", BUNDLE_CP_DIR, strerror(errno));
	n = 0;
	while ((de = readdir(dp)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(dp);
	if ((size_t)n != want)
		return bad(msg, msglen, "%s holds %d files, the log's checkpoints "
		    "make %zu", BUNDLE_CP_DIR, n, want);
	return 0;
}

static int
listed_na(const json_t *na, const char *hex)
{
	const json_t	*p;
	size_t		 i;

	json_array_foreach(na, i, p)
		if (strcmp(json_string_value(json_object_get(p, "sha256")) ?: "",
		    hex) == 0)
			return 1;
	return 0;
}

/* policy/: each file in force there (hashing to its name) or listed absent. */
static int
check_policies(const char *dir, const json_t *pols, const json_t *na,
    char *msg, size_t msglen)
{
	const json_t	*p;
	const char	*hex;
	char		 path[PATH_MAX], got[SHA256_HEX + 1], *data;
	size_t		 i, len;
	struct dirent	*de;
	DIR		*dp;

	json_array_foreach(pols, i, p) {
		hex = json_string_value(json_object_get(p, "sha256"));
		if (!blobstore_hex_ok(hex))
			return bad(msg, msglen, "policy_load seq %lld names a "
			    "malformed sha256", json_integer_value(
			    json_object_get(p, "seq")));
		if (xsnprintf(path, sizeof(path), "%s/%s/%s", dir,
		    BUNDLE_POLICY_DIR, hex) == -1 ||
		    read_file(path, BUNDLE_FILE_MAX, &data, &len) == -1) {
			if (errno == ENOENT && listed_na(na, hex))
				continue;
			return bad(msg, msglen, "policy file %s (%s, loaded at "
			    "seq %lld) is missing", hex, json_string_value(
			    json_object_get(p, "path")), json_integer_value(
			    json_object_get(p, "seq")));
		}
		sha256_hex(data, len, got);
		free(data);
		if (strcmp(got, hex) != 0)
			return bad(msg, msglen, "policy file %s/%s was changed: "
			    "its bytes hash to %s", BUNDLE_POLICY_DIR, hex, got);
	}
	if (xsnprintf(path, sizeof(path), "%s/%s", dir, BUNDLE_POLICY_DIR) == -1 ||
	    (dp = opendir(path)) == NULL)
		return bad(msg, msglen, "%s: %s", BUNDLE_POLICY_DIR,
		    strerror(errno));
	while ((de = readdir(dp)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		json_array_foreach(pols, i, p)
			if (strcmp(json_string_value(json_object_get(p,
			    "sha256")), de->d_name) == 0)
				break;
		if (i == json_array_size(pols)) {
			closedir(dp);
			return bad(msg, msglen, "%s/%s is no policy file the log "
			    "names", BUNDLE_POLICY_DIR, de->d_name);
		}
	}
	closedir(dp);
	return 0;
}

/* records.jsonl must be exactly what the filter selects from the chain. */
static int
check_records(const char *dir, const char *selected, size_t sellen,
    char *msg, size_t msglen)
{
	char	 path[PATH_MAX], *data;
	size_t	 len, i;
	int	 rv;

	if (xsnprintf(path, sizeof(path), "%s/%s", dir, BUNDLE_RECORDS) == -1 ||
	    read_file(path, RECORDS_MAX, &data, &len) == -1)
		return bad(msg, msglen, "%s: %s", BUNDLE_RECORDS, strerror(errno));
	rv = 0;
	if (len != sellen || memcmp(data, selected, len) != 0) {
		for (i = 0; i < len && i < sellen && data[i] == selected[i]; i++)
			;
		rv = bad(msg, msglen, "%s differs from the records the filter "
		    "selects from the chain (first difference at byte %zu): a "
		    "record was edited, removed or added", BUNDLE_RECORDS, i);
	}
	free(data);
	return rv;
}

/* A copy of a policies array without the "available" flags. */
static json_t *
strip_available(const json_t *pols)
{
	json_t	*out = json_deep_copy(pols), *p;
	size_t	 i;

	json_array_foreach(out, i, p)
		json_object_del(p, "available");
	return out;
}

/*
 * What bundle.json says that the chain also says must agree with it:
 * only "created" and "log_dir" are the creator's word alone.
 */
static int
check_meta(const char *dir, const json_t *meta, const struct bundle_scan *s,
    const struct logfile *files, size_t n, const json_t *pols, char *msg,
    size_t msglen)
{
	const json_t	*e, *rec, *mp = json_object_get(meta, "policies");
	json_t		*names = json_array(), *a, *b, *c, *na;
	char		 path[PATH_MAX], *data = NULL;
	const char	*readme = bundle_readme();
	json_int_t	 cover = 0;
	size_t		 i, len;
	int		 rv = 1;

	for (i = 0; i < n; i++)
		json_array_append_new(names, json_string(files[i].name));
	json_array_foreach(s->checkpoints, i, e) {
		rec = json_object_get(e, "rec");
		if ((uint64_t)json_integer_value(json_object_get(rec,
		    "cp_seq")) >= s->need_signed) {
			cover = json_integer_value(json_object_get(rec, "cp_seq"));
			break;
		}
	}
	na = json_array();
	json_array_foreach(mp, i, e)
		if (!json_is_true(json_object_get(e, "available")))
			json_array_append(na, (json_t *)e);
	/* Those not available are exactly the ones flagged so. */
	a = strip_available(mp);
	b = strip_available(json_object_get(meta, "policies_not_available"));
	c = strip_available(na);
	if (json_integer_value(json_object_get(meta, "records")) !=
	    (json_int_t)s->nrecords ||
	    json_integer_value(json_object_get(meta, "first_seq")) !=
	    (json_int_t)s->first_seq ||
	    json_integer_value(json_object_get(meta, "last_seq")) !=
	    (json_int_t)s->last_seq)
		bad(msg, msglen, "%s: records or seq range differ from the "
		    "chain's", BUNDLE_META);
	else if (!json_equal(json_object_get(meta, "log_files"), names))
		bad(msg, msglen, "%s: log_files differ from the files in %s",
		    BUNDLE_META, BUNDLE_LOG_DIR);
	else if (json_integer_value(json_object_get(meta, "checkpoint_seq")) !=
	    cover)
		bad(msg, msglen, "%s: checkpoint_seq is not the checkpoint that "
		    "covers the records", BUNDLE_META);
	else if (!json_equal(json_object_get(meta, "digests"), s->digests))
		bad(msg, msglen, "%s: digests differ from the records'",
		    BUNDLE_META);
	else if (!json_equal(a, pols) || !json_equal(b, c))
		bad(msg, msglen, "%s: policies differ from the policy_load "
		    "records in the chain", BUNDLE_META);
	else if (xsnprintf(path, sizeof(path), "%s/%s", dir, BUNDLE_README) ==
	    -1 || read_file(path, 1024 * 1024, &data, &len) == -1 ||
	    len != strlen(readme) || memcmp(data, readme, len) != 0)
		bad(msg, msglen, "%s is not the README of %s", BUNDLE_README,
		    BUNDLE_FORMAT);
	else
		rv = 0;
	free(data);
	json_decref(names);
	json_decref(na);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	return rv;
}

static json_t *
load_meta(const char *dir, char *msg, size_t msglen)
{
	char		 path[PATH_MAX], *data;
	size_t		 len;
	json_t		*j;
	const char	*fmt;

	if (xsnprintf(path, sizeof(path), "%s/%s", dir, BUNDLE_META) == -1 ||
	    read_file(path, META_MAX, &data, &len) == -1) {
		bad(msg, msglen, "%s: %s", BUNDLE_META, strerror(errno));
		return NULL;
	}
	j = json_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
	free(data);
	fmt = json_string_value(json_object_get(j, "format"));
	if (!json_is_object(j) || fmt == NULL || strcmp(fmt, BUNDLE_FORMAT) != 0 ||
	    !json_is_object(json_object_get(j, "filter"))) {
		json_decref(j);
		bad(msg, msglen, "%s: not a %s description", BUNDLE_META,
		    BUNDLE_FORMAT);
		return NULL;
	}
	return j;
}

int
bundle_verify(const char *dir, EVP_PKEY *pub, char *msg, size_t msglen,
    char *warn, size_t warnlen)
{
	struct verify_opts	 o;
	struct verify_report	 r;
	struct bundle_filter	 f;
	struct bundle_scan	 s;
	struct logfile		*files = NULL;
	EVP_PKEY		*own = NULL;
	char			 logd[PATH_MAX], path[PATH_MAX], err[512];
	char			*sel = NULL;
	size_t			 n = 0, sellen = 0, from = SIZE_MAX;
	json_t			*meta = NULL, *pols = NULL;
	int			 rv = 1;

	memset(&s, 0, sizeof(s));
	warn[0] = '\0';
	if (bundle_manifest_check(dir, msg, msglen) == -1 ||
	    (meta = load_meta(dir, msg, msglen)) == NULL)
		goto out;
	if (pub == NULL) {
		if (xsnprintf(path, sizeof(path), "%s/%s", dir, BUNDLE_PUBKEY) ==
		    -1 || (own = ed25519_load_public(path, err,
		    sizeof(err))) == NULL) {
			rv = bad(msg, msglen, "no --pubkey given and the bundle's "
			    "own key does not load: %s", err);
			goto out;
		}
		snprintf(warn, warnlen, "checked with the bundle's own %s: it "
		    "proves nothing unless its key_id is the one you hold",
		    BUNDLE_PUBKEY);
		pub = own;
	}
	memset(&o, 0, sizeof(o));
	o.pubkey = pub;
	o.segment = 1;
	if (xsnprintf(logd, sizeof(logd), "%s/%s", dir, BUNDLE_LOG_DIR) == -1)
		goto out;
	switch (verify_dir(logd, &o, &r)) {
	case VERIFY_OK:
		break;
	case VERIFY_TAMPERED:
		rv = bad(msg, msglen, "%s/%s: %s", BUNDLE_LOG_DIR, r.where,
		    r.reason);
		goto out;
	default:
		rv = bad(msg, msglen, "%s", r.reason);
		goto out;
	}
	if (logdir_list(logd, &files, &n) == -1 || n == 0) {
		rv = bad(msg, msglen, "%s: no log files", BUNDLE_LOG_DIR);
		goto out;
	}
	bundle_filter_from_json(json_object_get(meta, "filter"), &f);
	if ((s.records = open_memstream(&sel, &sellen)) == NULL)
		fatal("open_memstream");
	if (bundle_scan(logd, files, 0, n - 1, &f, &s, msg, msglen) == -1)
		goto out;
	fclose(s.records);
	s.records = NULL;
	if (s.nrecords == 0) {
		rv = bad(msg, msglen, "no record in the chain matches the "
		    "bundle's filter");
		goto out;
	}
	/* A checkpoint record at seq N signs seq N - 1 and all before it. */
	if (s.need_signed >= r.last_signed) {
		rv = bad(msg, msglen, "record seq %llu is after the last "
		    "signed checkpoint (seq %llu): not authenticated",
		    (unsigned long long)s.need_signed,
		    (unsigned long long)r.last_signed);
		goto out;
	}
	pols = bundle_policies(&s, &from);
	if (check_meta(dir, meta, &s, files, n, pols, msg, msglen) != 0 ||
	    check_records(dir, sel, sellen, msg, msglen) != 0 ||
	    check_cp_files(dir, s.checkpoints, msg, msglen) != 0 ||
	    check_policies(dir, pols, json_object_get(meta,
	    "policies_not_available"), msg, msglen) != 0)
		goto out;
	snprintf(msg, msglen, "bundle intact: %llu record(s) (seq %llu..%llu) "
	    "in %zu log file(s), chain verified from seq %llu, signed by "
	    "checkpoint(s) up to seq %llu; %llu code blob(s), %zu policy "
	    "file(s) in force (%zu not available)",
	    (unsigned long long)s.nrecords, (unsigned long long)s.first_seq,
	    (unsigned long long)s.last_seq, n, (unsigned long long)r.first_seq,
	    (unsigned long long)r.last_signed - 1, (unsigned long long)r.blobs,
	    json_array_size(pols), json_array_size(json_object_get(meta,
	    "policies_not_available")));
	rv = 0;
out:
	if (s.records != NULL)
		fclose(s.records);
	free(sel);
	free(files);
	json_decref(pols);
	json_decref(meta);
	bundle_scan_free(&s);
	EVP_PKEY_free(own);
	return rv;
}
