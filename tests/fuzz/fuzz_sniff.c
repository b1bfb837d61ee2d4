/*
 * Fuzz target for artifact type sniffing: the input as a whole file and as
 * a prefix.  The answer must be a known type or -1, and a prefix may only
 * be more permissive than the whole file, never less.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sandbox/artifacts.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t	 plen = size < ARTIFACT_SNIFF_LEN ? size : ARTIFACT_SNIFF_LEN;
	int	 whole, prefix, window;

	whole = artifact_sniff(data, size, 1);
	prefix = artifact_sniff(data, size, 0);
	window = artifact_sniff(data, plen, 0);
	if (whole < -1 || whole >= ART_NTYPES || prefix < -1 ||
	    prefix >= ART_NTYPES || window < -1 || window >= ART_NTYPES) {
		fprintf(stderr, "fuzz_sniff: type out of range\n");
		abort();
	}
	/* Bytes that are text as a whole file are text as a prefix too. */
	if (whole != -1 && (prefix == -1 || window == -1)) {
		fprintf(stderr, "fuzz_sniff: whole file %d, prefix %d, "
		    "window %d\n", whole, prefix, window);
		abort();
	}
	(void)artifact_type_name(whole);
	(void)artifact_mime(prefix);
	return 0;
}
