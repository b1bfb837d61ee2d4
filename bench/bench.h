/*
 * Shared by the benchmarks: a monotonic clock in nanoseconds and order
 * statistics (each sorts its samples in place).  Header-only: every
 * benchmark is one program.
 */
#ifndef STOCKADE_BENCH_H
#define STOCKADE_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t
bench_now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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
