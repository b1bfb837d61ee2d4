/*
 * Counting, for operators (ops/metrics.c renders it).  Every label comes
 * from a fixed set or from the operator's own pattern rules: close reasons
 * not listed here count as "other", whatever the callers write.
 */
#include <stdio.h>
#include <string.h>

#include "counters.h"
#include "session.h"
#include "util.h"

static const char *const tool_names[COUNT_TOOLS] = {
	"execute_python", "run_command"
};

const uint64_t counters_bucket_ms[COUNT_BUCKETS] = {
	10, 50, 100, 500, 1000, 5000, 10000, 30000, 60000
};

/*
 * The reasons given to session_close (sessions/, tools/, main.c,
 * transport/stdio.c).
 */
static const struct {
	const char		*reason;
	enum count_close	 what;
} close_reasons[] = {
	{ "closed by the client",			COUNT_CLOSED },
	{ "one command run",				COUNT_CLOSED },
	{ "expired",					COUNT_EXPIRED },
	{ SESSION_EVICTED_PRINCIPAL,			COUNT_EVICTED },
	{ SESSION_EVICTED_TOTAL,			COUNT_EVICTED },
	{ "killed after the call could not be stopped",	COUNT_LOST },
	{ "the session's Python process ended",		COUNT_LOST },
	{ SESSION_OOM_REASON,				COUNT_LOST },
	{ "mcp-exec stopped",				COUNT_STOPPED },
	{ FLEET_DRAINED,				COUNT_STOPPED },
	{ FLEET_DRAIN_CUT,				COUNT_STOPPED },
	{ "the client went away",			COUNT_STOPPED },
	/* Made for a call that failed before its code ran. */
	{ "not run",					COUNT_CLOSE_OTHER },
};

const char *
counters_tool_name(enum count_tool t)
{
	return tool_names[t];
}

static int
tool_index(const char *tool)
{
	int	 i;

	for (i = 0; i < COUNT_TOOLS; i++)
		if (tool != NULL && strcmp(tool, tool_names[i]) == 0)
			return i;
	return -1;
}

void
counters_call(struct counters *m, const char *tool, enum count_outcome o)
{
	int	 t;

	if ((t = tool_index(tool)) != -1)
		m->calls[t][o]++;
}

void
counters_call_done(struct counters *m, const char *tool,
    enum count_outcome o, uint64_t duration_ms)
{
	size_t	 b;
	int	 t;

	if ((t = tool_index(tool)) == -1)
		return;
	m->calls[t][o]++;
	for (b = 0; b < COUNT_BUCKETS; b++)
		if (duration_ms <= counters_bucket_ms[b])
			break;
	m->duration[t][b]++;
	m->duration_ms_sum[t] += duration_ms;
}

void
counters_session_created(struct counters *m)
{
	m->sessions_created++;
}

void
counters_session_closed(struct counters *m, const char *reason)
{
	size_t	 i;

	for (i = 0; i < nitems(close_reasons); i++)
		if (strcmp(reason, close_reasons[i].reason) == 0) {
			m->sessions_closed[close_reasons[i].what]++;
			return;
		}
	m->sessions_closed[COUNT_CLOSE_OTHER]++;
}

void
counters_timeout(struct counters *m)
{
	m->timeouts++;
}

void
counters_oom_kills(struct counters *m, uint64_t n)
{
	m->oom_kills += n;
}

void
counters_build(struct counters *m, uint64_t ns)
{
	m->builds++;
	m->build_ns += ns;
}

void
counters_pattern_hits(struct counters *m, const json_t *hits)
{
	const json_t	*h;
	const char	*rule, *action;
	size_t		 i, j;

	json_array_foreach(hits, i, h) {
		rule = json_string_value(json_object_get(h, "id"));
		action = json_string_value(json_object_get(h, "action"));
		if (rule == NULL || action == NULL ||
		    strlen(rule) >= sizeof(m->hits[0].rule) ||
		    strlen(action) >= sizeof(m->hits[0].action))
			continue;
		for (j = 0; j < m->nhits; j++)
			if (strcmp(m->hits[j].rule, rule) == 0 &&
			    strcmp(m->hits[j].action, action) == 0)
				break;
		if (j == m->nhits) {
			/* Room for twice a full rule file: reloads that keep
			 * bringing new ids stop adding labels when it is full. */
			if (m->nhits == COUNT_HITS_MAX)
				continue;
			snprintf(m->hits[j].rule, sizeof(m->hits[j].rule), "%s",
			    rule);
			snprintf(m->hits[j].action, sizeof(m->hits[j].action),
			    "%s", action);
			m->nhits++;
		}
		m->hits[j].n++;
	}
}
