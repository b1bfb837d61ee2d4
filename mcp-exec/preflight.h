/*
 * Before mcp-exec serves (and for `mcp-exec -n`): every path it will need
 * is there and usable, so that a broken install fails at start with a
 * message naming the path, never at the first tool call.  Also where an
 * unset driver_dir is found: beside the program, installed or in a build
 * tree.
 */
#ifndef STOCKADE_PREFLIGHT_H
#define STOCKADE_PREFLIGHT_H

#include <stddef.h>

#include "sessions/profile.h"

/* The interpreter every session's driver runs on (inside the sandbox). */
#define PREFLIGHT_PYTHON	"/usr/bin/python3"
#define DRIVER_FILE		"driver.py"
/* Relative to the directory of the running program. */
#define DRIVER_INSTALLED	"../share/stockade/driver"	/* PREFIX/sbin */
#define DRIVER_BUILD_TREE	"share/stockade/driver"		/* build/ */

/*
 * Fills conf->server.driver_dir when the rules leave it unset: the first
 * of DRIVER_INSTALLED and DRIVER_BUILD_TREE beside /proc/self/exe that
 * holds DRIVER_FILE.  -1 with err when there is none.
 */
int	preflight_driver(struct mcpexec_conf *, char *err, size_t errlen);
/*
 * Checks the driver, the interpreter, state_dir, the cgroup hierarchy, the
 * daemons' socket directories and the profile's input roots.  Problems
 * are printed to stderr ("mcp-exec: PATH: what is wrong"); notes (a
 * daemon not listening yet) too, with verbose.  Returns the number of
 * problems: 0 means mcp-exec can serve.
 */
int	preflight_check(const struct mcpexec_conf *, const struct profile *,
	    int verbose);
/*
 * state_dir's existing ancestors must be searchable by other users (the
 * sandboxes' uids walk down to their own directories).
 */
int	preflight_state_dir(const char *state_dir, char *err, size_t errlen);

#endif
