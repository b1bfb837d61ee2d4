/*
 * `stockade audit evidence`: cuts a self-contained evidence bundle out of
 * an audit log directory.  Reads the log and the policy files the log
 * names; trusts neither (policy files are copied only while they still
 * hash to what the log recorded).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blobstore.h"
#include "bundle.h"
#include "checkpoint.h"
#include "cli.h"
#include "util.h"
#include "witness.h"

#define EVIDENCE_DEFAULT_LOG_DIR	"/var/log/stockade/audit"
#define POLICY_FILE_MAX		(16 * 1024 * 1024)

static int
write_out(const char *path, const void *data, size_t len)
{
	int	 fd, rv;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644)) == -1)
		return -1;
	rv = write_all(fd, data, len);
	if (close(fd) == -1)
		rv = -1;
	return rv;
}

/* Copies src to dst; only bytes up to the last '\n' when lines is set. */
static int
copy_file(const char *src, const char *dst, int lines)
{
	char		*data, *nl;
	size_t		 len;
	int		 rv;

	if (read_file(src, BUNDLE_FILE_MAX, &data, &len) == -1)
		return -1;
	if (lines)
		len = (nl = memrchr(data, '\n', len)) ? (size_t)(nl - data) + 1 :
		    0;
	rv = write_out(dst, data, len);
	free(data);
	return rv;
}

/* The blob folder of one log file, copied whole. */
static int
copy_blobs(const char *log_dir, const char *out, const char *name)
{
	char	 src[PATH_MAX], dst[PATH_MAX], s[PATH_MAX], d[PATH_MAX];
	DIR	*dp;
	struct dirent	*de;
	int	 rv = 0;

	if (blobstore_dir(log_dir, name, src, sizeof(src)) == -1 ||
	    xsnprintf(dst, sizeof(dst), "%s/%s", out, BUNDLE_LOG_DIR) == -1 ||
	    blobstore_dir(dst, name, d, sizeof(d)) == -1)
		return -1;
	if ((dp = opendir(src)) == NULL)
		return errno == ENOENT ? 0 : -1;
	if (mkdir_p(d, 0755) == -1) {
		closedir(dp);
		return -1;
	}
	while (rv == 0 && (de = readdir(dp)) != NULL) {
		if (!blobstore_hex_ok(de->d_name))
			continue;	/* temporaries, dot entries */
		if (xsnprintf(s, sizeof(s), "%s/%s", src, de->d_name) == -1 ||
		    xsnprintf(dst, sizeof(dst), "%s/%s", d, de->d_name) == -1 ||
		    copy_file(s, dst, 0) == -1)
			rv = -1;
	}
	closedir(dp);
	return rv;
}

/* checkpoints/<cp_seq>.msg and .sig: what openssl checks on its own. */
static int
write_checkpoints(const char *out, const json_t *cps)
{
	struct checkpoint	 cp;
	const json_t		*e;
	const char		*why;
	char			 path[PATH_MAX], msg[CHECKPOINT_MSG_MAX];
	size_t			 i;
	int			 n;

	json_array_foreach(cps, i, e) {
		if (checkpoint_from_record(json_object_get(e, "rec"), &cp,
		    &why) == -1 || (n = checkpoint_message(&cp, msg,
		    sizeof(msg))) == -1)
			continue;	/* verify will name it */
		if (xsnprintf(path, sizeof(path), "%s/%s/%llu.msg", out,
		    BUNDLE_CP_DIR, (unsigned long long)cp.seq) == -1 ||
		    write_out(path, msg, (size_t)n) == -1 ||
		    xsnprintf(path, sizeof(path), "%s/%s/%llu.sig", out,
		    BUNDLE_CP_DIR, (unsigned long long)cp.seq) == -1 ||
		    write_out(path, cp.sig, sizeof(cp.sig)) == -1)
			return -1;
	}
	return 0;
}

/* policy/<hex> for each file in force that still hashes as recorded. */
static void
copy_policies(const char *out, json_t *pols)
{
	char	 path[PATH_MAX], hex[SHA256_HEX + 1], *data;
	json_t	*p;
	size_t	 i, len;
	int	 ok;

	json_array_foreach(pols, i, p) {
		const char *src = json_string_value(json_object_get(p, "path"));
		const char *want = json_string_value(json_object_get(p,
		    "sha256"));

		ok = 0;
		if (src != NULL && blobstore_hex_ok(want) &&
		    read_file(src, POLICY_FILE_MAX, &data, &len) == 0) {
			sha256_hex(data, len, hex);
			if (strcmp(hex, want) == 0 && xsnprintf(path,
			    sizeof(path), "%s/%s/%s", out, BUNDLE_POLICY_DIR,
			    hex) != -1 && (write_out(path, data, len) == 0 ||
			    errno == EEXIST))
				ok = 1;
			free(data);
		}
		json_object_set_new(p, "available", json_boolean(ok));
	}
}

static const char readme[] =
"# Stockade evidence bundle\n\n"
"What is here:\n\n"
"- `records.jsonl`: the records the bundle is about (filter in `bundle.json`),\n"
"  byte for byte as they lie in the log.\n"
"- `log/audit-*.log`: the whole log files holding them, cut from the hash\n"
"  chain, up to a file with a signed checkpoint after the last record;\n"
"  `log/blobs/<file>/<sha256>`: code those files retained in full.\n"
"- `checkpoints/<seq>.msg` and `.sig`: the exact text each checkpoint in\n"
"  those files signs (Ed25519) and its raw 64-byte signature;\n"
"  `checkpoint.pub`: the public key, if one was given. Use your own copy.\n"
"- `policy/<sha256>`: the policy files in force (by the hash `policy_load`\n"
"  recorded); `bundle.json` lists those no longer available.\n"
"- `bundle.json`: the filter, the seq range, the covering checkpoint, the\n"
"  sandbox digests (`seccomp_sha256`, `nft_sha256`) the records carry.\n"
"- `MANIFEST`: sha256 of every other file (`sha256sum -c` format).\n\n"
"## Verify with stockade\n\n"
"    stockade audit verify --bundle THIS_DIR_OR_TAR --pubkey YOUR_COPY.pub\n\n"
"It checks the MANIFEST, the chain through every log file, each\n"
"checkpoint signature, that records.jsonl is exactly what the filter\n"
"selects from the chain and lies before a signed checkpoint, every code\n"
"blob and policy file against the hash the chain holds, and the\n"
"checkpoint files against the checkpoint records.\n\n"
"## Verify with openssl alone\n\n"
"1. The key is the one you hold (compare with the `key_id` in the .msg\n"
"   records' checkpoint: the first 16 hex digits of SHA-256 of the raw\n"
"   key, the last 32 bytes of its DER form):\n\n"
"       openssl pkey -pubin -in checkpoint.pub -outform DER | tail -c 32 |\n"
"           openssl dgst -sha256 -r | cut -c1-16\n\n"
"2. Each checkpoint signature:\n\n"
"       for m in checkpoints/*.msg; do\n"
"           openssl pkeyutl -verify -pubin -inkey checkpoint.pub -rawin \\\n"
"               -in \"$m\" -sigfile \"${m%.msg}.sig\" || echo \"BAD $m\"\n"
"       done\n\n"
"   A .msg names `seq=N` and `hash=H`: the record with `\"seq\":N` in\n"
"   log/ must end in `\"hash\":\"H\"}`.\n\n"
"3. The chain: each line's hash is SHA-256 of the 32 raw bytes of its\n"
"   `prev` followed by the line up to `,\"hash\":`; each `prev` is the\n"
"   line before's hash (the first line's `prev` anchors the cut):\n\n"
"       last=; cat log/audit-*.log | while IFS= read -r l; do\n"
"         p=${l#*\\\"prev\\\":\\\"}; p=${p%%\\\"*}\n"
"         h=${l##*\\\"hash\\\":\\\"}; h=${h%%\\\"*}\n"
"         [ -z \"$last\" ] || [ \"$p\" = \"$last\" ] || echo \"BAD link ${l:0:30}\"\n"
"         g=$({ printf \"$(printf %s \"$p\" | sed 's/../\\\\x&/g')\"\n"
"               printf %s \"${l%,\\\"hash\\\":*}\"; } | openssl dgst -sha256 -r)\n"
"         [ \"${g:0:64}\" = \"$h\" ] || echo \"BAD hash ${l:0:30}\"; last=$h\n"
"       done\n\n"
"4. Every file: `openssl dgst -sha256 -r FILE` against MANIFEST; a blob's\n"
"   and a policy file's name is its own sha256, which the records name.\n";

const char *
bundle_readme(void)
{
	return readme;
}

static int
write_meta(const char *out, const struct bundle_filter *f,
    const struct bundle_scan *s, const struct logfile *files, size_t from,
    size_t to, uint64_t cover, json_t *pols, const char *log_dir)
{
	char	 path[PATH_MAX], ts[TS_LEN + 1], *text;
	json_t	*meta, *names = json_array(), *na = json_array(), *p;
	size_t	 i;
	int	 rv;

	for (i = from; i <= to; i++)
		json_array_append_new(names, json_string(files[i].name));
	json_array_foreach(pols, i, p)
		if (!json_is_true(json_object_get(p, "available")))
			json_array_append(na, p);
	ts_now(ts);
	meta = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I, s:I, s:o, s:I, s:O, "
	    "s:o, s:O}", "format", BUNDLE_FORMAT, "created", ts, "log_dir",
	    log_dir, "filter", bundle_filter_json(f), "records",
	    (json_int_t)s->nrecords, "first_seq", (json_int_t)s->first_seq,
	    "last_seq", (json_int_t)s->last_seq, "log_files", names,
	    "checkpoint_seq", (json_int_t)cover, "policies", pols,
	    "policies_not_available", na, "digests", s->digests);
	text = json_dumps(meta, JSON_INDENT(2));
	json_decref(meta);
	rv = -1;
	if (text != NULL && xsnprintf(path, sizeof(path), "%s/%s", out,
	    BUNDLE_META) != -1 && write_out(path, text, strlen(text)) == 0 &&
	    xsnprintf(path, sizeof(path), "%s/%s", out, BUNDLE_README) != -1)
		rv = write_out(path, readme, strlen(readme));
	free(text);
	return rv;
}

/* The first checkpoint that signs seq or later: its file, or -1. */
static long
covering_file(const json_t *cps, uint64_t seq, uint64_t *cover)
{
	const json_t	*e, *rec;
	size_t		 i;

	json_array_foreach(cps, i, e) {
		rec = json_object_get(e, "rec");
		if ((uint64_t)json_integer_value(json_object_get(rec, "cp_seq")) >=
		    seq) {
			*cover = (uint64_t)json_integer_value(json_object_get(rec,
			    "cp_seq"));
			return (long)json_integer_value(json_object_get(e, "file"));
		}
	}
	return -1;
}

static int
mkdirs(const char *out)
{
	static const char *const sub[] = { BUNDLE_LOG_DIR, BUNDLE_CP_DIR,
	    BUNDLE_POLICY_DIR };
	char	 path[PATH_MAX];
	size_t	 i;

	if (mkdir(out, 0755) == -1)
		return -1;
	for (i = 0; i < nitems(sub); i++)
		if (xsnprintf(path, sizeof(path), "%s/%s", out, sub[i]) == -1 ||
		    mkdir(path, 0755) == -1)
			return -1;
	return 0;
}

int
bundle_create(const char *log_dir, const struct bundle_filter *f,
    const char *pubkey, const char *out, char *err, size_t errlen)
{
	struct bundle_scan	 all, b;
	struct logfile		*files = NULL;
	char			 src[PATH_MAX], dst[PATH_MAX];
	json_t			*pols = NULL;
	uint64_t		 cover = 0;
	size_t			 n, i, from;
	long			 to;
	int			 rv = -1;

	memset(&all, 0, sizeof(all));
	memset(&b, 0, sizeof(b));
	if (logdir_list(log_dir, &files, &n) == -1 || n == 0) {
		snprintf(err, errlen, "%s: %s", log_dir, n == 0 ? "no audit log "
		    "files" : strerror(errno));
		goto out;
	}
	if (bundle_scan(log_dir, files, 0, n - 1, f, &all, err, errlen) == -1)
		goto out;
	if (all.nrecords == 0) {
		snprintf(err, errlen, "no record in %s matches", log_dir);
		goto out;
	}
	if ((to = covering_file(all.checkpoints, all.need_signed, &cover)) ==
	    -1) {
		snprintf(err, errlen, "the last matching record (seq %llu) is "
		    "not yet signed by a checkpoint: wait for the next one "
		    "(checkpoint.interval) and try again",
		    (unsigned long long)all.need_signed);
		goto out;
	}
	from = all.first_file;
	json_decref(bundle_policies(&all, &from));
	if (mkdirs(out) == -1) {
		snprintf(err, errlen, "%s: %s", out, strerror(errno));
		goto out;
	}
	for (i = from; i <= (size_t)to; i++)
		if (xsnprintf(src, sizeof(src), "%s/%s", log_dir,
		    files[i].name) == -1 || xsnprintf(dst, sizeof(dst),
		    "%s/%s/%s", out, BUNDLE_LOG_DIR, files[i].name) == -1 ||
		    copy_file(src, dst, 1) == -1 ||
		    copy_blobs(log_dir, out, files[i].name) == -1) {
			snprintf(err, errlen, "copying %s: %s", src,
			    strerror(errno));
			goto out;
		}
	/* Everything else is derived from the copy, as verify derives it. */
	if (xsnprintf(dst, sizeof(dst), "%s/%s", out, BUNDLE_RECORDS) == -1 ||
	    (b.records = fopen(dst, "wx")) == NULL) {
		snprintf(err, errlen, "%s: %s", dst, strerror(errno));
		goto out;
	}
	if (xsnprintf(dst, sizeof(dst), "%s/%s", out, BUNDLE_LOG_DIR) == -1 ||
	    bundle_scan(dst, files, from, (size_t)to, f, &b, err, errlen) == -1)
		goto out;
	if (fclose(b.records) != 0) {
		b.records = NULL;
		snprintf(err, errlen, "%s: %s", BUNDLE_RECORDS, strerror(errno));
		goto out;
	}
	b.records = NULL;
	i = SIZE_MAX;
	pols = bundle_policies(&b, &i);
	copy_policies(out, pols);
	if (pubkey != NULL && (xsnprintf(dst, sizeof(dst), "%s/%s", out,
	    BUNDLE_PUBKEY) == -1 || copy_file(pubkey, dst, 0) == -1)) {
		snprintf(err, errlen, "%s: %s", pubkey, strerror(errno));
		goto out;
	}
	if (write_checkpoints(out, b.checkpoints) == -1 ||
	    write_meta(out, f, &b, files, from, (size_t)to, cover, pols,
	    log_dir) == -1) {
		snprintf(err, errlen, "%s: %s", out, strerror(errno));
		goto out;
	}
	rv = bundle_manifest_write(out, err, errlen);
out:
	if (b.records != NULL)
		fclose(b.records);
	json_decref(pols);
	bundle_scan_free(&all);
	bundle_scan_free(&b);
	free(files);
	return rv;
}

/* One node's bundle, or a fleet's when several log dirs are given. */
static int
create(char *const *dirs, size_t ndirs, const struct bundle_filter *f,
    const char *const *pubs, size_t npubs, const char *out, char *err,
    size_t errlen)
{
	if (ndirs > 1)
		return bundle_create_fleet(dirs, ndirs, f, pubs, npubs, out,
		    err, errlen);
	return bundle_create(dirs[0], f, npubs > 0 ? pubs[npubs - 1] : NULL,
	    out, err, errlen);
}

/*
 * evidence [DIR ...] (--session ID | --principal P | --since TS | --until
 * TS) -o OUT [--pubkey FILE ...]: OUT ending in .tar is a tar, else a
 * folder; several DIRs (a fleet's nodes) make a fleet bundle.
 */
int
audit_evidence(int argc, char *argv[])
{
	static const struct option longopts[] = {
		BUNDLE_FILTER_LONGOPTS,
		{ "pubkey", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 }
	};
	struct bundle_filter	 f;
	char			*defdir[] = { (char *)EVIDENCE_DEFAULT_LOG_DIR };
	char			*const *dirs = defdir;
	const char		*out = NULL, *pubs[WITNESS_KEYS_MAX];
	char			 err[PATH_MAX + 512], tmp[PATH_MAX];
	size_t			 len, ndirs = 1, npubs = 0;
	int			 ch, rv;

	memset(&f, 0, sizeof(f));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		if (bundle_filter_opt(&f, ch, optarg) == 0)
			continue;
		switch (ch) {
		case 'o': out = optarg; break;
		case 'p':
			if (npubs == nitems(pubs))
				return EXIT_USAGE;
			pubs[npubs++] = optarg;
			break;
		default: return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		dirs = argv + optind;
		ndirs = (size_t)(argc - optind);
	}
	if (out == NULL || (f.session == NULL &&
	    f.principal == NULL && f.since == NULL && f.until == NULL)) {
		fprintf(stderr, "usage: stockade audit evidence [DIR ...] -o OUT "
		    "[--session ID] [--principal P] [--since TS] [--until TS] "
		    "[--pubkey FILE ...]\n");
		return EXIT_USAGE;
	}
	len = strlen(out);
	if (len <= 4 || strcmp(out + len - 4, ".tar") != 0) {
		if (create(dirs, ndirs, &f, pubs, npubs, out, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "stockade: %s\n", err);
			return EXIT_NEGATIVE;
		}
		printf("wrote evidence bundle %s\n", out);
		return 0;
	}
	/* A tar: the folder is built beside it, archived, then removed. */
	if (xsnprintf(tmp, sizeof(tmp), "%s.tmp.%d", out, (int)getpid()) == -1)
		return EXIT_USAGE;
	rv = create(dirs, ndirs, &f, pubs, npubs, tmp, err, sizeof(err));
	if (rv == 0 && access(out, F_OK) == 0) {
		snprintf(err, sizeof(err), "%s exists", out);
		rv = -1;
	}
	if (rv == 0)
		rv = bundle_tar_write(tmp, out, err, sizeof(err));
	(void)rmtree(tmp);
	if (rv == -1) {
		fprintf(stderr, "stockade: %s\n", err);
		return EXIT_NEGATIVE;
	}
	printf("wrote evidence bundle %s\n", out);
	return 0;
}
