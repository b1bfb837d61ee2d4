/*
 * Links and addresses over rtnetlink (libmnl): the veth pair that joins a
 * sandbox's namespace to the uplink, its addresses and default route, and
 * loopback.  A struct link_ns holds one NETLINK_ROUTE socket created
 * inside one namespace (lib/netns.c).
 */
#ifndef NETGUARD_LINK_H
#define NETGUARD_LINK_H

#include <netinet/in.h>

#include <stddef.h>
#include <stdint.h>

struct mnl_socket;

struct link_ns {
	struct mnl_socket	*nl;
	uint32_t		 seq;
	char			 err[256];	/* why the last call failed */
};

int	link_open(struct link_ns *, int nsfd);
void	link_close(struct link_ns *);
/* The interface's index, 0 when there is none, -1 on error. */
int	link_index(struct link_ns *, const char *name);
int	link_set_up(struct link_ns *, int ifindex, int up);
/* A veth pair: name here, peer created directly inside peer_nsfd. */
int	link_veth_add(struct link_ns *, const char *name, const char *peer,
	    int peer_nsfd);
int	link_del(struct link_ns *, int ifindex);
int	link_addr4_add(struct link_ns *, int ifindex, struct in_addr addr,
	    unsigned prefix);
int	link_route4_default(struct link_ns *, int ifindex, struct in_addr gw);
/* Calls fn for every interface whose name starts with prefix. */
int	link_foreach_prefix(struct link_ns *, const char *prefix,
	    void (*fn)(void *arg, int ifindex, const char *name), void *arg);

#endif
