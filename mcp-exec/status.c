/*
 * Publishes the live sessions for operators.  The file is written to a
 * temporary name and renamed, so a reader sees a whole list or the
 * previous one; mode 0600 in state_dir (principals are not for everyone).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "server.h"
#include "session.h"
#include "status.h"
#include "util.h"

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
	o = json_pack("{s:I, s:s, s:s, s:o}", "pid", (json_int_t)getpid(),
	    "updated", ts, "profile", srv->profile.name, "sessions",
	    sessions_describe(srv));
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
