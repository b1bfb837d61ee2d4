/*
 * The exposition of GET /metrics in the Prometheus text format 0.0.4, from
 * what sessions and tools published (sessions/counters.h, the live list).
 * All of it is our own state except netguard's status, asked at scrape
 * time: netguard is trusted to count, not to be well-formed, so only its
 * known deny chains and integer counters are read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "evbase.h"
#include "log.h"
#include "metrics.h"
#include "ng_client.h"
#include "sessions/counters.h"
#include "sessions/quota.h"
#include "sessions/server.h"
#include "util.h"
#include "version.h"

static const char *const outcome_names[COUNT_OUTCOMES] = {
	"ok", "error", "timeout", "cancelled", "refused"
};
static const char *const close_names[COUNT_CLOSE_REASONS] = {
	"closed", "expired", "lost", "stopped", "other", "evicted"
};

/* netguard's deny chains (netguard/nft.c): the only labels taken. */
static const char *const egress_rules[] = {
	"metadata", "linklocal", "mapped", "dns", "internal", "policy"
};

/* ------------------------------------------------------------ exposition */

static void
family(struct evbuffer *out, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

/* A metric without labels: its HELP and TYPE lines, then its value. */
static void
metric_u64(struct evbuffer *out, const char *name, const char *type,
    const char *help, uint64_t v)
{
	family(out, name, type, help);
	evbuffer_add_printf(out, "%s %" PRIu64 "\n", name, v);
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

/* A bucket bound as le: seconds, without trailing zeros ("0.05", "1"). */
static void
bucket_le(char *out, size_t len, uint64_t ms)
{
	size_t	 n;

	if (ms % 1000 == 0) {
		snprintf(out, len, "%" PRIu64, ms / 1000);
		return;
	}
	snprintf(out, len, "%" PRIu64 ".%03" PRIu64, ms / 1000, ms % 1000);
	for (n = strlen(out); n > 0 && out[n - 1] == '0'; n--)
		out[n - 1] = '\0';
}

static void
render_sessions(struct server *srv, struct evbuffer *out)
{
	const struct counters	*m = &srv->counters;
	size_t			 r;

	family(out, "stockade_sessions_live", "gauge",
	    "Sandbox sessions alive now.");
	evbuffer_add_printf(out, "stockade_sessions_live %zu\n",
	    json_array_size(srv->live));
	metric_u64(out, "stockade_sessions_created_total", "counter",
	    "Sandbox sessions created (run_command's one-shot sandboxes too).",
	    m->sessions_created);
	family(out, "stockade_sessions_closed_total", "counter",
	    "Sandbox sessions ended, by reason.");
	for (r = 0; r < COUNT_CLOSE_REASONS; r++)
		evbuffer_add_printf(out, "stockade_sessions_closed_total"
		    "{reason=\"%s\"} %" PRIu64 "\n", close_names[r],
		    m->sessions_closed[r]);
}

static void
render_calls(struct server *srv, struct evbuffer *out)
{
	const struct counters	*m = &srv->counters;
	uint64_t		 cum;
	size_t			 t, o, b;
	char			 le[32];

	family(out, "stockade_calls_total", "counter",
	    "Tool calls with valid arguments, by tool and outcome.");
	for (t = 0; t < COUNT_TOOLS; t++)
		for (o = 0; o < COUNT_OUTCOMES; o++)
			evbuffer_add_printf(out, "stockade_calls_total{tool=\"%s\","
			    "outcome=\"%s\"} %" PRIu64 "\n", counters_tool_name(t),
			    outcome_names[o], m->calls[t][o]);
	family(out, "stockade_call_duration_seconds", "histogram",
	    "Wall-clock time of the calls that ran, by tool.");
	for (t = 0; t < COUNT_TOOLS; t++) {
		cum = 0;
		for (b = 0; b <= COUNT_BUCKETS; b++) {
			cum += m->duration[t][b];
			if (b < COUNT_BUCKETS)
				bucket_le(le, sizeof(le), counters_bucket_ms[b]);
			else
				snprintf(le, sizeof(le), "+Inf");
			evbuffer_add_printf(out, "stockade_call_duration_seconds_"
			    "bucket{tool=\"%s\",le=\"%s\"} %" PRIu64 "\n",
			    counters_tool_name(t), le, cum);
		}
		evbuffer_add_printf(out, "stockade_call_duration_seconds_sum"
		    "{tool=\"%s\"} ", counters_tool_name(t));
		seconds(out, m->duration_ms_sum[t]);
		evbuffer_add_printf(out, "stockade_call_duration_seconds_count"
		    "{tool=\"%s\"} %" PRIu64 "\n", counters_tool_name(t), cum);
	}
	metric_u64(out, "stockade_timeouts_total", "counter",
	    "Calls stopped at their deadline.", m->timeouts);
	metric_u64(out, "stockade_oom_kills_total", "counter",
	    "Processes the kernel's OOM killer killed in sandboxes.",
	    m->oom_kills);
	metric_u64(out, "stockade_pool_ready", "gauge",
	    "Sandboxes built ahead, waiting in the warm pool.", m->pool_ready);
	metric_u64(out, "stockade_pool_warm", "gauge",
	    "1 once the warm pool first held all it may (readiness).",
	    m->pool_warm);
	metric_u64(out, "stockade_pool_hits_total", "counter",
	    "New sessions of a pooled profile served from the pool.",
	    m->pool_hits);
	metric_u64(out, "stockade_pool_misses_total", "counter",
	    "New sessions of a pooled profile built on the request path.",
	    m->pool_misses);
	metric_u64(out, "stockade_pool_discarded_total", "counter",
	    "Sandboxes built ahead whose driver died waiting or never started.",
	    m->pool_discarded);
	metric_u64(out, "stockade_sandbox_builds_total", "counter",
	    "Sandboxes built, ahead for the pool or on the request path.",
	    m->builds);
	family(out, "stockade_sandbox_build_seconds_total", "counter",
	    "Time the loop spent building sandboxes, every other call waiting.");
	evbuffer_add_printf(out, "stockade_sandbox_build_seconds_total ");
	seconds(out, m->build_ns / 1000000);
}

static void
render_patterns(struct server *srv, struct evbuffer *out)
{
	const struct counters	*m = &srv->counters;
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

/* The loop's busy polling (server.busy_poll_us, lib/evbase.h). */
static void
render_polls(struct evbuffer *out)
{
	struct evbase_stats	 st;

	evbase_stats(&st);
	metric_u64(out, "stockade_loop_polls_total", "counter",
	    "Times the loop polled instead of sleeping for a reply due soon.",
	    st.polls);
	family(out, "stockade_loop_poll_seconds_total", "counter",
	    "Time the loop spent polling instead of sleeping, events it served "
	    "meanwhile included: the most CPU polling cost.");
	evbuffer_add_printf(out, "stockade_loop_poll_seconds_total ");
	seconds(out, st.poll_ns / 1000000);
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
	metric_u64(out, "stockade_audit_events_lost_total", "counter",
	    "Audit events that could not be recorded (not sent, refused, or "
	    "never acknowledged).", srv->audit.lost);
}

/* Whether the live sessions as last published hold this one. */
static int
published(const struct server *srv, const char *sid, const char *principal)
{
	const json_t	*s;
	const char	*id, *who;
	size_t		 i;

	json_array_foreach(srv->live, i, s) {
		id = json_string_value(json_object_get(s, "session_id"));
		who = json_string_value(json_object_get(s, "principal"));
		if (id != NULL && who != NULL && strcmp(id, sid) == 0 &&
		    strcmp(who, principal) == 0)
			return 1;
	}
	return 0;
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
	uint64_t	 sum[nitems(egress_rules)] = { 0 };
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
		    !published(srv, sid, who))
			continue;
		for (r = 0; r < nitems(egress_rules); r++)
			if (json_is_integer(n = json_object_get(dropped,
			    egress_rules[r])) && json_integer_value(n) > 0)
				sum[r] += (uint64_t)json_integer_value(n);
	}
	json_decref(reply);
	family(out, "stockade_egress_dropped_packets", "gauge",
	    "Packets dropped by netguard in this server's live sandboxes, by "
	    "deny chain.");
	for (r = 0; r < nitems(egress_rules); r++)
		evbuffer_add_printf(out, "stockade_egress_dropped_packets"
		    "{rule=\"%s\"} %" PRIu64 "\n", egress_rules[r], sum[r]);
}

/*
 * Quota usage.  Principal and group names are for operators, not for
 * whoever scrapes: by default only how many subjects are at each limit.
 */
static void
render_quotas(struct server *srv, struct evbuffer *out)
{
	json_t		*list, *a, *q, *v;
	const char	*name;
	uint64_t	 at[QUOTA_N] = { 0 };
	size_t		 i;
	int		 k, named = srv->conf.server.metrics_name_principals;

	if (srv->quota == NULL)
		return;
	/* No quota in principals.yaml: no quota family at all. */
	if (json_array_size(list = quota_describe(srv->quota)) == 0) {
		json_decref(list);
		return;
	}
	family(out, "stockade_quota_subjects_at_limit", "gauge",
	    "Principals and groups whose usage has reached the quota.");
	if (named)
		family(out, "stockade_quota_used", "gauge", "Usage against "
		    "each quota (seconds, bytes, calls or sessions).");
	json_array_foreach(list, i, a) {
		q = json_object_get(a, "quotas");
		for (k = 0; k < QUOTA_N; k++) {
			if ((v = json_object_get(q, quota_names[k])) == NULL)
				continue;
			if (json_integer_value(json_object_get(v, "used")) >=
			    json_integer_value(json_object_get(v, "limit")))
				at[k]++;
			if (!named || (name = json_string_value(
			    json_object_get(a, "subject"))) == NULL)
				continue;
			evbuffer_add_printf(out, "stockade_quota_used{subject=\"");
			label_value(out, name);
			evbuffer_add_printf(out, "\",quota=\"%s\"} %" JSON_INTEGER_FORMAT
			    "\n", quota_names[k], json_integer_value(
			    json_object_get(v, "used")));
		}
	}
	for (k = 0; k < QUOTA_N; k++)
		evbuffer_add_printf(out, "stockade_quota_subjects_at_limit"
		    "{quota=\"%s\"} %" PRIu64 "\n", quota_names[k], at[k]);
	json_decref(list);
}

static void
render_all(struct server *srv, struct evbuffer *out)
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
	render_polls(out);
	render_egress(srv, out);
	render_quotas(srv, out);
}

/*
 * Every sample of raw with node="ID" as its first label, so that series of
 * a fleet's nodes never merge, however they are scraped.  Comments pass
 * as they are.
 */
static void
label_node(struct evbuffer *raw, const char *node, struct evbuffer *out)
{
	char	*line, *brace, *space;
	size_t	 n;

	while ((line = evbuffer_readln(raw, &n, EVBUFFER_EOL_LF)) != NULL) {
		brace = strchr(line, '{');
		space = strchr(line, ' ');
		if (line[0] == '#' || space == NULL)
			evbuffer_add_printf(out, "%s\n", line);
		else if (brace != NULL && brace < space) {
			evbuffer_add(out, line, (size_t)(brace - line) + 1);
			evbuffer_add_printf(out, "node=\"");
			label_value(out, node);
			evbuffer_add_printf(out, "\",%s\n", brace + 1);
		} else {
			evbuffer_add(out, line, (size_t)(space - line));
			evbuffer_add_printf(out, "{node=\"");
			label_value(out, node);
			evbuffer_add_printf(out, "\"}%s\n", space);
		}
		free(line);
	}
}

void
metrics_render(struct server *srv, struct evbuffer *out)
{
	struct evbuffer	*raw;

	/* One node stays one node: no fleet, no label. */
	if (srv->conf.fleet.node_id[0] == '\0') {
		render_all(srv, out);
		return;
	}
	if ((raw = evbuffer_new()) == NULL)
		fatalx("evbuffer_new");
	render_all(srv, raw);
	label_node(raw, srv->conf.fleet.node_id, out);
	evbuffer_free(raw);
}
