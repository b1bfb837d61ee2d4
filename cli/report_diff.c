/*
 * A line diff between two versions of a policy file for the report.  The
 * texts are untrusted (whoever could edit rules/ wrote them): every line
 * goes through report_esc_cap, and both the work (lines compared) and the
 * output (lines shown) are bounded; past the bound the page says so.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"

#define DIFF_CELLS_MAX	(4 * 1024 * 1024)	/* LCS table entries */
#define DIFF_CONTEXT	2	/* unchanged lines shown around a change */
#define DIFF_SHOWN_MAX	600	/* lines printed */

struct lines {
	const char	**at;	/* start of each line */
	size_t		 *len;	/* without its '\n' */
	size_t		  n;
};

static void
lines_split(const char *s, size_t len, struct lines *l)
{
	size_t		 i, n = 0, start = 0;

	for (i = 0; i < len; i++)
		n += s[i] == '\n';
	n += len > 0 && s[len - 1] != '\n';
	l->at = xcalloc(n + 1, sizeof(*l->at));
	l->len = xcalloc(n + 1, sizeof(*l->len));
	l->n = 0;
	for (i = 0; i <= len; i++)
		if (i == len ? i > start : s[i] == '\n') {
			l->at[l->n] = s + start;
			l->len[l->n++] = i - start;
			start = i + 1;
		}
}

static int
same(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && memcmp(a->at[i], b->at[j],
	    a->len[i]) == 0;
}

/* One printed line: ' ', '-' or '+', escaped and capped. */
static void
put(FILE *f, char op, const struct lines *l, size_t i)
{
	static const char *const open[] = { "", "<del>", "<ins>" };
	static const char *const close[] = { "\n", "</del>\n", "</ins>\n" };
	int	 k = op == '-' ? 1 : op == '+' ? 2 : 0;

	fprintf(f, "%s%c ", open[k], op);
	report_esc_cap(f, l->at[i], l->len[i], REPORT_CELL_MAX);
	fputs(close[k], f);
}

/*
 * ops: the edit script, one of ' ', '-', '+' per step, with the lines of
 * a and b it walks.  Prints the changes with DIFF_CONTEXT lines around
 * each and a mark where unchanged lines were left out.
 */
static void
print_ops(FILE *f, const char *ops, size_t nops, const struct lines *a,
    const struct lines *b)
{
	size_t	 k, i = 0, j = 0, shown = 0, near, t;
	int	 skipped = 0;

	for (k = 0; k < nops; k++) {
		near = 0;
		for (t = k > DIFF_CONTEXT ? k - DIFF_CONTEXT : 0;
		    t < nops && t <= k + DIFF_CONTEXT && !near; t++)
			near = ops[t] != ' ';
		if (ops[k] != ' ' || near) {
			if (skipped)
				fputs("<span class=cut>\u2026</span>\n", f);
			skipped = 0;
			if (shown++ >= DIFF_SHOWN_MAX) {
				fprintf(f, "<span class=cut>\u2026 the rest of "
				    "the diff (%zu steps) not shown</span>\n",
				    nops - k);
				return;
			}
			put(f, ops[k], ops[k] == '+' ? b : a, ops[k] == '+' ?
			    j : i);
		} else
			skipped = 1;
		i += ops[k] != '+';
		j += ops[k] != '-';
	}
	if (skipped)
		fputs("<span class=cut>\u2026</span>\n", f);
}

void
report_diff(FILE *f, const char *old, size_t oldlen, const char *new,
    size_t newlen)
{
	struct lines	 a, b;
	size_t		 pre = 0, suf = 0, n, m, i, j, k, nops;
	uint32_t	*t = NULL;
	char		*ops = NULL;

	lines_split(old, oldlen, &a);
	lines_split(new, newlen, &b);
	while (pre < a.n && pre < b.n && same(&a, pre, &b, pre))
		pre++;
	while (suf < a.n - pre && suf < b.n - pre &&
	    same(&a, a.n - 1 - suf, &b, b.n - 1 - suf))
		suf++;
	n = a.n - pre - suf;
	m = b.n - pre - suf;
	fputs("<pre class=diff>", f);
	if ((n + 1) * (m + 1) > DIFF_CELLS_MAX) {
		fprintf(f, "<span class=cut>%zu and %zu changed lines: too "
		    "many to diff here; both versions are shown in full."
		    "</span></pre>\n", n, m);
		goto out;
	}
	/* t[i][j]: longest common subsequence of a's and b's tails. */
	t = xcalloc((n + 1) * (m + 1), sizeof(*t));
	for (i = n; i-- > 0;)
		for (j = m; j-- > 0;)
			t[i * (m + 1) + j] = same(&a, pre + i, &b, pre + j) ?
			    t[(i + 1) * (m + 1) + j + 1] + 1 :
			    t[(i + 1) * (m + 1) + j] >= t[i * (m + 1) + j + 1] ?
			    t[(i + 1) * (m + 1) + j] : t[i * (m + 1) + j + 1];
	ops = xmalloc(a.n + b.n + 1);
	nops = 0;
	for (k = 0; k < pre; k++)
		ops[nops++] = ' ';
	for (i = 0, j = 0; i < n || j < m;) {
		if (i < n && j < m && same(&a, pre + i, &b, pre + j)) {
			ops[nops++] = ' ';
			i++, j++;
		} else if (i < n && (j == m || t[(i + 1) * (m + 1) + j] >=
		    t[i * (m + 1) + j + 1]))
			ops[nops++] = '-', i++;	/* removals first */
		else
			ops[nops++] = '+', j++;
	}
	for (k = 0; k < suf; k++)
		ops[nops++] = ' ';
	print_ops(f, ops, nops, &a, &b);
	fputs("</pre>\n", f);
out:
	free(t);
	free(ops);
	free(a.at);
	free(a.len);
	free(b.at);
	free(b.len);
}
