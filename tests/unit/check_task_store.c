/*
 * protocol/task_store.c: MCP task records on disk.  What a restart finds
 * (failed, with the reason), hostile or corrupt files (removed, never
 * half-read), the limits (per principal, in total, a result's size) and
 * expiry by ttl (gone from find and from disk).
 */
#include "testutil.h"
#include "protocol/task_store.h"

#define NOW	1800000000000LL		/* a fixed wall clock, Unix ms */
#define ALICE	"user:alice"
#define BOB	"user:bob"
#define RESTART	"mcp-exec restarted"

static struct mcpexec_conf conf;

static void
conf_init(unsigned total, unsigned per)
{
	memset(&conf, 0, sizeof(conf));
	conf.server.tasks.max_ttl_ms = 3600000;
	conf.server.tasks.max_total = total;
	conf.server.tasks.max_per_principal = per;
}

static void
store_open(struct task_store *st, const char *dir, int64_t now)
{
	char	 err[256];

	ck_assert_msg(task_store_open(st, dir, &conf, now, RESTART, err,
	    sizeof(err)) == 0, "%s", err);
}

static struct task_rec *
new_task(struct task_store *st, const char *who, int64_t ttl, int64_t now)
{
	struct task_rec	*t;
	char		 why[256];

	t = task_store_new(st, who, "execute_python", ttl, now, why,
	    sizeof(why));
	ck_assert_msg(t != NULL, "%s", why);
	return t;
}

static int
exists(const char *dir, const char *name)
{
	char		 p[PATH_MAX];
	struct stat	 sb;

	snprintf(p, sizeof(p), "%s/tasks/%s", dir, name);
	return lstat(p, &sb) == 0;
}

static void
put(const char *dir, const char *name, const char *text)
{
	char	 p[PATH_MAX];
	FILE	*f;

	snprintf(p, sizeof(p), "%s/tasks/%s", dir, name);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

START_TEST(test_roundtrip_and_restart)
{
	struct task_store	 st;
	struct task_rec		*done, *running, *t;
	char			 dir[PATH_MAX], id_done[TASK_ID_MAX];
	char			 id_run[TASK_ID_MAX];

	conf_init(8, 8);
	tu_tmpdir(dir, sizeof(dir));
	store_open(&st, dir, NOW);
	done = new_task(&st, ALICE, 60000, NOW);
	running = new_task(&st, ALICE, 60000, NOW + 1);
	ck_assert_int_eq(strlen(done->id), TASK_ID_LEN);
	ck_assert(hex_lower(done->id, TASK_ID_LEN));
	ck_assert_str_ne(done->id, running->id);
	snprintf(id_done, sizeof(id_done), "%s", done->id);
	snprintf(id_run, sizeof(id_run), "%s", running->id);
	/* On disk before anyone hears of it. */
	ck_assert(exists(dir, id_run));
	ck_assert_int_eq(task_store_finish(&st, done, TASK_COMPLETED,
	    json_pack("{s:{s:s}}", "structuredContent", "stdout", "42\n"),
	    NULL, NULL, NOW + 5), 0);
	/* Ended is ended: a late answer changes nothing. */
	ck_assert_int_eq(task_store_finish(&st, done, TASK_FAILED, NULL,
	    NULL, "late", NOW + 6), -1);
	ck_assert_int_eq(done->status, TASK_COMPLETED);
	/* Someone else's id is nobody's. */
	ck_assert_ptr_null(task_store_find(&st, BOB, id_done, NOW + 7));
	ck_assert_ptr_null(task_store_find(&st, ALICE, "0", NOW + 7));
	ck_assert_ptr_null(task_store_find(&st, ALICE, NULL, NOW + 7));
	task_store_close(&st);

	/* A restart: the completed keeps its result, the working fails. */
	store_open(&st, dir, NOW + 10);
	ck_assert_uint_eq(st.n, 2);
	ck_assert_ptr_nonnull(t = task_store_find(&st, ALICE, id_done,
	    NOW + 10));
	ck_assert_int_eq(t->status, TASK_COMPLETED);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    t->result, "structuredContent"), "stdout")), "42\n");
	ck_assert_ptr_nonnull(t = task_store_find(&st, ALICE, id_run,
	    NOW + 10));
	ck_assert_int_eq(t->status, TASK_FAILED);
	ck_assert_str_eq(t->message, RESTART);
	/* Typed: lost with its node, not a failed call. */
	ck_assert_int_eq(json_integer_value(json_object_get(t->error,
	    "code")), FLEET_ERR_TASK_LOST);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    t->error, "data"), "reason")), FLEET_TASK_LOST);
	ck_assert(t->updated_ms == NOW + 10);
	task_store_close(&st);
	/* ...and says so on disk: a second restart reads it failed. */
	store_open(&st, dir, NOW + 20);
	ck_assert_ptr_nonnull(t = task_store_find(&st, ALICE, id_run,
	    NOW + 20));
	ck_assert_int_eq(t->status, TASK_FAILED);
	ck_assert(t->updated_ms == NOW + 10);
	task_store_close(&st);
}
END_TEST

START_TEST(test_hostile_files)
{
	struct task_store	 st;
	struct task_rec		*t;
	char			 dir[1024], p[PATH_MAX], rec[PATH_MAX];
	char			 good[TASK_ID_MAX];
	char			*big;
	json_t			*o;
	const char		*id = "0123456789abcdef0123456789abcdef";
	const char		*id2 = "fedcba9876543210fedcba9876543210";
	static const char *const bad[][2] = {
		{ "00000000000000000000000000000001", "not json" },
		{ "00000000000000000000000000000002", "[]" },
		/* The file's name is not its id. */
		{ "00000000000000000000000000000003", "%REC%" },
		{ "00000000000000000000000000000004",
		    "{\"version\":2,\"id\":\"00000000000000000000000000000004\"}" },
		{ "notanid", "{}" },
	};
	size_t			 i;
	FILE			*f;

	conf_init(8, 8);
	tu_tmpdir(dir, sizeof(dir));
	store_open(&st, dir, NOW);
	t = new_task(&st, ALICE, 60000, NOW);
	snprintf(good, sizeof(good), "%s", t->id);
	ck_assert_int_eq(task_store_finish(&st, t, TASK_COMPLETED,
	    json_object(), NULL, NULL, NOW), 0);
	o = task_rec_json(t);
	task_store_close(&st);

	/* One field wrong at a time, each as a record of its own. */
#define VARIANT(name, key, val) do {					\
	json_t	*v = json_deep_copy(o);					\
	char	*s;							\
	json_object_set_new(v, "id", json_string(name));		\
	json_object_set_new(v, key, val);				\
	s = json_dumps(v, JSON_COMPACT);				\
	put(dir, name, s);						\
	free(s);							\
	json_decref(v);							\
} while (0)
	VARIANT("10000000000000000000000000000001", "status",
	    json_string("done"));
	VARIANT("10000000000000000000000000000002", "principal",
	    json_string(""));
	{
		/* Made in the future: it would never expire. */
		json_t	*v = json_deep_copy(o);
		char	*s;

		json_object_set_new(v, "id", json_string(
		    "10000000000000000000000000000003"));
		json_object_set_new(v, "created_ms", json_integer(NOW +
		    86400000));
		json_object_set_new(v, "updated_ms", json_integer(NOW +
		    86400000));
		s = json_dumps(v, JSON_COMPACT);
		put(dir, "10000000000000000000000000000003", s);
		free(s);
		json_decref(v);
	}
	VARIANT("10000000000000000000000000000004", "ttl_ms",
	    json_integer(0));
	VARIANT("10000000000000000000000000000005", "extra", json_true());
	VARIANT("10000000000000000000000000000006", "status",
	    json_string("working"));	/* with a result */
	VARIANT("10000000000000000000000000000007", "updated_ms",
	    json_integer(1));	/* before it was made */
	VARIANT("10000000000000000000000000000008", "id",
	    json_string("1000000000000000000000000000000A"));
	VARIANT("10000000000000000000000000000009", "error",
	    json_pack("{s:s}", "message", "x"));	/* on a completed */
	VARIANT("1000000000000000000000000000000a", "principal",
	    json_integer(7));
#undef VARIANT
	for (i = 0; i < nitems(bad); i++) {
		char	*s = json_dumps(o, JSON_COMPACT);

		put(dir, bad[i][0], strcmp(bad[i][1], "%REC%") == 0 ? s :
		    bad[i][1]);
		free(s);
	}
	/* Duplicate keys: which one counts would be a guess. */
	snprintf(rec, sizeof(rec), "{\"version\":1,\"version\":1}");
	put(dir, "20000000000000000000000000000001", rec);
	/* Larger than any record we write. */
	big = xmalloc(TASK_FILE_MAX + 2);
	memset(big, ' ', TASK_FILE_MAX + 1);
	big[TASK_FILE_MAX + 1] = '\0';
	put(dir, "20000000000000000000000000000002", big);
	free(big);
	/* A symlink to a valid record elsewhere is not ours to read. */
	snprintf(p, sizeof(p), "%s/elsewhere", dir);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	{
		json_t	*v = json_deep_copy(o);
		char	*s;

		json_object_set_new(v, "id", json_string(id));
		s = json_dumps(v, JSON_COMPACT);
		fputs(s, f);
		free(s);
		json_decref(v);
	}
	fclose(f);
	snprintf(rec, sizeof(rec), "%s/tasks/%s", dir, id);
	ck_assert_int_eq(symlink(p, rec), 0);
	/* A write a crash interrupted, and a directory. */
	put(dir, "30000000000000000000000000000001.tmp", "{");
	snprintf(rec, sizeof(rec), "%s/tasks/%s", dir, id2);
	ck_assert_int_eq(mkdir(rec, 0700), 0);
	json_decref(o);

	store_open(&st, dir, NOW + 1);
	ck_assert_uint_eq(st.n, 1);
	ck_assert_ptr_nonnull(task_store_find(&st, ALICE, good, NOW + 1));
	ck_assert_ptr_null(task_store_find(&st, ALICE, id, NOW + 1));
	task_store_close(&st);
	/* What was not a record is gone; the link's target is untouched. */
	for (i = 0; i < nitems(bad); i++)
		ck_assert_msg(!exists(dir, bad[i][0]), "%s", bad[i][0]);
	ck_assert(!exists(dir, "10000000000000000000000000000001"));
	ck_assert(!exists(dir, "10000000000000000000000000000003"));
	ck_assert(!exists(dir, "1000000000000000000000000000000a"));
	ck_assert(!exists(dir, "20000000000000000000000000000001"));
	ck_assert(!exists(dir, "20000000000000000000000000000002"));
	ck_assert(!exists(dir, "30000000000000000000000000000001.tmp"));
	ck_assert(!exists(dir, id));
	ck_assert(exists(dir, id2));
	ck_assert_int_eq(access(p, F_OK), 0);
	ck_assert(exists(dir, good));
}
END_TEST

START_TEST(test_limits)
{
	struct task_store	 st;
	struct task_rec		*t;
	char			 dir[PATH_MAX], why[256];
	char			*blob;

	conf_init(3, 2);
	tu_tmpdir(dir, sizeof(dir));
	store_open(&st, dir, NOW);
	new_task(&st, ALICE, 1000, NOW);
	t = new_task(&st, ALICE, 60000, NOW);
	ck_assert_ptr_null(task_store_new(&st, ALICE, "execute_python", -1,
	    NOW, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "too many tasks of yours (2)"));
	new_task(&st, BOB, -1, NOW);
	ck_assert_ptr_null(task_store_new(&st, BOB, "execute_python", -1,
	    NOW, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "on this server (3)"));
	/* Expired tasks make room before anyone is refused. */
	ck_assert_ptr_nonnull(task_store_new(&st, BOB, "execute_python", -1,
	    NOW + 1000, why, sizeof(why)));
	/* A result larger than the store keeps fails the task instead. */
	blob = xmalloc(TASK_RESULT_MAX + 1);
	memset(blob, 'a', TASK_RESULT_MAX);
	blob[TASK_RESULT_MAX] = '\0';
	ck_assert_int_eq(task_store_finish(&st, t, TASK_COMPLETED,
	    json_pack("{s:s}", "text", blob), NULL, NULL, NOW + 1), 0);
	free(blob);
	ck_assert_int_eq(t->status, TASK_FAILED);
	ck_assert_ptr_null(t->result);
	ck_assert_ptr_nonnull(strstr(t->message, "larger"));
	task_store_close(&st);
}
END_TEST

static unsigned gone_calls;

static void
gone(struct task_rec *t, void *arg)
{
	gone_calls++;
	t->run = NULL;		/* the runner lets go */
}

START_TEST(test_expiry)
{
	struct task_store	 st;
	struct task_rec		*a, *b, *c;
	char			 dir[PATH_MAX], ida[TASK_ID_MAX];
	char			 idb[TASK_ID_MAX], idc[TASK_ID_MAX];
	int			 running = 1;

	conf_init(8, 8);
	tu_tmpdir(dir, sizeof(dir));
	store_open(&st, dir, NOW);
	a = new_task(&st, ALICE, 1000, NOW);
	b = new_task(&st, ALICE, 99 * 3600000LL, NOW);	/* above the cap */
	c = new_task(&st, ALICE, 2000, NOW);
	ck_assert(b->ttl_ms == 3600000);
	ck_assert(new_task(&st, BOB, 0, NOW)->ttl_ms == 3600000);
	snprintf(ida, sizeof(ida), "%s", a->id);
	snprintf(idb, sizeof(idb), "%s", b->id);
	snprintf(idc, sizeof(idc), "%s", c->id);
	c->run = &running;	/* still running when it expires */
	ck_assert_ptr_nonnull(task_store_find(&st, ALICE, ida, NOW + 999));
	ck_assert_ptr_null(task_store_find(&st, ALICE, ida, NOW + 1000));
	ck_assert_uint_eq(task_store_sweep(&st, NOW + 1000, gone, NULL), 1);
	ck_assert(!exists(dir, ida));
	ck_assert_uint_eq(gone_calls, 0);
	ck_assert_uint_eq(task_store_sweep(&st, NOW + 2000, gone, NULL), 1);
	ck_assert_uint_eq(gone_calls, 1);
	ck_assert(!exists(dir, idc));
	ck_assert(exists(dir, idb));
	ck_assert_uint_eq(task_store_count(&st, ALICE), 1);
	task_store_close(&st);
	/* An expired record found at start is removed, not failed. */
	store_open(&st, dir, NOW + 3600000);
	ck_assert_uint_eq(st.n, 0);
	ck_assert(!exists(dir, idb));
	task_store_close(&st);
}
END_TEST

/* With fleet.node_id, ids end with the node: a router reads it there. */
START_TEST(test_ids_name_their_node)
{
	struct task_store	 st;
	struct task_rec		*t;
	char			 dir[PATH_MAX], id[TASK_ID_MAX];
	static const char *const node[] = { "node-1", "tmp" };
	size_t			 i;

	for (i = 0; i < 2; i++) {
		conf_init(8, 8);
		snprintf(conf.fleet.node_id, sizeof(conf.fleet.node_id), "%s",
		    node[i]);
		tu_tmpdir(dir, sizeof(dir));
		store_open(&st, dir, NOW);
		t = new_task(&st, ALICE, 60000, NOW);
		ck_assert(hex_lower(t->id, TASK_ID_LEN));
		ck_assert_int_eq(t->id[TASK_ID_LEN], '.');
		ck_assert_str_eq(t->id + TASK_ID_LEN + 1, node[i]);
		ck_assert(task_id_ok(t->id));
		snprintf(id, sizeof(id), "%s", t->id);
		task_store_close(&st);
		/* Found again after a restart (a node "tmp" included: its
		 * records end like a torn write's leftovers). */
		store_open(&st, dir, NOW + 1);
		ck_assert_ptr_nonnull(task_store_find(&st, ALICE, id,
		    NOW + 1));
		task_store_close(&st);
	}
	ck_assert(task_id_ok("0123456789abcdef0123456789abcdef"));
	ck_assert(!task_id_ok("0123456789abcdef0123456789abcdef."));
	ck_assert(!task_id_ok("0123456789abcdef0123456789abcdef.-a"));
	ck_assert(!task_id_ok("0123456789abcdef0123456789abcdef.A"));
	ck_assert(!task_id_ok("0123456789abcdef0123456789abcdef.a.b"));
	ck_assert(!task_id_ok("0123456789abcdef0123456789abcdefa.b"));
	ck_assert(!task_id_ok("0123456789abcdef0123456789abcde.a"));
	ck_assert(!task_id_ok("0123456789ABCDEF0123456789abcdef.a"));
}
END_TEST

static Suite *
task_store_suite(void)
{
	Suite	*s = suite_create("task_store");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_roundtrip_and_restart);
	tcase_add_test(tc, test_hostile_files);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_expiry);
	tcase_add_test(tc, test_ids_name_their_node);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(task_store_suite)
