/*
 * The run_command allowlist (rules/commands.yaml): a name maps to an
 * absolute path and to rules every argument must meet.  Nothing is looked
 * up in PATH and no shell is involved.
 *
 * Ownership: a struct commands owns its compiled rules.
 */
#ifndef STOCKADE_COMMANDS_H
#define STOCKADE_COMMANDS_H

#include <stddef.h>
#include <jansson.h>

#define COMMANDS_FILE		"commands.yaml"
#define COMMANDS_MAX		64
#define COMMAND_NAME_MAX	32
#define COMMAND_ARGS_MAX	64	/* the most any rule may allow */
#define COMMAND_ARG_LEN_MAX	4096
#define COMMAND_DESC_MAX	200	/* one line: it goes in tools/list */
#define COMMAND_PATTERN_MAX	1024	/* quoted back when an argument fails */

struct commands;

/* NULL after printing file:line:column errors; a missing file is empty. */
struct commands	*commands_load(const char *rules_dir);
void		 commands_free(struct commands *);
/* The names, for the tool's input schema enum (new reference). */
json_t		*commands_names(const struct commands *);
size_t		 commands_count(const struct commands *);
/*
 * Each command as the agent should see it (new reference):
 * [{name, description, max_args, arg_pattern?}].
 */
json_t		*commands_describe(const struct commands *);
/*
 * Checks args (nargs strings) for the named command.  Returns the
 * absolute path (borrowed) or NULL with err naming the argument and what
 * the rule allows.
 */
const char	*commands_check(const struct commands *, const char *name,
		    const char *const args[], size_t nargs, char *err,
		    size_t errlen);

#endif
