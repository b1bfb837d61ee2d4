/*
 * `stockade fleet status`: the fleet at a glance from outside any node.
 * The nodes are those the witness knows (each chain's newest checkpoint),
 * with each log given its head and each mcp-exec state folder given its
 * live sessions, matched by chain id and by node id.  Nothing here
 * verifies: `stockade audit verify --fleet` does.  Files are untrusted.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fleet.h"
#include "util.h"
#include "witness.h"

#define FLEET_ARGS_MAX		256

static int
fleet_usage(void)
{
	fprintf(stderr, "usage: stockade fleet status --witness DIR|FILE ... "
	    "[--log DIR ...]\n"
	    "                           [--mcp-state DIR ...] [--json]\n");
	return EXIT_USAGE;
}

/* The node's entry in nodes, made when new. */
static json_t *
node_get(json_t *nodes, const char *node)
{
	json_t	*o;

	if ((o = json_object_get(nodes, node)) == NULL) {
		o = json_object();
		json_object_set_new(nodes, node, o);
	}
	return o;
}

/* Each chain of the witness: its node and its newest checkpoint. */
static void
add_witness(json_t *nodes, const struct witness *w)
{
	const struct witness_cp	*wc;
	json_t			*o;
	size_t			 i;

	for (i = 0; i < w->n; i++) {
		wc = fleet_witnessed(w, w->cps[i].cp.chain_id);
		if (wc != &w->cps[i])
			continue;	/* once per chain, at its newest */
		o = node_get(nodes, wc->cp.node[0] ? wc->cp.node : "-");
		/* A node with several chains (a log replaced): the newest. */
		if (json_object_get(o, "witnessed_ts") != NULL &&
		    strcmp(json_string_value(json_object_get(o,
		    "witnessed_ts")), wc->cp.ts) > 0)
			continue;
		json_object_set_new(o, "chain_id", json_string(wc->cp.chain_id));
		json_object_set_new(o, "witnessed_seq",
		    json_integer((json_int_t)wc->cp.seq));
		json_object_set_new(o, "witnessed_ts", json_string(wc->cp.ts));
	}
}

/* A log's head (its last record, unverified), under its chain's node. */
static void
add_log(json_t *nodes, const struct witness *w, const char *dir)
{
	const struct witness_cp	*wc;
	char			 chain[CHAIN_ID_HEX + 1], *data;
	const char		*node = NULL;
	size_t			 len;
	json_t			*rec = NULL, *o;

	if (fleet_chain_of(dir, chain) == -1 ||
	    fleet_newest(dir, &data, &len) == -1) {
		o = node_get(nodes, dir);
		json_object_set_new(o, "log_error", json_string("no readable "
		    "audit log"));
		return;
	}
	(void)fleet_last_line(data, len, NULL, &rec);
	free(data);
	if ((wc = fleet_witnessed(w, chain)) != NULL && wc->cp.node[0])
		node = wc->cp.node;
	o = node_get(nodes, node != NULL ? node : dir);
	json_object_set_new(o, "log_dir", json_string(dir));
	json_object_set_new(o, "log_chain_id", json_string(chain));
	if (rec != NULL) {
		json_object_set(o, "head_seq", json_object_get(rec, "seq"));
		json_object_set(o, "head_ts", json_object_get(rec, "ts"));
		json_object_set(o, "head_hash", json_object_get(rec, "hash"));
	}
	json_decref(rec);
}

/* The live sessions an mcp-exec state folder's servers publish. */
static void
add_state(json_t *nodes, const char *dir)
{
	const char	*node;
	json_t		*servers, *st, *o;
	size_t		 i;

	servers = status_mcp_servers(dir);
	json_array_foreach(servers, i, st) {
		node = json_string_value(json_object_get(st, "node"));
		o = node_get(nodes, node != NULL ? node : dir);
		json_object_set_new(o, "sessions", json_integer(
		    json_integer_value(json_object_get(o, "sessions")) +
		    (json_int_t)json_array_size(json_object_get(st,
		    "sessions"))));
		json_object_set_new(o, "mcp_state", json_string(dir));
	}
	json_decref(servers);
}

static void
print_nodes(const json_t *nodes)
{
	const char	*name;
	json_t		*o;

	json_object_foreach((json_t *)nodes, name, o) {
		printf("%s", name);
		if (json_object_get(o, "witnessed_seq") != NULL)
			printf("  witnessed seq %lld at %s",
			    (long long)json_integer_value(json_object_get(o,
			    "witnessed_seq")), json_string_value(
			    json_object_get(o, "witnessed_ts")));
		else
			printf("  never witnessed");
		if (json_object_get(o, "head_seq") != NULL)
			printf("; log head seq %lld at %s",
			    (long long)json_integer_value(json_object_get(o,
			    "head_seq")), json_string_value(json_object_get(o,
			    "head_ts")) ? json_string_value(json_object_get(o,
			    "head_ts")) : "-");
		if (json_object_get(o, "log_error") != NULL)
			printf("; log: %s", json_string_value(json_object_get(o,
			    "log_error")));
		if (json_object_get(o, "sessions") != NULL)
			printf("; %lld live session(s)", (long long)
			    json_integer_value(json_object_get(o, "sessions")));
		printf("\n");
	}
}

static int
fleet_status(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "witness", required_argument, NULL, 'w' },
		{ "log", required_argument, NULL, 'l' },
		{ "mcp-state", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 }
	};
	struct witness	 w;
	const char	*wp[FLEET_ARGS_MAX], *lp[FLEET_ARGS_MAX];
	const char	*mp[FLEET_ARGS_MAX];
	size_t		 nw = 0, nl = 0, nm = 0, i;
	json_t		*nodes = json_object(), *top;
	char		 err[PATH_MAX + 512];
	int		 ch, json = 0, rv = EXIT_USAGE;

	witness_init(&w);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if ((ch == 'w' && nw == nitems(wp)) || (ch == 'l' &&
		    nl == nitems(lp)) || (ch == 'm' && nm == nitems(mp)))
			goto usage;
		switch (ch) {
		case 'w': wp[nw++] = optarg; break;
		case 'l': lp[nl++] = optarg; break;
		case 'm': mp[nm++] = optarg; break;
		case 'j': json = 1; break;
		default: goto usage;
		}
	}
	if (nw == 0 || optind != argc)
		goto usage;
	for (i = 0; i < nw; i++)
		if (witness_load(&w, wp[i], NULL, 0, err, sizeof(err)) == -1) {
			fprintf(stderr, "stockade: witness: %s\n", err);
			rv = EXIT_NEGATIVE;
			goto out;
		}
	add_witness(nodes, &w);
	for (i = 0; i < nl; i++)
		add_log(nodes, &w, lp[i]);
	for (i = 0; i < nm; i++)
		add_state(nodes, mp[i]);
	if (json) {
		top = json_pack("{s:O, s:s}", "nodes", nodes, "note", "unverified:"
		    " stockade audit verify --fleet proves the trail");
		json_dumpf(top, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		printf("\n");
		json_decref(top);
	} else {
		print_nodes(nodes);
		printf("%zu node(s); heads and checkpoints not verified (stockade "
		    "audit verify --fleet)\n", json_object_size(nodes));
	}
	rv = 0;
	goto out;
usage:
	rv = fleet_usage();
out:
	json_decref(nodes);
	witness_free(&w);
	return rv;
}

int
cmd_fleet(int argc, char *argv[])
{
	if (argc >= 2 && strcmp(argv[1], "status") == 0)
		return fleet_status(argc - 1, argv + 1);
	return fleet_usage();
}
