/*
 * Authorization of one call, before anything of it runs: is the tool
 * the caller's to use, is the profile it asks for one it may choose, and
 * is it within every quota of its principal and groups.  The caller's
 * principal and groups are the transport's (trusted); `profile` is the
 * agent's (checked against the grant).  Each refusal is a tool error and
 * a call_refused record; a quota refusal names the quota, its value and
 * when it resets.
 */
#include <stdio.h>
#include <string.h>

#include "authz.h"
#include "sessions/fleet_quota.h"
#include "sessions/session.h"
#include "tools_int.h"

static void
grant_of(struct tool_req *rq, struct authz_grant *g)
{
	authz_grant(rq->srv->authz, rq->principal, rq->client,
	    rq->srv->profile.name, g);
}

int
tool_permitted(struct tool_req *rq, const char *tool)
{
	struct authz_grant	 g;

	grant_of(rq, &g);
	if (authz_tool_ok(&g, tool))
		return 1;
	refuse(rq, tool, "tool not allowed for this principal",
	    &(struct refusal){ .rule = "authz:tools", .severity = "warning" });
	tool_error(rq, "refused: %.64s is not a tool principal %s may use "
	    "(rules/principals.yaml)", tool, rq->principal);
	return 0;
}

static void
allowed_list(const struct authz_grant *g, char *buf, size_t len)
{
	size_t		 off = 0;
	unsigned	 i;
	int		 n;

	buf[0] = '\0';
	for (i = 0; i < g->nprofiles; i++) {
		n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
		    g->profiles[i]);
		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
}

/* The quota refusal: its record carries what the client is told. */
static void
refuse_quota(struct tool_req *rq, const char *tool,
    const struct quota_verdict *v, const char *sid)
{
	char	 text[ERR_MAX], rule[64];
	json_t	*ev;

	quota_verdict_text(v, text, sizeof(text));
	snprintf(rule, sizeof(rule), "quota:%s", quota_names[v->kind]);
	ev = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s*, s:{s:s, s:s, "
	    "s:I, s:I, s:I}}", "event", "call_refused", "principal",
	    rq->principal, "reason", "quota exceeded", "tool", tool,
	    "severity", "warning", "rule_id", rule, "session_id", sid,
	    "quota", "name", quota_names[v->kind], "subject", v->subject,
	    "limit", (json_int_t)v->limit, "used", (json_int_t)v->used,
	    "resets_at", (json_int_t)v->resets);
	server_audit(rq->srv, tool_with_client(rq, ev));
	counters_call(&rq->srv->counters, tool, COUNT_REFUSED);
	tool_error(rq, "refused: %s", text);
}

/*
 * The fleet's count, after this node's (which always counts too): over
 * a fleet quota is refused like a local one; an unreachable store
 * refuses unless on_unreachable is local (fleet.c records the change).
 */
static int
fleet_authorize(struct tool_req *rq, const char *tool, const char *sid,
    struct call_grant *cg)
{
	struct quota_verdict	 v;
	char			 detail[PATH_MAX + 64];

	if ((cg->fleet = rq->srv->fleet) == NULL)
		return 0;
	switch (fleet_quota_acquire(cg->fleet, &cg->bill, sid == NULL, &cg->lease,
	    &cg->session_lease, &v)) {
	case FLEET_OVER:
		refuse_quota(rq, tool, &v, sid);
		return -1;
	case FLEET_DOWN:
		snprintf(detail, sizeof(detail), "fleet quota store %s "
		    "unreachable (on_unreachable: refuse)",
		    fleet_quota_store(cg->fleet));
		refuse(rq, tool, "fleet quota store unreachable",
		    &(struct refusal){ .rule = "fleet:unreachable",
		    .severity = "warning", .session_id = sid,
		    .detail = detail });
		tool_error(rq, "refused: %s", detail);
		return -1;
	default:
		return 0;
	}
}

int
tool_authorize(struct tool_req *rq, const char *tool, const char *profile,
    const char *sid, struct call_grant *cg)
{
	struct authz_grant	 g;
	struct quota_verdict	 v;
	const char		*want;
	char			 list[512];

	grant_of(rq, &g);
	memset(cg, 0, sizeof(*cg));
	want = profile != NULL ? profile : g.profiles[0];
	if (profile != NULL && sid != NULL) {
		counters_call(&rq->srv->counters, tool, COUNT_ERROR);
		refuse_record(rq, tool, "bad arguments", &(struct refusal){
		    .session_id = sid, .detail = "profile with session_id" });
		tool_error(rq, "profile: a session keeps the profile it was "
		    "made with; pass profile only without session_id");
		return -1;
	}
	allowed_list(&g, list, sizeof(list));
	if (profile != NULL && (!g.choose || !authz_profile_ok(&g, want))) {
		refuse(rq, tool, "profile not allowed for this principal",
		    &(struct refusal){ .rule = "authz:profile",
		    .severity = "warning" });
		if (!g.choose)
			tool_error(rq, "refused: principal %s may not choose a "
			    "profile (its profile is %s)", rq->principal,
			    g.profiles[0]);
		else
			tool_error(rq, "refused: profile %.64s is not one "
			    "principal %s may use (allowed: %s)", want,
			    rq->principal, list);
		return -1;
	}
	if ((cg->prof = server_profile(rq->srv, want)) == NULL) {
		/* Loaded with the rules that named it: cannot happen. */
		refuse_record(rq, tool, "profile not loaded",
		    &(struct refusal){ .session_id = sid });
		tool_error(rq, "profile %.64s is not loaded", want);
		return -1;
	}
	cg->bill = g.bill;
	if (rq->srv->quota != NULL && quota_check(rq->srv->quota, &cg->bill,
	    sid == NULL, &v) == -1) {
		refuse_quota(rq, tool, &v, sid);
		return -1;
	}
	return fleet_authorize(rq, tool, sid, cg);
}
