/*
 * principals.yaml's principals: and groups: (tools/authz.c): what one
 * caller may do is its principal's entry merged with its groups'; an
 * unlisted caller gets `unlisted:`, or every tool and the server's
 * profile; each
 * malformed entry is refused with its position.
 */
#include "testutil.h"
#include "tools/authz.h"

/* A rules directory with profiles default and lab, and principals.yaml. */
static void
rules_with(char *dir, size_t len, const char *yaml)
{
	char	 p[PATH_MAX];

	tu_tmpdir(dir, len);
	tu_path(p, sizeof(p), dir, "principals.yaml");
	tu_write(p, yaml, strlen(yaml));
	tu_path(p, sizeof(p), dir, "profiles");
	ck_assert_int_eq(mkdir(p, 0700), 0);
	tu_path(p, sizeof(p), dir, "profiles/default.yaml");
	tu_write(p, "{}\n", 3);
	tu_path(p, sizeof(p), dir, "profiles/lab.yaml");
	tu_write(p, "{}\n", 3);
}

static const char two[] =
    "principals:\n"
    "  - name: user:alice\n"
    "    profiles: [default, lab]\n"
    "    choose_profile: true\n"
    "    quotas: { calls_per_minute: 3, artifact_bytes_per_day: 1M }\n"
    "  - name: user:bob\n"
    "    tools: [execute_python]\n"
    "    default_profile: lab\n"
    "groups:\n"
    "  - name: ops\n"
    "    tools: [close_session]\n"
    "    quotas: { concurrent_calls: 1 }\n";

static struct authz *
load(const char *yaml)
{
	char	 dir[PATH_MAX];

	rules_with(dir, sizeof(dir), yaml);
	return authz_load(dir);
}

START_TEST(test_principal_entry_decides)
{
	struct authz		*a = load(two);
	struct authz_grant	 g;

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(authz_count(a), 3);
	authz_grant(a, "user:alice", NULL, "default", &g);
	ck_assert_uint_eq(g.nprofiles, 2);
	ck_assert_str_eq(g.profiles[0], "default");
	ck_assert_int_eq(g.choose, 1);
	ck_assert_int_eq(authz_tool_ok(&g, "run_command"), 1);
	ck_assert_uint_eq(g.bill.n, 1);
	ck_assert_str_eq(g.bill.a[0].subject, "principal:user:alice");
	ck_assert_uint_eq(g.bill.a[0].lim.max[QUOTA_CALLS_MINUTE], 3);
	ck_assert_uint_eq(g.bill.a[0].lim.max[QUOTA_ARTIFACT_DAY], 1 << 20);
	ck_assert(g.bill.a[0].lim.max[QUOTA_SESSIONS] == QUOTA_UNLIMITED);
	authz_grant(a, "user:bob", NULL, "default", &g);
	ck_assert_uint_eq(g.nprofiles, 1);
	ck_assert_str_eq(g.profiles[0], "lab");
	ck_assert_int_eq(g.choose, 0);
	ck_assert_int_eq(authz_tool_ok(&g, "execute_python"), 1);
	ck_assert_int_eq(authz_tool_ok(&g, "close_session"), 0);
	ck_assert_int_eq(authz_profile_ok(&g, "default"), 0);
	ck_assert_uint_eq(g.bill.n, 0);
	authz_free(a);
}
END_TEST

START_TEST(test_groups_add_tools_and_quotas)
{
	struct authz		*a = load(two);
	struct tool_client	 c;
	struct authz_grant	 g;

	memset(&c, 0, sizeof(c));
	snprintf(c.groups[0], sizeof(c.groups[0]), "nobody");
	snprintf(c.groups[1], sizeof(c.groups[1]), "ops");
	c.ngroups = 2;
	authz_grant(a, "user:bob", &c, "default", &g);
	ck_assert_int_eq(authz_tool_ok(&g, "execute_python"), 1);
	ck_assert_int_eq(authz_tool_ok(&g, "close_session"), 1);
	ck_assert_int_eq(authz_tool_ok(&g, "read_file"), 0);
	ck_assert_uint_eq(g.bill.n, 1);
	ck_assert_str_eq(g.bill.a[0].subject, "group:ops");
	/* Unlisted, in no group listed: everything, the server's profile. */
	authz_grant(a, "user:carol", NULL, "default", &g);
	ck_assert_uint_eq(g.tools, (1u << AUTHZ_TOOLS_N) - 1);
	ck_assert_uint_eq(g.nprofiles, 1);
	ck_assert_str_eq(g.profiles[0], "default");
	ck_assert_uint_eq(g.bill.n, 0);
	authz_free(a);
}
END_TEST

START_TEST(test_no_file_lists_nothing)
{
	struct authz		*a;
	struct authz_grant	 g;
	char			 dir[PATH_MAX];

	tu_tmpdir(dir, sizeof(dir));
	ck_assert_ptr_nonnull(a = authz_load(dir));
	ck_assert_uint_eq(authz_count(a), 0);
	authz_grant(a, "user:local", NULL, "default", &g);
	ck_assert_int_eq(authz_tool_ok(&g, "execute_python"), 1);
	authz_free(a);
	ck_assert_ptr_nonnull(a = authz_load("rules"));
	authz_free(a);
}
END_TEST

/* `unlisted:` decides for a caller no entry names, and only for it. */
START_TEST(test_unlisted_entry)
{
	static const char yaml[] =
	    "principals:\n"
	    "  - name: user:alice\n"
	    "groups:\n"
	    "  - name: ops\n"
	    "    tools: [close_session]\n"
	    "unlisted:\n"
	    "  tools: [execute_python]\n"
	    "  default_profile: lab\n"
	    "  quotas: { sessions: 1 }\n";
	struct authz		*a = load(yaml);
	struct tool_client	 c;
	struct authz_grant	 g;

	ck_assert_ptr_nonnull(a);
	authz_grant(a, "user:mallory", NULL, "default", &g);
	ck_assert_uint_eq(g.tools, 1u << AUTHZ_EXECUTE_PYTHON);
	ck_assert_uint_eq(g.nprofiles, 1);
	ck_assert_str_eq(g.profiles[0], "lab");
	ck_assert_uint_eq(g.bill.n, 1);
	/* Each unlisted caller its own account, not one for all of them. */
	ck_assert_str_eq(g.bill.a[0].subject, "principal:user:mallory");
	ck_assert_uint_eq(g.bill.a[0].lim.max[QUOTA_SESSIONS], 1);
	/* A listed principal, or a listed group, is not unlisted. */
	authz_grant(a, "user:alice", NULL, "default", &g);
	ck_assert_uint_eq(g.tools, (1u << AUTHZ_TOOLS_N) - 1);
	ck_assert_str_eq(g.profiles[0], "default");
	ck_assert_uint_eq(g.bill.n, 0);
	memset(&c, 0, sizeof(c));
	snprintf(c.groups[0], sizeof(c.groups[0]), "ops");
	c.ngroups = 1;
	authz_grant(a, "user:mallory", &c, "default", &g);
	ck_assert_uint_eq(g.tools, 1u << AUTHZ_CLOSE_SESSION);
	ck_assert_uint_eq(g.bill.n, 0);
	authz_free(a);
	/* Default deny: no tool at all. */
	ck_assert_ptr_nonnull(a = load("unlisted: { tools: [] }\n"));
	authz_grant(a, "user:mallory", NULL, "default", &g);
	ck_assert_uint_eq(g.tools, 0);
	ck_assert_int_eq(authz_tool_ok(&g, "execute_python"), 0);
	authz_free(a);
}
END_TEST

static const char *const bad[] = {
	"principals: [{ profiles: [default] }]\n",
	"principals: [{ name: \"a b\" }]\n",
	"principals: [{ name: a }, { name: a }]\n",
	"principals: [{ name: a, tools: [rm] }]\n",
	"principals: [{ name: a, profiles: [nosuch] }]\n",
	"principals: [{ name: a, profiles: [../x] }]\n",
	"principals: [{ name: a, profiles: [lab], default_profile: default }]\n",
	"principals: [{ name: a, quotas: { calls_per_hour: 1 } }]\n",
	"principals: [{ name: a, quotas: { sessions: -1 } }]\n",
	"principals: [{ name: a, quotas: { sessions: x } }]\n",
	"principals: [{ name: a, choose_profile: 1 }]\n",
	"principals: [{ name: a, colour: red }]\n",
	"groups: [{ name: a, quotas: [] }]\n",
	"groups: x\n",
	"unlisted: { name: a }\n",
	"unlisted: { tools: [rm] }\n",
	"unlisted: { profiles: [nosuch] }\n",
	"unlisted: [default]\n",
};

START_TEST(test_bad_files_refused)
{
	ck_assert_msg(load(bad[_i]) == NULL, "accepted: %s", bad[_i]);
}
END_TEST

static Suite *
authz_suite(void)
{
	Suite	*s = suite_create("authz");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_principal_entry_decides);
	tcase_add_test(tc, test_groups_add_tools_and_quotas);
	tcase_add_test(tc, test_no_file_lists_nothing);
	tcase_add_test(tc, test_unlisted_entry);
	tcase_add_loop_test(tc, test_bad_files_refused, 0, nitems(bad));
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(authz_suite)
