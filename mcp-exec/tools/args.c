/*
 * The tools' argument tables, and the one parser that checks a call's
 * arguments against them: names, JSON types, required, counts, lengths
 * and static ranges, all before a handler sees anything.  What depends on
 * the profile (timeout maximum, input roots and sizes) is checked once
 * the profile is known, from the same fields schema.c shows.  The
 * arguments are the client's; nothing here trusts them.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "sandbox/stage.h"
#include "sessions/session.h"

#define E(f)	offsetof(struct exec_args, f)
#define S(f)	offsetof(struct session_args, f)

const struct arg_spec args_execute_python[] = {
	{ "code", ARG_STRING, ARG_REQUIRED | ARG_NUL, 0, 0, 0, BOUND_CODE,
	    E(code), "Python source to run" },
	{ "timeout_ms", ARG_INTEGER, 0, 1, 0, 0, BOUND_TIMEOUT,
	    E(timeout_ms), "wall clock limit in milliseconds" },
	{ "session_id", ARG_STRING, 0, 0, 0, 0, BOUND_NONE, E(session_id),
	    "a session to resume, from an earlier result" },
	{ "files", ARG_STRINGS, 0, 0, 0, TOOL_FILES_MAX, BOUND_ROOTS,
	    E(files), NULL },
	{ "inline_files", ARG_INLINE_FILES, 0, 0, 0, TOOL_FILES_MAX,
	    BOUND_INLINE, E(inline_files), NULL },
	{ "profile", ARG_STRING, 0, 0, 0, 0, BOUND_NONE, E(profile), NULL },
	{ NULL }
};

const struct arg_spec args_run_command[] = {
	{ "command", ARG_STRING, ARG_REQUIRED, 0, 0, 0, BOUND_NONE,
	    E(command), "the command's name in the allowlist" },
	{ "args", ARG_STRINGS, 0, 0, 0, COMMAND_ARGS_MAX, BOUND_NONE,
	    E(args), "its arguments, each passed as it is (no shell)" },
	{ "files", ARG_STRINGS, 0, 0, 0, TOOL_FILES_MAX, BOUND_ROOTS,
	    E(files), NULL },
	{ "inline_files", ARG_INLINE_FILES, 0, 0, 0, TOOL_FILES_MAX,
	    BOUND_INLINE, E(inline_files), NULL },
	{ "timeout_ms", ARG_INTEGER, 0, 1, 0, 0, BOUND_TIMEOUT,
	    E(timeout_ms), "wall clock limit in milliseconds" },
	{ "session_id", ARG_STRING, 0, 0, 0, 0, BOUND_NONE, E(session_id),
	    "a session (from execute_python) to run in, seeing its "
	    "/workspace" },
	{ "profile", ARG_STRING, 0, 0, 0, 0, BOUND_NONE, E(profile), NULL },
	{ NULL }
};

const struct arg_spec args_close_session[] = {
	{ "session_id", ARG_STRING, ARG_REQUIRED, 0, 0, 0, BOUND_NONE,
	    S(session_id), "the session to end" },
	{ NULL }
};

const struct arg_spec args_list_sessions[] = {
	{ NULL }
};

const struct arg_spec args_list_files[] = {
	{ "session_id", ARG_STRING, ARG_REQUIRED, 0, 0, 0, BOUND_NONE,
	    S(session_id), "the session, from an earlier result" },
	{ "path", ARG_STRING, 0, 0, 0, 0, BOUND_NONE, S(path), "a directory "
	    "beneath /workspace; the workspace itself by default" },
	{ NULL }
};

const struct arg_spec args_read_file[] = {
	{ "session_id", ARG_STRING, ARG_REQUIRED, 0, 0, 0, BOUND_NONE,
	    S(session_id), "the session, from an earlier result" },
	{ "path", ARG_STRING, ARG_REQUIRED, 0, 0, 0, BOUND_NONE, S(path),
	    "a file beneath /workspace" },
	{ "offset", ARG_INTEGER, 0, 0, 0, 0, BOUND_NONE, S(offset),
	    "the byte to start at (next_offset of the previous page)" },
	{ "length", ARG_INTEGER, 0, 1, FILES_READ_MAX, 0, BOUND_NONE,
	    S(length), "at most this many bytes" },
	{ NULL }
};

/*
 * Characters, as JSON Schema's maxLength counts them: jansson's strings
 * are valid UTF-8, so every byte that does not continue a character
 * starts one.  Byte limits (a file name's, the code's) are values,
 * checked where they apply.
 */
static size_t
chars(const char *s, size_t len)
{
	size_t	 i, n = 0;

	for (i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

/* A string as the table allows it; -1 with err. */
static int
string_ok(const json_t *v, const char *what, size_t i, int indexed,
    unsigned flags, size_t max, char *err, size_t errlen)
{
	char	 at[24] = "";

	if (indexed)
		snprintf(at, sizeof(at), "[%zu]", i);
	if (!json_is_string(v)) {
		snprintf(err, errlen, "arguments.%s%s: a string", what, at);
		return -1;
	}
	/* Used as C strings below: a NUL would cut what is checked short
	 * of what is used. */
	if (!(flags & ARG_NUL) && strlen(json_string_value(v)) !=
	    json_string_length(v)) {
		snprintf(err, errlen, "arguments.%s%s: a string without NUL "
		    "characters", what, at);
		return -1;
	}
	if (max > 0 && chars(json_string_value(v), json_string_length(v)) >
	    max) {
		snprintf(err, errlen, "arguments.%s%s: longer than %zu "
		    "characters", what, at, max);
		return -1;
	}
	return 0;
}

/* One {name, content, encoding} of inline_files. */
static int
inline_file(const json_t *v, const char *what, size_t i,
    struct arg_file *f, char *err, size_t errlen)
{
	const char	*key, *enc = NULL;
	const json_t	*x;
	char		 sub[96];

	if (!json_is_object(v)) {
		snprintf(err, errlen, "arguments.%s[%zu]: an object {name, "
		    "content, encoding}", what, i);
		return -1;
	}
	json_object_foreach((json_t *)v, key, x) {
		if (strcmp(key, "name") != 0 && strcmp(key, "content") != 0 &&
		    strcmp(key, "encoding") != 0) {
			snprintf(err, errlen, "arguments.%s[%zu].%.64s: "
			    "unknown property", what, i, key);
			return -1;
		}
	}
	snprintf(sub, sizeof(sub), "%s[%zu].name", what, i);
	if (string_ok(x = json_object_get(v, "name"), sub, 0, 0, 0,
	    STAGE_NAME_MAX, err, errlen) == -1)
		return -1;
	f->name = json_string_value(x);
	snprintf(sub, sizeof(sub), "%s[%zu].content", what, i);
	if (string_ok(x = json_object_get(v, "content"), sub, 0, 0, ARG_NUL,
	    0, err, errlen) == -1)
		return -1;
	f->content = json_string_value(x);
	f->clen = json_string_length(x);
	if ((x = json_object_get(v, "encoding")) != NULL &&
	    ((enc = json_string_value(x)) == NULL || (strcmp(enc, "utf-8") !=
	    0 && strcmp(enc, "base64") != 0))) {
		snprintf(err, errlen, "arguments.%s[%zu].encoding: \"utf-8\" "
		    "or \"base64\"", what, i);
		return -1;
	}
	f->base64 = enc != NULL && strcmp(enc, "base64") == 0;
	return 0;
}

/* An array of the table's kind into field. */
static int
array_arg(const struct arg_spec *a, const json_t *v, void *field,
    char *err, size_t errlen)
{
	struct arg_strs	*ss = field;
	struct arg_files *fs = field;
	size_t		 i, max = a->max_items, room;
	const json_t	*x;

	/* Never past the field's room, whatever the table says. */
	room = a->type == ARG_INLINE_FILES ? TOOL_FILES_MAX : ARG_ITEMS_MAX;
	if (max > room)
		max = room;
	if (!json_is_array(v) || json_array_size(v) > max) {
		snprintf(err, errlen, "arguments.%s: an array of at most %zu "
		    "items", a->name, max);
		return -1;
	}
	json_array_foreach(v, i, x) {
		if (a->type == ARG_INLINE_FILES) {
			if (inline_file(x, a->name, i, &fs->v[i], err,
			    errlen) == -1)
				return -1;
			fs->n++;
			continue;
		}
		/* Old clients sent contents in files: say where they go. */
		if (a->bound == BOUND_ROOTS && json_is_object(x)) {
			snprintf(err, errlen, "arguments.%s[%zu]: a host path; "
			    "send a file's contents in inline_files as {name, "
			    "content, encoding}", a->name, i);
			return -1;
		}
		if (string_ok(x, a->name, i, 1, a->flags, 0, err,
		    errlen) == -1)
			return -1;
		ss->v[ss->n++] = json_string_value(x);
	}
	return 0;
}

static int
integer_arg(const struct arg_spec *a, const json_t *v, struct arg_int *n,
    char *err, size_t errlen)
{
	if (!json_is_integer(v) || json_integer_value(v) < a->min ||
	    (a->max > 0 && json_integer_value(v) > a->max)) {
		if (a->max > 0)
			snprintf(err, errlen, "arguments.%s: an integer from "
			    "%lld to %lld", a->name, (long long)a->min,
			    (long long)a->max);
		else
			snprintf(err, errlen, "arguments.%s: an integer, %lld "
			    "or more", a->name, (long long)a->min);
		return -1;
	}
	n->set = 1;
	n->v = json_integer_value(v);
	return 0;
}

int
args_parse(const struct arg_spec *spec, const json_t *args,
    size_t code_max, void *out, char *err, size_t errlen)
{
	const struct arg_spec	*a;
	struct arg_str		*s;
	const char		*key;
	const json_t		*v;
	void			*field;

	json_object_foreach((json_t *)args, key, v) {
		for (a = spec; a->name != NULL; a++)
			if (strcmp(key, a->name) == 0)
				break;
		/* Usually a client's typo: named, so that it can tell. */
		if (a->name == NULL) {
			snprintf(err, errlen, "arguments.%.64s: unknown "
			    "argument", key);
			return -1;
		}
	}
	for (a = spec; a->name != NULL; a++) {
		field = (char *)out + a->at;
		if ((v = json_object_get(args, a->name)) == NULL) {
			if (a->flags & ARG_REQUIRED) {
				snprintf(err, errlen, "arguments.%s: %s is "
				    "required", a->name, a->type ==
				    ARG_INTEGER ? "an integer" : a->type ==
				    ARG_STRING ? "a string" : "an array");
				return -1;
			}
			continue;
		}
		switch (a->type) {
		case ARG_STRING:
			if (string_ok(v, a->name, 0, 0, a->flags, a->bound ==
			    BOUND_CODE ? code_max : 0, err, errlen) == -1)
				return -1;
			s = field;
			s->v = json_string_value(v);
			s->len = json_string_length(v);
			break;
		case ARG_INTEGER:
			if (integer_arg(a, v, field, err, errlen) == -1)
				return -1;
			break;
		case ARG_STRINGS:
		case ARG_INLINE_FILES:
			if (array_arg(a, v, field, err, errlen) == -1)
				return -1;
			break;
		}
	}
	return 0;
}

void
exec_args_free(struct exec_args *x)
{
	size_t	 i;

	for (i = 0; i < x->inline_files.n; i++) {
		free(x->inline_files.v[i].data);
		x->inline_files.v[i].data = NULL;
	}
}
