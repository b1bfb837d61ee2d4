/*
 * The fleet witness reader: off-host checkpoint lines and checkpoint
 * records forwarded to a SIEM (behind any collector prefix) are read with
 * their node; other records are skipped; a malformed checkpoint, a bad
 * node label or a signature no given key makes is refused.
 */
#include "testutil.h"
#include "checkpoint.h"
#include "witness.h"

static EVP_PKEY *priv, *pub, *other;

static void
keys(void)
{
	tu_keys(&priv, &pub, &other);
}

static void
make(struct checkpoint *cp, uint64_t seq, const char *node)
{
	memset(cp, 0, sizeof(*cp));
	snprintf(cp->chain_id, sizeof(cp->chain_id), "%032x", 9);
	snprintf(cp->node, sizeof(cp->node), "%s", node);
	cp->seq = seq;
	memset(cp->hash, (int)seq, SHA256_LEN);
	snprintf(cp->ts, sizeof(cp->ts), "2026-12-05T02:00:00.000Z");
	ck_assert_int_eq(checkpoint_sign(cp, priv), 0);
}

/* A forwarded "checkpoint" record as rsyslog's file holds it. */
static void
syslog_line(struct buf *b, const struct checkpoint *cp)
{
	json_t	*rec = checkpoint_record(cp);
	char	*s, head[256];

	snprintf(head, sizeof(head), "Dec  5 02:00:00 node-b stockade-auditd "
	    "checkpoint {\"seq\":%llu,\"prev\":\"00\",\"event\":\"checkpoint\",",
	    (unsigned long long)cp->seq + 1);
	s = json_dumps(rec, JSON_COMPACT);
	ck_assert_int_eq(buf_add(b, head, strlen(head)), 0);
	ck_assert_int_eq(buf_add(b, s + 1, strlen(s + 1)), 0);	/* past '{' */
	ck_assert_int_eq(buf_add(b, "\n", 1), 0);
	free(s);
	json_decref(rec);
}

static const char *
write_witness(const struct buf *b)
{
	static char	 dir[PATH_MAX], path[PATH_MAX];

	tu_tmpdir(dir, sizeof(dir));
	tu_path(path, sizeof(path), dir, "siem.log");
	tu_write(path, b->data, b->len);
	return path;
}

START_TEST(test_reads_offhost_and_forwarded_checkpoints)
{
	struct checkpoint	 a, c;
	struct witness		 w;
	struct buf		 b;
	char			 err[512];
	static const char	 other_rec[] = "Dec  5 x: {\"seq\":3,\"event\":"
				    "\"code_execution\",\"hash\":\"00\"}\n"
				    "-- MARK --\n";

	keys();
	make(&a, 4, "node-a");
	make(&c, 8, "node-b");
	buf_init(&b, 1 << 20);
	ck_assert_int_eq(checkpoint_line(&a, &b), 0);
	ck_assert_int_eq(buf_add(&b, other_rec, sizeof(other_rec) - 1), 0);
	syslog_line(&b, &c);
	witness_init(&w);
	ck_assert_int_eq(witness_load(&w, write_witness(&b), &pub, 1, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(w.n, 2);
	ck_assert_uint_eq(w.skipped, 2);
	ck_assert_str_eq(w.cps[0].cp.node, "node-a");
	ck_assert_uint_eq(w.cps[1].cp.seq, 8);
	ck_assert_str_eq(w.cps[1].cp.node, "node-b");
	ck_assert_uint_eq(w.cps[1].line, 4);
	witness_free(&w);
	buf_free(&b);
}
END_TEST

START_TEST(test_unsigned_or_malformed_refused)
{
	struct checkpoint	 a;
	struct witness		 w;
	struct buf		 b;
	char			 err[512];

	keys();
	make(&a, 4, "node-a");
	buf_init(&b, 1 << 20);
	ck_assert_int_eq(checkpoint_line(&a, &b), 0);
	/* Signed, but by no key given. */
	witness_init(&w);
	ck_assert_int_eq(witness_load(&w, write_witness(&b), &other, 1, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not signed by any given key"));
	witness_free(&w);
	/* A node that is no label. */
	b.len = 0;
	snprintf(a.node, sizeof(a.node), "Node_A");
	ck_assert_int_eq(checkpoint_line(&a, &b), 0);
	ck_assert_int_eq(witness_load(&w, write_witness(&b), &pub, 1, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "malformed checkpoint node"));
	witness_free(&w);
	/* A forwarded checkpoint record that lost a field. */
	b.len = 0;
	ck_assert_int_eq(buf_add(&b, "x {\"seq\":5,\"event\":\"checkpoint\"}\n",
	    33), 0);
	ck_assert_int_eq(witness_load(&w, write_witness(&b), NULL, 0, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "checkpoint fields missing"));
	witness_free(&w);
	buf_free(&b);
}
END_TEST

START_TEST(test_node_labels)
{
	ck_assert(checkpoint_node_ok("node-0"));
	ck_assert(checkpoint_node_ok("a"));
	ck_assert(!checkpoint_node_ok(""));
	ck_assert(!checkpoint_node_ok("-a"));
	ck_assert(!checkpoint_node_ok("a-"));
	ck_assert(!checkpoint_node_ok("a/b"));
	ck_assert(!checkpoint_node_ok("../x"));
	ck_assert(!checkpoint_node_ok("A"));
	ck_assert(!checkpoint_node_ok(
	    "a123456789012345678901234567890123456789012345678901234567890123"));
}
END_TEST

static Suite *
witness_suite(void)
{
	Suite	*s = suite_create("witness");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_reads_offhost_and_forwarded_checkpoints);
	tcase_add_test(tc, test_unsigned_or_malformed_refused);
	tcase_add_test(tc, test_node_labels);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(witness_suite)
