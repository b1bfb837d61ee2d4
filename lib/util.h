/*
 * Small helpers shared by every program: allocation that cannot return
 * NULL (out of memory is fatal), strict number parsing, timestamps, and
 * whole-buffer I/O that retries on EINTR and short transfers.
 */
#ifndef STOCKADE_UTIL_H
#define STOCKADE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

/* "2026-11-30T02:44:26.123Z": UTC, milliseconds, always this length. */
#define TS_LEN		24

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);

/* Strict unsigned decimal: no sign, no spaces, no trailing bytes. */
int	 parse_u64(const char *, uint64_t min, uint64_t max, uint64_t *out);

void	 ts_format(const struct timespec *, char out[TS_LEN + 1]);
void	 ts_now(char out[TS_LEN + 1]);
uint64_t mono_ms(void);
uint64_t mono_ns(void);
/* CPUs this process may run on (its affinity mask), at least 1. */
int	 cpus_usable(void);

int	 write_all(int fd, const void *, size_t);
/* Reads until len bytes or EOF; returns bytes read or -1. */
ssize_t	 read_all(int fd, void *, size_t);
/* Reads a whole regular file of at most max bytes (NUL-terminated copy). */
int	 read_file(const char *path, size_t max, char **out, size_t *outlen);
int	 fsync_dir(const char *dir);
int	 mkdir_p(const char *path, mode_t mode);
/*
 * openat2 beneath dirfd: no symlinks, no magic links, no crossing into
 * another mount, no escape through "..".  The descriptor or -1.
 */
int	 openat_beneath(int dirfd, const char *path, int flags);
/*
 * Removes path and everything beneath it, never following a symlink and
 * never crossing into another filesystem.
 */
int	 rmtree(const char *path);
/* Replaces every byte outside printable ASCII with '?', in place. */
void	 str_ascii(char *);
/* An IP protocol number's name (tcp, udp, ...), else its number in buf. */
const char *ip_proto_name(uint8_t, char *buf, size_t len);
/* snprintf that fails (-1, errno ENAMETOOLONG) instead of truncating. */
int	 xsnprintf(char *, size_t, const char *, ...)
	    __attribute__((format(printf, 3, 4)));

#endif
