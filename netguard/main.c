/*
 * netguard: egress policy for sandbox network namespaces.  Attaches L0-L3
 * nftables policy to each namespace a client hands it, runs the only
 * resolver sandboxes may reach, and reports every denied packet to
 * stockade-auditd.  Runs as root (CAP_NET_ADMIN in every namespace it
 * touches); trusts its command line, the rules directory and the clients
 * listed there, not the packets and queries sandboxes send.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "audit_client.h"
#include "conf.h"
#include "evbase.h"
#include "log.h"
#include "netguard.h"
#include "util.h"

#define DEFAULT_RULES	"/etc/stockade/rules"

/* -h, --help: on stdout, exit 0; a bad command line: stderr, 2. */
static __attribute__((noreturn)) void
usage(int help)
{
	fprintf(help ? stdout : stderr,
	    "usage: netguard [-dhnv] [--rules DIR] [--socket PATH] "
	    "[--audit-socket PATH]\n"
	    "                [--uplink-netns NAME|PATH] [--state-dir DIR]\n"
	    "       netguard [--rules DIR] --write-proxy-conf DIR\n");
	exit(help ? (fflush(stdout) == 0 ? 0 : 1) : 2);
}

static void
stop_cb(evutil_socket_t sig, short ev, void *arg)
{
	struct netguard	*ng = arg;

	log_info("signal %d: stopping", (int)sig);
	event_base_loopbreak(ng->base);
}

static void
reload_cb(evutil_socket_t sig, short ev, void *arg)
{
	struct netguard	*ng = arg;
	char		 err[512];

	if (ng_reload(ng, err, sizeof(err)) == -1)
		log_warnx("reload: %s; the old policies stay", err);
}

/*
 * Rules that do not load at start: netguard exits, and only this record
 * says why (the loaders' file:line:column text), sent synchronously to
 * the audit socket as far as the settings loaded.
 */
static void
audit_load_failed(const char *sock)
{
	const char	*why = conf_errors_text();
	char		 err[512];
	json_t		*ev;

	ev = json_pack("{s:s, s:s, s:[], s:b, s:s}", "event", "policy_load",
	    "program", "netguard", "files", "ok", 0, "error", why[0] != '\0' ?
	    why : "the rules do not load (see netguard's log)");
	if (audit_client_once(sock, ev, err, sizeof(err)) == -1)
		log_warnx("the failed load is not audited: %s", err);
	json_decref(ev);
}

/* A flag's path into a settings field; -1 when it does not fit. */
static int
override(char *field, size_t len, const char *flag, const char *value)
{
	if (value == NULL)
		return 0;
	if (xsnprintf(field, len, "%s", value) == -1) {
		fprintf(stderr, "netguard: %s: too long\n", flag);
		return -1;
	}
	return 0;
}

/*
 * --write-proxy-conf DIR: the egress proxy's configuration and
 * certificates, for an operator who runs Squid under their own
 * supervision (and for the tests); 0 or 1 as the exit status.
 */
static int
write_proxy_conf(struct netguard *ng, const char *dir)
{
	char	 err[1024];
	int	 rv = 0;

	if (ng->conf.proxy.ca_cert[0] == '\0' ||
	    ng->conf.proxy.ca_key[0] == '\0') {
		fprintf(stderr, "netguard: %s: http_proxy: ca_cert and ca_key "
		    "are needed\n", NETGUARD_CONF_FILE);
		rv = 1;
	} else if ((mkdir(dir, 0700) == -1 && errno != EEXIST) ||
	    chmod(dir, 0700) == -1) {
		fprintf(stderr, "netguard: %s: %s\n", dir, strerror(errno));
		rv = 1;
	} else if (proxy_conf_write(ng->policies, &ng->conf.proxy, dir, 1, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "netguard: %s\n", err);
		rv = 1;
	}
	policy_set_free(ng->policies);
	return rv;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "rules", required_argument, NULL, 'r' },
		{ "socket", required_argument, NULL, 'S' },
		{ "audit-socket", required_argument, NULL, 'A' },
		{ "uplink-netns", required_argument, NULL, 'U' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "write-proxy-conf", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct netguard	 ng;
	struct event	*sigs[3];
	const char	*sock = NULL, *audit = NULL, *uplink = NULL;
	const char	*state = NULL, *proxy_dir = NULL;
	char		 err[1024];
	int		 ch, foreground = 0, check_only = 0, verbose = 0, i;

	memset(&ng, 0, sizeof(ng));
	ng.rules_dir = DEFAULT_RULES;
	while ((ch = getopt_long(argc, argv, "dhnv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			foreground = 1;
			break;
		case 'h':
			usage(1);
		case 'n':
			check_only = 1;
			break;
		case 'v':
			verbose++;
			break;
		case 'r':
			ng.rules_dir = optarg;
			break;
		case 'S':
			sock = optarg;
			break;
		case 'A':
			audit = optarg;
			break;
		case 'U':
			uplink = optarg;
			break;
		case 's':
			state = optarg;
			break;
		case 'P':
			proxy_dir = optarg;
			break;
		default:
			usage(0);
		}
	}
	if (optind != argc)
		usage(0);
	log_init("netguard", foreground || check_only, verbose);
	conf_errors_clear();
	if (ng_conf_load(ng.rules_dir, &ng.conf) == -1 ||
	    (ng.policies = policy_set_load(ng.rules_dir)) == NULL) {
		if (!check_only)
			audit_load_failed(audit ? audit : ng.conf.audit_socket);
		return 1;
	}
	if (override(ng.conf.socket_path, sizeof(ng.conf.socket_path),
	    "--socket", sock) == -1 ||
	    override(ng.conf.audit_socket, sizeof(ng.conf.audit_socket),
	    "--audit-socket", audit) == -1 ||
	    override(ng.conf.uplink_netns, sizeof(ng.conf.uplink_netns),
	    "--uplink-netns", uplink) == -1 ||
	    override(ng.conf.state_dir, sizeof(ng.conf.state_dir),
	    "--state-dir", state) == -1)
		return 1;
	if (ng.conf.state_dir[0] != '/') {
		fprintf(stderr, "netguard: --state-dir: an absolute path\n");
		return 1;
	}
	if (proxy_dir != NULL)
		return write_proxy_conf(&ng, proxy_dir);
	if (check_only) {
		fprintf(stderr, "configuration OK\n");
		policy_set_free(ng.policies);
		return 0;
	}
	if (getuid() != 0) {
		fprintf(stderr, "netguard: must run as root (it configures "
		    "other network namespaces)\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((ng.base = evbase_new(0)) == NULL)
		fatalx("event_base_new");
	audit_link_init(&ng.audit, ng.base, ng.conf.audit_socket, "netguard");
	audit_link_send(&ng.audit, json_pack("{s:s, s:s}", "event",
	    "daemon_start", "program", "netguard"));
	ng_audit_policy_load(&ng, ng.policies, NULL);
	if (ng_init(&ng, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		ng_shutdown(&ng);
		audit_link_shutdown(&ng.audit);
		return 1;
	}
	if (control_listen(&ng) == -1) {
		ng_shutdown(&ng);
		audit_link_shutdown(&ng.audit);
		return 1;
	}
	sigs[0] = evsignal_new(ng.base, SIGTERM, stop_cb, &ng);
	sigs[1] = evsignal_new(ng.base, SIGINT, stop_cb, &ng);
	sigs[2] = evsignal_new(ng.base, SIGHUP, reload_cb, &ng);
	for (i = 0; i < 3; i++)
		event_add(sigs[i], NULL);
	log_info("listening on %s", ng.conf.socket_path);
	event_base_dispatch(ng.base);
	control_close(&ng);
	ng_shutdown(&ng);
	audit_link_send(&ng.audit, json_pack("{s:s, s:s}", "event",
	    "daemon_stop", "program", "netguard"));
	audit_link_shutdown(&ng.audit);
	for (i = 0; i < 3; i++)
		event_free(sigs[i]);
	event_base_free(ng.base);
	return 0;
}
