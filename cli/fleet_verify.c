/*
 * `stockade audit verify --fleet`: N nodes' logs checked against the
 * fleet witness, so that a node's log deleted or rolled back after its
 * checkpoint reached the witness is named, and so is a node the witness
 * knows whose log was not given.  Logs and witness are untrusted input.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fleet.h"
#include "util.h"
#include "verify.h"
#include "witness.h"

static int
fleet_usage(void)
{
	fprintf(stderr, "usage: stockade audit verify --fleet --witness DIR|FILE "
	    "[--witness ...]\n"
	    "                           [--pubkey FILE ...] [--json] "
	    "NODE-LOG-DIR ...\n"
	    "       stockade audit verify --fleet --bundle DIR|TAR "
	    "[--pubkey FILE ...]\n");
	return EXIT_USAGE;
}

/* One node's line, and its object in --json. */
static void
node_report(json_t *nodes, int json, const char *dir, const char *chain,
    const char *status, const struct verify_report *r,
    const struct witness_cp *wc)
{
	const char	*node = wc != NULL && wc->cp.node[0] != '\0' ?
			    wc->cp.node : "-";
	json_t		*o;

	o = json_pack("{s:s, s:s?, s:s, s:s}", "node", node, "dir", dir,
	    "chain_id", chain, "status", status);
	if (wc != NULL) {
		json_object_set_new(o, "witnessed_seq",
		    json_integer((json_int_t)wc->cp.seq));
		json_object_set_new(o, "witnessed_ts", json_string(wc->cp.ts));
		json_object_set_new(o, "witness", json_string(wc->src));
	}
	if (r != NULL && r->result == VERIFY_OK) {
		json_object_set_new(o, "records", json_integer(
		    (json_int_t)r->records));
		json_object_set_new(o, "first_seq", json_integer(
		    (json_int_t)r->first_seq));
		json_object_set_new(o, "last_seq", json_integer(
		    (json_int_t)r->last_seq));
		json_object_set_new(o, "head", json_string(r->head));
	} else if (r != NULL) {
		json_object_set_new(o, "where", json_string(r->where));
		json_object_set_new(o, "reason", json_string(r->reason));
	}
	json_array_append_new(nodes, o);
	if (json)
		return;
	printf("%s %s: %s", node, dir != NULL ? dir : "(no log given)", status);
	if (r != NULL && r->result == VERIFY_OK)
		printf(": %llu records (seq %llu..%llu), head %s",
		    (unsigned long long)r->records,
		    (unsigned long long)r->first_seq,
		    (unsigned long long)r->last_seq, r->head);
	else if (r != NULL)
		printf(": %s%s%s", r->where, r->where[0] ? ": " : "", r->reason);
	if (wc != NULL)
		printf("; witnessed up to seq %llu at %s",
		    (unsigned long long)wc->cp.seq, wc->cp.ts);
	else
		printf("; chain %s never reached the witness", chain);
	printf("\n");
}

/* Each log given, against what the witness saw of its chain. */
static int
verify_dirs(char **dirs, int ndirs, const struct witness *w,
    EVP_PKEY *const *keys, size_t nkeys, json_t *nodes, int json)
{
	struct verify_opts	 o;
	struct verify_report	 r;
	const struct witness_cp	*wc;
	const char		*status;
	char			 chain[CHAIN_ID_HEX + 1];
	int			 i, bad = 0;

	for (i = 0; i < ndirs; i++) {
		memset(&o, 0, sizeof(o));
		memset(&r, 0, sizeof(r));
		o.witness = w;
		if (fleet_chain_of(dirs[i], chain) == -1) {
			/* No readable first record: nothing names a chain. */
			snprintf(r.reason, sizeof(r.reason), "no readable audit "
			    "log (audit-*.log) to name its chain");
			r.result = VERIFY_ERROR;
			node_report(nodes, json, dirs[i], "", "unreadable", &r,
			    NULL);
			bad = 1;
			continue;
		}
		wc = fleet_witnessed(w, chain);
		o.pubkey = nkeys == 1 ? keys[0] : wc != NULL ?
		    witness_key(keys, nkeys, wc->cp.key_id) : NULL;
		if (nkeys > 0 && o.pubkey == NULL)
			o.pubkey = keys[0];	/* then fails, and says which */
		switch (verify_dir(dirs[i], &o, &r)) {
		case VERIFY_OK:
			status = wc != NULL ? "intact" : "unwitnessed";
			break;
		case VERIFY_TAMPERED:
			status = r.truncated ? "truncated" : "tampered";
			break;
		default:
			status = "unreadable";
			break;
		}
		if (strcmp(status, "intact") != 0)
			bad = 1;
		node_report(nodes, json, dirs[i], chain, status, &r, wc);
	}
	return bad;
}

/* Chains the witness holds that no given log continues. */
static int
report_missing(char **dirs, int ndirs, const struct witness *w,
    json_t *nodes, int json)
{
	const struct witness_cp	*wc;
	char			 chain[CHAIN_ID_HEX + 1];
	size_t			 i, k;
	int			 d, found, bad = 0;

	for (i = 0; i < w->n; i++) {
		/* Once per chain: at its first checkpoint in the witness. */
		for (k = 0; k < i; k++)
			if (strcmp(w->cps[k].cp.chain_id,
			    w->cps[i].cp.chain_id) == 0)
				break;
		if (k < i)
			continue;
		for (d = 0, found = 0; d < ndirs && !found; d++)
			found = fleet_chain_of(dirs[d], chain) == 0 &&
			    strcmp(chain, w->cps[i].cp.chain_id) == 0;
		if (found)
			continue;
		wc = fleet_witnessed(w, w->cps[i].cp.chain_id);
		node_report(nodes, json, NULL, wc->cp.chain_id, "missing", NULL,
		    wc);
		bad = 1;
	}
	return bad;
}

int
audit_verify_fleet(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "fleet", no_argument, NULL, 'f' },
		{ "witness", required_argument, NULL, 'w' },
		{ "pubkey", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "bundle", no_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 }
	};
	struct witness	 w;
	EVP_PKEY	*keys[WITNESS_KEYS_MAX];
	const char	*wpaths[WITNESS_KEYS_MAX];
	size_t		 nkeys = 0, nw = 0, i;
	json_t		*nodes = NULL, *top;
	char		 err[PATH_MAX + 512];
	int		 ch, json = 0, bundle = 0, bad, rv = EXIT_USAGE;

	witness_init(&w);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			break;
		case 'w':
			if (nw == nitems(wpaths))
				goto usage;
			wpaths[nw++] = optarg;
			break;
		case 'p':
			if (nkeys == nitems(keys))
				goto usage;
			if ((keys[nkeys] = ed25519_load_public(optarg, err,
			    sizeof(err))) == NULL) {
				fprintf(stderr, "stockade: %s\n", err);
				goto out;
			}
			nkeys++;
			break;
		case 'j':
			json = 1;
			break;
		case 'b':
			bundle = 1;
			break;
		default:
			goto usage;
		}
	}
	if (bundle) {
		/* A fleet bundle, its nodes' bundles checked with their keys. */
		if (nw > 0 || json || optind != argc - 1)
			goto usage;
		rv = audit_verify_bundle(argv[optind], keys, nkeys);
		goto out;
	}
	if (nw == 0)
		goto usage;
	for (i = 0; i < nw; i++)
		if (witness_load(&w, wpaths[i], keys, nkeys, err,
		    sizeof(err)) == -1) {
			/* A witness that does not read, or holds a forgery. */
			fprintf(stderr, "stockade: witness: %s\n", err);
			rv = EXIT_NEGATIVE;
			goto out;
		}
	nodes = json_array();
	bad = verify_dirs(argv + optind, argc - optind, &w, keys, nkeys, nodes,
	    json);
	bad |= report_missing(argv + optind, argc - optind, &w, nodes, json);
	if (json) {
		top = json_pack("{s:b, s:I, s:s, s:O}", "ok", !bad,
		    "witness_checkpoints", (json_int_t)w.n, "signatures",
		    nkeys > 0 ? "checked" : "not checked (no --pubkey)",
		    "nodes", nodes);
		json_dumpf(top, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		printf("\n");
		json_decref(top);
	} else
		printf("fleet trail %s: %zu node(s), %zu witnessed "
		    "checkpoint(s)%s\n", bad ? "NOT proven complete" :
		    "complete", json_array_size(nodes), w.n, nkeys > 0 ? "" :
		    "; signatures not checked (no --pubkey)");
	rv = bad ? EXIT_NEGATIVE : 0;
	goto out;
usage:
	rv = fleet_usage();
out:
	json_decref(nodes);
	for (i = 0; i < nkeys; i++)
		EVP_PKEY_free(keys[i]);
	witness_free(&w);
	return rv;
}
