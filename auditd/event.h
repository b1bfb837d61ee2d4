/*
 * The vocabulary of audit events a writer may send, and the check of each
 * against its required fields.  docs/audit-events.md lists the same.
 */
#ifndef STOCKADE_EVENT_H
#define STOCKADE_EVENT_H

#include <stddef.h>
#include <jansson.h>

#define EVENT_STRING_MAX	4096

/*
 * Checks an event object from a writer: a known, writer-sendable type,
 * its required fields with their types, no reserved keys.  Returns 0, or
 * -1 with a message naming the field.
 */
int	event_validate(const json_t *ev, char *err, size_t errlen);
/* 1 for types only stockade-auditd itself writes. */
int	event_is_daemon_only(const char *name);

#endif
