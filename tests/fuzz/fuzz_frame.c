/*
 * Fuzz target for what a daemon reads from a peer: a frame header and its
 * payload, then, for a parsed append, the event schema check.
 */
#include <stdint.h>
#include <string.h>

#include "event.h"
#include "frame.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t	*msg;
	char	 err[256];
	size_t	 len;

	if (size < FRAME_HDR_LEN ||
	    frame_header(data, 64 * 1024, &len) == -1 ||
	    len > size - FRAME_HDR_LEN)
		return 0;
	if ((msg = frame_parse(data + FRAME_HDR_LEN, len, err,
	    sizeof(err))) == NULL)
		return 0;
	(void)event_validate(json_object_get(msg, "event"), err, sizeof(err));
	json_decref(msg);
	return 0;
}
