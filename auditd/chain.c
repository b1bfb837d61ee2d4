/*
 * Record formatting and parsing for the hash-chained log.  chain_append
 * runs on trusted, already-validated events; chain_parse runs on whatever
 * is in a file and trusts none of it.
 */
#include <stdio.h>
#include <string.h>

#include "chain.h"
#include "util.h"

static const char *const reserved_keys[] = {
	"seq", "prev", "ts", "event", "peer", "hash", NULL
};

void
chain_init(struct chain *c)
{
	memset(c, 0, sizeof(*c));
	sha256_ctx_init(&c->ctx);
}

void
chain_free(struct chain *c)
{
	sha256_ctx_free(&c->ctx);
}

void
chain_set_head(struct chain *c, uint64_t seq, const uint8_t hash[SHA256_LEN])
{
	c->seq = seq;
	memcpy(c->hash, hash, SHA256_LEN);
}

int
chain_key_reserved(const char *k)
{
	size_t	 i;

	for (i = 0; reserved_keys[i] != NULL; i++)
		if (strcmp(k, reserved_keys[i]) == 0)
			return 1;
	return 0;
}

int
chain_event_name_ok(const char *s)
{
	size_t	 i;

	if (s[0] < 'a' || s[0] > 'z')
		return 0;
	for (i = 1; s[i] != '\0'; i++) {
		if (i >= CHAIN_EVENT_NAME_MAX)
			return 0;
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	}
	return 1;
}

/* The fixed fields before the event's own: well under this. */
#define CHAIN_HEAD_MAX	(256 + CHAIN_EVENT_NAME_MAX)

static int
dump_to_buf(const char *p, size_t n, void *arg)
{
	return buf_add(arg, p, n);
}

int
chain_append(struct chain *c, const char *ts, const char *event,
    const struct peer *peer, const json_t *fields, size_t maxline,
    struct buf *out)
{
	const size_t	 start = out->len;
	char		 prevhex[SHA256_HEX + 1], hashhex[SHA256_HEX + 1];
	char		 head[CHAIN_HEAD_MAX];
	uint8_t		 md[SHA256_LEN];
	size_t		 body, hashed;
	int		 n;

	if (!chain_event_name_ok(event) || strlen(ts) != TS_LEN)
		return -1;
	hex_encode(c->hash, SHA256_LEN, prevhex);
	n = snprintf(head, sizeof(head), "{\"seq\":%llu,\"prev\":\"%s\","
	    "\"ts\":\"%s\",\"event\":\"%s\",\"peer\":{\"uid\":%lu,"
	    "\"pid\":%ld}", (unsigned long long)(c->seq + 1), prevhex, ts,
	    event, (unsigned long)peer->uid, (long)peer->pid);
	if (n < 0 || (size_t)n >= sizeof(head) ||
	    buf_add(out, head, (size_t)n) == -1)
		goto fail;
	/* Members of fields, without the braces: dump "{...}", then turn
	 * the "{" into the separating "," and drop the "}". */
	body = out->len;
	if (json_dump_callback(fields, dump_to_buf, out,
	    JSON_COMPACT | JSON_ENSURE_ASCII) == -1 || out->len - body < 2)
		goto fail;
	if (out->len - body == 2)
		out->len = body;
	else {
		out->data[body] = ',';
		out->len--;
	}
	hashed = out->len - start;
	sha256_pair(&c->ctx, c->hash, SHA256_LEN, out->data + start, hashed, md);
	hex_encode(md, SHA256_LEN, hashhex);
	if (out->len - start + CHAIN_TAIL_LEN > maxline ||
	    buf_add(out, CHAIN_TAIL, sizeof(CHAIN_TAIL) - 1) == -1 ||
	    buf_add(out, hashhex, SHA256_HEX) == -1 ||
	    buf_add(out, "\"}\n", 3) == -1)
		goto fail;
	c->seq++;
	memcpy(c->hash, md, SHA256_LEN);
	return 0;
fail:
	out->len = start;
	return -1;
}

/* Expects the literal lit at *p, advancing past it. */
static int
expect(const char **p, const char *end, const char *lit)
{
	size_t	 n = strlen(lit);

	if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
		return -1;
	*p += n;
	return 0;
}

int
chain_parse(const char *line, size_t len, struct chain_line *cl,
    const char **why)
{
	const char	*p = line, *end = line + len, *tail;
	uint64_t	 seq = 0;
	size_t		 digits = 0;

	if (len < CHAIN_TAIL_LEN + 1) {
		*why = "line too short";
		return -1;
	}
	if (expect(&p, end, "{\"seq\":") == -1) {
		*why = "line does not start with {\"seq\":";
		return -1;
	}
	for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
		if (digits == 20 || seq > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) {
			*why = "seq out of range";
			return -1;
		}
		seq = seq * 10 + (uint64_t)(*p - '0');
	}
	if (digits == 0 || (digits > 1 && line[7] == '0') || seq == 0) {
		*why = "malformed seq";
		return -1;
	}
	if (expect(&p, end, ",\"prev\":\"") == -1 || end - p < SHA256_HEX) {
		*why = "malformed prev";
		return -1;
	}
	cl->prev_hex = p;
	p += SHA256_HEX;
	if (expect(&p, end, "\",\"ts\":\"") == -1 || end - p < TS_LEN) {
		*why = "malformed ts";
		return -1;
	}
	cl->ts = p;
	p += TS_LEN;
	if (expect(&p, end, "\",\"event\":\"") == -1) {
		*why = "malformed event";
		return -1;
	}
	cl->event = p;
	while (p < end && ((*p >= 'a' && *p <= 'z') ||
	    (*p >= '0' && *p <= '9') || *p == '_'))
		p++;
	cl->eventlen = (size_t)(p - cl->event);
	if (cl->eventlen == 0 || cl->eventlen >= CHAIN_EVENT_NAME_MAX ||
	    expect(&p, end, "\",\"peer\":{") == -1) {
		*why = "malformed event";
		return -1;
	}
	tail = end - CHAIN_TAIL_LEN + 1;	/* the line has no '\n' here */
	if (tail < p || memcmp(tail, CHAIN_TAIL, sizeof(CHAIN_TAIL) - 1) != 0 ||
	    memcmp(end - 2, "\"}", 2) != 0) {
		*why = "malformed hash field";
		return -1;
	}
	cl->hash_hex = tail + sizeof(CHAIN_TAIL) - 1;
	cl->seq = seq;
	cl->hashed_len = (size_t)(tail - line);
	return 0;
}

int
chain_line_decode(struct chain_line *cl)
{
	if (hex_decode(cl->prev_hex, SHA256_HEX, cl->prev) == -1 ||
	    hex_decode(cl->hash_hex, SHA256_HEX, cl->hash) == -1)
		return -1;
	return 0;
}

int
chain_hash_ok(struct sha256_ctx *ctx, const char *line,
    const struct chain_line *cl)
{
	struct chain_line	 c = *cl;
	uint8_t			 md[SHA256_LEN];

	if (chain_line_decode(&c) == -1)
		return 0;
	sha256_pair(ctx, c.prev, SHA256_LEN, line, c.hashed_len, md);
	return memcmp(md, c.hash, SHA256_LEN) == 0;
}

/*
 * The hot path of verification: hex is encoded and compared rather than
 * decoded, since the binary values are already known from the line before.
 */
enum chain_check
chain_check_line(struct sha256_ctx *ctx, const char *line, size_t len,
    uint64_t expect_seq, const uint8_t *expect_prev, struct chain_line *cl,
    const char **why)
{
	char	 hex[SHA256_HEX + 1];

	if (chain_parse(line, len, cl, why) == -1)
		return CHAIN_MALFORMED;
	if (expect_seq != 0 && cl->seq != expect_seq)
		return CHAIN_BAD_SEQ;
	if (expect_prev != NULL) {
		hex_encode(expect_prev, SHA256_LEN, hex);
		if (memcmp(cl->prev_hex, hex, SHA256_HEX) != 0)
			return CHAIN_BAD_PREV;
		memcpy(cl->prev, expect_prev, SHA256_LEN);
	} else if (hex_decode(cl->prev_hex, SHA256_HEX, cl->prev) == -1) {
		*why = "malformed prev";
		return CHAIN_MALFORMED;
	}
	sha256_pair(ctx, cl->prev, SHA256_LEN, line, cl->hashed_len, cl->hash);
	hex_encode(cl->hash, SHA256_LEN, hex);
	if (memcmp(cl->hash_hex, hex, SHA256_HEX) != 0)
		return CHAIN_BAD_HASH;
	return CHAIN_OK;
}

void
chain_check_reason(enum chain_check r, const struct chain_line *cl,
    uint64_t expect_seq, const char *why, char *out, size_t outlen)
{
	switch (r) {
	case CHAIN_OK:
		snprintf(out, outlen, "ok");
		break;
	case CHAIN_MALFORMED:
		snprintf(out, outlen, "malformed record: %s", why);
		break;
	case CHAIN_BAD_SEQ:
		if (cl->seq < expect_seq)
			snprintf(out, outlen, "seq %llu repeated or out of order "
			    "(expected %llu): a record was duplicated, swapped "
			    "or replayed", (unsigned long long)cl->seq,
			    (unsigned long long)expect_seq);
		else
			snprintf(out, outlen, "seq %llu where %llu was expected: "
			    "%llu record(s) missing", (unsigned long long)cl->seq,
			    (unsigned long long)expect_seq,
			    (unsigned long long)(cl->seq - expect_seq));
		break;
	case CHAIN_BAD_PREV:
		snprintf(out, outlen, "prev does not match the hash of the "
		    "previous record: the chain is broken here");
		break;
	case CHAIN_BAD_HASH:
		snprintf(out, outlen, "hash mismatch: the record was altered");
		break;
	}
}
