/*
 * Publishes the live sessions for operators, as the sessions published
 * them (srv->live).  The file is written to a
 * temporary name and renamed, so a reader sees a whole list or the
 * previous one; mode 0600 in state_dir (principals are not for everyone).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sessions/quota.h"
#include "sessions/server.h"
#include "status.h"
#include "util.h"

#define STATUS_FILE_MAX		(4 * 1024 * 1024)

static int
status_path(const struct server *srv, char *out, size_t len)
{
	return xsnprintf(out, len, "%s/" STATUS_FILE_PREFIX "%ld.json",
	    srv->conf.state_dir, (long)getpid());
}

void
status_publish(struct server *srv)
{
	char	 path[PATH_MAX], tmp[PATH_MAX + 8], ts[TS_LEN + 1], *data;
	json_t	*o;
	int	 fd;

	if (status_path(srv, path, sizeof(path)) == -1 ||
	    xsnprintf(tmp, sizeof(tmp), "%s.tmp", path) == -1)
		return;
	ts_now(ts);
	o = json_pack("{s:I, s:s, s:s, s:o, s:o, s:{s:I, s:I, s:I, s:b}}",
	    "pid", (json_int_t)getpid(), "updated", ts, "profile",
	    srv->profile.name, "sessions", srv->live != NULL ?
	    json_incref(srv->live) : json_array(), "quotas", srv->quota !=
	    NULL ? quota_describe(srv->quota) : json_array(), "pool", "ready",
	    (json_int_t)srv->counters.pool_ready, "hits",
	    (json_int_t)srv->counters.pool_hits, "misses",
	    (json_int_t)srv->counters.pool_misses, "warm",
	    srv->counters.pool_warm != 0);
	/* Which node of a fleet this is (stockade status, fleet status). */
	if (o != NULL && srv->conf.fleet.node_id[0] != '\0')
		json_object_set_new(o, "node", json_string(
		    srv->conf.fleet.node_id));
	data = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (data == NULL ||
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) ==
	    -1 || write_all(fd, data, strlen(data)) == -1 || close(fd) == -1 ||
	    rename(tmp, path) == -1)
		log_warn("%s", path);
	free(data);
}

void
status_unpublish(struct server *srv)
{
	char	 path[PATH_MAX];

	if (status_path(srv, path, sizeof(path)) != -1 && unlink(path) == -1 &&
	    errno != ENOENT)
		log_warn("%s", path);
}

/*
 * The lists of servers that died without removing them: each session in
 * them ended with its server, and the trail says so (session_closed,
 * "mcp-exec died"), since nothing else will.  Returns how many.
 */
unsigned
status_sweep(struct server *srv)
{
	struct dirent	*de;
	char		 path[PATH_MAX], *data;
	size_t		 len, i;
	json_t		*o, *s;
	long		 pid;
	unsigned	 n = 0;
	DIR		*d;

	if ((d = opendir(srv->conf.state_dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, STATUS_FILE_PREFIX,
		    strlen(STATUS_FILE_PREFIX)) != 0 ||
		    xsnprintf(path, sizeof(path), "%s/%s", srv->conf.state_dir,
		    de->d_name) == -1 ||
		    read_file(path, STATUS_FILE_MAX, &data, &len) == -1)
			continue;
		o = json_loadb(data, len, 0, NULL);
		free(data);
		pid = (long)json_integer_value(json_object_get(o, "pid"));
		if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH)) {
			json_decref(o);
			continue;	/* alive (or not ours to judge) */
		}
		json_array_foreach(json_object_get(o, "sessions"), i, s) {
			if (!json_is_string(json_object_get(s, "session_id")) ||
			    !json_is_string(json_object_get(s, "principal")))
				continue;
			server_audit(srv, json_pack("{s:s, s:O, s:O, s:s, s:O*}",
			    "event", "session_closed", "principal",
			    json_object_get(s, "principal"), "session_id",
			    json_object_get(s, "session_id"), "reason",
			    "mcp-exec died", "sandbox", json_object_get(s,
			    "sandbox")));
			n++;
		}
		json_decref(o);
		if (unlink(path) == -1)
			log_warn("%s", path);
	}
	closedir(d);
	return n;
}
