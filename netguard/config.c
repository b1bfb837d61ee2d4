/*
 * rules/netguard.yaml: the daemon's settings, validated like every policy
 * file (errors name file:line:column).  A missing file means the defaults.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "netguard.h"
#include "util.h"

#define POOL_PREFIX_MIN	8	/* the widest pool accepted */
#define POOL_PREFIX_MAX	29	/* at least two /30s */

static void
conf_defaults(struct ng_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->socket_path, sizeof(c->socket_path),
	    "/run/stockade/netguard.sock");
	c->socket_mode = 0660;
	snprintf(c->audit_socket, sizeof(c->audit_socket),
	    "/run/stockade/auditd.sock");
	c->clients[0] = 0;
	c->nclients = 1;
	(void)policy_parse_cidr("10.231.0.0/16", &c->pool);
	snprintf(c->state_dir, sizeof(c->state_dir), "/run/stockade/netguard");
	c->nflog_group = 17;
	c->log_rate = 20;
	c->flow_rate = 50;
	c->flow_summary_s = 10;
	c->resolver_port = 53;
	c->resolver.ttl_min = 5;
	c->resolver.ttl_max = 300;
	c->resolver.tunnel_threshold = 60;
	c->resolver.qps_max = 50;
	c->resolver.timeout_ms = 2000;
	c->proxy.port_base = PROXY_PORT_BASE;
	snprintf(c->proxy.dir, sizeof(c->proxy.dir), "%s", PROXY_DIR_DEFAULT);
	c->proxy.pool = c->pool;
}

static void
get_path(struct conf_ctx *ctx, const json_t *o, const char *key, char *out,
    size_t len, int allow_name)
{
	const char	*s;

	if (conf_get_string(ctx, o, key, &s) != 1)
		return;
	if ((!allow_name && s[0] != '/') || xsnprintf(out, len, "%s", s) == -1)
		conf_error(ctx, json_object_get(o, key), "%s: an absolute path "
		    "%sis required", key, allow_name ? "or a name " : "");
}

static void
load_resolver(struct conf_ctx *ctx, const json_t *o, struct ng_conf *c)
{
	static const char *const keys[] = { "port", "ttl_min", "ttl_max",
	    "tunnel_threshold", "qps_max", "timeout_ms", NULL };
	int64_t	 i;

	conf_check_keys(ctx, o, keys);
	if (conf_get_int(ctx, o, "port", 1, 65535, &i) == 1)
		c->resolver_port = (uint16_t)i;
	if (conf_get_int(ctx, o, "ttl_min", 0, 86400, &i) == 1)
		c->resolver.ttl_min = (uint32_t)i;
	if (conf_get_int(ctx, o, "ttl_max", 1, 86400, &i) == 1)
		c->resolver.ttl_max = (uint32_t)i;
	if (conf_get_int(ctx, o, "tunnel_threshold", 1, 100, &i) == 1)
		c->resolver.tunnel_threshold = (unsigned)i;
	if (conf_get_int(ctx, o, "qps_max", 1, 100000, &i) == 1)
		c->resolver.qps_max = (unsigned)i;
	if (conf_get_int(ctx, o, "timeout_ms", 10, 60000, &i) == 1)
		c->resolver.timeout_ms = (unsigned)i;
	if (c->resolver.ttl_min > c->resolver.ttl_max)
		conf_error(ctx, o, "ttl_min is above ttl_max");
}

/* The egress proxy's settings; needed once a policy has "http". */
static void
load_proxy(struct conf_ctx *ctx, const json_t *o, struct ng_conf *c)
{
	static const char *const keys[] = { "ca_cert", "ca_key", "port_base",
	    "dir", NULL };
	char	 err[CONF_ERROR_LEN];
	int64_t	 i;

	conf_check_keys(ctx, o, keys);
	get_path(ctx, o, "ca_cert", c->proxy.ca_cert, sizeof(c->proxy.ca_cert),
	    0);
	get_path(ctx, o, "ca_key", c->proxy.ca_key, sizeof(c->proxy.ca_key),
	    0);
	get_path(ctx, o, "dir", c->proxy.dir, sizeof(c->proxy.dir), 0);
	if (conf_get_int(ctx, o, "port_base", 1024, 65535 - PROXY_PORTS_MAX,
	    &i) == 1)
		c->proxy.port_base = (uint16_t)i;
	/* The key signs certificates every sandbox trusts. */
	if (c->proxy.ca_key[0] != '\0' && policy_secret_check(c->proxy.ca_key,
	    err, sizeof(err)) == -1)
		conf_error(ctx, json_object_get(o, "ca_key"), "%s", err);
}

int
ng_conf_load(const char *rules_dir, struct ng_conf *c)
{
	static const char *const top[] = { "socket", "socket_mode",
	    "audit_socket", "clients", "uplink_netns", "state_dir", "pool",
	    "nflog_group", "log_rate", "flow_rate", "flow_summary_interval",
	    "resolver", "http_proxy", NULL };
	struct conf_doc	*doc;
	struct conf_ctx	 ctx;
	char		 path[PATH_MAX], err[CONF_ERROR_LEN];
	const char	*s;
	json_t		*root, *v;
	int64_t		 i;

	conf_defaults(c);
	if (xsnprintf(path, sizeof(path), "%s/%s", rules_dir,
	    NETGUARD_CONF_FILE) == -1)
		return -1;
	if (access(path, F_OK) == -1 && errno == ENOENT)
		return 0;
	if ((doc = conf_doc_load_file(path, err, sizeof(err))) == NULL) {
		conf_report("%s", err);
		return -1;
	}
	conf_ctx_init(&ctx, doc);
	root = conf_doc_root(doc);
	if (conf_expect_object(&ctx, root, NETGUARD_CONF_FILE) == 0) {
		conf_check_keys(&ctx, root, top);
		get_path(&ctx, root, "socket", c->socket_path,
		    sizeof(c->socket_path), 0);
		if (conf_get_int(&ctx, root, "socket_mode", 0, 0777, &i) == 1)
			c->socket_mode = (mode_t)i;
		get_path(&ctx, root, "audit_socket", c->audit_socket,
		    sizeof(c->audit_socket), 0);
		if (conf_get_array(&ctx, root, "clients", &v) == 1)
			c->nclients = conf_users(&ctx, v, "clients", c->clients,
			    NG_CLIENTS_MAX);
		get_path(&ctx, root, "uplink_netns", c->uplink_netns,
		    sizeof(c->uplink_netns), 1);
		get_path(&ctx, root, "state_dir", c->state_dir,
		    sizeof(c->state_dir), 0);
		if (conf_get_string(&ctx, root, "pool", &s) == 1 &&
		    (policy_parse_cidr(s, &c->pool) == -1 ||
		    c->pool.family != AF_INET ||
		    c->pool.prefix < POOL_PREFIX_MIN ||
		    c->pool.prefix > POOL_PREFIX_MAX))
			conf_error(&ctx, json_object_get(root, "pool"), "pool: "
			    "an IPv4 network, /%d to /%d, no host bits",
			    POOL_PREFIX_MIN, POOL_PREFIX_MAX);
		if (conf_get_int(&ctx, root, "nflog_group", 1, 65535, &i) == 1)
			c->nflog_group = (unsigned)i;
		if (conf_get_int(&ctx, root, "log_rate", 1, 10000, &i) == 1)
			c->log_rate = (unsigned)i;
		if (conf_get_int(&ctx, root, "flow_rate", 0, 10000, &i) == 1)
			c->flow_rate = (unsigned)i;
		if (conf_get_int(&ctx, root, "flow_summary_interval", 1, 3600,
		    &i) == 1)
			c->flow_summary_s = (unsigned)i;
		if (conf_get_object(&ctx, root, "resolver", &v) == 1)
			load_resolver(&ctx, v, c);
		if (conf_get_object(&ctx, root, "http_proxy", &v) == 1)
			load_proxy(&ctx, v, c);
	}
	if (ctx.nerrors) {
		conf_ctx_report(&ctx);
		conf_doc_free(doc);
		return -1;
	}
	conf_doc_free(doc);
	c->proxy.pool = c->pool;	/* Squid admits only sandboxes */
	return 0;
}
