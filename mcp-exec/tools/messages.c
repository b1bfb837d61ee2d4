/*
 * The sentences a result carries when a call did not simply exit: an OOM,
 * a timeout, a cancellation and a crash each get their own, from what
 * sessions/ measured (never from what the driver claims).
 */
#include <stdio.h>
#include <string.h>

#include "messages.h"

/*
 * What ended the call, in a sentence for the model (NULL: it just exited).
 * Each end has its own: a model told "killed" after an OOM retries the
 * same code.
 */
void
end_message(const struct call_result *r, unsigned timeout_ms, char *buf,
    size_t len)
{
	const char	*gone = " The session's variables and files are gone: "
			    "start a new session (omit session_id).";
	unsigned long long mib = (unsigned long long)(r->memory_limit >> 20);

	buf[0] = '\0';
	if (r->end == NULL)
		return;		/* nothing measured: say nothing */
	if (strcmp(r->end, "oom") == 0)
		snprintf(buf, len, "The code ran out of memory: the sandbox's "
		    "memory limit is %llu MiB and the kernel killed %s.%s Use "
		    "less memory (smaller data, chunks, del large objects).",
		    mib, r->session_gone ? "the Python interpreter" :
		    "a process of the code", r->session_gone ? gone : "");
	else if (strcmp(r->end, "timeout") == 0)
		snprintf(buf, len, r->session_gone ? "The code ran past its "
		    "timeout of %u ms and did not stop when interrupted, so "
		    "its sandbox was killed.%s" : "The code ran past its "
		    "timeout of %u ms and was interrupted (KeyboardInterrupt);"
		    " the session is still usable.%s", timeout_ms,
		    r->session_gone ? gone : "");
	else if (strcmp(r->end, "cancelled") == 0)
		snprintf(buf, len, "The call was cancelled%s%s",
		    r->session_gone ? " and the code did not stop when "
		    "interrupted, so its sandbox was killed." : ".",
		    r->session_gone ? gone : "");
	else if (strcmp(r->end, "crash") == 0 && r->crash_status > 128)
		snprintf(buf, len, "The Python interpreter crashed (killed by "
		    "signal %d).%s", r->crash_status - 128, gone);
	else if (strcmp(r->end, "crash") == 0 && r->crash_status >= 0)
		snprintf(buf, len, "The Python interpreter exited with status "
		    "%d in the middle of the call.%s", r->crash_status, gone);
	else if (strcmp(r->end, "crash") == 0)
		snprintf(buf, len, "The Python interpreter crashed.%s", gone);
	else if (r->session_gone)
		snprintf(buf, len, "The sandbox had to be killed (%s).%s",
		    r->why != NULL ? r->why : "unknown", gone);
}
