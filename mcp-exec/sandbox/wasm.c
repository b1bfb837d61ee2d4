/*
 * The wasm runtime's engine: probes node once, names the Pyodide module
 * that runs the code (versions, sha256) for the records, and writes the
 * driver's command line.  The sandbox is the native one (spawn.c); this
 * file adds nothing to its walls and removes nothing.  Trusts the host's
 * node binary and the build's files beneath the driver directory.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "hash.h"
#include "log.h"
#include "sandbox.h"
#include "util.h"
#include "wasm.h"

#define WASM_READ_CHUNK		65536
#define WASM_PKG_JSON_MAX	65536
#define WASM_WHY_MAX		256
#define WASM_POLL_NS		(10 * 1000 * 1000)

/* node's path (wasm.h): $STOCKADE_NODE (absolute; inside the sandbox
 * too, so beneath /usr), else the pinned engine where it is, else the
 * host's.  Looked for once. */
static const char *
wasm_node(void)
{
	static const char	*node;
	const char		*p = getenv("STOCKADE_NODE");

	if (p != NULL && p[0] == '/')
		return p;
	if (node == NULL)
		node = access(WASM_ENGINE_INSTALLED, X_OK) == 0 ?
		    WASM_ENGINE_INSTALLED : access(WASM_ENGINE_DEPS, X_OK) == 0 ?
		    WASM_ENGINE_DEPS : WASM_NODE;
	return node;
}

/* `node --version` into out (its first line), bounded by WASM_PROBE_MS. */
static int
node_version(char *out, size_t outlen, char *err, size_t errlen)
{
	struct timespec	 ts = { 0, WASM_POLL_NS };
	char		 buf[64];
	ssize_t		 n;
	int		 p[2], st = -1, waited = 0, null;
	pid_t		 pid, r;

	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if ((null = open("/dev/null", O_RDWR)) == -1 ||
		    dup2(null, 0) == -1 || dup2(p[1], 1) == -1 ||
		    dup2(null, 2) == -1)
			_exit(127);
		(void)syscall(SYS_close_range, 3, ~0U, 0);
		execl(wasm_node(), wasm_node(), "--version", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (pid == -1) {
		close(p[0]);
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		if ((r = waitpid(pid, &st, WNOHANG)) == pid ||
		    (r == -1 && errno != EINTR))
			break;
		if (waited >= WASM_PROBE_MS) {
			(void)kill(pid, SIGKILL);
			(void)waitpid(pid, &st, 0);
			st = -1;
			break;
		}
		nanosleep(&ts, NULL);
		waited += WASM_POLL_NS / 1000000;
	}
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || n <= 1 ||
	    buf[0] != 'v') {
		snprintf(err, errlen, "%s --version failed", wasm_node());
		return -1;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strlen(buf) >= outlen) {
		snprintf(err, errlen, "%s --version: too long", wasm_node());
		return -1;
	}
	memcpy(out, buf, strlen(buf) + 1);
	return 0;
}

static struct wasm_engine	 engine;

int
wasm_probe(char *err, size_t errlen)
{
	static int	 probed, ok;
	static char	 why[WASM_WHY_MAX];

	if (!probed) {
		probed = 1;
		if (access(wasm_node(), X_OK) == -1)
			snprintf(why, sizeof(why), "%s: %s (install Node.js "
			    "%d or later)", wasm_node(), strerror(errno),
			    WASM_NODE_MAJOR_MIN);
		else if (node_version(engine.node, sizeof(engine.node), why,
		    sizeof(why)) == 0 && atoi(engine.node + 1) <
		    WASM_NODE_MAJOR_MIN)
			snprintf(why, sizeof(why), "node %s has no permission "
			    "model (Node.js %d or later)", engine.node,
			    WASM_NODE_MAJOR_MIN);
		ok = why[0] == '\0';
	}
	if (!ok)
		snprintf(err, errlen, "%s", why);
	return ok ? 0 : -1;
}

/* "sha256:<hex>" of the file at path, read in chunks. */
static int
file_sha256(const char *path, char *out, size_t outlen)
{
	struct sha256_ctx	 ctx;
	uint8_t			 md[SHA256_LEN];
	char			 hex[SHA256_HEX + 1], *buf;
	ssize_t			 n;
	int			 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	buf = xmalloc(WASM_READ_CHUNK);
	sha256_ctx_init(&ctx);
	sha256_begin(&ctx);
	while ((n = read(fd, buf, WASM_READ_CHUNK)) > 0)
		sha256_update(&ctx, buf, (size_t)n);
	sha256_end(&ctx, md);
	sha256_ctx_free(&ctx);
	free(buf);
	close(fd);
	if (n == -1)
		return -1;
	hex_encode(md, sizeof(md), hex);
	snprintf(out, outlen, "sha256:%s", hex);
	return 0;
}

const struct wasm_engine *
wasm_engine(const char *driver_dir, char *err, size_t errlen)
{
	static int	 named;
	char		 p[PATH_MAX];
	json_t		*pkg = NULL;
	json_error_t	 jerr;
	const char	*v;

	if (named)
		return &engine;
	if (wasm_probe(err, errlen) == -1)
		return NULL;
	if (xsnprintf(p, sizeof(p), "%s/%s/package.json", driver_dir,
	    WASM_PYODIDE_DIR) == -1 || (pkg = json_load_file(p, 0,
	    &jerr)) == NULL || (v = json_string_value(json_object_get(pkg,
	    "version"))) == NULL) {
		snprintf(err, errlen, "%s: no Pyodide version (make builds "
		    "it with npm ci)", p);
		json_decref(pkg);
		return NULL;
	}
	snprintf(engine.pyodide, sizeof(engine.pyodide), "%s", v);
	json_decref(pkg);
	if (xsnprintf(p, sizeof(p), "%s/%s/%s", driver_dir, WASM_PYODIDE_DIR,
	    WASM_MODULE) == -1 || file_sha256(p, engine.module_sha256,
	    sizeof(engine.module_sha256)) == -1) {
		snprintf(err, errlen, "%s: %s (make builds it with npm ci)", p,
		    strerror(errno));
		return NULL;
	}
	named = 1;
	return &engine;
}

void
wasm_argv(const char **argv, const char *extra)
{
	size_t	 n = 0;

	argv[n++] = wasm_node();
	/*
	 * Node's own wall, inside the kernel's: what Python reaches through
	 * Pyodide's JavaScript bridge (import js) is held to these paths,
	 * with no child process, no native addon, no WASI.  The worker
	 * thread runs Pyodide, so SIGINT can interrupt it.
	 */
	argv[n++] = "--experimental-permission";
	argv[n++] = "--allow-fs-read=" SANDBOX_DRIVER_DIR "/*";
	argv[n++] = "--allow-fs-read=/workspace/*";
	argv[n++] = "--allow-fs-read=/inputs/*";
	argv[n++] = "--allow-fs-read=/tmp/*";
	argv[n++] = "--allow-fs-read=/usr/share/zoneinfo/*";
	argv[n++] = "--allow-fs-write=/workspace/*";
	argv[n++] = "--allow-fs-write=/tmp/*";
	argv[n++] = "--allow-worker";
	argv[n++] = "--no-warnings";
	argv[n++] = SANDBOX_DRIVER_DIR "/" WASM_DRIVER;
	if (extra != NULL)
		argv[n++] = extra;
	argv[n] = NULL;
}

int
wasm_oneshot_argv(const char *const *cmd, const char **argv, char **oneshot,
    char *err, size_t errlen)
{
	const char	*base = strrchr(cmd[0], '/');
	size_t		 i, n;

	*oneshot = NULL;
	base = base != NULL ? base + 1 : cmd[0];
	for (i = 1; strncmp(base, "python", 6) == 0 && cmd[i] != NULL; i++) {
		if (strcmp(cmd[i], "-c") != 0)
			continue;
		if (cmd[i + 1] == NULL)
			break;
		n = strlen(cmd[i + 1]) + sizeof("--oneshot=");
		*oneshot = xmalloc(n);
		snprintf(*oneshot, n, "--oneshot=%s", cmd[i + 1]);
		wasm_argv(argv, *oneshot);
		return 0;
	}
	snprintf(err, errlen, "the wasm runtime runs Python code only: give "
	    "python3 -c CODE");
	return -1;
}

void
wasm_describe(json_t *sandbox)
{
	char	 eng[WASM_VERSION_MAX + 8];

	/* Named before any wasm session could run (session_build). */
	if (engine.module_sha256[0] == '\0' || sandbox == NULL)
		return;
	snprintf(eng, sizeof(eng), "node %s", engine.node);
	json_object_set_new(sandbox, "engine", json_string(eng));
	json_object_set_new(sandbox, "pyodide", json_string(engine.pyodide));
	json_object_set_new(sandbox, "module_sha256",
	    json_string(engine.module_sha256));
}
