/*
 * Helpers shared by the unit tests: scratch directories, keys, and real
 * audit logs made by running the shipped writer in-process.
 */
#ifndef STOCKADE_TESTUTIL_H
#define STOCKADE_TESTUTIL_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "hash.h"
#include "logdir.h"
#include "util.h"
#include "writer.h"

/* Every check_<module>.c ends with CHECK_MAIN(<module>_suite). */
#define CHECK_MAIN(suite_fn)						\
int									\
main(void)								\
{									\
	SRunner	*sr = srunner_create(suite_fn());			\
	int	 failed;						\
									\
	srunner_run_all(sr, CK_NORMAL);					\
	failed = srunner_ntests_failed(sr);				\
	srunner_free(sr);						\
	return failed ? 1 : 0;						\
}

/* A fresh directory under $TMPDIR; the forked test's exit leaves it for
 * inspection on failure, the runner's scratch root is removed after. */
static inline void
tu_tmpdir(char *out, size_t len)
{
	const char	*base = getenv("TMPDIR");

	snprintf(out, len, "%s/stockade-test-XXXXXX", base ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(out));
}

static inline void
tu_path(char *out, size_t len, const char *dir, const char *name)
{
	ck_assert_int_ne(xsnprintf(out, len, "%s/%s", dir, name), -1);
}

static inline void
tu_keygen(const char *dir)
{
	char	 priv[PATH_MAX], pub[PATH_MAX], err[256];

	tu_path(priv, sizeof(priv), dir, "checkpoint.key");
	tu_path(pub, sizeof(pub), dir, "checkpoint.pub");
	ck_assert_msg(ed25519_keygen(priv, pub, err, sizeof(err)) == 0, "%s",
	    err);
}

static inline EVP_PKEY *
tu_pubkey(const char *dir)
{
	char		 pub[PATH_MAX], err[256];
	EVP_PKEY	*k;

	tu_path(pub, sizeof(pub), dir, "checkpoint.pub");
	k = ed25519_load_public(pub, err, sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	return k;
}

/* A signing key, its public half, and another key's public half. */
static inline void
tu_keys(EVP_PKEY **priv, EVP_PKEY **pub, EVP_PKEY **other)
{
	char	 dir[PATH_MAX], dir2[PATH_MAX], path[PATH_MAX], err[256];

	tu_tmpdir(dir, sizeof(dir));
	tu_keygen(dir);
	tu_path(path, sizeof(path), dir, "checkpoint.key");
	*priv = ed25519_load_private(path, err, sizeof(err));
	ck_assert_msg(*priv != NULL, "%s", err);
	*pub = tu_pubkey(dir);
	tu_tmpdir(dir2, sizeof(dir2));
	tu_keygen(dir2);
	*other = tu_pubkey(dir2);
}

/* noinline: gcc 12 mistakes the result for a pointer to the local. */
static __attribute__((noinline, unused)) char *
tu_read(const char *path, size_t *len)
{
	char	*data = NULL;

	if (read_file(path, 1 << 30, &data, len) == -1)
		ck_abort_msg("%s: %s", path, strerror(errno));
	return data;
}

static inline void
tu_write(const char *path, const void *data, size_t len)
{
	int	 fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);

	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(write_all(fd, data, len), 0);
	close(fd);
}

/* A default config rooted in dir: log in dir/log, key in dir, off-host
 * checkpoints in dir/offhost. */
static inline void
tu_conf(struct audit_conf *c, const char *dir)
{
	audit_conf_defaults(c);
	tu_path(c->log_dir, sizeof(c->log_dir), dir, "log");
	tu_path(c->key_path, sizeof(c->key_path), dir, "checkpoint.key");
	tu_path(c->checkpoint_dir, sizeof(c->checkpoint_dir), dir, "offhost");
	mkdir(c->log_dir, 0750);
	mkdir(c->checkpoint_dir, 0750);
}

struct tu_run {
	struct event_base	*base;
	struct writer		*w;
	EVP_PKEY		*key;
	int			 stopped;
	unsigned		 acked, failed;
};

static inline void
tu_stopped(void *arg)
{
	((struct tu_run *)arg)->stopped = 1;
}

static inline void
tu_done(void *arg, enum writer_status st, uint64_t seq,
    const uint8_t hash[SHA256_LEN])
{
	struct tu_run	*r = arg;

	if (st == WRITER_OK)
		r->acked++;
	else
		r->failed++;
}

static inline void
tu_start(struct tu_run *r, const struct audit_conf *c)
{
	char	 err[1024];

	memset(r, 0, sizeof(*r));
	r->base = event_base_new();
	ck_assert_ptr_nonnull(r->base);
	event_base_priority_init(r->base, 3);
	r->key = ed25519_load_private(c->key_path, err, sizeof(err));
	ck_assert_msg(r->key != NULL, "%s", err);
	r->w = writer_start(r->base, c, r->key, err, sizeof(err));
	ck_assert_msg(r->w != NULL, "%s", err);
	writer_checkpoint(r->w);
}

/* Runs the loop until nothing is queued in the writer. */
static inline void
tu_drain(struct tu_run *r)
{
	json_t	*st;
	int	 queued;

	do {
		event_base_loop(r->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		st = writer_status_json(r->w);
		queued = (int)json_integer_value(json_object_get(st, "queue"));
		json_decref(st);
	} while (queued > 0);
}

/* Appends one operator_note synchronously, running the loop as needed. */
static inline enum writer_status
tu_append(struct tu_run *r, unsigned i)
{
	struct peer		 p = { 1000, 1000, 4242 };
	enum writer_status	 st;
	uint8_t			 hash[SHA256_LEN];
	uint64_t		 seq;
	char			 msg[64];
	json_t			*f;

	snprintf(msg, sizeof(msg), "note %u", i);
	f = json_pack("{s:s, s:s}", "principal", "user:test", "message", msg);
	while ((st = writer_append(r->w, "operator_note", f, &p, 1, tu_done, r,
	    &seq, hash)) == WRITER_FULL)
		event_base_loop(r->base, EVLOOP_ONCE);
	json_decref(f);
	return st;
}

/* Runs the loop until every append so far has an answer. */
static inline void
tu_settle(struct tu_run *r, unsigned expected)
{
	while (r->acked + r->failed < expected)
		event_base_loop(r->base, EVLOOP_ONCE);
}

static inline void
tu_stop(struct tu_run *r)
{
	writer_shutdown(r->w, tu_stopped, r);
	while (!r->stopped)
		event_base_loop(r->base, EVLOOP_ONCE);
	writer_free(r->w);
	EVP_PKEY_free(r->key);
	event_base_free(r->base);
}

/* Writes a log of n operator notes under dir (see tu_conf). */
static inline void
tu_make_log(const struct audit_conf *c, unsigned n)
{
	struct tu_run	 r;
	unsigned	 i;

	tu_start(&r, c);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(tu_append(&r, i), WRITER_OK);
	tu_settle(&r, n);
	ck_assert_uint_eq(r.acked, n);
	tu_stop(&r);
}

/* Path of the idx-th log file (0 = oldest) in c->log_dir. */
static inline void
tu_logfile(const struct audit_conf *c, size_t idx, char *out, size_t len)
{
	struct logfile	*files;
	size_t		 n;

	ck_assert_int_eq(logdir_list(c->log_dir, &files, &n), 0);
	ck_assert_uint_gt(n, idx);
	tu_path(out, len, c->log_dir, files[idx].name);
	free(files);
}

static inline size_t
tu_nfiles(const struct audit_conf *c)
{
	struct logfile	*files;
	size_t		 n;

	ck_assert_int_eq(logdir_list(c->log_dir, &files, &n), 0);
	free(files);
	return n;
}

/* Start offset of line `line` (1-based) in data, or -1. */
static inline long
tu_line_off(const char *data, size_t len, unsigned line)
{
	size_t	 off = 0;
	const char *nl;

	while (--line > 0) {
		if ((nl = memchr(data + off, '\n', len - off)) == NULL)
			return -1;
		off = (size_t)(nl - data) + 1;
	}
	return (long)off;
}

#endif
