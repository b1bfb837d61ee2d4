/*
 * Verification of an audit log directory.  Everything read here may have
 * been written by an attacker: each line is parsed at fixed positions,
 * hashed as it lies on disk, and linked to the one before; files are
 * linked by their rotate records; signed checkpoints, in the log and in
 * the off-host copy, authenticate the chain and bound its tail.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blobstore.h"
#include "buf.h"
#include "checkpoint.h"
#include "logdir.h"
#include "util.h"
#include "verify.h"

#define VERIFY_CHUNK		(4 * 1024 * 1024)
#define VERIFY_LINE_MAX		(64 * 1024 * 1024)	/* far above any record */
#define CHECKPOINTS_FILE_MAX	(256ULL * 1024 * 1024)

struct offhost {
	struct checkpoint	cp;
	const char		*src;		/* the file it came from */
	unsigned long		line;
};

struct verifier {
	const struct verify_opts *o;
	struct verify_report	*r;
	struct sha256_ctx	 ctx;
	uint64_t		 next_seq;	/* 0 before the first record */
	uint8_t			 prev[SHA256_LEN];
	char			 prev_file[LOGFILE_NAME_MAX];
	char			 missing[LOGFILE_NAME_MAX];
	uint64_t		 missing_before;
	json_t			*removed;	/* names retention deleted */
	uint64_t		 last_signed;	/* seq of the last verified checkpoint record */
	struct offhost		*off;
	size_t			 noff, ioff;
	const char		*dir;		/* NULL: no blob store to check */
};

static enum verify_result
tampered(struct verifier *v, const char *file, unsigned long line,
    uint64_t seq, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static enum verify_result
tampered(struct verifier *v, const char *file, unsigned long line,
    uint64_t seq, const char *fmt, ...)
{
	va_list	 ap;

	if (seq != 0)
		snprintf(v->r->where, sizeof(v->r->where), "%s:%lu seq %llu",
		    file, line, (unsigned long long)seq);
	else
		snprintf(v->r->where, sizeof(v->r->where), "%s:%lu", file, line);
	va_start(ap, fmt);
	vsnprintf(v->r->reason, sizeof(v->r->reason), fmt, ap);
	va_end(ap);
	v->r->result = VERIFY_TAMPERED;
	return VERIFY_TAMPERED;
}

static int
removed_has(const json_t *removed, const char *name)
{
	const json_t	*e;
	size_t		 i;

	json_array_foreach(removed, i, e)
		if (json_is_string(e) && strcmp(json_string_value(e), name) == 0)
			return 1;
	return 0;
}

static json_t *
line_json(const char *line, size_t len)
{
	return json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
}

static int
offhost_cmp(const void *a, const void *b)
{
	const struct offhost	*x = a, *y = b;

	return x->cp.seq < y->cp.seq ? -1 : x->cp.seq > y->cp.seq;
}

/* The witness's checkpoints of this log's chain, once it is known. */
static void
take_witness(struct verifier *v)
{
	const struct witness	*w = v->o->witness;
	size_t			 i, n = v->noff;

	for (i = 0; i < w->n; i++)
		if (strcmp(w->cps[i].cp.chain_id, v->r->chain_id) == 0)
			n++;
	if (n == v->noff)
		return;
	v->off = xrealloc(v->off, n * sizeof(*v->off));
	for (i = 0; i < w->n; i++) {
		if (strcmp(w->cps[i].cp.chain_id, v->r->chain_id) != 0)
			continue;
		v->off[v->noff].cp = w->cps[i].cp;
		v->off[v->noff].src = w->cps[i].src;
		v->off[v->noff++].line = w->cps[i].line;
	}
	if (v->noff > 0)
		qsort(v->off, v->noff, sizeof(*v->off), offhost_cmp);
}

static int
set_chain_id(struct verifier *v, const char *id)
{
	if (id == NULL || strlen(id) != CHAIN_ID_HEX)
		return -1;
	if (v->r->chain_id[0] == '\0') {
		memcpy(v->r->chain_id, id, CHAIN_ID_HEX + 1);
		if (v->o->witness != NULL)
			take_witness(v);
		return 0;
	}
	return strcmp(v->r->chain_id, id) == 0 ? 0 : -1;
}

/* The first record of a file: chain_start (the log's first) or rotate. */
static enum verify_result
check_file_start(struct verifier *v, const char *name, const char *line,
    size_t len, struct chain_line *cl)
{
	static const uint8_t	 zero[SHA256_LEN];
	char			 want[LOGFILE_NAME_MAX];
	const char		*pf;
	json_t			*j, *rem, *e;
	size_t			 i;
	enum verify_result	 rv = VERIFY_OK;

	if (chain_line_decode(cl) == -1)
		return tampered(v, name, 1, cl->seq, "malformed prev or hash");
	logfile_name(cl->seq, want);
	if (strcmp(want, name) != 0)
		return tampered(v, name, 1, cl->seq, "file name does not match "
		    "its first record (expected %s)", want);
	if ((j = line_json(line, len)) == NULL)
		return tampered(v, name, 1, cl->seq, "first record is not "
		    "valid JSON");
	if (cl->eventlen == 11 && memcmp(cl->event, "chain_start", 11) == 0) {
		if (cl->seq != 1 || memcmp(cl->prev, zero, SHA256_LEN) != 0 ||
		    v->prev_file[0] != '\0')
			rv = tampered(v, name, 1, cl->seq, "chain_start "
			    "after the beginning of the chain");
		else if (set_chain_id(v, json_string_value(json_object_get(j,
		    "chain_id"))) == -1)
			rv = tampered(v, name, 1, cl->seq, "malformed chain_id");
	} else if (cl->eventlen == 6 && memcmp(cl->event, "rotate", 6) == 0) {
		pf = json_string_value(json_object_get(j, "prev_file"));
		rem = json_object_get(j, "removed");
		if (set_chain_id(v, json_string_value(json_object_get(j,
		    "chain_id"))) == -1)
			rv = tampered(v, name, 1, cl->seq, "rotate record "
			    "names another chain");
		else if (pf == NULL || !json_is_array(rem))
			rv = tampered(v, name, 1, cl->seq, "rotate record "
			    "lacks prev_file or removed");
		else if (v->prev_file[0] != '\0' &&
		    strcmp(pf, v->prev_file) != 0)
			rv = tampered(v, name, 1, cl->seq, "previous file %s "
			    "is missing (found %s before it)", pf,
			    v->prev_file);
		else if (v->prev_file[0] == '\0') {
			snprintf(v->missing, sizeof(v->missing), "%s", pf);
			v->missing_before = cl->seq;
		}
		json_array_foreach(rem, i, e)
			json_array_append(v->removed, e);
	} else
		rv = tampered(v, name, 1, cl->seq, "first record of a file "
		    "must be chain_start or rotate");
	json_decref(j);
	return rv;
}

static enum verify_result
check_checkpoint(struct verifier *v, const char *name, unsigned long lineno,
    const char *line, size_t len, const struct chain_line *cl)
{
	struct checkpoint	 cp;
	const char		*why;
	json_t			*j;
	int			 ok;

	v->r->checkpoints++;
	if ((j = line_json(line, len)) == NULL)
		return tampered(v, name, lineno, cl->seq, "checkpoint record "
		    "is not valid JSON");
	ok = checkpoint_from_record(j, &cp, &why);
	json_decref(j);
	if (ok == -1)
		return tampered(v, name, lineno, cl->seq, "%s", why);
	if (strcmp(cp.chain_id, v->r->chain_id) != 0)
		return tampered(v, name, lineno, cl->seq, "checkpoint names "
		    "another chain");
	if (cp.seq + 1 != cl->seq || memcmp(cp.hash, cl->prev, SHA256_LEN) != 0)
		return tampered(v, name, lineno, cl->seq, "checkpoint does not "
		    "sign the record before it");
	if (v->o->pubkey == NULL)
		return VERIFY_OK;
	if (!checkpoint_verify(&cp, v->o->pubkey))
		return tampered(v, name, lineno, cl->seq, "checkpoint signature "
		    "does not verify with the given public key (key_id %s)",
		    cp.key_id);
	v->r->checkpoints_verified++;
	v->last_signed = cl->seq;
	return VERIFY_OK;
}

/* Off-host checkpoints at or before this record must match its hash. */
static enum verify_result
check_offhost(struct verifier *v, const struct chain_line *cl)
{
	struct offhost	*oh;
	char		 hex[SHA256_HEX + 1];

	for (; v->ioff < v->noff; v->ioff++) {
		oh = &v->off[v->ioff];
		if (oh->cp.seq > cl->seq)
			break;
		if (oh->cp.seq < cl->seq) {
			/* Only possible before the first record present. */
			v->r->offhost_skipped++;
			continue;
		}
		if (strcmp(oh->cp.chain_id, v->r->chain_id) != 0)
			return tampered(v, oh->src, oh->line, oh->cp.seq,
			    "off-host checkpoint belongs to chain %s, the log "
			    "to %s: the log was replaced", oh->cp.chain_id,
			    v->r->chain_id);
		if (memcmp(oh->cp.hash, cl->hash, SHA256_LEN) != 0) {
			hex_encode(oh->cp.hash, SHA256_LEN, hex);
			return tampered(v, oh->src, oh->line, oh->cp.seq,
			    "off-host checkpoint hash %s differs from the "
			    "log's record: the log was rewritten", hex);
		}
		v->r->offhost_checked++;
	}
	return VERIFY_OK;
}

/* Blob hex must be in the folder of log file name, still hashing to it. */
static enum verify_result
check_one_blob(struct verifier *v, const char *name, unsigned long lineno,
    uint64_t seq, const char *what, const char *hex)
{
	char	 dir[PATH_MAX];

	if (blobstore_dir(v->dir, name, dir, sizeof(dir)) == -1)
		return tampered(v, name, lineno, seq, "blob folder name too "
		    "long");
	switch (blobstore_check(dir, hex)) {
	case BLOB_OK:
		if (strcmp(what, "code") == 0)	/* verify counts code blobs */
			v->r->blobs++;
		return VERIFY_OK;
	case BLOB_MISSING:
		return tampered(v, name, lineno, seq, "%s blob sha256:%s is "
		    "missing from %s", what, hex, dir);
	case BLOB_CHANGED:
		return tampered(v, name, lineno, seq, "%s blob sha256:%s in %s "
		    "was changed: its bytes no longer hash to it", what, hex,
		    dir);
	default:
		return tampered(v, name, lineno, seq, "%s blob sha256:%s in %s "
		    "cannot be read: %s", what, hex, dir, strerror(errno));
	}
}

/*
 * A record that says its code was kept in full names the blob by its
 * code_hash, and a policy_load names each file it kept (kept: true) by
 * its sha256, so the chain covers the blobs: each must be in the
 * record's file's folder and still hash to its name.
 */
static enum verify_result
check_blob(struct verifier *v, const char *name, unsigned long lineno,
    const char *line, size_t ll, const struct chain_line *cl)
{
	static const char	 mark[] = "\"code_retention\":\"full\"";
	static const char	 pmark[] = "\"kept\":true";
	enum verify_result	 rv = VERIFY_OK;
	const char		*hash, *kept;
	const json_t		*f;
	json_t			*j;
	size_t			 i;

	if (v->dir == NULL || (memmem(line, ll, mark, sizeof(mark) - 1) ==
	    NULL && memmem(line, ll, pmark, sizeof(pmark) - 1) == NULL))
		return VERIFY_OK;
	j = line_json(line, ll);
	hash = json_string_value(json_object_get(j, "code_hash"));
	kept = json_string_value(json_object_get(j, "code_retention"));
	if (cl->eventlen == 11 && memcmp(cl->event, "policy_load", 11) == 0)
		json_array_foreach(json_object_get(j, "files"), i, f) {
			if (rv != VERIFY_OK ||
			    !json_is_true(json_object_get(f, "kept")))
				continue;
			hash = json_string_value(json_object_get(f, "sha256"));
			if (hash != NULL && strncmp(hash, "sha256:", 7) == 0)
				hash += 7;
			rv = !blobstore_hex_ok(hash) ? tampered(v, name, lineno,
			    cl->seq, "policy file kept, but the record names "
			    "no sha256") : check_one_blob(v, name, lineno,
			    cl->seq, "policy", hash);
		}
	else if (kept == NULL || strcmp(kept, "full") != 0)
		;	/* the mark sits inside some other field's value */
	else if (hash == NULL || strncmp(hash, "sha256:", 7) != 0 ||
	    !blobstore_hex_ok(hash + 7))
		rv = tampered(v, name, lineno, cl->seq, "code kept in full, "
		    "but the record names no code_hash");
	else
		rv = check_one_blob(v, name, lineno, cl->seq, "code", hash + 7);
	json_decref(j);
	return rv;
}

/* Checks one complete line (without its '\n') and advances the chain. */
static enum verify_result
verify_line(struct verifier *v, const char *name, unsigned long lineno,
    const char *line, size_t ll)
{
	struct chain_line	 cl;
	enum chain_check	 cr;
	enum verify_result	 rv;
	const char		*why = "";
	char			 reason[256];

	cr = chain_check_line(&v->ctx, line, ll, v->next_seq,
	    v->next_seq ? v->prev : NULL, &cl, &why);
	/* A file that does not follow on: name what is missing. */
	if (lineno == 1 && (cr == CHAIN_BAD_SEQ || cr == CHAIN_BAD_PREV) &&
	    check_file_start(v, name, line, ll, &cl) != VERIFY_OK)
		return VERIFY_TAMPERED;
	if (cr != CHAIN_OK) {
		chain_check_reason(cr, &cl, v->next_seq, why, reason,
		    sizeof(reason));
		return tampered(v, name, lineno,
		    cr == CHAIN_MALFORMED ? v->next_seq : cl.seq, "%s", reason);
	}
	if (lineno == 1)
		rv = check_file_start(v, name, line, ll, &cl);
	else if ((cl.eventlen == 6 && memcmp(cl.event, "rotate", 6) == 0) ||
	    (cl.eventlen == 11 && memcmp(cl.event, "chain_start", 11) == 0))
		rv = tampered(v, name, lineno, cl.seq, "%.*s record in the "
		    "middle of a file", (int)cl.eventlen, cl.event);
	else if (cl.eventlen == 10 && memcmp(cl.event, "checkpoint", 10) == 0)
		rv = check_checkpoint(v, name, lineno, line, ll, &cl);
	else
		rv = VERIFY_OK;
	if (rv == VERIFY_OK && v->noff > 0)
		rv = check_offhost(v, &cl);
	if (rv == VERIFY_OK)
		rv = check_blob(v, name, lineno, line, ll, &cl);
	if (rv != VERIFY_OK)
		return rv;
	if (v->r->records++ == 0)
		v->r->first_seq = cl.seq;
	v->r->last_seq = cl.seq;
	v->next_seq = cl.seq + 1;
	memcpy(v->prev, cl.hash, SHA256_LEN);
	return VERIFY_OK;
}

/*
 * Bytes of the newest file after its first NUL, at file offset off.  The
 * zeros ahead of the records are what the writer has not overwritten
 * yet; a batch torn by a crash leaves whole sectors of it, so what
 * follows a run of NULs starts on a sector.  A run that ends anywhere
 * else is a damaged record, not the tail.  (A verify racing the writer
 * could in principle see a page half copied; the daemon's own reads
 * never race it.)
 */
static enum verify_result
zero_run(struct verifier *v, const char *name, unsigned long lineno,
    const uint8_t *p, size_t len, size_t off, int *after)
{
	size_t	 i;

	for (i = 0; i < len && p[i] == '\0'; i++)
		;
	if (i == len)
		return VERIFY_OK;
	if ((off + i) % LOGFILE_SECTOR != 0)
		return tampered(v, name, lineno, v->next_seq, "NUL bytes in "
		    "the middle of records (offset %zu)", off);
	*after = 1;
	return VERIFY_OK;
}

/* Bytes after a file's last '\n'. */
static enum verify_result
verify_tail(struct verifier *v, const char *name, unsigned long lineno,
    const char *line, size_t len, int newest)
{
	struct chain_line	 cl;
	const char		*why;

	if (!newest)
		return tampered(v, name, lineno, v->next_seq, "incomplete last "
		    "line in a rotated file");
	/*
	 * A write in progress, or torn by a crash: the daemon cuts it at
	 * start and records the cut.  But a torn write is a prefix of a
	 * record; a whole record with something other than '\n' after it
	 * was altered.
	 */
	if (len > 1 && chain_check_line(&v->ctx, line, len - 1, v->next_seq,
	    v->next_seq ? v->prev : NULL, &cl, &why) == CHAIN_OK)
		return tampered(v, name, lineno, cl.seq, "the newline ending "
		    "this record was altered");
	snprintf(v->r->warning, sizeof(v->r->warning), "%s:%lu: incomplete "
	    "last line (%zu bytes): a write in progress or torn by a crash",
	    name, lineno, len);
	return VERIFY_OK;
}

/* Checks the complete lines of data; *used: bytes up to the last '\n'. */
static enum verify_result
verify_lines(struct verifier *v, const char *name, unsigned long *lineno,
    const char *data, size_t len, size_t *used)
{
	enum verify_result	 rv;
	const char		*nl;
	size_t			 off = 0;

	while (off < len && (nl = memchr(data + off, '\n', len - off)) != NULL) {
		if ((rv = verify_line(v, name, *lineno, data + off,
		    (size_t)(nl - data - off))) != VERIFY_OK)
			return rv;
		(*lineno)++;
		off = (size_t)(nl - data) + 1;
	}
	*used = off;
	return VERIFY_OK;
}

static enum verify_result
verify_empty(struct verifier *v, const char *name, int newest)
{
	if (!newest)
		return tampered(v, name, 0, 0, "empty file");
	snprintf(v->r->warning, sizeof(v->r->warning), "%s is empty (created "
	    "just before a crash or a stop)", name);
	return VERIFY_OK;
}

static enum verify_result
verify_file(struct verifier *v, const char *name, const char *data,
    size_t len, int newest)
{
	enum verify_result	 rv;
	unsigned long		 lineno = 1;
	size_t			 used, end;
	int			 after = 0;

	v->r->files++;
	if (len == 0)
		return verify_empty(v, name, newest);
	/* The active file's zeros ahead of its records are not records
	 * (verify_fd says more). */
	if ((end = logfile_records_len(data, len)) < len && !newest)
		return tampered(v, name, lineno, v->next_seq, "NUL bytes in a "
		    "rotated file");
	if ((rv = verify_lines(v, name, &lineno, data, end, &used)) !=
	    VERIFY_OK)
		return rv;
	if (end < len && (rv = zero_run(v, name, lineno, (const uint8_t *)data +
	    end, len - end, end, &after)) != VERIFY_OK)
		return rv;
	if (used < end &&
	    (rv = verify_tail(v, name, lineno, data + used, end - used,
	    newest)) != VERIFY_OK)
		return rv;
	if (after && used == end)
		snprintf(v->r->warning, sizeof(v->r->warning), "%s:%lu: bytes "
		    "after the zero-filled tail: a write in progress or torn "
		    "by a crash", name, lineno);
	snprintf(v->prev_file, sizeof(v->prev_file), "%s", name);
	return VERIFY_OK;
}

/*
 * Streams a file through a reused buffer: no copy of the whole file, no
 * page faults on fresh memory, whatever the file's size.
 */
static enum verify_result
verify_fd(struct verifier *v, const char *name, int fd, int newest,
    struct buf *b)
{
	enum verify_result	 rv;
	unsigned long		 lineno = 1;
	size_t			 used, total = 0, keep;
	ssize_t			 n;
	int			 zeros = 0, after = 0;

	v->r->files++;
	buf_reset(b);
	for (;;) {
		if (b->cap - b->len < VERIFY_CHUNK / 2 &&
		    buf_reserve(b, VERIFY_CHUNK) == -1)
			return tampered(v, name, lineno, v->next_seq, "line "
			    "longer than %d bytes", VERIFY_LINE_MAX);
		n = read(fd, b->data + b->len, b->cap - b->len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(v->r->reason, sizeof(v->r->reason), "%s: %s",
			    name, strerror(errno));
			return v->r->result = VERIFY_ERROR;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		/*
		 * The active file is zero-filled ahead of its records: the
		 * first NUL ends them.  Bytes after it are a batch being
		 * written (or torn by a crash): not records yet.  A rotated
		 * file was cut to its records, so a NUL there is damage.
		 */
		if (zeros) {
			if (!after && (rv = zero_run(v, name, lineno, b->data +
			    b->len, (size_t)n, total - (size_t)n, &after)) !=
			    VERIFY_OK)
				return rv;
			continue;
		}
		keep = logfile_records_len((char *)b->data + b->len, (size_t)n);
		if (keep < (size_t)n) {
			if (!newest)
				return tampered(v, name, lineno, v->next_seq,
				    "NUL bytes in a rotated file");
			zeros = 1;
			if ((rv = zero_run(v, name, lineno, b->data + b->len +
			    keep, (size_t)n - keep, total - (size_t)n + keep,
			    &after)) != VERIFY_OK)
				return rv;
		}
		b->len += keep;
		if ((rv = verify_lines(v, name, &lineno, (char *)b->data,
		    b->len, &used)) != VERIFY_OK)
			return rv;
		buf_consume(b, used);
	}
	if (total == 0)
		return verify_empty(v, name, newest);
	if (b->len > 0 && (rv = verify_tail(v, name, lineno, (char *)b->data,
	    b->len, newest)) != VERIFY_OK)
		return rv;
	if (after && b->len == 0)
		snprintf(v->r->warning, sizeof(v->r->warning), "%s:%lu: bytes "
		    "after the zero-filled tail: a write in progress or torn "
		    "by a crash", name, lineno);
	snprintf(v->prev_file, sizeof(v->prev_file), "%s", name);
	return VERIFY_OK;
}

/* Loads and (with a public key) authenticates the off-host checkpoints. */
static enum verify_result
load_offhost(struct verifier *v, const char *dir, char *path, size_t pathlen)
{
	char		*data, *p, *nl;
	const char	*why;
	size_t		 len, cap = 0;
	unsigned long	 lineno = 0;

	if (xsnprintf(path, pathlen, "%s/%s", dir, CHECKPOINT_FILE) == -1 ||
	    read_file(path, CHECKPOINTS_FILE_MAX, &data, &len) == -1) {
		snprintf(v->r->reason, sizeof(v->r->reason), "%s: %s", path,
		    strerror(errno));
		return v->r->result = VERIFY_ERROR;
	}
	for (p = data; p < data + len; p = nl + 1) {
		lineno++;
		if ((nl = memchr(p, '\n', (size_t)(data + len - p))) == NULL) {
			/* Torn by a crash while appending: nothing it held
			 * was ever relied on. */
			snprintf(v->r->warning, sizeof(v->r->warning),
			    "%s:%lu: incomplete last line ignored", path, lineno);
			break;
		}
		if (v->noff == cap) {
			cap = cap ? cap * 2 : 64;
			v->off = xrealloc(v->off, cap * sizeof(*v->off));
		}
		if (checkpoint_from_line(p, (size_t)(nl - p), &v->off[v->noff].cp,
		    &why) == -1) {
			free(data);
			return tampered(v, path, lineno, 0, "%s", why);
		}
		if (v->o->pubkey != NULL &&
		    !checkpoint_verify(&v->off[v->noff].cp, v->o->pubkey)) {
			free(data);
			return tampered(v, path, lineno, v->off[v->noff].cp.seq,
			    "off-host checkpoint signature does not verify");
		}
		v->off[v->noff].src = path;
		v->off[v->noff++].line = lineno;
	}
	free(data);
	if (v->noff > 0)
		qsort(v->off, v->noff, sizeof(*v->off), offhost_cmp);
	return VERIFY_OK;
}

static void
verifier_init(struct verifier *v, const struct verify_opts *o,
    struct verify_report *r)
{
	memset(v, 0, sizeof(*v));
	memset(r, 0, sizeof(*r));
	v->o = o;
	v->r = r;
	v->removed = json_array();
	sha256_ctx_init(&v->ctx);
}

static void
verifier_free(struct verifier *v)
{
	json_decref(v->removed);
	sha256_ctx_free(&v->ctx);
	free(v->off);
}

/* Checks that need the whole log: retention, truncation, authentication. */
static enum verify_result
verify_finish(struct verifier *v, const char *lastfile)
{
	struct offhost	*oh;
	char		 kid[KEY_ID_HEX + 1];

	if (v->missing[0] != '\0' && !v->o->segment &&
	    !removed_has(v->removed, v->missing))
		return tampered(v, v->missing, 0, v->missing_before - 1,
		    "file is missing and no rotate record says retention "
		    "removed it");
	if (v->ioff < v->noff) {
		oh = &v->off[v->noff - 1];
		v->r->truncated = 1;
		return tampered(v, oh->src, oh->line, oh->cp.seq,
		    "the log was truncated: an off-host checkpoint signed at "
		    "%s covers seq %llu, but %s ends at seq %llu", oh->cp.ts,
		    (unsigned long long)oh->cp.seq, lastfile,
		    (unsigned long long)v->r->last_seq);
	}
	if (v->o->pubkey != NULL && v->r->checkpoints_verified == 0) {
		if (ed25519_key_id(v->o->pubkey, kid) == -1)
			kid[0] = '\0';
		return tampered(v, lastfile, 0, 0, "no checkpoint in the log "
		    "is signed by key %s: the log cannot be authenticated",
		    kid);
	}
	hex_encode(v->prev, SHA256_LEN, v->r->head);
	if (v->o->pubkey != NULL) {
		v->r->unsigned_tail = v->r->last_seq - v->last_signed;
		v->r->last_signed = v->last_signed;
	}
	return VERIFY_OK;
}

enum verify_result
verify_buffer(const char *name, const char *data, size_t len,
    const struct verify_opts *o, struct verify_report *r)
{
	struct verifier		 v;
	enum verify_result	 rv;

	verifier_init(&v, o, r);
	rv = verify_file(&v, name, data, len, 1);
	if (rv == VERIFY_OK)
		rv = verify_finish(&v, name);
	verifier_free(&v);
	return rv;
}

enum verify_result
verify_dir(const char *dir, const struct verify_opts *o,
    struct verify_report *r)
{
	struct verifier		 v;
	struct logfile		*files = NULL;
	enum verify_result	 rv = VERIFY_OK;
	char			 path[PATH_MAX], offpath[PATH_MAX];
	struct buf		 b;
	size_t			 n = 0, i;
	int			 fd;

	verifier_init(&v, o, r);
	v.dir = dir;
	if (o->checkpoints != NULL &&
	    (rv = load_offhost(&v, o->checkpoints, offpath,
	    sizeof(offpath))) != VERIFY_OK)
		goto out;
	if (logdir_list(dir, &files, &n) == -1) {
		snprintf(r->reason, sizeof(r->reason), "%s: %s", dir,
		    strerror(errno));
		rv = r->result = VERIFY_ERROR;
		goto out;
	}
	if (n == 0) {
		if (v.noff > 0) {
			r->truncated = 1;
			rv = tampered(&v, dir, 0, 0, "no log files, but off-host "
			    "checkpoints exist: the log was deleted");
		} else {
			snprintf(r->reason, sizeof(r->reason), "%s: no audit "
			    "log files (audit-*.log)", dir);
			rv = r->result = VERIFY_ERROR;
		}
		goto out;
	}
	buf_init(&b, VERIFY_LINE_MAX + VERIFY_CHUNK);
	for (i = 0; i < n && rv == VERIFY_OK; i++) {
		if (xsnprintf(path, sizeof(path), "%s/%s", dir,
		    files[i].name) == -1 ||
		    (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
			/* Retention may delete the oldest file while we list:
			 * the rotate record that removed it will say so. */
			if (errno == ENOENT && r->records == 0)
				continue;
			snprintf(r->reason, sizeof(r->reason), "%s: %s", path,
			    strerror(errno));
			rv = r->result = VERIFY_ERROR;
			break;
		}
		rv = verify_fd(&v, files[i].name, fd, i == n - 1, &b);
		close(fd);
	}
	buf_free(&b);
	if (rv == VERIFY_OK)
		rv = verify_finish(&v, files[n - 1].name);
out:
	free(files);
	verifier_free(&v);
	return rv;
}
