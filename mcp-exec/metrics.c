/*
 * The counters behind GET /metrics and their exposition in the Prometheus
 * text format 0.0.4.  All of it is our own state except netguard's
 * status, asked at scrape time: netguard is trusted to count, not to be
 * well-formed, so only its known deny chains and integer counters are read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "metrics.h"
#include "ng_client.h"
#include "server.h"
#include "session.h"
#include "util.h"
#include "version.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const tool_names[METRICS_TOOLS] = {
	"execute_python", "run_command"
};
static const char *const outcome_names[METRICS_OUTCOMES] = {
	"ok", "error", "timeout", "cancelled", "refused"
};
static const char *const close_names[METRICS_CLOSE_REASONS] = {
	"closed", "expired", "lost", "stopped", "other"
};

/*
 * The reasons given to session_close (session.c, tools.c, main.c,
 * transport_stdio.c).  A reason not listed here counts as "other": the
 * label set stays fixed whatever the callers write.
 */
static const struct {
	const char		*reason;
	enum metrics_close	 what;
} close_reasons[] = {
	{ "closed by the client",			METRICS_CLOSED },
	{ "one command run",				METRICS_CLOSED },
	{ "expired",					METRICS_EXPIRED },
	{ "killed after the call could not be stopped",	METRICS_LOST },
	{ "the session's Python process ended",		METRICS_LOST },
	{ "mcp-exec stopped",				METRICS_STOPPED },
	{ "the client went away",			METRICS_STOPPED },
	/* Made for a call that failed before its code ran. */
	{ "not run",					METRICS_CLOSE_OTHER },
};

/* Histogram bounds: milliseconds, and the same in seconds for le. */
static const uint64_t bucket_ms[METRICS_BUCKETS] = {
	10, 50, 100, 500, 1000, 5000, 10000, 30000, 60000
};
static const char *const bucket_le[METRICS_BUCKETS] = {
	"0.01", "0.05", "0.1", "0.5", "1", "5", "10", "30", "60"
};

/* netguard's deny chains (netguard/nft.c): the only labels taken. */
static const char *const egress_rules[] = {
	"metadata", "linklocal", "mapped", "dns", "internal", "policy"
};

/* ------------------------------------------------------------ counting */

static int
tool_index(const char *tool)
{
	int	 i;

	for (i = 0; i < METRICS_TOOLS; i++)
		if (tool != NULL && strcmp(tool, tool_names[i]) == 0)
			return i;
	return -1;
}

void
metrics_call(struct metrics *m, const char *tool, enum metrics_outcome o)
{
	int	 t;

	if ((t = tool_index(tool)) != -1)
		m->calls[t][o]++;
}

void
metrics_call_done(struct metrics *m, const char *tool, enum metrics_outcome o,
    uint64_t duration_ms)
{
	size_t	 b;
	int	 t;

	if ((t = tool_index(tool)) == -1)
		return;
	m->calls[t][o]++;
	for (b = 0; b < METRICS_BUCKETS; b++)
		if (duration_ms <= bucket_ms[b])
			break;
	m->duration[t][b]++;
	m->duration_ms_sum[t] += duration_ms;
}

void
metrics_session_created(struct metrics *m)
{
	m->sessions_created++;
}

void
metrics_session_closed(struct metrics *m, const char *reason)
{
	size_t	 i;

	for (i = 0; i < NITEMS(close_reasons); i++)
		if (strcmp(reason, close_reasons[i].reason) == 0) {
			m->sessions_closed[close_reasons[i].what]++;
			return;
		}
	m->sessions_closed[METRICS_CLOSE_OTHER]++;
}

void
metrics_timeout(struct metrics *m)
{
	m->timeouts++;
}

void
metrics_oom_kills(struct metrics *m, uint64_t n)
{
	m->oom_kills += n;
}

void
metrics_pattern_hits(struct metrics *m, const json_t *hits)
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
			/* Rules are loaded once: the table cannot fill. */
			if (m->nhits == METRICS_HITS_MAX)
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

/* ------------------------------------------------------------ exposition */

static void
family(struct evbuffer *out, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

/* A label value, escaped as the format wants: \\, \" and \n. */
static void
label_value(struct evbuffer *out, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			evbuffer_add_printf(out, "\\%c", *v);
		else if (*v == '\n')
			evbuffer_add(out, "\\n", 2);
		else
			evbuffer_add(out, v, 1);
	}
}

/* Milliseconds as seconds, exactly. */
static void
seconds(struct evbuffer *out, uint64_t ms)
{
	evbuffer_add_printf(out, "%" PRIu64 ".%03" PRIu64 "\n", ms / 1000,
	    ms % 1000);
}

static void
render_sessions(struct server *srv, struct evbuffer *out)
{
	const struct metrics	*m = &srv->metrics;
	size_t			 r;

	family(out, "stockade_sessions_live", "gauge",
	    "Sandbox sessions alive now.");
	evbuffer_add_printf(out, "stockade_sessions_live %u\n",
	    srv->nsessions);
	family(out, "stockade_sessions_created_total", "counter",
	    "Sandbox sessions created (run_command's one-shot sandboxes too).");
	evbuffer_add_printf(out, "stockade_sessions_created_total %" PRIu64
	    "\n", m->sessions_created);
	family(out, "stockade_sessions_closed_total", "counter",
	    "Sandbox sessions ended, by reason.");
	for (r = 0; r < METRICS_CLOSE_REASONS; r++)
		evbuffer_add_printf(out, "stockade_sessions_closed_total"
		    "{reason=\"%s\"} %" PRIu64 "\n", close_names[r],
		    m->sessions_closed[r]);
}

static void
render_calls(struct server *srv, struct evbuffer *out)
{
	const struct metrics	*m = &srv->metrics;
	uint64_t		 cum;
	size_t			 t, o, b;

	family(out, "stockade_calls_total", "counter",
	    "Tool calls with valid arguments, by tool and outcome.");
	for (t = 0; t < METRICS_TOOLS; t++)
		for (o = 0; o < METRICS_OUTCOMES; o++)
			evbuffer_add_printf(out, "stockade_calls_total{tool=\"%s\","
			    "outcome=\"%s\"} %" PRIu64 "\n", tool_names[t],
			    outcome_names[o], m->calls[t][o]);
	family(out, "stockade_call_duration_seconds", "histogram",
	    "Wall-clock time of the calls that ran, by tool.");
	for (t = 0; t < METRICS_TOOLS; t++) {
		cum = 0;
		for (b = 0; b <= METRICS_BUCKETS; b++) {
			cum += m->duration[t][b];
			evbuffer_add_printf(out, "stockade_call_duration_seconds_"
			    "bucket{tool=\"%s\",le=\"%s\"} %" PRIu64 "\n",
			    tool_names[t], b < METRICS_BUCKETS ? bucket_le[b] :
			    "+Inf", cum);
		}
		evbuffer_add_printf(out, "stockade_call_duration_seconds_sum"
		    "{tool=\"%s\"} ", tool_names[t]);
		seconds(out, m->duration_ms_sum[t]);
		evbuffer_add_printf(out, "stockade_call_duration_seconds_count"
		    "{tool=\"%s\"} %" PRIu64 "\n", tool_names[t], cum);
	}
	family(out, "stockade_timeouts_total", "counter",
	    "Calls stopped at their deadline.");
	evbuffer_add_printf(out, "stockade_timeouts_total %" PRIu64 "\n",
	    m->timeouts);
	family(out, "stockade_oom_kills_total", "counter",
	    "Processes the kernel's OOM killer killed in sandboxes.");
	evbuffer_add_printf(out, "stockade_oom_kills_total %" PRIu64 "\n",
	    m->oom_kills);
}

static void
render_patterns(struct server *srv, struct evbuffer *out)
{
	const struct metrics	*m = &srv->metrics;
	size_t			 i;

	family(out, "stockade_pattern_hits_total", "counter",
	    "Pattern rule matches in scanned code, by rule and action.");
	for (i = 0; i < m->nhits; i++) {
		evbuffer_add_printf(out, "stockade_pattern_hits_total{rule=\"");
		label_value(out, m->hits[i].rule);
		evbuffer_add_printf(out, "\",action=\"");
		label_value(out, m->hits[i].action);
		evbuffer_add_printf(out, "\"} %" PRIu64 "\n", m->hits[i].n);
	}
}

static void
render_audit(struct server *srv, struct evbuffer *out)
{
	family(out, "stockade_audit_queue_depth", "gauge",
	    "Events sent to stockade-auditd and not yet acknowledged.");
	evbuffer_add_printf(out, "stockade_audit_queue_depth %u\n",
	    srv->audit.qlen);
	family(out, "stockade_audit_lag_seconds", "gauge",
	    "Age of the oldest unacknowledged audit event (0 when none).");
	evbuffer_add_printf(out, "stockade_audit_lag_seconds ");
	seconds(out, audit_link_oldest_ms(&srv->audit));
	family(out, "stockade_audit_events_lost_total", "counter",
	    "Audit events that could not be recorded (not sent, refused, or "
	    "never acknowledged).");
	evbuffer_add_printf(out, "stockade_audit_events_lost_total %" PRIu64
	    "\n", srv->audit.lost);
}

/*
 * Packets netguard dropped in this server's live sandboxes, by deny
 * chain.  They are nftables counters of each attachment and go when a
 * sandbox detaches: a gauge, not a counter.  ngc_call blocks the event
 * loop, so the wait is METRICS_NETGUARD_TIMEOUT_MS, not netguard's
 * default; without an answer the family is left out.
 */
static void
render_egress(struct server *srv, struct evbuffer *out)
{
	uint64_t	 sum[NITEMS(egress_rules)] = { 0 };
	const json_t	*list, *att, *dropped, *n;
	const char	*sid, *who;
	json_t		*msg, *reply;
	char		 err[256];
	size_t		 i, r;

	if (!srv->profile.netguard ||
	    srv->conf.server.netguard_socket[0] == '\0')
		return;
	msg = json_pack("{s:s}", "type", "status");
	reply = ngc_call(srv->conf.server.netguard_socket, msg, -1,
	    METRICS_NETGUARD_TIMEOUT_MS, err, sizeof(err));
	json_decref(msg);
	list = json_object_get(reply, "attached");
	if (reply == NULL || !json_is_true(json_object_get(reply, "ok")) ||
	    !json_is_array(list)) {
		if (reply != NULL)
			snprintf(err, sizeof(err), "no status in its reply");
		str_ascii(err);
		log_debug("metrics: netguard: %s", err);
		evbuffer_add_printf(out, "# stockade_egress_dropped_packets "
		    "left out: netguard did not answer (%s)\n", err);
		json_decref(reply);
		return;
	}
	json_array_foreach(list, i, att) {
		sid = json_string_value(json_object_get(att, "session_id"));
		who = json_string_value(json_object_get(att, "principal"));
		dropped = json_object_get(att, "dropped");
		/* Other clients' sandboxes are not ours to report. */
		if (sid == NULL || who == NULL || !json_is_object(dropped) ||
		    session_find(srv, sid, who) == NULL)
			continue;
		for (r = 0; r < NITEMS(egress_rules); r++)
			if (json_is_integer(n = json_object_get(dropped,
			    egress_rules[r])) && json_integer_value(n) > 0)
				sum[r] += (uint64_t)json_integer_value(n);
	}
	json_decref(reply);
	family(out, "stockade_egress_dropped_packets", "gauge",
	    "Packets dropped by netguard in this server's live sandboxes, by "
	    "deny chain.");
	for (r = 0; r < NITEMS(egress_rules); r++)
		evbuffer_add_printf(out, "stockade_egress_dropped_packets"
		    "{rule=\"%s\"} %" PRIu64 "\n", egress_rules[r], sum[r]);
}

void
metrics_render(struct server *srv, struct evbuffer *out)
{
	family(out, "stockade_up", "gauge", "1 while mcp-exec answers.");
	evbuffer_add_printf(out, "stockade_up 1\n");
	family(out, "stockade_build_info", "gauge",
	    "The running mcp-exec's version.");
	evbuffer_add_printf(out, "stockade_build_info{version=\"");
	label_value(out, STOCKADE_VERSION);
	evbuffer_add_printf(out, "\"} 1\n");
	render_sessions(srv, out);
	render_calls(srv, out);
	render_patterns(srv, out);
	render_audit(srv, out);
	render_egress(srv, out);
}
