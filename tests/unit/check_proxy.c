/*
 * Network policies' "http" destinations (policy_http.c) and the egress
 * proxy's configuration made from them (proxy_conf.c, proxy_cert.c): a
 * good policy loads; a secret others can read, a rule on a destination
 * the allow list does not allow, overlapping rules and bad paths are
 * refused; the Squid configuration holds the rules, the credential and
 * the listener, and is written 0600; a log line parses only when it is
 * exactly what the logformat writes.
 */
#include <sys/stat.h>

#include "testutil.h"
#include "policy.h"
#include "proxy.h"

static char	 secret_path[PATH_MAX];

/* A rules directory with network/p.yaml holding yaml, where @SECRET@
 * stands for secret_path (a 0600 file made in the same directory). */
static struct policy_set *
load_http(char *dir, size_t len, const char *yaml, mode_t secret_mode)
{
	char	 p[PATH_MAX], text[8192];
	const char *at;

	tu_tmpdir(dir, len);
	tu_path(secret_path, sizeof(secret_path), dir, "token");
	tu_write(secret_path, "tok.EN-123\n", 11);
	ck_assert_int_eq(chmod(secret_path, secret_mode), 0);
	tu_path(p, sizeof(p), dir, "network");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	if ((at = strstr(yaml, "@SECRET@")) != NULL)
		ck_assert_int_ne(xsnprintf(text, sizeof(text), "%.*s%s%s",
		    (int)(at - yaml), yaml, secret_path, at + 8), -1);
	else
		ck_assert_int_ne(xsnprintf(text, sizeof(text), "%s", yaml), -1);
	ck_assert_int_ne(xsnprintf(p, sizeof(p), "%s/network/p.yaml", dir),
	    -1);
	tu_write(p, text, strlen(text));
	return policy_set_load(dir);
}

#define HEAD	"level: L2\nallow:\n" \
		"  - names: [api.test]\n    ports: [443]\n" \
		"  - names: [other.test, more.test]\n    ports: [443]\n" \
		"resolver: {upstreams: [192.0.2.53]}\n"
#define CRED	"    credential: {name: reports-token, header: Authorization, " \
		"prefix: \"Bearer \", file: \"@SECRET@\"}\n"
#define GOOD	HEAD "http:\n  - host: api.test\n    rules:\n" \
		"      - {methods: [GET, HEAD], paths: [\"/v1/reports/*\", /v1/status]}\n" \
		"      - {methods: [POST], paths: [\"/v1/reports/*\"]}\n" CRED

START_TEST(test_http_policy_loads_rules_and_credential)
{
	char			 dir[PATH_MAX];
	struct policy_set	*set = load_http(dir, sizeof(dir), GOOD, 0600);
	const struct policy	*p;
	const struct policy_http *h;

	ck_assert_ptr_nonnull(set);
	p = policy_find(set, "p");
	ck_assert_uint_eq(p->nhttp, 1);
	h = &p->http[0];
	ck_assert_str_eq(h->host, "api.test");
	ck_assert_uint_eq(h->port, 443);
	ck_assert_uint_eq(h->group, 0);
	ck_assert_uint_eq(h->nrules, 2);
	ck_assert_uint_eq(h->rules[0].methods, HTTP_GET | HTTP_HEAD);
	ck_assert_str_eq(h->rules[0].paths[1], "/v1/status");
	ck_assert_int_eq(h->has_credential, 1);
	ck_assert_str_eq(h->cred.name, "reports-token");
	ck_assert_str_eq(h->cred.prefix, "Bearer ");
	ck_assert_str_eq(h->cred.file, secret_path);
	ck_assert_int_eq(proxy_wanted(set), 1);
	policy_set_free(set);
}
END_TEST

/* Each is refused: the whole set fails to load, as `rules check` says. */
static const char *const bad_http[] = {
	/* a destination the allow list does not allow, or not alone */
	HEAD "http:\n  - host: nope.test\n    rules: [{methods: [GET], paths: [/]}]\n",
	HEAD "http:\n  - host: api.test\n    port: 8443\n    rules: [{methods: [GET], paths: [/]}]\n",
	HEAD "http:\n  - host: other.test\n    rules: [{methods: [GET], paths: [/]}]\n",
	/* overlapping rules, and the same destination twice */
	HEAD "http:\n  - host: api.test\n    rules:\n"
	    "      - {methods: [GET], paths: [\"/v1/*\"]}\n"
	    "      - {methods: [GET, POST], paths: [/v1/reports]}\n",
	HEAD "http:\n  - host: api.test\n    rules: [{methods: [GET], paths: [/a, /a]}]\n",
	HEAD "http:\n  - host: api.test\n    rules: [{methods: [GET], paths: [/a]}]\n"
	    "  - host: api.test\n    rules: [{methods: [POST], paths: [/b]}]\n",
	/* methods and paths */
	HEAD "http:\n  - host: api.test\n    rules: [{methods: [CONNECT], paths: [/]}]\n",
	HEAD "http:\n  - host: api.test\n    rules: [{methods: [GET], paths: [\"/a/../b\"]}]\n",
	HEAD "http:\n  - host: api.test\n    rules: [{methods: [GET], paths: [\"/a/*/b\"]}]\n",
	HEAD "http:\n  - host: api.test\n    rules: [{methods: [GET], paths: [\"/a%2fb\"]}]\n",
	HEAD "http:\n  - host: api.test\n    rules: [{methods: [GET], paths: [\"//a\"]}]\n",
	HEAD "http:\n  - host: api.test\n    rules: [{methods: [GET], paths: [a]}]\n",
	HEAD "http:\n  - host: api.test\n    rules: []\n",
	/* credentials: never in the text, a header the proxy owns */
	HEAD "http:\n  - host: api.test\n    rules: [{methods: [GET], paths: [/]}]\n"
	    "    credential: {name: t, header: Authorization, value: abc, file: \"@SECRET@\"}\n",
	HEAD "http:\n  - host: api.test\n    rules: [{methods: [GET], paths: [/]}]\n"
	    "    credential: {name: t, header: Host, file: \"@SECRET@\"}\n",
	HEAD "http:\n  - host: api.test\n    rules: [{methods: [GET], paths: [/]}]\n"
	    "    credential: {name: t, header: Authorization, file: relative}\n",
	HEAD "http:\n  - host: api.test\n    rules: [{methods: [GET], paths: [/]}]\n"
	    "    credential: {name: t, header: Authorization, prefix: \"%s\", file: \"@SECRET@\"}\n",
	/* only L2 */
	"level: L3\nresolver: {upstreams: [192.0.2.53]}\nhttp: []\n",
};

START_TEST(test_http_policy_refuses_malformed)
{
	char	 dir[PATH_MAX];

	if (load_http(dir, sizeof(dir), bad_http[_i], 0600) != NULL)
		ck_abort_msg("accepted: %s", bad_http[_i]);
}
END_TEST

START_TEST(test_http_policy_refuses_secret_others_can_read)
{
	static const mode_t	 modes[] = { 0640, 0604, 0644, 0660 };
	char			 dir[PATH_MAX];
	struct policy_set	*set;
	size_t			 i;

	for (i = 0; i < nitems(modes); i++)
		ck_assert_ptr_null(load_http(dir, sizeof(dir), GOOD, modes[i]));
	set = load_http(dir, sizeof(dir), GOOD, 0400);
	ck_assert_ptr_nonnull(set);
	policy_set_free(set);
}
END_TEST

/* A CA for the proxy's certificates, made with the openssl tool. */
static void
ca_make(const char *dir, struct proxy_conf *pc)
{
	char	 cmd[3 * PATH_MAX];

	tu_path(pc->ca_cert, sizeof(pc->ca_cert), dir, "ca.pem");
	tu_path(pc->ca_key, sizeof(pc->ca_key), dir, "ca.key");
	ck_assert_int_ne(xsnprintf(cmd, sizeof(cmd), "openssl req -x509 "
	    "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout %s "
	    "-out %s -subj /CN=test-egress-ca -days 1 2>/dev/null",
	    pc->ca_key, pc->ca_cert), -1);
	ck_assert_int_eq(system(cmd), 0);
	pc->port_base = PROXY_PORT_BASE;
	ck_assert_int_eq(policy_parse_cidr("10.231.0.0/16", &pc->pool), 0);
}

START_TEST(test_proxy_conf_holds_rules_credential_and_listener)
{
	char			 dir[PATH_MAX], out[PATH_MAX], path[PATH_MAX];
	char			 err[1024], cmd[2 * PATH_MAX], *text;
	struct policy_set	*set = load_http(dir, sizeof(dir), GOOD, 0600);
	struct proxy_conf	 pc;
	struct stat		 st;
	size_t			 len;

	ck_assert_ptr_nonnull(set);
	memset(&pc, 0, sizeof(pc));
	ca_make(dir, &pc);
	tu_path(out, sizeof(out), dir, "proxy");
	ck_assert_int_eq(mkdir(out, 0700), 0);
	if (proxy_conf_write(set, &pc, out, 1, err, sizeof(err)) == -1)
		ck_abort_msg("proxy_conf_write: %s", err);
	tu_path(path, sizeof(path), out, PROXY_CONF_NAME);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	text = tu_read(path, &len);
	ck_assert_ptr_nonnull(strstr(text, "https_port 0.0.0.0:15080 accel "
	    "defaultsite=api.test name=d0 "));
	ck_assert_ptr_nonnull(strstr(text, "acl d0_m0 method GET HEAD\n"));
	ck_assert_ptr_nonnull(strstr(text, "acl d0_p0 urlpath_regex "
	    "^/v1/reports/ ^/v1/status(\\?|$)\n"));
	ck_assert_ptr_nonnull(strstr(text, "acl d0_m1 method POST\n"));
	ck_assert_ptr_nonnull(strstr(text, "request_header_add Authorization "
	    "\"Bearer tok.EN-123\" d0\n"));
	ck_assert_ptr_nonnull(strstr(text, "rep_header Location "
	    "tok\\.EN-123\n"));
	ck_assert_ptr_nonnull(strstr(text, "acl stk_sandboxes src "
	    "10.231.0.0/16\n"));
	ck_assert_ptr_nonnull(strstr(text, "coredump_dir none\n"));
	/* Whatever no rule allows is refused, last. */
	ck_assert_ptr_nonnull(strstr(text, "\nhttp_access deny stk_rule\n"));
	free(text);
	/* The certificate is the CA's, for the destination's name. */
	ck_assert_int_ne(xsnprintf(cmd, sizeof(cmd), "openssl verify "
	    "-CAfile %s -verify_hostname api.test %s/tls/d0.crt >/dev/null",
	    pc.ca_cert, out), -1);
	ck_assert_int_eq(system(cmd), 0);
	tu_path(path, sizeof(path), out, "tls/d0.key");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	/* Squid itself reads it, when it is installed. */
	if (access("/usr/sbin/squid", X_OK) == 0) {
		ck_assert_int_ne(xsnprintf(cmd, sizeof(cmd), "/usr/sbin/squid "
		    "-k parse -f %s/" PROXY_CONF_NAME " 2>&1 | grep -E "
		    "'ERROR|FATAL'", out), -1);
		ck_assert_int_ne(system(cmd), 0);
	}
	policy_set_free(set);
}
END_TEST

START_TEST(test_proxy_conf_refuses_a_secret_it_cannot_quote)
{
	char			 dir[PATH_MAX], out[PATH_MAX], err[1024];
	struct policy_set	*set = load_http(dir, sizeof(dir), GOOD, 0600);
	struct proxy_conf	 pc;

	ck_assert_ptr_nonnull(set);
	memset(&pc, 0, sizeof(pc));
	ca_make(dir, &pc);
	/* A quote and a macro: Squid would read them. */
	tu_write(secret_path, "a\" %>a\n", 7);
	ck_assert_int_eq(chmod(secret_path, 0600), 0);
	tu_path(out, sizeof(out), dir, "proxy");
	ck_assert_int_eq(mkdir(out, 0700), 0);
	ck_assert_int_eq(proxy_conf_write(set, &pc, out, 0, err, sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "one line of letters"));
	ck_assert_ptr_null(strstr(err, "%>a"));
	policy_set_free(set);
}
END_TEST

START_TEST(test_proxy_log_parses_a_line_and_nothing_else)
{
	static const char *const bad[] = {
		"",
		"1733370000.123 10.231.0.2 15080 GET 200 120 340 12 - r0",
		"1733370000.123 10.231.0.2 15080 GET 200 120 340 12 - r0 /a extra",
		"1733370000.123 not-an-ip 15080 GET 200 120 340 12 - r0 /a",
		"1733370000.123 10.231.0.2 0 GET 200 120 340 12 - r0 /a",
		"1733370000.123 10.231.0.2 15080 get 200 120 340 12 - r0 /a",
		"1733370000.123 10.231.0.2 15080 GET 2000 120 340 12 - r0 /a",
		"1733370000.123 10.231.0.2 15080 GET 200 -1 340 12 - r0 /a",
		"1733370000.123 10.231.0.2 15080 GET 200 120 340 12 ERR%x - /a",
		"1733370000.123 10.231.0.2 15080 GET 200 120 340 12 - R0\" /a",
		"1733370000.123 10.231.0.2 15080 GET 200 120 340 12 - r0 /a\tb",
	};
	struct proxy_record	 r;
	char			 ctl[128];
	size_t			 i;

	ck_assert_int_eq(proxy_log_parse("1733370000.123 10.231.0.2 15081 "
	    "DELETE 403 95 310 3 ERR_STOCKADE_RULE - /v1/reports/1?x=%20", &r),
	    0);
	ck_assert_uint_eq(r.port, 15081);
	ck_assert_str_eq(r.method, "DELETE");
	ck_assert_uint_eq(r.status, 403);
	ck_assert_uint_eq(r.bytes_out, 95);
	ck_assert_uint_eq(r.bytes_in, 310);
	ck_assert_str_eq(r.error, "ERR_STOCKADE_RULE");
	ck_assert_str_eq(r.rule, "-");
	ck_assert_str_eq(r.path, "/v1/reports/1?x=%20");
	for (i = 0; i < nitems(bad); i++)
		if (proxy_log_parse(bad[i], &r) != -1)
			ck_abort_msg("parsed: %s", bad[i]);
	/* A control byte in the path. */
	snprintf(ctl, sizeof(ctl), "1 10.231.0.2 15080 GET 200 1 1 1 - r0 "
	    "/a%cb", 0x7f);
	ck_assert_int_eq(proxy_log_parse(ctl, &r), -1);
}
END_TEST

static Suite *
proxy_suite(void)
{
	Suite	*s = suite_create("proxy");
	TCase	*tc = tcase_create("proxy");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_http_policy_loads_rules_and_credential);
	tcase_add_loop_test(tc, test_http_policy_refuses_malformed, 0,
	    (int)nitems(bad_http));
	tcase_add_test(tc, test_http_policy_refuses_secret_others_can_read);
	tcase_add_test(tc, test_proxy_conf_holds_rules_credential_and_listener);
	tcase_add_test(tc, test_proxy_conf_refuses_a_secret_it_cannot_quote);
	tcase_add_test(tc, test_proxy_log_parses_a_line_and_nothing_else);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(proxy_suite)
