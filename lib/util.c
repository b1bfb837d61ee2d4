/*
 * Helpers shared by every program.  Nothing here trusts its inputs beyond
 * the bounds passed in; out of memory is fatal (there is no sane recovery
 * in a security daemon that cannot allocate).
 */
#include <dirent.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

void *
xmalloc(size_t n)
{
	void	*p;

	if ((p = malloc(n == 0 ? 1 : n)) == NULL)
		fatal("malloc");
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void	*p;

	if ((p = calloc(nmemb == 0 ? 1 : nmemb, size == 0 ? 1 : size)) == NULL)
		fatal("calloc");
	return p;
}

void *
xrealloc(void *old, size_t n)
{
	void	*p;

	if ((p = realloc(old, n == 0 ? 1 : n)) == NULL)
		fatal("realloc");
	return p;
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("strdup");
	return p;
}

int
parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t	 v = 0;
	const char	*p;

	if (s == NULL || *s == '\0')
		return -1;
	for (p = s; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

void
ts_format(const struct timespec *ts, char out[TS_LEN + 1])
{
	struct tm	 tm;
	unsigned	 ms = (unsigned)(ts->tv_nsec / 1000000) % 1000;

	gmtime_r(&ts->tv_sec, &tm);
	/* Years past 9999 would not fit TS_LEN; clamp rather than overflow. */
	if (tm.tm_year > 9999 - 1900)
		tm.tm_year = 9999 - 1900;
	if (strftime(out, TS_LEN + 1, "%Y-%m-%dT%H:%M:%S", &tm) != 19)
		fatalx("strftime");
	out[19] = '.';
	out[20] = (char)('0' + ms / 100);
	out[21] = (char)('0' + ms / 10 % 10);
	out[22] = (char)('0' + ms % 10);
	out[23] = 'Z';
	out[24] = '\0';
}

void
ts_now(char out[TS_LEN + 1])
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts_format(&ts, out);
}

uint64_t
mono_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t
mono_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

int
cpus_usable(void)
{
	cpu_set_t	 set;
	int		 n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 &&
	    (n = CPU_COUNT(&set)) > 0)
		return n;
	n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? n : 1;
}

int
write_all(int fd, const void *p, size_t len)
{
	const uint8_t	*b = p;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(fd, b, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t
read_all(int fd, void *p, size_t len)
{
	uint8_t	*b = p;
	size_t	 got = 0;
	ssize_t	 n;

	while (got < len) {
		if ((n = read(fd, b + got, len - got)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int
read_file(const char *path, size_t max, char **out, size_t *outlen)
{
	struct stat	 st;
	char		*p = NULL;
	size_t		 cap, len = 0;
	ssize_t		 n;
	int		 fd, saved;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		return -1;
	if (fstat(fd, &st) == -1)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		goto fail;
	}
	/*
	 * st_size is a hint only: /proc and cgroup files say 0 or 4096.
	 * Read to EOF, refusing more than max.
	 */
	cap = (uint64_t)st.st_size < max ? (size_t)st.st_size + 1 : max + 1;
	if (cap < 4096 && max >= 4096)
		cap = 4096;
	p = xmalloc(cap + 1);
	for (;;) {
		if (len == cap) {
			if (cap > max) {
				errno = EFBIG;
				goto fail;
			}
			cap = cap > max / 2 ? max + 1 : cap * 2;
			p = xrealloc(p, cap + 1);
		}
		if ((n = read(fd, p + len, cap - len)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max) {
		errno = EFBIG;
		goto fail;
	}
	p[len] = '\0';
	close(fd);
	*out = p;
	*outlen = len;
	return 0;
fail:
	saved = errno;
	free(p);
	close(fd);
	errno = saved;
	return -1;
}

int
fsync_dir(const char *dir)
{
	int	 fd, rv;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	rv = fsync(fd);
	close(fd);
	return rv;
}

int
mkdir_p(const char *path, mode_t mode)
{
	char	 tmp[PATH_MAX];
	char	*p;

	if (xsnprintf(tmp, sizeof(tmp), "%s", path) == -1)
		return -1;
	for (p = tmp + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, mode) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

int
xsnprintf(char *out, size_t len, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return n;
}

void
str_ascii(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			*s = '?';
}

#define RMTREE_DEPTH_MAX	64

static int
rmtree_at(int dirfd, const char *name, dev_t dev, int depth)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	int		 fd, rv = 0;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0);
	if (st.st_dev != dev || depth > RMTREE_DEPTH_MAX) {
		errno = EXDEV;
		return -1;
	}
	if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (rmtree_at(fd, de->d_name, dev, depth + 1) == -1)
			rv = -1;
	}
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) == -1)
		rv = -1;
	return rv;
}

int
rmtree(const char *path)
{
	struct stat	 st;

	if (lstat(path, &st) == -1)
		return -1;
	return rmtree_at(AT_FDCWD, path, st.st_dev, 0);
}

int
openat_beneath(int dirfd, const char *path, int flags)
{
	struct open_how	 how;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW);
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

const char *
ip_proto_name(uint8_t p, char *buf, size_t len)
{
	switch (p) {
	case IPPROTO_TCP:	return "tcp";
	case IPPROTO_UDP:	return "udp";
	case IPPROTO_ICMP:	return "icmp";
	case IPPROTO_ICMPV6:	return "icmpv6";
	case IPPROTO_SCTP:	return "sctp";
	default:
		(void)snprintf(buf, len, "%u", p);
		return buf;
	}
}
