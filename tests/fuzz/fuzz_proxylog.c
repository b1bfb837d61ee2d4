/*
 * Fuzz target for what a sandbox steers in the egress proxy's access log
 * (netguard/proxy_log.c): one line as Squid wrote it for a request the
 * sandbox made, its path and method the sandbox's choice.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proxy_record	 r;
	char			*line;

	/* A line, as the reader hands it over: no NUL inside. */
	if ((line = malloc(size + 1)) == NULL)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	(void)proxy_log_parse(line, &r);
	free(line);
	return 0;
}
