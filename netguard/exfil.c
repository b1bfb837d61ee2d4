/*
 * DNS tunnelling score.  Trusts nothing in the name (the sandbox chose
 * it); all arithmetic is integer and all state is fixed-size, so a
 * flood of names costs a bounded table, never memory.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "exfil.h"
#include "hash.h"
#include "util.h"

#define EXFIL_DOMAINS_MAX	32	/* per client, least recent out */
#define EXFIL_NAMES_MAX		128	/* per domain: > EXFIL_UNIQUE_MAX */
#define EXFIL_SALT_LEN		16
#define EXFIL_NAME_BUF		1024	/* hashed of a name, at most */

#define QTYPE_NULL		10
#define QTYPE_TXT		16
#define QTYPE_ANY		255

/* One name seen under a domain: its salted hash and when it was last seen. */
struct exfil_seen {
	uint64_t	 hash;
	uint64_t	 at_ms;
};

struct exfil_domain {
	bool			 used;
	uint64_t		 key;
	uint64_t		 last_ms;
	size_t			 nseen;
	struct exfil_seen	 seen[EXFIL_NAMES_MAX];
};

struct exfil_state {
	/* Salted so that a sandbox cannot precompute names that collide
	 * and so count as one. */
	uint8_t			 salt[EXFIL_SALT_LEN];
	struct exfil_domain	 domains[EXFIL_DOMAINS_MAX];
};

static const char *const exfil_names[] = {
	"long_name", "long_label", "entropy", "rare_type", "unique_rate",
};

struct exfil_state *
exfil_new(void)
{
	struct exfil_state	*st = xcalloc(1, sizeof(*st));

	arc4random_buf(st->salt, sizeof(st->salt));
	return st;
}

void
exfil_free(struct exfil_state *st)
{
	free(st);
}

const char *
exfil_signal_name(unsigned bit)
{
	size_t	 i;

	for (i = 0; i < nitems(exfil_names); i++)
		if (bit == 1U << i)
			return exfil_names[i];
	return NULL;
}

/*
 * log2(x) in 16.16 fixed point, x >= 1: the integer part from the top
 * bit, then one fractional bit per squaring of the mantissa.
 */
static uint64_t
exfil_log2_q16(uint32_t x)
{
	uint64_t	 y, r;
	unsigned	 ip = 31 - (unsigned)__builtin_clz(x), bit;

	r = (uint64_t)ip << 16;
	y = ((uint64_t)x << 30) >> ip;	/* mantissa in [1, 2), Q30 */
	for (bit = 1U << 15; bit != 0; bit >>= 1) {
		y = (y * y) >> 30;
		if (y >= (uint64_t)2 << 30) {
			y >>= 1;
			r |= bit;
		}
	}
	return r;
}

unsigned
exfil_entropy(const char *s, size_t len)
{
	uint32_t	 counts[256] = { 0 };
	uint64_t	 sum = 0, h;
	size_t		 i, n = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == '.')
			continue;
		counts[(unsigned char)s[i]]++;
		n++;
	}
	if (n < 2 || n > UINT32_MAX)
		return 0;
	/* H = log2(n) - sum(c log2 c) / n */
	for (i = 0; i < nitems(counts); i++)
		if (counts[i] > 1)
			sum += counts[i] * exfil_log2_q16(counts[i]);
	h = exfil_log2_q16((uint32_t)n) - sum / n;
	return (unsigned)((h * 1000 + (1 << 15)) >> 16);
}

static uint64_t
exfil_hash(const struct exfil_state *st, const char *s, size_t len)
{
	uint8_t		 buf[EXFIL_SALT_LEN + EXFIL_NAME_BUF];
	uint8_t		 md[SHA256_LEN];
	uint64_t	 h;

	if (len > EXFIL_NAME_BUF)
		len = EXFIL_NAME_BUF;
	memcpy(buf, st->salt, EXFIL_SALT_LEN);
	memcpy(buf + EXFIL_SALT_LEN, s, len);
	sha256(buf, EXFIL_SALT_LEN + len, md);
	memcpy(&h, md, sizeof(h));
	return h;
}

/* The domain's slot; a new one evicts the least recently used. */
static struct exfil_domain *
exfil_domain(struct exfil_state *st, uint64_t key, uint64_t now_ms)
{
	struct exfil_domain	*d, *victim = NULL;
	size_t			 i;

	for (i = 0; i < EXFIL_DOMAINS_MAX; i++) {
		d = &st->domains[i];
		if (d->used && d->key == key)
			return d;
		if (victim == NULL || !d->used ||
		    (victim->used && d->last_ms < victim->last_ms))
			victim = d;
	}
	memset(victim, 0, sizeof(*victim));
	victim->used = true;
	victim->key = key;
	victim->last_ms = now_ms;
	return victim;
}

/*
 * Records name under domain and returns how many different names the
 * domain saw in the last EXFIL_WINDOW_MS (at most EXFIL_NAMES_MAX).
 */
static size_t
exfil_record(struct exfil_state *st, const char *name, const char *domain,
    uint64_t now_ms)
{
	struct exfil_domain	*d;
	uint64_t		 h;
	size_t			 i, j, oldest = 0;

	d = exfil_domain(st, exfil_hash(st, domain, strlen(domain)), now_ms);
	d->last_ms = now_ms;
	for (i = j = 0; i < d->nseen; i++) {
		/* A clock that went back keeps the entry rather than wrap. */
		if (now_ms >= d->seen[i].at_ms &&
		    now_ms - d->seen[i].at_ms >= EXFIL_WINDOW_MS)
			continue;
		d->seen[j++] = d->seen[i];
	}
	d->nseen = j;
	h = exfil_hash(st, name, strlen(name));
	for (i = 0; i < d->nseen; i++) {
		if (d->seen[i].hash == h) {
			d->seen[i].at_ms = now_ms;
			return d->nseen;
		}
		if (d->seen[i].at_ms < d->seen[oldest].at_ms)
			oldest = i;
	}
	if (d->nseen == EXFIL_NAMES_MAX)
		i = oldest;	/* full: the count stays at the cap */
	else
		i = d->nseen++;
	d->seen[i].hash = h;
	d->seen[i].at_ms = now_ms;
	return d->nseen;
}

unsigned
exfil_score(struct exfil_state *st, const char *name, uint16_t qtype,
    uint64_t now_ms, unsigned *signals)
{
	const char	*p, *dot, *domain;
	size_t		 len = strlen(name), label, nlabels = 0, left;
	unsigned	 score = 0, sig = 0, ent;
	const char	*dots[2] = { NULL, NULL };	/* last two dots */

	if (len > EXFIL_NAME_LONG) {
		score += EXFIL_W_LONG_NAME;
		sig |= EXFIL_SIG_LONG_NAME;
	}
	for (p = name; ; p = dot + 1) {
		dot = strchr(p, '.');
		label = dot != NULL ? (size_t)(dot - p) : strlen(p);
		nlabels++;
		if (label > EXFIL_LABEL_LONG && !(sig & EXFIL_SIG_LONG_LABEL)) {
			score += EXFIL_W_LONG_LABEL;
			sig |= EXFIL_SIG_LONG_LABEL;
		}
		if (dot == NULL)
			break;
		dots[0] = dots[1];
		dots[1] = dot;
	}

	/* The registered-ish domain is the last two labels; the data a
	 * tunnel carries sits left of it (or in the only label there is). */
	if (nlabels > 2) {
		domain = dots[0] + 1;
		left = (size_t)(dots[0] - name);
	} else {
		domain = name;
		left = dots[1] != NULL ? (size_t)(dots[1] - name) : len;
	}
	ent = exfil_entropy(name, left);
	if (ent > EXFIL_ENTROPY_LOW) {
		if (ent >= EXFIL_ENTROPY_HIGH)
			score += EXFIL_W_ENTROPY;
		else
			score += EXFIL_W_ENTROPY * (ent - EXFIL_ENTROPY_LOW) /
			    (EXFIL_ENTROPY_HIGH - EXFIL_ENTROPY_LOW);
		sig |= EXFIL_SIG_ENTROPY;
	}

	if (qtype == QTYPE_TXT || qtype == QTYPE_NULL || qtype == QTYPE_ANY) {
		score += EXFIL_W_RARE_TYPE;
		sig |= EXFIL_SIG_RARE_TYPE;
	}

	if (st != NULL &&
	    exfil_record(st, name, domain, now_ms) > EXFIL_UNIQUE_MAX) {
		score += EXFIL_W_UNIQUE_RATE;
		sig |= EXFIL_SIG_UNIQUE_RATE;
	}

	if (signals != NULL)
		*signals = sig;
	return score > EXFIL_SCORE_MAX ? EXFIL_SCORE_MAX : score;
}
