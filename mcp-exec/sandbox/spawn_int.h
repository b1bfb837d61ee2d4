/*
 * Private to spawn.c and spawn_child.c: what the parent and the sandbox's
 * init say to each other over their socketpair, and the descriptors init
 * keeps.
 */
#ifndef STOCKADE_SPAWN_INT_H
#define STOCKADE_SPAWN_INT_H

#include "cgroup.h"
#include "sandbox.h"

#define FD_SYNC			3	/* init's descriptors, after cleanup */
#define FD_OUT			4
#define FD_ERR			5
#define FD_CTL			6	/* the session's control socket, if any */

enum {
	MSG_NETNS = 'N',	/* init: its mount and network namespaces are made */
	MSG_GO = 'G',		/* parent: maps and cgroup are in place */
	MSG_READY = 'R',	/* init: contained, starting the command */
	MSG_ERROR = 'E',	/* init: a step failed; text follows */
	MSG_STATUS = 'S',	/* init: the command's wait status follows */
	MSG_RUN = 'X',		/* parent: a held sandbox may run the command */
};

/* The release: whatever the parent learnt before it, e.g. the resolver. */
struct go_msg {
	char	 type;				/* MSG_GO */
	char	 resolver[SANDBOX_RESOLVER_LEN];	/* "" or an address */
};

/*
 * The child of clone: runs the containment checklist in order, reporting
 * the first failure over sync, then is the sandbox's init.  parent is the
 * pid it must die with.
 */
void	sandbox_child_main(const struct sandbox_spec *, struct cgroup *,
	    int sync, int parent) __attribute__((noreturn));

#endif
