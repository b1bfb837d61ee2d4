/*
 * Log directory housekeeping.  Recovery reads files that may have been
 * torn by a crash or edited by an attacker, so it trusts nothing it reads:
 * it cuts only a tail that holds no verifiable record and refuses to
 * append to a chain that is broken in the middle.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "logdir.h"
#include "util.h"

#define LOGFILE_READ_MAX	(1ULL << 40)

void
logfile_name(uint64_t first_seq, char out[LOGFILE_NAME_MAX])
{
	snprintf(out, LOGFILE_NAME_MAX, LOGFILE_PREFIX "%020" PRIu64
	    LOGFILE_SUFFIX, first_seq);
}

int
logfile_parse_name(const char *name, uint64_t *first_seq)
{
	char	 digits[21];
	size_t	 plen = strlen(LOGFILE_PREFIX), slen = strlen(LOGFILE_SUFFIX);

	if (strlen(name) != plen + 20 + slen ||
	    strncmp(name, LOGFILE_PREFIX, plen) != 0 ||
	    strcmp(name + plen + 20, LOGFILE_SUFFIX) != 0)
		return -1;
	memcpy(digits, name + plen, 20);
	digits[20] = '\0';
	return parse_u64(digits, 1, UINT64_MAX, first_seq);
}

static int
logfile_cmp(const void *a, const void *b)
{
	const struct logfile	*x = a, *y = b;

	return x->first_seq < y->first_seq ? -1 : x->first_seq > y->first_seq;
}

int
logdir_list(const char *dir, struct logfile **out, size_t *n)
{
	DIR		*d;
	struct dirent	*de;
	struct logfile	*v = NULL;
	size_t		 len = 0, cap = 0;
	uint64_t	 seq;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (logfile_parse_name(de->d_name, &seq) == -1)
			continue;
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, cap * sizeof(*v));
		}
		logfile_name(seq, v[len].name);
		v[len++].first_seq = seq;
	}
	closedir(d);
	if (len > 0)
		qsort(v, len, sizeof(*v), logfile_cmp);
	*out = v;
	*n = len;
	return 0;
}

int
logdir_lock(const char *dir)
{
	char	 path[PATH_MAX];
	int	 fd;

	if (xsnprintf(path, sizeof(path), "%s/.lock", dir) == -1)
		return -1;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		log_warn("%s", path);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		log_warnx("%s: another stockade-auditd is writing to %s", path,
		    dir);
		close(fd);
		return -1;
	}
	return fd;	/* held until exit */
}

json_t *
logdir_first_record(const char *data, size_t len)
{
	const char	*nl = memchr(data, '\n', len);

	if (nl == NULL)
		return NULL;
	return json_loadb(data, (size_t)(nl - data), JSON_REJECT_DUPLICATES,
	    NULL);
}

/* Reads chain_id from the file's first record, which starts a chain or a file. */
static int
first_record_chain_id(const char *data, size_t len, char *out)
{
	json_t		*j;
	const char	*ev, *id;
	int		 rv = -1;

	if ((j = logdir_first_record(data, len)) == NULL)
		return -1;
	ev = json_string_value(json_object_get(j, "event"));
	id = json_string_value(json_object_get(j, "chain_id"));
	if (ev != NULL && id != NULL && strlen(id) == CHAIN_ID_HEX &&
	    (strcmp(ev, "chain_start") == 0 || strcmp(ev, "rotate") == 0)) {
		memcpy(out, id, CHAIN_ID_HEX + 1);
		rv = 0;
	}
	json_decref(j);
	return rv;
}

/* 1 when any complete line from off onward is a self-consistent record. */
static int
later_record_exists(struct sha256_ctx *ctx, const char *data, size_t len,
    size_t off)
{
	struct chain_line	 cl;
	const char		*nl, *why;

	while (off < len && (nl = memchr(data + off, '\n', len - off)) != NULL) {
		if (chain_parse(data + off, (size_t)(nl - data - off), &cl,
		    &why) == 0 && chain_hash_ok(ctx, data + off, &cl))
			return 1;
		off = (size_t)(nl - data) + 1;
	}
	return 0;
}

struct scan {
	size_t		good;		/* bytes of verified records */
	unsigned long	line;		/* of the first bad line */
	uint64_t	seq;
	uint8_t		hash[SHA256_LEN];
	uint64_t	records;
	int		broken;		/* a complete line failed */
	char		reason[256];
};

static void
scan_file(struct sha256_ctx *ctx, const char *data, size_t len, struct scan *s)
{
	struct chain_line	 cl;
	enum chain_check	 r;
	const char		*nl, *why = "";
	size_t			 off = 0;

	memset(s, 0, sizeof(*s));
	s->line = 1;
	while (off < len && (nl = memchr(data + off, '\n', len - off)) != NULL) {
		r = chain_check_line(ctx, data + off, (size_t)(nl - data - off),
		    s->records ? s->seq + 1 : 0, s->records ? s->hash : NULL,
		    &cl, &why);
		if (r != CHAIN_OK) {
			chain_check_reason(r, &cl, s->seq + 1, why, s->reason,
			    sizeof(s->reason));
			s->broken = 1;
			return;
		}
		s->seq = cl.seq;
		memcpy(s->hash, cl.hash, SHA256_LEN);
		s->records++;
		s->line++;
		off = (size_t)(nl - data) + 1;
		s->good = off;
	}
}

static void
note_cut(struct recovery_note *rn, const char *name, const char *data,
    size_t from, size_t len)
{
	size_t	 ex = len - from < RECOVERY_EXCERPT_MAX ? len - from :
		    RECOVERY_EXCERPT_MAX;

	rn->cut = 1;
	snprintf(rn->file, sizeof(rn->file), "%s", name);
	rn->offset = from;
	rn->bytes = len - from;
	sha256_hex(data + from, len - from, rn->sha256);
	base64_encode((const uint8_t *)data + from, ex, rn->excerpt);
}

/* Recovers one file; 1 = usable head found, 0 = file held no record. */
static int
recover_file(const char *dir, const struct logfile *lf, struct log_state *st,
    struct recovery_note *rn, struct sha256_ctx *ctx, char *err,
    size_t errlen)
{
	char		 path[PATH_MAX];
	char		*data = NULL;
	size_t		 len, end, last;
	struct scan	 s;
	int		 fd = -1, rv = -1;

	if (xsnprintf(path, sizeof(path), "%s/%s", dir, lf->name) == -1 ||
	    read_file(path, LOGFILE_READ_MAX, &data, &len) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* The writer's zeros ahead hold no record: the records end at the
	 * first NUL, what follows it up to the last byte that is not one
	 * (a batch torn across pages) is cut and noted, the rest dropped. */
	end = logfile_records_len(data, len);
	for (last = len; last > end && data[last - 1] == '\0'; last--)
		;
	scan_file(ctx, data, end, &s);
	if (s.broken && later_record_exists(ctx, data, end, s.good)) {
		snprintf(err, errlen, "%s:%lu seq %llu: %s; refusing to append "
		    "to a chain broken in the middle (run 'stockade audit "
		    "verify')", path, s.line, (unsigned long long)(s.seq + 1),
		    s.reason);
		goto out;
	}
	if (s.records == 0) {
		/* A crash between creating the file and its first record. */
		if (unlink(path) == -1 || fsync_dir(dir) == -1) {
			snprintf(err, errlen, "unlink %s: %s", path,
			    strerror(errno));
			goto out;
		}
		rn->dropped = 1;
		snprintf(rn->dropped_file, sizeof(rn->dropped_file), "%s",
		    lf->name);
		rv = 0;
		goto out;
	}
	if (first_record_chain_id(data, len, st->chain_id) == -1) {
		snprintf(err, errlen, "%s:1: first record is neither "
		    "chain_start nor rotate", path);
		goto out;
	}
	/* Not O_APPEND: the writer writes at its offset (pwrite). */
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (s.good < len) {
		if (s.good < last)
			note_cut(rn, lf->name, data, s.good, last);
		if (ftruncate(fd, (off_t)s.good) == -1 || fsync(fd) == -1) {
			snprintf(err, errlen, "truncate %s: %s", path,
			    strerror(errno));
			goto out;
		}
	}
	snprintf(st->name, sizeof(st->name), "%s", lf->name);
	st->fd = fd;
	fd = -1;
	st->size = s.good;
	st->seq = s.seq;
	memcpy(st->hash, s.hash, SHA256_LEN);
	rv = 1;
out:
	if (fd != -1)
		close(fd);
	free(data);
	return rv;
}

int
logdir_recover(const char *dir, struct log_state *st, struct recovery_note *rn,
    char *err, size_t errlen)
{
	struct sha256_ctx	 ctx;
	struct logfile		*files;
	size_t			 n;
	int			 r = 0;

	memset(st, 0, sizeof(*st));
	memset(rn, 0, sizeof(*rn));
	st->fd = -1;
	if (logdir_list(dir, &files, &n) == -1) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	sha256_ctx_init(&ctx);
	while (n > 0 && (r = recover_file(dir, &files[n - 1], st, rn, &ctx,
	    err, errlen)) == 0)
		n--;
	sha256_ctx_free(&ctx);
	free(files);
	if (r == -1)
		return -1;
	st->empty = (n == 0);
	return 0;
}

int
logdir_create(const char *dir, uint64_t first_seq)
{
	char	 name[LOGFILE_NAME_MAX], path[PATH_MAX];

	logfile_name(first_seq, name);
	if (xsnprintf(path, sizeof(path), "%s/%s", dir, name) == -1)
		return -1;
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, LOGFILE_MODE);
}

size_t
logfile_records_len(const char *data, size_t len)
{
	const char	*nul = memchr(data, '\0', len);

	return nul != NULL ? (size_t)(nul - data) : len;
}

json_t *
logdir_expired(const char *dir, unsigned keep, const char *pending)
{
	struct logfile	*files;
	size_t		 n, i, count;
	json_t		*arr = json_array();
	uint64_t	 seq;

	if (logdir_list(dir, &files, &n) == -1)
		return arr;
	/*
	 * keep counts the file about to be created, and `pending`, a file
	 * whose creation may still be on its way to disk, counts as present.
	 */
	count = n;
	if (pending != NULL && logfile_parse_name(pending, &seq) == 0 &&
	    (n == 0 || files[n - 1].first_seq < seq))
		count++;
	for (i = 0; count >= keep && i <= count - keep && i < n; i++)
		json_array_append_new(arr, json_string(files[i].name));
	free(files);
	return arr;
}
