/*
 * Start-up checks of the paths mcp-exec depends on.  They read the
 * operator's configuration and the file system, and change nothing: the
 * state directory is made later (run_state_init), sockets belong to the
 * daemons that listen on them.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preflight.h"
#include "sandbox/cgroup.h"
#include "sandbox/trust.h"
#include "util.h"

static void
problem(int *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
problem(int *n, const char *fmt, ...)
{
	va_list	 ap;

	fprintf(stderr, "mcp-exec: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	(*n)++;
}

/* A directory holding DRIVER_FILE, neither writable by group or others. */
static int
driver_ok(const char *dir, char *err, size_t errlen)
{
	struct stat	 st;
	char		 file[PATH_MAX];

	if (xsnprintf(file, sizeof(file), "%s/%s", dir, DRIVER_FILE) == -1) {
		snprintf(err, errlen, "%s: too long", dir);
		return -1;
	}
	if (stat(dir, &st) == -1) {
		snprintf(err, errlen, "driver_dir %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "driver_dir %s: not a directory", dir);
		return -1;
	}
	/* Every session runs this code: nobody but its owner may change it. */
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen, "driver_dir %s is writable by group or "
		    "others", dir);
		return -1;
	}
	if (stat(file, &st) == -1 || !S_ISREG(st.st_mode) ||
	    access(file, R_OK) == -1) {
		snprintf(err, errlen, "driver_dir %s: no readable %s (set "
		    "server.driver_dir, or install with make install)", dir,
		    DRIVER_FILE);
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen, "%s is writable by group or others", file);
		return -1;
	}
	return 0;
}

int
preflight_driver(struct mcpexec_conf *c, char *err, size_t errlen)
{
	/* The build tree's first: build/san/../share is another build's. */
	static const char *const rel[] = { DRIVER_BUILD_TREE, DRIVER_INSTALLED };
	char	 exe[PATH_MAX], cand[PATH_MAX], *slash, *real;
	ssize_t	 n;
	size_t	 i;

	if (c->server.driver_dir[0] != '\0')
		return 0;
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) == -1) {
		snprintf(err, errlen, "/proc/self/exe: %s", strerror(errno));
		return -1;
	}
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) != NULL)
		*slash = '\0';
	for (i = 0; i < nitems(rel); i++) {
		if (xsnprintf(cand, sizeof(cand), "%s/%s/%s", exe, rel[i],
		    DRIVER_FILE) == -1 || access(cand, F_OK) == -1)
			continue;
		cand[strlen(cand) - strlen(DRIVER_FILE) - 1] = '\0';
		if ((real = realpath(cand, NULL)) == NULL)
			continue;
		n = xsnprintf(c->server.driver_dir, sizeof(c->server.driver_dir),
		    "%s", real);
		free(real);
		if (n != -1)
			return 0;
	}
	c->server.driver_dir[0] = '\0';
	snprintf(err, errlen, "no session driver beside %s (looked in %s/%s "
	    "and %s/%s): set server.driver_dir in mcp-exec.yaml", exe, exe,
	    rel[0], exe, rel[1]);
	return -1;
}

int
preflight_state_dir(const char *state_dir, char *err, size_t errlen)
{
	struct stat	 st;
	char		 p[PATH_MAX], *slash;

	snprintf(p, sizeof(p), "%s", state_dir);
	if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "state directory %s is not a directory",
		    state_dir);
		return -1;
	}
	while ((slash = strrchr(p, '/')) != NULL && slash != p) {
		*slash = '\0';
		if (stat(p, &st) == -1)
			continue;	/* made at start */
		if (!S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "state directory %s: %s is not a "
			    "directory", state_dir, p);
			return -1;
		}
		if ((st.st_mode & S_IXOTH) == 0) {
			snprintf(err, errlen, "state directory %s: %s is not "
			    "searchable by other users (sandbox uids must reach "
			    "their directories; chmod o+x)", state_dir, p);
			return -1;
		}
	}
	return 0;
}

/* A daemon's socket: its directory must exist; the socket may come later. */
static void
socket_check(int *n, const char *what, const char *path, const char *why,
    int verbose)
{
	struct stat	 st;
	char		 dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir)
		*slash = '\0';
	if (stat(dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
		problem(n, "%s %s: the directory %s does not exist", what, path,
		    dir);
		return;
	}
	if (stat(path, &st) == 0 && !S_ISSOCK(st.st_mode))
		problem(n, "%s %s is not a socket", what, path);
	else if (verbose && access(path, F_OK) == -1)
		fprintf(stderr, "mcp-exec: note: %s %s is not there yet: %s\n",
		    what, path, why);
}

int
preflight_check(const struct mcpexec_conf *c, const struct profile *p,
    int verbose)
{
	const struct server_conf *sc = &c->server;
	struct stat	 st;
	char		 err[PATH_MAX + 256];
	size_t		 i;
	int		 n = 0;

	if (sc->driver_dir[0] == '\0') {
		/* Not found at load: say where it was looked for. */
		struct mcpexec_conf	 again = *c;

		if (preflight_driver(&again, err, sizeof(err)) == -1)
			problem(&n, "%s", err);
	} else if (driver_ok(sc->driver_dir, err, sizeof(err)) == -1)
		problem(&n, "%s", err);
	if (access(PREFLIGHT_PYTHON, X_OK) == -1)
		problem(&n, "%s: %s (every session's driver runs on it)",
		    PREFLIGHT_PYTHON, strerror(errno));
	if (preflight_state_dir(c->state_dir, err, sizeof(err)) == -1)
		problem(&n, "%s", err);
	if (cgroup_detect(c->cgroup.version) == -1)
		problem(&n, "no usable cgroup %s hierarchy (memory and pids "
		    "controllers) under %s", c->cgroup.version == CGROUP_V2 ?
		    "v2" : c->cgroup.version == CGROUP_V1 ? "v1" : "v1 or v2",
		    CGROUP_ROOT);
	socket_check(&n, "audit_socket", sc->audit_socket, sc->audit_required ?
	    "no code runs until stockade-auditd listens (audit_required)" :
	    "code runs unaudited until stockade-auditd listens", verbose);
	if (p->netguard)
		socket_check(&n, "netguard_socket", sc->netguard_socket,
		    "no session of this profile starts until netguard listens",
		    verbose);
	/* What every sandbox of this profile is given; missing, none starts. */
	if (p->tls_system && access(TRUST_SYSTEM_BUNDLE, R_OK) == -1)
		problem(&n, "%s: tls: %s: %s (install ca-certificates, or set "
		    "tls.ca_bundle: none)", p->path, TRUST_SYSTEM_BUNDLE,
		    strerror(errno));
	if (p->tls_extra_ca[0] != '\0' && trust_pem_check(p->tls_extra_ca,
	    err, sizeof(err)) == -1)
		problem(&n, "%s: tls.extra_ca: %s", p->path, err);
	for (i = 0; i < p->inputs.nroots; i++) {
		if (stat(p->inputs.roots[i], &st) == -1)
			problem(&n, "%s: inputs.roots entry %s: %s", p->path,
			    p->inputs.roots[i], strerror(errno));
		else if (!S_ISDIR(st.st_mode))
			problem(&n, "%s: inputs.roots entry %s: not a directory",
			    p->path, p->inputs.roots[i]);
	}
	if (verbose && n == 0)
		fprintf(stderr, "mcp-exec: driver %s, state_dir %s, profile %s\n",
		    sc->driver_dir, c->state_dir, p->path);
	return n;
}
