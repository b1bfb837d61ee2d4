/*
 * Who an HTTP client is: a static bearer token (principals.c), a JWT
 * access token from a configured issuer (oauth.c), or a client
 * certificate verified in the TLS handshake (mtls.c).  Everything here is
 * the client's and untrusted until one of those has vouched for it.
 * Answers RFC 9728 metadata (when an issuer is configured), 401 with
 * WWW-Authenticate (naming the metadata when there is any), 403
 * insufficient_scope; audits refusals (rate-limited) and the proof
 * behind every MCP session.  A JWT whose kid its issuer lacks waits,
 * parked, while the keys are fetched beside the loop (jwks.c); nobody
 * else waits for it.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/ssl.h>

#include "http_int.h"
#include "log.h"
#include "mtls.h"
#include "oauth.h"
#include "principals.h"
#include "util.h"

#define HTTP_REFUSALS_PER_S	5	/* refused credentials audited a second */
#define HTTP_REALM		"stockade"
#define HTTP_PARKED_MAX		64	/* requests waiting for issuers' keys */
/* A fetch's documents at their longest (discovery twice, then the JWKS). */
#define HTTP_PARK_MS		(3 * OAUTH_LOAD_TIMEOUT_MS + 1000)
#define HTTP_PARKED_RETRY_S	"2"	/* Retry-After when none may wait */

/* A request whose token waits for its issuer's keys. */
struct http_park {
	TAILQ_ENTRY(http_park)	 entry;
	struct http_tr		*tr;
	struct evhttp_request	*req;
	uint64_t		 deadline_ms;	/* then it is answered anyway */
	unsigned		 round;		/* last asked again */
};

/* http or https, as this listener speaks. */
static const char *
scheme(const struct http_tr *tr)
{
	return tr->srv->http_tls == 2 ? "https" : "http";
}

/*
 * A refused credential is audited, at most HTTP_REFUSALS_PER_S a second:
 * a client guessing tokens must not be able to flood the audit trail;
 * what is left out is counted in the next record.
 */
void
http_refusal(struct http_tr *tr, const char *peer, const char *principal,
    const char *detail, const struct tool_client *c)
{
	uint64_t	 sec = mono_ms() / 1000;
	json_t		*ev;

	if (sec != tr->refusal_sec) {
		tr->refusal_sec = sec;
		tr->refusals = 0;
	}
	if (tr->refusals++ >= HTTP_REFUSALS_PER_S) {
		tr->refusals_unaudited++;
		return;
	}
	log_warnx("http: %s from %s refused: %s", principal, peer, detail);
	ev = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I}", "event",
	    "call_refused", "principal", principal, "reason", "bad token",
	    "severity", "warning", "detail", detail, "transport", "http",
	    "remote_addr", peer, "unaudited_before",
	    (json_int_t)tr->refusals_unaudited);
	if (c != NULL)
		tool_client_proof(ev, c);
	server_audit(tr->srv, ev);
	tr->refusals_unaudited = 0;
}

const char *
http_peer(struct evhttp_request *req)
{
	ev_uint16_t	 port;
	char		*addr = NULL;

	evhttp_connection_get_peer(evhttp_request_get_connection(req), &addr,
	    &port);
	return addr != NULL ? addr : "?";
}

/* A handshake refused a certificate (mtls.c's hook). */
static void
cert_refused(void *arg, SSL *ssl, const char *why, const char *subject,
    const char *sha)
{
	struct http_tr		*tr = arg;
	struct tool_client	 c;
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof(ss);
	char			 peer[INET6_ADDRSTRLEN] = "?", detail[200];
	int			 fd = SSL_get_fd(ssl);

	if (fd >= 0 && getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		(void)inet_ntop(ss.ss_family, ss.ss_family == AF_INET6 ?
		    (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr :
		    (void *)&((struct sockaddr_in *)&ss)->sin_addr, peer,
		    sizeof(peer));
	memset(&c, 0, sizeof(c));
	snprintf(c.auth, sizeof(c.auth), "mtls");
	snprintf(c.subject, sizeof(c.subject), "%s", subject);
	snprintf(c.cert_sha256, sizeof(c.cert_sha256), "%s", sha);
	snprintf(detail, sizeof(detail), "client certificate: %s", why);
	http_refusal(tr, peer, "anonymous", detail, &c);
}

void
http_auth_ssl(struct http_tr *tr, SSL *ssl)
{
	tr->mtls_hook.refused = cert_refused;
	tr->mtls_hook.arg = tr;
	SSL_set_app_data(ssl, &tr->mtls_hook);
}

/* 1 when an OAuth client has an authorization server to go to. */
static int
oauth_offered(const struct http_tr *tr)
{
	return principals_issuers(tr->srv->principals)->n > 0;
}

/*
 * The challenge names RFC 9728 metadata only when there is an issuer to
 * put in it: metadata without authorization_servers (the MCP spec asks
 * for at least one) sends OAuth clients (mcp-remote, the Inspector) into
 * a registration that cannot work for what is a mistyped static token.
 */
static void
reply_unauthorized(struct http_tr *tr, struct evhttp_request *req,
    const char *host, int presented)
{
	char	 v[HTTP_HOST_LEN + 200], md[HTTP_HOST_LEN + 100] = "";

	if (oauth_offered(tr))
		snprintf(md, sizeof(md), ", resource_metadata=\"%s://%s%s\"",
		    scheme(tr), host, HTTP_METADATA_PATH);
	snprintf(v, sizeof(v), "Bearer realm=\"%s\"%s%s", HTTP_REALM, md,
	    presented ? ", error=\"invalid_token\"" : "");
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "WWW-Authenticate", v);
	http_reply_json(req, 401, NULL, json_pack("{s:s, s:s}", "error",
	    "invalid_token", "error_description", presented ? "the bearer "
	    "token is not valid" : "a bearer token is required"));
}

/* RFC 6750 section 3.1: the scope the resource needs. */
static void
reply_scope(struct http_tr *tr, struct evhttp_request *req, const char *host,
    const char *scope)
{
	char	 v[HTTP_HOST_LEN + 200 + OAUTH_SCOPES_MAX * OAUTH_SCOPE_LEN];

	snprintf(v, sizeof(v), "Bearer realm=\"%s\", error=\"insufficient_"
	    "scope\", scope=\"%s\", resource_metadata=\"%s://%s%s\"",
	    HTTP_REALM, scope, scheme(tr), host, HTTP_METADATA_PATH);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "WWW-Authenticate", v);
	http_reply_json(req, 403, NULL, json_pack("{s:s, s:s, s:s}", "error",
	    "insufficient_scope", "error_description", "the token lacks a "
	    "scope this server requires", "scope", scope));
}

/* The connection's verified client certificate, or NULL. */
static X509 *
peer_cert(struct evhttp_request *req)
{
	struct bufferevent	*bev, *under;
	SSL			*ssl;

	bev = evhttp_connection_get_bufferevent(
	    evhttp_request_get_connection(req));
	if (bev == NULL || (under = bufferevent_get_underlying(bev)) == NULL ||
	    (ssl = bufferevent_openssl_get_ssl(under)) == NULL ||
	    SSL_get_verify_result(ssl) != X509_V_OK)
		return NULL;
	return SSL_get0_peer_certificate(ssl);
}

static void
from_oauth(struct tool_client *c, const struct oauth_ident *id)
{
	size_t	 i;

	snprintf(c->auth, sizeof(c->auth), "oauth");
	snprintf(c->issuer, sizeof(c->issuer), "%s", id->issuer);
	snprintf(c->subject, sizeof(c->subject), "%s", id->subject);
	snprintf(c->client_id, sizeof(c->client_id), "%s", id->client_id);
	snprintf(c->jti_sha256, sizeof(c->jti_sha256), "%s", id->jti_sha256);
	for (i = 0; i < id->ngroups; i++)
		snprintf(c->groups[i], CLIENT_GROUP_MAX, "%s", id->groups[i]);
	c->ngroups = (unsigned)id->ngroups;
}

/*
 * The client's connection closed while its request waited.  evhttp has
 * detached the request from the dying connection and left it to us.
 */
static void
park_closed(struct evhttp_connection *evcon, void *arg)
{
	struct http_park	*p = arg;

	log_debug("http: connection closed while its token waited for keys");
	TAILQ_REMOVE(&p->tr->parked, p, entry);
	p->tr->nparked--;
	if (evhttp_request_get_connection(p->req) == NULL)
		evhttp_request_free(p->req);
	free(p);
}

static void
park_arm(struct http_tr *tr)
{
	struct http_park	*p;
	struct timeval		 tv;
	uint64_t		 now = mono_ms(), first = UINT64_MAX;

	TAILQ_FOREACH(p, &tr->parked, entry)
		if (p->deadline_ms < first)
			first = p->deadline_ms;
	if (first == UINT64_MAX)
		return;
	first = first > now ? first - now : 0;
	tv.tv_sec = (time_t)(first / 1000);
	tv.tv_usec = (suseconds_t)(first % 1000) * 1000;
	evtimer_add(tr->unpark, &tv);
}

/*
 * Parks req until its issuer's fetch ends (1), or answers 503 when too
 * many wait already (-1).  One asked again keeps its deadline.
 */
static int
park(struct http_tr *tr, struct evhttp_request *req)
{
	struct http_park	*p = tr->resuming;

	if (p == NULL && tr->nparked >= HTTP_PARKED_MAX) {
		http_refusal(tr, http_peer(req), "anonymous", "too many "
		    "requests wait for an issuer's keys", NULL);
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Retry-After", HTTP_PARKED_RETRY_S);
		http_reply_error(req, 503, RPC_SERVER_ERROR, "the token's "
		    "issuer's keys are being fetched; try again");
		return -1;
	}
	if (p == NULL) {
		p = xcalloc(1, sizeof(*p));
		p->tr = tr;
		p->req = req;
		p->deadline_ms = mono_ms() + HTTP_PARK_MS;
	}
	p->round = tr->round;
	TAILQ_INSERT_TAIL(&tr->parked, p, entry);
	tr->nparked++;
	evhttp_connection_set_closecb(evhttp_request_get_connection(req),
	    park_closed, p);
	if (!evtimer_pending(tr->unpark, NULL))
		park_arm(tr);
	return 1;
}

/*
 * A fetch ended, or a deadline passed: every waiting request is asked
 * again from the top.  Its token verifies now, or is refused, or (its
 * issuer's fetch still under way, and time left) waits again.
 */
static void
unpark(evutil_socket_t fd, short what, void *arg)
{
	struct http_tr		*tr = arg;
	struct http_park	*p;

	tr->round++;
	for (;;) {
		TAILQ_FOREACH(p, &tr->parked, entry)
			if (p->round != tr->round)
				break;
		if (p == NULL)
			break;
		TAILQ_REMOVE(&tr->parked, p, entry);
		tr->nparked--;
		evhttp_connection_set_closecb(evhttp_request_get_connection(
		    p->req), NULL, NULL);
		tr->resuming = p;
		http_request_cb(p->req, tr);
		tr->resuming = NULL;
		if (p->round != tr->round)	/* answered: not parked again */
			free(p);
	}
	park_arm(tr);
}

/* jwks.c's word that a fetch ended: ask the waiting again, from the loop. */
static void
keys_fetched(void *arg)
{
	struct http_tr	*tr = arg;

	if (!TAILQ_EMPTY(&tr->parked))
		event_active(tr->unpark, EV_TIMEOUT, 0);
}

void
http_auth_start(struct http_tr *tr)
{
	if ((tr->unpark = evtimer_new(tr->srv->base, unpark, tr)) == NULL)
		fatalx("evtimer_new");
	jwks_attach(tr->srv->base, keys_fetched, tr);
}

void
http_auth_stop(struct http_tr *tr)
{
	struct http_park	*p;

	while ((p = TAILQ_FIRST(&tr->parked)) != NULL) {
		TAILQ_REMOVE(&tr->parked, p, entry);
		evhttp_connection_set_closecb(evhttp_request_get_connection(
		    p->req), NULL, NULL);
		free(p);
	}
	tr->nparked = 0;
	if (tr->unpark != NULL) {
		jwks_detach();
		event_free(tr->unpark);
		tr->unpark = NULL;
	}
}

static int
auth_jwt(struct http_tr *tr, struct evhttp_request *req, const char *host,
    const char *tok, size_t n, struct http_auth *a)
{
	struct oauth_ident	 id;
	enum oauth_verdict	 v;
	enum oauth_wait		 wait = OAUTH_FETCH;
	char			 why[256];

	/* Asked again: it may wait on, but starts no fetch of its own. */
	if (tr->resuming != NULL)
		wait = mono_ms() < tr->resuming->deadline_ms ? OAUTH_WAIT :
		    OAUTH_NOWAIT;
	v = oauth_verify(principals_issuers(tr->srv->principals), tok, n,
	    (int64_t)time(NULL), wait, &id, why, sizeof(why));
	if (v == OAUTH_PENDING) {
		explicit_bzero(&id, sizeof(id));
		return park(tr, req);
	}
	from_oauth(&a->client, &id);
	if (v == OAUTH_OK) {
		snprintf(a->principal, sizeof(a->principal), "%s",
		    id.principal);
		return 0;
	}
	http_refusal(tr, http_peer(req), id.principal[0] ? id.principal :
	    "anonymous", why, &a->client);
	if (v == OAUTH_SCOPE)
		reply_scope(tr, req, host, id.scope_needed);
	else
		reply_unauthorized(tr, req, host, 1);
	explicit_bzero(&id, sizeof(id));
	return -1;
}

int
http_authenticate(struct http_tr *tr, struct evhttp_request *req,
    const char *host, struct http_auth *a)
{
	static const char b64token[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
	    "KLMNOPQRSTUVWXYZ0123456789-._~+/";
	struct principals	*p = tr->srv->principals;
	struct mtls_conf	*m = principals_mtls(p);
	const char		*v, *tok, *who;
	X509			*cert;
	size_t			 n;

	memset(a, 0, sizeof(*a));
	if (!principals_auth_required(p)) {
		snprintf(a->client.auth, sizeof(a->client.auth), "local");
		snprintf(a->principal, sizeof(a->principal), "%s",
		    tr->srv->conf.server.local_principal);
		return 0;
	}
	if (http_header_one(req, "Authorization", &v) == -1) {
		http_reply_error(req, 400, RPC_SERVER_ERROR, "Authorization "
		    "may appear once");
		return -1;
	}
	/* A verified client certificate, and no token: the certificate. */
	if (v == NULL && m->enabled && (cert = peer_cert(req)) != NULL) {
		snprintf(a->client.auth, sizeof(a->client.auth), "mtls");
		if (mtls_principal(m, cert, a->principal, sizeof(a->principal),
		    a->client.subject, sizeof(a->client.subject),
		    a->client.cert_sha256) == 0)
			return 0;
		http_refusal(tr, http_peer(req), "anonymous", "client "
		    "certificate: no mtls.principal rule matches", &a->client);
		reply_unauthorized(tr, req, host, 0);
		return -1;
	}
	if (v == NULL || evutil_ascii_strncasecmp(v, "Bearer ", 7) != 0) {
		reply_unauthorized(tr, req, host, 0);
		return -1;
	}
	tok = v + 7 + strspn(v + 7, " ");
	/* RFC 6750 b64token: anything else is no token of ours. */
	n = strspn(tok, b64token);
	n += strspn(tok + n, "=");
	if (tok[n] != '\0') {
		http_refusal(tr, http_peer(req), "anonymous", "malformed bearer "
		    "token", NULL);
		reply_unauthorized(tr, req, host, 1);
		return -1;
	}
	if ((who = principals_lookup(p, tok, n)) != NULL) {
		snprintf(a->client.auth, sizeof(a->client.auth), "bearer");
		snprintf(a->principal, sizeof(a->principal), "%s", who);
		/* The groups its principal is in, as the tokens say. */
		a->client.ngroups = principals_groups(p, who, a->client.groups,
		    CLIENT_GROUPS_MAX);
		return 0;
	}
	/* Not a static token: a JWT (header.payload.signature), if any issuer. */
	if (principals_issuers(p)->n > 0 && memchr(tok, '.', n) != NULL)
		return auth_jwt(tr, req, host, tok, n, a);
	http_refusal(tr, http_peer(req), "anonymous", "unknown bearer token",
	    NULL);
	reply_unauthorized(tr, req, host, 1);
	return -1;
}

/* The proof behind a new MCP session, with where it came from. */
void
http_auth_session(struct http_tr *tr, struct evhttp_request *req,
    const struct http_auth *a, struct tool_client *c)
{
	ev_uint16_t	 port = 0;
	char		*addr = NULL;
	json_t		*ev;

	*c = a->client;
	snprintf(c->transport, sizeof(c->transport), "http");
	evhttp_connection_get_peer(evhttp_request_get_connection(req), &addr,
	    &port);
	if (addr != NULL) {
		snprintf(c->remote_addr, sizeof(c->remote_addr), "%s", addr);
		c->remote_port = port;
	}
	if (strcmp(c->auth, "local") == 0)
		return;
	ev = json_pack("{s:s, s:s, s:s, s:s}", "event", "auth_accepted",
	    "principal", a->principal, "transport", "http", "remote_addr",
	    c->remote_addr[0] ? c->remote_addr : "?");
	tool_client_proof(ev, c);
	server_audit(tr->srv, ev);
}

void
http_handle_metadata(struct http_tr *tr, struct evhttp_request *req)
{
	struct oauth_issuers	*set = principals_issuers(tr->srv->principals);
	json_t			*md, *servers, *scopes;
	size_t			 i, k;

	/* No issuer, nothing to discover: as any unknown path. */
	if (!oauth_offered(tr)) {
		http_reply_error(req, 404, RPC_SERVER_ERROR, "no OAuth "
		    "authorization server is configured");
		return;
	}
	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET");
		http_reply_error(req, 405, RPC_SERVER_ERROR, "GET only");
		return;
	}
	/* RFC 9728: the resource is the audience the issuers mint for. */
	md = json_pack("{s:s, s:[s], s:s}", "resource", set->v[0].audience,
	    "bearer_methods_supported", "header", "resource_name",
	    SERVER_NAME);
	if (md != NULL) {
		servers = json_array();
		scopes = json_array();
		for (i = 0; i < set->n; i++) {
			json_array_append_new(servers,
			    json_string(set->v[i].issuer));
			for (k = 0; k < set->v[i].nscopes; k++)
				json_array_append_new(scopes,
				    json_string(set->v[i].scopes[k]));
		}
		json_object_set_new(md, "authorization_servers", servers);
		json_object_set_new(md, "scopes_supported", scopes);
	}
	if (md != NULL && principals_mtls(tr->srv->principals)->enabled)
		json_object_set_new(md, "tls_client_certificate_bound_access_"
		    "tokens", json_false());
	http_reply_json(req, 200, NULL, md);
}
