/*
 * Fuzz target for what a sandbox controls in netguard's NFLOG reader: the
 * denied packet's bytes inside a DLT_NFLOG record.
 */
#include <stdint.h>
#include <string.h>

#include "nflog.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_decref(nflog_parse(data, size));
	return 0;
}
