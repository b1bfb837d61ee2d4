/*
 * Writes Squid's configuration for the policies' http destinations
 * (proxy.h).  Reads the credentials' secret files (root's, checked again
 * here) into a file only root may read; trusts the loaded policies.
 * Anything Squid would read as a macro, a quote or a second token is
 * refused rather than escaped: policy_http.c keeps names and paths to
 * plain characters, and a secret must be token68-like.
 */
#include <sys/stat.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "proxy.h"
#include "util.h"

/* What may stand in a secret: base64, base64url, hex, JWTs, "user:pass". */
#define SECRET_CHARS	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
			"0123456789-._~+/=:"
/* Reply headers the code may see; every other one is dropped, so a
 * server cannot echo the credential back in a header of its own. */
static const char *const reply_headers[] = {
	"Content-Type", "Content-Length", "Content-Encoding",
	"Content-Language", "Content-Range", "Accept-Ranges", "Cache-Control",
	"Date", "ETag", "Expires", "Last-Modified", "Location", "Retry-After",
	"Vary",
	"X-Squid-Error",	/* the refusal's name: ERR_STOCKADE_RULE, ... */
	NULL
};
static const char *const reasons[] = { PROXY_REASONS, NULL };

int
proxy_wanted(const struct policy_set *set)
{
	size_t	 i;

	for (i = 0; i < set->npolicies; i++)
		if (set->policies[i].nhttp > 0)
			return 1;
	return 0;
}

uint16_t
proxy_port(const struct policy_set *set, const struct policy *p, size_t i)
{
	size_t	 k, n = 0;

	for (k = 0; k < set->npolicies && &set->policies[k] != p; k++)
		n += set->policies[k].nhttp;
	return (uint16_t)(n + i);
}

/* The secret of c, checked: one line of SECRET_CHARS.  Caller wipes and
 * frees *out. */
static int
secret_read(const struct policy_credential *c, char **out, char *err,
    size_t errlen)
{
	char	*s = NULL;
	size_t	 len;

	if (policy_secret_check(c->file, err, errlen) == -1)
		return -1;
	if (read_file(c->file, CRED_SECRET_MAX, &s, &len) == -1) {
		snprintf(err, errlen, "%s: %s", c->file, strerror(errno));
		return -1;
	}
	if (len > 0 && s[len - 1] == '\n')
		s[--len] = '\0';
	if (len == 0 || strspn(s, SECRET_CHARS) != len) {
		/* Never say what the file holds. */
		snprintf(err, errlen, "%s: the secret must be one line of "
		    "letters, digits and -._~+/=: (credential %s)", c->file,
		    c->name);
		explicit_bzero(s, len);
		free(s);
		return -1;
	}
	*out = s;
	return 0;
}

/* s as a POSIX regex matching itself. */
static void
regex_quote(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (strchr(".+*?()[]{}|^$\\", *s) != NULL)
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* A prefix pattern ("/a/" and a star) as ^/a/, "/a" as ^/a(\?|$):
 * Squid's urlpath_regex sees the path and the query. */
static void
path_regex(FILE *f, const char *p)
{
	size_t	 len = strlen(p);
	char	 buf[HTTP_PATH_MAX + 1];

	fputc('^', f);
	if (p[len - 1] == '*') {
		snprintf(buf, sizeof(buf), "%.*s", (int)(len - 1), p);
		regex_quote(f, buf);
	} else {
		regex_quote(f, p);
		fputs("(\\?|$)", f);
	}
}

static void
conf_global(FILE *f, const struct proxy_conf *pc, const char *dir,
    const struct policy_set *set)
{
	char	 pool[INET6_ADDRSTRLEN];
	size_t	 i, j, k;
	int	 any = 0;

	inet_ntop(pc->pool.family, pc->pool.addr, pool, sizeof(pool));
	fprintf(f, "# Written by netguard from rules/network/*.yaml at each "
	    "start and reload.\n# Holds credentials: root's, mode 0600; do "
	    "not edit, do not copy.\n\n");
	/* Squid writes only under PROXY_LOG_DIR, as its own user. */
	fprintf(f, "pid_filename %s/%s/squid.pid\n", dir, PROXY_LOG_DIR);
	fprintf(f, "cache_log %s/%s/cache.log\n", dir, PROXY_LOG_DIR);
	fprintf(f, "logformat stockade %%ts.%%03tu %%>a %%>lp %%rm %%>Hs "
	    "%%>st %%<st %%tr %%err_code %%{stk_rule}note %%>rp\n");
	fprintf(f, "access_log stdio:%s/%s/%s stockade\n", dir, PROXY_LOG_DIR,
	    PROXY_LOG_NAME);
	fprintf(f, "cache_store_log none\nlogfile_rotate 0\n");
	/* No core file holds a credential. */
	fprintf(f, "coredump_dir none\n");
	fprintf(f, "cache deny all\ncache_mem 0 MB\n");
	fprintf(f, "error_directory %s/%s\n", dir, PROXY_ERRORS_DIR);
	fprintf(f, "httpd_suppress_version_string on\nvia off\n"
	    "forwarded_for delete\nhttp_upgrade_request_protocols OTHER deny "
	    "all\n");
	fprintf(f, "request_header_max_size 32 KB\nreply_header_max_size "
	    "32 KB\nshutdown_lifetime 1 seconds\n");
	fprintf(f, "dns_nameservers");
	for (i = 0; i < set->npolicies; i++) {
		const struct policy	*p = &set->policies[i];

		if (p->nhttp == 0)
			continue;
		for (j = 0; j < p->nupstreams; j++) {
			char	 a[INET6_ADDRSTRLEN];
			const struct sockaddr_storage *ss = &p->upstreams[j];

			if (ss->ss_family == AF_INET)
				inet_ntop(AF_INET, &((const struct sockaddr_in *)
				    ss)->sin_addr, a, sizeof(a));
			else
				inet_ntop(AF_INET6, &((const struct
				    sockaddr_in6 *)ss)->sin6_addr, a, sizeof(a));
			fprintf(f, " %s", a);
			any = 1;
		}
	}
	if (!any)
		fprintf(f, " 127.0.0.1");
	fprintf(f, "\n\nacl stk_sandboxes src %s/%u\n", pool,
	    (unsigned)pc->pool.prefix);
	fprintf(f, "acl stk_upgrade req_header Upgrade .\n");
	fprintf(f, "acl stk_h2c req_header HTTP2-Settings .\n");
	/* Dot segments, encoded dots and slashes, backslashes: a path the
	 * server might read as one the rules do not allow. */
	fprintf(f, "acl stk_path urlpath_regex -i "
	    "/\\.\\.?(/|\\?|$) %%2e %%2f %%5c \\\\ //\n");
	fprintf(f, "acl stk_rule src all\n");
	for (k = 0; reply_headers[k] != NULL; k++)
		fprintf(f, "reply_header_access %s allow all\n",
		    reply_headers[k]);
	fprintf(f, "reply_header_access All deny all\n\n");
	fprintf(f, "http_access deny !stk_sandboxes\n");
	fprintf(f, "http_access deny stk_upgrade\n");
	fprintf(f, "http_access deny stk_h2c\n");
	fprintf(f, "http_access deny stk_path\n");
	fprintf(f, "deny_info ERR_STOCKADE_UPGRADE stk_upgrade\n");
	fprintf(f, "deny_info ERR_STOCKADE_UPGRADE stk_h2c\n");
	fprintf(f, "deny_info ERR_STOCKADE_PATH stk_path\n");
	fprintf(f, "deny_info ERR_STOCKADE_RULE stk_rule\n");
	fprintf(f, "never_direct allow all\n\n");
}

/* Destination d (port n) of p: its listener, peer, rules, credential. */
static int
conf_dest(FILE *f, const struct proxy_conf *pc, const char *dir,
    const struct policy *p, const struct policy_http *h, unsigned n,
    char *err, size_t errlen)
{
	char		*secret = NULL;
	size_t		 r, i, k;
	unsigned	 m;

	fprintf(f, "# %s: %s port %u\n", p->name, h->host, (unsigned)h->port);
	fprintf(f, "https_port 0.0.0.0:%u accel defaultsite=%s name=d%u "
	    "tls-cert=%s/%s/d%u.crt tls-key=%s/%s/d%u.key "
	    "options=NO_TLSv1,NO_TLSv1_1\n", (unsigned)(pc->port_base + n),
	    h->host, n, dir, PROXY_TLS_DIR, n, dir, PROXY_TLS_DIR, n);
	fprintf(f, "acl d%u myportname d%u\n", n, n);
	fprintf(f, "acl d%u_host dstdomain %s\n", n, h->host);
	fprintf(f, "cache_peer %s parent %u 0 no-query no-digest originserver "
	    "name=p%u tls", h->host, (unsigned)h->port, n);
	if (h->ca_file[0] != '\0')
		fprintf(f, " tls-cafile=%s tls-default-ca=off", h->ca_file);
	fprintf(f, "\ncache_peer_access p%u allow d%u\ncache_peer_access p%u "
	    "deny all\n", n, n, n);
	/* Domain fronting: a Host other than the destination's. */
	fprintf(f, "http_access deny d%u !d%u_host\n", n, n);
	fprintf(f, "deny_info ERR_STOCKADE_HOST d%u_host\n", n);
	for (r = 0; r < h->nrules; r++) {
		const struct policy_http_rule	*rule = &h->rules[r];

		fprintf(f, "acl d%u_m%zu method", n, r);
		for (m = 0; m < HTTP_METHODS_N; m++)
			if (rule->methods & (1u << m))
				fprintf(f, " %s", policy_http_method_name(1u << m));
		fprintf(f, "\nacl d%u_p%zu urlpath_regex", n, r);
		for (i = 0; i < rule->npaths; i++) {
			fputc(' ', f);
			path_regex(f, rule->paths[i]);
		}
		fprintf(f, "\nhttp_access allow d%u d%u_host d%u_m%zu d%u_p%zu\n",
		    n, n, n, r, n, r);
		/* Which rule allowed it, for the audit record. */
		fprintf(f, "note stk_rule r%zu d%u d%u_host d%u_m%zu d%u_p%zu\n",
		    r, n, n, n, r, n, r);
	}
	if (!h->has_credential)
		return 0;
	if (secret_read(&h->cred, &secret, err, errlen) == -1)
		return -1;
	/* The code's own value of the header never reaches the server. */
	fprintf(f, "request_header_access %s deny d%u\n", h->cred.header, n);
	fprintf(f, "request_header_add %s \"%s%s\" d%u\n", h->cred.header,
	    h->cred.prefix, secret, n);
	/* A reply that carries the secret in a header the code would see
	 * is refused whole. */
	for (k = 0; reply_headers[k] != NULL; k++) {
		fprintf(f, "acl d%u_echo%zu rep_header %s ", n, k,
		    reply_headers[k]);
		regex_quote(f, secret);
		fprintf(f, "\nhttp_reply_access deny d%u d%u_echo%zu\n", n, n,
		    k);
		fprintf(f, "deny_info ERR_STOCKADE_CREDENTIAL_ECHO d%u_echo%zu\n",
		    n, k);
	}
	explicit_bzero(secret, strlen(secret));
	free(secret);
	return 0;
}

static int
write_text(const char *path, const char *text, char *err, size_t errlen)
{
	int	 fd, rv = 0;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1 ||
	    write_all(fd, text, strlen(text)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		rv = -1;
	}
	if (fd != -1)
		close(fd);
	return rv;
}

/* One page per reason: Squid's 403 body, which the code can read. */
static int
errors_write(const char *dir, char *err, size_t errlen)
{
	char	 d[4096], path[4096], name[64], text[128];
	size_t	 i, j;

	if (xsnprintf(d, sizeof(d), "%s/%s", dir, PROXY_ERRORS_DIR) == -1 ||
	    (mkdir(d, 0755) == -1 && errno != EEXIST)) {
		snprintf(err, errlen, "%s: %s", d, strerror(errno));
		return -1;
	}
	for (i = 0; reasons[i] != NULL; i++) {
		snprintf(name, sizeof(name), "ERR_STOCKADE_%s", reasons[i]);
		for (j = 0; name[j] != '\0'; j++)
			if (name[j] == '-')
				name[j] = '_';
			else if (name[j] >= 'a' && name[j] <= 'z')
				name[j] = (char)(name[j] - 'a' + 'A');
		snprintf(text, sizeof(text), "stockade-egress: %s\n",
		    reasons[i]);
		if (xsnprintf(path, sizeof(path), "%s/%s", d, name) == -1 ||
		    write_text(path, text, err, errlen) == -1)
			return -1;
	}
	/* Squid's own refusals (a bad request, an unreachable server) keep
	 * their names; its stylesheet is looked for here too. */
	if (xsnprintf(path, sizeof(path), "%s/errorpage.css", d) == -1)
		return -1;
	return write_text(path, "", err, errlen);
}

static int
certs_write(const struct policy_set *set, const struct proxy_conf *pc,
    const char *dir, char *err, size_t errlen)
{
	char	 d[4096], crt[4096], key[4096];
	size_t	 i, j;
	unsigned n = 0;

	if (xsnprintf(d, sizeof(d), "%s/%s", dir, PROXY_TLS_DIR) == -1 ||
	    (mkdir(d, 0700) == -1 && errno != EEXIST)) {
		snprintf(err, errlen, "%s: %s", d, strerror(errno));
		return -1;
	}
	for (i = 0; i < set->npolicies; i++)
		for (j = 0; j < set->policies[i].nhttp; j++, n++)
			if (xsnprintf(crt, sizeof(crt), "%s/d%u.crt", d, n) ==
			    -1 || xsnprintf(key, sizeof(key), "%s/d%u.key", d,
			    n) == -1 || proxy_cert_issue(pc->ca_cert,
			    pc->ca_key, set->policies[i].http[j].host, crt, key,
			    err, errlen) == -1)
				return -1;
	return 0;
}

int
proxy_conf_write(const struct policy_set *set, const struct proxy_conf *pc,
    const char *dir, int certs, char *err, size_t errlen)
{
	char		 path[4096], tmp[4096];
	FILE		*f = NULL;
	size_t		 i, j;
	unsigned	 n = 0;
	int		 fd = -1, rv = -1;

	if (errors_write(dir, err, errlen) == -1 ||
	    (certs && certs_write(set, pc, dir, err, errlen) == -1))
		return -1;
	if (xsnprintf(path, sizeof(path), "%s/%s", dir, PROXY_CONF_NAME) ==
	    -1 || xsnprintf(tmp, sizeof(tmp), "%s.tmp", path) == -1) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	(void)unlink(tmp);
	/* 0600 from the start: the credentials are written into it. */
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	conf_global(f, pc, dir, set);
	for (i = 0; i < set->npolicies; i++)
		for (j = 0; j < set->policies[i].nhttp; j++, n++) {
			if (n == PROXY_PORTS_MAX) {
				snprintf(err, errlen, "more than %d http "
				    "destinations", PROXY_PORTS_MAX);
				goto out;
			}
			if (conf_dest(f, pc, dir, &set->policies[i],
			    &set->policies[i].http[j], n, err, errlen) == -1)
				goto out;
		}
	/* Whatever no rule allowed: the reason the code reads. */
	fprintf(f, "\nhttp_access deny stk_rule\n");
	if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) == -1) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (rename(tmp, path) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	rv = 0;
out:
	if (f != NULL)
		fclose(f);
	if (fd != -1)
		close(fd);
	if (rv == -1)
		(void)unlink(tmp);
	return rv;
}
