/* bench_stats.h -- the noise-aware verdict of `adaload compare`: a two-sided Mann-Whitney U
 * test over the repetition times of one benchmark in two runs, plus a median-ratio threshold.
 *
 *   ada_mwu t;
 *   ada_mann_whitney(a, na, b, nb, &t);        // t.u (of a), t.p (two-sided), t.exact
 *   ada_verdict v = ada_compare_samples(a, na, b, nb, 0.05, 0.05, &ratio, &t);
 *
 * The rule (the README states it): "slower" when p < alpha AND median(b)/median(a) >
 * 1 + threshold; "faster" when p < alpha AND the ratio < 1 - threshold; otherwise "same".
 * A difference the test cannot tell from noise is never a regression, and a significant one
 * smaller than the threshold is not either. The p-value is exact (the distribution of U
 * counted by dynamic programming) when there are no ties and na, nb <= 25; otherwise the
 * normal approximation with tie correction and continuity correction (fine at 9 vs 9).
 * With 3 repetitions a side the smallest two-sided p is 0.1: quick runs are never flagged.
 */
#ifndef ADALOAD_BENCH_STATS_H
#define ADALOAD_BENCH_STATS_H

#include <stdint.h>

typedef struct {
    double u;  /* U of the first sample: pairs (x in a, y in b) with x > y, ties count 1/2 */
    double p;  /* two-sided p-value, in [0, 1] */
    int exact; /* 1 exact distribution, 0 normal approximation */
} ada_mwu;

typedef enum { ADA_SAME = 0, ADA_SLOWER = 1, ADA_FASTER = 2 } ada_verdict;

/* 0 on success; -1 when a sample is empty or holds a non-finite value. */
int ada_mann_whitney(const double *a, int64_t na, const double *b, int64_t nb, ada_mwu *out);

/* The verdict for times a (before) and b (after); ratio = median(b) / median(a). A failed
 * test (empty or bad samples) gives ADA_SAME with p = 1. */
ada_verdict ada_compare_samples(const double *a, int64_t na, const double *b, int64_t nb,
                                double threshold, double alpha, double *ratio, ada_mwu *t);

const char *ada_verdict_name(ada_verdict v);

#endif
