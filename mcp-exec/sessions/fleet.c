/*
 * Handles that name their node (sessions/fleet.h).  The node part is
 * read from the end of a client's string and checked to be a label;
 * nothing else of a handle is interpreted here.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fleet.h"
#include "hash.h"
#include "log.h"

#define FLEET_RANDOM_MAX	32	/* bytes of one handle's random part */
#define FLEET_ECHO_MAX		256	/* a handle quoted back in an error */

int
fleet_node_ok(const char *s)
{
	size_t	 n = strlen(s);

	return n > 0 && n < FLEET_NODE_MAX &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n &&
	    s[0] != '-' && s[n - 1] != '-';
}

void
fleet_handle(const char *node, const char *prefix, size_t nbytes, char *out,
    size_t outlen)
{
	uint8_t	 rnd[FLEET_RANDOM_MAX];
	char	 hex[2 * FLEET_RANDOM_MAX + 1];
	int	 n;

	if (nbytes > sizeof(rnd))
		fatalx("fleet_handle: %zu random bytes", nbytes);
	/* Unguessable: knowing a node, or another handle, gives nothing. */
	if (getentropy(rnd, nbytes) == -1)
		fatal("getentropy");
	hex_encode(rnd, nbytes, hex);
	n = node[0] != '\0' ? snprintf(out, outlen, "%s%s%c%s", prefix, hex,
	    FLEET_SEP, node) : snprintf(out, outlen, "%s%s", prefix, hex);
	if (n < 0 || (size_t)n >= outlen)
		fatalx("fleet_handle: %zu bytes are too few", outlen);
}

int
fleet_handle_node(const char *handle, char node[FLEET_NODE_MAX])
{
	const char	*dot = strrchr(handle, FLEET_SEP);

	/* Something before the node part, and a label after it. */
	if (dot == NULL || dot == handle || !fleet_node_ok(dot + 1))
		return 0;
	snprintf(node, FLEET_NODE_MAX, "%s", dot + 1);
	return 1;
}

int
fleet_foreign(const char *self, const char *handle, char node[FLEET_NODE_MAX])
{
	return handle != NULL && fleet_handle_node(handle, node) &&
	    strcmp(node, self) != 0;
}

json_t *
fleet_error_data(const char *reason, const char *node, const char *handle)
{
	json_t	*d = json_pack("{s:s, s:s}", "reason", reason, "node", node);
	size_t	 i, n = handle != NULL ? strlen(handle) : 0;

	/* The client's own string, quoted back only when short and
	 * printable ASCII (ours always are). */
	for (i = 0; i < n && n < FLEET_ECHO_MAX; i++)
		if (handle[i] < 0x21 || handle[i] > 0x7e)
			break;
	if (d != NULL && n > 0 && i == n)
		json_object_set_new(d, "handle", json_stringn(handle, n));
	return d;
}
