/*
 * The uplink namespace: where the host ends of the sandboxes' veths live,
 * where their traffic is masqueraded and where the resolver listens.
 * Forwarding and the NAT table are set up at the first L2/L3 attach, so a
 * netguard serving only L0/L1 sandboxes changes nothing on the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "netguard.h"
#include "netns.h"
#include "nft.h"
#include "util.h"

struct sweep {
	struct netguard	*ng;
	json_t		*removed;
};

static void
sweep_link(void *arg, int ifindex, const char *name)
{
	struct sweep		*sw = arg;
	struct attachment	*att;

	/* Restored sandboxes own theirs again. */
	LIST_FOREACH(att, &sw->ng->attached, entry)
		if (strcmp(att->host_if, name) == 0)
			return;
	if (link_del(&sw->ng->uplink, ifindex) == 0)
		json_array_append_new(sw->removed, json_sprintf("veth %s", name));
	else
		log_warnx("%s: %s", name, sw->ng->uplink.err);
}

int
uplink_open(struct netguard *ng, char *err, size_t errlen)
{
	ng->uplink_fd = -1;
	if (ng->conf.uplink_netns[0] != '\0' &&
	    (ng->uplink_fd = netns_open(ng->conf.uplink_netns)) == -1) {
		snprintf(err, errlen, "uplink_netns %s: %s",
		    ng->conf.uplink_netns, strerror(errno));
		return -1;
	}
	if (link_open(&ng->uplink, ng->uplink_fd) == -1) {
		snprintf(err, errlen, "uplink: %s", ng->uplink.err);
		return -1;
	}
	return 0;
}

/*
 * After the restore: the veths a previous netguard left whose sandboxes
 * are gone (the restored ones got theirs back, rebuilt).
 */
void
uplink_sweep(struct netguard *ng, json_t *removed)
{
	struct sweep	 sw = { ng, removed };

	if (link_foreach_prefix(&ng->uplink, NG_VETH_PREFIX, sweep_link,
	    &sw) == -1)
		log_warnx("uplink: %s", ng->uplink.err);
}

static int
forward_on(void *arg)
{
	int	 fd, rc;

	if ((fd = open("/proc/sys/net/ipv4/ip_forward", O_WRONLY | O_CLOEXEC))
	    == -1)
		return -1;
	rc = write_all(fd, "1\n", 2);
	close(fd);
	return rc;
}

int
uplink_ready(struct netguard *ng, char *err, size_t errlen)
{
	char	 e[256];

	if (ng->uplink_nft != NULL)
		return 0;
	if (netns_call(ng->uplink_fd, forward_on, NULL) == -1) {
		snprintf(err, errlen, "uplink: ip_forward: %s", strerror(errno));
		return -1;
	}
	if ((ng->uplink_nft = nft_open(ng->uplink_fd, e, sizeof(e))) == NULL ||
	    nft_uplink_apply(ng->uplink_nft, &ng->conf.pool, e,
	    sizeof(e)) == -1) {
		snprintf(err, errlen, "uplink nftables: %s", e);
		if (ng->uplink_nft != NULL)
			nft_close(ng->uplink_nft);
		ng->uplink_nft = NULL;
		return -1;
	}
	return 0;
}

/*
 * The NAT table goes only with the last veth: sandboxes that stay
 * attached across a restart keep their traffic flowing meanwhile.
 */
void
uplink_close(struct netguard *ng)
{
	char	 e[256];

	if (ng->uplink_nft != NULL) {
		if (ng->nslots_used == 0 &&
		    nft_uplink_remove(ng->uplink_nft, e, sizeof(e)) == -1)
			log_warnx("uplink: %s", e);
		nft_close(ng->uplink_nft);
		ng->uplink_nft = NULL;
	}
	link_close(&ng->uplink);
	if (ng->uplink_fd != -1)
		close(ng->uplink_fd);
	ng->uplink_fd = -1;
}
