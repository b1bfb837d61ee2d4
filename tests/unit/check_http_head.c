/*
 * The HTTP head check: picohttpparser's answers through our declarations
 * of its API (Debian ships the library, not the header), the refusals RFC
 * 9112 asks for, and the filter's rewriting of heads and chunked bodies.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "testutil.h"
#include "transport/http_head.h"

static int
check(const char *head, int *framing, uint64_t *cl, char *out, size_t outlen)
{
	struct evbuffer	*b = evbuffer_new();
	char		 why[128];
	int		 r;
	size_t		 n;

	r = http_head_check(head, strlen(head), 0, b, framing, cl, why,
	    sizeof(why));
	n = evbuffer_get_length(b);
	if (out != NULL) {
		n = n < outlen - 1 ? n : outlen - 1;
		evbuffer_remove(b, out, n);
		out[n] = '\0';
	}
	evbuffer_free(b);
	return r;
}

START_TEST(test_head_parsed_and_rewritten)
{
	const char	*h = "POST /mcp HTTP/1.1\r\nHost: h\r\nX-A:  v \r\n"
	    "Content-Length: 12\r\n\r\nbody";
	char		 out[256];
	uint64_t	 cl;
	int		 framing;

	ck_assert_int_eq(check(h, &framing, &cl, out, sizeof(out)),
	    (int)strlen(h) - 4);
	ck_assert_int_eq(framing, 1);
	ck_assert_uint_eq(cl, 12);
	ck_assert_str_eq(out, "POST /mcp HTTP/1.1\r\nHost: h\r\nX-A: v\r\n"
	    "Content-Length: 12\r\n\r\n");
	ck_assert_int_eq(check("GET /mcp HTTP/1.1\r\nHost: h\r\n", &framing,
	    &cl, NULL, 0), 0);
}
END_TEST

static const struct {
	const char	*head;
	int		 status;
} refused[] = {
	{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n"
	    "Content-Length: 2\r\n\r\n", 400 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +1\r\n\r\n", 400 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1 2\r\n\r\n", 400 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: "
	    "9999999999999999999\r\n\r\n", 400 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding : chunked\r\n"
	    "Content-Length: 1\r\n\r\n", 400 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked"
	    "\r\n\r\n", 501 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
	    "Content-Length: 1\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost: h\r\nX: \x7f\r\n\r\n", 400 },
	{ "GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\n\r\n", 400 },
	{ "HEAD / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n", 400 },
	{ "BREW / HTTP/1.1\r\nHost: h\r\n\r\n", 501 },
	{ "GET / HTTP/1.1\r\nHost: h\r\n" HTTP_HEAD_REFUSAL ": 1\r\n\r\n", 400 },
};

START_TEST(test_head_refusals)
{
	uint64_t	 cl;
	int		 framing;

	ck_assert_int_eq(check(refused[_i].head, &framing, &cl, NULL, 0),
	    -refused[_i].status);
}
END_TEST

START_TEST(test_filter_reencodes_chunked_and_stops_after_refusal)
{
	const char	*in = "POST /mcp HTTP/1.1\r\nHost: h\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n"
	    "0\r\nTrailer: t\r\n\r\nGET / HTTP/1.1\r\nX: \x01\r\n\r\n"
	    "GET /never HTTP/1.1\r\nHost: h\r\n\r\n";
	struct evbuffer	*src = evbuffer_new(), *dst = evbuffer_new();
	struct http_head *hh;
	struct http_live live = { 0, 0 };
	char		 out[512];
	size_t		 i, n;

	hh = http_head_new(0, NULL, &live);
	ck_assert_uint_eq(live.n, 1);
	/* A byte at a time: the decoder's state must carry over. */
	for (i = 0; i < strlen(in); i++) {
		evbuffer_add(src, in + i, 1);
		http_head_filter(src, dst, -1, BEV_NORMAL, hh);
	}
	n = evbuffer_get_length(dst);
	ck_assert_uint_lt(n, sizeof(out));
	evbuffer_remove(dst, out, n);
	out[n] = '\0';
	ck_assert_ptr_nonnull(strstr(out, "1\r\na\r\n1\r\nb\r\n"));
	ck_assert_ptr_nonnull(strstr(out, "0\r\n\r\nGET / HTTP/1.1\r\n"
	    HTTP_HEAD_REFUSAL ": 400 "));
	ck_assert_ptr_null(strstr(out, "Trailer"));
	ck_assert_ptr_null(strstr(out, "/never"));
	http_head_free(hh);
	ck_assert_uint_eq(live.n, 0);
	evbuffer_free(src);
	evbuffer_free(dst);
}
END_TEST

static Suite *
http_head_suite(void)
{
	Suite	*s = suite_create("http_head");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_head_parsed_and_rewritten);
	tcase_add_loop_test(tc, test_head_refusals, 0, (int)nitems(refused));
	tcase_add_test(tc, test_filter_reencodes_chunked_and_stops_after_refusal);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(http_head_suite)
