/*
 * GETs of an issuer's documents (metadata, JWKS) with libcurl's multi
 * interface on a libevent base: the loop waits on no provider.  What
 * comes back is the provider's, trusted only to be one JSON object of at
 * most OAUTH_DOC_MAX bytes; each transfer is bounded in time.  No thread
 * of ours runs beside the loop (sandboxes are cloned from it); only
 * libcurl's resolver, for an issuer named by host rather than address,
 * runs getaddrinfo in one of its own.
 *
 * Ownership: a struct jwks_get is jwks_http.c's until its callback has
 * run (then it is gone) or its owner cancels it.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "evbase.h"
#include "jwks_http.h"
#include "log.h"
#include "util.h"

struct jwks_get {
	TAILQ_ENTRY(jwks_get)	 entry;
	CURL			*easy;
	char			 url[OAUTH_URL_MAX + 64];
	char			*data;
	size_t			 len;
	int			 over;
	jwks_get_cb		*cb;
	void			*arg;
};

/* Libcurl's sockets and timer on one base: the server's, or our own. */
static struct {
	struct event_base	*base;
	int			 own;	/* base is ours: no loop runs yet */
	CURLM			*multi;
	struct event		*timer;
	TAILQ_HEAD(, jwks_get)	 gets;
} jh = { .gets = TAILQ_HEAD_INITIALIZER(jh.gets) };

static size_t
get_write(char *p, size_t size, size_t n, void *arg)
{
	struct jwks_get	*g = arg;
	size_t		 len = size * n;

	if (g->len + len > OAUTH_DOC_MAX) {
		g->over = 1;
		return 0;	/* curl stops: the document is too big */
	}
	g->data = xrealloc(g->data, g->len + len + 1);
	memcpy(g->data + g->len, p, len);
	g->len += len;
	g->data[g->len] = '\0';
	return len;
}

/* Whether url's host is a loopback address (for insecure_http_loopback). */
static int
url_loopback(const char *url)
{
	CURLU	*u = curl_url();
	char	*host = NULL;
	int	 ok = 0;

	if (u != NULL && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
		ok = strncmp(host, "127.", 4) == 0 || strcmp(host, "[::1]") ==
		    0 || strcmp(host, "localhost") == 0;
	curl_free(host);
	curl_url_cleanup(u);
	return ok;
}

static void
get_free(struct jwks_get *g)
{
	TAILQ_REMOVE(&jh.gets, g, entry);
	curl_multi_remove_handle(jh.multi, g->easy);
	curl_easy_cleanup(g->easy);
	free(g->data);
	free(g);
}

/* A transfer ended: its document, or NULL after logging why. */
static void
get_done(struct jwks_get *g, CURLcode rc)
{
	jwks_get_cb	*cb = g->cb;
	void		*arg = g->arg;
	long		 status = 0;
	json_t		*doc = NULL;
	json_error_t	 je;

	curl_easy_getinfo(g->easy, CURLINFO_RESPONSE_CODE, &status);
	if (g->over)
		log_warnx("oauth: %s: larger than %d bytes", g->url,
		    OAUTH_DOC_MAX);
	else if (rc != CURLE_OK)
		log_warnx("oauth: %s: %s", g->url, curl_easy_strerror(rc));
	else if (status != 200)
		log_warnx("oauth: %s: HTTP status %ld", g->url, status);
	else if (g->data == NULL || (doc = json_loadb(g->data, g->len,
	    JSON_REJECT_DUPLICATES, &je)) == NULL || !json_is_object(doc)) {
		log_warnx("oauth: %s: not a JSON object", g->url);
		json_decref(doc);
		doc = NULL;
	}
	get_free(g);
	cb(arg, doc != NULL ? JWKS_GET_OK : JWKS_GET_FAILED, doc);
	json_decref(doc);
}

/* Every transfer libcurl says is over; a callback may start others. */
static void
multi_read(void)
{
	struct jwks_get	*g;
	CURLMsg		*m;
	int		 left;

	while ((m = curl_multi_info_read(jh.multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &g);
		get_done(g, m->data.result);
	}
}

static void
sock_ready(evutil_socket_t fd, short what, void *arg)
{
	int	 running;

	curl_multi_socket_action(jh.multi, fd, (what & EV_READ ?
	    CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0),
	    &running);
	multi_read();
}

static void
timer_ready(evutil_socket_t fd, short what, void *arg)
{
	int	 running;

	curl_multi_socket_action(jh.multi, CURL_SOCKET_TIMEOUT, 0, &running);
	multi_read();
}

/* CURLMOPT_SOCKETFUNCTION: watch s as libcurl asks (ev: our event). */
static int
sock_watch(CURL *easy, curl_socket_t s, int what, void *arg, void *ev)
{
	short	 flags = EV_PERSIST;

	if (ev != NULL) {
		event_free(ev);
		curl_multi_assign(jh.multi, s, NULL);
	}
	if (what == CURL_POLL_REMOVE)
		return 0;
	if (what & CURL_POLL_IN)
		flags |= EV_READ;
	if (what & CURL_POLL_OUT)
		flags |= EV_WRITE;
	if ((ev = event_new(jh.base, s, flags, sock_ready, NULL)) == NULL ||
	    event_add(ev, NULL) == -1)
		fatalx("jwks: event_new");
	curl_multi_assign(jh.multi, s, ev);
	return 0;
}

/* CURLMOPT_TIMERFUNCTION: one timer for all transfers (-1: none). */
static int
timer_watch(CURLM *multi, long ms, void *arg)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	if (ms < 0)
		evtimer_del(jh.timer);
	else
		evtimer_add(jh.timer, &tv);
	return 0;
}

static void
multi_open(struct event_base *base, int own)
{
	jh.base = base;
	jh.own = own;
	if ((jh.multi = curl_multi_init()) == NULL ||
	    (jh.timer = evtimer_new(base, timer_ready, NULL)) == NULL)
		fatalx("jwks: curl_multi_init");
	curl_multi_setopt(jh.multi, CURLMOPT_SOCKETFUNCTION, sock_watch);
	curl_multi_setopt(jh.multi, CURLMOPT_TIMERFUNCTION, timer_watch);
}

/*
 * Every transfer still open ends as JWKS_GET_STOPPED, then the multi
 * handle goes (libcurl removes its sockets through sock_watch).
 */
static void
multi_close(void)
{
	struct jwks_get	*g;
	jwks_get_cb	*cb;
	void		*arg;

	while ((g = TAILQ_FIRST(&jh.gets)) != NULL) {
		cb = g->cb;
		arg = g->arg;
		get_free(g);
		cb(arg, JWKS_GET_STOPPED, NULL);
	}
	if (jh.multi != NULL)
		curl_multi_cleanup(jh.multi);
	if (jh.timer != NULL)
		event_free(jh.timer);
	if (jh.own)
		event_base_free(jh.base);
	jh.multi = NULL;
	jh.timer = NULL;
	jh.base = NULL;
	jh.own = 0;
}

void
jwks_http_attach(struct event_base *base)
{
	if (jh.multi != NULL)
		multi_close();
	multi_open(base, 0);
}

void
jwks_http_detach(void)
{
	if (jh.multi != NULL && !jh.own)
		multi_close();
}

int
jwks_http_attached(void)
{
	return jh.multi != NULL && !jh.own;
}

void
jwks_http_wait(void)
{
	if (jh.multi == NULL || !jh.own)
		return;
	while (!TAILQ_EMPTY(&jh.gets))
		if (event_base_loop(jh.base, EVLOOP_ONCE) == -1)
			fatalx("jwks: event_base_loop");
	multi_close();
}

struct jwks_get *
jwks_get_start(const struct oauth_issuer *is, const char *url, long timeout_ms,
    jwks_get_cb *cb, void *arg)
{
	static int	 inited;
	struct jwks_get	*g;
	struct event_base *base;
	int		 http_ok;

	/* Once, before anything runs beside us (not thread-safe). */
	if (!inited && curl_global_init(CURL_GLOBAL_DEFAULT) == 0)
		inited = 1;
	http_ok = is->insecure_http_loopback && url_loopback(url);
	if (strncmp(url, "https://", 8) != 0 && !http_ok) {
		log_warnx("oauth: %s: not https (insecure_http_loopback allows "
		    "http:// to a loopback address only)", url);
		return NULL;
	}
	/* No loop runs yet (start, mcp-exec -n): one of our own, awaited. */
	if (jh.multi == NULL) {
		if ((base = evbase_new(0)) == NULL)
			fatalx("jwks: event_base_new");
		multi_open(base, 1);
	}
	g = xcalloc(1, sizeof(*g));
	snprintf(g->url, sizeof(g->url), "%s", url);
	g->cb = cb;
	g->arg = arg;
	if ((g->easy = curl_easy_init()) == NULL)
		fatalx("curl_easy_init");
	curl_easy_setopt(g->easy, CURLOPT_URL, url);
	curl_easy_setopt(g->easy, CURLOPT_PRIVATE, g);
	curl_easy_setopt(g->easy, CURLOPT_PROTOCOLS_STR, http_ok ?
	    "http,https" : "https");
	curl_easy_setopt(g->easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(g->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(g->easy, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(g->easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	/* No proxy from the environment: the provider is named in the rules. */
	curl_easy_setopt(g->easy, CURLOPT_PROXY, "");
	curl_easy_setopt(g->easy, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(g->easy, CURLOPT_SSL_VERIFYHOST, 2L);
	if (is->ca_file[0] != '\0')
		curl_easy_setopt(g->easy, CURLOPT_CAINFO, is->ca_file);
	curl_easy_setopt(g->easy, CURLOPT_WRITEFUNCTION, get_write);
	curl_easy_setopt(g->easy, CURLOPT_WRITEDATA, g);
	curl_easy_setopt(g->easy, CURLOPT_USERAGENT, "stockade-mcp-exec");
	TAILQ_INSERT_TAIL(&jh.gets, g, entry);
	if (curl_multi_add_handle(jh.multi, g->easy) != CURLM_OK)
		fatalx("curl_multi_add_handle");
	return g;
}

void
jwks_get_cancel(struct jwks_get *g)
{
	if (g != NULL)
		get_free(g);
}
