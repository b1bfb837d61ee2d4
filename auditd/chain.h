/*
 * The audit log's record format and hash chain.  One record is one line:
 *
 *   {"seq":N,"prev":"<64 hex>","ts":"<24>","event":"NAME","peer":{...},
 *    <fields>,"hash":"<64 hex>"}\n
 *
 * hash = SHA-256(previous hash, 32 raw bytes ‖ every byte of the line
 * before ,"hash":).  The tail after the hashed prefix has a fixed length, so
 * a verifier finds and checks the hash without parsing or re-serializing
 * JSON.  docs/audit-events.md describes the format byte for byte.
 */
#ifndef STOCKADE_CHAIN_H
#define STOCKADE_CHAIN_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "buf.h"
#include "frame.h"
#include "hash.h"

#define CHAIN_TAIL		",\"hash\":\""
#define CHAIN_TAIL_LEN		(sizeof(CHAIN_TAIL) - 1 + SHA256_HEX + 3)
#define CHAIN_EVENT_NAME_MAX	64
#define CHAIN_ID_HEX		32	/* 128 random bits */

struct chain {
	uint64_t		seq;		/* last record's seq, 0: none */
	uint8_t			hash[SHA256_LEN];	/* last record's hash */
	struct sha256_ctx	ctx;
};

/*
 * The fixed fields of one line, parsed in place (pointers into the line).
 * prev and hash hold binary values only after chain_check_line succeeded
 * or chain_line_decode was called.
 */
struct chain_line {
	uint64_t	 seq;
	const char	*prev_hex;		/* SHA256_HEX bytes */
	const char	*hash_hex;
	uint8_t		 prev[SHA256_LEN];
	uint8_t		 hash[SHA256_LEN];
	const char	*ts;			/* TS_LEN bytes */
	const char	*event;
	size_t		 eventlen;
	size_t		 hashed_len;		/* bytes covered by the hash */
};

void	chain_init(struct chain *);
void	chain_free(struct chain *);
void	chain_set_head(struct chain *, uint64_t seq, const uint8_t hash[SHA256_LEN]);

/* [a-z][a-z0-9_]{0,63} */
int	chain_event_name_ok(const char *);

/*
 * Appends the next record to out and advances the chain.  fields must be
 * an object without the reserved keys (seq, prev, ts, event, peer, hash);
 * its members are written in order, ASCII-only.  Fails, changing nothing,
 * when the line would exceed maxline or out's ceiling.
 */
int	chain_append(struct chain *, const char *ts, const char *event,
	    const struct peer *, const json_t *fields, size_t maxline,
	    struct buf *out);

/*
 * Parses the fixed fields of a line (without its '\n').  Returns 0, or -1
 * with *why set to a static reason.  Does not check the hash.
 */
int	chain_parse(const char *line, size_t len, struct chain_line *,
	    const char **why);
/* Decodes prev and hash; -1 when either is not lowercase hex. */
int	chain_line_decode(struct chain_line *);
/* 1 when the line's hash is SHA-256(its prev ‖ its hashed prefix). */
int	chain_hash_ok(struct sha256_ctx *, const char *line,
	    const struct chain_line *);

enum chain_check {
	CHAIN_OK,
	CHAIN_MALFORMED,	/* see *why */
	CHAIN_BAD_SEQ,		/* not the seq that follows the previous record */
	CHAIN_BAD_PREV,		/* prev is not the previous record's hash */
	CHAIN_BAD_HASH,		/* the record's bytes were altered */
};

/*
 * Parses a line and checks it against the chain so far: expect_seq 0 and
 * expect_prev NULL accept any position (the first record a scan sees).
 */
enum chain_check chain_check_line(struct sha256_ctx *, const char *line,
	    size_t len, uint64_t expect_seq, const uint8_t *expect_prev,
	    struct chain_line *, const char **why);
/* A sentence for a failed check, e.g. "seq 7 where 6 was expected". */
void	chain_check_reason(enum chain_check, const struct chain_line *,
	    uint64_t expect_seq, const char *why, char *out, size_t outlen);

/* Reserved top-level keys a writer may not send. */
int	chain_key_reserved(const char *);

#endif
