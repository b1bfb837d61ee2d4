/*
 * The documents of an OAuth issuer over HTTPS, fetched beside the event
 * loop (jwks_http.c) for jwks.c, which alone uses this.
 *
 * Ownership: a struct jwks_get is jwks_http.c's; its callback runs once,
 * on the loop, unless the owner cancels it first.  A document handed to
 * the callback is borrowed for the call.
 */
#ifndef STOCKADE_JWKS_HTTP_H
#define STOCKADE_JWKS_HTTP_H

#include <event2/event.h>
#include <jansson.h>

#include "oauth.h"

enum jwks_get_status {
	JWKS_GET_OK,		/* doc: a JSON object */
	JWKS_GET_FAILED,	/* logged; doc NULL */
	JWKS_GET_STOPPED,	/* the loop went away (shutdown); doc NULL */
};

struct jwks_get;
typedef void jwks_get_cb(void *arg, enum jwks_get_status, const json_t *doc);

/*
 * GET url with is's trust settings in at most timeout_ms; NULL (logged)
 * when url is refused before any transfer.  Before jwks_http_attach
 * there is no loop: jwks_http_wait then runs the transfers to their end.
 */
struct jwks_get	*jwks_get_start(const struct oauth_issuer *is,
		    const char *url, long timeout_ms, jwks_get_cb *, void *arg);
void		 jwks_get_cancel(struct jwks_get *);
void		 jwks_http_attach(struct event_base *);
void		 jwks_http_detach(void);
int		 jwks_http_attached(void);
void		 jwks_http_wait(void);

#endif
