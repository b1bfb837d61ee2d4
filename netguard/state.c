/*
 * Attachments kept on disk, so that a netguard that restarts puts every
 * sandbox that is still alive back under its policy, and cleans up after
 * those that are gone.  Each attachment is two files in state_dir: the
 * namespace itself, bind-mounted (it outlives netguard like `ip netns add`
 * does), and a small JSON record.  The files are netguard's own (0700
 * directory), but are read back as if they were not: checked, capped.
 */
#include <sys/mount.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "netguard.h"
#include "netns.h"
#include "util.h"

#define STATE_RECORD_MAX	4096
#define STATE_NETNS_SUFFIX	".netns"
#define STATE_RECORD_SUFFIX	".json"
#define STATE_INUSE_MAX		65536	/* namespaces seen in one scan */

static int
state_path(const struct netguard *ng, const char *sandbox, const char *suffix,
    char *out, size_t len)
{
	return xsnprintf(out, len, "%s/%s%s", ng->conf.state_dir, sandbox,
	    suffix);
}

int
state_init(struct netguard *ng, char *err, size_t errlen)
{
	if (mkdir_p(ng->conf.state_dir, 0700) == -1 ||
	    chmod(ng->conf.state_dir, 0700) == -1) {
		snprintf(err, errlen, "state_dir %s: %s", ng->conf.state_dir,
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
state_save(const struct attachment *att, char *err, size_t errlen)
{
	struct netguard	*ng = att->ng;
	char		 ns[PATH_MAX], rec[PATH_MAX], tmp[PATH_MAX + 8];
	char		 src[64], *data = NULL;
	struct stat	 st;
	json_t		*o;
	int		 fd, mounted = 0;

	if (state_path(ng, att->sandbox, STATE_NETNS_SUFFIX, ns,
	    sizeof(ns)) == -1 || state_path(ng, att->sandbox,
	    STATE_RECORD_SUFFIX, rec, sizeof(rec)) == -1 ||
	    xsnprintf(tmp, sizeof(tmp), "%s.tmp", rec) == -1) {
		snprintf(err, errlen, "state_dir: path too long");
		return -1;
	}
	/*
	 * The namespace first: a record without it restores nothing.  A
	 * restored attachment's is mounted already (and its descriptor comes
	 * from that mount, so it could not be mounted again).
	 */
	snprintf(src, sizeof(src), "/proc/self/fd/%d", att->nsfd);
	if (stat(ns, &st) == 0 && st.st_dev == att->dev &&
	    st.st_ino == att->ino)
		mounted = 1;
	else if ((fd = open(ns, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 || close(fd) == -1 ||
	    mount(src, ns, NULL, MS_BIND, NULL) == -1) {
		snprintf(err, errlen, "%s: %s", ns, strerror(errno));
		(void)unlink(ns);
		return -1;
	}
	o = json_pack("{s:s, s:s, s:s, s:s, s:i}", "sandbox", att->sandbox,
	    "session_id", att->session, "principal", att->principal, "policy",
	    att->policy->name, "slot", att->slot);
	data = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (data == NULL ||
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) ==
	    -1 || write_all(fd, data, strlen(data)) == -1 || close(fd) == -1 ||
	    rename(tmp, rec) == -1) {
		snprintf(err, errlen, "%s: %s", rec, strerror(errno));
		free(data);
		(void)unlink(tmp);
		if (!mounted) {
			(void)umount2(ns, MNT_DETACH);
			(void)unlink(ns);
		}
		return -1;
	}
	free(data);
	return 0;
}

static void
state_forget(const struct netguard *ng, const char *sandbox)
{
	char	 p[PATH_MAX];

	if (state_path(ng, sandbox, STATE_RECORD_SUFFIX, p, sizeof(p)) != -1 &&
	    unlink(p) == -1 && errno != ENOENT)
		log_warn("%s", p);
	if (state_path(ng, sandbox, STATE_NETNS_SUFFIX, p, sizeof(p)) != -1) {
		if (umount2(p, MNT_DETACH) == -1 && errno != EINVAL &&
		    errno != ENOENT)
			log_warn("umount %s", p);
		if (unlink(p) == -1 && errno != ENOENT)
			log_warn("%s", p);
	}
}

void
state_remove(const struct attachment *att)
{
	state_forget(att->ng, att->sandbox);
}

/* ------------------------------------------------------------ in use */

struct inuse {
	ino_t	 ino[STATE_INUSE_MAX];
	size_t	 n;
	int	 all;		/* the scan failed: everything counts as used */
};

static void
inuse_add(struct inuse *u, ino_t ino)
{
	if (u->n < STATE_INUSE_MAX)
		u->ino[u->n++] = ino;
}

static int
inuse_has(const struct inuse *u, ino_t ino)
{
	size_t	 i;

	if (u->all)
		return 1;
	for (i = 0; i < u->n; i++)
		if (u->ino[i] == ino)
			return 1;
	return 0;
}

/*
 * Every network namespace something other than netguard holds: a
 * process's, or a bind mount outside state_dir (`ip netns add`).  A
 * sandbox whose namespace is in neither is gone.  A scan that fails or
 * overflows counts everything as in use (never detach on doubt).
 */
static int
inuse_scan(const struct netguard *ng, struct inuse *u)
{
	struct dirent	*de;
	struct stat	 st;
	char		 p[64], line[1024], *root, *mnt;
	unsigned long	 ino;
	size_t		 dl = strlen(ng->conf.state_dir);
	FILE		*f;
	DIR		*d;

	u->n = 0;
	u->all = 1;
	if ((d = opendir("/proc")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%.16s/ns/net", de->d_name);
		if (stat(p, &st) == 0)
			inuse_add(u, st.st_ino);
	}
	closedir(d);
	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ...": ROOT is net:[INO]. */
	while (fgets(line, sizeof(line), f) != NULL) {
		if ((root = strstr(line, " net:[")) == NULL ||
		    sscanf(root, " net:[%lu]", &ino) != 1)
			continue;
		mnt = strchr(root + 1, ' ');
		if (mnt != NULL && strncmp(mnt + 1, ng->conf.state_dir, dl) == 0 &&
		    mnt[1 + dl] == '/')
			continue;
		inuse_add(u, (ino_t)ino);
	}
	fclose(f);
	if (u->n == STATE_INUSE_MAX)
		return -1;
	u->all = 0;
	return 0;
}

void
state_reap(struct netguard *ng)
{
	struct attachment	*att, *next;
	struct inuse		*u = xmalloc(sizeof(*u));

	if (inuse_scan(ng, u) == 0)
		for (att = LIST_FIRST(&ng->attached); att != NULL; att = next) {
			next = LIST_NEXT(att, entry);
			if (!inuse_has(u, att->ino))
				ng_detach(att, "sandbox gone");
		}
	free(u);
}

/* ------------------------------------------------------------ restore */

static json_t *
record_load(const char *path)
{
	char	*data;
	size_t	 len;
	json_t	*o;

	if (read_file(path, STATE_RECORD_MAX, &data, &len) == -1)
		return NULL;
	o = json_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
	free(data);
	if (!json_is_object(o)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Restores one record: the sandbox is alive, its namespace held here. */
static void
restore_one(struct netguard *ng, const char *sandbox, struct inuse *u,
    json_t *removed)
{
	char		 ns[PATH_MAX], rec[PATH_MAX], err[512];
	json_t		*o = NULL, *r;
	dev_t		 dev;
	ino_t		 ino;
	int		 nsfd = -1;
	const char	*session, *principal, *policy;

	if (state_path(ng, sandbox, STATE_NETNS_SUFFIX, ns, sizeof(ns)) == -1 ||
	    state_path(ng, sandbox, STATE_RECORD_SUFFIX, rec, sizeof(rec)) == -1)
		return;
	if ((o = record_load(rec)) == NULL ||
	    (session = json_string_value(json_object_get(o, "session_id"))) ==
	    NULL || (principal = json_string_value(json_object_get(o,
	    "principal"))) == NULL || (policy = json_string_value(
	    json_object_get(o, "policy"))) == NULL ||
	    (nsfd = netns_open(ns)) == -1 || netns_id(nsfd, &dev, &ino) == -1) {
		json_array_append_new(removed, json_sprintf("attachment %s: "
		    "unreadable", sandbox));
		goto forget;
	}
	if (!inuse_has(u, ino)) {
		json_array_append_new(removed, json_sprintf("attachment %s "
		    "(session %s): sandbox gone", sandbox, session));
		goto forget;
	}
	/* The record is rewritten by the attach; the mount stays. */
	r = ng_attach(ng, nsfd, sandbox, session, principal, policy,
	    (int)json_integer_value(json_object_get(o, "slot")), 1, err,
	    sizeof(err));
	nsfd = -1;
	json_decref(o);
	o = NULL;
	if (r != NULL) {
		json_decref(r);
		return;
	}
	/* Not restored (its policy gone, the pool full): never half-kept. */
	log_warnx("restore %s: %s", sandbox, err);
	json_array_append_new(removed, json_sprintf("attachment %s: not "
	    "restored: %s", sandbox, err));
forget:
	if (nsfd != -1)
		close(nsfd);
	json_decref(o);
	state_forget(ng, sandbox);
}

void
state_restore(struct netguard *ng, json_t *removed)
{
	struct inuse	*u;
	struct dirent	*de;
	char		 name[NG_ID_MAX + 1];
	size_t		 len, sl = strlen(STATE_RECORD_SUFFIX);
	DIR		*d;
	json_t		*names = json_array(), *v;
	size_t		 i;

	if ((d = opendir(ng->conf.state_dir)) == NULL) {
		log_warn("%s", ng->conf.state_dir);
		json_decref(names);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len <= sl || len - sl > NG_ID_MAX ||
		    strcmp(de->d_name + len - sl, STATE_RECORD_SUFFIX) != 0)
			continue;
		memcpy(name, de->d_name, len - sl);
		name[len - sl] = '\0';
		json_array_append_new(names, json_string(name));
	}
	closedir(d);
	u = xmalloc(sizeof(*u));
	if (inuse_scan(ng, u) == -1)
		log_warnx("cannot tell which sandboxes are alive: restoring "
		    "all");
	json_array_foreach(names, i, v)
		restore_one(ng, json_string_value(v), u, removed);
	free(u);
	json_decref(names);
}
