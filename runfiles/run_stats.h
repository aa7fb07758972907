/* run_stats.h -- the noise-aware verdicts of `adaload compare` and of the dashboard: a
 * two-sided Mann-Whitney U test over the repetition times of one benchmark in two runs, plus
 * a median-ratio threshold; and, across a history of runs, the run-to-run noise band.
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
 * Too few repetitions: the smallest two-sided p two samples of sizes na, nb can reach is
 * 2 / C(na + nb, na) (every value of one above every value of the other; 0.1 at 3 and 3).
 * When that is not below alpha no difference could ever be called significant, and the
 * verdict is ADA_TOO_FEW ("too few repetitions to judge"), never "same".
 *
 * Across history (ada_history_verdict): a benchmark's own run-to-run spread. Its medians in
 * the previous runs of the same set (up to ADA_BAND_RUNS, at least ADA_BAND_MIN) give a
 * centre c (their median) and a spread s (1.4826 x the median absolute deviation of
 * median/c - 1, i.e. a robust standard deviation of the relative change). The newest run is
 * "slower" when the Mann-Whitney test against the run just before is significant (p < alpha)
 * AND its median is above both c and the run before's by more than max(ADA_BAND_FLOOR,
 * ADA_BAND_K x s) (a step is flagged once, not again on every later run); "faster" the
 * mirror image. A noisy benchmark (naive at 5-9% from lease to lease) thus needs a larger
 * change than a steady one (dtile within 1%: a 3% slowdown is flagged). With fewer previous
 * runs it falls back to the pair rule (ada_compare_samples, threshold).
 */
#ifndef ADALOAD_RUN_STATS_H
#define ADALOAD_RUN_STATS_H

#include <stdint.h>

typedef struct {
    double u;  /* U of the first sample: pairs (x in a, y in b) with x > y, ties count 1/2 */
    double p;  /* two-sided p-value, in [0, 1] */
    int exact; /* 1 exact distribution, 0 normal approximation */
} ada_mwu;

/* ADA_DRIFT is given by ada_compare_runs (run_compare.h), never by the statistics alone. */
typedef enum { ADA_SAME = 0, ADA_SLOWER = 1, ADA_FASTER = 2, ADA_TOO_FEW = 3, ADA_DRIFT = 4 } ada_verdict;

enum { ADA_BAND_RUNS = 8, ADA_BAND_MIN = 3 };
#define ADA_BAND_FLOOR 0.02 /* the smallest change the band rule calls a change */
#define ADA_BAND_K 4.0      /* how many robust standard deviations of the history */

/* The smallest two-sided p-value samples of these sizes can reach (1 when either is 0). */
double ada_mwu_min_p(int64_t na, int64_t nb);

/* 0 on success; -1 when a sample is empty or holds a non-finite value. */
int ada_mann_whitney(const double *a, int64_t na, const double *b, int64_t nb, ada_mwu *out);

/* The verdict for times a (before) and b (after); ratio = median(b) / median(a). A failed
 * test (empty or bad samples) gives ADA_SAME with p = 1. */
ada_verdict ada_compare_samples(const double *a, int64_t na, const double *b, int64_t nb,
                                double threshold, double alpha, double *ratio, ada_mwu *t);

/* "same", "slower", "faster", "too few repetitions", "environment drift". */
const char *ada_verdict_name(ada_verdict v);

/* The history rule above. prior: the medians of the previous runs of the set, oldest first
 * (only the newest ADA_BAND_RUNS count); prev and cur: the repetition times of the run just
 * before and of the newest. ratio = median(cur) / median(prev); *band = the relative change
 * the rule needed (threshold for the pair rule); *banded = 1 when the band decided. */
ada_verdict ada_history_verdict(const double *prior, int64_t nprior, const double *prev, int64_t nprev,
                                const double *cur, int64_t ncur, double threshold, double alpha, double *ratio,
                                double *band, int *banded, ada_mwu *t);

#endif
