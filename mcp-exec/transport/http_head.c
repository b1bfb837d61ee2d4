/*
 * Checks every request head on an HTTP connection before evhttp reads it.
 * evhttp is lenient where RFC 9112 is not (it takes the first of two
 * Content-Lengths, "+5" as 5, obs-fold, a NUL-truncated value, a field
 * name with a space before the colon), and a lenient server behind a proxy
 * that reads the same bytes differently is request smuggling.  So the
 * bytes are tokenized by picohttpparser (from Debian's libh2o), checked
 * here, and evhttp is handed a head rewritten from the tokens and chunked
 * bodies re-encoded from what the decoder read: evhttp never parses a
 * byte the client chose the framing of.  The first refused head ends the
 * connection: nothing after it is read, so a request pipelined behind a
 * bad one cannot slip through.  Input: untrusted bytes from the socket.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/util.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "http_head.h"
#include "log.h"
#include "util.h"

#define HEAD_CL_DIGITS_MAX	18	/* fits an int64 */
#define HEAD_CHUNK_STEP		(16 * 1024)	/* body bytes decoded at once */
#define HEAD_TLS_WRITE_MAX	(16 * 1024)	/* one TLS record's worth */

/*
 * picohttpparser's API.  Debian's libh2o exports these symbols but does
 * not install picohttpparser.h; the layouts are checked against the
 * library in tests/unit/check_http_head.c (h2o 2.2.5, libh2o-evloop0.13).
 */
struct phr_header {
	const char	*name;
	size_t		 name_len;
	const char	*value;
	size_t		 value_len;
};

struct phr_chunked_decoder {
	size_t		 bytes_left_in_chunk;
	char		 consume_trailer;
	char		 hex_count;
	char		 state;
};

int	phr_parse_request(const char *, size_t, const char **, size_t *,
	    const char **, size_t *, int *, struct phr_header *, size_t *,
	    size_t);
ssize_t	phr_decode_chunked(struct phr_chunked_decoder *, char *, size_t *);

enum head_state {
	HEAD_READING,	/* waiting for a whole request head */
	HEAD_BODY,	/* passing Content-Length bytes */
	HEAD_CHUNKED,	/* decoding and re-encoding a chunked body */
	HEAD_REFUSING,	/* the next read puts the refusal in */
	HEAD_DEAD	/* refused: everything else is dropped */
};

struct http_head {
	enum head_state			 state;
	uint64_t			 left;
	struct phr_chunked_decoder	 dec;
	size_t				 last_len;	/* head bytes already seen */
	int				 status;
	char				 why[128];
	struct http_live		*live;
	struct bufferevent		*bev, *sock;	/* filter, socket */
	struct event			*writable;	/* sock's fd */
	struct event			*kick;		/* output added */
	struct evbuffer_cb_entry	*outcb;
};

/* The methods evhttp reads a body for, and those it never does. */
static const struct {
	const char	*name;
	int		 body;
} head_methods[] = {
	{ "GET", 1 }, { "POST", 1 }, { "PUT", 1 }, { "DELETE", 1 },
	{ "OPTIONS", 1 }, { "PATCH", 1 }, { "HEAD", 0 }, { "TRACE", 0 },
};

/* RFC 9110 §5.6.2 tchar. */
static int
head_token(const char *s, size_t n)
{
	static const char tchar[] = "!#$%&'*+-.^_`|~0123456789"
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	size_t	 i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] == '\0' || strchr(tchar, s[i]) == NULL)
			return 0;
	return 1;
}

/* Field values: visible ASCII, obs-text, SP and HTAB; no CTL, no NUL. */
static int
head_value_ok(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		unsigned char	 c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return 0;
	}
	return 1;
}

/* Origin-form (or "*" for OPTIONS): visible ASCII only. */
static int
head_target_ok(const char *m, size_t mlen, const char *p, size_t plen)
{
	size_t	 i;

	if (plen == 1 && p[0] == '*')
		return mlen == 7 && memcmp(m, "OPTIONS", 7) == 0;
	if (plen == 0 || p[0] != '/')
		return 0;
	for (i = 0; i < plen; i++)
		if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f)
			return 0;
	return 1;
}

static int
head_name_is(const struct phr_header *h, const char *name)
{
	size_t	 n = strlen(name);

	return h->name_len == n && evutil_ascii_strncasecmp(h->name, name,
	    n) == 0;
}

static int
head_refuse(char *why, size_t whylen, int status, const char *text)
{
	snprintf(why, whylen, "%s", text);
	return -status;
}

int
http_head_check(const char *buf, size_t len, size_t last_len,
    struct evbuffer *out, int *framing, uint64_t *body_len, char *why,
    size_t whylen)
{
	struct phr_header	 h[HTTP_HEAD_FIELDS_MAX];
	size_t			 nh = nitems(h), mlen, plen, i;
	const char		*m, *p;
	char			 digits[HEAD_CL_DIGITS_MAX + 1];
	int			 minor, n, ncl = 0, nte = 0, nhost = 0, body = -1;

	*framing = 0;
	*body_len = 0;
	/* last_len: only the new bytes are searched for the end of the head. */
	n = phr_parse_request(buf, len, &m, &mlen, &p, &plen, &minor, h, &nh,
	    last_len);
	if (n == -2)
		return len >= HTTP_HEAD_MAX ? head_refuse(why, whylen, 431,
		    "request head too large") : 0;
	if (n < 0)
		return head_refuse(why, whylen, 400, "malformed request head "
		    "(or more header fields than we take)");
	if ((size_t)n > HTTP_HEAD_MAX)
		return head_refuse(why, whylen, 431, "request head too large");
	for (i = 0; i < nitems(head_methods); i++)
		if (strlen(head_methods[i].name) == mlen &&
		    memcmp(head_methods[i].name, m, mlen) == 0)
			body = head_methods[i].body;
	if (body == -1)
		return head_refuse(why, whylen, 501, "method not implemented");
	if (!head_target_ok(m, mlen, p, plen))
		return head_refuse(why, whylen, 400, "request target is not "
		    "an absolute path");
	for (i = 0; i < nh; i++) {
		/* A NULL name is a continuation line (obs-fold). */
		if (h[i].name == NULL || !head_token(h[i].name, h[i].name_len))
			return head_refuse(why, whylen, 400, "malformed header "
			    "field name (or a folded line)");
		/* RFC 9110 §5.5: trailing OWS is not part of the value. */
		while (h[i].value_len > 0 &&
		    (h[i].value[h[i].value_len - 1] == ' ' ||
		    h[i].value[h[i].value_len - 1] == '\t'))
			h[i].value_len--;
		if (!head_value_ok(h[i].value, h[i].value_len))
			return head_refuse(why, whylen, 400, "control byte in "
			    "a header field value");
		if (head_name_is(&h[i], HTTP_HEAD_REFUSAL))
			return head_refuse(why, whylen, 400, "reserved header "
			    "field");
		if (head_name_is(&h[i], "Host"))
			nhost++;
		if (head_name_is(&h[i], "Transfer-Encoding")) {
			/* Only the lone "chunked": no coding is applied. */
			if (nte++ > 0 || h[i].value_len != 7 ||
			    evutil_ascii_strncasecmp(h[i].value, "chunked",
			    7) != 0)
				return head_refuse(why, whylen, 501, "the only "
				    "transfer coding taken is a lone chunked");
		}
		if (head_name_is(&h[i], "Content-Length")) {
			/* RFC 9112 §6.3: one value, 1*DIGIT. */
			if (ncl++ > 0)
				return head_refuse(why, whylen, 400, "more "
				    "than one Content-Length");
			if (h[i].value_len == 0 || h[i].value_len >
			    HEAD_CL_DIGITS_MAX)
				return head_refuse(why, whylen, 400, "invalid "
				    "Content-Length");
			memcpy(digits, h[i].value, h[i].value_len);
			digits[h[i].value_len] = '\0';
			if (strspn(digits, "0123456789") != h[i].value_len ||
			    parse_u64(digits, 0, INT64_MAX, body_len) == -1)
				return head_refuse(why, whylen, 400, "invalid "
				    "Content-Length");
		}
	}
	if (nhost > 1 || (minor >= 1 && nhost == 0))
		return head_refuse(why, whylen, 400, "exactly one Host field "
		    "is required");
	if (nte > 0 && (ncl > 0 || minor == 0))
		return head_refuse(why, whylen, 400, "Transfer-Encoding with "
		    "Content-Length, or in HTTP/1.0");
	if (nte > 0)
		*framing = 2;
	else if (*body_len > 0)
		*framing = 1;
	/* evhttp reads no body for these: the bytes would be a request. */
	if (!body && *framing != 0)
		return head_refuse(why, whylen, 400, "this method takes no "
		    "body");
	evbuffer_add(out, m, mlen);
	evbuffer_add(out, " ", 1);
	evbuffer_add(out, p, plen);
	evbuffer_add_printf(out, " HTTP/1.%d\r\n", minor == 0 ? 0 : 1);
	for (i = 0; i < nh; i++) {
		evbuffer_add(out, h[i].name, h[i].name_len);
		evbuffer_add(out, ": ", 2);
		evbuffer_add(out, h[i].value, h[i].value_len);
		evbuffer_add(out, "\r\n", 2);
	}
	evbuffer_add(out, "\r\n", 2);
	return n;
}

struct http_head *
http_head_new(int refuse_status, const char *why, struct http_live *live)
{
	struct http_head	*hh = xcalloc(1, sizeof(*hh));

	hh->live = live;
	if (live != NULL)
		live->n++;
	if (refuse_status != 0) {
		hh->state = HEAD_REFUSING;
		hh->status = refuse_status;
		snprintf(hh->why, sizeof(hh->why), "%s", why);
	}
	return hh;
}

static void
head_kick(evutil_socket_t fd, short ev, void *arg)
{
	struct http_head	*hh = arg;

	/* BEV_FLUSH: whether or not evhttp has enabled writing yet. */
	bufferevent_flush(hh->bev, EV_WRITE, BEV_FLUSH);
}

/*
 * evhttp queues a reply before it enables writing, and the filter does
 * not look again when it does: each addition to the output schedules a
 * flush from the event loop.
 */
static void
head_outbuf_cb(struct evbuffer *b, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct http_head	*hh = arg;

	if (info->n_added > 0)
		event_active(hh->kick, EV_TIMEOUT, 0);
}

void
http_head_attach(struct http_head *hh, struct bufferevent *bev,
    struct bufferevent *sock)
{
	hh->bev = bev;
	hh->sock = sock;
	if ((hh->kick = event_new(bufferevent_get_base(sock), -1, 0,
	    head_kick, hh)) == NULL ||
	    (hh->outcb = evbuffer_add_cb(bufferevent_get_output(bev),
	    head_outbuf_cb, hh)) == NULL)
		fatalx("http_head_attach");
}

void
http_live_orphan(struct http_live *live)
{
	if (live->n == 0)
		free(live);
	else
		live->orphaned = 1;
}

void
http_head_free(void *arg)
{
	struct http_head	*hh = arg;

	if (hh->live != NULL && --hh->live->n == 0 && hh->live->orphaned)
		free(hh->live);
	if (hh->writable != NULL)
		event_free(hh->writable);
	if (hh->kick != NULL)
		event_free(hh->kick);
	if (hh->outcb != NULL)
		evbuffer_remove_cb_entry(bufferevent_get_output(hh->bev),
		    hh->outcb);
	free(hh);
}

static void
head_writable(evutil_socket_t fd, short ev, void *arg)
{
	struct http_head	*hh = arg;

	bufferevent_flush(hh->bev, EV_WRITE, BEV_FLUSH);
}

/*
 * Bytes of src into the kernel: straight to the fd, or through the TLS
 * connection's SSL when the socket bufferevent is libevent-openssl's (its
 * own output buffer stays empty, so the two never interleave records).
 */
static int
head_write(struct http_head *hh, struct evbuffer *src, evutil_socket_t fd)
{
	SSL		*ssl = bufferevent_openssl_get_ssl(hh->sock);
	size_t		 len;
	unsigned char	*p;
	int		 n;

	if (ssl == NULL)
		return evbuffer_write_atmost(src, fd, -1);
	len = evbuffer_get_contiguous_space(src);
	if (len > HEAD_TLS_WRITE_MAX)
		len = HEAD_TLS_WRITE_MAX;
	if ((p = evbuffer_pullup(src, (ev_ssize_t)len)) == NULL)
		fatalx("evbuffer_pullup");
	if ((n = SSL_write(ssl, p, (int)len)) > 0) {
		evbuffer_drain(src, (size_t)n);
		return n;
	}
	switch (SSL_get_error(ssl, n)) {
	case SSL_ERROR_WANT_WRITE:
	case SSL_ERROR_WANT_READ:
		errno = EAGAIN;
		break;
	default:
		ERR_clear_error();
		errno = EPIPE;
		break;
	}
	return -1;
}

/*
 * Output straight to the socket.  evhttp frees a connection it is done
 * with as soon as the filter has taken its last bytes; bytes left in the
 * socket bufferevent then would be lost (a truncated reply to every
 * "Connection: close").  So this filter takes bytes only once the kernel
 * has them, and waits for the socket to be writable otherwise.
 */
enum bufferevent_filter_result
http_head_output(struct evbuffer *src, struct evbuffer *dst,
    ev_ssize_t limit, enum bufferevent_flush_mode mode, void *arg)
{
	struct http_head	*hh = arg;
	evutil_socket_t		 fd = bufferevent_getfd(hh->sock);
	int			 n, moved = 0;

	while (evbuffer_get_length(src) > 0) {
		if ((n = head_write(hh, src, fd)) > 0) {
			moved = 1;
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			if (hh->writable == NULL && (hh->writable = event_new(
			    bufferevent_get_base(hh->sock), fd, EV_WRITE,
			    head_writable, hh)) == NULL)
				fatalx("event_new");
			event_add(hh->writable, NULL);
			/* Progress, but not done: no write callback yet. */
			return moved ? BEV_OK : BEV_NEED_MORE;
		}
		/* A dead socket: the socket bufferevent reports the error. */
		evbuffer_add_buffer(dst, src);
		return BEV_OK;
	}
	/*
	 * All in the kernel.  evhttp hears it from the event loop, not from
	 * inside its own evhttp_send_reply (it may free the connection).
	 */
	if (moved)
		bufferevent_trigger(hh->bev, EV_WRITE,
		    BEV_TRIG_DEFER_CALLBACKS);
	return BEV_NEED_MORE;
}

/*
 * In place of the refused head, a request only the filter can write; the
 * transport answers it (in order, after the requests before it) and
 * closes the connection.
 */
static void
head_put_refusal(struct http_head *hh, struct evbuffer *dst)
{
	log_debug("http: request head refused: %d %s", hh->status, hh->why);
	evbuffer_add_printf(dst, "GET / HTTP/1.1\r\n" HTTP_HEAD_REFUSAL
	    ": %d %s\r\nConnection: close\r\n\r\n", hh->status, hh->why);
	hh->state = HEAD_DEAD;
}

/* One step of a chunked body: 1 moved bytes, 0 needs more, -1 refused. */
static int
head_chunked(struct http_head *hh, struct evbuffer *src, struct evbuffer *dst)
{
	char		 buf[HEAD_CHUNK_STEP];
	size_t		 n = evbuffer_get_length(src), size;
	ssize_t		 r;

	if (n == 0)
		return 0;
	if (n > sizeof(buf))
		n = sizeof(buf);
	if (evbuffer_copyout(src, buf, n) != (ev_ssize_t)n)
		fatalx("evbuffer_copyout");
	size = n;
	if ((r = phr_decode_chunked(&hh->dec, buf, &size)) == -1) {
		hh->status = 400;
		snprintf(hh->why, sizeof(hh->why), "malformed chunked body");
		return -1;
	}
	/* Our own encoding of what was decoded; trailers are dropped. */
	if (size > 0) {
		evbuffer_add_printf(dst, "%zx\r\n", size);
		evbuffer_add(dst, buf, size);
		evbuffer_add(dst, "\r\n", 2);
	}
	if (r >= 0) {
		evbuffer_add(dst, "0\r\n\r\n", 5);
		evbuffer_drain(src, n - (size_t)r);
		hh->state = HEAD_READING;
	} else
		evbuffer_drain(src, n);
	return 1;
}

enum bufferevent_filter_result
http_head_filter(struct evbuffer *src, struct evbuffer *dst,
    ev_ssize_t limit, enum bufferevent_flush_mode mode, void *arg)
{
	struct http_head	*hh = arg;
	const char		*buf;
	size_t			 n;
	uint64_t		 cl;
	int			 moved = 0, r, framing;

	for (;;) {
		n = evbuffer_get_length(src);
		switch (hh->state) {
		case HEAD_DEAD:
			evbuffer_drain(src, n);
			return moved ? BEV_OK : BEV_NEED_MORE;
		case HEAD_REFUSING:
			head_put_refusal(hh, dst);
			moved = 1;
			continue;
		case HEAD_READING:
			if (n == 0)
				return moved ? BEV_OK : BEV_NEED_MORE;
			if (n > HTTP_HEAD_MAX)
				n = HTTP_HEAD_MAX;
			if ((buf = (const char *)evbuffer_pullup(src,
			    (ev_ssize_t)n)) == NULL)
				fatalx("evbuffer_pullup");
			r = http_head_check(buf, n, hh->last_len, dst,
			    &framing, &cl, hh->why, sizeof(hh->why));
			if (r == 0) {
				hh->last_len = n;
				return moved ? BEV_OK : BEV_NEED_MORE;
			}
			hh->last_len = 0;
			if (r < 0) {
				hh->status = -r;
				hh->state = HEAD_REFUSING;
				continue;
			}
			evbuffer_drain(src, (size_t)r);
			moved = 1;
			hh->left = cl;
			memset(&hh->dec, 0, sizeof(hh->dec));
			hh->dec.consume_trailer = 1;
			hh->state = framing == 1 ? HEAD_BODY : framing == 2 ?
			    HEAD_CHUNKED : HEAD_READING;
			continue;
		case HEAD_BODY:
			if (n == 0)
				return moved ? BEV_OK : BEV_NEED_MORE;
			if (n > hh->left)
				n = (size_t)hh->left;
			evbuffer_remove_buffer(src, dst, n);
			hh->left -= n;
			moved = 1;
			if (hh->left == 0)
				hh->state = HEAD_READING;
			continue;
		case HEAD_CHUNKED:
			if ((r = head_chunked(hh, src, dst)) == 0)
				return moved ? BEV_OK : BEV_NEED_MORE;
			if (r == -1) {
				/*
				 * evhttp is inside this body: a chunk-size
				 * line it cannot read makes it answer 400 and
				 * close; nothing of the client's follows.
				 */
				log_debug("http: %s", hh->why);
				evbuffer_add(dst, "x\r\n", 3);
				hh->state = HEAD_DEAD;
			}
			moved = 1;
			continue;
		}
	}
}
