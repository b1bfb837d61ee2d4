/*
 * Logging: stderr when running in the foreground (-d), syslog otherwise.
 * The vocabulary is fixed: *_warn adds strerror(errno), *_warnx does not,
 * fatal/fatalx log and exit(1).  Daemon code never prints to stdout.
 */
#ifndef STOCKADE_LOG_H
#define STOCKADE_LOG_H

#include <stdarg.h>

#define LOG_FMT(a, b)	__attribute__((format(printf, a, b)))

void	log_init(const char *ident, int foreground, int verbose);
void	log_setverbose(int verbose);
int	log_getverbose(void);

void	log_warn(const char *, ...) LOG_FMT(1, 2);
void	log_warnx(const char *, ...) LOG_FMT(1, 2);
void	log_info(const char *, ...) LOG_FMT(1, 2);
void	log_debug(const char *, ...) LOG_FMT(1, 2);
void	fatal(const char *, ...) LOG_FMT(1, 2) __attribute__((noreturn));
void	fatalx(const char *, ...) LOG_FMT(1, 2) __attribute__((noreturn));

#endif
