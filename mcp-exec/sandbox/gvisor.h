/*
 * The gVisor runtime: the command runs on runsc's user-space kernel (the
 * sentry) instead of the host's, with the native sandbox's policy written
 * as an OCI bundle (gvisor_oci.c).  mcp-exec trusts runsc (Debian's
 * package, found at GVISOR_RUNSC or $STOCKADE_RUNSC) and nothing it hears
 * from inside the sandbox.
 */
#ifndef STOCKADE_SANDBOX_GVISOR_H
#define STOCKADE_SANDBOX_GVISOR_H

#include <stddef.h>

#include "sandbox.h"

#define GVISOR_RUNSC		"/usr/bin/runsc"
/* ptrace works everywhere runsc does; kvm hangs on a nested VM. */
#define GVISOR_PLATFORM		"ptrace"
/* runsc loads the spec's linux.seccomp into the sandbox only with this. */
#define GVISOR_OCI_SECCOMP	"--oci-seccomp"
#define GVISOR_PROBE_MS		20000	/* one trial container, ~0.5 s */
/* The sentry's and gofer's own host threads, beside the code's. */
#define GVISOR_PIDS_EXTRA	256

/* runsc's path: $STOCKADE_RUNSC, else GVISOR_RUNSC. */
const char	*gvisor_runsc(void);
/*
 * Whether runsc can start a container here (done once, then remembered):
 * 0, or -1 with why in err.  Bounded by GVISOR_PROBE_MS.
 */
int	gvisor_probe(char *err, size_t errlen);
/* Writes s->dir/config.json and s->dir/root (gvisor_oci.c). */
int	gvisor_bundle_write(const struct sandbox_spec *, const struct sandbox *,
	    const char *resolver, char *err, size_t errlen);
/* sandbox_start, sandbox_interrupt and sandbox_wait for this runtime. */
int	gvisor_start(const struct sandbox_spec *, struct sandbox *, char *err,
	    size_t errlen);
void	gvisor_interrupt(struct sandbox *);
/* Reaps the `runsc kill` of an interrupt if it has ended; with force,
 * SIGKILLs it first (the sandbox is going). */
void	gvisor_reap_signaller(struct sandbox *, int force);
int	gvisor_wait(struct sandbox *, struct sandbox_exit *);

#endif
