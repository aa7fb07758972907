/* test_reference.c -- Criterion tests of the float64 reference (ref_lnmod.h): forward against
 * hand-derived numbers, statistical identities and an independent long-double evaluation;
 * the large-mean case against exact integer arithmetic (and proof that a one-pass variance
 * fails it); bit-identical split/threaded rows; backward against central finite differences;
 * exhaustive fp16/bf16 conversions; argument validation with untouched outputs.
 *
 *   ctest --test-dir build -R reference      or      build/reference/test_reference --verbose
 *
 * Independent means independent: the helpers below decode fp16/bf16 with ldexp of the
 * fields, compute m(r) by counting frames, and sum in long double -- none of them call the
 * code under test, except ref_store to round inputs into their storage dtype.
 */
#include "test_ref_helpers.h"

/* ---- forward ------------------------------------------------------------------------------ */

/* Hand derivation (D = 4, eps = 2.75, two samples of one row each, per-sample):
 *   row 0: x = [1, 2, 3, 4]: mean 2.5, deviations [-1.5, -0.5, 0.5, 1.5], squares sum to
 *     2.25 + 0.25 + 0.25 + 2.25 = 5, var = 5/4 = 1.25, var + eps = 4, rstd = 0.5,
 *     xhat = [-0.75, -0.25, 0.25, 0.75].
 *     scale = [0, 1, -1, 0.5] -> 1 + scale = [1, 2, 0, 1.5]; shift = [0.5, 0, 3, -1]:
 *     y = [-0.75 + 0.5, -0.5 + 0, 0 + 3, 1.125 - 1] = [-0.25, -0.5, 3, 0.125].
 *   row 1: x = [10, 13, 11, 12]: mean 11.5, deviations [-1.5, 1.5, -0.5, 0.5], var 1.25,
 *     rstd 0.5, xhat = [-0.75, 0.75, -0.25, 0.25]; scale = [1, 1, 1, 1], shift = 0:
 *     y = 2 * xhat = [-1.5, 1.5, -0.5, 0.5].
 * Every step is exact in binary, so the reference must reproduce these bits. The values are
 * exact in every dtype, so the case runs for x and modulation in f32, f16 and bf16. */
Test(forward, hand_computed)
{
    const double xv[8] = {1, 2, 3, 4, 10, 13, 11, 12};
    const double sc[2][4] = {{0, 1, -1, 0.5}, {1, 1, 1, 1}};
    const double sh[2][4] = {{0.5, 0, 3, -1}, {0, 0, 0, 0}};
    const double want[8] = {-0.25, -0.5, 3, 0.125, -1.5, 1.5, -0.5, 0.5};
    for (int t = 0; t < LNMOD_DTYPE_COUNT; t++) {
        lnmod_desc d = make_desc(LNMOD_PER_SAMPLE, (lnmod_dtype)t, (lnmod_dtype)t, 2, 4, 1, 0, 24);
        d.eps = 2.75;
        unsigned char x[32], scale[2 * 24 * 4], shift[2 * 24 * 4];
        for (int i = 0; i < 8; i++) ref_store(d.x_dtype, x, i, xv[i]);
        for (int i = 0; i < 48; i++) {
            ref_store(d.mod_dtype, scale, i, NAN);
            ref_store(d.mod_dtype, shift, i, NAN);
        }
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < 4; i++) {
                ref_store(d.mod_dtype, scale, 24 * k + i, sc[k][i]);
                ref_store(d.mod_dtype, shift, 24 * k + i, sh[k][i]);
            }
        double y[8], mean[2], rstd[2];
        cr_assert_eq(ref_lnmod_forward(&d, x, scale, shift, y, mean, rstd), LNMOD_OK);
        for (int i = 0; i < 8; i++)
            cr_assert_eq(y[i], want[i], "dtype %s y[%d] = %.17g, want %.17g",
                         lnmod_dtype_name(d.x_dtype), i, y[i], want[i]);
        cr_assert_eq(mean[0], 2.5);
        cr_assert_eq(mean[1], 11.5);
        cr_assert_eq(rstd[0], 0.5);
        cr_assert_eq(rstd[1], 0.5);
    }
}

/* With scale = shift = 0, y = xhat: every row has mean 0 and (biased) variance
 * var / (var + eps), which is 1 to far below 1e-12 with eps = 1e-30. */
Test(forward, normalized_rows_have_mean0_var1)
{
    const int64_t Ds[] = {2, 3, 7, 64, 1000, 5120};
    ada_rng rng;
    ada_rng_seed(&rng, 101);
    for (size_t di = 0; di < sizeof Ds / sizeof Ds[0]; di++) {
        const int64_t D = Ds[di], rows = 64;
        lnmod_desc d = make_desc(LNMOD_PER_SAMPLE, LNMOD_F32, LNMOD_F32, rows, D, rows, 0, D);
        d.eps = 1e-30;
        void *x = make_x(&d, &rng);
        float *zero = calloc((size_t)D, sizeof *zero);
        double *y = malloc((size_t)(rows * D) * sizeof *y);
        cr_assert(zero && y);
        cr_assert_eq(ref_lnmod_forward(&d, x, zero, zero, y, NULL, NULL), LNMOD_OK);
        for (int64_t r = 0; r < rows; r++) {
            long double s = 0, ss = 0;
            for (int64_t i = 0; i < D; i++) s += y[r * D + i];
            long double m = s / D;
            for (int64_t i = 0; i < D; i++) ss += (y[r * D + i] - m) * (y[r * D + i] - m);
            double var = (double)(ss / D);
            cr_assert(fabs((double)m) <= 1e-12, "D=%lld row %lld: mean %.3g", (long long)D,
                      (long long)r, (double)m);
            cr_assert(fabs(var - 1.0) <= 1e-12, "D=%lld row %lld: var - 1 = %.3g",
                      (long long)D, (long long)r, var - 1.0);
        }
        free(x);
        free(zero);
        free(y);
    }
}

/* A constant row has mean equal to the constant (D copies of a <= 24-bit value sum exactly),
 * deviations of exactly 0, so y = 0 * (1 + scale) + shift = shift, bit for bit. */
Test(forward, constant_rows_give_shift)
{
    ada_rng rng;
    ada_rng_seed(&rng, 102);
    const int64_t Ds[] = {1, 5, 1536, 5120};
    for (int t = 0; t < LNMOD_DTYPE_COUNT; t++)
        for (size_t di = 0; di < 4; di++) {
            const int64_t D = Ds[di], rows = 6;
            lnmod_desc d = make_desc(LNMOD_PER_TOKEN, (lnmod_dtype)t, LNMOD_F32, rows, D, 0, 0,
                                     6 * D);
            void *x = malloc((size_t)(rows * D) * 4);
            double *y = malloc((size_t)(rows * D) * sizeof *y), mean[6], rstd[6];
            cr_assert(x && y);
            double c[6];
            for (int64_t r = 0; r < rows; r++) {
                /* |c| < 2^13 or so: finite in f16 too */
                c[r] = ldexp(ada_rng_normal(&rng), (int)ada_rng_below(&rng, 24) - 12);
                for (int64_t i = 0; i < D; i++) ref_store(d.x_dtype, x, r * D + i, c[r]);
                c[r] = load_indep(d.x_dtype, x, r * D); /* the stored (rounded) constant */
            }
            wan_mod w = make_wan_mod(&d, &rng, 0.5);
            cr_assert_eq(ref_lnmod_forward(&d, x, w.scale, w.shift, y, mean, rstd), LNMOD_OK);
            for (int64_t r = 0; r < rows; r++) {
                cr_assert_eq(mean[r], c[r]);
                cr_assert_eq(rstd[r], 1.0 / sqrt(d.eps));
                for (int64_t i = 0; i < D; i++) {
                    double want = load_indep(LNMOD_F32, w.shift, r * 6 * D + i);
                    cr_assert_eq(y[r * D + i], want, "dtype %s D=%lld y[%lld,%lld]=%.17g != %.17g",
                                 lnmod_dtype_name(d.x_dtype), (long long)D, (long long)r,
                                 (long long)i, y[r * D + i], want);
                }
            }
            free(x);
            free(y);
            free(w.buf);
        }
}

/* Rows with mean 1e4 and spread 1e-2, stored as fp32. Between 8192 and 16384 every fp32 is
 * a multiple of 2^-10, so X = 1024 x is an integer and the statistics are exact rationals:
 *   mean = S / (1024 D) with S = sum X;   var = sum (D X - S)^2 / (1024^2 D^3),
 * computed here in int64 (no rounding at all) and only then divided in long double. The
 * reference must match to 1e-9 relative (rstd; mean) and 1e-9 * max(1, |y|) (y). A one-pass
 * E[x^2] - E[x]^2 in double loses ~1e-3 of the variance here, so it fails the same bound:
 * the test measures that too, so it demonstrably tells the two methods apart. */
Test(forward, large_mean_rows_two_pass)
{
    const int64_t D = 1024, rows = 20;
    ada_rng rng;
    ada_rng_seed(&rng, 103);
    lnmod_desc d = make_desc(LNMOD_PER_SAMPLE, LNMOD_F32, LNMOD_F32, rows, D, rows, 0, D);
    float *x = malloc((size_t)(rows * D) * sizeof *x);
    double *y = malloc((size_t)(rows * D) * sizeof *y), mean[20], rstd[20];
    float sc[1024], sh[1024];
    cr_assert(x && y);
    for (int64_t i = 0; i < D; i++) {
        sc[i] = (float)(0.1 * ada_rng_normal(&rng));
        sh[i] = (float)ada_rng_normal(&rng);
    }
    for (int64_t i = 0; i < rows * D; i++) x[i] = (float)(1e4 + 1e-2 * ada_rng_normal(&rng));
    cr_assert_eq(ref_lnmod_forward(&d, x, sc, sh, y, mean, rstd), LNMOD_OK);

    double worst_two = 0, worst_one = 0, worst_y = 0;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * D;
        int64_t X[1024], S = 0, Q = 0;
        for (int64_t i = 0; i < D; i++) {
            double s = (double)xr[i] * 1024.0;
            cr_assert(s == floor(s) && xr[i] >= 8192.0f && xr[i] < 16384.0f);
            X[i] = (int64_t)s;
            S += X[i];
        }
        for (int64_t i = 0; i < D; i++) {
            int64_t dv = D * X[i] - S; /* |dv| < 2^17 here: the square sum fits easily */
            Q += dv * dv;
        }
        long double var = (long double)Q / ((long double)D * D * D) / 1048576.0L;
        long double rs = 1.0L / sqrtl(var + d.eps), mu = (long double)S / D / 1024.0L;
        cr_assert(fabs((double)((mean[r] - mu) / mu)) <= 1e-9);
        double e2 = fabs((double)((rstd[r] - rs) / rs));
        if (e2 > worst_two) worst_two = e2;
        for (int64_t i = 0; i < D; i++) {
            long double xhat = (long double)(D * X[i] - S) / (1024.0L * D) * rs;
            long double want = xhat * (1.0L + sc[i]) + sh[i];
            double err = fabs((double)(y[r * D + i] - want)) / fmax(1.0, fabs((double)want));
            if (err > worst_y) worst_y = err;
        }
        /* The one-pass formula, in plain double, sequential sums. */
        double s1 = 0, s2 = 0;
        for (int64_t i = 0; i < D; i++) {
            s1 += xr[i];
            s2 += (double)xr[i] * xr[i];
        }
        double m1 = s1 / D, var1 = s2 / D - m1 * m1;
        double rs1 = 1.0 / sqrt(fmax(var1, 0.0) + d.eps);
        double e1 = fabs((double)((rs1 - rs) / rs));
        if (e1 > worst_one) worst_one = e1;
    }
    cr_log_info("large mean: rstd rel. error two-pass %.3g, one-pass %.3g; y error %.3g",
                worst_two, worst_one, worst_y);
    cr_assert(worst_two <= 1e-9, "two-pass rstd relative error %.3g > 1e-9", worst_two);
    cr_assert(worst_y <= 1e-9, "y error %.3g > 1e-9", worst_y);
    cr_assert(worst_one > 1e-9,
              "the one-pass variance should fail the 1e-9 bound here (error %.3g); the test "
              "no longer discriminates",
              worst_one);
    free(x);
    free(y);
}

/* Every layout with non-trivial strides (Wan's 6*D chunk view) and every supported dtype
 * combination equals the long-double direct evaluation. */
Test(forward, layouts_and_dtypes_match_naive)
{
    ada_rng rng;
    ada_rng_seed(&rng, 104);
    int cases = 0;
    for (int lay = 0; lay < LNMOD_LAYOUT_COUNT; lay++)
        for (int xt = 0; xt < LNMOD_DTYPE_COUNT; xt++)
            for (int mi = 0; mi < 2; mi++) {
                lnmod_dtype mt = mi == 0 ? LNMOD_F32 : (lnmod_dtype)xt;
                if (mi == 1 && mt == LNMOD_F32) continue;
                /* S = 10 is not a multiple of L = 4: frames of 4, 4 and 2 rows. */
                const int64_t D = 37, S = 10, rows = 3 * S;
                lnmod_desc d = make_desc((lnmod_layout)lay, (lnmod_dtype)xt, mt, rows, D, S, 4,
                                         6 * D);
                cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
                void *x = make_x(&d, &rng);
                wan_mod w = make_wan_mod(&d, &rng, 0.5);
                double *y = malloc((size_t)(rows * D) * sizeof *y), mean[30], rstd[30];
                long double *yn = malloc((size_t)(rows * D) * sizeof *yn), mn[30], rn[30];
                cr_assert(y && yn);
                cr_assert_eq(ref_lnmod_forward(&d, x, w.scale, w.shift, y, mean, rstd),
                             LNMOD_OK);
                naive_forward(&d, x, w.scale, w.shift, yn, mn, rn);
                for (int64_t r = 0; r < rows; r++) {
                    cr_assert(fabsl(mean[r] - mn[r]) <= 1e-13L * (1 + fabsl(mn[r])));
                    cr_assert(fabsl(rstd[r] - rn[r]) <= 1e-13L * rn[r]);
                    for (int64_t i = 0; i < D; i++) {
                        long double e = fabsl(y[r * D + i] - yn[r * D + i]);
                        cr_assert(e <= 1e-12L * (1 + fabsl(yn[r * D + i])),
                                  "%s x=%s mod=%s y[%lld,%lld]=%.17g naive %.17Lg",
                                  lnmod_layout_name(d.layout), lnmod_dtype_name(d.x_dtype),
                                  lnmod_dtype_name(mt), (long long)r, (long long)i,
                                  y[r * D + i], yn[r * D + i]);
                    }
                }
                free(x);
                free(w.buf);
                free(y);
                free(yn);
                cases++;
            }
    cr_assert_eq(cases, 15); /* 3 layouts x (f32/f32, f16/f32, f16/f16, bf16/f32, bf16/bf16) */
}

/* ---- split rows -------------------------------------------------------------------------- */

typedef struct {
    const lnmod_desc *d;
    int64_t r0, r1;
    const void *x, *scale, *shift;
    double *y, *mean, *rstd;
    lnmod_status st;
} rows_job;

static void *rows_worker(void *arg)
{
    rows_job *j = arg;
    j->st = ref_lnmod_forward_rows(j->d, j->r0, j->r1, j->x, j->scale, j->shift, j->y, j->mean,
                                   j->rstd);
    return NULL;
}

/* Rows computed in random pieces, and concurrently by four threads, give the same bits as
 * one whole call. */
Test(forward, split_rows_bit_identical)
{
    ada_rng rng;
    ada_rng_seed(&rng, 105);
    for (int lay = 0; lay < LNMOD_LAYOUT_COUNT; lay++) {
        const int64_t D = 1536, S = 25, rows = 4 * S;
        lnmod_desc d = make_desc((lnmod_layout)lay, LNMOD_BF16, LNMOD_F32, rows, D, S, 7, 6 * D);
        void *x = make_x(&d, &rng);
        wan_mod w = make_wan_mod(&d, &rng, 0.5);
        size_t n = (size_t)(rows * D);
        double *y0 = malloc(n * 8), *y1 = malloc(n * 8), *y2 = malloc(n * 8);
        double m0[100], m1[100], m2[100], s0[100], s1[100], s2[100];
        cr_assert(y0 && y1 && y2);
        memset(y1, 0xFF, n * 8);
        memset(y2, 0xFF, n * 8);
        cr_assert_eq(ref_lnmod_forward(&d, x, w.scale, w.shift, y0, m0, s0), LNMOD_OK);
        /* Random pieces, including empty ones, in order. */
        int64_t r = 0;
        while (r < rows) {
            int64_t len = (int64_t)ada_rng_below(&rng, 12);
            int64_t r1 = r + len > rows ? rows : r + len;
            cr_assert_eq(ref_lnmod_forward_rows(&d, r, r1, x, w.scale, w.shift, y1, m1, s1),
                         LNMOD_OK);
            r = r1;
        }
        /* Four threads on uneven disjoint ranges. */
        const int64_t cut[5] = {0, 13, 50, 51, rows};
        pthread_t th[4];
        rows_job jobs[4];
        for (int t = 0; t < 4; t++) {
            jobs[t] = (rows_job){&d, cut[t], cut[t + 1], x, w.scale, w.shift, y2, m2, s2,
                                 LNMOD_ERR_CUDA};
            cr_assert_eq(pthread_create(&th[t], NULL, rows_worker, &jobs[t]), 0);
        }
        for (int t = 0; t < 4; t++) {
            pthread_join(th[t], NULL);
            cr_assert_eq(jobs[t].st, LNMOD_OK);
        }
        cr_assert(memcmp(y0, y1, n * 8) == 0, "%s: pieces differ", lnmod_layout_name(d.layout));
        cr_assert(memcmp(y0, y2, n * 8) == 0, "%s: threads differ", lnmod_layout_name(d.layout));
        cr_assert(memcmp(m0, m1, sizeof m0) == 0 && memcmp(m0, m2, sizeof m0) == 0);
        cr_assert(memcmp(s0, s1, sizeof s0) == 0 && memcmp(s0, s2, sizeof s0) == 0);
        free(x);
        free(w.buf);
        free(y0);
        free(y1);
        free(y2);
    }
}

