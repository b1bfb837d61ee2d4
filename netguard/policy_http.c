/*
 * A network policy's "http" list: destinations whose requests go through
 * the HTTPS egress proxy, with the methods and paths allowed and the
 * credential the proxy adds.  Operator input, checked like the rest of the
 * policy; the secret itself is only stat()ed here, never read.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "policy.h"
#include "util.h"

#define HTTP_DEFAULT_PORT	443

static const char *const method_names[HTTP_METHODS_N + 1] = {
	"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", NULL
};

/* Headers the proxy owns or that change how a request is framed. */
static const char *const reserved_headers[] = {
	"host", "content-length", "transfer-encoding", "connection",
	"upgrade", "te", "trailer", "keep-alive", "proxy-authorization",
	"proxy-connection", "via", "forwarded", "x-forwarded-for", NULL
};

const char *
policy_http_method_name(unsigned bit)
{
	unsigned	 i;

	for (i = 0; i < HTTP_METHODS_N; i++)
		if (bit == (1u << i))
			return method_names[i];
	return NULL;
}

int
policy_secret_check(const char *path, char *err, size_t errlen)
{
	struct stat	 st;

	if (path[0] != '/') {
		snprintf(err, errlen, "%s: not an absolute path", path);
		return -1;
	}
	if (stat(path, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return -1;
	}
	/* Anyone else who can read it can hand it to a sandbox. */
	if (st.st_uid != 0 || (st.st_mode & 077) != 0) {
		snprintf(err, errlen, "%s: mode %04o owner %u: a secret must be "
		    "root's and readable by no one else (0600 or 0400)", path,
		    (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
		return -1;
	}
	if (st.st_size == 0 || st.st_size > CRED_SECRET_MAX) {
		snprintf(err, errlen, "%s: %lld bytes (1-%d)", path,
		    (long long)st.st_size, CRED_SECRET_MAX);
		return -1;
	}
	return 0;
}

/*
 * "/a/b", or "/a/b/" and a star: unreserved characters only, so a
 * pattern means the same to the proxy's regex and to the server, and no
 * dot segments.
 */
static int
path_ok(const char *s)
{
	size_t	 len = strlen(s), i;

	if (len == 0 || len > HTTP_PATH_MAX || s[0] != '/')
		return 0;
	for (i = 0; i < len; i++) {
		char	 c = s[i];

		if (c == '*') {
			if (i != len - 1)
				return 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~' || c == '/'))
			return 0;
		if (c == '/' && s[i + 1] == '/')
			return 0;
		if (c == '/' && s[i + 1] == '.' && (s[i + 2] == '/' ||
		    s[i + 2] == '\0' || (s[i + 2] == '.' && (s[i + 3] == '/' ||
		    s[i + 3] == '\0'))))
			return 0;
	}
	return 1;
}

/* Whether some request path matches both patterns. */
static int
paths_overlap(const char *a, const char *b)
{
	size_t	 la = strlen(a), lb = strlen(b);
	int	 pa = a[la - 1] == '*', pb = b[lb - 1] == '*';

	if (pa)
		la--;
	if (pb)
		lb--;
	if (pa && pb)
		return strncmp(a, b, la < lb ? la : lb) == 0;
	if (pa)
		return lb >= la && strncmp(a, b, la) == 0;
	if (pb)
		return la >= lb && strncmp(a, b, lb) == 0;
	return strcmp(a, b) == 0;
}

static void
load_rule(struct conf_ctx *ctx, const json_t *o, struct policy_http_rule *r)
{
	static const char *const keys[] = { "methods", "paths", NULL };
	json_t		*methods, *paths, *v;
	size_t		 i;
	unsigned	 m;

	if (conf_expect_object(ctx, o, "http rule") == -1)
		return;
	conf_check_keys(ctx, o, keys);
	if (conf_get_array(ctx, o, "methods", &methods) != 1 ||
	    json_array_size(methods) == 0)
		conf_error(ctx, o, "methods: a list of GET, HEAD, POST, PUT, "
		    "PATCH, DELETE, OPTIONS");
	else
		json_array_foreach(methods, i, v) {
			const char	*s = json_string_value(v);

			for (m = 0; m < HTTP_METHODS_N; m++)
				if (s != NULL && strcmp(s, method_names[m]) == 0)
					break;
			if (m == HTTP_METHODS_N)
				conf_error(ctx, v, "methods: one of GET, HEAD, "
				    "POST, PUT, PATCH, DELETE, OPTIONS");
			else
				r->methods |= 1u << m;
		}
	if (conf_get_array(ctx, o, "paths", &paths) != 1 ||
	    json_array_size(paths) == 0) {
		conf_error(ctx, o, "paths: a list of \"/exact\" or "
		    "\"/prefix/*\"");
		return;
	}
	if (json_array_size(paths) > POLICY_HTTP_PATHS_MAX) {
		conf_error(ctx, paths, "more than %d paths",
		    POLICY_HTTP_PATHS_MAX);
		return;
	}
	r->paths = xcalloc(json_array_size(paths) + 1, sizeof(char *));
	json_array_foreach(paths, i, v) {
		const char	*s = json_string_value(v);

		if (s == NULL || !path_ok(s)) {
			conf_error(ctx, v, "paths: \"/exact\" or \"/prefix/*\": "
			    "letters, digits, -._~/ and a final *; no // or "
			    "dot segments");
			continue;
		}
		r->paths[r->npaths++] = xstrdup(s);
	}
}

static int
header_reserved(const char *h)
{
	size_t	 i;

	for (i = 0; reserved_headers[i] != NULL; i++)
		if (strcasecmp(h, reserved_headers[i]) == 0)
			return 1;
	return 0;
}

/* Every character of s in set (or a letter or digit when alnum). */
static int
chars_ok(const char *s, const char *set, int alnum)
{
	for (; *s != '\0'; s++)
		if (!(alnum && ((*s >= 'a' && *s <= 'z') ||
		    (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9'))) &&
		    strchr(set, *s) == NULL)
			return 0;
	return 1;
}

static void
load_credential(struct conf_ctx *ctx, const json_t *o,
    struct policy_credential *c)
{
	static const char *const keys[] = { "name", "header", "prefix",
	    "file", NULL };
	const char	*name = NULL, *header = NULL, *prefix = NULL;
	const char	*file = NULL;
	char		 err[CONF_ERROR_LEN];

	if (conf_expect_object(ctx, o, "credential") == -1)
		return;
	conf_check_keys(ctx, o, keys);
	(void)conf_get_string(ctx, o, "name", &name);
	(void)conf_get_string(ctx, o, "header", &header);
	(void)conf_get_string(ctx, o, "prefix", &prefix);
	(void)conf_get_string(ctx, o, "file", &file);
	if (name == NULL || *name == '\0' || strlen(name) > CRED_NAME_MAX ||
	    !chars_ok(name, "-._", 1))
		conf_error(ctx, o, "credential: name: 1-%d letters, digits, "
		    "-._ (audited in its place)", CRED_NAME_MAX);
	else
		snprintf(c->name, sizeof(c->name), "%s", name);
	if (header == NULL || *header == '\0' ||
	    strlen(header) > HTTP_HEADER_MAX || !chars_ok(header, "-", 1) ||
	    header_reserved(header))
		conf_error(ctx, o, "credential: header: a header name (letters, "
		    "digits, -), not one the proxy owns such as Host");
	else
		snprintf(c->header, sizeof(c->header), "%s", header);
	if (prefix != NULL && (strlen(prefix) > HTTP_PREFIX_MAX ||
	    !chars_ok(prefix, " -._", 1)))
		conf_error(ctx, o, "credential: prefix: at most %d letters, "
		    "digits, spaces, -._", HTTP_PREFIX_MAX);
	else if (prefix != NULL)
		snprintf(c->prefix, sizeof(c->prefix), "%s", prefix);
	/* The secret comes from a file only, never the policy's text. */
	if (json_object_get(o, "value") != NULL ||
	    json_object_get(o, "secret") != NULL)
		conf_error(ctx, o, "credential: the secret goes in a file "
		    "(file:), never in the policy");
	if (file == NULL)
		conf_error(ctx, o, "credential: file: required (a file of "
		    "root's, mode 0600, or a Secret mount)");
	else if (policy_secret_check(file, err, sizeof(err)) == -1)
		conf_error(ctx, json_object_get(o, "file"), "credential: %s",
		    err);
	else
		snprintf(c->file, sizeof(c->file), "%s", file);
}

/*
 * The allow entry that allows host on port, and only it: the proxy takes
 * over all of that entry's traffic to the port.  -1 after an error.
 */
static int
find_group(struct conf_ctx *ctx, const json_t *at, const struct policy *p,
    const char *host, uint16_t port)
{
	const struct policy_group	*g;
	int				 gi;
	unsigned			 i;

	if ((gi = policy_match_name(p, host)) == -1 ||
	    strcmp(p->groups[gi].names[0], host) != 0) {
		conf_error(ctx, at, "http: %s is not a name the allow list "
		    "allows (exactly, not by a wildcard)", host);
		return -1;
	}
	g = &p->groups[gi];
	for (i = 0; i < g->nports; i++)
		if (g->ports[i] == port)
			break;
	if (g->nports == 0 || i == g->nports) {
		conf_error(ctx, at, "http: %s: port %u is not among its allow "
		    "entry's ports", host, (unsigned)port);
		return -1;
	}
	if (g->nnames != 1 || g->ncidrs != 0) {
		conf_error(ctx, at, "http: %s needs an allow entry of its own "
		    "(this name only, no cidrs): its traffic on port %u goes "
		    "through the proxy", host, (unsigned)port);
		return -1;
	}
	return gi;
}

/* Two rules of one destination that a request could both match. */
static void
check_overlaps(struct conf_ctx *ctx, const json_t *at,
    const struct policy_http *h)
{
	size_t	 i, j, a, b;

	for (i = 0; i < h->nrules; i++)
		for (j = i; j < h->nrules; j++) {
			const struct policy_http_rule	*r = &h->rules[i];
			const struct policy_http_rule	*s = &h->rules[j];

			if ((r->methods & s->methods) == 0)
				continue;
			for (a = 0; a < r->npaths; a++)
				for (b = i == j ? a + 1 : 0; b < s->npaths; b++)
					if (paths_overlap(r->paths[a],
					    s->paths[b])) {
						conf_error(ctx, at, "http: %s: "
						    "rules overlap: %s and %s",
						    h->host, r->paths[a],
						    s->paths[b]);
						return;
					}
		}
}

static void
load_dest(struct conf_ctx *ctx, const json_t *o, struct policy *p,
    struct policy_http *h)
{
	static const char *const keys[] = { "host", "port", "rules",
	    "credential", "paths_sensitive", "ca_file", NULL };
	const char	*host = NULL, *ca = NULL;
	json_t		*rules, *cred, *v;
	int64_t		 port = HTTP_DEFAULT_PORT;
	size_t		 i, j;
	int		 gi;
	struct stat	 st;

	if (conf_expect_object(ctx, o, "http entry") == -1)
		return;
	conf_check_keys(ctx, o, keys);
	(void)conf_get_int(ctx, o, "port", 1, 65535, &port);
	h->port = (uint16_t)port;
	(void)conf_get_bool(ctx, o, "paths_sensitive", &h->paths_sensitive);
	if (conf_get_string(ctx, o, "host", &host) != 1 ||
	    strlen(host) > DNS_NAME_MAX) {
		conf_error(ctx, o, "http: host: a name of the allow list");
		return;
	}
	for (i = 0; host[i] != '\0'; i++)
		h->host[i] = (host[i] >= 'A' && host[i] <= 'Z') ?
		    host[i] - 'A' + 'a' : host[i];
	if ((gi = find_group(ctx, o, p, h->host, h->port)) != -1)
		h->group = (size_t)gi;
	for (j = 0; j < p->nhttp; j++)
		if (strcmp(p->http[j].host, h->host) == 0 &&
		    p->http[j].port == h->port)
			conf_error(ctx, o, "http: %s port %u twice: rules "
			    "overlap", h->host, (unsigned)h->port);
	if (conf_get_string(ctx, o, "ca_file", &ca) == 1) {
		if (ca[0] != '/' || stat(ca, &st) == -1 || !S_ISREG(st.st_mode))
			conf_error(ctx, o, "http: ca_file: %s is not a file",
			    ca);
		else
			snprintf(h->ca_file, sizeof(h->ca_file), "%s", ca);
	}
	if (conf_get_object(ctx, o, "credential", &cred) == 1) {
		load_credential(ctx, cred, &h->cred);
		h->has_credential = 1;
	}
	if (conf_get_array(ctx, o, "rules", &rules) != 1 ||
	    json_array_size(rules) == 0) {
		conf_error(ctx, o, "http: rules: at least one {methods, paths}");
		return;
	}
	if (json_array_size(rules) > POLICY_HTTP_RULES_MAX) {
		conf_error(ctx, rules, "more than %d rules",
		    POLICY_HTTP_RULES_MAX);
		return;
	}
	h->rules = xcalloc(json_array_size(rules) + 1, sizeof(*h->rules));
	json_array_foreach(rules, i, v) {
		load_rule(ctx, v, &h->rules[i]);
		h->nrules++;
	}
	check_overlaps(ctx, o, h);
}

void
policy_http_load(struct conf_ctx *ctx, const json_t *list, struct policy *p)
{
	const json_t	*v;
	size_t		 i;

	if (p->level != LEVEL_L2) {
		conf_error(ctx, list, "http: only level L2 has HTTP rules");
		return;
	}
	if (json_array_size(list) > POLICY_HTTP_MAX) {
		conf_error(ctx, list, "more than %d http entries",
		    POLICY_HTTP_MAX);
		return;
	}
	p->http = xcalloc(json_array_size(list) + 1, sizeof(*p->http));
	json_array_foreach(list, i, v) {
		load_dest(ctx, v, p, &p->http[p->nhttp]);
		p->nhttp++;
	}
}

void
policy_http_clear(struct policy *p)
{
	size_t	 i, j, k;

	for (i = 0; i < p->nhttp; i++) {
		for (j = 0; j < p->http[i].nrules; j++) {
			for (k = 0; k < p->http[i].rules[j].npaths; k++)
				free(p->http[i].rules[j].paths[k]);
			free(p->http[i].rules[j].paths);
		}
		free(p->http[i].rules);
	}
	free(p->http);
	p->http = NULL;
	p->nhttp = 0;
}
