/*
 * IPC frames: encoding, the size cap checked before allocation, strict
 * payload parsing, descriptor passing and peer credentials.
 */
#include <sys/socket.h>

#include "testutil.h"
#include "frame.h"

START_TEST(test_encode_has_big_endian_length)
{
	struct buf	 b;
	json_t		*j = json_pack("{s:i}", "a", 1);

	buf_init(&b, 1024);
	ck_assert_int_eq(frame_encode(j, 1024, &b), 0);
	ck_assert_uint_eq(b.len, 4 + 7);
	ck_assert_int_eq(memcmp(b.data, "\0\0\0\7{\"a\":1}", 11), 0);
	json_decref(j);
	buf_free(&b);
}
END_TEST

START_TEST(test_encode_refuses_over_cap)
{
	struct buf	 b;
	json_t		*j = json_pack("{s:s}", "a", "0123456789");

	buf_init(&b, 1024);
	ck_assert_int_eq(frame_encode(j, 10, &b), -1);
	ck_assert_uint_eq(b.len, 0);
	json_decref(j);
	buf_free(&b);
}
END_TEST

START_TEST(test_header_limits)
{
	size_t		 len;
	const uint8_t	 zero[4] = { 0, 0, 0, 0 };
	const uint8_t	 big[4] = { 0xff, 0xff, 0xff, 0xff };
	const uint8_t	 ok[4] = { 0, 0, 1, 0 };

	ck_assert_int_eq(frame_header(zero, 1024, &len), -1);
	ck_assert_int_eq(frame_header(big, SIZE_MAX, &len), -1);
	ck_assert_int_eq(frame_header(ok, 255, &len), -1);
	ck_assert_int_eq(frame_header(ok, 256, &len), 0);
	ck_assert_uint_eq(len, 256);
}
END_TEST

static const char *const bad_payloads[] = {
	"", "[1,2]", "\"str\"", "42", "{\"a\":1", "{\"a\":1,\"a\":2}",
	"{\"a\":\"\\u0000\"}", "{\"a\":\"\xff\xfe\"}", "{\"a\":1} {}",
};

START_TEST(test_parse_rejects_non_objects_and_bad_json)
{
	char	 err[256] = "";

	ck_assert_ptr_null(frame_parse(bad_payloads[_i],
	    strlen(bad_payloads[_i]), err, sizeof(err)));
	ck_assert_str_ne(err, "");
}
END_TEST

START_TEST(test_send_recv_with_descriptor_and_peercred)
{
	int		 sv[2], fds[FRAME_FDS_MAX], pfd[2];
	size_t		 nfds = 0;
	json_t		*in = json_pack("{s:s}", "type", "attach"), *out;
	struct peer	 p;
	char		 err[256], c = 0;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(pipe(pfd), 0);
	ck_assert_int_eq(frame_send(sv[0], in, &pfd[1], 1), 0);
	ck_assert_int_eq(frame_recv(sv[1], 1024, &out, fds, &nfds, err,
	    sizeof(err)), 1);
	ck_assert_uint_eq(nfds, 1);
	ck_assert_int_eq(write(fds[0], "x", 1), 1);
	ck_assert_int_eq(read(pfd[0], &c, 1), 1);
	ck_assert_int_eq(c, 'x');
	ck_assert(json_equal(in, out));
	json_decref(out);
	close(fds[0]);
	ck_assert_int_eq(peer_cred(sv[1], &p), 0);
	ck_assert_int_eq(p.uid, getuid());
	ck_assert_int_eq(p.pid, getpid());
	close(sv[0]);
	ck_assert_int_eq(frame_recv(sv[1], 1024, &out, NULL, NULL, err,
	    sizeof(err)), 0);
	json_decref(in);
}
END_TEST

START_TEST(test_recv_refuses_oversized_and_unexpected_fds)
{
	int		 sv[2], pfd[2];
	json_t		*in = json_pack("{s:s}", "k", "0123456789"), *out;
	char		 err[256];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(frame_send(sv[0], in, NULL, 0), 0);
	ck_assert_int_eq(frame_recv(sv[1], 8, &out, NULL, NULL, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "length"));
	/* That stream is out of step now; use a fresh one. */
	close(sv[0]);
	close(sv[1]);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(pipe(pfd), 0);
	ck_assert_int_eq(frame_send(sv[0], in, &pfd[0], 1), 0);
	/* A receiver that takes no descriptors closes what it was sent. */
	ck_assert_int_eq(frame_recv(sv[1], 1024, &out, NULL, NULL, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "descriptors"));
	json_decref(in);
}
END_TEST

START_TEST(test_listen_refuses_to_replace_a_regular_file)
{
	char	 dir[PATH_MAX], path[PATH_MAX];
	int	 fd;

	tu_tmpdir(dir, sizeof(dir));
	tu_path(path, sizeof(path), dir, "not-a-socket");
	tu_write(path, "keep", 4);
	ck_assert_int_eq(unix_listen(path, 0600, 1), -1);
	ck_assert_int_eq(access(path, F_OK), 0);
	tu_path(path, sizeof(path), dir, "sock");
	fd = unix_listen(path, 0600, 1);
	ck_assert_int_ne(fd, -1);
	close(fd);
	/* A stale socket left behind is replaced. */
	fd = unix_listen(path, 0600, 1);
	ck_assert_int_ne(fd, -1);
	close(fd);
}
END_TEST

static Suite *
frame_suite(void)
{
	Suite	*s = suite_create("frame");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_encode_has_big_endian_length);
	tcase_add_test(tc, test_encode_refuses_over_cap);
	tcase_add_test(tc, test_header_limits);
	tcase_add_loop_test(tc, test_parse_rejects_non_objects_and_bad_json, 0,
	    (int)nitems(bad_payloads));
	tcase_add_test(tc, test_send_recv_with_descriptor_and_peercred);
	tcase_add_test(tc, test_recv_refuses_oversized_and_unexpected_fds);
	tcase_add_test(tc, test_listen_refuses_to_replace_a_regular_file);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(frame_suite)
