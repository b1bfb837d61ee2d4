/*
 * Runs the egress proxy (Squid, proxy.h) for as long as a policy has
 * "http" destinations: its configuration written into http_proxy.dir,
 * the process started in the uplink namespace, where the sandboxes'
 * redirected connections arrive, and stopped at a reload or shutdown.
 * Trusts Squid's binary and the settings; the process holds the
 * credentials, so it never dumps core.
 */
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "netguard.h"
#include "util.h"

#define PROXY_SQUID	"/usr/sbin/squid"
#define PROXY_USER	"proxy"			/* Debian's, Squid's default */
#define PROXY_STOP_MS	3000			/* TERM, then KILL */

int
proxy_start(struct netguard *ng, char *err, size_t errlen)
{
	const struct proxy_conf	*pc = &ng->conf.proxy;
	struct rlimit		 none = { 0, 0 };
	struct passwd		*pw;
	const char		*dir = pc->dir;
	char			 conf[PATH_MAX], log[PATH_MAX], pid[PATH_MAX];
	char			 service[32];
	pid_t			 p;

	if (!proxy_wanted(ng->policies))
		return 0;
	if (pc->ca_cert[0] == '\0' || pc->ca_key[0] == '\0') {
		snprintf(err, errlen, "a policy has http rules: %s needs "
		    "http_proxy.ca_cert and ca_key", NETGUARD_CONF_FILE);
		return -1;
	}
	if (xsnprintf(conf, sizeof(conf), "%s/%s", dir, PROXY_CONF_NAME) ==
	    -1 || xsnprintf(log, sizeof(log), "%s/%s", dir, PROXY_LOG_DIR) ==
	    -1 || xsnprintf(pid, sizeof(pid), "%s/squid.pid", log) == -1) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	if ((pw = getpwnam(PROXY_USER)) == NULL) {
		snprintf(err, errlen, "no user %s (is squid-openssl "
		    "installed?)", PROXY_USER);
		return -1;
	}
	/* Root's, readable on the way to the log directory, which alone is
	 * Squid's: the configuration and keys inside stay root's 0600. */
	if (mkdir_p(dir, 0755) == -1 || chown(dir, 0, 0) == -1 ||
	    chmod(dir, 0755) == -1 ||
	    (mkdir(log, 0700) == -1 && errno != EEXIST) ||
	    chown(log, pw->pw_uid, pw->pw_gid) == -1 || chmod(log, 0700) == -1) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (proxy_conf_write(ng->policies, pc, dir, 1, err, errlen) == -1)
		return -1;
	(void)unlink(pid);	/* left by a killed Squid, it would refuse */
	/* Before Squid starts: it must find no old log (proxy_log.c). */
	if ((ng->proxy_log = proxy_log_open(ng, dir)) == NULL) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	/* Names Squid's shared memory segments: another Squid's (or one
	 * killed before it removed them) never collide with ours. */
	(void)snprintf(service, sizeof(service), "netguard%d", (int)getpid());
	if ((p = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		proxy_log_close(ng->proxy_log);
		ng->proxy_log = NULL;
		return -1;
	}
	if (p == 0) {
		/* The sandboxes' connections arrive in the uplink namespace. */
		if ((ng->uplink_fd != -1 &&
		    setns(ng->uplink_fd, CLONE_NEWNET) == -1) ||
		    setrlimit(RLIMIT_CORE, &none) == -1 ||
		    prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
			_exit(126);
		/* None of netguard's descriptors (namespaces, netlink, the
		 * control socket) into a process that parses sandboxes'
		 * requests. */
		if (close_range(3, ~0U, 0) == -1)
			_exit(126);
		execl(PROXY_SQUID, "squid", "-N", "-n", service, "-f", conf,
		    (char *)NULL);
		_exit(127);
	}
	ng->proxy_pid = p;
	log_info("egress proxy started (pid %d)", (int)p);
	return 0;
}

void
proxy_stop(struct netguard *ng)
{
	uint64_t	 until = mono_ms() + PROXY_STOP_MS;
	int		 st;

	if (ng->proxy_pid <= 0)
		return;
	(void)kill(ng->proxy_pid, SIGTERM);
	while (waitpid(ng->proxy_pid, &st, WNOHANG) == 0) {
		if (mono_ms() > until) {
			(void)kill(ng->proxy_pid, SIGKILL);
			(void)waitpid(ng->proxy_pid, &st, 0);
			break;
		}
		usleep(20 * 1000);
	}
	ng->proxy_pid = 0;
	proxy_log_close(ng->proxy_log);
	ng->proxy_log = NULL;
}
