/*
 * A session's artifacts: what each call left in the workspace is copied
 * out to the session's store (sandbox dir, not the sandbox's reach), and
 * read back for resources/read by the owning principal only.  Workspace
 * files are the sandbox's: opened beneath a directory descriptor, never
 * following links (sandbox/artifacts.c checks them).  One concern with
 * session.c, split for length: both work on session_int.h's state.
 */
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/magic.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sandbox/artifacts.h"
#include "session_int.h"

/* Moves the new and changed artifacts from incoming/ into the store. */
static json_t *
keep_changed(struct session *s, const char *incoming, json_t *found)
{
	json_t		*changed = json_array(), *a;
	const char	*name;
	char		 from[PATH_MAX], to[PATH_MAX], *slash;
	size_t		 i;

	json_array_foreach(found, i, a) {
		name = json_string_value(json_object_get(a, "name"));
		if (xsnprintf(from, sizeof(from), "%s/%s", incoming, name) == -1 ||
		    xsnprintf(to, sizeof(to), "%s/%s", s->store, name) == -1)
			continue;
		if ((slash = strrchr(to, '/')) != NULL) {
			*slash = '\0';
			(void)mkdir_p(to, 0700);
			*slash = '/';
		}
		if (rename(from, to) == -1) {
			log_warn("artifact %s", to);
			continue;
		}
		json_object_set_new(s->seen, name, json_pack("{s:O, s:O, s:O}",
		    "sha256", json_object_get(a, "sha256"), "mime",
		    json_object_get(a, "mime"), "uri", json_object_get(a, "uri")));
		json_array_append(changed, a);
	}
	return changed;
}

/*
 * 1 when the workspace holds nothing at all: its own tmpfs (the usual
 * case; with a package layer it shares one, and is walked) whose only
 * inode is its root.  The kernel's count, so code cannot fake it; at
 * worst a walk happens that was not needed.
 */
static int
workspace_empty(int wsfd)
{
	struct statfs	 st;

	return fstatfs(wsfd, &st) == 0 && st.f_type == TMPFS_MAGIC &&
	    st.f_files > 0 && st.f_files - st.f_ffree == 1;
}

/*
 * What the call left in the workspace that is new or changed.  Files the
 * session already reported with the same content are not copied again,
 * so a call that makes none costs a directory walk, and one that leaves
 * the workspace empty costs one fstatfs.
 */
void
session_collect_artifacts(struct session *s, json_t **changed, json_t **skipped)
{
	const struct profile	*p = &s->prof;
	char			 incoming[PATH_MAX], uri[PATH_MAX], err[256];
	json_t			*found = NULL;
	int			 infd = -1, outfd = -1;

	*changed = json_array();
	*skipped = NULL;
	if (workspace_empty(s->wsfd))
		return;
	if (xsnprintf(incoming, sizeof(incoming), "%s/.incoming", s->store) ==
	    -1 || xsnprintf(uri, sizeof(uri), "stockade://sessions/%s/artifacts/",
	    s->id) == -1)
		return;
	if ((infd = openat_beneath(s->wsfd, p->artifact_dir[0] ?
	    p->artifact_dir : ".", O_RDONLY | O_DIRECTORY)) == -1)
		return;
	/* incoming/ is made with the store and left empty after each call,
	 * so a call that leaves no new artifact touches no directory. */
	if ((outfd = open(incoming, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		log_warn("artifacts: %s", incoming);
		goto reset;
	}
	if (artifacts_collect(infd, &p->artifacts, outfd, s->seen, uri,
	    &found, skipped, err, sizeof(err)) == -1) {
		log_warnx("artifacts of %s: %s", s->id, err);
		goto reset;
	}
	if (json_array_size(found) == 0)
		goto out;
	json_decref(*changed);
	*changed = keep_changed(s, incoming, found);
reset:
	/* Subdirectories of what was taken, or what a failure left. */
	if ((rmtree(incoming) == -1 && errno != ENOENT) ||
	    mkdir(incoming, 0700) == -1)
		log_warn("artifacts: %s", incoming);
out:
	json_decref(found);
	close(infd);
	if (outfd != -1)
		close(outfd);
}

json_t *
session_resources(struct server *srv, const char *principal)
{
	struct session	*s;
	const char	*name;
	json_t		*list = json_array(), *meta;

	LIST_FOREACH(s, &srv->sessions, entry) {
		if (strcmp(s->principal, principal) != 0)
			continue;
		json_object_foreach(s->seen, name, meta) {
			json_array_append_new(list, json_pack("{s:O, s:s, s:O}",
			    "uri", json_object_get(meta, "uri"), "name", name,
			    "mimeType", json_object_get(meta, "mime")));
		}
	}
	return list;
}

int
session_artifact(struct server *srv, const char *principal, const char *id,
    const char *name, char **data, size_t *len, const char **mime)
{
	struct session	*s;
	json_t		*meta;
	struct stat	 st;
	int		 dirfd, fd = -1, rv = -1;
	ssize_t		 n;

	if ((s = session_find(srv, id, principal)) == NULL ||
	    (meta = json_object_get(s->seen, name)) == NULL)
		return -1;
	if ((dirfd = open(s->store, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if ((fd = openat_beneath(dirfd, name, O_RDONLY)) == -1 ||
	    fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > s->prof.artifacts.max_file)
		goto out;
	*data = xmalloc((size_t)st.st_size + 1);
	if ((n = read_all(fd, *data, (size_t)st.st_size)) != st.st_size) {
		free(*data);
		goto out;
	}
	*len = (size_t)n;
	*mime = json_string_value(json_object_get(meta, "mime"));
	rv = 0;
out:
	if (fd != -1)
		close(fd);
	close(dirfd);
	return rv;
}
