/*
 * The gVisor runtime's OCI bundle carries the native sandbox's policy:
 * root and 65534 (mapped to the gofer's and the sandbox's leases by the
 * launcher's user namespace),
 * no capability, no_new_privs, the rlimits, a read-only root of only
 * mountpoints and generated /etc files, the same read-only binds, sized
 * tmpfs for /tmp and /dev/shm, /workspace read-write, /inputs only when
 * staged, the control socket's place for the driver, and the native
 * seccomp allowlist as linux.seccomp.
 */
#include <sys/mman.h>

#include <errno.h>
#include <jansson.h>
#include <seccomp.h>

#include "sandbox/gvisor.h"
#include "sandbox/seccomp_filter.h"
#include "testutil.h"

/* As seccomp.c sets them, so that the two compilations can be compared. */
#define NATIVE_OPTIMIZE_BTREE	2

static const struct sandbox_limits lim = {
	.memory = 64 << 20, .pids = 16, .cpu_millis = 1000,
	.tmp_size = 8 << 20, .workspace_size = 8 << 20, .shm_size = 4 << 20,
	.nofile = 99, .file_size = 1 << 20, .address_space = 1ULL << 30,
	.cpu_seconds = 7,
};
static const char *const argv[] = { "/usr/bin/python3", "-c", "pass", NULL };

static json_t *
bundle(int control, int inputs, const char *resolver)
{
	struct sandbox_spec	 s;
	struct sandbox		 sb;
	char			 dir[PATH_MAX], p[PATH_MAX], err[256];
	json_t			*cfg;

	tu_tmpdir(dir, sizeof(dir));
	memset(&s, 0, sizeof(s));
	memset(&sb, 0, sizeof(sb));
	snprintf(s.dir, sizeof(s.dir), "%s", dir);
	s.limits = &lim;
	s.hostname = "sandbox";
	s.argv = argv;
	s.envp = sandbox_env;
	s.control_fd = control;
	s.has_inputs = inputs;
	sb.lease.uid = 300001;
	sb.gofer.uid = 300002;
	tu_path(p, sizeof(p), dir, "root");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	tu_path(p, sizeof(p), dir, "inputs");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_msg(gvisor_bundle_write(&s, &sb, resolver, err,
	    sizeof(err)) == 0, "%s", err);
	tu_path(p, sizeof(p), dir, "config.json");
	ck_assert_ptr_nonnull(cfg = json_load_file(p, 0, NULL));
	return cfg;
}

static json_t *
mount_at(json_t *cfg, const char *dst)
{
	json_t	*m;
	size_t	 i;

	json_array_foreach(json_object_get(cfg, "mounts"), i, m)
		if (strcmp(json_string_value(json_object_get(m, "destination")),
		    dst) == 0)
			return m;
	return NULL;
}

static int
has_option(json_t *m, const char *opt)
{
	json_t	*o;
	size_t	 i;

	json_array_foreach(json_object_get(m, "options"), i, o)
		if (strcmp(json_string_value(o), opt) == 0)
			return 1;
	return 0;
}

START_TEST(test_identity_and_privileges)
{
	json_t		*cfg = bundle(-1, 0, NULL), *proc, *caps, *v, *maps;
	const char	*k;
	size_t		 i;

	proc = json_object_get(cfg, "process");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
	    proc, "user"), "uid")), 65534);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
	    proc, "user"), "gid")), 65534);
	ck_assert(json_is_true(json_object_get(proc, "noNewPrivileges")));
	caps = json_object_get(proc, "capabilities");
	ck_assert_int_eq(json_object_size(caps), 5);
	json_object_foreach(caps, k, v)
		ck_assert_msg(json_array_size(v) == 0, "%s not empty", k);
	maps = json_object_get(json_object_get(cfg, "linux"), "uidMappings");
	ck_assert_int_eq(json_array_size(maps), 2);
	json_array_foreach(maps, i, v) {
		json_int_t c = json_integer_value(json_object_get(v,
		    "containerID"));
		json_int_t h = json_integer_value(json_object_get(v, "hostID"));
		ck_assert(json_integer_value(json_object_get(v, "size")) == 1);
		/* The identity of the launcher's user namespace, whose own
		 * maps (gvisor.c) take them to the gofer's and the
		 * sandbox's leases. */
		ck_assert((c == 0 && h == 0) || (c == 65534 && h == 65534));
	}
	ck_assert(json_is_true(json_object_get(json_object_get(cfg, "root"),
	    "readonly")));
	ck_assert_str_eq(json_string_value(json_object_get(proc, "cwd")),
	    "/workspace");
	json_decref(cfg);
}
END_TEST

START_TEST(test_rlimits)
{
	json_t		*cfg = bundle(-1, 0, NULL), *r;
	size_t		 i;
	int		 seen = 0;

	json_array_foreach(json_object_get(json_object_get(cfg, "process"),
	    "rlimits"), i, r) {
		const char	*t = json_string_value(json_object_get(r, "type"));
		json_int_t	 h = json_integer_value(json_object_get(r, "hard"));

		if (strcmp(t, "RLIMIT_NOFILE") == 0 && h == 99)
			seen |= 1;
		if (strcmp(t, "RLIMIT_NPROC") == 0 && h == 16)
			seen |= 2;
		if (strcmp(t, "RLIMIT_CPU") == 0 && h == 7)
			seen |= 4;
		if (strcmp(t, "RLIMIT_AS") == 0 && h == 1LL << 30)
			seen |= 8;
		if (strcmp(t, "RLIMIT_CORE") == 0 && h == 0)
			seen |= 16;
		if (strcmp(t, "RLIMIT_FSIZE") == 0 && h == 1 << 20)
			seen |= 32;
	}
	ck_assert_int_eq(seen, 63);
	json_decref(cfg);
}
END_TEST

START_TEST(test_mounts)
{
	json_t	*cfg = bundle(-1, 0, NULL), *m;

	ck_assert_ptr_nonnull(m = mount_at(cfg, "/usr"));
	ck_assert(has_option(m, "ro") && has_option(m, "nosuid"));
	ck_assert_ptr_nonnull(m = mount_at(cfg, "/workspace"));
	ck_assert(has_option(m, "rw") && has_option(m, "noexec"));
	ck_assert_ptr_nonnull(m = mount_at(cfg, "/tmp"));
	ck_assert(has_option(m, "size=8388608") && has_option(m, "mode=1777"));
	ck_assert_ptr_nonnull(m = mount_at(cfg, "/dev/shm"));
	ck_assert(has_option(m, "size=4194304"));
	ck_assert_ptr_nonnull(m = mount_at(cfg, "/sys"));
	ck_assert_str_eq(json_string_value(json_object_get(m, "type")), "tmpfs");
	ck_assert_ptr_null(mount_at(cfg, "/inputs"));
	ck_assert_ptr_null(mount_at(cfg, "/etc"));	/* generated, not bound */
	json_decref(cfg);
	cfg = bundle(-1, 1, NULL);
	ck_assert_ptr_nonnull(m = mount_at(cfg, "/inputs"));
	ck_assert(has_option(m, "ro"));
	json_decref(cfg);
}
END_TEST

START_TEST(test_control_socket_and_env)
{
	json_t	*cfg = bundle(5, 0, NULL), *env, *v;
	size_t	 i;
	int	 found = 0;

	env = json_object_get(json_object_get(cfg, "process"), "env");
	json_array_foreach(env, i, v) {
		ck_assert_ptr_null(strstr(json_string_value(v), "SENTINEL"));
		if (strcmp(json_string_value(v), "STOCKADE_CONTROL_FD=0") == 0)
			found = 1;
	}
	ck_assert_int_eq(found, 1);
	json_decref(cfg);
}
END_TEST

/*
 * One OCI syscall entry compiled with libseccomp, as runc would read it:
 * every name with the same action and arguments.  gVisor ORs two
 * comparisons of one argument (runc's legacy reading), so an entry never
 * carries two.
 */
static void
compile_entry(scmp_filter_ctx ctx, json_t *e)
{
	struct scmp_arg_cmp	 cmp[6];
	const char		*act = json_string_value(json_object_get(e,
				    "action"));
	json_t			*a, *n;
	uint32_t		 action, seen = 0;
	size_t			 i, ncmp = 0;
	unsigned		 idx;
	int			 sys;

	/* SCMP_ACT_TRACE with no tracer (ptrace is refused) is ENOSYS. */
	if (strcmp(act, "SCMP_ACT_ALLOW") == 0)
		action = SCMP_ACT_ALLOW;
	else if (strcmp(act, "SCMP_ACT_TRACE") == 0)
		action = SCMP_ACT_ERRNO(ENOSYS);
	else
		ck_abort_msg("unexpected action %s", act);
	json_array_foreach(json_object_get(e, "args"), i, a) {
		ck_assert_str_eq(json_string_value(json_object_get(a, "op")),
		    "SCMP_CMP_MASKED_EQ");
		idx = (unsigned)json_integer_value(json_object_get(a, "index"));
		ck_assert_msg(idx < 6 && !(seen & 1U << idx),
		    "argument %u compared twice in one entry", idx);
		seen |= 1U << idx;
		cmp[ncmp++] = SCMP_CMP(idx, SCMP_CMP_MASKED_EQ,
		    (uint64_t)json_integer_value(json_object_get(a, "value")),
		    (uint64_t)json_integer_value(json_object_get(a,
		    "valueTwo")));
	}
	json_array_foreach(json_object_get(e, "names"), i, n) {
		sys = seccomp_syscall_resolve_name(json_string_value(n));
		if (sys == __NR_SCMP_ERROR)
			continue;	/* as seccomp.c skips it */
		ck_assert_int_eq(seccomp_rule_add_array(ctx, action, sys,
		    (unsigned)ncmp, cmp), 0);
	}
}

/*
 * The bundle's linux.seccomp is the native allowlist itself: compiled
 * with libseccomp it is, instruction for instruction, the filter the
 * native sandbox loads.  Without it, or without --oci-seccomp (the escape
 * suite), the code reaches every syscall the sentry implements.
 */
START_TEST(test_seccomp_is_the_native_allowlist)
{
	json_t			*cfg = bundle(-1, 0, NULL), *sc, *e;
	struct seccomp_prog	 native;
	scmp_filter_ctx		 ctx;
	char			*bpf;
	off_t			 len;
	size_t			 i;
	int			 fd;

	sc = json_object_get(json_object_get(cfg, "linux"), "seccomp");
	ck_assert_msg(sc != NULL, "no linux.seccomp in config.json");
	ck_assert_str_eq(json_string_value(json_object_get(sc,
	    "defaultAction")), "SCMP_ACT_ERRNO");
	ck_assert_int_eq(json_integer_value(json_object_get(sc,
	    "defaultErrnoRet")), EPERM);
	ck_assert_ptr_nonnull(ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM)));
	ck_assert_int_eq(seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS), 0);
	ck_assert_int_eq(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE,
	    NATIVE_OPTIMIZE_BTREE), 0);
	json_array_foreach(json_object_get(sc, "syscalls"), i, e)
		compile_entry(ctx, e);
	ck_assert_int_ge(fd = memfd_create("bpf", MFD_CLOEXEC), 0);
	ck_assert_int_eq(seccomp_export_bpf(ctx, fd), 0);
	seccomp_release(ctx);
	ck_assert_int_gt(len = lseek(fd, 0, SEEK_END), 0);
	bpf = xmalloc((size_t)len);
	ck_assert_int_eq(pread(fd, bpf, (size_t)len, 0), len);
	close(fd);
	sandbox_seccomp_builtin(&native);
	ck_assert_uint_eq((size_t)len, native.len * sizeof(*native.filter));
	ck_assert_int_eq(memcmp(bpf, native.filter, (size_t)len), 0);
	sandbox_seccomp_free(&native);
	free(bpf);
	json_decref(cfg);
}
END_TEST

static Suite *
gvisor_oci_suite(void)
{
	Suite	*s = suite_create("gvisor_oci");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_identity_and_privileges);
	tcase_add_test(tc, test_rlimits);
	tcase_add_test(tc, test_mounts);
	tcase_add_test(tc, test_control_socket_and_env);
	tcase_add_test(tc, test_seccomp_is_the_native_allowlist);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(gvisor_oci_suite)
