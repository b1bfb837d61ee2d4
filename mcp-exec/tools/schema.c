/*
 * The tools as tools/list shows them: input and output schemas and
 * annotations.  An input schema is made from the tool's argument table
 * (args.c), the one args_parse checks calls against, with the limits that
 * are configuration taken from the same fields the checks read.  Input
 * schemas stay plain: every object typed, its properties listed, no
 * additional ones, no unions, so that every client's converter takes them.
 */
#include <stdio.h>

#include "args.h"
#include "authz.h"
#include "commands.h"
#include "sessions/session.h"
#include "sessions/server.h"
#include "tools.h"

#define TOOL_DESC_MAX	4096	/* one tool's description */
#define TOOL_FACTS_MAX	2048	/* the profile or command list in it */

/* What the sandbox's network is, as the profile says: never more. */
static const char *
network_phrase(const struct profile *p)
{
	static char	 buf[PROFILE_REACH_MAX + 32];

	snprintf(buf, sizeof(buf), "with network: %s", p->reach);
	return buf;
}

/*
 * The profile as an agent needs to know it: limits, inputs, what comes
 * back.  From the loaded profile, so a reload changes the words too.
 */
static void
profile_facts(const struct profile *p, char *buf, size_t len)
{
	char	 types[128] = "", roots[512] = "";
	size_t	 i, off = 0;
	int	 n;

	for (i = 0; i < ART_NTYPES; i++)
		if (p->artifacts.types & (1u << i) && (n = snprintf(types + off,
		    sizeof(types) - off, "%s%s", off ? ", " : "",
		    artifact_type_name((enum artifact_type)i))) > 0 &&
		    (size_t)n < sizeof(types) - off)
			off += (size_t)n;
	for (i = 0, off = 0; i < p->inputs.nroots; i++)
		if ((n = snprintf(roots + off, sizeof(roots) - off, "%s%s",
		    off ? ", " : "", p->inputs.roots[i])) > 0 &&
		    (size_t)n < sizeof(roots) - off)
			off += (size_t)n;
	snprintf(buf, len, "Limits: %llu MiB of memory (past it the code is "
	    "killed), %.1f CPU, %u processes, timeout %u ms by default and "
	    "at most %u ms. Input files: %s%s. Files written to /workspace "
	    "come back as artifacts when their type is one of %s (at most "
	    "%llu MiB each); list_files and read_file reach every other "
	    "file there.",
	    (unsigned long long)(p->limits.memory >> 20),
	    p->limits.cpu_millis / 1000.0, p->limits.pids,
	    p->timeout_default_ms, p->timeout_max_ms, p->inputs.nroots ?
	    "sent in inline_files ({name, content, encoding}), or in files as "
	    "host paths beneath " : "sent in inline_files ({name, content, "
	    "encoding}); no host paths (this profile has no input roots)",
	    roots, types[0] ? types : "no type",
	    (unsigned long long)(p->artifacts.max_file >> 20));
}

/* The profile a caller's new sessions get. */
static const struct profile *
default_of(struct server *srv, const struct authz_grant *g)
{
	const struct profile	*p;

	return (p = server_profile(srv, g->profiles[0])) != NULL ? p :
	    &srv->profile;
}

/* What the code can import, which the runtime decides. */
static const char *
packages_phrase(const struct profile *p)
{
	if (p->runtime == SANDBOX_WASM)
		return "WebAssembly Python, Pyodide: the standard library only; "
		    "importing numpy or any other package fails with "
		    "ModuleNotFoundError, and there are no subprocesses, "
		    "threads or sockets";
	return "numpy, pandas and matplotlib available";
}

void
tools_instructions(struct server *srv, const char *principal,
    const struct tool_client *c, char *buf, size_t len)
{
	struct authz_grant	 g;
	const struct profile	*p;
	char			 facts[TOOL_FACTS_MAX];

	authz_grant(srv->authz, principal, c, srv->profile.name, &g);
	p = default_of(srv, &g);
	profile_facts(p, facts, sizeof(facts));
	snprintf(buf, len, "Runs Python (%s)%s in sandboxes %s. "
	    "execute_python keeps variables and files in /workspace across "
	    "calls that pass the same session_id. %s", packages_phrase(p),
	    commands_count(srv->commands) > 0 && p->runtime != SANDBOX_WASM ?
	    " and allowlisted commands" : "", network_phrase(p), facts);
}

static json_t *
artifact_schema(void)
{
	return json_pack("{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, "
	    "s:{s:s}}, s:[s,s,s,s,s]}", "type", "object", "properties",
	    "name", "type", "string", "uri", "type", "string", "mime", "type",
	    "string", "size", "type", "integer", "sha256", "type", "string",
	    "required", "name", "uri", "mime", "size", "sha256");
}

/* What the cell displayed, as E2B's code interpreter returns it. */
static json_t *
results_schema(void)
{
	return json_pack("{s:s, s:s, s:{s:s, s:{s:{s:s, s:[s,s,s,s]}, "
	    "s:{s:s}, s:{s:s}, s:{}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}, "
	    "s:[s,s]}}", "type", "array", "description", "each value the code "
	    "displayed: the trailing expression (main: true), display() calls "
	    "and figures left open (saved as figure_N.png artifacts); text is "
	    "the repr, html from _repr_html_, json for plain data",
	    "items", "type", "object", "properties",
	    "type", "type", "string", "enum", "text", "image", "html", "json",
	    "text", "type", "string", "html", "type", "string", "json",
	    "artifact", "type", "string", "uri", "type", "string", "mime",
	    "type", "string", "main", "type", "boolean",
	    "required", "type", "text");
}

static json_t *
result_schema(void)
{
	json_t	*r, *props;

	r = json_pack("{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, "
	    "s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s, s:o}}, "
	    "s:[s,s,s,s,s,s,s,s]}", "type", "object", "properties",
	    "session_id", "type", "string", "stdout", "type", "string",
	    "stderr", "type", "string", "exit_code", "type", "integer",
	    "truncated", "type", "boolean", "timed_out", "type", "boolean",
	    "duration_ms", "type", "integer", "stdout_bytes", "type",
	    "integer", "stderr_bytes", "type", "integer", "artifacts", "type",
	    "array", "items", artifact_schema(), "required", "stdout", "stderr",
	    "exit_code", "truncated", "timed_out", "duration_ms", "artifacts",
	    "stdout_bytes");
	/* How the call ended: each way has its own word and sentence. */
	if ((props = json_object_get(r, "properties")) != NULL) {
		json_object_set_new(props, "stdout", json_pack("{s:s, s:s}",
		    "type", "string", "description", "what the code wrote to "
		    "its standard output (head and tail when truncated); a "
		    "trailing expression's value is in results, not here"));
		json_object_set_new(props, "end", json_pack("{s:s, s:[s,s,s,s,"
		    "s,s]}", "type", "string", "enum", "exited", "timeout",
		    "cancelled", "oom", "crash", "driver_failed"));
		json_object_set_new(props, "oom_killed", json_pack("{s:s}",
		    "type", "boolean"));
		json_object_set_new(props, "runtime", json_pack("{s:s, s:[s,s,"
		    "s], s:s}", "type", "string", "enum", "native", "gvisor", "wasm",
		    "description", "the wall the code ran behind (the "
		    "profile's runtime)"));
		json_object_set_new(props, "memory_limit_mb", json_pack(
		    "{s:s}", "type", "integer"));
		json_object_set_new(props, "session_lost", json_pack("{s:s}",
		    "type", "boolean"));
		json_object_set_new(props, "message", json_pack("{s:s}",
		    "type", "string"));
		json_object_set_new(props, "results", results_schema());
		json_object_set_new(props, "results_truncated", json_pack(
		    "{s:s}", "type", "boolean"));
		json_object_set_new(props, "artifacts_skipped", json_pack(
		    "{s:s, s:s, s:{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}}, "
		    "s:[s,s,s]}}", "type", "array", "description", "files left "
		    "in /workspace that did not come back as artifacts, and "
		    "why (read them with read_file)", "items", "type", "object",
		    "properties", "name", "type", "string", "size", "type",
		    "integer", "reason", "type", "string", "required", "name",
		    "size", "reason"));
	}
	return r;
}

/* An inline_files item: a plain object, every property typed. */
static json_t *
inline_file_schema(void)
{
	return json_pack("{s:s, s:{s:{s:s, s:i, s:s}, s:{s:s, s:s}, "
	    "s:{s:s, s:[s,s], s:s}}, s:[s,s], s:b}", "type", "object",
	    "properties", "name", "type", "string", "maxLength",
	    STAGE_NAME_MAX, "description", "the file's name in /inputs (no "
	    "'/', not starting with '.'); the same name again in a session "
	    "replaces the file", "content", "type", "string", "description",
	    "the file's content, as encoding says",
	    "encoding", "type", "string", "enum", "utf-8", "base64",
	    "description", "utf-8 (the default) or base64 for binary files",
	    "required", "name", "content", "additionalProperties", 0);
}

/* What a bound argument is, in the profile's words. */
static json_t *
bound_desc(const struct arg_spec *a, const struct profile *p)
{
	if (a->bound == BOUND_ROOTS)
		return json_string(p->inputs.nroots ? "host paths beneath the "
		    "profile's input roots, copied read-only to /inputs under "
		    "their base names" : "host paths: this profile has no input "
		    "roots, so none can be given (send contents in "
		    "inline_files)");
	if (a->bound == BOUND_INLINE)
		return json_sprintf("files sent in the call, written read-only "
		    "to /inputs (at most %llu bytes each once decoded, %llu "
		    "in all)", (unsigned long long)p->inputs.inline_max_file,
		    (unsigned long long)p->inputs.inline_max_call);
	return NULL;
}

/* One argument, as its table entry and the configuration say. */
static json_t *
arg_schema(struct server *srv, const struct profile *p,
    const struct arg_spec *a)
{
	json_t	*o = NULL, *d;

	switch (a->type) {
	case ARG_STRING:
		o = json_pack("{s:s}", "type", "string");
		if (o != NULL && a->bound == BOUND_CODE)
			json_object_set_new(o, "maxLength", json_integer(
			    (json_int_t)srv->conf.server.max_code_bytes));
		break;
	case ARG_INTEGER:
		o = json_pack("{s:s, s:I}", "type", "integer", "minimum",
		    a->min);
		if (o != NULL && a->max > 0)
			json_object_set_new(o, "maximum", json_integer(a->max));
		if (o != NULL && a->bound == BOUND_TIMEOUT) {
			json_object_set_new(o, "maximum", json_integer(
			    p->timeout_max_ms));
			json_object_set_new(o, "default", json_integer(
			    p->timeout_default_ms));
		}
		break;
	case ARG_STRINGS:
		o = json_pack("{s:s, s:{s:s}, s:I}", "type", "array", "items",
		    "type", "string", "maxItems", (json_int_t)a->max_items);
		break;
	case ARG_INLINE_FILES:
		o = json_pack("{s:s, s:o, s:I}", "type", "array", "items",
		    inline_file_schema(), "maxItems",
		    (json_int_t)a->max_items);
		break;
	}
	if (o != NULL && (d = a->desc != NULL ? json_string(a->desc) :
	    bound_desc(a, p)) != NULL)
		json_object_set_new(o, "description", d);
	return o;
}

/* A tool's inputSchema, from its argument table. */
static json_t *
input_schema(struct server *srv, const struct profile *p,
    const struct arg_spec *spec)
{
	json_t	*props = json_object(), *req = json_array(), *o;

	for (; spec->name != NULL; spec++) {
		json_object_set_new(props, spec->name, arg_schema(srv, p,
		    spec));
		if (spec->flags & ARG_REQUIRED)
			json_array_append_new(req, json_string(spec->name));
	}
	o = json_pack("{s:s, s:o, s:b}", "type", "object", "properties",
	    props, "additionalProperties", 0);
	if (o != NULL && json_array_size(req) > 0)
		json_object_set(o, "required", req);
	json_decref(req);
	return o;
}

static json_t *
annotations(int destructive, int idempotent)
{
	return json_pack("{s:b, s:b, s:b, s:b}", "readOnlyHint", 0,
	    "destructiveHint", destructive, "idempotentHint", idempotent,
	    "openWorldHint", 0);
}

static json_t *
execute_python_tool(struct server *srv, const struct profile *p)
{
	char	 desc[TOOL_DESC_MAX], facts[TOOL_FACTS_MAX];

	profile_facts(p, facts, sizeof(facts));
	snprintf(desc, sizeof(desc), "Runs Python 3 code (%s) in a sandbox "
	    "%s. Pass the returned "
	    "session_id to keep variables, imports and /workspace files across "
	    "calls. stdout is what the code wrote. As in Jupyter, a trailing "
	    "expression's value is shown (in results, main: true; never in "
	    "stdout), display(obj) is available, and matplotlib figures left "
	    "open are saved as /workspace/figure_N.png; each shows in results "
	    "(text, html, json, or an image naming its artifact). A session ends "
	    "after %u s without a call, or with close_session; list_sessions "
	    "shows yours. %s", packages_phrase(p),
	    network_phrase(p), srv->conf.server.idle_timeout_s, facts);
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}",
	    "name", "execute_python", "title", "Run Python in a sandbox",
	    "description", desc,
	    "inputSchema", input_schema(srv, p, args_execute_python),
	    "outputSchema", result_schema(), "annotations", annotations(0, 0));
}

static json_t *
close_session_tool(struct server *srv, const struct profile *p)
{
	char	 desc[TOOL_DESC_MAX];

	snprintf(desc, sizeof(desc), "Ends a session: its sandbox, variables, "
	    "files and artifacts are gone. Unclosed, a session ends by itself "
	    "after %u s without a call (list_sessions shows yours).",
	    srv->conf.server.idle_timeout_s);
	return json_pack("{s:s, s:s, s:s, s:o, s:o}", "name", "close_session",
	    "title", "End a sandbox session", "description", desc,
	    "inputSchema", input_schema(srv, p, args_close_session),
	    "annotations", annotations(1, 1));
}

static json_t *
list_sessions_tool(struct server *srv, const struct profile *p)
{
	char	 desc[TOOL_DESC_MAX];

	snprintf(desc, sizeof(desc), "Lists your own sandbox sessions, "
	    "newest first: session_id, created (UTC), idle_s, expires_in_s "
	    "and busy. A session ends after %u s without a call (expires_in_s "
	    "counts down; a call in it starts the count again), when "
	    "close_session ends it, or when mcp-exec stops.",
	    srv->conf.server.idle_timeout_s);
	return json_pack("{s:s, s:s, s:s, s:o, s:{s:s, "
	    "s:{s:{s:s, s:{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, "
	    "s:{s:s}}, s:[s,s,s,s,s]}}}, s:[s]}, s:o}",
	    "name", "list_sessions", "title", "List your sandbox sessions",
	    "description", desc,
	    "inputSchema", input_schema(srv, p, args_list_sessions),
	    "outputSchema", "type", "object", "properties", "sessions", "type",
	    "array", "items", "type", "object", "properties", "session_id",
	    "type", "string", "created", "type", "string", "idle_s", "type",
	    "integer", "expires_in_s", "type", "integer", "busy", "type",
	    "boolean", "required", "session_id", "created", "idle_s",
	    "expires_in_s", "busy", "required", "sessions",
	    "annotations", json_pack("{s:b, s:b, s:b, s:b}", "readOnlyHint", 1,
	    "destructiveHint", 0, "idempotentHint", 1, "openWorldHint", 0));
}

static json_t *
list_files_tool(struct server *srv, const struct profile *p)
{
	char	 desc[TOOL_DESC_MAX];

	snprintf(desc, sizeof(desc), "Lists a directory of a session's "
	    "/workspace (all of it, not only the files that came back as "
	    "artifacts): each entry's name, type (file, directory, symlink, "
	    "other), size in bytes and mtime. path is relative to /workspace "
	    "(or starts with /workspace/); symlinks are listed, never "
	    "followed. At most %d entries per directory.", FILES_LIST_MAX);
	return json_pack("{s:s, s:s, s:s, s:o, s:{s:s, s:{s:{s:s}, s:{s:s, "
	    "s:{s:s, s:{s:{s:s}, s:{s:s, s:[s,s,s,s]}, s:{s:s}, s:{s:s}, "
	    "s:{s:s}}, s:[s,s,s,s]}}, s:{s:s}}, s:[s,s,s]}, s:o}",
	    "name", "list_files", "title", "List a session's workspace",
	    "description", desc,
	    "inputSchema", input_schema(srv, p, args_list_files),
	    "outputSchema", "type", "object", "properties", "path", "type",
	    "string", "files", "type", "array", "items", "type", "object",
	    "properties", "name", "type", "string", "type", "type", "string",
	    "enum", "file", "directory", "symlink", "other", "size", "type",
	    "integer", "mtime", "type", "string", "hard_link", "type",
	    "boolean", "required", "name", "type", "size", "mtime",
	    "truncated", "type", "boolean", "required", "path", "files",
	    "truncated", "annotations", json_pack("{s:b, s:b, s:b, s:b}",
	    "readOnlyHint", 1, "destructiveHint", 0, "idempotentHint", 1,
	    "openWorldHint", 0));
}

static json_t *
read_file_tool(struct server *srv, const struct profile *p)
{
	char	 desc[TOOL_DESC_MAX];

	snprintf(desc, sizeof(desc), "Reads a file the code left in a "
	    "session's /workspace, of any type or size: text (UTF-8 of a "
	    "text type) comes as text, anything else as base64 in blob, with "
	    "its mime type from the content. At most %d bytes per call: "
	    "pass next_offset as offset for the rest. Regular files only; "
	    "symlinks and paths leading out of /workspace are refused.",
	    FILES_READ_MAX);
	return json_pack("{s:s, s:s, s:s, s:o, "
	    "s:{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, "
	    "s:{s:s}, s:{s:s, s:[s,s]}, s:{s:s}, s:{s:s}}, s:[s,s,s,s,s,s,s]}, "
	    "s:o}",
	    "name", "read_file", "title", "Read a file from a session's "
	    "workspace", "description", desc,
	    "inputSchema", input_schema(srv, p, args_read_file),
	    "outputSchema", "type", "object", "properties", "path", "type",
	    "string", "mime", "type", "string", "size", "type", "integer",
	    "offset", "type", "integer", "length", "type", "integer", "eof",
	    "type", "boolean", "next_offset", "type", "integer", "encoding",
	    "type", "string", "enum", "utf-8", "base64", "text", "type",
	    "string", "blob", "type", "string", "required", "path", "mime",
	    "size", "offset", "length", "eof", "encoding",
	    "annotations", json_pack("{s:b, s:b, s:b, s:b}", "readOnlyHint", 1,
	    "destructiveHint", 0, "idempotentHint", 1, "openWorldHint", 0));
}

/*
 * The description lists each command with its purpose from commands.yaml:
 * an agent that sees only the enum of names has to guess what they do.
 */
static void
command_lines(struct server *srv, char *buf, size_t len)
{
	json_t	*list = commands_describe(srv->commands), *c;
	size_t	 i, off = 0;
	int	 n;

	buf[0] = '\0';
	json_array_foreach(list, i, c) {
		n = snprintf(buf + off, len - off, " %s: %s (at most %d "
		    "arguments%s%s).", json_string_value(json_object_get(c,
		    "name")), json_string_value(json_object_get(c,
		    "description"))[0] ? json_string_value(json_object_get(c,
		    "description")) : "no description", (int)json_integer_value(
		    json_object_get(c, "max_args")), json_object_get(c,
		    "arg_pattern") ? ", each matching " : "",
		    json_object_get(c, "arg_pattern") ? json_string_value(
		    json_object_get(c, "arg_pattern")) : "");
		if (n < 0 || (size_t)n >= len - off) {
			buf[off] = '\0';	/* whole lines only */
			break;
		}
		off += (size_t)n;
	}
	json_decref(list);
}

static json_t *
run_command_tool(struct server *srv, const struct profile *p)
{
	char	 desc[TOOL_DESC_MAX], cmds[TOOL_FACTS_MAX];
	json_t	*t;

	command_lines(srv, cmds, sizeof(cmds));
	snprintf(desc, sizeof(desc), "Runs one command from the operator's "
	    "allowlist, without a shell, %s. With session_id it runs in that "
	    "session's sandbox and sees its /workspace (files written there "
	    "by execute_python); without, in a fresh sandbox of its own. "
	    "Commands:%s", network_phrase(p), cmds);
	t = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}",
	    "name", "run_command", "title", "Run an allowlisted command",
	    "description", desc,
	    "inputSchema", input_schema(srv, p, args_run_command),
	    "outputSchema", result_schema(), "annotations", annotations(0, 0));
	/* The names the allowlist has now: an enum of plain strings. */
	json_object_set_new(json_object_get(json_object_get(json_object_get(t,
	    "inputSchema"), "properties"), "command"), "enum",
	    commands_names(srv->commands));
	return t;
}

/*
 * The caller may choose among several profiles: `profile` is offered as
 * an enum of exactly those, the default named (tools.c refuses others).
 */
static json_t *
with_profile_arg(json_t *t, const struct authz_grant *g)
{
	json_t		*names = json_array(), *props;
	unsigned	 i;
	char		 desc[256];

	props = json_object_get(json_object_get(t, "inputSchema"),
	    "properties");
	/* Not the caller's to choose: not offered (tool_authorize refuses). */
	if (t == NULL || !g->choose || g->nprofiles < 2) {
		json_object_del(props, "profile");
		json_decref(names);
		return t;
	}
	for (i = 0; i < g->nprofiles; i++)
		json_array_append_new(names, json_string(g->profiles[i]));
	snprintf(desc, sizeof(desc), "the sandbox profile of a new session "
	    "(limits, network, inputs); %s by default. A session keeps its "
	    "profile: not allowed with session_id", g->profiles[0]);
	json_object_set_new(props, "profile", json_pack("{s:s, s:o, s:s}",
	    "type", "string", "enum", names, "description", desc));
	return t;
}

/*
 * MCP 2026-07-28 (x-mcp-header): a client mirrors session_id into
 * Mcp-Param-Session-Id, so that a router reads the session's node from a
 * header, and mcp-exec checks it against the body (transport/http_era.c).
 */
static void
session_id_headers(json_t *list)
{
	json_t	*t, *prop;
	size_t	 i;

	json_array_foreach(list, i, t)
		if ((prop = json_object_get(json_object_get(json_object_get(t,
		    "inputSchema"), "properties"), "session_id")) != NULL)
			json_object_set_new(prop, "x-mcp-header",
			    json_string(SESSION_ID_HEADER));
}

json_t *
tools_list(struct server *srv, const char *principal,
    const struct tool_client *c)
{
	struct authz_grant	 g;
	const struct profile	*p;
	json_t			*list = json_array();

	/* Only what this caller may call, described with its default. */
	authz_grant(srv->authz, principal, c, srv->profile.name, &g);
	p = default_of(srv, &g);
	if (authz_tool_ok(&g, "execute_python"))
		json_array_append_new(list, with_profile_arg(
		    execute_python_tool(srv, p), &g));
	/* Listing one's own sessions goes with ending them. */
	if (authz_tool_ok(&g, "close_session")) {
		json_array_append_new(list, close_session_tool(srv, p));
		json_array_append_new(list, list_sessions_tool(srv, p));
	}
	if (authz_tool_ok(&g, "list_files"))
		json_array_append_new(list, list_files_tool(srv, p));
	if (authz_tool_ok(&g, "read_file"))
		json_array_append_new(list, read_file_tool(srv, p));
	if (commands_count(srv->commands) > 0 &&
	    authz_tool_ok(&g, "run_command"))
		json_array_append_new(list, with_profile_arg(
		    run_command_tool(srv, p), &g));
	session_id_headers(list);
	return list;
}
