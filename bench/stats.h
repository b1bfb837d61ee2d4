/*
 * Order statistics shared by the benchmarks: each sorts its samples in
 * place.  Header-only: every benchmark is one program.
 */
#ifndef STOCKADE_BENCH_STATS_H
#define STOCKADE_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline int
stats_cmp_u64(const void *a, const void *b)
{
	uint64_t	 x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static inline void
stats_sort(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), stats_cmp_u64);
}

/* The median of n > 0 samples (the mean of the middle two when n is even). */
static inline uint64_t
stats_median(uint64_t *v, size_t n)
{
	stats_sort(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
