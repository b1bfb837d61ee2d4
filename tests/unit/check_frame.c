/*
 * IPC frames: encoding, the size cap checked before allocation, strict
 * payload parsing, descriptor passing and peer credentials.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <poll.h>

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

/* A frame far larger than the socket buffer, to a non-blocking peer that
 * reads slowly: it arrives whole, descriptors with it, and a second frame
 * cannot start while the first is on its way. */
START_TEST(test_frame_out_sends_whole_frames_to_nonblocking_peer)
{
	struct frame_out	 fo;
	json_t			*msg, *got, *small;
	char			*big, err[128];
	int			 sv[2], p[2], fds[FRAME_FDS_MAX], sndbuf = 4096;
	int			 r, rounds = 0, st;
	pid_t			 pid;
	size_t			 nfds, n = 999000;
	char			 c;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
	ck_assert_int_eq(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf,
	    sizeof(sndbuf)), 0);
	ck_assert_int_eq(pipe(p), 0);
	big = malloc(n + 1);
	memset(big, 'x', n);
	big[n] = '\0';
	msg = json_pack("{s:s, s:s}", "op", "exec", "code", big);
	small = json_pack("{s:s}", "op", "other");
	frame_out_init(&fo);
	ck_assert_int_eq(frame_out_start(&fo, msg, FRAME_MAX, &p[1], 1), 0);
	/* Our copy goes; the frame keeps its own until the first byte. */
	close(p[1]);
	ck_assert_int_eq(frame_out_flush(&fo, sv[0]), 0);
	ck_assert(frame_out_pending(&fo));
	ck_assert_int_eq(frame_out_start(&fo, small, FRAME_MAX, NULL, 0), -1);
	/* The reader is blocking: frame_recv takes its time, we flush. */
	if ((pid = fork()) == 0) {
		close(sv[0]);
		ck_assert_int_eq(fcntl(sv[1], F_SETFL, 0), 0);
		r = frame_recv(sv[1], FRAME_MAX, &got, fds, &nfds, err,
		    sizeof(err));
		if (r != 1) {
			fprintf(stderr, "frame_recv: %s\n", err);
			_exit(1);
		}
		if (nfds != 1 || json_string_length(json_object_get(got,
		    "code")) != n)
			_exit(3);
		/* The write end came with the frame: it still works. */
		_exit(write(fds[0], "k", 1) == 1 ? 0 : 2);
	}
	close(sv[1]);
	while ((r = frame_out_flush(&fo, sv[0])) == 0) {
		struct pollfd pfd = { sv[0], POLLOUT, 0 };

		ck_assert_int_eq(poll(&pfd, 1, 5000), 1);
		rounds++;
	}
	ck_assert_int_eq(r, 1);
	ck_assert_int_gt(rounds, 0);
	ck_assert(!frame_out_pending(&fo));
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "reader: %#x", st);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	ck_assert_int_eq(c, 'k');
	ck_assert_int_eq(frame_out_start(&fo, small, FRAME_MAX, NULL, 0), 0);
	frame_out_free(&fo);
	json_decref(msg);
	json_decref(small);
	free(big);
}
END_TEST

/* The old helper on a non-blocking socket gave up after part of a frame:
 * frame_out never leaves a part behind unless the connection failed. */
START_TEST(test_frame_out_error_on_closed_peer)
{
	struct frame_out	 fo;
	json_t			*msg = json_pack("{s:s}", "op", "x");
	int			 sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
	close(sv[1]);
	frame_out_init(&fo);
	ck_assert_int_eq(frame_out_start(&fo, msg, FRAME_MAX, NULL, 0), 0);
	ck_assert_int_eq(frame_out_flush(&fo, sv[0]), -1);
	frame_out_free(&fo);
	ck_assert(!frame_out_pending(&fo));
	json_decref(msg);
	close(sv[0]);
}
END_TEST

/* give: the frame sends the descriptor itself and closes it once sent;
 * a frame that cannot be made takes nothing. */
START_TEST(test_frame_out_give_sends_and_closes_the_descriptor)
{
	struct frame_out	 fo;
	json_t			*msg = json_pack("{s:s}", "op", "exec"), *got;
	int			 sv[2], p[2], fds[FRAME_FDS_MAX];
	size_t			 nfds;
	char			 err[128], c;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
	ck_assert_int_eq(pipe(p), 0);
	frame_out_init(&fo);
	ck_assert_int_eq(frame_out_give(&fo, msg, 4, &p[1], 1), -1);
	ck_assert_int_ne(fcntl(p[1], F_GETFD), -1);
	ck_assert_int_eq(frame_out_give(&fo, msg, FRAME_MAX, &p[1], 1), 0);
	ck_assert_int_eq(frame_out_flush(&fo, sv[0]), 1);
	ck_assert_int_eq(fcntl(p[1], F_GETFD), -1);
	ck_assert_int_eq(errno, EBADF);
	ck_assert_int_eq(frame_recv(sv[1], FRAME_MAX, &got, fds, &nfds, err,
	    sizeof(err)), 1);
	ck_assert_uint_eq(nfds, 1);
	ck_assert_int_eq(write(fds[0], "k", 1), 1);
	close(fds[0]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	ck_assert_int_eq(read(p[0], &c, 1), 0);	/* no copy left anywhere */
	frame_out_free(&fo);
	json_decref(got);
	json_decref(msg);
	close(p[0]);
	close(sv[0]);
	close(sv[1]);
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
	tcase_add_test(tc, test_frame_out_sends_whole_frames_to_nonblocking_peer);
	tcase_add_test(tc, test_frame_out_error_on_closed_peer);
	tcase_add_test(tc, test_frame_out_give_sends_and_closes_the_descriptor);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(frame_suite)
