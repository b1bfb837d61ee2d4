/*
 * sessions/fleet.c: handles that name their node (and keep 128 random
 * bits), the node part read back from a client's string (a label, or
 * nothing), node ids that are DNS labels, and the data of its errors.
 * The `fleet:` section of mcp-exec.yaml is check_profile's.
 */
#include "testutil.h"
#include "sessions/fleet.h"
#include "sessions/session.h"

START_TEST(test_node_ids_are_labels)
{
	static const char *const good[] = { "a", "node-1", "stockade-node-0",
	    "0", "a0-b1" };
	static const char *const bad[] = { "", "-a", "a-", "Node", "a.b",
	    "a_b", "a b", "\xc3\xa9t\xc3\xa9",
	    /* 64 characters: one past a DNS label. */
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
	size_t	 i;

	for (i = 0; i < nitems(good); i++)
		ck_assert_msg(fleet_node_ok(good[i]), "refused %s", good[i]);
	for (i = 0; i < nitems(bad); i++)
		ck_assert_msg(!fleet_node_ok(bad[i]), "accepted %s", bad[i]);
	ck_assert(fleet_node_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaa"));	/* 63 */
}
END_TEST

START_TEST(test_handles_name_their_node)
{
	char	 a[SESSION_ID_MAX], b[SESSION_ID_MAX], node[FLEET_NODE_MAX];
	/* The longest node id fits every handle buffer. */
	char	 longest[FLEET_NODE_MAX];

	/* One host: today's shape, no node. */
	fleet_handle("", SESSION_ID_PREFIX, SESSION_ID_RANDOM, a, sizeof(a));
	ck_assert_uint_eq(strlen(a), 5 + 32);
	ck_assert(hex_lower(a + 5, 32));
	ck_assert(!fleet_handle_node(a, node));
	ck_assert(!fleet_foreign("", a, node));
	fleet_handle("node-1", SESSION_ID_PREFIX, SESSION_ID_RANDOM, a,
	    sizeof(a));
	fleet_handle("node-1", SESSION_ID_PREFIX, SESSION_ID_RANDOM, b,
	    sizeof(b));
	ck_assert_str_ne(a, b);		/* the random part is there */
	ck_assert(strncmp(a, "sess_", 5) == 0 && hex_lower(a + 5, 32));
	ck_assert_str_eq(a + 5 + 32, ".node-1");
	ck_assert(fleet_handle_node(a, node));
	ck_assert_str_eq(node, "node-1");
	ck_assert(!fleet_foreign("node-1", a, node));
	ck_assert(fleet_foreign("node-2", a, node));
	ck_assert_str_eq(node, "node-1");
	ck_assert(fleet_foreign("", a, node));
	memset(longest, 'n', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	ck_assert(fleet_node_ok(longest));
	fleet_handle(longest, SESSION_ID_PREFIX, SESSION_ID_RANDOM, a,
	    sizeof(a));
	ck_assert(fleet_handle_node(a, node));
	ck_assert_str_eq(node, longest);
}
END_TEST

/* A client's string: only a label after the last dot is a node. */
START_TEST(test_node_part_of_hostile_strings)
{
	static const char *const none[] = { "", ".", "node-1", ".node-1",
	    "sess_x.", "sess_x.-n", "sess_x.N", "sess_x.a_b", "sess_x.a b",
	    "sess_x.n\n", "sess_x./n" };
	char	 node[FLEET_NODE_MAX];
	size_t	 i;

	for (i = 0; i < nitems(none); i++)
		ck_assert_msg(!fleet_handle_node(none[i], node), "node in %s",
		    none[i]);
	ck_assert(!fleet_foreign("node-1", NULL, node));
	/* The last dot counts: what comes before is the owner's business. */
	ck_assert(fleet_handle_node("a.b.node-2", node));
	ck_assert_str_eq(node, "node-2");
}
END_TEST

START_TEST(test_error_data_quotes_only_plain_handles)
{
	json_t	*d;

	d = fleet_error_data(FLEET_WRONG_NODE, "node-1", "sess_ab.node-1");
	ck_assert_str_eq(json_string_value(json_object_get(d, "reason")),
	    FLEET_WRONG_NODE);
	ck_assert_str_eq(json_string_value(json_object_get(d, "node")),
	    "node-1");
	ck_assert_str_eq(json_string_value(json_object_get(d, "handle")),
	    "sess_ab.node-1");
	json_decref(d);
	d = fleet_error_data(FLEET_WRONG_NODE, "node-1", "a\"b\xff.node-1");
	ck_assert_ptr_null(json_object_get(d, "handle"));
	json_decref(d);
}
END_TEST

static Suite *
fleet_suite(void)
{
	Suite	*s = suite_create("fleet");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_node_ids_are_labels);
	tcase_add_test(tc, test_handles_name_their_node);
	tcase_add_test(tc, test_node_part_of_hostile_strings);
	tcase_add_test(tc, test_error_data_quotes_only_plain_handles);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(fleet_suite)
