/*
 * The sandbox's filesystem: a fresh tmpfs root holding read-only binds of
 * an allowlist (/usr and the merged-usr links, a few /etc files), generated
 * /etc files, the trust store of a networked sandbox, a fresh /proc, a minimal /dev, size-capped /tmp and
 * /dev/shm, the session's /workspace and read-only /inputs; then
 * pivot_root into it and the old root detached.  Child side, in its own
 * mount namespace, holding capabilities only there.
 */
#ifndef STOCKADE_SANDBOX_MOUNTS_H
#define STOCKADE_SANDBOX_MOUNTS_H

#include <stddef.h>
#include <stdint.h>

struct mount_spec {
	const char	*dir;		/* host: <dir>/root, /workspace, /inputs */
	const char	*hostname;
	uint64_t	 tmp_size;
	uint64_t	 shm_size;
	int		 has_inputs;
	const char	*driver_dir;	/* NULL, or bound read-only */
	const char	*resolver;	/* NULL, or /etc/resolv.conf's nameserver */
	int		 trust;		/* dir/ca.pem -> TRUST_CA_FILE (ro) */
	int		 trust_system;	/* TRUST_SYSTEM_DIR bound (ro) */
	int		 packages;	/* dir/disk/packages -> SANDBOX_PACKAGES_DIR */
};

int	mounts_setup(const struct mount_spec *, char *err, size_t errlen);

#endif
