/*
 * Input files: a caller names a host path, opened with openat2 beneath
 * one of the profile's input roots (RESOLVE_BENEATH, NO_SYMLINKS,
 * NO_MAGICLINKS, NO_XDEV), a regular file copied from that descriptor
 * into the sandbox's read-only /inputs; or sends the bytes under a name.
 * Nothing is resolved twice, so a path swapped after the check cannot
 * change what is copied.
 */
#ifndef STOCKADE_STAGE_H
#define STOCKADE_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

#define STAGE_ROOTS_MAX		16
#define STAGE_NAME_MAX		255	/* an input's name (NAME_MAX on Linux) */

struct input_rules {
	const char	*roots[STAGE_ROOTS_MAX];	/* absolute directories */
	size_t		 nroots;
	uint64_t	 max_bytes;	/* all inputs together */
	unsigned	 max_files;
	uint64_t	 inline_max_file;	/* one inline input (decoded) */
	uint64_t	 inline_max_call;	/* a call's inline inputs */
};

/* What a sandbox's /inputs holds, for the budgets. */
struct stage {
	uint64_t	 bytes;
	unsigned	 files;
};

/*
 * One input of a call: a host path, or bytes the client sent under a
 * name.  The caller fills path, or name, data and len (borrowed until
 * stage_release); the stage fills the rest.
 */
struct stage_item {
	const char	*path;		/* a host path, or NULL */
	const char	*name;		/* its name in /inputs (a path's base
					 * name, set by stage_check) */
	const uint8_t	*data;		/* without path: the bytes */
	size_t		 len;
	/* stage_plan's, for stage_commit. */
	int		 fd;		/* the host file, opened once */
	int		 had;		/* replaces an input staged before, */
	uint64_t	 old;		/* of this many bytes */
	/* As it landed in /inputs (stage_commit), for the audit trail. */
	uint64_t	 size;
	char		 sha256[SHA256_HEX + 1];
};

/*
 * A call's inputs are checked whole before any is written, and written
 * all or none.  stage_check: what the rules alone decide, before a file
 * is opened: each path absolute, without "..", beneath an input root;
 * each name (a path's base name) a plain, visible file name, none twice;
 * inline sizes (inline_max_file, inline_max_call); the count and the
 * inline bytes against max_files and max_bytes.  -1 with err naming the
 * item and the rule, e.g. "/srv/data/x: not beneath an input root
 * (/srv/data, /tmp/in)".
 */
int	stage_check(const struct input_rules *, struct stage_item *, size_t n,
	    char *err, size_t errlen);
/*
 * Then against destfd (a sandbox's /inputs) and what st says it holds:
 * stage_check again, each host file opened once beneath its root with
 * openat2 (no links, no mount crossing) and found a regular file, and
 * the budgets counted with the inputs these replace given back.  Nothing
 * is written; stage_release closes what was opened, either way.
 */
int	stage_plan(const struct input_rules *, const struct stage *, int destfd,
	    struct stage_item *, size_t n, char *err, size_t errlen);
/*
 * Writes the planned items, read-only, all or none: each to a temporary
 * name first, then renamed over its name (a name staged before is
 * replaced).  A failure on the way (I/O, a host file that grew past the
 * budget) removes what this call wrote.  Updates st.
 */
int	stage_commit(const struct input_rules *, struct stage *, int destfd,
	    struct stage_item *, size_t n, char *err, size_t errlen);
void	stage_release(struct stage_item *, size_t n);

#endif
