/*
 * Maps one audit record onto a SIEM's schema: Elastic Common Schema 9.4,
 * OCSF 1.8 or Splunk HEC.  docs/export-mapping.md lists every field and the
 * event -> category/class table.
 */
#ifndef STOCKADE_EXPORT_H
#define STOCKADE_EXPORT_H

#include <stdint.h>
#include <jansson.h>

enum export_format {
	EXPORT_ECS,
	EXPORT_OCSF,
	EXPORT_HEC,
};

/*
 * Dump flags for the mapped objects.  HEC's "time" and ECS's
 * event.risk_score are reals: jansson's default precision prints
 * 1796006666.123 as 1796006666.1229999, 15 digits print it as written.
 */
#define EXPORT_DUMP_FLAGS	(JSON_COMPACT | JSON_REAL_PRECISION(15))

/* "ecs", "ocsf" or "hec"; -1 for anything else (*out unchanged). */
int	 export_format_parse(const char *name, enum export_format *out);

/*
 * Maps record, one parsed line of the audit log (borrowed, not modified),
 * to format.  hostname (borrowed, may be NULL) names the host the log came
 * from.  Returns a new reference the caller owns and json_decref()s, or
 * NULL when the record cannot be mapped: not an object, or without a valid
 * "event", "ts", "seq" or "hash".  Writer-supplied fields of the wrong
 * type are left out of the schema fields but kept in the copy of the
 * original (ECS stockade.*, OCSF unmapped, HEC event).
 */
json_t	*export_record(enum export_format format, const json_t *record,
	    const char *hostname);

/*
 * "YYYY-MM-DDTHH:MM:SS.mmmZ" (exactly 24 bytes, UTC, real calendar date)
 * to milliseconds since the epoch.  Returns 0, or -1 when ts is malformed.
 */
int	 export_ts_ms(const char *ts, int64_t *ms);

#endif
