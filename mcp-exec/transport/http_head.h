/*
 * The strict front of the HTTP transport: a bufferevent input filter that
 * checks each request head with picohttpparser before evhttp sees a byte
 * of it, and hands evhttp only heads and chunked bodies it wrote itself.
 * Trusts nothing it reads; evhttp trusts what it writes.
 *
 * Ownership: http_head_new's value is the filter's context, freed by
 * http_head_free when the filter goes (bufferevent_filter_new's free_context).
 */
#ifndef STOCKADE_HTTP_HEAD_H
#define STOCKADE_HTTP_HEAD_H

#include <stddef.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#define HTTP_HEAD_MAX		(16 * 1024)	/* one request head */
#define HTTP_HEAD_FIELDS_MAX	64		/* header fields in one head */
/*
 * The header of the request the filter puts in place of a refused one:
 * "STATUS reason".  A client's own header of this name is refused, so its
 * presence means the filter wrote it.
 */
#define HTTP_HEAD_REFUSAL	"Stockade-Refusal"

struct http_head;

/*
 * A transport's open connections: each head counts itself in while it
 * lives.  evhttp frees a connection's filter only from the loop, after
 * the transport may be gone (a stop with requests open): the transport
 * then orphans the count, and the last head to go frees it.
 */
struct http_live {
	unsigned	 n;
	int		 orphaned;
};
void		 http_live_orphan(struct http_live *);

/* refuse_status: not 0, every request of the connection gets that status. */
struct http_head *http_head_new(int refuse_status, const char *why,
		    struct http_live *);
void		 http_head_free(void *);
/* bev: the filter on sock, the socket bufferevent evhttp's fd goes to. */
void		 http_head_attach(struct http_head *, struct bufferevent *bev,
		    struct bufferevent *sock);

enum bufferevent_filter_result http_head_filter(struct evbuffer *src,
		    struct evbuffer *dst, ev_ssize_t limit,
		    enum bufferevent_flush_mode, void *head);
enum bufferevent_filter_result http_head_output(struct evbuffer *src,
		    struct evbuffer *dst, ev_ssize_t limit,
		    enum bufferevent_flush_mode, void *head);

/*
 * One request head at the start of buf (last_len: bytes of it already
 * seen incomplete, or 0): its length (> 0), 0 when more bytes are needed, or minus the HTTP status that refuses it (why says
 * why).  On success the canonical head is appended to out and *framing is
 * set: 0 no body, 1 Content-Length (*body_len), 2 chunked.
 */
int		 http_head_check(const char *buf, size_t len, size_t last_len,
		    struct evbuffer *out, int *framing, uint64_t *body_len,
		    char *why, size_t whylen);

#endif
