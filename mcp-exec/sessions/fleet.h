/*
 * One node of a fleet: the node id (fleet.node_id, or --node-id) that
 * every handle this server mints ends with, so that a router sends each
 * request to the node holding its handle; and the typed errors a node
 * answers with when a handle is not its own or the node drains.  The
 * node part of a handle is a routing hint, never a credential: what a
 * handle reaches is decided by the owner's own table (random part and
 * principal), as on one host (docs/fleet-routing.md).
 */
#ifndef STOCKADE_FLEET_H
#define STOCKADE_FLEET_H

#include <stddef.h>
#include <jansson.h>

#define FLEET_NODE_MAX		64	/* a DNS label (63) and its NUL */
#define FLEET_SEP		'.'	/* handle "." node */
/* What a node part adds to a handle: "." and a label of up to 63. */
#define FLEET_SUFFIX_MAX	FLEET_NODE_MAX
#define FLEET_DRAIN_MAX_S	3600	/* fleet.drain_grace_s at most */

/*
 * JSON-RPC codes of the fleet's errors: outside -32768..-32000, which
 * JSON-RPC and MCP keep for themselves.  The router answers
 * FLEET_ERR_SESSION_LOST too (deploy/router/), in the same shape.
 */
#define FLEET_ERR_SESSION_LOST	-31001	/* the handle's node is gone or going */
#define FLEET_ERR_DRAINING	-31002	/* no new sessions here: go elsewhere */
#define FLEET_ERR_WRONG_NODE	-31003	/* the handle is another node's */
#define FLEET_ERR_TASK_LOST	-31004	/* a task ran when its node restarted */

/* data.reason of those errors (the router answers "node_gone" too). */
#define FLEET_NODE_GONE		"node_gone"
#define FLEET_NODE_DRAINING	"node_draining"
#define FLEET_WRONG_NODE	"wrong_node"
#define FLEET_TASK_LOST		"lost_with_node"

/* What the client reads (node, then this node's id or "none"). */
#define FLEET_WRONG_NODE_FMT	"the handle belongs to node %s, not to this " \
				"node (%s): send its requests through the " \
				"fleet's router"
/* Why a node with fleet.peer did not forward (transport/http.c). */
#define FLEET_UNFORWARDED_FMT	"the handle belongs to node %s, not to this " \
				"node (%s), and only a request with an " \
				"Authorization header of its own is " \
				"forwarded there: a client certificate " \
				"proves who the caller is to this node only"
/* The router's words, when a node forwarding to N hears nothing. */
#define FLEET_GONE_FMT		"session lost: node %s is gone"
#define FLEET_DRAINING_FMT	"node %s is draining and takes no new " \
				"sessions: send the request through the " \
				"fleet's router"
#define FLEET_LOST_FMT		"session lost: node %s is draining (it " \
				"stops once its running calls end): start " \
				"a new session"
/* Why a drain closed a session (session_closed's reason; the session's
 * id names the node). */
#define FLEET_DRAINED		"drained: the node stopped once its calls " \
				"had ended"
#define FLEET_DRAIN_CUT		"drained: the node stopped when the drain " \
				"grace ran out"

/* This node's name in those messages. */
#define FLEET_SELF(id)		((id)[0] != '\0' ? (id) : "none")

/* A node id is a DNS label: a-z, 0-9 and '-', 1 to 63, no '-' at either
 * end (what a pod's name is, and a headless Service resolves). */
int	 fleet_node_ok(const char *);
/*
 * A new handle: prefix, then nbytes random bytes in hex, then "." node
 * when node is not "".  fatal() when the kernel has no randomness.
 */
void	 fleet_handle(const char *node, const char *prefix, size_t nbytes,
	    char *out, size_t outlen);
/* The node a handle names, into node: 1, or 0 when it names none. */
int	 fleet_handle_node(const char *handle, char node[FLEET_NODE_MAX]);
/* 1 when the handle names a node other than self ("" when this server
 * has none); node is then set. */
int	 fleet_foreign(const char *self, const char *handle,
	    char node[FLEET_NODE_MAX]);
/* A fleet error's data: {reason, node, handle} (new reference). */
json_t	*fleet_error_data(const char *reason, const char *node,
	    const char *handle);

#endif
