/*
 * The seccomp filter as compiled at build time by seccomp_gen (libseccomp,
 * the rules in seccomp.c).  Loading it costs microseconds; compiling it
 * costs milliseconds at every mcp-exec start.
 */
#include <string.h>

#include <stdio.h>

#include "hash.h"
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

void
sandbox_seccomp_builtin_wasm(struct seccomp_prog *p)
{
	p->len = (unsigned short)nitems(seccomp_builtin_wasm);
	p->filter = xmalloc(sizeof(seccomp_builtin_wasm));
	memcpy(p->filter, seccomp_builtin_wasm, sizeof(seccomp_builtin_wasm));
}

void
sandbox_seccomp_sha256(const struct seccomp_prog *p, char *out, size_t outlen)
{
	char	 hex[SHA256_HEX + 1];

	sha256_hex(p->filter, (size_t)p->len * sizeof(*p->filter), hex);
	snprintf(out, outlen, "sha256:%s", hex);
}
