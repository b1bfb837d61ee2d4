/*
 * The in-flight journal: one file a server, state_dir/inflight-PID.log,
 * a line appended as an execution begins ("B id fields"), as its code
 * goes to the driver ("R id") and once the audit daemon has its end on disk
 * ("E id").  A journal whose server is gone is read at the next start, and
 * each entry it left open gets its end then: call_refused when its code
 * never reached a driver, execution_lost when it may have run.  So every
 * execution_started ends on the record, whatever stopped the server.
 * Appends only, without sync (a server's crash keeps the page cache; the
 * machine's loses no more than the audit log's own sync covers), and the
 * file is rewritten with the open entries alone past its size cap.  Reads
 * only files of its own name, and checks every line all the same.
 */
#include <sys/queue.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inflight.h"
#include "log.h"
#include "server.h"
#include "util.h"

#define LOST_NOT_RUN	"not run: mcp-exec stopped before the code ran " \
			    "(recorded at its next start)"
#define LOST_RAN	"mcp-exec stopped while the code ran: how it " \
			    "ended is unknown (recorded at its next start)"

struct inflight {
	TAILQ_ENTRY(inflight)	 entry;
	struct inflight_log	*log;
	uint64_t		 id;
	int			 ran;
	char			*fields;	/* compact JSON, one line */
};

struct inflight_log {
	struct server		*srv;
	int			 fd;
	char			 path[PATH_MAX];
	uint64_t		 next_id;
	off_t			 size;
	TAILQ_HEAD(, inflight)	 open;
};

/* A dead server's journal whose recovered ends the daemon has not all
 * taken yet: it goes once it has, and stays for the next start if not. */
struct recovery {
	char			 path[PATH_MAX];
	unsigned		 pending;
	int			 failed;
};

/* ------------------------------------------------------------ recovery */

/*
 * An end goes to the daemon as a synchronous event: its entry may close
 * only once the record is on disk.  Taken is not kept: a daemon killed
 * between its ack of an ordinary event and its next fdatasync loses that
 * event, and the journal must not have let go of it.  Nobody waits for
 * this ack but the journal (the reply has left).
 */
static void
end_durable(struct server *srv, json_t *record, audit_done_fn *done, void *arg)
{
	char	 err[256];

	if (audit_link_sync(&srv->audit, record, done, arg, err,
	    sizeof(err)) == -1) {
		log_warnx("audit: an execution's end not sent: %s", err);
		done(arg, 0, err);
	}
}

static void
recovered_cb(void *arg, int ok, const char *err)
{
	struct recovery	*r = arg;

	if (!ok)
		r->failed = 1;
	if (--r->pending > 0)
		return;
	if (r->failed)
		log_warnx("%s: kept for the next start: not every end it "
		    "owes was recorded", r->path);
	else if (unlink(r->path) == -1)
		log_warn("%s", r->path);
	free(r);
}

/* One line of a journal into open (id -> {f, ran}); anything else is
 * passed over. */
static void
parse_line(json_t *open, const char *line, size_t len)
{
	char		 id[24], kind;
	const char	*sp;
	json_t		*fields, *e;
	uint64_t	 n;

	if (len < 3 || line[1] != ' ')
		return;
	kind = line[0];
	line += 2;
	len -= 2;
	sp = memchr(line, ' ', len);
	if ((size_t)((sp ? sp : line + len) - line) >= sizeof(id))
		return;
	memcpy(id, line, (size_t)((sp ? sp : line + len) - line));
	id[(sp ? sp : line + len) - line] = '\0';
	if (parse_u64(id, 0, UINT64_MAX, &n) == -1)
		return;
	if (kind == 'B' && sp != NULL) {
		fields = json_loadb(sp + 1, len - (size_t)(sp + 1 - line),
		    JSON_REJECT_DUPLICATES, NULL);
		if (json_is_string(json_object_get(fields, "principal")) &&
		    json_is_string(json_object_get(fields, "session_id")))
			json_object_set_new(open, id, json_pack("{s:o, s:b}",
			    "f", fields, "ran", 0));
		else
			json_decref(fields);
	} else if (kind == 'R' && (e = json_object_get(open, id)) != NULL)
		json_object_set_new(e, "ran", json_true());
	else if (kind == 'E')
		json_object_del(open, id);
}

json_t *
inflight_parse(const char *data, size_t len)
{
	const char	*p, *nl, *end;
	json_t		*open = json_object();

	for (p = data, end = data + len; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			break;		/* torn: its write never finished */
		parse_line(open, p, (size_t)(nl - p));
	}
	return open;
}

/* The end an entry left open owes, built on what its start recorded. */
static json_t *
lost_record(const json_t *e)
{
	json_t	*ev = json_deep_copy(json_object_get(e, "f"));
	int	 ran = json_is_true(json_object_get(e, "ran"));

	json_object_set_new(ev, "event", json_string(ran ? "execution_lost" :
	    "call_refused"));
	json_object_set_new(ev, "reason", json_string(ran ? LOST_RAN :
	    LOST_NOT_RUN));
	if (!ran)
		json_object_set_new(ev, "severity", json_string("info"));
	json_object_set_new(ev, "recovered", json_true());
	return ev;
}

/* A dead server's journal: the ends it owes go to the daemon; n counts. */
static void
recover_file(struct server *srv, const char *path, unsigned *n)
{
	struct recovery	*r;
	char		*data;
	size_t		 len;
	json_t		*open, *e;
	const char	*id;

	if (read_file(path, INFLIGHT_FILE_MAX, &data, &len) == -1) {
		log_warn("%s", path);
		return;
	}
	open = inflight_parse(data, len);
	free(data);
	if (json_object_size(open) == 0) {
		if (unlink(path) == -1)
			log_warn("%s", path);
		json_decref(open);
		return;
	}
	r = xcalloc(1, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->pending = (unsigned)json_object_size(open);
	*n += r->pending;
	/* The last callback may free r: nothing of it after the loop. */
	json_object_foreach(open, id, e)
		end_durable(srv, lost_record(e), recovered_cb, r);
	json_decref(open);
}

static int
journal_path(const struct server *srv, long pid, char *out, size_t len)
{
	return xsnprintf(out, len, "%s/" INFLIGHT_FILE_PREFIX "%ld.log",
	    srv->conf.state_dir, pid);
}

/* Every journal whose server no longer runs (ours: a dead server's that
 * had our pid). */
static unsigned
recover_all(struct server *srv)
{
	struct dirent	*de;
	char		 path[PATH_MAX], *endp;
	unsigned	 n = 0;
	long		 pid;
	DIR		*d;

	if ((d = opendir(srv->conf.state_dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, INFLIGHT_FILE_PREFIX,
		    strlen(INFLIGHT_FILE_PREFIX)) != 0)
			continue;
		errno = 0;
		pid = strtol(de->d_name + strlen(INFLIGHT_FILE_PREFIX), &endp,
		    10);
		if (errno != 0 || pid <= 0 || strcmp(endp, ".log") != 0 ||
		    journal_path(srv, pid, path, sizeof(path)) == -1)
			continue;
		if (pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 ||
		    errno != ESRCH))
			continue;	/* alive (or not ours to judge) */
		recover_file(srv, path, &n);
	}
	closedir(d);
	return n;
}

/* ------------------------------------------------------------ the journal */

static int
journal_create(struct inflight_log *jl, const char *path)
{
	int	 fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
	    O_CLOEXEC, 0600)) == -1)
		return -1;
	if (jl->fd != -1)
		close(jl->fd);
	jl->fd = fd;
	jl->size = 0;
	return 0;
}

static int
journal_write(struct inflight_log *jl, const char *line, size_t len)
{
	if (write_all(jl->fd, line, len) == -1) {
		log_warn("%s", jl->path);
		return -1;
	}
	jl->size += (off_t)len;
	return 0;
}

static int
entry_lines(const struct inflight *e, char *buf, size_t len)
{
	int	 n;

	n = snprintf(buf, len, "B %" PRIu64 " %s\n", e->id, e->fields);
	if (n > 0 && (size_t)n < len && e->ran)
		n += snprintf(buf + n, len - (size_t)n, "R %" PRIu64 "\n",
		    e->id);
	return n > 0 && (size_t)n < len ? n : -1;
}

/* Past its cap: the open entries alone, in a new file renamed over. */
static void
journal_compact(struct inflight_log *jl)
{
	struct inflight	*e;
	char		 tmp[PATH_MAX + 8], buf[INFLIGHT_LINE_MAX + 32];
	int		 n, fd = jl->fd;

	if (xsnprintf(tmp, sizeof(tmp), "%s.tmp", jl->path) == -1)
		return;
	jl->fd = -1;
	if (journal_create(jl, tmp) == -1) {
		log_warn("%s", tmp);
		jl->fd = fd;
		return;
	}
	TAILQ_FOREACH(e, &jl->open, entry)
		if ((n = entry_lines(e, buf, sizeof(buf))) == -1 ||
		    journal_write(jl, buf, (size_t)n) == -1)
			goto fail;
	if (rename(tmp, jl->path) == -1) {
		log_warn("%s", jl->path);
		goto fail;
	}
	close(fd);
	return;
fail:
	/* The old file still holds everything: go on with it. */
	close(jl->fd);
	(void)unlink(tmp);
	jl->fd = fd;
	jl->size = INFLIGHT_COMPACT_BYTES / 2;	/* try again later */
}

int
inflight_open(struct server *srv, char *err, size_t errlen)
{
	struct inflight_log	*jl = xcalloc(1, sizeof(*jl));
	unsigned		 n;

	jl->srv = srv;
	jl->fd = -1;
	TAILQ_INIT(&jl->open);
	if ((n = recover_all(srv)) > 0)
		log_info("%u execution%s left open by a server that died: "
		    "their ends recorded", n, n == 1 ? "" : "s");
	if (journal_path(srv, (long)getpid(), jl->path,
	    sizeof(jl->path)) == -1 || journal_create(jl, jl->path) == -1) {
		snprintf(err, errlen, "%s/%s%ld.log: %s", srv->conf.state_dir,
		    INFLIGHT_FILE_PREFIX, (long)getpid(), strerror(errno));
		free(jl);
		return -1;
	}
	srv->inflight = jl;
	return 0;
}

void
inflight_close(struct server *srv)
{
	struct inflight_log	*jl = srv->inflight;
	struct inflight		*e;
	int			 open = 0;

	if (jl == NULL)
		return;
	while ((e = TAILQ_FIRST(&jl->open)) != NULL) {
		TAILQ_REMOVE(&jl->open, e, entry);
		free(e->fields);
		free(e);
		open++;
	}
	close(jl->fd);
	/* Ends the daemon never took: the next start records them. */
	if (open > 0)
		log_warnx("%s: %d execution%s without an end on the record, "
		    "for the next start", jl->path, open, open == 1 ? "" : "s");
	else if (unlink(jl->path) == -1)
		log_warn("%s", jl->path);
	free(jl);
	srv->inflight = NULL;
}

struct inflight *
inflight_begin(struct server *srv, json_t *fields)
{
	struct inflight_log	*jl = srv->inflight;
	struct inflight		*e;
	char			 buf[INFLIGHT_LINE_MAX + 32];
	int			 n;

	if (jl == NULL) {
		json_decref(fields);
		return NULL;
	}
	if (jl->size > INFLIGHT_COMPACT_BYTES)
		journal_compact(jl);
	e = xcalloc(1, sizeof(*e));
	e->log = jl;
	e->id = ++jl->next_id;
	e->fields = fields ? json_dumps(fields, JSON_COMPACT) : NULL;
	json_decref(fields);
	if (e->fields == NULL ||
	    strlen(e->fields) > INFLIGHT_LINE_MAX ||
	    (n = entry_lines(e, buf, sizeof(buf))) == -1 ||
	    journal_write(jl, buf, (size_t)n) == -1) {
		log_warnx("%s: an execution not journaled", jl->path);
		free(e->fields);
		free(e);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&jl->open, e, entry);
	return e;
}

void
inflight_ran(struct server *srv, struct inflight *e)
{
	char	 buf[32];
	int	 n;

	if (e == NULL || e->ran)
		return;
	e->ran = 1;
	if ((n = snprintf(buf, sizeof(buf), "R %" PRIu64 "\n", e->id)) > 0)
		(void)journal_write(e->log, buf, (size_t)n);
}

/* The daemon has the end (ok) or never will: only then does it close. */
static void
ended_cb(void *arg, int ok, const char *err)
{
	struct inflight		*e = arg;
	struct inflight_log	*jl = e->log;
	char			 buf[32];
	int			 n;

	if (!ok)
		return;		/* kept: the next start records it */
	if ((n = snprintf(buf, sizeof(buf), "E %" PRIu64 "\n", e->id)) > 0)
		(void)journal_write(jl, buf, (size_t)n);
	TAILQ_REMOVE(&jl->open, e, entry);
	free(e->fields);
	free(e);
}

void
inflight_end(struct server *srv, struct inflight *e, json_t *record)
{
	if (e == NULL)
		audit_link_send(&srv->audit, record);
	else
		end_durable(srv, record, ended_cb, e);
}
