/*
 * Giving privilege up: resource limits, capabilities (effective,
 * permitted, inheritable, ambient and the bounding set) and
 * no_new_privs.  Child side; the order of calls is spawn.c's checklist.
 */
#ifndef STOCKADE_SANDBOX_PRIVS_H
#define STOCKADE_SANDBOX_PRIVS_H

#include <stddef.h>

struct sandbox_limits;

/* While uid changes: keep capabilities (dropped by privs_drop_caps). */
int	privs_keep_caps(char *err, size_t errlen);
/* After the uid change: effective = permitted again, for the setup steps. */
int	privs_raise_effective(char *err, size_t errlen);
int	privs_rlimits(const struct sandbox_limits *, char *err, size_t errlen);
/* Every capability, in every set, for good. */
int	privs_drop_caps(char *err, size_t errlen);
int	privs_no_new_privs(char *err, size_t errlen);
/*
 * SIGKILL when the thread that forked us exits (mcp-exec is single-threaded:
 * when mcp-exec does), armed again after every credential change, which
 * clears it.  parent is a pidfd of mcp-exec: if it died before the arming,
 * no signal would come, so that is an error too.
 */
int	privs_die_with_parent(int parent, char *err, size_t errlen);

#endif
