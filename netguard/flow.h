/*
 * Connections that ended in a sandbox's namespace: ctnetlink DESTROY
 * events read there (libnetfilter_conntrack parses them), with the byte
 * and packet counts and timestamps conntrack keeps once flow_open has
 * turned accounting on in that namespace.  Only flows carrying one of
 * netguard's allow marks (nft.h) are reported.  A TCP connection ends
 * when it closes (UPDATE to TIME_WAIT or CLOSE: the entry is deleted so
 * its DESTROY comes at once); any other when conntrack forgets it (UDP:
 * 30 s after its last packet, 120 s for a stream, then up to a minute of
 * conntrack's garbage collection), or at a detach.
 */
#ifndef NETGUARD_FLOW_H
#define NETGUARD_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#define FLOW_RCVBUF		(1024 * 1024)	/* event backlog, bytes */
#define FLOW_DISPATCH_MAX	64		/* datagrams per wake-up */

/* One ended connection, as conntrack saw it from the sandbox's side. */
struct flow {
	int		 family;	/* AF_INET or AF_INET6 */
	uint8_t		 proto;		/* IPPROTO_* */
	uint8_t		 src[16], dst[16];	/* network order */
	bool		 ports;		/* tcp, udp, sctp: sport and dport */
	uint16_t	 sport, dport;	/* host order */
	uint64_t	 bytes_out, packets_out;	/* sandbox -> peer */
	uint64_t	 bytes_in, packets_in;		/* peer -> sandbox */
	uint32_t	 mark;		/* NFT_MARK_* */
	/* Wall clock, ns since the epoch, 0 when conntrack had no stamps;
	 * end is when conntrack let go of it (see above). */
	uint64_t	 start_ns, end_ns;
};

/* Called for each marked flow; f is borrowed for the call. */
typedef void flow_fn(void *owner, const struct flow *f);

struct flow_reader;

/*
 * Turns on accounting and timestamps in nsfd (namespace-local sysctls;
 * the host's stay as they are) and subscribes to conntrack's DESTROY and
 * UPDATE events there.  NULL with err.
 */
struct flow_reader	*flow_open(struct event_base *, int nsfd, flow_fn *,
			    void *owner, char *err, size_t errlen);
/* Reads what is queued now, without waiting (before a detach). */
void			 flow_drain(struct flow_reader *);
/* Times the kernel dropped events since the last call (ENOBUFS). */
uint64_t		 flow_overruns(struct flow_reader *);
void			 flow_close(struct flow_reader *);

/*
 * Parses one ctnetlink message into f: 1 a marked flow's end, 0 not one
 * of ours (other message, no mark), -1 malformed.  For tests and fuzzing.
 */
int			 flow_parse(const void *nlmsg, size_t len,
			    struct flow *f);

#endif
