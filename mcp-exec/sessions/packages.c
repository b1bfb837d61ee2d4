/*
 * A session's package layer: pip configured inside the sandbox (the
 * profile's index only, the trust store, no cache, the externally-managed
 * marker waived for this layer alone), and what the layer holds after each
 * call.  Everything read from the layer was written by sandboxed code:
 * opened beneath it without following links, size-capped, names checked.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "packages.h"
#include "util.h"

#define PKG_DIR_SUFFIX	".dist-info"
#define PKG_NAME_MAX	128
#define PKG_PY_DIRS	4	/* lib/python3.X: one is the norm */

/*
 * pip reads these; a caller's code can change its own environment, but
 * not where the index is reached from: that is the network policy's.
 */
static const char *const pkg_env[] = {
	"PYTHONUSERBASE=" SANDBOX_PACKAGES_DIR,	/* the layer: a user site */
	"PIP_USER=1",
	/* Debian's EXTERNALLY-MANAGED guards the system's dist-packages,
	 * which stay read-only; the layer is the session's own. */
	"PIP_BREAK_SYSTEM_PACKAGES=1",
	"PIP_CONFIG_FILE=/dev/null",		/* no pip.conf but this */
	"PIP_NO_CACHE_DIR=1",			/* nothing kept outside */
	"PIP_DISABLE_PIP_VERSION_CHECK=1",
	"PIP_NO_INPUT=1",
	"PIP_PROGRESS_BAR=off",
	/* What each install took, with the wheel's sha256 (pip computes
	 * it when the index gave none): read after the call. */
	"PIP_REPORT=" SANDBOX_PACKAGES_DIR "/" PKG_REPORT,
	NULL
};

void
packages_prepare(struct pkg_layer *pl, struct sandbox_spec *spec,
    const struct profile *p)
{
	size_t	 n = 0, i;

	memset(pl, 0, sizeof(*pl));
	if (!p->pkg_install)
		return;
	pl->on = 1;
	pl->hashes = json_object();
	for (i = 0; spec->env_extra != NULL && spec->env_extra[i] != NULL &&
	    n < PKG_ENV_MAX - 2; i++)
		pl->env[n++] = spec->env_extra[i];
	/* The profile's loader held it to plain URL characters. */
	snprintf(pl->index_env, sizeof(pl->index_env), "PIP_INDEX_URL=%s",
	    p->pkg_index);
	pl->env[n++] = pl->index_env;
	for (i = 0; pkg_env[i] != NULL && n < PKG_ENV_MAX - 1; i++)
		pl->env[n++] = pkg_env[i];
	pl->env[n] = NULL;
	spec->env_extra = pl->env;
	spec->packages = 1;
}

void
packages_free(struct pkg_layer *pl)
{
	json_decref(pl->hashes);
	pl->hashes = NULL;
}

/* PEP 503's normalized name, lower case with runs of -_. as one '-'. */
static void
name_normalize(const char *in, char *out, size_t outlen)
{
	size_t	 n = 0;
	int	 sep = 0;

	for (; *in != '\0' && n + 1 < outlen; in++) {
		if (*in == '-' || *in == '_' || *in == '.') {
			sep = 1;
			continue;
		}
		if (sep && n > 0 && n + 2 < outlen)
			out[n++] = '-';
		sep = 0;
		out[n++] = (*in >= 'A' && *in <= 'Z') ? *in - 'A' + 'a' : *in;
	}
	out[n] = '\0';
}

/* Names and versions as wheels spell them: nothing to escape. */
static int
word_ok(const char *s)
{
	return s != NULL && s[0] != '\0' && strlen(s) < PKG_NAME_MAX &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._+!-") == strlen(s);
}

static int
hex64_ok(const char *s)
{
	return s != NULL && strlen(s) == 64 &&
	    strspn(s, "0123456789abcdef") == 64;
}

/* pip 23's download_info: archive_info.hashes.sha256, or hash "sha256=". */
static const char *
report_sha256(const json_t *item)
{
	const json_t	*ai;
	const char	*h;

	ai = json_object_get(json_object_get(item, "download_info"),
	    "archive_info");
	h = json_string_value(json_object_get(json_object_get(ai, "hashes"),
	    "sha256"));
	if (hex64_ok(h))
		return h;
	h = json_string_value(json_object_get(ai, "hash"));
	if (h != NULL && strncmp(h, "sha256=", 7) == 0 && hex64_ok(h + 7))
		return h + 7;
	return NULL;
}

void
packages_report_parse(struct pkg_layer *pl, const char *buf, size_t len)
{
	json_error_t	 je;
	json_t		*rep, *item;
	char		 key[2 * PKG_NAME_MAX + 4], norm[PKG_NAME_MAX];
	const char	*name, *version, *sha, *url;
	size_t		 i;

	if (len > PKG_REPORT_MAX || (rep = json_loadb(buf, len,
	    JSON_REJECT_DUPLICATES, &je)) == NULL)
		return;
	json_array_foreach(json_object_get(rep, "install"), i, item) {
		name = json_string_value(json_object_get(json_object_get(item,
		    "metadata"), "name"));
		version = json_string_value(json_object_get(
		    json_object_get(item, "metadata"), "version"));
		url = json_string_value(json_object_get(json_object_get(item,
		    "download_info"), "url"));
		if (i >= PKG_LIST_MAX || !word_ok(name) || !word_ok(version) ||
		    (sha = report_sha256(item)) == NULL)
			continue;
		name_normalize(name, norm, sizeof(norm));
		snprintf(key, sizeof(key), "%s==%s", norm, version);
		json_object_set_new(pl->hashes, key, json_pack("{s:s, s:s?}",
		    "sha256", sha, "url", url != NULL && strlen(url) < 1024 &&
		    strncmp(url, "https://", 8) == 0 ? url : NULL));
	}
	json_decref(rep);
}

/* Takes the layer's report (if any) into pl->hashes and removes it. */
static void
report_take(struct pkg_layer *pl, int root)
{
	struct stat	 st;
	char		*buf = NULL;
	ssize_t		 n;
	int		 fd;

	if ((fd = openat_beneath(root, PKG_REPORT, O_RDONLY | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return;
	/* Not one pip wrote: the hashes stay unknown (null), unlogged, as
	 * the sandbox could otherwise write a log line per call. */
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > PKG_REPORT_MAX)
		goto out;
	buf = xmalloc((size_t)st.st_size + 1);
	if ((n = read_all(fd, buf, (size_t)st.st_size)) >= 0)
		packages_report_parse(pl, buf, (size_t)n);
out:
	free(buf);
	close(fd);
	/* Each report is one install's: the next call's stands alone. */
	(void)unlinkat(root, PKG_REPORT, 0);
}

struct pkg_entry {
	char	 name[PKG_NAME_MAX];
	char	 version[PKG_NAME_MAX];
};

static int
entry_cmp(const void *a, const void *b)
{
	const struct pkg_entry *x = a, *y = b;
	int	 c;

	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	return strcmp(x->version, y->version);
}

/* NAME-VERSION.dist-info directories in one site-packages. */
static void
site_scan(int site, struct pkg_entry *e, size_t *n)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	char		 base[PKG_NAME_MAX * 2], *dash;
	size_t		 len, sl = strlen(PKG_DIR_SUFFIX);

	if ((d = fdopendir(site)) == NULL) {
		close(site);
		return;
	}
	while ((de = readdir(d)) != NULL && *n < PKG_LIST_MAX) {
		len = strlen(de->d_name);
		/* Directories pip made; a link or a file is not a package. */
		if (!(de->d_type == DT_DIR || (de->d_type == DT_UNKNOWN &&
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    0 && S_ISDIR(st.st_mode))))
			continue;
		if (len <= sl || len - sl >= sizeof(base) ||
		    strcmp(de->d_name + len - sl, PKG_DIR_SUFFIX) != 0)
			continue;
		memcpy(base, de->d_name, len - sl);
		base[len - sl] = '\0';
		/* A wheel's name has its '-' escaped as '_'. */
		if ((dash = strchr(base, '-')) == NULL)
			continue;
		*dash = '\0';
		/* word_ok bounds both below the entry's fields; sorted and
		 * joined by the PEP 503 name. */
		if (!word_ok(base) || !word_ok(dash + 1) ||
		    xsnprintf(e[*n].version, sizeof(e[*n].version), "%s",
		    dash + 1) == -1)
			continue;
		name_normalize(base, e[*n].name, sizeof(e[*n].name));
		(*n)++;
	}
	closedir(d);
}

json_t *
packages_list(struct pkg_layer *pl, const char *sandbox_dir)
{
	struct pkg_entry *e;
	struct dirent	*de;
	DIR		*lib = NULL;
	json_t		*out, *h;
	char		 p[PATH_MAX], key[2 * PKG_NAME_MAX + 4];
	size_t		 n = 0, i, pys = 0;
	int		 root, fd, site;

	if (!pl->on)
		return NULL;
	out = json_array();
	if (xsnprintf(p, sizeof(p), "%s/disk/packages", sandbox_dir) == -1 ||
	    (root = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return out;
	report_take(pl, root);
	e = xcalloc(PKG_LIST_MAX, sizeof(*e));
	if ((fd = openat_beneath(root, "lib", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) != -1 && (lib = fdopendir(fd)) == NULL)
		close(fd);
	while (lib != NULL && (de = readdir(lib)) != NULL && pys < PKG_PY_DIRS) {
		if (strncmp(de->d_name, "python3", 7) != 0 ||
		    xsnprintf(p, sizeof(p), "%s/site-packages", de->d_name) ==
		    -1)
			continue;
		pys++;
		if ((site = openat_beneath(dirfd(lib), p, O_RDONLY |
		    O_DIRECTORY | O_CLOEXEC)) != -1)
			site_scan(site, e, &n);
	}
	if (lib != NULL)
		closedir(lib);
	close(root);
	qsort(e, n, sizeof(*e), entry_cmp);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "%s==%s", e[i].name, e[i].version);
		h = json_object_get(pl->hashes, key);
		json_array_append_new(out, json_pack("{s:s, s:s, s:O?, s:O?}",
		    "name", e[i].name, "version", e[i].version, "sha256",
		    json_object_get(h, "sha256"), "url", json_object_get(h,
		    "url")));
	}
	free(e);
	return out;
}
