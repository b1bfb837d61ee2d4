/*
 * Quota accounts: one per subject (a principal or a group) that has a
 * limit, holding live counts (sessions, calls) and what accrued in the
 * current minute, hour and day.  The usage file is read back at start;
 * it is ours, but a torn or edited one must not stop the server, so it
 * is checked field by field and set aside when it does not parse.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "quota.h"
#include "util.h"

const char *const quota_names[QUOTA_N] = {
	"sessions", "calls_per_minute", "concurrent_calls",
	"cpu_seconds_per_hour", "cpu_seconds_per_day",
	"wall_seconds_per_hour", "wall_seconds_per_day",
	"artifact_bytes_per_day",
};

enum { W_MINUTE, W_HOUR, W_DAY, W_N };
static const time_t window_s[W_N] = { 60, 3600, 86400 };

struct account {
	char		 subject[QUOTA_SUBJECT_MAX];
	struct quota_limits lim;	/* the last bill's, for status */
	uint64_t	 sessions, calls;	/* live, not kept */
	time_t		 start[W_N];		/* of each window */
	uint64_t	 minute_calls;
	uint64_t	 cpu_ms[W_N], wall_ms[W_N];	/* hour and day used */
	uint64_t	 artifact_bytes;		/* day */
	time_t		 last;
};

struct quota_table {
	char		 path[PATH_MAX];
	struct account	*acc;
	size_t		 n;
	int		 dirty;		/* usage not yet in the file */
};

void
quota_limits_none(struct quota_limits *l)
{
	int	 i;

	for (i = 0; i < QUOTA_N; i++)
		l->max[i] = QUOTA_UNLIMITED;
}

int
quota_limits_any(const struct quota_limits *l)
{
	int	 i;

	for (i = 0; i < QUOTA_N; i++)
		if (l->max[i] != QUOTA_UNLIMITED)
			return 1;
	return 0;
}

time_t
quota_now(void)
{
	const char	*f = getenv(QUOTA_CLOCK_ENV);
	char		*data;
	size_t		 len;
	uint64_t	 v;

	if (f == NULL || read_file(f, 64, &data, &len) == -1)
		return time(NULL);
	data[strcspn(data, "\n")] = '\0';
	if (parse_u64(data, 0, INT32_MAX, &v) == -1)
		v = (uint64_t)time(NULL);
	free(data);
	return (time_t)v;
}

/* Windows that ended are started afresh. */
static void
roll(struct account *a, time_t now)
{
	time_t	 s;
	int	 w;

	for (w = 0; w < W_N; w++) {
		s = now - now % window_s[w];
		if (a->start[w] == s)
			continue;
		a->start[w] = s;
		if (w == W_MINUTE)
			a->minute_calls = 0;
		else {
			a->cpu_ms[w] = a->wall_ms[w] = 0;
			if (w == W_DAY)
				a->artifact_bytes = 0;
		}
	}
	a->last = now;
}

static struct account *
account_find(struct quota_table *qt, const char *subject)
{
	size_t	 i;

	for (i = 0; i < qt->n; i++)
		if (strcmp(qt->acc[i].subject, subject) == 0)
			return &qt->acc[i];
	return NULL;
}

/* The subject's account, made when missing; at the cap, the one unused
 * longest (and idle) makes room, so the table stays bounded. */
static struct account *
account_get(struct quota_table *qt, const char *subject, time_t now)
{
	struct account	*a, *old = NULL;
	size_t		 i;

	if ((a = account_find(qt, subject)) != NULL)
		goto out;
	if (qt->n < QUOTA_ACCOUNTS_MAX)
		a = &qt->acc[qt->n++];
	else {
		for (i = 0; i < qt->n; i++)
			if (qt->acc[i].sessions == 0 && qt->acc[i].calls == 0 &&
			    (old == NULL || qt->acc[i].last < old->last))
				old = &qt->acc[i];
		if ((a = old) == NULL)
			return NULL;
	}
	memset(a, 0, sizeof(*a));
	snprintf(a->subject, sizeof(a->subject), "%s", subject);
	quota_limits_none(&a->lim);
out:
	roll(a, now);
	return a;
}

/* ------------------------------------------------------------ the file */

static uint64_t
get_u64(const json_t *o, const char *key)
{
	json_int_t	 v = json_integer_value(json_object_get(o, key));

	return v > 0 ? (uint64_t)v : 0;
}

static void
load(struct quota_table *qt)
{
	char		*data, aside[PATH_MAX + 8];
	size_t		 len, i;
	json_t		*root, *arr, *o;
	json_error_t	 je;
	struct account	*a;
	const char	*subj;

	if (access(qt->path, F_OK) == -1)
		return;
	if (read_file(qt->path, QUOTA_FILE_MAX, &data, &len) == -1) {
		log_warn("%s", qt->path);
		return;
	}
	root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	free(data);
	if (root == NULL || !json_is_array(arr = json_object_get(root,
	    "accounts"))) {
		/* Kept for a look, never trusted: usage starts from zero. */
		snprintf(aside, sizeof(aside), "%s.bad", qt->path);
		log_warnx("%s: not a usage file, moved to %s; quota usage "
		    "starts from zero", qt->path, aside);
		(void)rename(qt->path, aside);
		json_decref(root);
		return;
	}
	json_array_foreach(arr, i, o) {
		if (qt->n >= QUOTA_ACCOUNTS_MAX)
			break;
		if ((subj = json_string_value(json_object_get(o,
		    "subject"))) == NULL || strlen(subj) >= QUOTA_SUBJECT_MAX ||
		    account_find(qt, subj) != NULL)
			continue;
		a = &qt->acc[qt->n++];
		memset(a, 0, sizeof(*a));
		quota_limits_none(&a->lim);
		snprintf(a->subject, sizeof(a->subject), "%s", subj);
		a->start[W_MINUTE] = (time_t)get_u64(o, "minute_start");
		a->start[W_HOUR] = (time_t)get_u64(o, "hour_start");
		a->start[W_DAY] = (time_t)get_u64(o, "day_start");
		a->minute_calls = get_u64(o, "minute_calls");
		a->cpu_ms[W_HOUR] = get_u64(o, "cpu_ms_hour");
		a->cpu_ms[W_DAY] = get_u64(o, "cpu_ms_day");
		a->wall_ms[W_HOUR] = get_u64(o, "wall_ms_hour");
		a->wall_ms[W_DAY] = get_u64(o, "wall_ms_day");
		a->artifact_bytes = get_u64(o, "artifact_bytes_day");
		a->last = (time_t)get_u64(o, "last");
	}
	json_decref(root);
}

/* Written whole to a temporary file, synced, then renamed over the old:
 * a crash leaves the old usage or the new, never half of one. */
static void
save(struct quota_table *qt)
{
	char	 tmp[PATH_MAX + 8], *text, *dir, *slash;
	json_t	*arr = json_array(), *root;
	size_t	 i;
	int	 fd;
	const struct account *a;

	for (i = 0; i < qt->n; i++) {
		a = &qt->acc[i];
		json_array_append_new(arr, json_pack("{s:s, s:I, s:I, s:I, s:I, "
		    "s:I, s:I, s:I, s:I, s:I, s:I}", "subject", a->subject,
		    "minute_start", (json_int_t)a->start[W_MINUTE], "hour_start",
		    (json_int_t)a->start[W_HOUR], "day_start",
		    (json_int_t)a->start[W_DAY], "minute_calls",
		    (json_int_t)a->minute_calls, "cpu_ms_hour",
		    (json_int_t)a->cpu_ms[W_HOUR], "cpu_ms_day",
		    (json_int_t)a->cpu_ms[W_DAY], "wall_ms_hour",
		    (json_int_t)a->wall_ms[W_HOUR], "wall_ms_day",
		    (json_int_t)a->wall_ms[W_DAY], "artifact_bytes_day",
		    (json_int_t)a->artifact_bytes, "last", (json_int_t)a->last));
	}
	root = json_pack("{s:i, s:o}", "version", 1, "accounts", arr);
	text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	if (text == NULL)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", qt->path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 || write_all(fd, text, strlen(text)) == -1 ||
	    fsync(fd) == -1 || close(fd) == -1) {
		log_warn("%s", tmp);
		if (fd != -1)
			(void)close(fd);
		goto out;
	}
	if (rename(tmp, qt->path) == -1) {
		log_warn("rename %s", tmp);
		goto out;
	}
	dir = xstrdup(qt->path);
	if ((slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		(void)fsync_dir(dir);
	}
	free(dir);
out:
	free(text);
}

struct quota_table *
quota_open(const char *state_dir)
{
	struct quota_table	*qt = xcalloc(1, sizeof(*qt));

	qt->acc = xcalloc(QUOTA_ACCOUNTS_MAX, sizeof(*qt->acc));
	if (xsnprintf(qt->path, sizeof(qt->path), "%s/%s", state_dir,
	    QUOTA_FILE) == -1)
		fatalx("%s: state_dir too long", state_dir);
	if (getenv(QUOTA_CLOCK_ENV) != NULL)
		log_warnx("quota clock read from %s (%s): for tests only",
		    getenv(QUOTA_CLOCK_ENV), QUOTA_CLOCK_ENV);
	load(qt);
	return qt;
}

void
quota_flush(struct quota_table *qt)
{
	if (!qt->dirty)
		return;
	qt->dirty = 0;
	save(qt);
}

void
quota_close(struct quota_table *qt)
{
	if (qt == NULL)
		return;
	quota_flush(qt);
	free(qt->acc);
	free(qt);
}

/* ------------------------------------------------------------ decisions */

time_t
quota_window(enum quota_kind k, time_t now, time_t *len)
{
	switch (k) {
	case QUOTA_CALLS_MINUTE:
		*len = window_s[W_MINUTE];
		break;
	case QUOTA_CPU_HOUR:
	case QUOTA_WALL_HOUR:
		*len = window_s[W_HOUR];
		break;
	case QUOTA_CPU_DAY:
	case QUOTA_WALL_DAY:
	case QUOTA_ARTIFACT_DAY:
		*len = window_s[W_DAY];
		break;
	default:
		*len = 0;
		return 0;
	}
	return now - now % *len;
}

/* What the kind has used, and when it starts again from zero. */
static uint64_t
used_of(const struct account *a, enum quota_kind k, time_t *resets)
{
	*resets = 0;
	switch (k) {
	case QUOTA_SESSIONS:
		return a->sessions;
	case QUOTA_CONCURRENT:
		return a->calls;
	case QUOTA_CALLS_MINUTE:
		*resets = a->start[W_MINUTE] + window_s[W_MINUTE];
		return a->minute_calls;
	case QUOTA_CPU_HOUR:
	case QUOTA_WALL_HOUR:
		*resets = a->start[W_HOUR] + window_s[W_HOUR];
		return (k == QUOTA_CPU_HOUR ? a->cpu_ms : a->wall_ms)[W_HOUR] /
		    1000;
	case QUOTA_CPU_DAY:
	case QUOTA_WALL_DAY:
		*resets = a->start[W_DAY] + window_s[W_DAY];
		return (k == QUOTA_CPU_DAY ? a->cpu_ms : a->wall_ms)[W_DAY] /
		    1000;
	case QUOTA_ARTIFACT_DAY:
		*resets = a->start[W_DAY] + window_s[W_DAY];
		return a->artifact_bytes;
	default:
		return 0;
	}
}

int
quota_check(struct quota_table *qt, const struct quota_bill *b,
    int new_session, struct quota_verdict *v)
{
	struct account	*a;
	time_t		 now = quota_now(), resets;
	uint64_t	 used;
	unsigned	 i;
	int		 k;

	for (i = 0; i < b->n; i++) {
		if ((a = account_get(qt, b->a[i].subject, now)) == NULL) {
			/* Every account busy: no room to count, so no call. */
			memset(v, 0, sizeof(*v));
			v->kind = QUOTA_CONCURRENT;
			snprintf(v->subject, sizeof(v->subject), "%s",
			    b->a[i].subject);
			return -1;
		}
		a->lim = b->a[i].lim;
		for (k = 0; k < QUOTA_N; k++) {
			if (b->a[i].lim.max[k] == QUOTA_UNLIMITED ||
			    (k == QUOTA_SESSIONS && !new_session))
				continue;
			used = used_of(a, k, &resets);
			if (used < b->a[i].lim.max[k])
				continue;
			v->kind = k;
			v->limit = b->a[i].lim.max[k];
			v->used = used;
			v->resets = resets;
			snprintf(v->subject, sizeof(v->subject), "%s",
			    b->a[i].subject);
			return -1;
		}
	}
	return 0;
}

void
quota_verdict_text(const struct quota_verdict *v, char *buf, size_t len)
{
	char		 when[64];
	struct tm	 tm;

	if (v->resets != 0 && gmtime_r(&v->resets, &tm) != NULL)
		strftime(when, sizeof(when), "resets at %Y-%m-%dT%H:%M:%SZ",
		    &tm);
	else
		snprintf(when, sizeof(when), "frees up when one of them ends");
	snprintf(buf, len, "quota exceeded: %s (%llu) of %s, %llu used; %s",
	    quota_names[v->kind], (unsigned long long)v->limit, v->subject,
	    (unsigned long long)v->used, when);
}

void
quota_unconfigure(struct quota_table *qt)
{
	size_t	 i;

	for (i = 0; i < qt->n; i++)
		quota_limits_none(&qt->acc[i].lim);
}

void
quota_configure(struct quota_table *qt, const char *subject,
    const struct quota_limits *lim)
{
	struct account	*a;

	if ((a = account_get(qt, subject, quota_now())) != NULL)
		a->lim = *lim;
}

void
quota_call_begin(struct quota_table *qt, const struct quota_bill *b)
{
	struct account	*a;
	time_t		 now = quota_now();
	unsigned	 i;

	for (i = 0; i < b->n; i++)
		if ((a = account_get(qt, b->a[i].subject, now)) != NULL) {
			a->calls++;
			a->minute_calls++;
			qt->dirty = 1;
		}
}

void
quota_call_end(struct quota_table *qt, const struct quota_bill *b,
    uint64_t wall_ms, uint64_t cpu_ms, uint64_t artifact_bytes)
{
	struct account	*a;
	time_t		 now = quota_now();
	unsigned	 i;
	int		 w;

	for (i = 0; i < b->n; i++) {
		if ((a = account_get(qt, b->a[i].subject, now)) == NULL)
			continue;
		if (a->calls > 0)
			a->calls--;
		for (w = W_HOUR; w < W_N; w++) {
			a->cpu_ms[w] += cpu_ms;
			a->wall_ms[w] += wall_ms;
		}
		a->artifact_bytes += artifact_bytes;
		qt->dirty = 1;
	}
}

void
quota_session_open(struct quota_table *qt, const struct quota_bill *b)
{
	struct account	*a;
	unsigned	 i;

	for (i = 0; i < b->n; i++)
		if ((a = account_get(qt, b->a[i].subject, quota_now())) != NULL)
			a->sessions++;
}

void
quota_session_close(struct quota_table *qt, const struct quota_bill *b)
{
	struct account	*a;
	unsigned	 i;

	for (i = 0; i < b->n; i++)
		if ((a = account_find(qt, b->a[i].subject)) != NULL &&
		    a->sessions > 0)
			a->sessions--;
}

json_t *
quota_describe(struct quota_table *qt)
{
	json_t		*out = json_array(), *q;
	struct account	*a;
	time_t		 now = quota_now(), resets;
	uint64_t	 used;
	size_t		 i;
	int		 k;

	for (i = 0; i < qt->n; i++) {
		a = &qt->acc[i];
		if (!quota_limits_any(&a->lim))
			continue;	/* not billed since the start */
		roll(a, now);
		q = json_object();
		for (k = 0; k < QUOTA_N; k++) {
			if (a->lim.max[k] == QUOTA_UNLIMITED)
				continue;
			used = used_of(a, k, &resets);
			json_object_set_new(q, quota_names[k], json_pack(
			    "{s:I, s:I, s:I}", "used", (json_int_t)used,
			    "limit", (json_int_t)a->lim.max[k], "resets_at",
			    (json_int_t)resets));
		}
		json_array_append_new(out, json_pack("{s:s, s:o}", "subject",
		    a->subject, "quotas", q));
	}
	return out;
}
