/*
 * Per-sandbox flow records: names from the resolver's pins, the rule from
 * the conntrack mark, a token bucket, summaries of the excess.  Trusts
 * flow.c's parse; everything here is fixed-size (FLOWLOG_NAMES_MAX names,
 * one bucket, one summary), whatever the sandbox does.
 */
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flowlog.h"
#include "log.h"
#include "nft.h"
#include "policy.h"
#include "util.h"

#define MS_PER_TOKEN	1000	/* the bucket counts thousandths */
#define NS_PER_MS	1000000ull
#define NS_PER_S	1000000000ull

struct flowlog_name {
	int		 family;	/* 0: free */
	uint8_t		 addr[16];
	uint64_t	 pinned_ms;	/* the oldest is replaced when full */
	char		 name[DNS_NAME_MAX + 1];
};

struct flowlog {
	struct flowlog_conf	 conf;
	flowlog_emit_fn		*emit;
	flowlog_lost_fn		*lost;
	void			*owner;
	struct event		*timer;
	struct flowlog_name	 names[FLOWLOG_NAMES_MAX];
	uint64_t		 tokens;	/* thousandths of a record */
	uint64_t		 refilled_ms;
	/* Summarised since the last summary. */
	uint64_t		 flows, bytes_out, bytes_in, packets_out,
				 packets_in, dropped;
	char			 since[TS_LEN + 1];
};

static void
flowlog_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	flowlog_summary(arg);
}

struct flowlog *
flowlog_new(struct event_base *base, const struct flowlog_conf *conf,
    flowlog_emit_fn *emit, flowlog_lost_fn *lost, void *owner)
{
	struct flowlog	*fl = xcalloc(1, sizeof(*fl));
	struct timeval	 tv;

	fl->conf = *conf;
	if (fl->conf.summary_s == 0)
		fl->conf.summary_s = 1;
	fl->emit = emit;
	fl->lost = lost;
	fl->owner = owner;
	fl->tokens = (uint64_t)fl->conf.rate * MS_PER_TOKEN;
	fl->refilled_ms = mono_ms();
	ts_now(fl->since);
	tv.tv_sec = fl->conf.summary_s;
	tv.tv_usec = 0;
	if ((fl->timer = event_new(base, -1, EV_PERSIST, flowlog_timer_cb,
	    fl)) == NULL || event_add(fl->timer, &tv) == -1)
		fatalx("flowlog: timer");
	return fl;
}

void
flowlog_free(struct flowlog *fl)
{
	if (fl == NULL)
		return;
	flowlog_summary(fl);
	event_free(fl->timer);
	free(fl);
}

void
flowlog_pin(struct flowlog *fl, int family, const void *addr,
    const char *name)
{
	struct flowlog_name	*n, *slot = NULL;
	size_t			 i, alen = family == AF_INET ? 4 : 16;

	if (fl == NULL || (family != AF_INET && family != AF_INET6))
		return;
	for (i = 0; i < FLOWLOG_NAMES_MAX; i++) {
		n = &fl->names[i];
		if (n->family == family && memcmp(n->addr, addr, alen) == 0) {
			slot = n;	/* the latest name of an address */
			break;
		}
		if (slot == NULL || (slot->family != 0 && (n->family == 0 ||
		    n->pinned_ms < slot->pinned_ms)))
			slot = n;
	}
	memset(slot, 0, sizeof(*slot));
	slot->family = family;
	memcpy(slot->addr, addr, alen);
	slot->pinned_ms = mono_ms();
	(void)snprintf(slot->name, sizeof(slot->name), "%s", name);
}

static const char *
flowlog_name(const struct flowlog *fl, const struct flow *f)
{
	size_t	 i, alen = f->family == AF_INET ? 4 : 16;

	for (i = 0; i < FLOWLOG_NAMES_MAX; i++)
		if (fl->names[i].family == f->family &&
		    memcmp(fl->names[i].addr, f->dst, alen) == 0)
			return fl->names[i].name;
	return NULL;
}

const char *
flowlog_rule(uint32_t mark, char *buf, size_t len, int *group)
{
	uint32_t	 low = mark & 0xffffu;

	if ((mark & 0xffff0000u) != NFT_MARK_BASE || low == 0)
		return NULL;
	if (mark == NFT_MARK_L3) {
		*group = -1;
		return "L3";
	}
	*group = (int)low - 1;
	(void)snprintf(buf, len, "allow[%d]", *group);
	return buf;
}

/* A token for one record, refilled at rate per second up to rate. */
static int
flowlog_take(struct flowlog *fl)
{
	uint64_t	 now = mono_ms(), cap;

	cap = (uint64_t)fl->conf.rate * MS_PER_TOKEN;
	fl->tokens += (now - fl->refilled_ms) * fl->conf.rate;
	if (fl->tokens > cap)
		fl->tokens = cap;
	fl->refilled_ms = now;
	if (fl->tokens < MS_PER_TOKEN)
		return 0;
	fl->tokens -= MS_PER_TOKEN;
	return 1;
}

static void
put_ts(json_t *o, const char *key, uint64_t ns)
{
	struct timespec	 ts;
	char		 buf[TS_LEN + 1];

	ts.tv_sec = (time_t)(ns / NS_PER_S);
	ts.tv_nsec = (long)(ns % NS_PER_S);
	ts_format(&ts, buf);
	json_object_set_new(o, key, json_string(buf));
}

/* A flow in the audit schema's words (docs/audit-events.md). */
static json_t *
flowlog_record(const struct flowlog *fl, const struct flow *f)
{
	char		 src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	char		 pb[8], rb[32];
	const char	*name, *rule;
	json_t		*o;
	int		 group = -1;

	if (inet_ntop(f->family, f->src, src, sizeof(src)) == NULL ||
	    inet_ntop(f->family, f->dst, dst, sizeof(dst)) == NULL)
		fatal("inet_ntop");
	rule = flowlog_rule(f->mark, rb, sizeof(rb), &group);
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I}",
	    "protocol", ip_proto_name(f->proto, pb, sizeof(pb)), "family",
	    f->family == AF_INET ? "ipv4" : "ipv6", "src_ip", src, "dst_ip",
	    dst, "rule", rule != NULL ? rule : "?", "bytes_out",
	    (json_int_t)f->bytes_out, "packets_out",
	    (json_int_t)f->packets_out, "bytes_in", (json_int_t)f->bytes_in,
	    "packets_in", (json_int_t)f->packets_in);
	if (group >= 0)
		json_object_set_new(o, "group", json_integer(group));
	if (f->ports) {
		json_object_set_new(o, "src_port", json_integer(f->sport));
		json_object_set_new(o, "dst_port", json_integer(f->dport));
	}
	if ((name = flowlog_name(fl, f)) != NULL)
		json_object_set_new(o, "name", json_string(name));
	if (f->start_ns != 0) {
		put_ts(o, "start", f->start_ns);
		put_ts(o, "end", f->end_ns);
		json_object_set_new(o, "duration_ms", json_integer(
		    (json_int_t)((f->end_ns - f->start_ns) / NS_PER_MS)));
	}
	return o;
}

void
flowlog_flow(struct flowlog *fl, const struct flow *f)
{
	if (flowlog_take(fl)) {
		fl->emit(fl->owner, flowlog_record(fl, f), "egress_flow");
		return;
	}
	fl->flows++;
	fl->bytes_out += f->bytes_out;
	fl->bytes_in += f->bytes_in;
	fl->packets_out += f->packets_out;
	fl->packets_in += f->packets_in;
}

void
flowlog_summary(struct flowlog *fl)
{
	char	 now[TS_LEN + 1];

	fl->dropped += fl->lost(fl->owner);
	ts_now(now);
	if (fl->flows == 0 && fl->dropped == 0) {
		memcpy(fl->since, now, sizeof(now));
		return;
	}
	fl->emit(fl->owner, json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:s, "
	    "s:s}", "summarised", (json_int_t)fl->flows, "bytes_out",
	    (json_int_t)fl->bytes_out, "bytes_in", (json_int_t)fl->bytes_in,
	    "packets_out", (json_int_t)fl->packets_out, "packets_in",
	    (json_int_t)fl->packets_in, "lost", (json_int_t)fl->dropped,
	    "start", fl->since, "end", now), "egress_flow_summary");
	fl->flows = fl->bytes_out = fl->bytes_in = 0;
	fl->packets_out = fl->packets_in = fl->dropped = 0;
	memcpy(fl->since, now, sizeof(now));
}
