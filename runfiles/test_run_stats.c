/* test_run_stats.c -- Criterion tests of compare's statistics (run_stats.h): the
 * Mann-Whitney U statistic and p-value on samples small enough to check by hand, and the
 * verdict rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "ada_rng.h"
#include "run_stats.h"

/* a = {1,2,3}, b = {4,5,6}: a never beats b, U_a = 0. Exact two-sided p = 2 * 1/C(6,3)
 * = 2/20 = 0.1 (only one of the 20 arrangements is this extreme on each side). */
Test(mwu, separated_small_samples_exact)
{
    double a[] = {1, 2, 3}, b[] = {4, 5, 6};
    ada_mwu t;
    cr_assert_eq(ada_mann_whitney(a, 3, b, 3, &t), 0);
    cr_assert_eq(t.u, 0.0);
    cr_assert_eq(t.exact, 1);
    cr_assert_float_eq(t.p, 0.1, 1e-12);
    /* Swapped: U_b = 9 = 3*3, same p. */
    cr_assert_eq(ada_mann_whitney(b, 3, a, 3, &t), 0);
    cr_assert_eq(t.u, 9.0);
    cr_assert_float_eq(t.p, 0.1, 1e-12);
}

/* a = {1, 4}, b = {2, 3}: pairs a>b: (4,2), (4,3) -> U = 2 = mn/2, the centre: p = 1. */
Test(mwu, interleaved_is_centre)
{
    double a[] = {1, 4}, b[] = {2, 3};
    ada_mwu t;
    cr_assert_eq(ada_mann_whitney(a, 2, b, 2, &t), 0);
    cr_assert_eq(t.u, 2.0);
    cr_assert_float_eq(t.p, 1.0, 1e-12);
}

/* a = {1,2,4}, b = {3,5,6}: U_a = 1 (4 > 3). Arrangements with U <= 1 out of 20: U=0 (1 way)
 * and U=1 (1 way) -> P = 2/20, two-sided 0.2. */
Test(mwu, one_inversion_exact)
{
    double a[] = {1, 2, 4}, b[] = {3, 5, 6};
    ada_mwu t;
    cr_assert_eq(ada_mann_whitney(a, 3, b, 3, &t), 0);
    cr_assert_eq(t.u, 1.0);
    cr_assert_float_eq(t.p, 0.2, 1e-12);
}

/* Ties: normal approximation with tie and continuity correction, checked by hand:
 * a = {1,1,2}, b = {2,3,3}: ranks 1.5,1.5,3.5 | 3.5,5.5,5.5; R_a = 6.5, U = 0.5;
 * ties: three groups of 2 -> sum(t^3-t) = 18; var = 9/12 * (7 - 18/30) = 4.8;
 * z = (|0.5 - 4.5| - 0.5)/sqrt(4.8) = 3.5/2.19089 = 1.59752; p = erfc(z/sqrt 2). */
Test(mwu, ties_normal_approximation)
{
    double a[] = {1, 1, 2}, b[] = {2, 3, 3};
    ada_mwu t;
    cr_assert_eq(ada_mann_whitney(a, 3, b, 3, &t), 0);
    cr_assert_eq(t.exact, 0);
    cr_assert_float_eq(t.u, 0.5, 1e-12);
    cr_assert_float_eq(t.p, erfc(3.5 / sqrt(4.8) / sqrt(2.0)), 1e-12);
}

Test(mwu, all_tied_gives_p_one_and_bad_input_fails)
{
    double a[] = {5, 5, 5}, b[] = {5, 5};
    ada_mwu t;
    cr_assert_eq(ada_mann_whitney(a, 3, b, 2, &t), 0);
    cr_assert_eq(t.p, 1.0);
    double bad[] = {1, NAN};
    cr_assert_eq(ada_mann_whitney(bad, 2, b, 2, &t), -1);
    cr_assert_eq(ada_mann_whitney(a, 0, b, 2, &t), -1);
}

/* The exact distribution sums to 1 and is symmetric: p(U) == p(mn - U) for random sizes. */
Test(mwu, exact_p_symmetric_and_bounded)
{
    ada_rng r;
    ada_rng_seed(&r, 7);
    for (int trial = 0; trial < 50; trial++) {
        int64_t na = 1 + (int64_t)ada_rng_below(&r, 12), nb = 1 + (int64_t)ada_rng_below(&r, 12);
        double a[12], b[12];
        for (int64_t i = 0; i < na; i++) a[i] = ada_rng_uniform(&r);
        for (int64_t i = 0; i < nb; i++) b[i] = ada_rng_uniform(&r) + 0.2;
        ada_mwu t1, t2;
        cr_assert_eq(ada_mann_whitney(a, na, b, nb, &t1), 0);
        cr_assert_eq(ada_mann_whitney(b, nb, a, na, &t2), 0);
        cr_assert_float_eq(t1.u + t2.u, (double)(na * nb), 1e-9);
        cr_assert_float_eq(t1.p, t2.p, 1e-12);
        cr_assert(t1.p > 0 && t1.p <= 1);
    }
}

Test(verdict, rule)
{
    double a[9], same[9], slow[9], slightly[9];
    for (int i = 0; i < 9; i++) {
        a[i] = 100 + i;
        same[i] = 100 + (8 - i);
        slow[i] = 2 * (100 + i);
        slightly[i] = 103.5 + i; /* significant? maybe; but only ~3.5% slower */
    }
    double ratio;
    ada_mwu t;
    cr_assert_eq(ada_compare_samples(a, 9, same, 9, 0.05, 0.05, &ratio, &t), ADA_SAME);
    cr_assert_float_eq(ratio, 1.0, 1e-12);
    cr_assert_eq(ada_compare_samples(a, 9, slow, 9, 0.05, 0.05, &ratio, &t), ADA_SLOWER);
    cr_assert_float_eq(ratio, 2.0, 1e-12);
    cr_assert(t.p < 0.001);
    cr_assert_eq(ada_compare_samples(slow, 9, a, 9, 0.05, 0.05, &ratio, &t), ADA_FASTER);
    cr_assert_eq(ada_compare_samples(a, 9, slightly, 9, 0.05, 0.05, &ratio, &t), ADA_SAME);
    /* The same 3.5% is a regression with a 3% threshold only if significant. */
    ada_verdict v = ada_compare_samples(a, 9, slightly, 9, 0.03, 0.05, &ratio, &t);
    cr_assert_eq(v, t.p < 0.05 ? ADA_SLOWER : ADA_SAME);
}

/* n = m = 3 cannot reach p < 0.1: a 3x slowdown is "too few repetitions", never "same". */
Test(verdict, too_few_repetitions_to_judge)
{
    double a[3] = {100, 101, 102}, b[3] = {300, 301, 302};
    double ratio;
    ada_mwu t;
    cr_assert_float_eq(ada_mwu_min_p(3, 3), 0.1, 1e-12);
    cr_assert_float_eq(ada_mwu_min_p(9, 9), 2.0 / 48620.0, 1e-15);
    cr_assert_eq(ada_mwu_min_p(0, 5), 1.0);
    cr_assert_eq(ada_compare_samples(a, 3, b, 3, 0.05, 0.05, &ratio, &t), ADA_TOO_FEW);
    cr_assert_str_eq(ada_verdict_name(ADA_TOO_FEW), "too few repetitions");
    /* At alpha 0.2 the same samples can be judged. */
    cr_assert_eq(ada_compare_samples(a, 3, b, 3, 0.05, 0.2, &ratio, &t), ADA_SLOWER);
    /* 4 and 4: min p = 2/70 < 0.05, judged. */
    double c[4] = {100, 101, 102, 103}, d[4] = {300, 301, 302, 303};
    cr_assert_eq(ada_compare_samples(c, 4, d, 4, 0.05, 0.05, &ratio, &t), ADA_SLOWER);
}

/* Repetitions around m with a little noise (seeded). */
static void reps(double *v, int n, double m, double rel, uint64_t seed)
{
    ada_rng r;
    ada_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) v[i] = m * (1 + rel * (ada_rng_uniform(&r) - 0.5));
}

/* Against its own history: a steady benchmark (nights within 0.5%) slowed by 3% is flagged
 * although the pair threshold is 5%; a noisy one (nights 4% apart) slowed by 7% is not. */
Test(verdict, history_noise_band)
{
    double prev[9], cur[9], ratio, band;
    int banded;
    ada_mwu t;
    double steady[5] = {800, 802, 799, 801, 800.5};
    reps(prev, 9, 800.5, 0.002, 1);
    reps(cur, 9, 800.5 * 1.03, 0.002, 2);
    cr_assert_eq(ada_compare_samples(prev, 9, cur, 9, 0.05, 0.05, &ratio, &t), ADA_SAME, "the pair rule misses 3%");
    cr_assert_eq(ada_history_verdict(steady, 5, prev, 9, cur, 9, 0.05, 0.05, &ratio, &band, &banded, &t), ADA_SLOWER);
    cr_assert_eq(banded, 1);
    cr_assert_float_eq(band, ADA_BAND_FLOOR, 1e-12);
    cr_assert(ratio > 1.025 && ratio < 1.035, "ratio %g", ratio);
    /* Unchanged: same. */
    reps(cur, 9, 800.5, 0.002, 3);
    cr_assert_eq(ada_history_verdict(steady, 5, prev, 9, cur, 9, 0.05, 0.05, &ratio, &band, &banded, &t), ADA_SAME);

    double noisy[6] = {800, 832, 790, 825, 805, 840};
    reps(prev, 9, 800, 0.002, 4);
    reps(cur, 9, 856, 0.002, 5);
    cr_assert_eq(ada_compare_samples(prev, 9, cur, 9, 0.05, 0.05, &ratio, &t), ADA_SLOWER, "the pair rule flags 7%");
    cr_assert_eq(ada_history_verdict(noisy, 6, prev, 9, cur, 9, 0.05, 0.05, &ratio, &band, &banded, &t), ADA_SAME,
                 "band %g ratio %g", band, ratio);
    cr_assert(band > 0.07);
    /* A real regression still stands out of the noisy band. */
    reps(cur, 9, 800 * 1.5, 0.002, 6);
    cr_assert_eq(ada_history_verdict(noisy, 6, prev, 9, cur, 9, 0.05, 0.05, &ratio, &band, &banded, &t), ADA_SLOWER);
    /* Two previous runs: the pair rule decides. */
    cr_assert_eq(ada_history_verdict(noisy, 2, prev, 9, cur, 9, 0.05, 0.05, &ratio, &band, &banded, &t), ADA_SLOWER);
    cr_assert_eq(banded, 0);
}
