/*
 * Checkpoint statements.  The signed message is a fixed text, so signing
 * and verifying never depend on how JSON happens to be serialized.  Input
 * parsed here comes from log files and off-host copies: untrusted.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "checkpoint.h"
#include "hash.h"
#include "util.h"

int
checkpoint_message(const struct checkpoint *cp, char *out, size_t outlen)
{
	char	 hex[SHA256_HEX + 1];
	int	 n;

	hex_encode(cp->hash, SHA256_LEN, hex);
	n = snprintf(out, outlen, "stockade-checkpoint-v1\nchain=%s\n"
	    "seq=%" PRIu64 "\nhash=%s\nts=%s\n", cp->chain_id, cp->seq, hex,
	    cp->ts);
	if (n < 0 || (size_t)n >= outlen)
		return -1;
	return n;
}

int
checkpoint_sign(struct checkpoint *cp, EVP_PKEY *key)
{
	char	 msg[CHECKPOINT_MSG_MAX];
	int	 n;

	if ((n = checkpoint_message(cp, msg, sizeof(msg))) == -1 ||
	    ed25519_key_id(key, cp->key_id) == -1)
		return -1;
	return ed25519_sign(key, msg, (size_t)n, cp->sig);
}

int
checkpoint_verify(const struct checkpoint *cp, EVP_PKEY *pub)
{
	char	 msg[CHECKPOINT_MSG_MAX], id[KEY_ID_HEX + 1];
	int	 n;

	if ((n = checkpoint_message(cp, msg, sizeof(msg))) == -1 ||
	    ed25519_key_id(pub, id) == -1 || strcmp(id, cp->key_id) != 0)
		return 0;
	return ed25519_verify(pub, msg, (size_t)n, cp->sig);
}

int
checkpoint_node_ok(const char *s)
{
	size_t	 n = strlen(s);

	return n > 0 && n < CHECKPOINT_NODE_MAX &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n &&
	    s[0] != '-' && s[n - 1] != '-';
}

static json_t *
checkpoint_json(const struct checkpoint *cp, const char *seqkey,
    const char *hashkey, const char *tskey)
{
	char	 hex[SHA256_HEX + 1], sig[ED25519_SIG_B64 + 1];

	hex_encode(cp->hash, SHA256_LEN, hex);
	base64_encode(cp->sig, ED25519_SIG_LEN, sig);
	return json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:s*}",
	    "chain_id", cp->chain_id, seqkey, (json_int_t)cp->seq,
	    hashkey, hex, tskey, cp->ts, "key_id", cp->key_id, "sig", sig,
	    "node", cp->node[0] != '\0' ? cp->node : NULL);
}

json_t *
checkpoint_record(const struct checkpoint *cp)
{
	return checkpoint_json(cp, "cp_seq", "cp_hash", "cp_ts");
}

int
checkpoint_line(const struct checkpoint *cp, struct buf *out)
{
	json_t	*j;
	char	*s;
	int	 rv = -1;

	if ((j = checkpoint_json(cp, "seq", "hash", "ts")) == NULL)
		return -1;
	if ((s = json_dumps(j, JSON_COMPACT)) != NULL &&
	    buf_add(out, s, strlen(s)) == 0 && buf_add(out, "\n", 1) == 0)
		rv = 0;
	free(s);
	json_decref(j);
	return rv;
}

static int
copy_hex_id(const char *s, size_t want, char *out)
{
	if (s == NULL || strlen(s) != want || !hex_lower(s, want))
		return -1;
	memcpy(out, s, want + 1);
	return 0;
}

static int
checkpoint_parse(const json_t *j, const char *seqkey, const char *hashkey,
    const char *tskey, struct checkpoint *cp, const char **why)
{
	const char	*chain, *hash, *ts, *kid, *sig, *node = NULL;
	uint8_t		 raw[ED25519_SIG_LEN + 2];
	json_int_t	 seq;
	json_error_t	 je;

	if (json_unpack_ex((json_t *)j, &je, 0,
	    "{s:s, s:I, s:s, s:s, s:s, s:s, s?s}", "chain_id", &chain, seqkey,
	    &seq, hashkey, &hash, tskey, &ts, "key_id", &kid, "sig", &sig,
	    "node", &node) == -1) {
		*why = "checkpoint fields missing or of the wrong type";
		return -1;
	}
	if (node != NULL && !checkpoint_node_ok(node)) {
		*why = "malformed checkpoint node";
		return -1;
	}
	snprintf(cp->node, sizeof(cp->node), "%s", node != NULL ? node : "");
	if (copy_hex_id(chain, CHAIN_ID_HEX, cp->chain_id) == -1 ||
	    copy_hex_id(kid, KEY_ID_HEX, cp->key_id) == -1) {
		*why = "malformed checkpoint chain_id or key_id";
		return -1;
	}
	if (seq <= 0 || strlen(hash) != SHA256_HEX ||
	    hex_decode(hash, SHA256_HEX, cp->hash) == -1 ||
	    strlen(ts) != TS_LEN || strlen(sig) != ED25519_SIG_B64 ||
	    base64_decode(sig, ED25519_SIG_B64, raw, sizeof(raw)) !=
	    ED25519_SIG_LEN) {
		*why = "malformed checkpoint seq, hash, ts or sig";
		return -1;
	}
	memcpy(cp->sig, raw, ED25519_SIG_LEN);
	cp->seq = (uint64_t)seq;
	memcpy(cp->ts, ts, TS_LEN + 1);
	return 0;
}

int
checkpoint_from_record(const json_t *j, struct checkpoint *cp,
    const char **why)
{
	return checkpoint_parse(j, "cp_seq", "cp_hash", "cp_ts", cp, why);
}

int
checkpoint_from_line(const char *line, size_t len, struct checkpoint *cp,
    const char **why)
{
	json_t	*j;
	int	 rv;

	if ((j = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL)) == NULL) {
		*why = "checkpoint line is not valid JSON";
		return -1;
	}
	rv = checkpoint_parse(j, "seq", "hash", "ts", cp, why);
	json_decref(j);
	return rv;
}
