/*
 * Policy files: YAML (libyaml) loaded into a jansson tree, with the source
 * position of every node kept aside so that validation errors can name
 * file:line:column.  The YAML is untrusted input: size, depth and node
 * count are capped, aliases, anchors and non-core tags are refused, and
 * duplicate keys are an error.
 *
 * Ownership: a conf_doc owns its tree; json_t pointers obtained from it are
 * borrowed until conf_doc_free().
 */
#ifndef STOCKADE_CONF_H
#define STOCKADE_CONF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#define CONF_FILE_MAX		(1024 * 1024)	/* bytes in one policy file */
#define CONF_DEPTH_MAX		32		/* nesting of maps/sequences */
#define CONF_NODES_MAX		100000		/* scalars + collections */
#define CONF_ERRORS_MAX		20		/* errors kept per context */
#define CONF_ERROR_LEN		512

struct conf_doc;

/*
 * Parse a file or buffer.  On failure returns NULL and writes one message
 * "name:line:column: reason" into err.  Scalars: plain `~`, `null` and empty
 * become null; `true`/`false` booleans; decimal integers (optionally signed),
 * 0o/0x integers; decimal reals; everything else, and every quoted scalar,
 * a string.  A leading zero means octal, as in YAML 1.1: `0660` is 432, the
 * file mode operators mean (`0689` is an error; quote it for a string).
 * Mapping keys must be strings.
 */
struct conf_doc	*conf_doc_load_file(const char *path, char *err, size_t errlen);
struct conf_doc	*conf_doc_load_buf(const char *name, const char *buf, size_t len,
		    char *err, size_t errlen);
void		 conf_doc_free(struct conf_doc *);
json_t		*conf_doc_root(const struct conf_doc *);	/* borrowed */
const char	*conf_doc_name(const struct conf_doc *);
/* SHA-256 of the file's bytes, lowercase hex (64 chars + NUL). */
const char	*conf_doc_sha256(struct conf_doc *);
/*
 * Position of a node of this document; -1 when the node is not one of its
 * own.  null, true and false are jansson singletons shared by every tree,
 * so they have none; the getters and conf_check_keys find a member's
 * position through its key instead.
 */
int		 conf_doc_where(const struct conf_doc *, const json_t *node,
		    unsigned *line, unsigned *column);

/*
 * Validation context: collects up to CONF_ERRORS_MAX errors, each formatted
 * "name:line:column: message" from the node it is about.  Getters return
 * 1 when the key was present and valid, 0 when absent (out untouched),
 * -1 after recording an error.  A null value is absent (`key: ~` asks for
 * the default), and so is every key of an obj that is NULL or not a mapping.
 */
struct conf_ctx {
	const struct conf_doc	*doc;
	unsigned		 nerrors;
	char			 errors[CONF_ERRORS_MAX][CONF_ERROR_LEN];
};

void	conf_ctx_init(struct conf_ctx *, const struct conf_doc *);
void	conf_error(struct conf_ctx *, const json_t *node, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* Errors for keys of obj not listed in allowed (NULL-terminated). */
int	conf_check_keys(struct conf_ctx *, const json_t *obj,
	    const char *const allowed[]);
/* Error when obj is not an object (named by what, e.g. "rotation"). */
int	conf_expect_object(struct conf_ctx *, const json_t *node, const char *what);
int	conf_get_object(struct conf_ctx *, const json_t *obj, const char *key,
	    json_t **out);
int	conf_get_array(struct conf_ctx *, const json_t *obj, const char *key,
	    json_t **out);
int	conf_get_string(struct conf_ctx *, const json_t *obj, const char *key,
	    const char **out);
int	conf_get_bool(struct conf_ctx *, const json_t *obj, const char *key,
	    int *out);
int	conf_get_int(struct conf_ctx *, const json_t *obj, const char *key,
	    int64_t min, int64_t max, int64_t *out);
/* One of choices (NULL-terminated); *out is the index. */
int	conf_get_enum(struct conf_ctx *, const json_t *obj, const char *key,
	    const char *const choices[], int *out);
/* Human sizes: an integer of bytes or a string "64K", "8M", "1G" (powers of 1024). */
int	conf_get_size(struct conf_ctx *, const json_t *obj, const char *key,
	    uint64_t min, uint64_t max, uint64_t *out);
/*
 * A list of users, each a name (resolved now: a reload picks up changes)
 * or a uid, into out[max]; returns how many were kept.
 */
size_t	conf_users(struct conf_ctx *, const json_t *arr, const char *what,
	    uid_t *out, size_t max);
/*
 * Print every error to stderr, one per line; returns the count.  The lines
 * are also kept for conf_errors_text.
 */
unsigned conf_ctx_report(const struct conf_ctx *);

/*
 * What the loaders of this thread reported since conf_errors_clear, as
 * the text printed (file:line:column: ... lines), so a daemon can put it
 * in its policy_load record.  Bounded: past CONF_ERRORS_TEXT_MAX it ends
 * in CONF_ERRORS_TEXT_CUT.  "" when nothing was reported.
 */
#define CONF_ERRORS_TEXT_MAX	2048
#define CONF_ERRORS_TEXT_CUT	"... (more in the log)"
void	 conf_errors_clear(void);
const char *conf_errors_text(void);
/* A loader's error outside a context: printed and kept as above. */
void	 conf_report(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));
/* A rules file loaded whole; NULL after conf_report of the error. */
struct conf_doc	*conf_doc_load_report(const char *path);
/* The end of a load: reports ctx's errors, frees doc; -1 when any. */
int		 conf_ctx_finish(struct conf_ctx *, struct conf_doc *);

#endif
