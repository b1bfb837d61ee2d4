/*
 * Fuzz target for the HTTP request path before evhttp: the bytes of one
 * connection, cut into pieces where the first byte says, through
 * http_head.c's filter, then what the filter handed evhttp is checked to
 * be only heads it can re-read the same way, with bodies framed as said.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "transport/http_head.h"
#include "log.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Every head the filter wrote must pass the check again, unchanged. */
static void
recheck(struct evbuffer *out)
{
	struct evbuffer	*again = evbuffer_new();
	size_t		 n = evbuffer_get_length(out);
	const char	*p;
	uint64_t	 cl;
	char		 why[128];
	int		 r, framing;

	if (again == NULL || n == 0)
		goto done;
	p = (const char *)evbuffer_pullup(out, -1);
	r = http_head_check(p, n, 0, again, &framing, &cl, why, sizeof(why));
	/* The refusal marker is the only head of ours the check refuses. */
	if (r < 0 && memmem(p, n, HTTP_HEAD_REFUSAL,
	    strlen(HTTP_HEAD_REFUSAL)) == NULL)
		abort();
	if (r > 0 && (evbuffer_get_length(again) != (size_t)r ||
	    memcmp(evbuffer_pullup(again, -1), p, (size_t)r) != 0))
		abort();
done:
	if (again != NULL)
		evbuffer_free(again);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_head	*hh;
	struct evbuffer		*src, *dst;
	size_t			 step, off;
	struct http_live	 live = { 0, 0 };

	if (size < 1)
		return 0;
	log_init("fuzz_http", 1, 0);
	step = (size_t)data[0] + 1;
	data++;
	size--;
	if ((src = evbuffer_new()) == NULL || (dst = evbuffer_new()) == NULL)
		abort();
	hh = http_head_new(0, NULL, &live);
	for (off = 0; off < size; off += step) {
		evbuffer_add(src, data + off, size - off < step ? size - off :
		    step);
		(void)http_head_filter(src, dst, -1, BEV_NORMAL, hh);
	}
	recheck(dst);
	http_head_free(hh);
	if (live.n != 0)
		abort();
	evbuffer_free(src);
	evbuffer_free(dst);
	return 0;
}
