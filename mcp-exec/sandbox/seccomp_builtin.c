/*
 * The seccomp filter as compiled at build time by seccomp_gen (libseccomp,
 * the rules in seccomp.c).  Loading it costs microseconds; compiling it
 * costs milliseconds at every mcp-exec start.
 */
#include <string.h>

#include "seccomp_filter.h"
#include "util.h"
#include "seccomp_bpf.h"	/* generated into $(BUILD)/gen */

void
sandbox_seccomp_builtin(struct seccomp_prog *p)
{
	p->len = (unsigned short)nitems(seccomp_builtin);
	p->filter = xmalloc(sizeof(seccomp_builtin));
	memcpy(p->filter, seccomp_builtin, sizeof(seccomp_builtin));
}
