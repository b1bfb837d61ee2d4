/*
 * Fuzz target for everything that reads audit log bytes: the verifier on
 * the input as one log file, and the checkpoint line and fleet witness
 * line parsers on each line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "verify.h"
#include "witness.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct verify_opts	 o;
	struct verify_report	 r;
	struct checkpoint	 cp;
	const char		*p = (const char *)data, *nl, *why;
	size_t			 off = 0;

	memset(&o, 0, sizeof(o));
	(void)verify_buffer("audit-00000000000000000001.log", p, size, &o, &r);
	while (off < size && (nl = memchr(p + off, '\n', size - off)) != NULL) {
		(void)checkpoint_from_line(p + off, (size_t)(nl - p - off), &cp,
		    &why);
		(void)witness_line(p + off, (size_t)(nl - p - off), &cp, &why);
		off = (size_t)(nl - p) + 1;
	}
	return 0;
}
