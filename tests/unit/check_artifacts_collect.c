/*
 * mcp-exec/artifacts.c: a collect over hostile workspaces: links, special
 * files, unsafe names, depth, and every cap.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "artifacts_fixture.h"
#include "hash.h"
#include "sandbox/artifacts.h"
#include "testutil.h"

#define ALL_TYPES	((1u << ART_NTYPES) - 1)

struct ws {
	char	 dir[PATH_MAX];
	char	 in[PATH_MAX];
	char	 out[PATH_MAX];
	int	 infd;
	int	 outfd;
	json_t	*known;		/* what the caller already holds */
};

static void
ws_init(struct ws *w)
{
	tu_tmpdir(w->dir, sizeof(w->dir));
	tu_path(w->in, sizeof(w->in), w->dir, "work");
	tu_path(w->out, sizeof(w->out), w->dir, "out");
	ck_assert_int_eq(mkdir(w->in, 0750), 0);
	ck_assert_int_eq(mkdir(w->out, 0750), 0);
	w->infd = w->outfd = -1;
	w->known = NULL;
}

static void
ws_put(struct ws *w, const char *name, const void *data, size_t len)
{
	char	 path[PATH_MAX];

	tu_path(path, sizeof(path), w->in, name);
	tu_write(path, data, len);
}

static void
ws_mkdir(struct ws *w, const char *name)
{
	char	 path[PATH_MAX];

	tu_path(path, sizeof(path), w->in, name);
	ck_assert_int_eq(mkdir(path, 0750), 0);
}

static void
rules_all(struct artifact_rules *r)
{
	r->types = ALL_TYPES;
	r->max_file = 1 << 20;
	r->max_total = 1 << 22;
	r->max_count = 100;
}

static int
ws_collect(struct ws *w, const struct artifact_rules *r, json_t **found,
    json_t **skipped)
{
	char	 err[256] = "";
	int	 rv;

	w->infd = open(w->in, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	w->outfd = open(w->out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ne(w->infd, -1);
	ck_assert_int_ne(w->outfd, -1);
	rv = artifacts_collect(w->infd, r, w->outfd, w->known, "artifact://run1/",
	    found, skipped, err, sizeof(err));
	close(w->infd);
	close(w->outfd);
	if (rv == 0) {
		ck_assert_ptr_nonnull(*found);
		ck_assert_ptr_nonnull(*skipped);
	}
	return rv;
}

/* The reason `name` was skipped, or NULL when it was not. */
static const char *
reason_of(json_t *skipped, const char *name)
{
	size_t	 i;
	json_t	*e;

	json_array_foreach(skipped, i, e)
		if (strcmp(json_string_value(json_object_get(e, "name")),
		    name) == 0)
			return json_string_value(json_object_get(e, "reason"));
	return NULL;
}

static void
assert_skipped(json_t *skipped, const char *name, const char *reason)
{
	const char	*r = reason_of(skipped, name);

	ck_assert_msg(r != NULL, "%s not skipped", name);
	ck_assert_str_eq(r, reason);
}

static int
out_exists(struct ws *w, const char *name)
{
	char		 path[PATH_MAX];
	struct stat	 st;

	tu_path(path, sizeof(path), w->out, name);
	return lstat(path, &st) == 0;
}

START_TEST(test_artifacts_collects_nested_files_in_name_order)
{
	static const char	 csv[] = "x,y\n1,2\n";
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped, *e;
	char			 path[PATH_MAX], hex[SHA256_HEX + 1], *data;
	struct stat		 st;
	size_t			 len;

	ws_init(&w);
	rules_all(&r);
	ws_put(&w, "b.txt", "hello\n", 6);
	ws_put(&w, "a.csv", csv, sizeof(csv) - 1);
	ws_mkdir(&w, "sub");
	ws_put(&w, "sub/plot.png", PNG_HEAD, sizeof(PNG_HEAD) - 1);
	ws_mkdir(&w, "empty");
	ck_assert_int_eq(ws_collect(&w, &r, &found, &skipped), 0);
	ck_assert_uint_eq(json_array_size(found), 3);
	ck_assert_uint_eq(json_array_size(skipped), 0);

	e = json_array_get(found, 0);
	ck_assert_str_eq(json_string_value(json_object_get(e, "name")),
	    "a.csv");
	ck_assert_str_eq(json_string_value(json_object_get(e, "uri")),
	    "artifact://run1/a.csv");
	ck_assert_str_eq(json_string_value(json_object_get(e, "mime")),
	    "text/csv");
	ck_assert_int_eq(json_integer_value(json_object_get(e, "size")),
	    sizeof(csv) - 1);
	sha256_hex(csv, sizeof(csv) - 1, hex);
	ck_assert_str_eq(json_string_value(json_object_get(e, "sha256")), hex);
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(found, 1), "name")), "b.txt");
	e = json_array_get(found, 2);
	ck_assert_str_eq(json_string_value(json_object_get(e, "name")),
	    "sub/plot.png");
	ck_assert_str_eq(json_string_value(json_object_get(e, "mime")),
	    "image/png");

	/* Copied at the same relative path, byte for byte, mode 0640. */
	tu_path(path, sizeof(path), w.out, "sub/plot.png");
	data = tu_read(path, &len);
	ck_assert_uint_eq(len, sizeof(PNG_HEAD) - 1);
	ck_assert_int_eq(memcmp(data, PNG_HEAD, len), 0);
	free(data);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	/* A directory that gave nothing is not mirrored. */
	ck_assert_int_eq(out_exists(&w, "empty"), 0);
	json_decref(found);
	json_decref(skipped);
}
END_TEST

START_TEST(test_artifacts_skip_symlink_to_host_file)
{
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped;
	char			 path[PATH_MAX];

	ws_init(&w);
	rules_all(&r);
	tu_path(path, sizeof(path), w.in, "passwd");
	ck_assert_int_eq(symlink("/etc/passwd", path), 0);
	tu_path(path, sizeof(path), w.in, "etc");
	ck_assert_int_eq(symlink("/etc", path), 0);
	tu_path(path, sizeof(path), w.in, "dangling");
	ck_assert_int_eq(symlink("/nonexistent", path), 0);
	ck_assert_int_eq(ws_collect(&w, &r, &found, &skipped), 0);
	ck_assert_uint_eq(json_array_size(found), 0);
	assert_skipped(skipped, "passwd", "symlink");
	assert_skipped(skipped, "etc", "symlink");
	assert_skipped(skipped, "dangling", "symlink");
	ck_assert_int_eq(out_exists(&w, "passwd"), 0);
	ck_assert_int_eq(out_exists(&w, "etc"), 0);
	json_decref(found);
	json_decref(skipped);
}
END_TEST

START_TEST(test_artifacts_skip_hardlink)
{
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped;
	char			 a[PATH_MAX], b[PATH_MAX];

	ws_init(&w);
	rules_all(&r);
	/* A link to a file outside, as a sandbox on the same fs could make. */
	tu_path(a, sizeof(a), w.dir, "host-secret.txt");
	tu_write(a, "secret\n", 7);
	tu_path(b, sizeof(b), w.in, "loot.txt");
	ck_assert_int_eq(link(a, b), 0);
	ck_assert_int_eq(ws_collect(&w, &r, &found, &skipped), 0);
	ck_assert_uint_eq(json_array_size(found), 0);
	assert_skipped(skipped, "loot.txt", "hard link");
	ck_assert_int_eq(out_exists(&w, "loot.txt"), 0);
	json_decref(found);
	json_decref(skipped);
}
END_TEST

START_TEST(test_artifacts_skip_fifo_socket_and_device)
{
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped;
	struct sockaddr_un	 sun;
	char			 path[PATH_MAX];
	int			 s, dev;

	ws_init(&w);
	rules_all(&r);
	tu_path(path, sizeof(path), w.in, "fifo");
	ck_assert_int_eq(mkfifo(path, 0640), 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	tu_path(sun.sun_path, sizeof(sun.sun_path), w.in, "sock");
	ck_assert_int_ne(s = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
	/* A device node needs CAP_MKNOD, which a container may lack. */
	tu_path(path, sizeof(path), w.in, "null");
	dev = mknod(path, S_IFCHR | 0640, makedev(1, 3)) == 0;
	ck_assert_int_eq(ws_collect(&w, &r, &found, &skipped), 0);
	ck_assert_uint_eq(json_array_size(found), 0);
	assert_skipped(skipped, "fifo", "not a regular file");
	assert_skipped(skipped, "sock", "not a regular file");
	if (dev)
		assert_skipped(skipped, "null", "not a regular file");
	close(s);
	json_decref(found);
	json_decref(skipped);
}
END_TEST

START_TEST(test_artifacts_mime_from_content_not_name)
{
	static const char	 html[] = "<!DOCTYPE html><p>hi</p>";
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped;

	ws_init(&w);
	rules_all(&r);
	ws_put(&w, "x.png", html, sizeof(html) - 1);
	ws_put(&w, "y.txt", PNG_HEAD, sizeof(PNG_HEAD) - 1);
	ws_put(&w, "z.json", "{\"broken\": ", 11);
	ck_assert_int_eq(ws_collect(&w, &r, &found, &skipped), 0);
	ck_assert_uint_eq(json_array_size(found), 3);
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(found, 0), "mime")), "text/html");
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(found, 1), "mime")), "image/png");
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(found, 2), "mime")), "text/plain");
	json_decref(found);
	json_decref(skipped);
}
END_TEST

START_TEST(test_artifacts_skip_disallowed_and_unrecognised_types)
{
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped;

	ws_init(&w);
	rules_all(&r);
	r.types = 1u << ART_PNG | 1u << ART_CSV;
	ws_put(&w, "ok.png", PNG_HEAD, sizeof(PNG_HEAD) - 1);
	ws_put(&w, "page.html", "<html>", 6);
	ws_put(&w, "notes.txt", "just text", 9);
	ws_put(&w, "a.out", "\x7f" "ELF\x02\x01\x01\0\0\0", 10);
	ws_put(&w, "latin1.txt", "caf\xe9", 4);
	ck_assert_int_eq(ws_collect(&w, &r, &found, &skipped), 0);
	ck_assert_uint_eq(json_array_size(found), 1);
	assert_skipped(skipped, "page.html", "type html not allowed");
	assert_skipped(skipped, "notes.txt", "type txt not allowed");
	assert_skipped(skipped, "a.out", "unrecognised content");
	assert_skipped(skipped, "latin1.txt", "unrecognised content");
	ck_assert_int_eq(out_exists(&w, "page.html"), 0);
	json_decref(found);
	json_decref(skipped);
}
END_TEST

START_TEST(test_artifacts_caps_on_size_count_and_total)
{
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped;

	ws_init(&w);
	rules_all(&r);
	r.max_file = 10;
	r.max_total = 16;
	r.max_count = 3;
	ws_put(&w, "a.txt", "0123456789", 10);		/* taken: 10 */
	ws_put(&w, "b.txt", "0123456789X", 11);		/* over max_file */
	ws_put(&w, "c.txt", "0123456", 7);		/* 17 > 16 */
	ws_put(&w, "d.txt", "012345", 6);		/* taken: 16 */
	ws_put(&w, "e.txt", "", 0);			/* taken: 3rd */
	ws_put(&w, "f.txt", "", 0);			/* over max_count */
	ck_assert_int_eq(ws_collect(&w, &r, &found, &skipped), 0);
	ck_assert_uint_eq(json_array_size(found), 3);
	assert_skipped(skipped, "b.txt", "larger than 10 bytes");
	assert_skipped(skipped, "c.txt", "artifacts exceed 16 bytes in all");
	assert_skipped(skipped, "f.txt", "more than 3 artifacts");
	ck_assert_int_eq(out_exists(&w, "d.txt"), 1);
	ck_assert_int_eq(out_exists(&w, "c.txt"), 0);
	json_decref(found);
	json_decref(skipped);
}
END_TEST

START_TEST(test_artifacts_skip_unsafe_names)
{
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped;
	char			 longname[256], rel[PATH_MAX];

	ws_init(&w);
	rules_all(&r);
	ws_put(&w, "new\nline.txt", "x", 1);
	ws_put(&w, "esc\x1b[2J.txt", "x", 1);
	ws_put(&w, "bad\xff.txt", "x", 1);
	ws_put(&w, "c1\xc2\x9b.txt", "x", 1);		/* U+009B CSI */
	ws_put(&w, "ok-\xc3\xa9.txt", "x", 1);		/* U+00E9 is fine */
	/* Shown to people as "eviltxt.png": U+202E RIGHT-TO-LEFT OVERRIDE. */
	ws_put(&w, "evil\xe2\x80\xaegnp.txt", "x", 1);
	ws_put(&w, "zw\xe2\x80\x8bj.txt", "x", 1);	/* U+200B ZWSP, Cf */
	ws_put(&w, "ls\xe2\x80\xa8.txt", "x", 1);	/* U+2028 line sep */
	ws_put(&w, "nc\xef\xb7\x90.txt", "x", 1);	/* U+FDD0 nonchar */
	ws_mkdir(&w, "d");
	/* 254 bytes fit one component, but "d/" makes 256. */
	memset(longname, 'n', 254);
	longname[254] = '\0';
	ws_put(&w, "d/x.txt", "x", 1);
	ck_assert_int_ne(xsnprintf(rel, sizeof(rel), "d/%s", longname), -1);
	ws_put(&w, rel, "x", 1);
	ck_assert_int_eq(ws_collect(&w, &r, &found, &skipped), 0);
	ck_assert_uint_eq(json_array_size(found), 2);
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(found, 0), "name")), "d/x.txt");
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(found, 1), "name")), "ok-\xc3\xa9.txt");
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(found, 1), "uri")),
	    "artifact://run1/ok-%C3%A9.txt");
	/* Shown as printable ASCII, so the listing itself is safe. */
	assert_skipped(skipped, "new?line.txt", "unsafe name");
	assert_skipped(skipped, "esc?[2J.txt", "unsafe name");
	assert_skipped(skipped, "bad?.txt", "unsafe name");
	assert_skipped(skipped, "c1??.txt", "unsafe name");
	assert_skipped(skipped, "evil???gnp.txt", "unsafe name");
	assert_skipped(skipped, "zw???j.txt", "unsafe name");
	assert_skipped(skipped, "ls???.txt", "unsafe name");
	assert_skipped(skipped, "nc???.txt", "unsafe name");
	ck_assert_uint_eq(json_array_size(skipped), 9);
	json_decref(found);
	json_decref(skipped);
}
END_TEST

START_TEST(test_artifacts_uri_percent_encodes_reserved_characters)
{
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped;

	ws_init(&w);
	rules_all(&r);
	ws_put(&w, "a b#?%.txt", "x", 1);
	ck_assert_int_eq(ws_collect(&w, &r, &found, &skipped), 0);
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(found, 0), "name")), "a b#?%.txt");
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(found, 0), "uri")),
	    "artifact://run1/a%20b%23%3F%25.txt");
	json_decref(found);
	json_decref(skipped);
}
END_TEST

START_TEST(test_artifacts_stop_below_depth_cap)
{
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped;
	char			 rel[PATH_MAX], deep[PATH_MAX];
	int			 i;

	ws_init(&w);
	rules_all(&r);
	rel[0] = '\0';
	/* d1/d2/.../d10, a file in each. */
	for (i = 1; i <= ARTIFACT_DEPTH_MAX + 2; i++) {
		char	 next[PATH_MAX], file[PATH_MAX];

		ck_assert_int_ne(xsnprintf(next, sizeof(next), "%s%sd%d", rel,
		    i > 1 ? "/" : "", i), -1);
		memcpy(rel, next, sizeof(rel));
		ws_mkdir(&w, rel);
		ck_assert_int_ne(xsnprintf(file, sizeof(file), "%s/f.txt",
		    rel), -1);
		ws_put(&w, file, "x", 1);
		if (i == ARTIFACT_DEPTH_MAX + 1)
			memcpy(deep, rel, sizeof(deep));
	}
	ck_assert_int_eq(ws_collect(&w, &r, &found, &skipped), 0);
	ck_assert_uint_eq(json_array_size(found), ARTIFACT_DEPTH_MAX);
	assert_skipped(skipped, deep, "deeper than 8 directories");
	ck_assert_uint_eq(json_array_size(skipped), 1);
	json_decref(found);
	json_decref(skipped);
}
END_TEST

START_TEST(test_artifacts_long_skip_list_is_summarised)
{
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped, *last;
	char			 name[32], path[PATH_MAX];
	int			 i;

	ws_init(&w);
	rules_all(&r);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "fifo%03d", i);
		tu_path(path, sizeof(path), w.in, name);
		ck_assert_int_eq(mkfifo(path, 0640), 0);
	}
	ck_assert_int_eq(ws_collect(&w, &r, &found, &skipped), 0);
	ck_assert_uint_eq(json_array_size(skipped), 257);
	last = json_array_get(skipped, 256);
	ck_assert_str_eq(json_string_value(json_object_get(last, "name")), "");
	ck_assert_str_eq(json_string_value(json_object_get(last, "reason")),
	    "44 more entries not listed");
	json_decref(found);
	json_decref(skipped);
}
END_TEST

START_TEST(test_artifacts_existing_output_is_our_error)
{
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found = (json_t *)1, *skipped = (json_t *)1;
	char			 path[PATH_MAX], err[256];
	int			 in, out;

	ws_init(&w);
	rules_all(&r);
	ws_put(&w, "a.txt", "new", 3);
	tu_path(path, sizeof(path), w.out, "a.txt");
	tu_write(path, "old", 3);
	in = open(w.in, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	out = open(w.out, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(artifacts_collect(in, &r, out, NULL, "u/", &found,
	    &skipped, err, sizeof(err)), -1);
	ck_assert_ptr_null(found);
	ck_assert_ptr_null(skipped);
	ck_assert_ptr_nonnull(strstr(err, "a.txt"));
	close(in);
	close(out);
}
END_TEST

START_TEST(test_artifacts_caller_directory_offset_untouched)
{
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped;
	char			 err[256];
	int			 in, out;
	off_t			 before;

	ws_init(&w);
	rules_all(&r);
	ws_put(&w, "a.txt", "a", 1);
	ws_put(&w, "b.txt", "b", 1);
	in = open(w.in, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	out = open(w.out, O_RDONLY | O_DIRECTORY);
	before = lseek(in, 0, SEEK_CUR);
	ck_assert_int_eq(artifacts_collect(in, &r, out, NULL, NULL, &found,
	    &skipped, err, sizeof(err)), 0);
	ck_assert_int_eq(lseek(in, 0, SEEK_CUR), before);
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(found, 0), "uri")), "a.txt");
	close(in);
	close(out);
	json_decref(found);
	json_decref(skipped);
}
END_TEST

/* A file the caller holds with the same content is not copied again,
 * but still counts against the caps; a changed one is. */
START_TEST(test_artifacts_known_unchanged_not_copied)
{
	struct artifact_rules	 r;
	struct ws		 w;
	json_t			*found, *skipped;
	char			 path[PATH_MAX], hex[SHA256_HEX + 1];
	struct stat		 st;

	ws_init(&w);
	rules_all(&r);
	r.max_count = 2;
	ws_put(&w, "same.txt", "same", 4);
	ws_put(&w, "changed.txt", "new", 3);
	ws_put(&w, "third.txt", "3", 1);
	sha256_hex((const uint8_t *)"same", 4, hex);
	w.known = json_pack("{s:{s:s}, s:{s:s}}", "same.txt", "sha256", hex,
	    "changed.txt", "sha256", "00");
	ck_assert_int_eq(ws_collect(&w, &r, &found, &skipped), 0);
	ck_assert_int_eq(json_array_size(found), 1);
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(found, 0), "name")), "changed.txt");
	tu_path(path, sizeof(path), w.out, "same.txt");
	ck_assert_int_eq(stat(path, &st), -1);
	/* Sorted: changed.txt, same.txt fill the two places. */
	ck_assert_ptr_nonnull(strstr(reason_of(skipped, "third.txt"),
	    "more than 2"));
	json_decref(w.known);
	json_decref(found);
	json_decref(skipped);
}
END_TEST

static Suite *
artifacts_collect_suite(void)
{
	Suite	*s = suite_create("artifacts_collect");
	TCase	*tc = tcase_create("collect");

	tcase_add_test(tc, test_artifacts_collects_nested_files_in_name_order);
	tcase_add_test(tc, test_artifacts_skip_symlink_to_host_file);
	tcase_add_test(tc, test_artifacts_skip_hardlink);
	tcase_add_test(tc, test_artifacts_skip_fifo_socket_and_device);
	tcase_add_test(tc, test_artifacts_mime_from_content_not_name);
	tcase_add_test(tc,
	    test_artifacts_skip_disallowed_and_unrecognised_types);
	tcase_add_test(tc, test_artifacts_caps_on_size_count_and_total);
	tcase_add_test(tc, test_artifacts_skip_unsafe_names);
	tcase_add_test(tc,
	    test_artifacts_uri_percent_encodes_reserved_characters);
	tcase_add_test(tc, test_artifacts_stop_below_depth_cap);
	tcase_add_test(tc, test_artifacts_long_skip_list_is_summarised);
	tcase_add_test(tc, test_artifacts_existing_output_is_our_error);
	tcase_add_test(tc, test_artifacts_caller_directory_offset_untouched);
	tcase_add_test(tc, test_artifacts_known_unchanged_not_copied);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(artifacts_collect_suite)
