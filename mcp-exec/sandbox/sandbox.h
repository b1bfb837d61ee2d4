/*
 * The launcher: turns a command into a process that cannot hurt anyone.
 * The parent (mcp-exec, root) prepares identity, cgroup and host-side
 * directories, clones a child into new user, pid, mount, net, ipc and uts
 * namespaces, writes its uid/gid maps, places it in its cgroup, and
 * releases it.  The child runs the containment checklist (spawn.c) in a
 * fixed order, stopping at the first failure, then acts as the sandbox's
 * init: it runs the command and reports how it ended.
 *
 * Ownership: struct sandbox owns its descriptors, cgroup and uid lease
 * until sandbox_destroy.
 */
#ifndef STOCKADE_SANDBOX_H
#define STOCKADE_SANDBOX_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "idmap.h"
#include "seccomp_filter.h"
#include "trust.h"

#define SANDBOX_ID_HEX		16	/* 64 random bits */
#define SANDBOX_INNER_ID	65534	/* uid and gid inside every sandbox */
#define SANDBOX_ARGS_MAX	256
#define SANDBOX_ENV_MAX		48
#define SANDBOX_ERR_MAX		512	/* a setup failure, child to parent */
#define SANDBOX_DRIVER_DIR	"/opt/stockade/driver"	/* read-only */
#define SANDBOX_CONTROL_FD	3	/* the command's control socket */
/* An empty stockade-<id> cgroup is swept only this old: its owner may
 * be about to fill it. */
#define SANDBOX_SWEEP_AGE_S	60
#define SANDBOX_RESOLVER_LEN	46	/* INET6_ADDRSTRLEN */
/* The session's package layer (PYTHONUSERBASE), read-write. */
#define SANDBOX_PACKAGES_DIR	"/opt/stockade/packages"

/* The wall around the command (profile `runtime:`). */
enum sandbox_runtime {
	SANDBOX_NATIVE,		/* namespaces, seccomp, Landlock (spawn.c) */
	SANDBOX_GVISOR,		/* runsc with an OCI bundle (gvisor.c) */
	SANDBOX_WASM,		/* native walls, Pyodide on node (wasm.c) */
};

enum net_level {
	NET_NONE,		/* L0: new netns, loopback down */
	NET_LOOPBACK,		/* L1: loopback up */
};

struct sandbox_limits {
	uint64_t	memory;		/* bytes, cgroup */
	uint64_t	swap;		/* bytes beyond memory */
	unsigned	pids;
	unsigned	cpu_millis;	/* 1000: one CPU */
	uint64_t	tmp_size;	/* /tmp tmpfs */
	uint64_t	workspace_size;	/* /workspace tmpfs (made by the parent) */
	uint64_t	shm_size;	/* /dev/shm tmpfs */
	unsigned	nofile;		/* RLIMIT_NOFILE */
	uint64_t	file_size;	/* RLIMIT_FSIZE */
	uint64_t	address_space;	/* RLIMIT_AS; 0: not limited */
	unsigned	cpu_seconds;	/* RLIMIT_CPU */
};

struct sandbox_spec {
	char			 id[SANDBOX_ID_HEX + 1];
	char			 dir[PATH_MAX];	/* host: state_dir/sandboxes/<id> */
	enum sandbox_runtime	 runtime;
	const struct sandbox_limits *limits;
	enum net_level		 net;
	const char		*hostname;
	int			 landlock_required;
	const struct cgroup_conf *cgroup;
	const struct idmap_conf	*idmap;
	const struct seccomp_prog *seccomp;	/* compiled once by the caller */
	const char *const	*argv;		/* argv[0] absolute */
	char			**scrub_argv;	/* the caller's argv, wiped in init */
	const char *const	*envp;
	const char *const	*env_extra;	/* NULL, or added after envp */
	/* NULL, or a CA bundle built in dir and bound at TRUST_CA_FILE. */
	const struct sandbox_trust *trust;
	int			 has_inputs;	/* dir/inputs -> /inputs (ro) */
	/*
	 * A package layer: dir/disk is then the workspace_size tmpfs,
	 * holding workspace/ (bound at dir/workspace) and packages/ (at
	 * SANDBOX_PACKAGES_DIR), so what pip installs counts against the
	 * workspace's cap and goes with the sandbox.
	 */
	int			 packages;
	int			 stdout_fd;	/* write ends given to the command */
	int			 stderr_fd;
	int			 control_fd;	/* -1, or the command's fd 3 */
	const char		*driver_dir;	/* NULL, or bound at SANDBOX_DRIVER_DIR */
	/*
	 * NULL, or called by the parent once the child's maps are in place
	 * (and its cgroup, but on v1, where the child joins it itself, in
	 * parallel) and before it is released: nothing in the sandbox has
	 * run yet.  It may write the sandbox's nameserver (an address)
	 * into resolver.  Failing (-1 with err) stops the start.
	 */
	int			(*before_go)(void *arg, pid_t init,
				    char *resolver, size_t resolverlen,
				    char *err, size_t errlen);
	void			*before_go_arg;
	/*
	 * Native runtime: init, contained (seccomp loaded), waits for
	 * sandbox_release before it runs the command, so the caller can
	 * wait for something (an audit ack) while the sandbox is built.
	 */
	int			 hold;
};

struct sandbox {
	pid_t			 init;		/* in the parent's pid namespace */
	int			 sync;		/* status channel from init */
	int			 verdict_pending;	/* launched, init's word
						   on the checklist unread */
	struct cgroup		*cg;
	struct uid_lease	 lease;
	char			 dir[PATH_MAX];
	int			 dir_lock;	/* flock()ed while we live */
	int			 workspace_mounted;
	enum sandbox_runtime	 runtime;
	/* gVisor: the gofer's host uid (root inside the sandbox's user
	 * namespace), a second lease; fd -1 on the native runtime. */
	struct uid_lease	 gofer;
	int			 root_mounted;	/* gVisor: dir/root's tmpfs */
	int			 disk_mounted;	/* dir/disk (packages) */
	pid_t			 signaller;	/* gVisor: the `runsc kill`
						   in flight, or -1 */
};

/* What happened to the command. */
struct sandbox_exit {
	int	exit_code;	/* 128 + signal when a signal ended it */
	int	signaled;
	int	oom_killed;
	int	killed;		/* we killed it (timeout, cancel) */
};

/* The fixed environment of every sandbox: nothing of the caller's. */
extern const char *const sandbox_env[];

/* A fresh random id (hex). */
void	sandbox_new_id(char out[SANDBOX_ID_HEX + 1]);
/*
 * Creates dir, the workspace tmpfs and (when has_inputs) the inputs
 * directory on the host, for the caller to stage files into before start.
 */
int	sandbox_prepare(const struct sandbox_spec *, struct sandbox *,
	    char *err, size_t errlen);
/* Starts the command; returns once the checklist succeeded or failed.
 * With spec->hold, the command starts at sandbox_release instead. */
int	sandbox_start(const struct sandbox_spec *, struct sandbox *,
	    char *err, size_t errlen);
/*
 * sandbox_start without waiting for init's verdict on the checklist, for
 * a caller whose command speaks first (a session's driver, on its own
 * socket): init sends the verdict before it starts the command, so once
 * the command has said anything, sandbox_started has it without waiting.
 * Until then nothing of the command has run.
 */
int	sandbox_launch(const struct sandbox_spec *, struct sandbox *,
	    char *err, size_t errlen);
/* The verdict, never waited for: 0 the checklist passed (or was read
 * before), -1 with err when it failed or has not come. */
int	sandbox_started(struct sandbox *, char *err, size_t errlen);
/* A held sandbox runs its command.  -1 with err: init is gone. */
int	sandbox_release(struct sandbox *, char *err, size_t errlen);
/* The command's pid in our pid namespace (for SIGINT); -1 when gone. */
pid_t	sandbox_command_pid(struct sandbox *);
/* Asks the command to stop (SIGINT): KeyboardInterrupt in Python. */
void	sandbox_interrupt(struct sandbox *);
/* Reaps what an interrupt left running (gVisor's `runsc kill`) if it has
 * ended; sandbox_destroy reaps it in any case. */
void	sandbox_reap_interrupt(struct sandbox *);
/* "native", "gvisor" or "wasm": the result's and the audit's sandbox.runtime. */
const char *sandbox_runtime_name(enum sandbox_runtime);
/* 1 once init has ended or reported (within timeout_ms), else 0. */
int	sandbox_await_exit(struct sandbox *, int timeout_ms);
/* SIGKILL to everything in the sandbox (pid namespace and cgroup). */
void	sandbox_kill(struct sandbox *);
/* Waits for the sandbox to end (blocking); fills ex. */
int	sandbox_wait(struct sandbox *, struct sandbox_exit *);
/* Unmounts and removes the host directories, cgroup and uid lease. */
void	sandbox_destroy(struct sandbox *);
/*
 * Removes what the sandboxes of an mcp-exec that died left in state_dir:
 * directories whose lock no live mcp-exec holds, their workspace mounts
 * and their cgroups (what is still busy stays for the next sweep); then
 * empty stockade-<id> cgroups under the base at least SANDBOX_SWEEP_AGE_S
 * old (cgroup_sweep).  Safe beside live mcp-execs on the same state_dir.
 * removed (may be NULL) hears each sandbox id.  Returns how many were
 * removed.
 */
int	sandbox_sweep(const char *state_dir, const struct cgroup_conf *,
	    void (*removed)(void *arg, const char *id), void *arg);

#endif
