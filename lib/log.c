/*
 * Logging for daemons and tools.  Trusts nothing but its own arguments;
 * messages are formatted into a bounded buffer, never onto the heap.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "log.h"

#define LOG_LINE_MAX	1024

static int	 log_foreground = 1;
static int	 log_verbose;
static const char *log_ident = "stockade";

void
log_init(const char *ident, int foreground, int verbose)
{
	log_ident = ident;
	log_foreground = foreground;
	log_verbose = verbose;
	if (!foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	tzset();
}

void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

int
log_getverbose(void)
{
	return log_verbose;
}

static void
vlog(int pri, int with_errno, const char *fmt, va_list ap)
{
	char	 msg[LOG_LINE_MAX];
	int	 saved = errno;
	size_t	 len;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (with_errno) {
		len = strlen(msg);
		snprintf(msg + len, sizeof(msg) - len, ": %s", strerror(saved));
	}
	if (log_foreground)
		fprintf(stderr, "%s: %s\n", log_ident, msg);
	else
		syslog(pri, "%s", msg);
	errno = saved;
}

#define LOG_BODY(pri, err) do {			\
	va_list ap;				\
	va_start(ap, fmt);			\
	vlog(pri, err, fmt, ap);		\
	va_end(ap);				\
} while (0)

void
log_warn(const char *fmt, ...)
{
	LOG_BODY(LOG_WARNING, 1);
}

void
log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_WARNING, 0);
}

void
log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_INFO, 0);
}

void
log_debug(const char *fmt, ...)
{
	if (log_verbose > 1)
		LOG_BODY(LOG_DEBUG, 0);
}

void
fatal(const char *fmt, ...)
{
	LOG_BODY(LOG_CRIT, 1);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_CRIT, 0);
	exit(1);
}
