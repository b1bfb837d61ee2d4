/*
 * The uplink namespace: where the host ends of the sandboxes' veths live,
 * where their traffic is masqueraded and where the resolver listens.
 * Forwarding and the NAT table are set up at the first L2/L3 attach, so a
 * netguard serving only L0/L1 sandboxes changes nothing on the host; each
 * setting it changes is recorded first (state_dir/.host-settings, so a
 * restarted netguard still knows) and put back as it was when the last
 * L2/L3 sandbox is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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

static void	host_load(struct netguard *);

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
	host_load(ng);
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

/* ------------------------------------------------------------ host */

#define HOST_FILE	".host-settings"	/* in state_dir; no sandbox
						   id starts with '.' */
#define HOST_FILE_MAX	4096
#define IP_FORWARD	"/proc/sys/net/ipv4/ip_forward"
#define NAT_TABLE	"nftables table ip netguard_nat"

struct sysctl_io {
	char	 value[16];	/* read into, or written from */
	int	 write;
};

/* Runs in the uplink namespace (netns_call): one sysctl, read or set. */
static int
sysctl_io(void *arg)
{
	struct sysctl_io	*io = arg;
	ssize_t			 n;
	int			 fd, rc = 0;

	if ((fd = open(IP_FORWARD, (io->write ? O_WRONLY : O_RDONLY) |
	    O_CLOEXEC)) == -1)
		return -1;
	if (io->write)
		rc = write_all(fd, io->value, strlen(io->value));
	else if ((n = read(fd, io->value, sizeof(io->value) - 1)) < 0)
		rc = -1;
	else {
		io->value[n] = '\0';
		io->value[strcspn(io->value, "\n")] = '\0';
	}
	close(fd);
	return rc;
}

static int
host_path(const struct netguard *ng, char *out, size_t len)
{
	return xsnprintf(out, len, "%s/" HOST_FILE, ng->conf.state_dir);
}

/* The record goes to disk before the setting changes: a crash between
 * the two restores a value nothing changed, which is harmless. */
static int
host_save(struct netguard *ng)
{
	char	 path[PATH_MAX], tmp[PATH_MAX + 8], *data;
	int	 fd, rc = -1;

	if (host_path(ng, path, sizeof(path)) == -1 ||
	    xsnprintf(tmp, sizeof(tmp), "%s.tmp", path) == -1 ||
	    (data = json_dumps(ng->host, JSON_COMPACT)) == NULL)
		return -1;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) !=
	    -1) {
		if (write_all(fd, data, strlen(data)) == 0 && fsync(fd) == 0 &&
		    close(fd) == 0 && rename(tmp, path) == 0 &&
		    fsync_dir(ng->conf.state_dir) == 0)
			rc = 0;
		else
			(void)close(fd);
	}
	free(data);
	return rc;
}

/* What a previous netguard changed and had not put back yet. */
static void
host_load(struct netguard *ng)
{
	char	 path[PATH_MAX], *data;
	size_t	 len;
	json_t	*o;

	ng->host = json_array();
	if (host_path(ng, path, sizeof(path)) == -1 ||
	    read_file(path, HOST_FILE_MAX, &data, &len) == -1)
		return;
	o = json_loadb(data, len, 0, NULL);
	free(data);
	if (!json_is_array(o)) {
		log_warnx("%s: not what netguard writes; ignored", path);
		json_decref(o);
		return;
	}
	json_decref(ng->host);
	ng->host = o;
}

static int
host_is(const json_t *change, const char *setting)
{
	const char	*s = json_string_value(json_object_get(change, "setting"));

	return s != NULL && strcmp(s, setting) == 0;
}

/* Records {setting, was, now} unless it is recorded already. */
static int
host_change(struct netguard *ng, const char *setting, const char *was,
    const char *now)
{
	const json_t	*c;
	size_t		 i;

	json_array_foreach(ng->host, i, c)
		if (host_is(c, setting))
			return 0;
	json_array_append_new(ng->host, json_pack("{s:s, s:s, s:s}",
	    "setting", setting, "was", was, "now", now));
	log_info("host: %s: %s -> %s (put back when no L2/L3 sandbox is "
	    "left)", setting, was, now);
	return host_save(ng);
}

json_t *
uplink_host_changes(struct netguard *ng)
{
	return ng->host != NULL ? json_deep_copy(ng->host) : json_array();
}

static int
forward_on(struct netguard *ng, char *err, size_t errlen)
{
	struct sysctl_io	 io = { "", 0 };

	if (netns_call(ng->uplink_fd, sysctl_io, &io) == -1) {
		snprintf(err, errlen, "uplink: %s: %s", IP_FORWARD,
		    strerror(errno));
		return -1;
	}
	if (strcmp(io.value, "1") == 0)
		return 0;	/* nothing to change, nothing to put back */
	if (host_change(ng, "net.ipv4.ip_forward", io.value, "1") == -1) {
		snprintf(err, errlen, "uplink: cannot record the host's "
		    "ip_forward in %s", ng->conf.state_dir);
		return -1;
	}
	snprintf(io.value, sizeof(io.value), "1\n");
	io.write = 1;
	if (netns_call(ng->uplink_fd, sysctl_io, &io) == -1) {
		snprintf(err, errlen, "uplink: %s: %s", IP_FORWARD,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * No L2/L3 sandbox is left: the NAT table goes and every recorded setting
 * gets its old value back; the record goes last.
 */
void
uplink_release(struct netguard *ng)
{
	struct sysctl_io	 io;
	const json_t		*c;
	const char		*setting, *was;
	char			 e[256], path[PATH_MAX];
	size_t			 i;
	int			 ok = 1;

	if (ng->nslots_used > 0)
		return;
	/* A previous netguard's table: this one has no handle on it yet. */
	json_array_foreach(ng->host, i, c)
		if (host_is(c, NAT_TABLE) && ng->uplink_nft == NULL &&
		    (ng->uplink_nft = nft_open(ng->uplink_fd, e,
		    sizeof(e))) == NULL) {
			log_warnx("uplink: %s", e);
			return;
		}
	if (ng->uplink_nft != NULL) {
		if (nft_uplink_remove(ng->uplink_nft, e, sizeof(e)) == -1) {
			log_warnx("uplink: %s", e);
			ok = 0;
		}
		nft_close(ng->uplink_nft);
		ng->uplink_nft = NULL;
	}
	json_array_foreach(ng->host, i, c) {
		setting = json_string_value(json_object_get(c, "setting"));
		was = json_string_value(json_object_get(c, "was"));
		if (!host_is(c, "net.ipv4.ip_forward") || was == NULL)
			continue;
		io.write = 1;
		snprintf(io.value, sizeof(io.value), "%.8s\n", was);
		if (netns_call(ng->uplink_fd, sysctl_io, &io) == -1) {
			log_warn("uplink: putting %s back to %s", setting, was);
			ok = 0;
		} else
			log_info("host: %s put back to %s", setting, was);
	}
	if (!ok || json_array_size(ng->host) == 0)
		return;
	json_array_clear(ng->host);
	if (host_path(ng, path, sizeof(path)) != -1 && unlink(path) == -1 &&
	    errno != ENOENT)
		log_warn("%s", path);
}

int
uplink_ready(struct netguard *ng, char *err, size_t errlen)
{
	char	 e[256];

	if (ng->uplink_nft != NULL)
		return 0;
	if (forward_on(ng, err, errlen) == -1)
		return -1;
	if ((ng->uplink_nft = nft_open(ng->uplink_fd, e, sizeof(e))) == NULL ||
	    host_change(ng, NAT_TABLE, "absent", "masquerades the pool") == -1 ||
	    nft_uplink_apply(ng->uplink_nft, &ng->conf.pool,
	    ng->conf.proxy.port_base, ng->conf.proxy.ca_cert[0] != '\0' ?
	    PROXY_PORTS_MAX : 0, e, sizeof(e)) == -1) {
		snprintf(err, errlen, "uplink nftables: %s", e);
		if (ng->uplink_nft != NULL)
			nft_close(ng->uplink_nft);
		ng->uplink_nft = NULL;
		return -1;
	}
	return 0;
}

/*
 * The NAT table and forwarding go only with the last veth: sandboxes that
 * stay attached across a restart keep their traffic flowing meanwhile,
 * and the next netguard puts the host back when they are gone.
 */
void
uplink_close(struct netguard *ng)
{
	uplink_release(ng);
	if (ng->uplink_nft != NULL) {
		nft_close(ng->uplink_nft);
		ng->uplink_nft = NULL;
	}
	json_decref(ng->host);
	ng->host = NULL;
	link_close(&ng->uplink);
	if (ng->uplink_fd != -1)
		close(ng->uplink_fd);
	ng->uplink_fd = -1;
}
