/*
 * Denied packets: nft's deny chains log to an NFLOG group in each sandbox
 * namespace; libpcap reads that group there ("nflog:GROUP", activated on
 * a thread inside the namespace) and each packet becomes one denial.
 */
#ifndef NETGUARD_NFLOG_H
#define NETGUARD_NFLOG_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

/*
 * One denial (stolen): {"rule", "family", "protocol", "src", "dst"} and
 * "dport" for tcp and udp.
 */
typedef void nflog_fn(void *owner, json_t *denial);

struct nflog;

struct nflog	*nflog_open(struct event_base *, int nsfd, unsigned group,
		    nflog_fn *, void *owner, char *err, size_t errlen);
void		 nflog_close(struct nflog *);
/*
 * Parses one DLT_NFLOG record (exposed for tests and the fuzzer): a new
 * denial or NULL when the record is not one of netguard's.
 */
json_t		*nflog_parse(const uint8_t *data, size_t len);

#endif
