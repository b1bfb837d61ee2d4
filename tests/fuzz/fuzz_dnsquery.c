/*
 * Fuzz target for the bytes netguard's resolver reads: a sandbox's query
 * (checked, scored, refused, forwarded), then the same bytes as an
 * upstream's reply to a fixed query (matched, its chain walked, the
 * sandbox's reply rebuilt and cut to 512 bytes).
 */
#include <stdint.h>
#include <stdlib.h>

#include "dnsmsg.h"
#include "exfil.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* "example.com. IN A", id 0x1234, RD: what the reply half answers. */
static const uint8_t fixed_query[] = {
	0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
	7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0,
	0, 1, 0, 1,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct exfil_state	*st;
	struct dnsmsg_query		 q, fixed;
	struct dnsmsg_answer		 a;
	uint8_t				*wire;
	size_t				 len;
	unsigned			 sig;

	if (st == NULL)
		st = exfil_new();
	if (dnsmsg_query_parse(data, size, &q) == DNSMSG_OK) {
		(void)exfil_score(st, q.name, q.qtype, 0, &sig);
		if (dnsmsg_upstream_query(&q, 1, &wire, &len) == 0)
			free(wire);
	}
	if (dnsmsg_reply_error(&q, LDNS_RCODE_SERVFAIL, &wire, &len) == 0)
		free(wire);
	dnsmsg_query_free(&q);

	if (size < 2 || dnsmsg_query_parse(fixed_query, sizeof(fixed_query),
	    &fixed) != DNSMSG_OK)
		return 0;
	/* The id from the input, so the fuzzer need not guess it. */
	if (dnsmsg_answer_parse(data, size, &fixed,
	    (uint16_t)(data[0] << 8 | data[1]), &a) == 0) {
		if (dnsmsg_reply_answer(&fixed, &a, 60, DNSMSG_UDP_MIN, &wire,
		    &len) == 0)
			free(wire);
		dnsmsg_answer_free(&a);
	}
	dnsmsg_query_free(&fixed);
	return 0;
}
