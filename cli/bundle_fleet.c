/*
 * Fleet evidence bundles: one ordinary bundle per node, each cut from
 * that node's log with the same filter, side by side under one folder
 * with fleet.json and a MANIFEST over everything.  Logs and bundles are
 * untrusted input; each node's bundle is verified as a bundle is.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "checkpoint.h"
#include "fleet.h"
#include "util.h"
#include "witness.h"

/*
 * The node and key id of the newest checkpoint record in dir's newest
 * file ("" each when there is none): what names the node's bundle and
 * picks its key.
 */
static void
log_node(const char *dir, char node[CHECKPOINT_NODE_MAX],
    char kid[KEY_ID_HEX + 1])
{
	struct checkpoint	 cp;
	const char		*why;
	char			*data;
	size_t			 len;
	json_t			*j = NULL;

	node[0] = kid[0] = '\0';
	if (fleet_newest(dir, &data, &len) == -1)
		return;
	if (fleet_last_line(data, len, "\"event\":\"checkpoint\"", &j) == 0 &&
	    checkpoint_from_record(j, &cp, &why) == 0) {
		memcpy(node, cp.node, CHECKPOINT_NODE_MAX);
		memcpy(kid, cp.key_id, KEY_ID_HEX + 1);
	}
	json_decref(j);
	free(data);
}

/* The public key file among pubs whose key id is kid (or the only one). */
static const char *
pick_pubkey(const char *const *pubs, size_t npubs, const char *kid)
{
	EVP_PKEY	*k;
	char		 id[KEY_ID_HEX + 1], err[512];
	size_t		 i;
	int		 same;

	if (npubs <= 1)
		return npubs == 1 ? pubs[0] : NULL;
	for (i = 0; i < npubs; i++) {
		if ((k = ed25519_load_public(pubs[i], err, sizeof(err))) == NULL)
			continue;
		same = ed25519_key_id(k, id) == 0 && strcmp(id, kid) == 0;
		EVP_PKEY_free(k);
		if (same)
			return pubs[i];
	}
	return NULL;
}

int
bundle_create_fleet(char *const *dirs, size_t ndirs,
    const struct bundle_filter *f, const char *const *pubs, size_t npubs,
    const char *out, char *err, size_t errlen)
{
	char		 node[CHECKPOINT_NODE_MAX], kid[KEY_ID_HEX + 1];
	char		 chain[CHAIN_ID_HEX + 1], sub[PATH_MAX], name[96];
	char		 why[PATH_MAX + 512];
	json_t		*nodes = json_array(), *meta = NULL, *o;
	size_t		 i, made = 0;
	int		 rv = -1;

	if (mkdir(out, 0755) == -1) {
		snprintf(err, errlen, "%s: %s", out, strerror(errno));
		goto out;
	}
	for (i = 0; i < ndirs; i++) {
		log_node(dirs[i], node, kid);
		if (fleet_chain_of(dirs[i], chain) == -1) {
			snprintf(err, errlen, "%s: no audit log to name its "
			    "chain", dirs[i]);
			goto out;
		}
		/* The node's id where its log names one; unique either way. */
		snprintf(name, sizeof(name), "%s", node[0] ? node : "log");
		if (xsnprintf(sub, sizeof(sub), "%s/%s", out, name) == -1)
			goto out;
		if (access(sub, F_OK) == 0) {
			snprintf(name, sizeof(name), "%s-%zu", node[0] ? node :
			    "log", i);
			if (xsnprintf(sub, sizeof(sub), "%s/%s", out, name) == -1)
				goto out;
		}
		o = json_pack("{s:s, s:s, s:s}", "node", node[0] ? node : "-",
		    "chain_id", chain, "log_dir", dirs[i]);
		if (bundle_create(dirs[i], f, pick_pubkey(pubs, npubs, kid), sub,
		    why, sizeof(why)) == 0) {
			json_object_set_new(o, "bundle", json_string(name));
			made++;
		} else {
			/* A node with nothing selected says so; any other
			 * failure fails the whole bundle. */
			if (access(sub, F_OK) == 0 || strstr(why, "matches") ==
			    NULL) {
				snprintf(err, errlen, "%s: %s", dirs[i], why);
				json_decref(o);
				goto out;
			}
			json_object_set_new(o, "bundle", json_null());
			json_object_set_new(o, "note", json_string(why));
		}
		json_array_append_new(nodes, o);
	}
	if (made == 0) {
		snprintf(err, errlen, "no record on any node matches");
		goto out;
	}
	meta = json_pack("{s:s, s:o, s:O}", "format", BUNDLE_FLEET_FORMAT,
	    "filter", bundle_filter_json(f), "nodes", nodes);
	if (xsnprintf(sub, sizeof(sub), "%s/%s", out, BUNDLE_FLEET_META) ==
	    -1 || json_dump_file(meta, sub, JSON_INDENT(2)) == -1) {
		snprintf(err, errlen, "%s: %s", sub, strerror(errno));
		goto out;
	}
	rv = bundle_manifest_write(out, err, errlen);
out:
	json_decref(meta);
	json_decref(nodes);
	return rv;
}

int
bundle_is_fleet(const char *dir)
{
	char		 path[PATH_MAX];
	struct stat	 st;

	return xsnprintf(path, sizeof(path), "%s/%s", dir, BUNDLE_FLEET_META) !=
	    -1 && stat(path, &st) == 0;
}

/*
 * Which given key a node's bundle is checked with: the one whose id is
 * that of the bundle's own checkpoint.pub.  Only a choice: the bundle is
 * then verified with the given key, never with its own.
 */
static EVP_PKEY *
bundle_key_of(const char *sub, EVP_PKEY *const *keys, size_t nkeys)
{
	EVP_PKEY	*own;
	char		 path[PATH_MAX], id[KEY_ID_HEX + 1], err[512];
	int		 ok;

	if (xsnprintf(path, sizeof(path), "%s/%s", sub, BUNDLE_PUBKEY) == -1 ||
	    (own = ed25519_load_public(path, err, sizeof(err))) == NULL)
		return NULL;
	ok = ed25519_key_id(own, id) == 0;
	EVP_PKEY_free(own);
	return ok ? witness_key(keys, nkeys, id) : NULL;
}

/* Verifies each node's bundle with the key of its checkpoints. */
int
bundle_verify_fleet(const char *dir, EVP_PKEY *const *keys, size_t nkeys,
    char *msg, size_t msglen, char *warn, size_t warnlen)
{
	char		 path[PATH_MAX], one[PATH_MAX + 512], w[512];
	const char	*name;
	json_t		*meta = NULL, *nodes, *e;
	json_error_t	 je;
	EVP_PKEY	*key;
	size_t		 i, nb = 0;
	int		 rv = 1, r;

	warn[0] = '\0';
	if (bundle_manifest_check(dir, msg, msglen) == -1)
		return 1;
	if (xsnprintf(path, sizeof(path), "%s/%s", dir, BUNDLE_FLEET_META) ==
	    -1 || (meta = json_load_file(path, JSON_REJECT_DUPLICATES, &je)) ==
	    NULL || !json_is_string(json_object_get(meta, "format")) ||
	    strcmp(json_string_value(json_object_get(meta, "format")),
	    BUNDLE_FLEET_FORMAT) != 0 ||
	    !json_is_array(nodes = json_object_get(meta, "nodes"))) {
		snprintf(msg, msglen, "%s: not a %s description",
		    BUNDLE_FLEET_META, BUNDLE_FLEET_FORMAT);
		goto out;
	}
	json_array_foreach(nodes, i, e) {
		if ((name = json_string_value(json_object_get(e, "bundle"))) ==
		    NULL)
			continue;
		/* A name of the bundle's own: one folder below, no more. */
		if (strchr(name, '/') != NULL || name[0] == '.' ||
		    xsnprintf(path, sizeof(path), "%s/%s", dir, name) == -1) {
			snprintf(msg, msglen, "%s: bad bundle name",
			    BUNDLE_FLEET_META);
			goto out;
		}
		key = nkeys == 1 ? keys[0] : NULL;
		if (nkeys > 1 && (key = bundle_key_of(path, keys, nkeys)) ==
		    NULL) {
			snprintf(msg, msglen, "%s: signed by none of the given "
			    "keys", name);
			goto out;
		}
		r = bundle_verify(path, key, one, sizeof(one), w, sizeof(w));
		if (w[0] != '\0')
			snprintf(warn, warnlen, "%s: %s", name, w);
		if (r != 0) {
			snprintf(msg, msglen, "%s: %s", name, one);
			rv = r;
			goto out;
		}
		nb++;
	}
	if (nb == 0) {
		snprintf(msg, msglen, "%s names no node bundle",
		    BUNDLE_FLEET_META);
		goto out;
	}
	snprintf(msg, msglen, "fleet bundle intact: %zu node bundle(s) of %zu "
	    "node(s) verified", nb, json_array_size(nodes));
	rv = 0;
out:
	json_decref(meta);
	return rv;
}
