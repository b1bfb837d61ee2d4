/*
 * Namespace setup on the child side, while it still holds capabilities in
 * its own user namespace (and only there).
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ns.h"

/* Into a new namespace of the kind flag names. */
static int
enter(int flag, const char *name, char *err, size_t errlen)
{
	if (unshare(flag) == -1) {
		snprintf(err, errlen, "unshare(%s): %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

int
ns_enter_own(char *err, size_t errlen)
{
	/* Owned by our user namespace, as they would be had clone made
	 * them; the mounts copied are locked to us the same way. */
	return enter(CLONE_NEWNS | CLONE_NEWNET, "CLONE_NEWNS | CLONE_NEWNET",
	    err, errlen);
}

int
ns_enter_cgroup(char *err, size_t errlen)
{
	/* The cgroup the parent put us in becomes our view's root. */
	return enter(CLONE_NEWCGROUP, "CLONE_NEWCGROUP", err, errlen);
}

int
ns_set_hostname(const char *name, char *err, size_t errlen)
{
	if (sethostname(name, strlen(name)) == -1 ||
	    setdomainname("", 0) == -1) {
		snprintf(err, errlen, "sethostname: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int
ns_loopback(int up, char *err, size_t errlen)
{
	struct ifreq	 ifr;
	int		 s, rv = -1;

	if (!up)
		return 0;
	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == -1)
		goto out;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) == -1)
		goto out;
	rv = 0;
out:
	if (rv == -1)
		snprintf(err, errlen, "bringing lo up: %s", strerror(errno));
	close(s);
	return rv;
}
