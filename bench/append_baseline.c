/*
 * The disk's limit for the audit benchmark: appends the lines of an
 * existing log to a new file in batches of N lines, one fdatasync per
 * batch, with no JSON, hashing or sockets.  Prints lines per second.
 * With "zeroed", the file is zero-filled (and synced) first and the lines
 * overwrite the zeros: what the daemon's writer did with flush.zero_ahead.
 * With "keepsize", its blocks are allocated first past the end
 * (fallocate FALLOC_FL_KEEP_SIZE, synced), so the size still grows with
 * each append but no block is allocated on the way.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int
main(int argc, char *argv[])
{
	struct timespec	 t0, t1;
	char		*data, *p, *end, *nl;
	size_t		 len;
	uint64_t	 batch, lines = 0, inbatch;
	double		 secs;
	int		 fd, zeroed, keepsize;

	if ((argc != 4 && (argc != 5 || (strcmp(argv[4], "zeroed") != 0 &&
	    strcmp(argv[4], "keepsize") != 0))) ||
	    parse_u64(argv[3], 1, 1000000, &batch) == -1) {
		fprintf(stderr, "usage: append_baseline INPUT OUTPUT LINES-PER-"
		    "FDATASYNC [zeroed | keepsize]\n");
		return 2;
	}
	zeroed = argc == 5 && strcmp(argv[4], "zeroed") == 0;
	keepsize = argc == 5 && !zeroed;
	if (read_file(argv[1], 1ULL << 34, &data, &len) == -1) {
		perror(argv[1]);
		return 2;
	}
	if ((fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | (zeroed ? 0 :
	    O_APPEND), 0640)) == -1) {
		perror(argv[2]);
		return 2;
	}
	if (zeroed) {
		char	*z = calloc(1, len + 1);

		if (z == NULL || write_all(fd, z, len) == -1 || fsync(fd) == -1) {
			perror(argv[2]);
			return 2;
		}
		free(z);
	}
	if (keepsize && (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)len) ==
	    -1 || fsync(fd) == -1)) {
		fprintf(stderr, "%s: fallocate: %s\n", argv[2], strerror(errno));
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (p = data, end = data + len; p < end; p = nl) {
		/* One write per batch, as the daemon's I/O thread does. */
		for (nl = p, inbatch = 0; nl < end && inbatch < batch; inbatch++) {
			char *q = memchr(nl, '\n', (size_t)(end - nl));
			nl = q ? q + 1 : end;
		}
		if ((zeroed ? pwrite(fd, p, (size_t)(nl - p), p - data) !=
		    nl - p : write_all(fd, p, (size_t)(nl - p)) == -1) ||
		    fdatasync(fd) == -1) {
			perror(argv[2]);
			return 1;
		}
		lines += inbatch;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("lines %llu batch %llu seconds %.3f lines_per_sec %.0f\n",
	    (unsigned long long)lines, (unsigned long long)batch, secs,
	    (double)lines / secs);
	close(fd);
	free(data);
	return 0;
}
