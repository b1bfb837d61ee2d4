/*
 * Artifacts: the files a run leaves in its workspace that the caller may
 * take away.  The workspace belongs to sandboxed code, so everything in it
 * is hostile: entries are opened relative to a directory descriptor without
 * following symlinks, only regular files with one link are taken, their
 * type comes from their content (magic bytes, then text heuristics), never
 * from their name, and every count and size is capped.
 *
 * Ownership: JSON arrays returned are new references (caller decrefs).
 */
#ifndef STOCKADE_ARTIFACTS_H
#define STOCKADE_ARTIFACTS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

enum artifact_type {
	ART_PNG,
	ART_JPEG,
	ART_SVG,
	ART_CSV,
	ART_JSON,
	ART_TXT,
	ART_HTML,
	ART_PDF,
	ART_NPY,
	ART_NPZ,
	ART_PARQUET,
	ART_XLSX,
	ART_ZIP,
	ART_MD,
	ART_NTYPES
};

#define ARTIFACT_DEPTH_MAX	8	/* subdirectories walked */
#define ARTIFACT_NAME_MAX	255	/* bytes in a relative name */
#define ARTIFACT_SNIFF_LEN	4096	/* bytes read to decide a type */

struct artifact_rules {
	unsigned	types;		/* bit (1 << ART_*) per allowed type */
	uint64_t	max_file;	/* bytes per file */
	uint64_t	max_total;	/* bytes in all */
	unsigned	max_count;	/* files */
};

/* "png", "jpeg", … -> ART_*; -1 when unknown. */
int		 artifact_type_parse(const char *);
const char	*artifact_type_name(enum artifact_type);
const char	*artifact_mime(enum artifact_type);
/* The type of a file from its first bytes and whether it was all of it;
 * -1 for content of no allowed kind (binary, unknown). */
int		 artifact_sniff(const uint8_t *p, size_t len, int complete);
/* Breaks the ties content leaves open with the name: text named *.md is
 * md; a zip whose entries did not show (only its start was read) named
 * *.xlsx or *.npz is that.  Returns t otherwise. */
int		 artifact_refine(int t, const uint8_t *p, size_t len,
		    const char *name);
/* "png, jpeg, ..." for messages. */
void		 artifact_type_list(char *buf, size_t len);

/*
 * Walks the directory dirfd (opened by the caller with O_DIRECTORY |
 * O_NOFOLLOW) recursively.  Each accepted file is copied into outfd (a
 * directory, subdirectories created as needed) and described in *found as
 * {name, uri, mime, size, sha256} with uri = uri_prefix + name; every entry
 * not taken is in *skipped as {name, size, reason}.  known (may be NULL) maps
 * names to {sha256} the caller already holds: a file with the same content
 * counts against the caps but is neither copied nor listed.  Returns 0, or
 * -1 with err when the walk itself failed (I/O on our side).
 */
int		 artifacts_collect(int dirfd, const struct artifact_rules *,
		    int outfd, const json_t *known, const char *uri_prefix,
		    json_t **found, json_t **skipped, char *err,
		    size_t errlen);

#endif
