/*
 * MCP task records on disk and in memory (task_store.h).  A record is
 * written to a temporary file, synced and renamed over the old one, so a
 * crash leaves the old state or the new.  What is read back is ours only
 * if every field is exactly what we write; anything else is removed.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"
#include "log.h"
#include "task_store.h"
#include "util.h"

#define TASK_VERSION	1

static const char *const status_names[] = {
	"working", "completed", "failed", "cancelled", NULL
};

const char *
task_status_name(enum task_status s)
{
	return status_names[s];
}

int
task_id_ok(const char *id)
{
	char	 node[FLEET_NODE_MAX];
	size_t	 n = strlen(id);

	return n >= TASK_ID_LEN && hex_lower(id, TASK_ID_LEN) &&
	    (n == TASK_ID_LEN || (id[TASK_ID_LEN] == FLEET_SEP &&
	    fleet_handle_node(id, node) && n == TASK_ID_LEN + 1 +
	    strlen(node)));
}

int64_t
task_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
task_time(int64_t ms, char out[32])
{
	struct timespec	 ts;
	char		 buf[TS_LEN + 1];

	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	ts_format(&ts, buf);
	snprintf(out, 32, "%s", buf);
}

static void
rec_free(struct task_rec *t)
{
	json_decref(t->result);
	json_decref(t->error);
	free(t);
}

/* ------------------------------------------------------------ records */

json_t *
task_rec_json(const struct task_rec *t)
{
	json_t	*o;

	o = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I}",
	    "version", TASK_VERSION, "id", t->id, "principal", t->principal,
	    "tool", t->tool, "status", status_names[t->status], "message",
	    t->message, "created_ms", (json_int_t)t->created_ms, "updated_ms",
	    (json_int_t)t->updated_ms, "ttl_ms", (json_int_t)t->ttl_ms);
	if (o != NULL && t->result != NULL)
		json_object_set(o, "result", t->result);
	if (o != NULL && t->error != NULL)
		json_object_set(o, "error", t->error);
	return o;
}

static int
get_str(const json_t *o, const char *key, char *out, size_t outlen,
    int nonempty)
{
	const char	*s = json_string_value(json_object_get(o, key));

	if (s == NULL || (nonempty && s[0] == '\0') ||
	    strlen(s) != json_string_length(json_object_get(o, key)) ||
	    xsnprintf(out, outlen, "%s", s) == -1)
		return -1;
	return 0;
}

static int
get_ms(const json_t *o, const char *key, int64_t *out)
{
	const json_t	*v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (int64_t)json_integer_value(v);
	return 0;
}

int
task_rec_parse(const json_t *o, const char *name, struct task_rec *t,
    char *why, size_t whylen)
{
	static const char *const keys[] = { "version", "id", "principal",
	    "tool", "status", "message", "created_ms", "updated_ms",
	    "ttl_ms", "result", "error", NULL };
	const json_t	*v, *err;
	const char	*k, *s;
	size_t		 i;

#define BAD(...) do { snprintf(why, whylen, __VA_ARGS__); return -1; } while (0)
	memset(t, 0, sizeof(*t));
	if (!json_is_object(o))
		BAD("not a JSON object");
	json_object_foreach((json_t *)o, k, v) {
		for (i = 0; keys[i] != NULL; i++)
			if (strcmp(k, keys[i]) == 0)
				break;
		if (keys[i] == NULL)
			BAD("unknown field %.32s", k);
	}
	if (json_integer_value(json_object_get(o, "version")) != TASK_VERSION ||
	    !json_is_integer(json_object_get(o, "version")))
		BAD("version: not %d", TASK_VERSION);
	if (get_str(o, "id", t->id, sizeof(t->id), 1) == -1 ||
	    !task_id_ok(t->id))
		BAD("id: not %d lower-case hex digits (and a node)",
		    TASK_ID_LEN);
	/* The file's name is its id: one task, one file. */
	if (name != NULL && strcmp(name, t->id) != 0)
		BAD("id: not the file's name");
	if (get_str(o, "principal", t->principal, sizeof(t->principal),
	    1) == -1)
		BAD("principal: a string of 1 to %d bytes", PRINCIPAL_MAX - 1);
	if (get_str(o, "tool", t->tool, sizeof(t->tool), 1) == -1)
		BAD("tool: a string of 1 to %d bytes", TASK_TOOL_MAX - 1);
	if (get_str(o, "message", t->message, sizeof(t->message), 0) == -1)
		BAD("message: a string of at most %d bytes", TASK_MSG_MAX - 1);
	s = json_string_value(json_object_get(o, "status"));
	for (i = 0; s != NULL && status_names[i] != NULL; i++)
		if (strcmp(s, status_names[i]) == 0)
			break;
	if (s == NULL || status_names[i] == NULL)
		BAD("status: unknown");
	t->status = (enum task_status)i;
	if (get_ms(o, "created_ms", &t->created_ms) == -1 ||
	    get_ms(o, "updated_ms", &t->updated_ms) == -1 ||
	    get_ms(o, "ttl_ms", &t->ttl_ms) == -1 || t->ttl_ms == 0 ||
	    t->updated_ms < t->created_ms)
		BAD("times: not ours");
	v = json_object_get(o, "result");
	err = json_object_get(o, "error");
	/* A result only when completed, an error only when failed. */
	if ((v != NULL) != (t->status == TASK_COMPLETED) ||
	    (v != NULL && !json_is_object(v)))
		BAD("result: only a completed task has one, an object");
	if (err != NULL && (t->status != TASK_FAILED || !json_is_object(err) ||
	    !json_is_integer(json_object_get(err, "code")) ||
	    !json_is_string(json_object_get(err, "message"))))
		BAD("error: only a failed task has one, {code, message}");
	t->result = v != NULL ? json_incref((json_t *)v) : NULL;
	t->error = err != NULL ? json_incref((json_t *)err) : NULL;
	return 0;
#undef BAD
}

/* ------------------------------------------------------------ files */

static int
rec_save(struct task_store *st, const struct task_rec *t)
{
	char	 path[PATH_MAX], tmp[PATH_MAX];
	char	*text;
	json_t	*o;
	int	 fd, rc = -1;

	if ((o = task_rec_json(t)) == NULL)
		return -1;
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (text == NULL)
		return -1;
	if (xsnprintf(path, sizeof(path), "%s/%s", st->dir, t->id) == -1 ||
	    xsnprintf(tmp, sizeof(tmp), "%s/%s.tmp", st->dir, t->id) == -1)
		goto out;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1) {
		log_warn("%s", tmp);
		goto out;
	}
	/* Never retry a failed fsync: the error is gone after one. */
	if (write_all(fd, text, strlen(text)) == -1 || fsync(fd) == -1) {
		log_warn("%s", tmp);
		(void)close(fd);
		(void)unlink(tmp);
		goto out;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		log_warn("%s", path);
		(void)unlink(tmp);
		goto out;
	}
	if (fsync_dir(st->dir) == -1)
		log_warn("fsync %s", st->dir);
	rc = 0;
out:
	free(text);
	return rc;
}

static void
rec_unlink(struct task_store *st, const char *name)
{
	char	 path[PATH_MAX];

	if (xsnprintf(path, sizeof(path), "%s/%s", st->dir, name) != -1 &&
	    unlink(path) == -1 && errno != ENOENT)
		log_warn("%s", path);
}

/* Oldest first, so a listing pages in a stable order. */
static void
rec_insert(struct task_store *st, struct task_rec *t)
{
	struct task_rec	*o;

	TAILQ_FOREACH_REVERSE(o, &st->tasks, task_list, entry)
		if (o->created_ms < t->created_ms || (o->created_ms ==
		    t->created_ms && strcmp(o->id, t->id) < 0))
			break;
	if (o == NULL)
		TAILQ_INSERT_HEAD(&st->tasks, t, entry);
	else
		TAILQ_INSERT_AFTER(&st->tasks, o, t, entry);
	st->n++;
}

/* One file of the directory: a record, or removed. */
static void
load_one(struct task_store *st, const char *name, int64_t now,
    const char *restart_msg)
{
	struct task_rec	 rec, *t;
	struct stat	 sb;
	json_error_t	 je;
	json_t		*o = NULL;
	char		 path[PATH_MAX], why[256];
	char		*buf = NULL;
	size_t		 len;

	if (xsnprintf(path, sizeof(path), "%s/%s", st->dir, name) == -1)
		return;
	if (lstat(path, &sb) == -1 || S_ISDIR(sb.st_mode)) {
		log_warnx("%s: not a task record, left alone", path);
		return;
	}
	if (!S_ISREG(sb.st_mode))
		snprintf(why, sizeof(why), "not a regular file");
	else if (read_file(path, TASK_FILE_MAX, &buf, &len) == -1)
		snprintf(why, sizeof(why), "%s", strerror(errno));
	else if ((o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) ==
	    NULL)
		snprintf(why, sizeof(why), "%s", je.text);
	else if (task_rec_parse(o, name, &rec, why, sizeof(why)) == 0) {
		if (rec.created_ms > now) {
			snprintf(why, sizeof(why), "created in the future");
			json_decref(rec.result);
			json_decref(rec.error);
		} else
			goto ok;
	}
	log_warnx("%s: removed: %s", path, why);
	rec_unlink(st, name);
	goto out;
ok:
	t = xmalloc(sizeof(*t));
	*t = rec;
	/* The limit may have shrunk since it was written. */
	if ((uint64_t)t->ttl_ms > st->max_ttl_ms)
		t->ttl_ms = (int64_t)st->max_ttl_ms;
	if (t->created_ms + t->ttl_ms <= now) {
		rec_unlink(st, name);
		rec_free(t);
		goto out;
	}
	if (t->status == TASK_WORKING) {
		t->status = TASK_FAILED;
		t->updated_ms = now;
		snprintf(t->message, sizeof(t->message), "%s", restart_msg);
		/* Typed, so a client tells a lost task from a failed call. */
		t->error = json_pack("{s:i, s:s, s:{s:s, s:s}}", "code",
		    FLEET_ERR_TASK_LOST, "message", restart_msg, "data",
		    "reason", FLEET_TASK_LOST, "node", FLEET_SELF(st->node));
		if (rec_save(st, t) == -1)
			log_warnx("%s: could not be marked failed", path);
	}
	rec_insert(st, t);
out:
	json_decref(o);
	free(buf);
}

int
task_store_open(struct task_store *st, const char *state_dir,
    const struct mcpexec_conf *conf, int64_t now, const char *restart_msg,
    char *err, size_t errlen)
{
	struct dirent	*de;
	DIR		*d;
	size_t		 n;

	memset(st, 0, sizeof(*st));
	TAILQ_INIT(&st->tasks);
	snprintf(st->node, sizeof(st->node), "%s", conf->fleet.node_id);
	st->max_ttl_ms = conf->server.tasks.max_ttl_ms;
	st->max_total = conf->server.tasks.max_total;
	st->max_per_principal = conf->server.tasks.max_per_principal;
	if (conf->server.tasks.dir[0] != '\0')
		snprintf(st->dir, sizeof(st->dir), "%s", conf->server.tasks.dir);
	else if (xsnprintf(st->dir, sizeof(st->dir), "%s/tasks", state_dir) ==
	    -1) {
		snprintf(err, errlen, "state_dir too long");
		return -1;
	}
	if (mkdir_p(st->dir, 0700) == -1 || (d = opendir(st->dir)) == NULL) {
		snprintf(err, errlen, "%s: %s", st->dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		n = strlen(de->d_name);
		/* A write that a crash interrupted: the old record stands.
		 * (A record of a node named "tmp" is no leftover.) */
		if (n > 4 && strcmp(de->d_name + n - 4, ".tmp") == 0 &&
		    strcmp(de->d_name + n - 3, st->node) != 0) {
			rec_unlink(st, de->d_name);
			continue;
		}
		load_one(st, de->d_name, now, restart_msg);
	}
	closedir(d);
	return 0;
}

void
task_store_close(struct task_store *st)
{
	struct task_rec	*t;

	while ((t = TAILQ_FIRST(&st->tasks)) != NULL) {
		TAILQ_REMOVE(&st->tasks, t, entry);
		rec_free(t);
	}
	st->n = 0;
}

/* ------------------------------------------------------------ tasks */

unsigned
task_store_count(const struct task_store *st, const char *principal)
{
	const struct task_rec	*t;
	unsigned		 n = 0;

	TAILQ_FOREACH(t, &st->tasks, entry)
		if (strcmp(t->principal, principal) == 0)
			n++;
	return n;
}

struct task_rec *
task_store_new(struct task_store *st, const char *principal,
    const char *tool, int64_t ttl_ms, int64_t now, char *why, size_t whylen)
{
	struct task_rec	*t;

	/* The expired make room before anyone is refused. */
	task_store_sweep(st, now, NULL, NULL);
	if (st->n >= st->max_total) {
		snprintf(why, whylen, "too many tasks on this server (%u): "
		    "try again later", st->max_total);
		return NULL;
	}
	if (task_store_count(st, principal) >= st->max_per_principal) {
		snprintf(why, whylen, "too many tasks of yours (%u): wait for "
		    "some to expire, or cancel some", st->max_per_principal);
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	/* 128 random bits: an id cannot be guessed, only be given. */
	fleet_handle(st->node, "", TASK_ID_RANDOM, t->id, sizeof(t->id));
	snprintf(t->principal, sizeof(t->principal), "%s", principal);
	snprintf(t->tool, sizeof(t->tool), "%s", tool);
	str_ascii(t->tool);
	t->status = TASK_WORKING;
	t->created_ms = t->updated_ms = now;
	t->ttl_ms = ttl_ms <= 0 || (uint64_t)ttl_ms > st->max_ttl_ms ?
	    (int64_t)st->max_ttl_ms : ttl_ms;
	if (rec_save(st, t) == -1) {
		snprintf(why, whylen, "the task could not be stored");
		rec_free(t);
		return NULL;
	}
	rec_insert(st, t);
	return t;
}

struct task_rec *
task_store_find(struct task_store *st, const char *principal, const char *id,
    int64_t now)
{
	struct task_rec	*t;

	if (id == NULL)
		return NULL;
	TAILQ_FOREACH(t, &st->tasks, entry)
		if (strcmp(t->id, id) == 0)
			break;
	/* Someone else's, or expired: as if there were none. */
	if (t == NULL || strcmp(t->principal, principal) != 0 ||
	    t->created_ms + t->ttl_ms <= now)
		return NULL;
	return t;
}

int
task_store_finish(struct task_store *st, struct task_rec *t,
    enum task_status status, json_t *result, json_t *error,
    const char *message, int64_t now)
{
	char	*text;
	size_t	 len = 0;

	if (t->status != TASK_WORKING) {
		json_decref(result);
		json_decref(error);
		return -1;
	}
	/* What a poll hands back is bounded like the file that holds it. */
	if (result != NULL) {
		text = json_dumps(result, JSON_COMPACT);
		len = text != NULL ? strlen(text) : SIZE_MAX;
		free(text);
	}
	if (result != NULL && len > TASK_RESULT_MAX) {
		json_decref(result);
		json_decref(error);
		result = NULL;
		status = TASK_FAILED;
		message = "the result was larger than the task store keeps";
		error = json_pack("{s:i, s:s}", "code", -32603, "message",
		    message);
	}
	t->status = status;
	t->result = status == TASK_COMPLETED ? result : NULL;
	if (status != TASK_COMPLETED)
		json_decref(result);
	t->error = status == TASK_FAILED ? error : NULL;
	if (status != TASK_FAILED)
		json_decref(error);
	if (status == TASK_COMPLETED && t->result == NULL)
		t->result = json_object();
	if (status == TASK_FAILED && t->error == NULL)
		t->error = json_pack("{s:i, s:s}", "code", -32603, "message",
		    message != NULL ? message : "internal error");
	snprintf(t->message, sizeof(t->message), "%s", message ? message : "");
	str_ascii(t->message);
	t->updated_ms = now;
	return rec_save(st, t);
}

unsigned
task_store_sweep(struct task_store *st, int64_t now,
    void (*gone)(struct task_rec *, void *), void *arg)
{
	struct task_rec	*t, *next;
	unsigned	 n = 0;

	for (t = TAILQ_FIRST(&st->tasks); t != NULL; t = next) {
		next = TAILQ_NEXT(t, entry);
		if (t->created_ms + t->ttl_ms > now)
			continue;
		/* Still running: its runner lets go of it first. */
		if (t->run != NULL && gone != NULL)
			gone(t, arg);
		if (t->run != NULL)
			continue;
		TAILQ_REMOVE(&st->tasks, t, entry);
		st->n--;
		rec_unlink(st, t->id);
		rec_free(t);
		n++;
	}
	return n;
}
