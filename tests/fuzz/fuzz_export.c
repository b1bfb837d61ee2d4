/*
 * libFuzzer target for cli/export*.c: parses arbitrary bytes as one audit
 * log line, as `stockade audit export` does, and maps each object to every
 * format, with and without a hostname.  Trusts nothing in the input:
 * refusals are expected; crashes, leaks and broken export.h promises are not.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "export.h"
#include "util.h"

#define FUZZ_HOSTNAME	"sandbox-01.example.net"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const enum export_format fuzz_formats[] = {
	EXPORT_ECS, EXPORT_OCSF, EXPORT_HEC,
};

static const char *const fuzz_hostnames[] = { FUZZ_HOSTNAME, NULL };

/* Every format and hostname; whether a record maps rests on its framing. */
static void
fuzz_map(const json_t *rec)
{
	json_t	*out;
	char	*s;
	size_t	 f, h;
	int	 mapped = -1;

	for (h = 0; h < nitems(fuzz_hostnames); h++) {
		for (f = 0; f < nitems(fuzz_formats); f++) {
			out = export_record(fuzz_formats[f], rec,
			    fuzz_hostnames[h]);
			if (mapped != -1 && mapped != (out != NULL))
				__builtin_trap();
			mapped = out != NULL;
			if (out == NULL)
				continue;
			/* What the exporter prints must dump. */
			if ((s = json_dumps(out, EXPORT_DUMP_FLAGS)) == NULL)
				__builtin_trap();
			free(s);
			json_decref(out);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t	*rec, *before;

	/* Flags 0: cli/audit.c reads each log line the same way. */
	if ((rec = json_loadb((const char *)data, size, 0, NULL)) == NULL)
		return 0;
	if (json_is_object(rec)) {
		if ((before = json_deep_copy(rec)) == NULL)
			__builtin_trap();
		fuzz_map(rec);
		/* export.h: the record is borrowed, not modified. */
		if (!json_equal(rec, before))
			__builtin_trap();
		json_decref(before);
	}
	json_decref(rec);
	return 0;
}
