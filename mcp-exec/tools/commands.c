/*
 * Loads rules/commands.yaml and checks run_command's arguments.  The file
 * is operator input, validated like every policy file; arguments come
 * from the agent and must each match their command's pattern (PCRE2)
 * over the whole argument, whatever anchors the operator wrote.
 */
#define PCRE2_CODE_UNIT_WIDTH	8

#include <errno.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "conf.h"
#include "log.h"
#include "util.h"

#define PATTERN_MATCH_LIMIT	100000	/* backtracking steps per argument */
/*
 * An allowlist entry means "this argument, exactly": the match starts at
 * the first byte and ends at the last (ANCHORED, ENDANCHORED), and `$`
 * does not also match before a final newline (DOLLAR_ENDONLY), so
 * "-l\n" never passes '^-l$'.  (?m) cannot reopen that: ENDANCHORED
 * holds for the whole match, not for `$`.
 */
#define ARG_COMPILE_OPTS	(PCRE2_UTF | PCRE2_ANCHORED | \
	PCRE2_ENDANCHORED | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_BACKSLASH_C)

struct command {
	char		 name[COMMAND_NAME_MAX + 1];
	char		 path[PATH_MAX];
	char		 desc[COMMAND_DESC_MAX + 1];
	char		 pattern[COMMAND_PATTERN_MAX + 1];	/* as written */
	unsigned	 max_args;
	pcre2_code	*arg_re;	/* NULL: any argument */
};

struct commands {
	struct command	 cmd[COMMANDS_MAX];
	size_t		 n;
};

static int
name_ok(const char *s)
{
	size_t	 i;

	for (i = 0; s[i] != '\0'; i++)
		if (i >= COMMAND_NAME_MAX || !((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return 0;
	return i > 0;
}

static void
load_command(struct conf_ctx *ctx, const char *name, const json_t *o,
    struct command *c)
{
	static const char *const keys[] = { "path", "description", "max_args",
	    "arg_pattern", NULL };
	const char	*s;
	int64_t		 i;
	int		 rc;
	PCRE2_SIZE	 off;
	PCRE2_UCHAR	 msg[256];

	snprintf(c->name, sizeof(c->name), "%s", name);
	c->max_args = 8;
	if (conf_expect_object(ctx, o, name) == -1)
		return;
	conf_check_keys(ctx, o, keys);
	if (conf_get_string(ctx, o, "description", &s) == 1 &&
	    (strchr(s, '\n') != NULL || xsnprintf(c->desc, sizeof(c->desc),
	    "%s", s) == -1))
		conf_error(ctx, json_object_get(o, "description"), "%s: "
		    "description: one line of at most %d bytes", name,
		    COMMAND_DESC_MAX);
	if (conf_get_string(ctx, o, "path", &s) != 1 || s[0] != '/' ||
	    xsnprintf(c->path, sizeof(c->path), "%s", s) == -1)
		conf_error(ctx, json_object_get(o, "path") ?
		    json_object_get(o, "path") : o, "%s: path: an absolute "
		    "path is required (there is no PATH lookup)", name);
	if (conf_get_int(ctx, o, "max_args", 0, COMMAND_ARGS_MAX, &i) == 1)
		c->max_args = (unsigned)i;
	if (conf_get_string(ctx, o, "arg_pattern", &s) == 1 &&
	    xsnprintf(c->pattern, sizeof(c->pattern), "%s", s) == -1)
		conf_error(ctx, json_object_get(o, "arg_pattern"), "%s: "
		    "arg_pattern: at most %d bytes", name, COMMAND_PATTERN_MAX);
	else if (c->pattern[0] != '\0' &&
	    (c->arg_re = pcre2_compile((PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED,
	    ARG_COMPILE_OPTS, &rc, &off, NULL)) == NULL) {
		pcre2_get_error_message(rc, msg, sizeof(msg));
		conf_error(ctx, json_object_get(o, "arg_pattern"), "%s: "
		    "arg_pattern at offset %zu: %s", name, (size_t)off, msg);
	}
}

struct commands *
commands_load(const char *rules_dir)
{
	static const char *const top[] = { "commands", NULL };
	struct commands	*cs = xcalloc(1, sizeof(*cs));
	struct conf_doc	*doc;
	struct conf_ctx	 ctx;
	char		 path[PATH_MAX], err[CONF_ERROR_LEN];
	const char	*name;
	json_t		*root, *list, *v;

	if (xsnprintf(path, sizeof(path), "%s/%s", rules_dir, COMMANDS_FILE) ==
	    -1 || access(path, F_OK) == -1)
		return cs;
	if ((doc = conf_doc_load_file(path, err, sizeof(err))) == NULL) {
		conf_report("%s", err);
		free(cs);
		return NULL;
	}
	conf_ctx_init(&ctx, doc);
	root = conf_doc_root(doc);
	if (conf_expect_object(&ctx, root, COMMANDS_FILE) == 0) {
		conf_check_keys(&ctx, root, top);
		if (conf_get_object(&ctx, root, "commands", &list) == 1) {
			json_object_foreach(list, name, v) {
				if (!name_ok(name)) {
					conf_error(&ctx, v, "command name '%s': "
					    "lower-case letters, digits, '-' and "
					    "'_', at most %d", name,
					    COMMAND_NAME_MAX);
					continue;
				}
				if (cs->n == COMMANDS_MAX) {
					conf_error(&ctx, v, "more than %d "
					    "commands", COMMANDS_MAX);
					break;
				}
				load_command(&ctx, name, v, &cs->cmd[cs->n++]);
			}
		}
	}
	if (ctx.nerrors) {
		conf_ctx_report(&ctx);
		conf_doc_free(doc);
		commands_free(cs);
		return NULL;
	}
	conf_doc_free(doc);
	return cs;
}

void
commands_free(struct commands *cs)
{
	size_t	 i;

	if (cs == NULL)
		return;
	for (i = 0; i < cs->n; i++)
		pcre2_code_free(cs->cmd[i].arg_re);
	free(cs);
}

json_t *
commands_names(const struct commands *cs)
{
	json_t	*names = json_array();
	size_t	 i;

	for (i = 0; i < cs->n; i++)
		json_array_append_new(names, json_string(cs->cmd[i].name));
	return names;
}

size_t
commands_count(const struct commands *cs)
{
	return cs->n;
}

json_t *
commands_describe(const struct commands *cs)
{
	json_t	*list = json_array(), *o;
	size_t	 i;

	for (i = 0; i < cs->n; i++) {
		o = json_pack("{s:s, s:s, s:i}", "name", cs->cmd[i].name,
		    "description", cs->cmd[i].desc, "max_args",
		    (int)cs->cmd[i].max_args);
		if (o != NULL && cs->cmd[i].arg_re != NULL)
			json_object_set_new(o, "arg_pattern",
			    json_string(cs->cmd[i].pattern));
		json_array_append_new(list, o);
	}
	return list;
}

static int
arg_matches(const struct command *c, const char *arg, size_t len)
{
	pcre2_match_data	*md;
	pcre2_match_context	*mc;
	int			 rc;

	if (c->arg_re == NULL)
		return 1;
	md = pcre2_match_data_create_from_pattern(c->arg_re, NULL);
	mc = pcre2_match_context_create(NULL);
	if (md == NULL || mc == NULL)
		fatalx("pcre2: out of memory");
	pcre2_set_match_limit(mc, PATTERN_MATCH_LIMIT);
	rc = pcre2_match(c->arg_re, (PCRE2_SPTR)arg, len, 0, 0, md, mc);
	pcre2_match_data_free(md);
	pcre2_match_context_free(mc);
	/* A limit reached is a refusal, never a pass. */
	return rc > 0;
}

const char *
commands_check(const struct commands *cs, const char *name,
    const char *const args[], size_t nargs, char *err, size_t errlen)
{
	const struct command	*c = NULL;
	size_t			 i, len;

	for (i = 0; i < cs->n; i++)
		if (strcmp(cs->cmd[i].name, name) == 0)
			c = &cs->cmd[i];
	if (c == NULL) {
		snprintf(err, errlen, "command '%.32s' is not in the allowlist",
		    name);
		return NULL;
	}
	if (nargs > c->max_args) {
		snprintf(err, errlen, "%s takes at most %u arguments, not %zu",
		    c->name, c->max_args, nargs);
		return NULL;
	}
	for (i = 0; i < nargs; i++) {
		len = strlen(args[i]);
		if (len > COMMAND_ARG_LEN_MAX ||
		    !arg_matches(c, args[i], len)) {
			/* Say what would pass: the agent can only guess
			 * otherwise, and the rule is no secret from it. */
			snprintf(err, errlen, "%s: argument %zu ('%.64s%s') is "
			    "not allowed: each argument must match the "
			    "command's arg_pattern %s as a "
			    "whole%s%s%s", c->name, i, args[i],
			    len > 64 ? "..." : "",
			    c->pattern, c->desc[0] ? " (" : "", c->desc,
			    c->desc[0] ? ")" : "");
			return NULL;
		}
	}
	return c->path;
}
