/*
 * The fixture check_nft*.c share: a network namespace of the test's own,
 * shell commands and their output, policies and nft handles applied here.
 */
#ifndef STOCKADE_NFT_FIXTURE_H
#define STOCKADE_NFT_FIXTURE_H

#include <sys/socket.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <linux/netlink.h>

#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>

#include <jansson.h>

#include "testutil.h"
#include "nft.h"

#define LIST_MAX	(8 << 20)

/* ---------------------------------------------------------------- helpers */

struct fixture {
	struct policy		 p;
	struct policy_group	 g[3];
	struct policy_cidr	 c[9];
	char			*names[1];
	struct nft_sandbox	 spec;
};

static inline void
fresh_netns(void)
{
	ck_assert_msg(unshare(CLONE_NEWNET) == 0, "unshare: %s",
	    strerror(errno));
}

static inline int __attribute__((format(printf, 1, 2)))
sh(const char *fmt, ...)
{
	char	 cmd[8192];
	va_list	 ap;
	int	 st;

	va_start(ap, fmt);
	ck_assert_int_lt(vsnprintf(cmd, sizeof(cmd), fmt, ap), sizeof(cmd));
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Output of a shell command (caller frees); NULL if it failed. */
static inline char *
capture(const char *cmd)
{
	FILE	*f;
	char	*out = malloc(LIST_MAX + 1);
	size_t	 n;
	int	 st;

	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(f = popen(cmd, "r"));
	n = fread(out, 1, LIST_MAX, f);
	out[n] = '\0';
	st = pclose(f);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

static inline struct policy_cidr
cidr(const char *text)
{
	struct policy_cidr	 c;
	char			 a[64], *slash;

	memset(&c, 0, sizeof(c));
	snprintf(a, sizeof(a), "%s", text);
	ck_assert_ptr_nonnull(slash = strchr(a, '/'));
	*slash = '\0';
	c.family = strchr(a, ':') ? AF_INET6 : AF_INET;
	ck_assert_int_eq(inet_pton(c.family, a, c.addr), 1);
	c.prefix = (uint8_t)atoi(slash + 1);
	return c;
}

static inline void
fixture_init(struct fixture *f, enum policy_level level)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->p.name, sizeof(f->p.name), "test");
	f->p.level = level;
	f->spec.policy = &f->p;
	f->spec.pool = cidr("10.200.0.0/16");
	if (level >= LEVEL_L2)
		inet_pton(AF_INET, "10.200.0.1", &f->spec.resolver);
	f->spec.nflog_group = 5;
	f->spec.log_rate = 10;
}

/* The policy t_l2 describes. */
static inline void
l2_policy(struct fixture *f)
{
	fixture_init(f, LEVEL_L2);
	f->c[0] = cidr("10.0.1.0/24");
	f->c[1] = cidr("10.0.0.0/24");
	f->c[2] = cidr("10.0.0.128/25");
	f->c[3] = cidr("192.0.2.11/32");
	f->c[4] = cidr("192.0.2.10/32");
	f->c[5] = cidr("198.51.100.7/32");
	f->c[6] = cidr("2001:db8:1::1/128");
	f->c[7] = cidr("2001:db8::/48");
	f->g[0].cidrs = f->c;
	f->g[0].ncidrs = 8;
	f->g[0].ports[0] = 443;
	f->g[0].ports[1] = 80;
	f->g[0].ports[2] = 443;
	f->g[0].nports = 3;
	f->names[0] = "example.org";
	f->g[1].names = f->names;
	f->g[1].nnames = 1;
	f->g[1].ports[0] = 443;
	f->g[1].nports = 1;
	f->c[8] = cidr("203.0.113.0/24");
	f->g[2].cidrs = &f->c[8];
	f->g[2].ncidrs = 1;
	f->p.groups = f->g;
	f->p.ngroups = 3;
}

static inline struct nft_handle *
open_here(void)
{
	struct nft_handle	*h;
	char			 err[512];

	h = nft_open(-1, err, sizeof(err));
	ck_assert_msg(h != NULL, "nft_open: %s", err);
	return h;
}

static inline void
apply_ok(struct nft_handle *h, const struct fixture *f)
{
	char	 err[512];

	ck_assert_msg(nft_apply(h, &f->spec, err, sizeof(err)) == 0,
	    "nft_apply: %s", err);
}

#endif /* STOCKADE_NFT_FIXTURE_H */
