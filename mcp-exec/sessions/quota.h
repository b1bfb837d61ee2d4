/*
 * Quotas per principal and per group (rules/principals.yaml): live
 * sessions, calls per minute, concurrent calls, sandbox CPU and wall
 * seconds per hour and per day, artifact bytes per day.  Windows are
 * fixed and aligned on the clock (UTC minute, hour, day).  What accrues
 * is kept in STATE_DIR/quota-usage.json, replaced atomically (and
 * fsynced) by quota_flush: the server calls it at most PERSIST_DELAY_MS
 * after a call (sessions/persist.c) and at exit, so a clean restart
 * forgets nothing and a crash at most that window's usage; the file is
 * ours but is still read as untrusted (bounded, checked).
 *
 * Ownership: the server owns the table; a bill is a value the caller
 * copies (sessions and calls keep their own).
 */
#ifndef STOCKADE_QUOTA_H
#define STOCKADE_QUOTA_H

#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "profile.h"

enum quota_kind {
	QUOTA_SESSIONS,
	QUOTA_CALLS_MINUTE,
	QUOTA_CONCURRENT,
	QUOTA_CPU_HOUR,
	QUOTA_CPU_DAY,
	QUOTA_WALL_HOUR,
	QUOTA_WALL_DAY,
	QUOTA_ARTIFACT_DAY,
	QUOTA_N
};

#define QUOTA_UNLIMITED		UINT64_MAX
#define QUOTA_FILE		"quota-usage.json"
#define QUOTA_ACCOUNTS_MAX	1024	/* subjects with usage kept */
#define QUOTA_FILE_MAX		(1024 * 1024)
#define QUOTA_GROUPS_MAX	16	/* groups of one caller that count */
#define QUOTA_BILL_MAX		(1 + QUOTA_GROUPS_MAX)
#define QUOTA_SUBJECT_MAX	(PRINCIPAL_MAX + 16)	/* "principal:" ... */
/* Tests only: a file holding the quota clock's time in Unix seconds. */
#define QUOTA_CLOCK_ENV		"STOCKADE_QUOTA_TEST_CLOCK"

/* The names in principals.yaml, error messages and the audit trail. */
extern const char *const quota_names[QUOTA_N];

struct quota_limits {
	uint64_t	 max[QUOTA_N];		/* QUOTA_UNLIMITED: none */
};

/* Whom a call or session is charged to: "principal:NAME", "group:NAME". */
struct quota_bill {
	unsigned	 n;
	struct {
		char			 subject[QUOTA_SUBJECT_MAX];
		struct quota_limits	 lim;
	}		 a[QUOTA_BILL_MAX];
};

/* Why a call is over quota. */
struct quota_verdict {
	enum quota_kind	 kind;
	char		 subject[QUOTA_SUBJECT_MAX];
	uint64_t	 limit, used;
	time_t		 resets;	/* 0: when a session or call ends */
};

struct quota_table;

void	quota_limits_none(struct quota_limits *);
int	quota_limits_any(const struct quota_limits *);
/* Loads STATE_DIR's usage (a bad file is set aside, with a warning). */
struct quota_table	*quota_open(const char *state_dir);
/* Writes the usage if it changed since the last write; quota_close too. */
void	quota_flush(struct quota_table *);
void	quota_close(struct quota_table *);
/* The quota clock: the test clock's file when QUOTA_CLOCK_ENV is set. */
time_t	quota_now(void);
/*
 * The window of kind k that now falls in: its start, and its length in
 * *len (UTC minute, hour or day); 0 for live counts (sessions,
 * concurrent calls), which have none.
 */
time_t	quota_window(enum quota_kind k, time_t now, time_t *len);
/* 0, or -1 with v filled: new_session also counts a session to make. */
int	quota_check(struct quota_table *, const struct quota_bill *,
	    int new_session, struct quota_verdict *v);
/* v as a sentence for the client ("quota calls_per_minute (2) ..."). */
void	quota_verdict_text(const struct quota_verdict *, char *, size_t);
/* The rules in force: every subject's limits (status shows them all). */
void	quota_configure(struct quota_table *, const char *subject,
	    const struct quota_limits *);
/* Before a new set of rules: no subject has limits until configured. */
void	quota_unconfigure(struct quota_table *);
void	quota_call_begin(struct quota_table *, const struct quota_bill *);
void	quota_call_end(struct quota_table *, const struct quota_bill *,
	    uint64_t wall_ms, uint64_t cpu_ms, uint64_t artifact_bytes);
void	quota_session_open(struct quota_table *, const struct quota_bill *);
void	quota_session_close(struct quota_table *, const struct quota_bill *);
/* [{subject, quotas: {name: {used, limit, resets_at}}}] (new reference). */
json_t	*quota_describe(struct quota_table *);

#endif
