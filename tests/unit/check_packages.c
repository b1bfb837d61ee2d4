/*
 * mcp-exec/sessions/packages.c: pip's environment for a profile with
 * packages.install, and the listing of a hostile layer: dist-info names,
 * pip's report (good, broken, oversized, not a file), links, and the join.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include "sessions/packages.h"
#include "testutil.h"

#define SHA_A	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static char	 sbdir[PATH_MAX], layer[PATH_MAX], site[PATH_MAX];

/* A sandbox directory with an empty layer and its site-packages. */
static void
layer_make(void)
{
	char	 p[PATH_MAX];

	tu_tmpdir(sbdir, sizeof(sbdir));
	tu_path(p, sizeof(p), sbdir, "disk");
	ck_assert_int_eq(mkdir(p, 0700), 0);
	tu_path(layer, sizeof(layer), p, "packages");
	ck_assert_int_eq(mkdir(layer, 0700), 0);
	tu_path(p, sizeof(p), layer, "lib");
	ck_assert_int_eq(mkdir(p, 0700), 0);
	tu_path(site, sizeof(site), p, "python3.11");
	ck_assert_int_eq(mkdir(site, 0700), 0);
	tu_path(p, sizeof(p), site, "site-packages");
	ck_assert_int_eq(mkdir(p, 0700), 0);
	tu_path(site, sizeof(site), p, "");
	site[strlen(site) - 1] = '\0';
}

static void
put(const char *dir, const char *name, const char *text)
{
	char	 p[PATH_MAX];
	int	 fd;

	tu_path(p, sizeof(p), dir, name);
	ck_assert_int_ge(fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600), 0);
	ck_assert_int_eq(write_all(fd, text, strlen(text)), 0);
	close(fd);
}

static void
dist_info(const char *name)
{
	char	 p[PATH_MAX];

	tu_path(p, sizeof(p), site, name);
	ck_assert_int_eq(mkdir(p, 0700), 0);
}

static struct pkg_layer
layer_on(void)
{
	struct profile		 p;
	struct sandbox_spec	 spec;
	struct pkg_layer	 pl;

	memset(&p, 0, sizeof(p));
	memset(&spec, 0, sizeof(spec));
	p.pkg_install = 1;
	snprintf(p.pkg_index, sizeof(p.pkg_index), "https://pypi.test/simple");
	packages_prepare(&pl, &spec, &p);
	return pl;
}

START_TEST(test_environment_from_the_profile)
{
	static const char *const before[] = { "SSL_CERT_FILE=/x", NULL };
	struct profile		 p;
	struct sandbox_spec	 spec;
	struct pkg_layer	 pl;
	int			 i, index = 0, brk = 0, cache = 0, trust = 0;

	memset(&p, 0, sizeof(p));
	memset(&spec, 0, sizeof(spec));
	packages_prepare(&pl, &spec, &p);
	ck_assert_int_eq(spec.packages, 0);
	ck_assert_ptr_null(spec.env_extra);
	ck_assert_ptr_null(packages_list(&pl, "/nonexistent"));
	p.pkg_install = 1;
	snprintf(p.pkg_index, sizeof(p.pkg_index), "https://pypi.test/simple");
	spec.env_extra = before;
	packages_prepare(&pl, &spec, &p);
	ck_assert_int_eq(spec.packages, 1);
	for (i = 0; spec.env_extra[i] != NULL; i++) {
		index += strcmp(spec.env_extra[i],
		    "PIP_INDEX_URL=https://pypi.test/simple") == 0;
		brk += strcmp(spec.env_extra[i],
		    "PIP_BREAK_SYSTEM_PACKAGES=1") == 0;
		cache += strcmp(spec.env_extra[i], "PIP_NO_CACHE_DIR=1") == 0;
		trust += strcmp(spec.env_extra[i], "SSL_CERT_FILE=/x") == 0;
	}
	ck_assert_int_lt(i, PKG_ENV_MAX);
	ck_assert(index == 1 && brk == 1 && cache == 1 && trust == 1);
	packages_free(&pl);
}
END_TEST

START_TEST(test_layer_listed_and_joined_with_the_report)
{
	struct pkg_layer	 pl = layer_on();
	json_t			*l;
	char			 p[PATH_MAX];

	layer_make();
	dist_info("Zeta_Pkg-1.0.dist-info");
	dist_info("alpha-2.0b1.dist-info");
	dist_info("alpha");			/* not a dist-info */
	dist_info("nodash.dist-info");
	dist_info("bad name-1.dist-info");
	dist_info("evil-1;rm.dist-info");
	tu_path(p, sizeof(p), site, "linked-9.dist-info");
	ck_assert_int_eq(symlink("/etc", p), 0);	/* not a directory */
	put(site, "file-1.dist-info", "");
	put(layer, PKG_REPORT, "{\"install\": ["
	    "{\"metadata\": {\"name\": \"zeta.pkg\", \"version\": \"1.0\"},"
	    " \"download_info\": {\"url\": \"https://files.test/z.whl\","
	    " \"archive_info\": {\"hash\": \"sha256=" SHA_A "\"}}},"
	    "{\"metadata\": {\"name\": \"alpha\", \"version\": \"2.0b1\"},"
	    " \"download_info\": {\"url\": \"http://plain.test/a.whl\","
	    " \"archive_info\": {\"hashes\": {\"sha256\": \"" SHA_B "\"}}}},"
	    "{\"metadata\": {\"name\": \"x\", \"version\": \"1\"},"
	    " \"download_info\": {\"archive_info\": {\"hash\": \"md5=00\"}}}"
	    "]}");
	l = packages_list(&pl, sbdir);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(json_array_size(l), 2);
	/* Sorted, PEP 503 names; the http URL is not passed on. */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(l, 0),
	    "name")), "alpha");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(l, 0),
	    "sha256")), SHA_B);
	ck_assert(json_is_null(json_object_get(json_array_get(l, 0), "url")));
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(l, 1),
	    "name")), "zeta-pkg");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(l, 1),
	    "version")), "1.0");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(l, 1),
	    "sha256")), SHA_A);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(l, 1),
	    "url")), "https://files.test/z.whl");
	json_decref(l);
	/* The report was taken; the hashes are kept for the next call. */
	tu_path(p, sizeof(p), layer, PKG_REPORT);
	ck_assert_int_eq(access(p, F_OK), -1);
	l = packages_list(&pl, sbdir);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(l, 1),
	    "sha256")), SHA_A);
	json_decref(l);
	packages_free(&pl);
}
END_TEST

/* A report that is not one: broken JSON, a directory, a link, too big. */
START_TEST(test_bad_reports_leave_hashes_unknown)
{
	struct pkg_layer	 pl = layer_on();
	json_t			*l;
	char			 p[PATH_MAX], *big;
	int			 fd;

	layer_make();
	dist_info("a-1.dist-info");
	tu_path(p, sizeof(p), layer, PKG_REPORT);
	switch (_i) {
	case 0:
		put(layer, PKG_REPORT, "{\"install\": [");
		break;
	case 1:
		ck_assert_int_eq(mkdir(p, 0700), 0);
		break;
	case 2:
		put(sbdir, "elsewhere.json", "{\"install\": [{\"metadata\": "
		    "{\"name\": \"a\", \"version\": \"1\"}, \"download_info\": "
		    "{\"archive_info\": {\"hash\": \"sha256=" SHA_A "\"}}}]}");
		tu_path(p, sizeof(p), layer, PKG_REPORT);
		ck_assert_int_eq(symlink("../../elsewhere.json", p), 0);
		break;
	case 3:
		big = xmalloc(PKG_REPORT_MAX + 2);
		memset(big, ' ', PKG_REPORT_MAX + 1);
		big[PKG_REPORT_MAX + 1] = '\0';
		ck_assert_int_ge(fd = open(p, O_WRONLY | O_CREAT, 0600), 0);
		ck_assert_int_eq(write_all(fd, big, PKG_REPORT_MAX + 1), 0);
		close(fd);
		free(big);
		break;
	}
	l = packages_list(&pl, sbdir);
	ck_assert_int_eq(json_array_size(l), 1);
	ck_assert(json_is_null(json_object_get(json_array_get(l, 0),
	    "sha256")));
	json_decref(l);
	packages_free(&pl);
}
END_TEST

/* No layer on disk (a sandbox that never made one): an empty list. */
START_TEST(test_missing_layer_is_empty)
{
	struct pkg_layer	 pl = layer_on();
	json_t			*l;

	tu_tmpdir(sbdir, sizeof(sbdir));
	l = packages_list(&pl, sbdir);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(json_array_size(l), 0);
	json_decref(l);
	packages_free(&pl);
}
END_TEST

static Suite *
packages_suite(void)
{
	Suite	*s = suite_create("packages");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_environment_from_the_profile);
	tcase_add_test(tc, test_layer_listed_and_joined_with_the_report);
	tcase_add_loop_test(tc, test_bad_reports_leave_hashes_unknown, 0, 4);
	tcase_add_test(tc, test_missing_layer_is_empty);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(packages_suite)
