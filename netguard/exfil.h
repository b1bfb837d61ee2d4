/*
 * DNS tunnelling score: how much one query looks like data smuggled in a
 * name.  Pure computation over names the sandbox chose (untrusted), with
 * per-client state of bounded size; integers only, so nothing derived
 * from it puts a real number into an audit record.
 */
#ifndef NETGUARD_EXFIL_H
#define NETGUARD_EXFIL_H

#include <stddef.h>
#include <stdint.h>

/* Signals, as bits of exfil_score's *signals. */
#define EXFIL_SIG_LONG_NAME	0x01	/* > EXFIL_NAME_LONG */
#define EXFIL_SIG_LONG_LABEL	0x02	/* a label > EXFIL_LABEL_LONG */
#define EXFIL_SIG_ENTROPY	0x04	/* leftmost labels look random */
#define EXFIL_SIG_RARE_TYPE	0x08	/* TXT, NULL or ANY */
#define EXFIL_SIG_UNIQUE_RATE	0x10	/* many new names, one domain */
#define EXFIL_SIG_ALL		0x1f

#define EXFIL_NAME_LONG		52	/* presentation form */
#define EXFIL_LABEL_LONG	30
/* Entropy in millibits per character: no points below LOW, all at HIGH. */
#define EXFIL_ENTROPY_LOW	3500
#define EXFIL_ENTROPY_HIGH	4500
#define EXFIL_UNIQUE_MAX	100	/* names per domain per window */
#define EXFIL_WINDOW_MS		60000

/*
 * Points per signal; the sum is capped at EXFIL_SCORE_MAX.  Length alone
 * stays low: long hyphenated names (S3 buckets, ELBs) are common and
 * their entropy sits near 4.1 bits, while random base32/base64 labels
 * reach 4.6 and more; a long, random label scores 70.
 */
#define EXFIL_W_LONG_NAME	10
#define EXFIL_W_LONG_LABEL	20
#define EXFIL_W_ENTROPY		40	/* at HIGH, linear from LOW */
#define EXFIL_W_RARE_TYPE	20
#define EXFIL_W_UNIQUE_RATE	40
#define EXFIL_SCORE_MAX		100

/* One per client (sandbox): the names each domain has seen lately. */
struct exfil_state;

struct exfil_state	*exfil_new(void);
void			 exfil_free(struct exfil_state *);

/*
 * Scores one query, 0..EXFIL_SCORE_MAX, and records name in st for the
 * unique-name rate (st may be NULL: no rate signal).  name is the
 * lowercase presentation form without the final dot; now_ms any
 * monotonic clock.  *signals (may be NULL) gets the EXFIL_SIG_* that
 * contributed.
 */
unsigned	 exfil_score(struct exfil_state *st, const char *name,
		    uint16_t qtype, uint64_t now_ms, unsigned *signals);
/* Shannon entropy of s[0..len) in millibits per character. */
unsigned	 exfil_entropy(const char *s, size_t len);
/* "long_name", "long_label", "entropy", "rare_type", "unique_rate";
 * NULL for anything but one known bit. */
const char	*exfil_signal_name(unsigned bit);

#endif
