/*
 * Fuzz target for the in-flight journal's reader (sessions/inflight.c):
 * a dead server's file is read at the next start, and a torn or damaged
 * one must be passed over line by line, never read past its end.
 */
#include <stdint.h>

#include "sessions/inflight.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_decref(inflight_parse((const char *)data, size));
	return 0;
}
