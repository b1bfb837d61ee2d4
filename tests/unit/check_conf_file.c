/*
 * Tests for lib/conf_load.c: loading a policy from a file (made under a
 * mkdtemp folder) and the source positions kept for each node.
 */
#include <sys/stat.h>

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "testutil.h"

#include "conf_fixture.h"

static char	 tmpdir[64];

static const char *
tmp_path(const char *name)
{
	static char	 path[128];

	if (tmpdir[0] == '\0') {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_conf.XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	}
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static void
tmp_cleanup(const char *path)
{
	unlink(path);
	rmdir(tmpdir);
	tmpdir[0] = '\0';
}

static void
write_file(const char *path, const char *s)
{
	FILE	*f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(s, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_load_file_reads_policy)
{
	const char	*path = tmp_path("p.yaml");
	struct conf_doc	*doc;

	write_file(path, "a: 1\n");
	doc = conf_doc_load_file(path, err, sizeof(err));
	ck_assert_msg(doc != NULL, "%s", err);
	ck_assert_str_eq(conf_doc_name(doc), path);
	ck_assert_str_eq(conf_doc_sha256(doc), "37b128c59f1f5097f73f82691cb5"
	    "19f1f568667faab5ced1b4ab979d36837eae");
	conf_doc_free(doc);
	tmp_cleanup(path);
}
END_TEST

START_TEST(test_load_file_error_names_file)
{
	const char	*path = tmp_path("bad.yaml");
	char		 want[256];

	write_file(path, "a: 1\na: 2\n");
	ck_assert_ptr_null(conf_doc_load_file(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s:2:1: duplicate key 'a'", path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	tmp_cleanup(path);
}
END_TEST

START_TEST(test_load_file_missing)
{
	ck_assert_ptr_null(conf_doc_load_file("/nonexistent/p.yaml", err,
	    sizeof(err)));
	ck_assert_str_eq(err, "/nonexistent/p.yaml: No such file or directory");
}
END_TEST

START_TEST(test_load_file_not_regular)
{
	const char	*fifo = tmp_path("fifo");

	ck_assert_ptr_null(conf_doc_load_file("/tmp", err, sizeof(err)));
	ck_assert_str_eq(err, "/tmp: not a regular file");
	ck_assert_ptr_null(conf_doc_load_file("/dev/null", err, sizeof(err)));
	ck_assert_str_eq(err, "/dev/null: not a regular file");
	/* A FIFO with no writer must not block the loader. */
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_ptr_null(conf_doc_load_file(fifo, err, sizeof(err)));
	ck_assert_msg(strstr(err, "not a regular file") != NULL, "%s", err);
	tmp_cleanup(fifo);
}
END_TEST

START_TEST(test_load_file_too_large)
{
	const char	*path = tmp_path("big.yaml");
	int		 fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, CONF_FILE_MAX + 1), 0);
	close(fd);
	ck_assert_ptr_null(conf_doc_load_file(path, err, sizeof(err)));
	ck_assert_msg(strstr(err, "file too large") != NULL, "%s", err);
	tmp_cleanup(path);
}
END_TEST

/* ---------------------------------------------------------------- positions */

START_TEST(test_where_reports_positions)
{
	struct conf_doc	*doc = load_ok("name: web\nlimits:\n  mem: 64M\n"
	    "  cpu: [1, \"two\"]\nflag: true\n");
	json_t		*root = conf_doc_root(doc), *limits, *cpu;
	unsigned	 line, column;

	ck_assert_int_eq(conf_doc_where(doc, root, &line, &column), 0);
	ck_assert_uint_eq(line, 1);
	ck_assert_uint_eq(column, 1);
	ck_assert_int_eq(conf_doc_where(doc, json_object_get(root, "name"),
	    &line, &column), 0);
	ck_assert_uint_eq(line, 1);
	ck_assert_uint_eq(column, 7);
	limits = json_object_get(root, "limits");
	ck_assert_int_eq(conf_doc_where(doc, limits, &line, &column), 0);
	ck_assert_uint_eq(line, 3);
	ck_assert_uint_eq(column, 3);
	cpu = json_object_get(limits, "cpu");
	ck_assert_int_eq(conf_doc_where(doc, cpu, &line, &column), 0);
	ck_assert_uint_eq(line, 4);
	ck_assert_uint_eq(column, 8);
	ck_assert_int_eq(conf_doc_where(doc, json_array_get(cpu, 1), &line,
	    &column), 0);
	ck_assert_uint_eq(line, 4);
	ck_assert_uint_eq(column, 12);
	/* Shared singletons and foreign nodes have no position here. */
	ck_assert_int_eq(conf_doc_where(doc, json_object_get(root, "flag"),
	    &line, &column), -1);
	ck_assert_int_eq(conf_doc_where(doc, json_true(), NULL, NULL), -1);
	{
		json_t	*other = json_string("x");

		ck_assert_int_eq(conf_doc_where(doc, other, NULL, NULL), -1);
		json_decref(other);
	}
	ck_assert_int_eq(conf_doc_where(doc, NULL, NULL, NULL), -1);
	conf_doc_free(doc);
}
END_TEST

START_TEST(test_where_many_nodes)
{
	struct conf_doc	*doc;
	json_t		*root;
	char		*yaml;
	unsigned	 line, column;
	size_t		 i;

	/* Enough nodes to grow the position table several times. */
	yaml = flow_list(5000);
	doc = load_ok(yaml);
	root = conf_doc_root(doc);
	for (i = 0; i < 5000; i++) {
		ck_assert_int_eq(conf_doc_where(doc, json_array_get(root, i),
		    &line, &column), 0);
		ck_assert_uint_eq(column, 2 + 2 * i);
	}
	conf_doc_free(doc);
	free(yaml);
}
END_TEST

static Suite *
conf_file_suite(void)
{
	Suite	*s = suite_create("conf_file");
	TCase	*tc;

	tc = tcase_create("file");
	tcase_add_test(tc, test_load_file_reads_policy);
	tcase_add_test(tc, test_load_file_error_names_file);
	tcase_add_test(tc, test_load_file_missing);
	tcase_add_test(tc, test_load_file_not_regular);
	tcase_add_test(tc, test_load_file_too_large);
	suite_add_tcase(s, tc);

	tc = tcase_create("where");
	tcase_add_test(tc, test_where_reports_positions);
	tcase_add_test(tc, test_where_many_nodes);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(conf_file_suite)
