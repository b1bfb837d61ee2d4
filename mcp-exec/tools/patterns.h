/*
 * Suspicious-pattern scanner: code from the agent is matched against the
 * operator's PCRE2 rules (rules/patterns.yaml) before it runs.  The rules
 * are trusted operator input, checked like any policy; the code is not.
 *
 * The scan is textual and a tripwire, not a boundary: comments and string
 * literals count, and obfuscated code gets past it.  Containment is the
 * sandbox's job; a hit only refuses (deny) or records (flag) the call.
 *
 * Ownership: a struct patterns owns its compiled rules and is read-only
 * after patterns_load(), so scans may share it (each scan brings its own
 * match data and JIT stack).
 */
#ifndef STOCKADE_PATTERNS_H
#define STOCKADE_PATTERNS_H

#include <stddef.h>

#include <jansson.h>

#include "sessions/profile.h"

#define PATTERNS_FILE		"patterns.yaml"
#define PATTERNS_MAX		256		/* rules in one file */
#define PATTERNS_ID_MAX		32		/* [A-Z0-9-]{1,32} */
#define PATTERNS_DESC_MAX	256		/* bytes of description */
#define PATTERNS_REGEX_MAX	4096		/* bytes of one regex */
/*
 * The largest code a scan accepts.  The MCP request limit on code must not
 * exceed it: longer code is refused (-1), never scanned in part, so that
 * padding cannot push a pattern out of reach.
 */
#define PATTERNS_CODE_MAX	(1024 * 1024)
_Static_assert(PATTERNS_CODE_MAX >= CODE_BYTES_MAX,
    "server.max_code_bytes may allow code the scanner cannot scan whole");

struct patterns;

/*
 * Loads rules_dir/patterns.yaml.  Invalid rules: prints every error as
 * file:line:column to stderr and returns NULL.  A missing file is no
 * rules: an empty set, on which every scan is clean.
 */
struct patterns	*patterns_load(const char *rules_dir);
void		 patterns_free(struct patterns *);
size_t		 patterns_count(const struct patterns *);

/*
 * Scans len bytes of code (UTF-8 expected, not required; NUL bytes allowed).
 * *hits is always set to a new array (caller decrefs) with, in rule order,
 * {"id","severity","action","line"} for each rule that matched: its first
 * match, line 1-based.  Returns 1 when a hit's action is deny, 0 when none
 * is, and -1 when the scan could not finish (code over PATTERNS_CODE_MAX,
 * a match or memory limit reached, out of memory).  The caller treats -1
 * as deny; *hits then also holds {"id":"scanner_error","severity":
 * "critical","action":"deny","error":...} (plus "rule" when one rule
 * failed) and has no "line".
 */
int		 patterns_scan(const struct patterns *, const char *code,
		    size_t len, json_t **hits);

#endif
