/*
 * Loads rules/patterns.yaml into PCRE2 programs (JIT when the platform
 * allows it) and scans submitted code with them.  The rules file is
 * operator input, validated whole; the code is the agent's, untrusted:
 * every match runs under match, depth, heap and JIT stack limits, and the
 * whole scan under a time budget.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCRE2_CODE_UNIT_WIDTH	8
#include <pcre2.h>

#include "conf.h"
#include "log.h"
#include "patterns.h"
#include "util.h"

/*
 * Bounds, so that a pathological regex meeting hostile code ends in a
 * scanner_error (which denies) rather than a hung server.  pcre2's match
 * limit counts backtracking from each start position afresh, with JIT as
 * without: alone it bounds one position, and `(a+)+$` over 1 MiB of
 * "aaaaaaaaaaaaaaa!" runs for minutes without ever reaching it.  So a rule
 * is matched a slice of start positions at a time (an offset limit; a
 * match may still run past the slice), and the clock is read between
 * slices: a scan ends within PATTERNS_SCAN_MS plus one slice, and a slice
 * costs at most PATTERNS_SLICE positions times the match limit (some
 * 0.3 ms each with JIT, 1.5 ms interpreted).  Depth and heap bound the
 * interpreter, the JIT stack JIT code.  The shipped rules use a few
 * thousand steps per position at most; 1 MiB of code scans in tens of
 * milliseconds (check_patterns.c tests both ends).
 */
#define PATTERNS_MATCH_LIMIT	100000
#define PATTERNS_DEPTH_LIMIT	10000
#define PATTERNS_HEAP_KIB	(16 * 1024)
#define PATTERNS_JIT_STACK_MIN	(32 * 1024)
#define PATTERNS_JIT_STACK_MAX	(1024 * 1024)
#define PATTERNS_SLICE		256		/* start positions per call */
#define PATTERNS_SCAN_MS	1000		/* one scan, all rules */
#define PATTERNS_PCRE_MSG	256

/*
 * UTF with Unicode properties (\w, \b, \s know non-ASCII letters), and
 * MATCH_INVALID_UTF: code that is not valid UTF-8 (latin-1 sources, binary
 * junk, a deliberate stray byte) is still scanned, an invalid sequence
 * simply matching nothing, instead of pcre2_match() failing with a UTF
 * error on the whole subject.  \C could split a character; it is refused.
 * Rules are searched for, never anchored, and `$` keeps PCRE2's default
 * (end, or before a final newline): a tripwire that matches in more
 * places errs towards flagging, so DOLLAR_ENDONLY, which run_command's
 * allowlist needs (commands.c), would only let code past.
 */
#define PATTERNS_COMPILE_OPTS	(PCRE2_UTF | PCRE2_UCP | \
	PCRE2_MATCH_INVALID_UTF | PCRE2_NEVER_BACKSLASH_C | \
	PCRE2_USE_OFFSET_LIMIT)

enum pattern_action { ACTION_FLAG, ACTION_DENY };

static const char *const severities[] = { "low", "medium", "high",
    "critical", NULL };
static const char *const actions[] = { "flag", "deny", NULL };

struct pattern_rule {
	char		 id[PATTERNS_ID_MAX + 1];
	int		 severity;	/* index in severities */
	int		 action;	/* enum pattern_action */
	unsigned	 line;		/* of the id, for duplicates */
	pcre2_code	*re;
};

struct patterns {
	struct pattern_rule	*rules;
	size_t			 nrules;
};

static int
id_ok(const char *s, size_t len)
{
	size_t	 i;

	if (len == 0 || len > PATTERNS_ID_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return 0;
	return 1;
}

/* A required string member; records "missing" at the rule itself. */
static const char *
required(struct conf_ctx *ctx, const json_t *rule, size_t idx,
    const char *key)
{
	const char	*s = NULL;
	int		 r;

	if ((r = conf_get_string(ctx, rule, key, &s)) == 0)
		conf_error(ctx, rule, "rule %zu: missing '%s'", idx + 1, key);
	return r == 1 ? s : NULL;
}

/*
 * Compiles one regex; 0, or -1 after recording pcre2's message and the
 * offset in the regex where it gave up, at the position of the value.
 */
static int
rule_compile(struct conf_ctx *ctx, const json_t *node, const char *id,
    pcre2_match_data *md, pcre2_code **out)
{
	PCRE2_UCHAR	 msg[PATTERNS_PCRE_MSG];
	PCRE2_SIZE	 off;
	pcre2_code	*re;
	size_t		 len = json_string_length(node);
	int		 err;

	if (len == 0 || len > PATTERNS_REGEX_MAX) {
		conf_error(ctx, node, "rule '%s': regex: 1 to %d bytes",
		    id, PATTERNS_REGEX_MAX);
		return -1;
	}
	re = pcre2_compile((PCRE2_SPTR)json_string_value(node), len,
	    PATTERNS_COMPILE_OPTS, &err, &off, NULL);
	if (re == NULL) {
		if (pcre2_get_error_message(err, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "error %d", err);
		conf_error(ctx, node, "rule '%s': regex: %s at offset %zu",
		    id, (const char *)msg, (size_t)off);
		return -1;
	}
	/*
	 * JIT is some ten times faster; where it is unavailable (a build
	 * without it, or a kernel/LSM that refuses executable memory)
	 * pcre2_match() runs the interpreter on the same code, under the
	 * same limits, so the failure only costs speed.
	 */
	(void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	/* Mostly `x*` or `(a|)`, which would hit every call. */
	if (pcre2_match(re, (PCRE2_SPTR)"", 0, 0, 0, md, NULL) >= 0) {
		conf_error(ctx, node, "rule '%s': regex matches empty code",
		    id);
		pcre2_code_free(re);
		return -1;
	}
	*out = re;
	return 0;
}

/*
 * Element idx of rules: into p->rules[idx], which the caller counts in
 * whatever happens: any error fails the whole load, so nothing is ever
 * compacted, and an id stays known for duplicate checks even when another
 * key of its rule is wrong.
 */
static void
rule_load(struct conf_ctx *ctx, const json_t *rule, size_t idx,
    struct patterns *p, pcre2_match_data *md)
{
	static const char *const keys[] = { "id", "description", "severity",
	    "action", "regex", NULL };
	struct pattern_rule	*r = &p->rules[idx];
	const json_t		*idn;
	const char		*id, *desc;
	unsigned		 column;
	size_t			 i;

	memset(r, 0, sizeof(*r));
	if (conf_expect_object(ctx, rule, "rule") == -1)
		return;
	conf_check_keys(ctx, rule, keys);
	idn = json_object_get(rule, "id");
	if ((id = required(ctx, rule, idx, "id")) != NULL) {
		if (!id_ok(id, json_string_length(idn)))
			conf_error(ctx, idn, "rule %zu: id: 1 to %d of A-Z, "
			    "0-9 and '-'", idx + 1, PATTERNS_ID_MAX);
		else {
			for (i = 0; i < idx; i++)
				if (strcmp(p->rules[i].id, id) == 0)
					break;
			if (i < idx)
				conf_error(ctx, idn, "duplicate id '%s' (first "
				    "at line %u)", id, p->rules[i].line);
			else {
				snprintf(r->id, sizeof(r->id), "%s", id);
				(void)conf_doc_where(ctx->doc, idn, &r->line,
				    &column);
			}
		}
	}
	if ((desc = required(ctx, rule, idx, "description")) != NULL &&
	    (desc[0] == '\0' || strlen(desc) > PATTERNS_DESC_MAX))
		conf_error(ctx, json_object_get(rule, "description"),
		    "rule %zu: description: 1 to %d bytes", idx + 1,
		    PATTERNS_DESC_MAX);
	if (conf_get_enum(ctx, rule, "severity", severities, &r->severity)
	    == 0)
		conf_error(ctx, rule, "rule %zu: missing 'severity'", idx + 1);
	if (conf_get_enum(ctx, rule, "action", actions, &r->action) == 0)
		conf_error(ctx, rule, "rule %zu: missing 'action'", idx + 1);
	/* Compiled even when other keys are wrong: one pass, every error. */
	if (required(ctx, rule, idx, "regex") != NULL)
		(void)rule_compile(ctx, json_object_get(rule, "regex"),
		    r->id[0] != '\0' ? r->id : "?", md, &r->re);
}

static void
rules_load(struct conf_ctx *ctx, const json_t *root, struct patterns *p)
{
	static const char *const top[] = { "rules", NULL };
	pcre2_match_data	*md;
	json_t			*arr;
	size_t			 n;
	int			 r;

	if (conf_expect_object(ctx, root, PATTERNS_FILE) == -1)
		return;
	conf_check_keys(ctx, root, top);
	if ((r = conf_get_array(ctx, root, "rules", &arr)) == 0)
		conf_error(ctx, root, "missing 'rules' (a sequence; [] for "
		    "none)");
	if (r != 1)
		return;
	if ((n = json_array_size(arr)) > PATTERNS_MAX) {
		/* Refused before compiling any of them. */
		conf_error(ctx, arr, "rules: at most %d (got %zu)",
		    PATTERNS_MAX, n);
		return;
	}
	if (n == 0)
		return;
	if ((md = pcre2_match_data_create(1, NULL)) == NULL)
		fatalx("pcre2_match_data_create: out of memory");
	p->rules = xcalloc(n, sizeof(*p->rules));
	for (p->nrules = 0; p->nrules < n; p->nrules++)
		rule_load(ctx, json_array_get(arr, p->nrules), p->nrules, p,
		    md);
	pcre2_match_data_free(md);
}

struct patterns *
patterns_load(const char *rules_dir)
{
	struct patterns	*p;
	struct conf_doc	*doc;
	struct conf_ctx	 ctx;
	char		 path[PATH_MAX], err[CONF_ERROR_LEN];

	if (xsnprintf(path, sizeof(path), "%s/%s", rules_dir,
	    PATTERNS_FILE) == -1) {
		conf_report("%s/%s: path too long", rules_dir,
		    PATTERNS_FILE);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	/* No file, no rules; any other failure to read it is an error. */
	if (access(path, F_OK) == -1 && errno == ENOENT)
		return p;
	if ((doc = conf_doc_load_file(path, err, sizeof(err))) == NULL) {
		conf_report("%s", err);
		patterns_free(p);
		return NULL;
	}
	conf_ctx_init(&ctx, doc);
	rules_load(&ctx, conf_doc_root(doc), p);
	if (ctx.nerrors > 0) {
		conf_ctx_report(&ctx);
		patterns_free(p);
		p = NULL;
	}
	conf_doc_free(doc);
	return p;
}

void
patterns_free(struct patterns *p)
{
	size_t	 i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nrules; i++)
		pcre2_code_free(p->rules[i].re);
	free(p->rules);
	free(p);
}

size_t
patterns_count(const struct patterns *p)
{
	return p->nrules;
}

/* ------------------------------------------------------------------ scan */

static void
hits_append(json_t *hits, json_t *hit)
{
	if (hit == NULL || json_array_append_new(hits, hit) == -1)
		fatalx("patterns: out of memory");
}

/* rule NULL: the scan as a whole failed. */
static void
scan_error(json_t *hits, const struct pattern_rule *rule, const char *why)
{
	json_t	*hit;

	hit = json_pack("{s:s, s:s, s:s, s:s}", "id", "scanner_error",
	    "severity", "critical", "action", "deny", "error", why);
	if (hit != NULL && rule != NULL &&
	    json_object_set_new(hit, "rule", json_string(rule->id)) == -1) {
		json_decref(hit);
		hit = NULL;
	}
	hits_append(hits, hit);
}

/* 1-based line of byte off. */
static json_int_t
line_at(const char *code, size_t off)
{
	const char	*p = code, *end = code + off, *nl;
	json_int_t	 line = 1;

	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		line++;
		p = nl + 1;
	}
	return line;
}

/*
 * First match of r in code, slice by slice: 1 and *at, 0, -1 with *why
 * (pcre2's message), or -2 when the scan's time is up.
 */
static int
rule_match(const struct pattern_rule *r, const char *code, size_t len,
    pcre2_match_data *md, pcre2_match_context *mctx, uint64_t deadline,
    size_t *at, char *why, size_t whylen)
{
	PCRE2_SIZE	*ov;
	size_t		 start = 0, last;
	int		 rc;

	for (;;) {
		if (mono_ms() > deadline)
			return -2;
		/*
		 * A start inside a character is no problem: under
		 * MATCH_INVALID_UTF, pcre2 moves on to the next one.
		 */
		if (len - start > PATTERNS_SLICE)
			last = start + PATTERNS_SLICE - 1;
		else
			last = len;
		pcre2_set_offset_limit(mctx, last);
		rc = pcre2_match(r->re, (PCRE2_SPTR)code, len, start, 0, md,
		    mctx);
		if (rc >= 0) {
			/* rc 0: ovector too small, still a match. */
			ov = pcre2_get_ovector_pointer(md);
			*at = ov[0] < len ? ov[0] : len;
			return 1;
		}
		if (rc != PCRE2_ERROR_NOMATCH) {
			if (pcre2_get_error_message(rc, (PCRE2_UCHAR *)why,
			    whylen) < 0)
				snprintf(why, whylen, "pcre2 error %d", rc);
			return -1;
		}
		if (last >= len)
			return 0;
		start = last + 1;
	}
}

/* The scanning thread's match state, made at its first scan. */
static __thread pcre2_match_data	*scan_md;
static __thread pcre2_match_context	*scan_mctx;
static __thread pcre2_jit_stack		*scan_js;

int
patterns_scan(const struct patterns *p, const char *code, size_t len,
    json_t **hits)
{
	const struct pattern_rule	*r;
	pcre2_match_context		*mctx = NULL;
	pcre2_match_data		*md = NULL;
	pcre2_jit_stack			*js = NULL;
	char				 why[PATTERNS_PCRE_MSG];
	uint64_t			 deadline;
	size_t				 i, at;
	int				 rc, verdict = 0;

	if ((*hits = json_array()) == NULL)
		fatalx("patterns: out of memory");
	if (len > PATTERNS_CODE_MAX) {
		scan_error(*hits, NULL, "code larger than the scan limit");
		return -1;
	}
	if (p->nrules == 0)
		return 0;
	if (code == NULL)
		code = "";
	/*
	 * Per thread, not per set: a match context with a JIT stack
	 * assigned is written during the match, and the set stays
	 * shareable.  Kept from scan to scan: the JIT stack is a 1 MiB
	 * mapping, made and unmapped at every call before.
	 */
	if (scan_md == NULL) {
		if ((md = pcre2_match_data_create(1, NULL)) == NULL ||
		    (mctx = pcre2_match_context_create(NULL)) == NULL ||
		    (js = pcre2_jit_stack_create(PATTERNS_JIT_STACK_MIN,
		    PATTERNS_JIT_STACK_MAX, NULL)) == NULL) {
			pcre2_jit_stack_free(js);
			pcre2_match_context_free(mctx);
			pcre2_match_data_free(md);
			scan_error(*hits, NULL, "out of memory");
			return -1;
		}
		pcre2_set_match_limit(mctx, PATTERNS_MATCH_LIMIT);
		pcre2_set_depth_limit(mctx, PATTERNS_DEPTH_LIMIT);
		pcre2_set_heap_limit(mctx, PATTERNS_HEAP_KIB);
		pcre2_jit_stack_assign(mctx, NULL, js);
		scan_md = md;
		scan_mctx = mctx;
		scan_js = js;
	}
	md = scan_md;
	mctx = scan_mctx;

	deadline = mono_ms() + PATTERNS_SCAN_MS;
	for (i = 0; i < p->nrules; i++) {
		r = &p->rules[i];
		if ((rc = rule_match(r, code, len, md, mctx, deadline, &at, why,
		    sizeof(why))) == 0)
			continue;
		if (rc == -2) {
			/* The rules after r are not run either. */
			snprintf(why, sizeof(why), "scan time limit (%d ms) "
			    "reached", PATTERNS_SCAN_MS);
			scan_error(*hits, r, why);
			verdict = -1;
			break;
		}
		if (rc == -1) {
			/* Keep going: the audit trail gets every hit. */
			scan_error(*hits, r, why);
			verdict = -1;
			continue;
		}
		hits_append(*hits, json_pack("{s:s, s:s, s:s, s:I}", "id",
		    r->id, "severity", severities[r->severity], "action",
		    actions[r->action], "line", line_at(code, at)));
		if (r->action == ACTION_DENY && verdict == 0)
			verdict = 1;
	}
	return verdict;
}
