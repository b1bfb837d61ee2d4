/*
 * Sandbox profiles and mcp-exec.yaml: the shipped files load with the
 * documented defaults; bad values are refused with their position; a
 * profile name never leaves rules/profiles/; server.allowed_origins takes
 * only http(s)://host[:port], at most ORIGINS_MAX of them; tls: follows
 * the network and takes only a PEM file of certificates as extra_ca;
 * fleet: every key is checked, and no quota store is on without redis.
 */
#include "sandbox/trust.h"
#include "sessions/profile.h"
#include "testutil.h"

static void
rules_with(char *dir, size_t len, const char *profile_yaml)
{
	char	 p[PATH_MAX];

	tu_tmpdir(dir, len);
	tu_path(p, sizeof(p), dir, "profiles");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	tu_path(p, sizeof(p), dir, "profiles/t.yaml");
	tu_write(p, profile_yaml, strlen(profile_yaml));
}

START_TEST(test_shipped_default_profile)
{
	struct profile		 p;
	struct mcpexec_conf	 c;

	ck_assert_int_eq(profile_load("rules", "default", &p), 0);
	ck_assert_uint_eq(p.limits.memory, 512ULL << 20);
	ck_assert_uint_eq(p.limits.pids, 64);
	ck_assert_uint_eq(p.limits.cpu_millis, 1000);
	ck_assert_uint_eq(p.timeout_default_ms, 10000);
	ck_assert_uint_eq(p.timeout_max_ms, 60000);
	ck_assert_uint_eq(p.stdout_max, 32 * 1024);
	ck_assert_uint_eq(p.stderr_max, 8 * 1024);
	ck_assert_int_eq(p.net, NET_NONE);
	ck_assert_int_eq(p.landlock_required, 1);
	ck_assert_uint_eq(p.artifacts.types, (1u << ART_NTYPES) - 1);
	ck_assert_int_eq(mcpexec_conf_load("rules", &c), 0);
	ck_assert_uint_eq(c.idmap.first, 200000);
	ck_assert_str_eq(c.default_profile, "default");
}
END_TEST

START_TEST(test_values_parsed)
{
	struct profile	 p;
	char		 dir[PATH_MAX];

	rules_with(dir, sizeof(dir), "limits: {memory: 64M, cpu: 0.5, pids: 8}\n"
	    "network: loopback\nartifacts: {dir: out, types: [png, csv]}\n"
	    "inputs: {roots: [/srv/data]}\nlandlock: best_effort\n"
	    "code_retention: sample\n");
	ck_assert_int_eq(profile_load(dir, "t", &p), 0);
	ck_assert_str_eq(p.code_retention, "sample");
	ck_assert_uint_eq(p.limits.memory, 64ULL << 20);
	ck_assert_uint_eq(p.limits.cpu_millis, 500);
	ck_assert_int_eq(p.net, NET_LOOPBACK);
	ck_assert_str_eq(p.artifact_dir, "out");
	ck_assert_uint_eq(p.artifacts.types, (1u << ART_PNG) | (1u << ART_CSV));
	ck_assert_uint_eq(p.inputs.nroots, 1);
	ck_assert_str_eq(p.inputs.roots[0], "/srv/data");
	ck_assert_int_eq(p.landlock_required, 0);
	ck_assert_int_eq(p.runtime, SANDBOX_NATIVE);
	rules_with(dir, sizeof(dir), "runtime: native\n");
	ck_assert_int_eq(profile_load(dir, "t", &p), 0);
	ck_assert_int_eq(p.runtime, SANDBOX_NATIVE);
}
END_TEST

/* No runsc: the profile is refused at load, never run on the native wall. */
START_TEST(test_gvisor_refused_without_runsc)
{
	struct profile	 p;
	char		 dir[PATH_MAX];

	ck_assert_int_eq(setenv("STOCKADE_RUNSC", "/nonexistent/runsc", 1), 0);
	rules_with(dir, sizeof(dir), "runtime: gvisor\n");
	ck_assert_int_eq(profile_load(dir, "t", &p), -1);
}
END_TEST

static const char *const bad[] = {
	"limits: {cpu: 0}\n",
	"limits: {memory: 1K}\n",
	"limits: {pids: 1}\n",
	"limits: {mem: 1G}\n",
	"timeout: {default_ms: 70000, max_ms: 60000}\n",
	"artifacts: {dir: ../etc}\n",
	"artifacts: {dir: /etc}\n",
	"artifacts: {types: [exe]}\n",
	"inputs: {roots: [relative/dir]}\n",
	"network: ../../x\n",
	"hostname: Bad Name\n",
	"landlock: sometimes\n",
	"code_retention: everything\n",
	"tls: {ca_bundle: maybe}\n",
	"tls: {extra_ca: relative.pem}\n",
	"tls: {extra_ca: /nonexistent/ca.pem}\n",
	"tls: {extra_ca: /etc}\n",
	"tls: {cert: /etc/ssl/x.pem}\n",
	"runtime: kvm\n",
	"runtime: [gvisor]\n",
	"network: mirror\npackages: {install: true}\n",
	"network: none\npackages: {install: true, index: https://pypi.org/simple}\n",
	"network: mirror\npackages: {install: true, index: http://pypi.org/simple}\n",
	"network: mirror\npackages: {install: true, index: \"https://pypi.org/simple x\"}\n",
	"network: mirror\npackages: {install: true, index: \"https://pypi.org/simple\\n\"}\n",
	"network: mirror\npackages: {install: true, index: https:///simple}\n",
	"network: mirror\npackages: {install: 1, index: https://pypi.org/simple}\n",
	"network: mirror\npackages: {install: true, index: https://pypi.org/simple, "
	    "cache: true}\n",
	"network: mirror\nruntime: gvisor\npackages: {install: true, index: https://pypi.org/simple}\n",
};

START_TEST(test_bad_values_refused)
{
	struct profile	 p;
	char		 dir[PATH_MAX];

	rules_with(dir, sizeof(dir), bad[_i]);
	ck_assert_int_eq(profile_load(dir, "t", &p), -1);
}
END_TEST

START_TEST(test_tls_follows_network)
{
	struct profile	 p;
	char		 dir[PATH_MAX];

	rules_with(dir, sizeof(dir), "network: loopback\n");
	ck_assert_int_eq(profile_load(dir, "t", &p), 0);
	ck_assert_int_eq(p.tls_on, 0);
	rules_with(dir, sizeof(dir), "network: mirror\n");
	ck_assert_int_eq(profile_load(dir, "t", &p), 0);
	ck_assert_int_eq(p.tls_on, 1);
	ck_assert_int_eq(p.tls_system, 1);
	ck_assert_str_eq(p.tls_extra_ca, "");
	rules_with(dir, sizeof(dir), "network: mirror\ntls: {ca_bundle: none}\n");
	ck_assert_int_eq(profile_load(dir, "t", &p), 0);
	ck_assert_int_eq(p.tls_on, 0);
}
END_TEST

START_TEST(test_packages_parsed)
{
	struct profile	 p;
	char		 dir[PATH_MAX];

	rules_with(dir, sizeof(dir), "network: mirror\n");
	ck_assert_int_eq(profile_load(dir, "t", &p), 0);
	ck_assert_int_eq(p.pkg_install, 0);
	rules_with(dir, sizeof(dir), "network: mirror\npackages: {install: true, "
	    "index: \"https://pypi.corp.example:8443/root/pypi/+simple/\"}\n");
	ck_assert_int_eq(profile_load(dir, "t", &p), 0);
	ck_assert_int_eq(p.pkg_install, 1);
	ck_assert_str_eq(p.pkg_index,
	    "https://pypi.corp.example:8443/root/pypi/+simple/");
	/* Off, an index may be named and is left unused. */
	rules_with(dir, sizeof(dir), "network: none\npackages: {install: false, "
	    "index: https://pypi.org/simple}\n");
	ck_assert_int_eq(profile_load(dir, "t", &p), 0);
	ck_assert_int_eq(p.pkg_install, 0);
}
END_TEST

/* Debian's bundle stands in for an operator's CA file: many certificates. */
START_TEST(test_tls_extra_ca_accepted)
{
	struct profile	 p;
	char		 dir[PATH_MAX];

	rules_with(dir, sizeof(dir), "network: none\ntls: {ca_bundle: none, "
	    "extra_ca: " TRUST_SYSTEM_BUNDLE "}\n");
	ck_assert_int_eq(profile_load(dir, "t", &p), 0);
	ck_assert_int_eq(p.tls_on, 1);
	ck_assert_int_eq(p.tls_system, 0);
	ck_assert_str_eq(p.tls_extra_ca, TRUST_SYSTEM_BUNDLE);
}
END_TEST

static const char *const bad_ca[] = {
	"",					/* empty: no certificate */
	"not a certificate\n",
	"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
	"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
};

START_TEST(test_tls_extra_ca_refused)
{
	struct profile	 p;
	char		 dir[PATH_MAX], ca[PATH_MAX], yaml[PATH_MAX + 64];

	rules_with(dir, sizeof(dir), "network: none\n");
	tu_path(ca, sizeof(ca), dir, "ca.pem");
	tu_write(ca, bad_ca[_i], strlen(bad_ca[_i]));
	snprintf(yaml, sizeof(yaml), "tls: {extra_ca: %s}\n", ca);
	rules_with(dir, sizeof(dir), yaml);
	ck_assert_int_eq(profile_load(dir, "t", &p), -1);
}
END_TEST

START_TEST(test_profile_names_stay_in_profiles_dir)
{
	struct profile	 p;

	ck_assert_int_eq(profile_name_ok("default"), 1);
	ck_assert_int_eq(profile_name_ok("data-2_x"), 1);
	ck_assert_int_eq(profile_name_ok("../audit"), 0);
	ck_assert_int_eq(profile_name_ok("a/b"), 0);
	ck_assert_int_eq(profile_name_ok(""), 0);
	ck_assert_int_eq(profile_name_ok(".hidden"), 0);
	ck_assert_int_eq(profile_load("rules", "../audit", &p), -1);
}
END_TEST

/* A rules directory holding only mcp-exec.yaml. */
static void
conf_with(char *dir, size_t len, const char *yaml)
{
	char	 p[PATH_MAX];

	tu_tmpdir(dir, len);
	tu_path(p, sizeof(p), dir, MCPEXEC_CONFIG);
	tu_write(p, yaml, strlen(yaml));
}

START_TEST(test_server_defaults)
{
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX];

	conf_with(dir, sizeof(dir), "server: {}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_uint_eq(c.server.norigins, 0);
	ck_assert_str_eq(c.server.netguard_socket,
	    "/run/stockade/netguard.sock");
	ck_assert_str_eq(c.server.audit_socket, "/run/stockade/auditd.sock");
	ck_assert_str_eq(c.server.local_principal, "user:local");
	ck_assert_uint_eq(c.server.busy_poll_us, SERVER_BUSY_POLL_US);
	conf_with(dir, sizeof(dir), "server: {busy_poll_us: 0}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_uint_eq(c.server.busy_poll_us, 0);
}
END_TEST

/* Each section's pair of caps, and one principal leaving room for others. */
START_TEST(test_server_caps)
{
	static const char *const bad_caps[] = {
		"server: {sessions: {max_total: 2, max_per_principal: 3}}\n",
		"server: {tasks: {max_total: 2, max_per_principal: 3}}\n",
		"server: {listen: {max_per_principal: 65}}\n",	/* > 64 */
		"server: {listen: {max_total: 0}}\n",
		"server: {tasks: {max_ttl_ms: 10}}\n",
		"server: {listen: {max_lifetime_s: 86401}}\n",
		"server: {tasks: {ttl: 1}}\n",
		"server: {busy_poll_us: 1001}\n",	/* at most 1 ms */
		"server: {busy_poll_us: -1}\n",
	};
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX];
	size_t			 i;

	conf_with(dir, sizeof(dir), "server: {}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_uint_eq(c.server.tasks.max_total, 256);
	ck_assert_uint_eq(c.server.tasks.max_per_principal, 32);
	ck_assert_uint_eq(c.server.listen.max_total, 64);
	ck_assert_uint_eq(c.server.listen.max_per_principal, 4);
	conf_with(dir, sizeof(dir), "server:\n"
	    "  sessions: {max_total: 9, max_per_principal: 3}\n"
	    "  tasks: {max_total: 8, max_per_principal: 8, max_ttl_ms: 5000}\n"
	    "  listen: {max_total: 7, max_per_principal: 1, max_lifetime_s: 60}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_uint_eq(c.server.max_sessions, 9);
	ck_assert_uint_eq(c.server.max_sessions_per_principal, 3);
	ck_assert_uint_eq(c.server.tasks.max_total, 8);
	ck_assert_uint_eq(c.server.tasks.max_per_principal, 8);
	ck_assert_uint_eq(c.server.tasks.max_ttl_ms, 5000);
	ck_assert_uint_eq(c.server.listen.max_total, 7);
	ck_assert_uint_eq(c.server.listen.max_per_principal, 1);
	ck_assert_uint_eq(c.server.listen.max_lifetime_s, 60);
	for (i = 0; i < nitems(bad_caps); i++) {
		conf_with(dir, sizeof(dir), bad_caps[i]);
		ck_assert_msg(mcpexec_conf_load(dir, &c) == -1, "accepted: %s",
		    bad_caps[i]);
	}
}
END_TEST

START_TEST(test_fleet_section)
{
	static const char *const bad_fleet[] = {
		"fleet: {node_id: Node-1}\n",
		"fleet: {node_id: node.1}\n",
		"fleet: {node_id: \"\"}\n",
		"fleet: {node_id: 7}\n",
		"fleet: {drain_grace_s: -1}\n",
		"fleet: {drain_grace_s: 3601}\n",
		"fleet: {node: n}\n",
	};
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX];
	size_t			 i;

	/* Absent or ~: one host, and SIGTERM stops at once. */
	conf_with(dir, sizeof(dir), "server: {}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_str_eq(c.fleet.node_id, "");
	ck_assert_uint_eq(c.fleet.drain_grace_s, 0);
	conf_with(dir, sizeof(dir), "fleet: {node_id: ~, drain_grace_s: ~}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_str_eq(c.fleet.node_id, "");
	conf_with(dir, sizeof(dir), "fleet: {node_id: stockade-node-2, "
	    "drain_grace_s: 25}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_str_eq(c.fleet.node_id, "stockade-node-2");
	ck_assert_uint_eq(c.fleet.drain_grace_s, 25);
	/* No fleet.redis: no quota store, nothing connects. */
	ck_assert_str_eq(c.fleet.redis, "");
	for (i = 0; i < nitems(bad_fleet); i++) {
		conf_with(dir, sizeof(dir), bad_fleet[i]);
		ck_assert_msg(mcpexec_conf_load(dir, &c) == -1, "accepted: %s",
		    bad_fleet[i]);
	}
}
END_TEST

START_TEST(test_netguard_socket_parsed)
{
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX];

	conf_with(dir, sizeof(dir), "server: {netguard_socket: /tmp/ng.sock}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_str_eq(c.server.netguard_socket, "/tmp/ng.sock");
	conf_with(dir, sizeof(dir), "server: {netguard_socket: ng.sock}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), -1);
}
END_TEST

START_TEST(test_allowed_origins_accepted)
{
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX];

	conf_with(dir, sizeof(dir), "server:\n  allowed_origins:\n"
	    "    - https://app.example.com\n"
	    "    - http://localhost:5173\n"
	    "    - 'http://[::1]:8080'\n"
	    "    - https://xn--bcher-kva.example\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_uint_eq(c.server.norigins, 4);
	ck_assert_str_eq(c.server.allowed_origins[0], "https://app.example.com");
	ck_assert_str_eq(c.server.allowed_origins[1], "http://localhost:5173");
	ck_assert_str_eq(c.server.allowed_origins[2], "http://[::1]:8080");
	ck_assert_str_eq(c.server.allowed_origins[3],
	    "https://xn--bcher-kva.example");
}
END_TEST

START_TEST(test_allowed_origins_sixteen_accepted)
{
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX], yaml[2048];
	size_t			 off;
	unsigned		 i;

	off = (size_t)snprintf(yaml, sizeof(yaml), "server:\n"
	    "  allowed_origins:\n");
	for (i = 0; i < ORIGINS_MAX; i++)
		off += (size_t)snprintf(yaml + off, sizeof(yaml) - off,
		    "    - https://h%u.example\n", i);
	ck_assert_uint_lt(off, sizeof(yaml));
	conf_with(dir, sizeof(dir), yaml);
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_uint_eq(c.server.norigins, ORIGINS_MAX);
	ck_assert_str_eq(c.server.allowed_origins[ORIGINS_MAX - 1],
	    "https://h15.example");
}
END_TEST

static const char *const bad_origins[] = {
	"app.example.com",			/* no scheme */
	"//app.example.com",
	"ftp://app.example.com",
	"ws://app.example.com",
	"HTTPS://app.example.com",		/* browsers send it lower-case */
	"https://",				/* no host */
	"https://app.example.com/",		/* a path, even "/" */
	"https://app.example.com/mcp",
	"https://app.example.com?x=1",
	"https://app.example.com#top",
	"https://user@app.example.com",
	"https://app example.com",
	"42",					/* not a string */
	"[https://app.example.com]",		/* not a string */
	"~",
};

START_TEST(test_allowed_origins_refused)
{
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX], yaml[512];

	ck_assert_int_lt(snprintf(yaml, sizeof(yaml), "server:\n"
	    "  allowed_origins:\n    - https://ok.example\n    - %s\n",
	    bad_origins[_i]), (int)sizeof(yaml));
	conf_with(dir, sizeof(dir), yaml);
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), -1);
}
END_TEST

START_TEST(test_allowed_origins_limits)
{
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX], yaml[2048], longest[ORIGIN_MAX + 1];
	size_t			 off;
	unsigned		 i;

	/* Seventeen. */
	off = (size_t)snprintf(yaml, sizeof(yaml), "server:\n"
	    "  allowed_origins:\n");
	for (i = 0; i <= ORIGINS_MAX; i++)
		off += (size_t)snprintf(yaml + off, sizeof(yaml) - off,
		    "    - https://h%u.example\n", i);
	ck_assert_uint_lt(off, sizeof(yaml));
	conf_with(dir, sizeof(dir), yaml);
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), -1);

	/* ORIGIN_MAX - 1 bytes fit, ORIGIN_MAX do not. */
	memcpy(longest, "https://", 8);
	memset(longest + 8, 'a', ORIGIN_MAX - 1 - 8);
	longest[ORIGIN_MAX - 1] = '\0';
	snprintf(yaml, sizeof(yaml), "server: {allowed_origins: [%s]}\n",
	    longest);
	conf_with(dir, sizeof(dir), yaml);
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_str_eq(c.server.allowed_origins[0], longest);
	longest[ORIGIN_MAX - 1] = 'a';
	longest[ORIGIN_MAX] = '\0';
	snprintf(yaml, sizeof(yaml), "server: {allowed_origins: [%s]}\n",
	    longest);
	conf_with(dir, sizeof(dir), yaml);
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), -1);

	/* A single string is not a list. */
	conf_with(dir, sizeof(dir),
	    "server: {allowed_origins: https://app.example.com}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), -1);
}
END_TEST

START_TEST(test_fleet_parsed_with_defaults)
{
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX];

	conf_with(dir, sizeof(dir), "fleet: {redis: /run/redis/r.sock, "
	    "node_id: node-1}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_str_eq(c.fleet.redis, "/run/redis/r.sock");
	ck_assert_str_eq(c.fleet.node_id, "node-1");
	ck_assert_int_eq(c.fleet.on_unreachable, FLEET_UNREACHABLE_REFUSE);
	ck_assert_uint_eq(c.fleet.lease_s, FLEET_LEASE_S_DEFAULT);
	/* Nodes sharing one file (a ConfigMap) name themselves with
	 * --node-id: mcp-exec requires an id at load, the file does not. */
	conf_with(dir, sizeof(dir), "fleet: {redis: /r.sock, node_id: ~}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_str_eq(c.fleet.node_id, "");
	conf_with(dir, sizeof(dir), "fleet: {redis: \"redis.example:6379\", "
	    "node_id: b, on_unreachable: local, lease_s: 5, "
	    "password_file: /etc/stockade/redis.pw}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_str_eq(c.fleet.redis, "redis.example:6379");
	ck_assert_int_eq(c.fleet.on_unreachable, FLEET_UNREACHABLE_LOCAL);
	ck_assert_uint_eq(c.fleet.lease_s, 5);
	ck_assert_str_eq(c.fleet.password_file, "/etc/stockade/redis.pw");
}
END_TEST

/* fleet.peer's five keys; PEER_OK all of them, right. */
#define P_LISTEN	"listen: \"10.0.0.5:8443\""
#define P_URL		"url: \"https://{node}.stockade-node.stockade.svc" \
			":8443/mcp\""
#define P_CA		"ca: /etc/stockade/fleet-ca.pem"
#define P_CERT		"cert: /etc/stockade/node.pem"
#define P_KEY		"key: /etc/stockade/node.key"
#define P_FILES		P_CA ", " P_CERT ", " P_KEY
#define PEER_OK		P_LISTEN ", " P_URL ", " P_FILES

static const char *const bad_fleet_keys[] = {
	"fleet: {redis: /r.sock, node_id: Node_1}\n",	/* not a DNS label */
	"fleet: {redis: nohost, node_id: a}\n",
	"fleet: {redis: \"h:\", node_id: a}\n",
	"fleet: {redis: \":6379\", node_id: a}\n",
	"fleet: {redis: \"h:63x9\", node_id: a}\n",
	"fleet: {redis: \"h:123456\", node_id: a}\n",
	"fleet: {redis: /r.sock, node_id: \"a b\"}\n",
	"fleet: {redis: /r.sock, node_id: \"\"}\n",
	"fleet: {redis: /r.sock, node_id: a, on_unreachable: maybe}\n",
	"fleet: {redis: /r.sock, node_id: a, lease_s: 2}\n",
	"fleet: {redis: /r.sock, node_id: a, lease_s: 3601}\n",
	"fleet: {redis: /r.sock, node_id: a, password_file: pw}\n",
	"fleet: {redis: /r.sock, node_id: a, sessions: 1}\n",
	"fleet: /r.sock\n",
	/* fleet.peer */
	"fleet: {peer: {" P_LISTEN "}}\n",		/* not all five */
	"fleet: {peer: {" P_LISTEN ", " P_URL ", " P_CA ", " P_CERT "}}\n",
	"fleet: {peer: {listen: \"10.0.0.5\", " P_URL ", " P_FILES "}}\n",
	"fleet: {peer: {listen: \":8443\", " P_URL ", " P_FILES "}}\n",
	"fleet: {peer: {listen: \"h:84x3\", " P_URL ", " P_FILES "}}\n",
	"fleet: {peer: {" P_LISTEN ", url: \"http://{node}:8443/mcp\", "
	    P_FILES "}}\n",
	"fleet: {peer: {" P_LISTEN ", url: \"https://node-1:8443/mcp\", "
	    P_FILES "}}\n",
	"fleet: {peer: {" P_LISTEN ", " P_URL ", ca: fleet-ca.pem, " P_CERT
	    ", " P_KEY "}}\n",
	"fleet: {peer: {" P_LISTEN ", " P_URL ", " P_CA ", " P_CERT
	    ", key: ~}}\n",
	"fleet: {peer: {" PEER_OK ", verify: none}}\n",
	"fleet: {peer: \"https://{node}:8443/mcp\"}\n",
};

START_TEST(test_fleet_bad_refused)
{
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX];

	conf_with(dir, sizeof(dir), bad_fleet_keys[_i]);
	ck_assert_msg(mcpexec_conf_load(dir, &c) == -1, "accepted: %s",
	    bad_fleet_keys[_i]);
}
END_TEST

START_TEST(test_fleet_peer_parsed)
{
	struct mcpexec_conf	 c;
	char			 dir[PATH_MAX];

	conf_with(dir, sizeof(dir), "fleet: {node_id: a}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_str_eq(c.fleet.peer.listen, "");
	conf_with(dir, sizeof(dir), "fleet: {node_id: a, peer: {" PEER_OK
	    "}}\n");
	ck_assert_int_eq(mcpexec_conf_load(dir, &c), 0);
	ck_assert_str_eq(c.fleet.peer.listen, "10.0.0.5:8443");
	ck_assert_str_eq(c.fleet.peer.url,
	    "https://{node}.stockade-node.stockade.svc:8443/mcp");
	ck_assert_str_eq(c.fleet.peer.ca, "/etc/stockade/fleet-ca.pem");
	ck_assert_str_eq(c.fleet.peer.cert, "/etc/stockade/node.pem");
	ck_assert_str_eq(c.fleet.peer.key, "/etc/stockade/node.key");
}
END_TEST



static Suite *
profile_suite(void)
{
	Suite	*s = suite_create("profile");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_shipped_default_profile);
	tcase_add_test(tc, test_values_parsed);
	tcase_add_test(tc, test_gvisor_refused_without_runsc);
	tcase_add_loop_test(tc, test_bad_values_refused, 0, (int)nitems(bad));
	tcase_add_test(tc, test_tls_follows_network);
	tcase_add_test(tc, test_packages_parsed);
	tcase_add_test(tc, test_tls_extra_ca_accepted);
	tcase_add_loop_test(tc, test_tls_extra_ca_refused, 0,
	    (int)nitems(bad_ca));
	tcase_add_test(tc, test_profile_names_stay_in_profiles_dir);
	tcase_add_test(tc, test_server_defaults);
	tcase_add_test(tc, test_netguard_socket_parsed);
	tcase_add_test(tc, test_fleet_section);
	tcase_add_test(tc, test_server_caps);
	tcase_add_test(tc, test_allowed_origins_accepted);
	tcase_add_test(tc, test_allowed_origins_sixteen_accepted);
	tcase_add_loop_test(tc, test_allowed_origins_refused, 0,
	    (int)nitems(bad_origins));
	tcase_add_test(tc, test_allowed_origins_limits);
	tcase_add_test(tc, test_fleet_parsed_with_defaults);
	tcase_add_loop_test(tc, test_fleet_bad_refused, 0,
	    (int)nitems(bad_fleet_keys));
	tcase_add_test(tc, test_fleet_peer_parsed);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(profile_suite)
