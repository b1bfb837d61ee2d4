/*
 * A record's RFC 3339 timestamp as milliseconds since the epoch, for the
 * exports' durations and epoch fields.  The text is the writer's: every
 * digit, range and separator is checked before it is used.
 */
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "export.h"
#include "util.h"

/* n decimal digits at s; the caller has checked they are digits. */
static int
digits(const char *s, int n)
{
	int	 v = 0;

	while (n-- > 0)
		v = v * 10 + (*s++ - '0');
	return v;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t	 era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int
month_days(int y, int m)
{
	static const int days[] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
	};

	if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
		return 29;
	return days[m - 1];
}

int
export_ts_ms(const char *ts, int64_t *ms)
{
	/* 'd' is a digit, anything else must appear as is. */
	static const char	 shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	int			 y, mo, d, h, mi, s, milli;
	size_t			 i;

	if (ts == NULL || strnlen(ts, TS_LEN + 1) != TS_LEN)
		return -1;
	for (i = 0; i < TS_LEN; i++) {
		if (shape[i] == 'd') {
			if (ts[i] < '0' || ts[i] > '9')
				return -1;
		} else if (ts[i] != shape[i])
			return -1;
	}
	y = digits(ts, 4);
	mo = digits(ts + 5, 2);
	d = digits(ts + 8, 2);
	h = digits(ts + 11, 2);
	mi = digits(ts + 14, 2);
	s = digits(ts + 17, 2);
	milli = digits(ts + 20, 3);
	/* No leap seconds: ts_format() never writes :60. */
	if (mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) || h > 23 ||
	    mi > 59 || s > 59)
		return -1;
	*ms = (((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60 + s) *
	    1000 + milli;
	return 0;
}
