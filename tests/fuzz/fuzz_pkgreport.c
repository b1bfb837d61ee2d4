/*
 * Fuzz target for pip's installation report as a session's package layer
 * holds it (sessions/packages.c): written by sandboxed code, so anything.
 */
#include <stdint.h>
#include <string.h>

#include "sessions/packages.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pkg_layer	 pl;

	memset(&pl, 0, sizeof(pl));
	pl.on = 1;
	if ((pl.hashes = json_object()) == NULL)
		return 0;
	packages_report_parse(&pl, (const char *)data, size);
	packages_free(&pl);
	return 0;
}
