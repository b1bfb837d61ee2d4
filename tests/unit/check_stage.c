/*
 * mcp-exec/stage.c: inputs copied from beneath a root, and every refusal:
 * links, "..", other roots, devices, directories, mounts, names, limits;
 * a call's inputs land all or none.  Tests run as root, so permission
 * refusals are not exercised here.
 */
#include <sys/stat.h>

#include <dirent.h>

#include "sandbox/stage.h"
#include "testutil.h"

struct env {
	char			 dir[PATH_MAX];
	char			 root[PATH_MAX];	/* dir/in */
	char			 dest[PATH_MAX];	/* dir/dest */
	int			 destfd;
	struct input_rules	 rules;
	struct stage		 st;
	char			 name[STAGE_NAME_MAX + 1];	/* the last staged */
	uint64_t		 size;
	char			 sha256[SHA256_HEX + 1];
	char			 err[512];
};

static void
env_init(struct env *e)
{
	memset(e, 0, sizeof(*e));
	tu_tmpdir(e->dir, sizeof(e->dir));
	tu_path(e->root, sizeof(e->root), e->dir, "in");
	tu_path(e->dest, sizeof(e->dest), e->dir, "dest");
	ck_assert_int_eq(mkdir(e->root, 0750), 0);
	ck_assert_int_eq(mkdir(e->dest, 0750), 0);
	e->destfd = open(e->dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ne(e->destfd, -1);
	e->rules.roots[0] = e->root;
	e->rules.nroots = 1;
	e->rules.max_bytes = 1 << 20;
	e->rules.max_files = 10;
	e->rules.inline_max_file = 64;
	e->rules.inline_max_call = 128;
}

/* Writes root/rel and returns its full path in out. */
static void
env_put(struct env *e, const char *rel, const char *data, char *out,
    size_t len)
{
	tu_path(out, len, e->root, rel);
	tu_write(out, data, strlen(data));
}

/* One call's items, planned then written, as a session stages them. */
static int
env_call(struct env *e, struct stage_item *items, size_t n)
{
	int	 rv;

	e->err[0] = '\0';
	rv = stage_plan(&e->rules, &e->st, e->destfd, items, n, e->err,
	    sizeof(e->err)) == 0 && stage_commit(&e->rules, &e->st, e->destfd,
	    items, n, e->err, sizeof(e->err)) == 0 ? 0 : -1;
	stage_release(items, n);
	if (rv == 0 && n > 0) {
		snprintf(e->name, sizeof(e->name), "%s", items[n - 1].name);
		e->size = items[n - 1].size;
		memcpy(e->sha256, items[n - 1].sha256, sizeof(e->sha256));
	}
	return rv;
}

static int
env_stage(struct env *e, const char *path)
{
	struct stage_item	 it = { .path = path };

	return env_call(e, &it, 1);
}

static int
env_inline(struct env *e, const char *name, const void *data, size_t len)
{
	struct stage_item	 it = { .name = name, .data = data, .len = len };

	return env_call(e, &it, 1);
}

/* dest/name holds exactly want (len bytes). */
static void
assert_dest(struct env *e, const char *name, const char *want, size_t len)
{
	char	 path[PATH_MAX], *data;
	size_t	 n;

	tu_path(path, sizeof(path), e->dest, name);
	data = tu_read(path, &n);
	ck_assert_uint_eq(n, len);
	ck_assert_int_eq(memcmp(data, want, len), 0);
	free(data);
}

/* An item the client sends: name and bytes. */
static void
inline_item(struct stage_item *it, const char *name, const void *data,
    size_t len)
{
	memset(it, 0, sizeof(*it));
	it->name = name;
	it->data = data;
	it->len = len;
}

/* Entries in dest: what the sandbox would see in /inputs. */
static int
dest_count(struct env *e)
{
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	ck_assert_ptr_nonnull(d = opendir(e->dest));
	while ((de = readdir(d)) != NULL)
		n += strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void
assert_refused(struct env *e, const char *path, const char *what)
{
	unsigned	 files = e->st.files;

	ck_assert_int_eq(env_stage(e, path), -1);
	ck_assert_msg(strstr(e->err, what) != NULL, "\"%s\" lacks \"%s\"",
	    e->err, what);
	ck_assert_msg(strncmp(e->err, path, strlen(path)) == 0,
	    "\"%s\" does not name %s", e->err, path);
	ck_assert_uint_eq(e->st.files, files);
}

static int
dest_has(struct env *e, const char *name)
{
	struct stat	 st;

	return fstatat(e->destfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

START_TEST(test_stage_copies_file_beneath_root)
{
	struct env	 e;
	char		 path[PATH_MAX], sub[PATH_MAX], *data;
	struct stat	 st;
	size_t		 len;

	env_init(&e);
	env_put(&e, "data.csv", "a,b\n1,2\n", path, sizeof(path));
	ck_assert_msg(env_stage(&e, path) == 0, "%s", e.err);
	ck_assert_str_eq(e.name, "data.csv");
	ck_assert_uint_eq(e.st.files, 1);
	ck_assert_uint_eq(e.st.bytes, 8);
	/* Hashed as copied, for the call's audit record. */
	ck_assert_uint_eq(e.size, 8);
	ck_assert_str_eq(e.sha256, "492d5ea496056f1a6a6592241032fab7"
	    "64c321596317930b4fa0e1e8bc3b7470");
	tu_path(path, sizeof(path), e.dest, "data.csv");
	data = tu_read(path, &len);
	ck_assert_uint_eq(len, 8);
	ck_assert_int_eq(memcmp(data, "a,b\n1,2\n", 8), 0);
	free(data);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0444);

	/* Deeper, through "." and a doubled slash: still beneath. */
	tu_path(sub, sizeof(sub), e.root, "sub");
	ck_assert_int_eq(mkdir(sub, 0750), 0);
	env_put(&e, "sub/notes.txt", "n", path, sizeof(path));
	ck_assert_int_ne(xsnprintf(path, sizeof(path), "%s/./sub//notes.txt",
	    e.root), -1);
	ck_assert_msg(env_stage(&e, path) == 0, "%s", e.err);
	ck_assert_str_eq(e.name, "notes.txt");
	ck_assert_uint_eq(e.st.bytes, 9);
}
END_TEST

START_TEST(test_stage_picks_the_matching_root)
{
	struct env	 e;
	char		 other[PATH_MAX], path[PATH_MAX];

	env_init(&e);
	tu_path(other, sizeof(other), e.dir, "other");
	ck_assert_int_eq(mkdir(other, 0750), 0);
	tu_path(path, sizeof(path), other, "x.txt");
	tu_write(path, "x", 1);
	e.rules.roots[0] = "/nonexistent/root";
	e.rules.roots[1] = other;
	e.rules.roots[2] = e.root;
	e.rules.nroots = 3;
	ck_assert_msg(env_stage(&e, path) == 0, "%s", e.err);
	ck_assert_str_eq(e.name, "x.txt");
}
END_TEST

START_TEST(test_stage_refuses_symlinked_input)
{
	struct env	 e;
	char		 path[PATH_MAX];

	env_init(&e);
	tu_path(path, sizeof(path), e.root, "passwd");
	ck_assert_int_eq(symlink("/etc/passwd", path), 0);
	assert_refused(&e, path, "a symlink on the way");
	/* A link to a file beneath the same root is refused all the same. */
	env_put(&e, "real.txt", "r", path, sizeof(path));
	tu_path(path, sizeof(path), e.root, "alias.txt");
	ck_assert_int_eq(symlink("real.txt", path), 0);
	assert_refused(&e, path, "inputs are opened without following links");
	/* A symlinked directory on the way. */
	tu_path(path, sizeof(path), e.root, "etc");
	ck_assert_int_eq(symlink("/etc", path), 0);
	tu_path(path, sizeof(path), e.root, "etc/passwd");
	assert_refused(&e, path, "a symlink on the way");
	ck_assert_int_eq(dest_has(&e, "passwd"), 0);
	ck_assert_int_eq(dest_has(&e, "alias.txt"), 0);
}
END_TEST

START_TEST(test_stage_refuses_dotdot)
{
	struct env	 e;
	char		 path[PATH_MAX];

	env_init(&e);
	ck_assert_int_ne(xsnprintf(path, sizeof(path), "%s/../in/x.txt",
	    e.root), -1);
	assert_refused(&e, path, "'..' is not allowed");
	ck_assert_int_ne(xsnprintf(path, sizeof(path), "%s/../../etc/passwd",
	    e.root), -1);
	assert_refused(&e, path, "'..' is not allowed");
	ck_assert_int_ne(xsnprintf(path, sizeof(path), "%s/..", e.root), -1);
	assert_refused(&e, path, "'..' is not allowed");
	/* "..x" is no ".." component: only its leading dot refuses it. */
	env_put(&e, "..x", "d", path, sizeof(path));
	assert_refused(&e, path, "names starting with '.'");
}
END_TEST

START_TEST(test_stage_refuses_outside_roots)
{
	struct env	 e;
	char		 path[PATH_MAX], want[PATH_MAX * 2], sibling[PATH_MAX];

	env_init(&e);
	e.rules.roots[1] = "/srv/data";
	e.rules.nroots = 2;
	assert_refused(&e, "/etc/passwd", "not beneath an input root");
	ck_assert_int_ne(xsnprintf(want, sizeof(want),
	    "/etc/passwd: not beneath an input root (%s, /srv/data)", e.root),
	    -1);
	ck_assert_str_eq(e.err, want);
	/* A sibling sharing the root's name as a prefix is not beneath. */
	ck_assert_int_ne(xsnprintf(sibling, sizeof(sibling), "%s2", e.root),
	    -1);
	ck_assert_int_eq(mkdir(sibling, 0750), 0);
	tu_path(path, sizeof(path), sibling, "x.txt");
	tu_write(path, "x", 1);
	assert_refused(&e, path, "not beneath an input root");
	assert_refused(&e, "relative/x.txt", "not an absolute path");
	assert_refused(&e, "", "not an absolute path");
}
END_TEST

START_TEST(test_stage_refuses_bad_roots)
{
	static const char	*bad[] = { "srv/data", "", "/srv//data",
	    "/srv/./data", "/srv/../etc", "/srv/data/", "/srv/data/.",
	    "/srv/data/.." };
	struct env		 e;
	size_t			 i;

	env_init(&e);
	for (i = 0; i < nitems(bad); i++) {
		e.rules.roots[0] = bad[i];
		assert_refused(&e, "/srv/data/x.txt", "is not an absolute, "
		    "normalised path");
	}
}
END_TEST

START_TEST(test_stage_refuses_device)
{
	struct env	 e;

	env_init(&e);
	e.rules.roots[0] = "/dev";
	assert_refused(&e, "/dev/null",
	    "not a regular file (character device)");
	ck_assert_int_eq(dest_has(&e, "null"), 0);
}
END_TEST

START_TEST(test_stage_refuses_directory)
{
	struct env	 e;
	char		 path[PATH_MAX];

	env_init(&e);
	tu_path(path, sizeof(path), e.root, "sub");
	ck_assert_int_eq(mkdir(path, 0750), 0);
	assert_refused(&e, path, "not a regular file (directory)");
	/* The root itself. */
	assert_refused(&e, e.root, "not a regular file (directory)");
	ck_assert_int_ne(xsnprintf(path, sizeof(path), "%s/sub/", e.root),
	    -1);
	assert_refused(&e, path, "no file name");
}
END_TEST

START_TEST(test_stage_refuses_fifo_without_blocking)
{
	struct env	 e;
	char		 path[PATH_MAX];

	env_init(&e);
	tu_path(path, sizeof(path), e.root, "pipe");
	ck_assert_int_eq(mkfifo(path, 0640), 0);
	assert_refused(&e, path, "not a regular file (fifo)");
}
END_TEST

START_TEST(test_stage_refuses_crossing_a_mount)
{
	struct env	 e;
	struct stat	 a, b;

	env_init(&e);
	/* /proc is its own mount beneath "/" wherever these tests run. */
	if (stat("/", &a) == -1 || stat("/proc/version", &b) == -1 ||
	    a.st_dev == b.st_dev)
		return;
	e.rules.roots[0] = "/";
	assert_refused(&e, "/proc/version", "crosses a mount point");
}
END_TEST

START_TEST(test_stage_refuses_missing_file)
{
	struct env	 e;
	char		 path[PATH_MAX];

	env_init(&e);
	tu_path(path, sizeof(path), e.root, "nope.txt");
	assert_refused(&e, path, "no such file");
	env_put(&e, "file.txt", "f", path, sizeof(path));
	tu_path(path, sizeof(path), e.root, "file.txt/x");
	assert_refused(&e, path, "not a directory");
}
END_TEST

START_TEST(test_stage_refuses_unsafe_names)
{
	struct env	 e;
	char		 path[PATH_MAX];

	env_init(&e);
	env_put(&e, ".env", "SECRET=1", path, sizeof(path));
	assert_refused(&e, path, "names starting with '.'");
	env_put(&e, "a\nb.txt", "x", path, sizeof(path));
	assert_refused(&e, path, "control character");
	env_put(&e, "del\x7f.txt", "x", path, sizeof(path));
	assert_refused(&e, path, "control character");
	/* Format, bidi and other invisible code points, as in artifacts. */
	env_put(&e, "evil\xe2\x80\xaegnp.txt", "x", path, sizeof(path));
	assert_refused(&e, path, "unsafe character");
	env_put(&e, "c1\xc2\x85.txt", "x", path, sizeof(path));
	assert_refused(&e, path, "control character");
	env_put(&e, "bom\xef\xbb\xbf.txt", "x", path, sizeof(path));
	assert_refused(&e, path, "unsafe character");
	env_put(&e, "bad\xff.txt", "x", path, sizeof(path));
	assert_refused(&e, path, "not UTF-8");
}
END_TEST

START_TEST(test_stage_refuses_name_too_long)
{
	struct env	 e;
	char		 name[STAGE_NAME_MAX + 2];

	env_init(&e);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	ck_assert_int_eq(env_inline(&e, name, "x", 1), -1);
	ck_assert_ptr_nonnull(strstr(e.err, "name too long"));
	name[STAGE_NAME_MAX] = '\0';
	ck_assert_msg(env_inline(&e, name, "x", 1) == 0, "%s", e.err);
}
END_TEST

/* Issue 11: the same name again replaces the input (it was refused). */
START_TEST(test_stage_replaces_an_input_with_the_same_name)
{
	struct env	 e;
	char		 other[PATH_MAX], path[PATH_MAX];

	env_init(&e);
	tu_path(other, sizeof(other), e.dir, "other");
	ck_assert_int_eq(mkdir(other, 0750), 0);
	e.rules.roots[1] = other;
	e.rules.nroots = 2;
	env_put(&e, "data.csv", "first", path, sizeof(path));
	ck_assert_msg(env_stage(&e, path) == 0, "%s", e.err);
	tu_path(path, sizeof(path), other, "data.csv");
	tu_write(path, "second", 6);
	ck_assert_msg(env_stage(&e, path) == 0, "%s", e.err);
	/* The second copy replaced the first; its bytes were given back. */
	assert_dest(&e, "data.csv", "second", 6);
	ck_assert_uint_eq(e.st.bytes, 6);
	ck_assert_uint_eq(e.st.files, 1);
	ck_assert_int_eq(dest_count(&e), 1);
}
END_TEST

START_TEST(test_stage_inline)
{
	struct env	 e;
	char		 path[PATH_MAX], *data;
	uint8_t		 big[65] = { 0 };
	size_t		 len;

	env_init(&e);
	ck_assert_msg(env_inline(&e, "t.csv", "a\0b", 3) == 0, "%s", e.err);
	tu_path(path, sizeof(path), e.dest, "t.csv");
	data = tu_read(path, &len);
	ck_assert_uint_eq(len, 3);
	ck_assert_int_eq(memcmp(data, "a\0b", 3), 0);
	free(data);
	ck_assert_uint_eq(e.st.files, 1);
	/* Again: replaced, counted once. */
	ck_assert_int_eq(env_inline(&e, "t.csv", "xy", 2), 0);
	ck_assert_uint_eq(e.st.files, 1);
	ck_assert_uint_eq(e.st.bytes, 2);
	ck_assert_uint_eq(e.size, 2);
	ck_assert_str_eq(e.sha256, "769a4e6d0003189c7e96c5d9b7e810a0"
	    "d11c3a12832527ec94b0f86d277f51ca");
	ck_assert_int_eq(env_inline(&e, "big", big, sizeof(big)), -1);
	ck_assert_msg(strstr(e.err, "inputs.inline_max_file, 64") != NULL,
	    "%s", e.err);
	ck_assert_int_eq(env_inline(&e, "../x", big, 1), -1);
	ck_assert_int_eq(env_inline(&e, ".hidden", big, 1), -1);
	ck_assert_int_eq(env_inline(&e, "a\x01b", big, 1), -1);
	ck_assert_msg(strstr(e.err, "control character") != NULL, "%s",
	    e.err);
	ck_assert_int_eq(env_inline(&e, "", big, 1), -1);
	ck_assert_int_eq(dest_has(&e, "big"), 0);
	ck_assert_uint_eq(e.st.files, 1);
}
END_TEST

/* Issue 32: a call refused at its second input left its first behind. */
START_TEST(test_stage_call_is_checked_whole_before_writing)
{
	struct env		 e;
	char			 path[PATH_MAX], nope[PATH_MAX];
	uint8_t			 big[65] = { 0 };
	struct stage_item	 it[3];
	size_t			 i;
	struct {
		const char	*name;
		const void	*data;
		size_t		 len;
		const char	*path;
		const char	*why;
	} calls[] = {
		{ "b.txt", big, sizeof(big), NULL, "inline_max_file" },
		{ "../b", "y", 1, NULL, "a file name, not a path" },
		{ ".b", "y", 1, NULL, "names starting with '.'" },
		{ "a.txt", "y", 1, NULL, "a.txt is named twice" },
		{ NULL, NULL, 0, "/etc/passwd", "not beneath an input root" },
		{ NULL, NULL, 0, nope, "no such file" },
		{ NULL, NULL, 0, path, "a.txt is named twice" },
	};

	env_init(&e);
	env_put(&e, "a.txt", "host", path, sizeof(path));
	tu_path(nope, sizeof(nope), e.root, "nope.txt");
	for (i = 0; i < nitems(calls); i++) {
		inline_item(&it[0], "a.txt", "X", 1);
		inline_item(&it[1], calls[i].name, calls[i].data, calls[i].len);
		it[1].path = calls[i].path;
		ck_assert_int_eq(env_call(&e, it, 2), -1);
		ck_assert_msg(strstr(e.err, calls[i].why) != NULL,
		    "call %zu: \"%s\" lacks \"%s\"", i, e.err, calls[i].why);
		ck_assert_int_eq(dest_count(&e), 0);
		ck_assert_uint_eq(e.st.files, 0);
	}
	/* The call's inline bytes together (inline_max_call 128). */
	inline_item(&it[0], "a", big, 60);
	inline_item(&it[1], "b", big, 60);
	inline_item(&it[2], "c", big, 60);
	ck_assert_int_eq(env_call(&e, it, 3), -1);
	ck_assert_ptr_nonnull(strstr(e.err, "inputs.inline_max_call"));
	ck_assert_int_eq(dest_count(&e), 0);
	/* Over max_files, counting what the session holds. */
	e.rules.max_files = 2;
	ck_assert_int_eq(env_inline(&e, "held", "h", 1), 0);
	inline_item(&it[0], "a", "a", 1);
	memset(&it[1], 0, sizeof(it[1]));
	it[1].path = path;
	ck_assert_int_eq(env_call(&e, it, 2), -1);
	ck_assert_ptr_nonnull(strstr(e.err, "more than 2 input files"));
	ck_assert_int_eq(dest_count(&e), 1);
	ck_assert_uint_eq(e.st.files, 1);
}
END_TEST

START_TEST(test_stage_enforces_file_and_byte_limits)
{
	struct env	 e;
	char		 path[PATH_MAX];

	env_init(&e);
	e.rules.max_bytes = 10;
	e.rules.max_files = 2;
	env_put(&e, "big.txt", "0123456789X", path, sizeof(path));
	assert_refused(&e, path, "inputs would exceed 10 bytes in all");
	env_put(&e, "a.txt", "012345", path, sizeof(path));
	ck_assert_msg(env_stage(&e, path) == 0, "%s", e.err);
	env_put(&e, "b.txt", "012345", path, sizeof(path));
	assert_refused(&e, path, "inputs would exceed 10 bytes in all");
	env_put(&e, "c.txt", "0123", path, sizeof(path));
	ck_assert_msg(env_stage(&e, path) == 0, "%s", e.err);
	ck_assert_uint_eq(e.st.bytes, 10);
	env_put(&e, "d.txt", "", path, sizeof(path));
	assert_refused(&e, path, "more than 2 input files");
	ck_assert_int_eq(dest_has(&e, "b.txt"), 0);
	ck_assert_int_eq(dest_has(&e, "d.txt"), 0);
}
END_TEST

START_TEST(test_stage_refuses_file_growing_past_budget)
{
	struct env		 e;
	struct stage_item	 it[2];
	struct stat		 st;

	env_init(&e);
	/* /proc/version says it has 0 bytes, then reads as ~150: a file
	 * that grew after fstat, without a race. */
	if (stat("/proc/version", &st) == -1 || st.st_size != 0)
		return;
	e.rules.roots[0] = "/proc";
	e.rules.max_bytes = 10;
	assert_refused(&e, "/proc/version", "grew past the input limit of "
	    "10 bytes");
	/* The partial copy is gone. */
	ck_assert_int_eq(dest_has(&e, "version"), 0);
	ck_assert_uint_eq(e.st.bytes, 0);
	/* Written, then renamed (issue 32): a failure while writing leaves
	 * nothing of the call, and an input it would replace as it was. */
	ck_assert_int_eq(env_inline(&e, "a.txt", "old", 3), 0);
	inline_item(&it[0], "a.txt", "new", 3);
	memset(&it[1], 0, sizeof(it[1]));
	it[1].path = "/proc/version";
	ck_assert_int_eq(env_call(&e, it, 2), -1);
	ck_assert_msg(strstr(e.err, "grew past the input limit") != NULL,
	    "%s", e.err);
	ck_assert_int_eq(dest_count(&e), 1);
	assert_dest(&e, "a.txt", "old", 3);
	ck_assert_uint_eq(e.st.files, 1);
	ck_assert_uint_eq(e.st.bytes, 3);
	/* With room, the same file stages. */
	e.rules.max_bytes = 1 << 20;
	ck_assert_msg(env_stage(&e, "/proc/version") == 0, "%s", e.err);
	ck_assert_uint_gt(e.st.bytes, 10);
}
END_TEST

static Suite *
stage_suite(void)
{
	Suite	*s = suite_create("stage");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_stage_copies_file_beneath_root);
	tcase_add_test(tc, test_stage_picks_the_matching_root);
	tcase_add_test(tc, test_stage_refuses_symlinked_input);
	tcase_add_test(tc, test_stage_refuses_dotdot);
	tcase_add_test(tc, test_stage_refuses_outside_roots);
	tcase_add_test(tc, test_stage_refuses_bad_roots);
	tcase_add_test(tc, test_stage_refuses_device);
	tcase_add_test(tc, test_stage_refuses_directory);
	tcase_add_test(tc, test_stage_refuses_fifo_without_blocking);
	tcase_add_test(tc, test_stage_refuses_crossing_a_mount);
	tcase_add_test(tc, test_stage_refuses_missing_file);
	tcase_add_test(tc, test_stage_refuses_unsafe_names);
	tcase_add_test(tc, test_stage_refuses_name_too_long);
	tcase_add_test(tc, test_stage_replaces_an_input_with_the_same_name);
	tcase_add_test(tc, test_stage_inline);
	tcase_add_test(tc, test_stage_call_is_checked_whole_before_writing);
	tcase_add_test(tc, test_stage_enforces_file_and_byte_limits);
	tcase_add_test(tc, test_stage_refuses_file_growing_past_budget);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(stage_suite)
