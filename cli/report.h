/*
 * `stockade audit report`: one self-contained HTML page for a selection of
 * the audit trail, headed by the verdict verify reached.  Every string in
 * the records is untrusted (code, clients and sandboxes wrote it): it is
 * shown only through report_esc(), never as markup.
 */
#ifndef STOCKADE_REPORT_H
#define STOCKADE_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#define REPORT_TEXT_MAX		4096	/* bytes of one string shown */
#define REPORT_CELL_MAX		512	/* bytes of one table cell */
#define REPORT_SESSIONS_MAX	200	/* sessions drawn */
#define REPORT_CALLS_DETAIL	50	/* calls per session shown in full */
#define REPORT_ROWS_MAX		1000	/* calls per session in the table */
#define REPORT_MARKS_MAX	2000	/* timeline marks per session */
#define REPORT_LOADS_MAX	200	/* policy loads listed */
#define REPORT_POLICY_MAX	(16 * 1024 * 1024)	/* a policy file read */
#define REPORT_PAGE_MAX		(32 * 1024 * 1024)	/* then no more detail */

enum report_state {
	REPORT_INTACT,		/* chain and signatures check */
	REPORT_UNSIGNED,	/* chain checks; no key to check signatures */
	REPORT_TAMPERED,
};

/* What verification decided, as verify printed it (borrowed strings). */
struct report_verdict {
	enum report_state	 state;
	const char		*summary;	/* verify's line(s) */
	const char		*warning;	/* "" or NULL: none */
	const char		*source;	/* the log dir or bundle named */
	const char		*filter;	/* the selection, in words */
	/* The first checkpoint at or after the selection's last record. */
	const json_t		*cover;		/* its record, or NULL */
	uint64_t		 need_signed;	/* last selected seq to sign */
};

/*
 * Writes the page: records (an array of the selected records in chain
 * order), loads (ok policy_load {file, seq, rec}), code blobs read from
 * log_dir, policy files from policy_dir/<sha256> (a bundle's; NULL:
 * none).  Same arguments, same bytes.  0, or -1 on a write error.
 */
int	 report_render(FILE *, const struct report_verdict *,
	    const json_t *records, const json_t *loads, const char *log_dir,
	    const char *policy_dir);

/* The only escaper: text for element content and quoted attributes. */
void	 report_esc(FILE *, const char *s, size_t len);
/* At most cap bytes of s escaped, then how many were left out. */
void	 report_esc_cap(FILE *, const char *s, size_t len, size_t cap);
/* A JSON value as text (strings bare, the rest compact JSON), escaped,
 * at most cap bytes of it. */
void	 report_esc_json(FILE *, const json_t *v, size_t cap);

/* report_diff.c: the lines that differ between two texts, with some
 * context, in a <pre>; bounded in work and in output. */
void	 report_diff(FILE *, const char *old, size_t oldlen, const char *new,
	    size_t newlen);

/* report_svg.c: a session's timeline, calls as bars, events as marks. */
void	 report_timeline(FILE *, const json_t *calls, const json_t *events);

#endif
