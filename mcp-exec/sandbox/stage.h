/*
 * Input files: a caller names a host path; it is opened with openat2
 * beneath one of the profile's input roots (RESOLVE_BENEATH, NO_SYMLINKS,
 * NO_MAGICLINKS, NO_XDEV), must be a regular file, and is copied from that
 * descriptor into the sandbox's read-only /inputs.  Nothing is resolved
 * twice, so a path swapped after the check cannot change what is copied.
 */
#ifndef STOCKADE_STAGE_H
#define STOCKADE_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

#define STAGE_ROOTS_MAX		16

struct input_rules {
	const char	*roots[STAGE_ROOTS_MAX];	/* absolute directories */
	size_t		 nroots;
	uint64_t	 max_bytes;	/* all inputs together */
	unsigned	 max_files;
	uint64_t	 inline_max_file;	/* one inline input (decoded) */
	uint64_t	 inline_max_call;	/* a call's inline inputs */
};

struct stage {
	uint64_t	 bytes;		/* copied so far */
	unsigned	 files;
	/* The file the last successful stage_input/stage_inline wrote, as
	 * it landed in /inputs: for the call's audit record. */
	uint64_t	 last_size;
	char		 last_sha256[SHA256_HEX + 1];
};

/*
 * Copies `path` into destfd (a directory) under its base name, which is
 * written to name.  Refusals name the path and the rule broken, e.g.
 * "/srv/data/x: not beneath an input root (/srv/data, /tmp/in)" or
 * "/srv/data/link: a symlink (inputs are opened without following links)".
 */
int	stage_input(const struct input_rules *, struct stage *, const char *path,
	    int destfd, char *name, size_t namelen, char *err, size_t errlen);
/*
 * Writes len bytes the client sent as /inputs/name: the name is checked as
 * a base name is above, the size against inline_max_file and max_bytes.
 * Either way a name staged before is replaced (and its bytes given back).
 */
int	stage_inline(const struct input_rules *, struct stage *,
	    const char *name, const uint8_t *data, size_t len, int destfd,
	    char *err, size_t errlen);

#endif
