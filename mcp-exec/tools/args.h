/*
 * The tools' arguments: one table per tool of names, types and limits.
 * schema.c shows the table in tools/list and args_parse checks a call
 * against the same table, so the two cannot disagree; a handler takes the
 * typed struct args_parse fills, never the JSON.  Arguments are the
 * client's.
 */
#ifndef STOCKADE_TOOLS_ARGS_H
#define STOCKADE_TOOLS_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "commands.h"
#include "tools.h"

#define ARG_ITEMS_MAX	COMMAND_ARGS_MAX	/* the longest array */

enum arg_type {
	ARG_STRING,
	ARG_INTEGER,
	ARG_STRINGS,		/* an array of strings */
	ARG_INLINE_FILES,	/* an array of {name, content, encoding} */
};

/* A limit that is configuration, not a constant of the table. */
enum arg_bound {
	BOUND_NONE,
	BOUND_CODE,	/* length: server.max_code_bytes (characters here,
			 * bytes in exec.c) */
	BOUND_TIMEOUT,	/* the profile's timeout.max_ms and default_ms,
			 * known with the session (tools.c, command.c) */
	BOUND_ROOTS,	/* host paths beneath the profile's inputs.roots */
	BOUND_INLINE,	/* the profile's inputs.inline_max_* */
};

#define ARG_REQUIRED	0x1
#define ARG_NUL		0x2	/* a counted string that may hold NUL */

struct arg_spec {
	const char	*name;
	enum arg_type	 type;
	unsigned	 flags;
	json_int_t	 min, max;	/* ARG_INTEGER; max 0: no maximum */
	size_t		 max_items;	/* arrays, at most ARG_ITEMS_MAX */
	enum arg_bound	 bound;
	size_t		 at;		/* offsetof its field in the request */
	const char	*desc;		/* NULL: schema.c words it */
};

/* The fields args_parse fills: strings are borrowed from the arguments
 * (valid while the request is), v NULL when not given. */
struct arg_str {
	const char	*v;
	size_t		 len;
};
struct arg_int {
	int		 set;
	json_int_t	 v;
};
struct arg_strs {
	const char	*v[ARG_ITEMS_MAX];
	size_t		 n;
};
struct arg_file {
	const char	*name;
	const char	*content;	/* as sent */
	size_t		 clen;
	int		 base64;	/* else UTF-8 */
	uint8_t		*data;		/* decoded by inputs_check, owned */
	size_t		 len;
};
struct arg_files {
	struct arg_file	 v[TOOL_FILES_MAX];
	size_t		 n;
};

/* execute_python's and run_command's. */
struct exec_args {
	struct arg_str	 code;
	struct arg_str	 command;
	struct arg_strs	 args;
	struct arg_int	 timeout_ms;
	struct arg_str	 session_id;
	struct arg_str	 profile;
	struct arg_strs	 files;
	struct arg_files inline_files;
};

/* close_session's, list_sessions', list_files' and read_file's. */
struct session_args {
	struct arg_str	 session_id;
	struct arg_str	 path;
	struct arg_int	 offset;
	struct arg_int	 length;
};

/* Each ends with a { NULL } entry. */
extern const struct arg_spec	args_execute_python[], args_run_command[],
				args_close_session[], args_list_sessions[],
				args_list_files[], args_read_file[];

/*
 * Checks args (an object) against spec into out (zeroed).  -1 with
 * err naming the argument, e.g. "arguments.files[2]: a string (a host
 * path ...)".  code_max: BOUND_CODE's length.
 */
int	args_parse(const struct arg_spec *, const json_t *args,
	    size_t code_max, void *out, char *err, size_t errlen);
/* What inputs_check decoded. */
void	exec_args_free(struct exec_args *);

#endif
