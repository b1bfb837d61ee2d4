/*
 * Fuzz target for netguard's conntrack event parse: one ctnetlink message
 * as flow.c receives it.  The kernel writes it, but its tuple, counters
 * and mark describe traffic the sandbox chose.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flow	 f;
	void		*copy;

	/* Aligned, as a netlink receive buffer is. */
	if ((copy = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	(void)flow_parse(copy, size, &f);
	free(copy);
	return 0;
}
