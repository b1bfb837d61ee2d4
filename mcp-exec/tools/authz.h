/*
 * Who may do what (rules/principals.yaml, `principals:` and `groups:`):
 * the tools a principal or group may call, the profiles it may use and
 * the default one, whether it may choose a profile per session, and its
 * quotas.  The file is operator input, validated whole with
 * file:line:column errors; the groups a caller belongs to come from the
 * transport (a token entry, a token claim) and are trusted as such.
 *
 * Ownership: a struct authz owns its entries; a grant is a value.
 */
#ifndef STOCKADE_AUTHZ_H
#define STOCKADE_AUTHZ_H

#include "sessions/quota.h"
#include "tools.h"

#define AUTHZ_ENTRIES_MAX	256	/* principals, and groups, each */
#define AUTHZ_PROFILES_MAX	16	/* profiles one caller may use */
#define AUTHZ_PROFILES_TOTAL	64	/* distinct profiles the file names */

/* The tools, as bits of a grant's mask. */
enum authz_tool {
	AUTHZ_EXECUTE_PYTHON, AUTHZ_RUN_COMMAND, AUTHZ_CLOSE_SESSION,
	AUTHZ_LIST_FILES, AUTHZ_READ_FILE, AUTHZ_TOOLS_N
};
extern const char *const authz_tool_names[AUTHZ_TOOLS_N];

struct authz;

/* What one caller may do: its principal's entry and its groups' merged. */
struct authz_grant {
	unsigned	 tools;		/* 1 << enum authz_tool */
	char		 profiles[AUTHZ_PROFILES_MAX][PROFILE_NAME_MAX];
	unsigned	 nprofiles;	/* the default is always one of them */
	int		 choose;	/* may pass `profile` */
	struct quota_bill bill;
};

/* NULL after printing file:line:column errors; no file: nothing listed. */
struct authz	*authz_load(const char *rules_dir);
void		 authz_free(struct authz *);
/* Principals and groups listed. */
size_t		 authz_count(const struct authz *);
/* The profile names the file uses (borrowed), for the loader to load. */
size_t		 authz_profile_names(const struct authz *,
		    const char **out, size_t max);
/*
 * The caller's grant; an authz that lists neither the principal nor its
 * groups gives what `unlisted:` says (quotas billed to the caller's own
 * "principal:NAME"), or without it every tool, only server_default, and
 * no quota.
 */
void		 authz_grant(const struct authz *, const char *principal,
		    const struct tool_client *, const char *server_default,
		    struct authz_grant *);
/* Tells the quota table every subject's limits ("principal:NAME"...). */
void		 authz_configure_quotas(const struct authz *,
		    struct quota_table *);
int		 authz_tool_ok(const struct authz_grant *, const char *tool);
int		 authz_profile_ok(const struct authz_grant *, const char *);

#endif
