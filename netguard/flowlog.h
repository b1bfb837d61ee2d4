/*
 * A sandbox's flow records: each ended flow (flow.h) in the audit
 * schema's words, with the name it was resolved from (the resolver's
 * pins, remembered here) and the rule that let it out; rate-limited by
 * a token bucket, the excess counted into periodic summaries.
 */
#ifndef NETGUARD_FLOWLOG_H
#define NETGUARD_FLOWLOG_H

#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "flow.h"

#define FLOWLOG_NAMES_MAX	256	/* pinned addresses remembered */

struct flowlog_conf {
	unsigned	 rate;		/* records per second, also the burst;
					   0: every flow is summarised */
	unsigned	 summary_s;	/* a summary at most this often */
};

/* An event's fields (stolen) and its name: egress_flow, egress_flow_summary. */
typedef void flowlog_emit_fn(void *owner, json_t *fields, const char *event);
/* How many events the kernel dropped since the last call (flow.h). */
typedef uint64_t flowlog_lost_fn(void *owner);

struct flowlog;

struct flowlog	*flowlog_new(struct event_base *, const struct flowlog_conf *,
		    flowlog_emit_fn *, flowlog_lost_fn *, void *owner);
/* The summary of what is pending, if anything, then gone. */
void		 flowlog_free(struct flowlog *);
/* The resolver pinned addr (network order) for name. */
void		 flowlog_pin(struct flowlog *, int family, const void *addr,
		    const char *name);
/* One ended flow: a record, or counted into the next summary. */
void		 flowlog_flow(struct flowlog *, const struct flow *);
/* Emits the pending summary now (a detach; the periodic timer). */
void		 flowlog_summary(struct flowlog *);

/* The rule a mark names ("allow[2]", "L3"), or NULL; group: -1 for L3. */
const char	*flowlog_rule(uint32_t mark, char *buf, size_t len, int *group);

#endif
