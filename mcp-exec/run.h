/*
 * One command in one fresh sandbox, start to finish: stage inputs, start,
 * capture output as it comes (bounded), enforce the wall-clock timeout,
 * collect artifacts, tear everything down, describe what happened.
 */
#ifndef STOCKADE_RUN_H
#define STOCKADE_RUN_H

#include <stddef.h>
#include <jansson.h>

#include "sessions/profile.h"

#define RUN_FILES_MAX		16
#define RUN_DRAIN_MS		1000	/* reading after a kill, at most */

struct run_request {
	const struct mcpexec_conf	*conf;
	const struct profile		*profile;
	const struct seccomp_prog	*seccomp;	/* sandbox_seccomp_build */
	const char *const		*argv;		/* argv[0] absolute */
	char				**caller_argv;	/* main's, wiped in the sandbox */
	const char			*files[RUN_FILES_MAX];
	size_t				 nfiles;
	unsigned			 timeout_ms;	/* 0: the profile's */
	const char			*artifacts_dir;	/* NULL: state_dir/artifacts/<id> */
	const char			*id;		/* the sandbox's; NULL: new */
	/*
	 * NULL, or called once the sandbox is built and contained, before
	 * its command runs (the wait overlaps the build): -1 with err, and
	 * the command never runs.
	 */
	int				(*ready)(void *arg, char *err,
					    size_t errlen);
	/* NULL, or given the whole result before the sandbox is torn down. */
	void				(*done)(void *arg, const json_t *result);
	void				*hook_arg;
};

/*
 * Creates the state directory's layout: state_dir and sandboxes/ 0711
 * (sandbox uids must traverse to their own directory, never list others),
 * uids/ and artifacts/ 0700.
 */
int	run_state_init(const struct mcpexec_conf *, char *err, size_t errlen);

/*
 * Returns the result (new reference), or NULL with err when the request
 * was refused or the sandbox could not be built.
 */
json_t	*run_once(const struct run_request *, char *err, size_t errlen);

#endif
