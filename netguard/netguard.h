/*
 * netguard's state: settings, the loaded policies, the audit link, the
 * uplink namespace and every attached sandbox.  One event loop thread
 * owns all of it; the helper threads of lib/netns.c only make sockets.
 */
#ifndef NETGUARD_NETGUARD_H
#define NETGUARD_NETGUARD_H

#include <sys/queue.h>
#include <sys/types.h>
#include <net/if.h>
#include <netinet/in.h>

#include <event2/event.h>
#include <jansson.h>

#include "audit_link.h"
#include "link.h"
#include "policy.h"
#include "proxy.h"
#include "resolver.h"

#define NETGUARD_CONF_FILE	"netguard.yaml"
#define NG_CLIENTS_MAX		16		/* uids in clients */
#define NG_SLOTS_MAX		16384		/* /30s handed out from pool */
#define NG_ID_MAX		128		/* sandbox, session, principal */
#define NG_VETH_PREFIX		"ngv"		/* uplink ends: ngv<slot> */
#define NG_VETH_PEER		"eth0"		/* the sandbox's end */
#define NG_CONTROL_MAX		(64 * 1024)	/* one control frame */
#define NG_CONTROL_CONNS_MAX	64
#define NG_REAP_INTERVAL_S	10		/* looking for sandboxes gone */

struct ng_conf {
	char			 socket_path[4096];
	mode_t			 socket_mode;
	char			 audit_socket[4096];
	uid_t			 clients[NG_CLIENTS_MAX];
	size_t			 nclients;
	char			 uplink_netns[4096];	/* "": netguard's own */
	char			 state_dir[4096];
	struct policy_cidr	 pool;
	unsigned		 nflog_group;
	unsigned		 log_rate;
	unsigned		 flow_rate;	/* egress_flow per second */
	unsigned		 flow_summary_s;
	uint16_t		 resolver_port;
	struct resolver_conf	 resolver;
	struct proxy_conf	 proxy;		/* "http" destinations */
};

struct nft_handle;
struct nflog;
struct flow_reader;
struct flowlog;
struct proxy_log;

/* One sandbox namespace under a policy. */
struct attachment {
	LIST_ENTRY(attachment)	 entry;
	struct netguard		*ng;
	int			 nsfd;		/* held: the netns lives on */
	dev_t			 dev;
	ino_t			 ino;
	char			 sandbox[NG_ID_MAX + 1];
	char			 session[NG_ID_MAX + 1];
	char			 principal[NG_ID_MAX + 1];
	const struct policy	*policy;	/* into ng->policies */
	int			 slot;		/* -1: no veth (L0, L1) */
	struct in_addr		 addr, gw;
	char			 host_if[IFNAMSIZ];
	struct nft_handle	*nft;
	struct nflog		*nflog;
	struct resolver_client	*dns;
	struct flow_reader	*flows;		/* conntrack DESTROY events */
	struct flowlog		*flowlog;
	uint64_t		 denied;	/* denials reported */
	char			 since[32];
};
LIST_HEAD(attachment_list, attachment);

struct netguard {
	struct event_base	*base;
	const char		*rules_dir;
	struct ng_conf		 conf;
	struct policy_set	*policies;
	struct audit_link	 audit;
	int			 uplink_fd;	/* -1: netguard's own netns */
	struct link_ns		 uplink;
	struct nft_handle	*uplink_nft;
	json_t			*host;		/* settings changed, to put
						   back: [{setting, was, now}] */
	struct resolver		*resolver;
	struct attachment_list	 attached;
	unsigned		 nattached;
	uint8_t			*slots;		/* 1: in use */
	unsigned		 nslots;
	unsigned		 nslots_used;
	int			 control_fd;
	struct event		*control_ev;
	struct event		*reaper;
	pid_t			 proxy_pid;	/* 0: no egress proxy */
	struct proxy_log	*proxy_log;
};

/* config.c */
int	ng_conf_load(const char *rules_dir, struct ng_conf *);

/* attach.c */
int	ng_init(struct netguard *, char *err, size_t errlen);
void	ng_shutdown(struct netguard *);
/*
 * Takes nsfd in every case.  The reply's fields, or NULL with err.
 * slot: the address slot to reuse if free (-1: any); restored: after a
 * restart (recorded in the event).
 */
json_t	*ng_attach(struct netguard *, int nsfd, const char *sandbox,
	    const char *session, const char *principal, const char *policy,
	    int slot, int restored, char *err, size_t errlen);
struct attachment *ng_find(struct netguard *, int nsfd, const char *sandbox);
void	ng_detach(struct attachment *, const char *reason);
/* An audit record of att's (its session, sandbox, principal, policy)
 * with fields (taken) and event name. */
void	ng_audit(struct attachment *, json_t *fields, const char *name);
json_t	*ng_status(struct netguard *);
/* Loads rules again and re-applies every attachment; -1 keeps the old. */
int	ng_reload(struct netguard *, char *err, size_t errlen);
/* Audits a policy_load for set (or a failed load). */
void	ng_audit_policy_load(struct netguard *, const struct policy_set *,
	    const char *error);

/* uplink.c */
int	uplink_open(struct netguard *, char *err, size_t errlen);
/* Deletes ngv* veths no attachment owns; removed hears each. */
void	uplink_sweep(struct netguard *, json_t *removed);
/* Forwarding and the NAT table, at the first L2/L3 attach. */
int	uplink_ready(struct netguard *, char *err, size_t errlen);
/* With no L2/L3 sandbox left: the host as it was (recorded changes). */
void	uplink_release(struct netguard *);
/* What is changed on the host now (new reference). */
json_t	*uplink_host_changes(struct netguard *);
void	uplink_close(struct netguard *);

/* state.c */
int	state_init(struct netguard *, char *err, size_t errlen);
int	state_save(const struct attachment *, char *err, size_t errlen);
void	state_remove(const struct attachment *);
/* Re-attaches each saved sandbox still alive; removed hears the rest. */
void	state_restore(struct netguard *, json_t *removed);
/* Detaches every attachment whose namespace nothing else holds. */
void	state_reap(struct netguard *);

/* proxy_run.c: Squid, while a policy has http destinations. */
int	proxy_start(struct netguard *, char *err, size_t errlen);
void	proxy_stop(struct netguard *);
/* proxy_log.c: egress_http records from Squid's access log under dir. */
struct proxy_log *proxy_log_open(struct netguard *, const char *dir);
void	proxy_log_close(struct proxy_log *);

/* control.c */
int	control_listen(struct netguard *);
void	control_close(struct netguard *);

#endif
