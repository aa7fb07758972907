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
#include <criterion/criterion.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ada_rng.h"
#include "lnmod_desc.h"
#include "ref_lnmod.h"

/* ---- independent helpers ---------------------------------------------------------------- */

/* Value of a binary16-style pattern with `eb` exponent bits and `mb` fraction bits from its
 * fields: (-1)^s * 2^(e-bias) * (1 + m/2^mb), or 2^(1-bias) * m/2^mb when e == 0. */
static double dec_fields(uint16_t h, int eb, int mb)
{
    int s = (h >> (eb + mb)) & 1;
    int e = (h >> mb) & ((1 << eb) - 1);
    int m = h & ((1 << mb) - 1);
    int bias = (1 << (eb - 1)) - 1;
    double v;
    if (e == (1 << eb) - 1) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp((double)m, 1 - bias - mb);
    else v = ldexp((double)((1 << mb) + m), e - bias - mb);
    return s ? -v : v;
}
static double dec_bf16(uint16_t h) { return dec_fields(h, 8, 7); }
static double dec_f16(uint16_t h) { return dec_fields(h, 5, 10); }
static int is_nan16(uint16_t h, int eb, int mb)
{
    return ((h >> mb) & ((1 << eb) - 1)) == (1 << eb) - 1 && (h & ((1 << mb) - 1)) != 0;
}

static double load_indep(lnmod_dtype t, const void *base, int64_t i)
{
    if (t == LNMOD_F32) {
        float f;
        memcpy(&f, (const char *)base + 4 * i, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, (const char *)base + 2 * i, 2);
    return t == LNMOD_F16 ? dec_f16(h) : dec_bf16(h);
}

/* m(r) from first principles: count the frames of a sample, then find r's frame. */
static int64_t naive_mod_row(const lnmod_desc *d, int64_t r)
{
    if (d->layout == LNMOD_PER_TOKEN) return r;
    int64_t S = d->rows_per_sample, b = r / S, t = r - b * S;
    if (d->layout == LNMOD_PER_SAMPLE) return b;
    int64_t F = 0;
    for (int64_t start = 0; start < S; start += d->frame_len) F++;
    return b * F + t / d->frame_len;
}

/* The op evaluated directly in long double, written differently from the reference:
 * y = shift + (x - mean) * rstd * (1 + scale). */
static void naive_forward(const lnmod_desc *d, const void *x, const void *scale,
                          const void *shift, long double *y, long double *mean,
                          long double *rstd)
{
    for (int64_t r = 0; r < d->rows; r++) {
        long double s = 0;
        for (int64_t i = 0; i < d->D; i++) s += load_indep(d->x_dtype, x, r * d->D + i);
        long double mu = s / d->D, ss = 0;
        for (int64_t i = 0; i < d->D; i++) {
            long double dv = load_indep(d->x_dtype, x, r * d->D + i) - mu;
            ss += dv * dv;
        }
        long double rs = 1.0L / sqrtl(ss / d->D + d->eps);
        int64_t k = naive_mod_row(d, r);
        for (int64_t i = 0; i < d->D; i++) {
            long double sc = load_indep(d->mod_dtype, scale, k * d->scale_stride + i);
            long double sh = load_indep(d->mod_dtype, shift, k * d->shift_stride + i);
            y[r * d->D + i] =
                sh + (load_indep(d->x_dtype, x, r * d->D + i) - mu) * rs * (1.0L + sc);
        }
        mean[r] = mu;
        rstd[r] = rs;
    }
}

static lnmod_desc make_desc(lnmod_layout layout, lnmod_dtype xt, lnmod_dtype mt, int64_t rows,
                            int64_t D, int64_t S, int64_t L, int64_t stride)
{
    lnmod_desc d = lnmod_desc_default();
    d.layout = layout;
    d.x_dtype = xt;
    d.y_dtype = xt;
    d.mod_dtype = mt;
    d.rows = rows;
    d.D = D;
    d.rows_per_sample = S;
    d.frame_len = L;
    d.scale_stride = d.shift_stride = stride;
    return d;
}

/* A modulation buffer laid out like Wan's e = [nmod, 6, D] chunk view: shift is chunk 0
 * and scale chunk 1 of each group of six rows, so both have stride 6*D; every other element
 * is NaN, so reading a wrong element poisons the result. */
typedef struct {
    void *buf;
    const void *scale, *shift;
} wan_mod;

static wan_mod make_wan_mod(const lnmod_desc *d, ada_rng *rng, double scale_sd)
{
    int64_t nmod = lnmod_mod_rows(d), n = nmod * 6 * d->D;
    size_t es = lnmod_dtype_size(d->mod_dtype);
    wan_mod w;
    w.buf = malloc((size_t)n * es);
    cr_assert_not_null(w.buf);
    for (int64_t i = 0; i < n; i++) ref_store(d->mod_dtype, w.buf, i, NAN);
    for (int64_t k = 0; k < nmod; k++)
        for (int64_t i = 0; i < d->D; i++) {
            ref_store(d->mod_dtype, w.buf, k * 6 * d->D + i, ada_rng_normal(rng));
            ref_store(d->mod_dtype, w.buf, k * 6 * d->D + d->D + i,
                      scale_sd * ada_rng_normal(rng));
        }
    w.shift = w.buf;
    w.scale = (const char *)w.buf + (size_t)d->D * es;
    return w;
}

/* x rows with their own mean and spread, rounded into x's dtype. */
static void *make_x(const lnmod_desc *d, ada_rng *rng)
{
    void *x = malloc((size_t)(d->rows * d->D) * lnmod_dtype_size(d->x_dtype));
    cr_assert_not_null(x);
    for (int64_t r = 0; r < d->rows; r++) {
        double mu = 6.0 * ada_rng_uniform(rng) - 3.0, sd = 0.1 + 4.0 * ada_rng_uniform(rng);
        for (int64_t i = 0; i < d->D; i++)
            ref_store(d->x_dtype, x, r * d->D + i, mu + sd * ada_rng_normal(rng));
    }
    return x;
}

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

/* ---- backward ---------------------------------------------------------------------------- */

/* L = sum dy * y, summed in long double so its own rounding stays far below the signal. */
static long double loss(const lnmod_desc *d, const float *x, const float *sc, const float *sh,
                        const double *dy, double *ybuf)
{
    cr_assert_eq(ref_lnmod_forward(d, x, sc, sh, ybuf, NULL, NULL), LNMOD_OK);
    long double s = 0;
    for (int64_t i = 0; i < d->rows * d->D; i++) s += (long double)dy[i] * ybuf[i];
    return s;
}

/* Central difference of L with respect to the fp32 value *p, step h. */
static double central(const lnmod_desc *d, float *x, float *sc, float *sh, const double *dy,
                      double *ybuf, float *p, float h)
{
    const float keep = *p;
    *p = keep + h;
    cr_assert_eq((double)*p, (double)keep + h, "step not exact in fp32");
    long double lp = loss(d, x, sc, sh, dy, ybuf);
    *p = keep - h;
    cr_assert_eq((double)*p, (double)keep - h, "step not exact in fp32");
    long double lm = loss(d, x, sc, sh, dy, ybuf);
    *p = keep;
    return (double)((lp - lm) / (2.0L * h));
}

/* dx, dscale and dshift against central differences of L = sum dy * y, for all layouts.
 * Step and tolerance: inputs are multiples of 2^-10 with |v| <= 2 and the step is
 * h = 2^-17, so v +- h is exact in fp32 (19 significant bits) and the perturbation is
 * exactly h. The truncation error of a central difference is h^2/6 * |L'''|; with
 * eps = 0.01 (so rstd <= 10) and O(1) data, |L'''| is at most ~1e3, giving ~3e-8 worst
 * case and ~1e-10 typically. The rounding error of L (long-double sums of double products,
 * |L| ~ 10) is ~1e-15, divided by 2h ~ 1.5e-5: ~1e-10. A tolerance of 1e-6 * (1 + |g|) is
 * thus ~30x above the worst expected error and ~1e4x below the O(1e-2..1) error of any
 * wrong or missing term (e.g. dropping the xhat * mean(g * xhat) term, or eps in rstd). */
Test(backward, finite_differences_all_layouts)
{
    ada_rng rng;
    ada_rng_seed(&rng, 106);
    const float h = 0x1p-17f;
    for (int lay = 0; lay < LNMOD_LAYOUT_COUNT; lay++) {
        /* Per-frame: S = 3, L = 2 -> frames of 2 and 1 rows; two samples. Strides D + 2. */
        const int64_t D = 5, S = 3, rows = 2 * S, stride = D + 2;
        lnmod_desc d = make_desc((lnmod_layout)lay, LNMOD_F32, LNMOD_F32, rows, D, S, 2, stride);
        d.eps = 0.01;
        const int64_t nmod = lnmod_mod_rows(&d), nm = nmod * stride;
        float x[30], *sc = malloc((size_t)nm * 4), *sh = malloc((size_t)nm * 4);
        double dy[30], ybuf[30], dx[30], *dsc = malloc((size_t)(nmod * D) * 8),
                                         *dsh = malloc((size_t)(nmod * D) * 8);
        cr_assert(sc && sh && dsc && dsh);
        for (int64_t i = 0; i < rows * D; i++) {
            x[i] = (float)(((int64_t)ada_rng_below(&rng, 4097) - 2048) * 0x1p-10);
            dy[i] = ada_rng_normal(&rng);
        }
        for (int64_t i = 0; i < nm; i++) {
            sc[i] = (float)(((int64_t)ada_rng_below(&rng, 1025) - 512) * 0x1p-10);
            sh[i] = (float)(((int64_t)ada_rng_below(&rng, 2049) - 1024) * 0x1p-10);
        }
        cr_assert_eq(ref_lnmod_backward(&d, x, sc, dy, dx, dsc, dsh), LNMOD_OK);
        for (int64_t i = 0; i < rows * D; i++) {
            double fd = central(&d, x, sc, sh, dy, ybuf, &x[i], h);
            cr_assert(fabs(fd - dx[i]) <= 1e-6 * (1 + fabs(fd)), "%s dx[%lld] = %.12g, fd %.12g",
                      lnmod_layout_name(d.layout), (long long)i, dx[i], fd);
        }
        for (int64_t k = 0; k < nmod; k++)
            for (int64_t i = 0; i < D; i++) {
                double fs = central(&d, x, sc, sh, dy, ybuf, &sc[k * stride + i], h);
                double fh = central(&d, x, sc, sh, dy, ybuf, &sh[k * stride + i], h);
                cr_assert(fabs(fs - dsc[k * D + i]) <= 1e-6 * (1 + fabs(fs)),
                          "%s dscale[%lld,%lld] = %.12g, fd %.12g", lnmod_layout_name(d.layout),
                          (long long)k, (long long)i, dsc[k * D + i], fs);
                cr_assert(fabs(fh - dsh[k * D + i]) <= 1e-6 * (1 + fabs(fh)),
                          "%s dshift[%lld,%lld] = %.12g, fd %.12g", lnmod_layout_name(d.layout),
                          (long long)k, (long long)i, dsh[k * D + i], fh);
            }
        free(sc);
        free(sh);
        free(dsc);
        free(dsh);
    }
}

/* The column sums over long runs (more rows than one dgemv chunk) and bf16 inputs: dshift
 * and dscale equal direct long-double sums of dy and dy * xhat (xhat from the forward's own
 * mean and rstd), and dx matches the formula evaluated directly. */
Test(backward, column_sums_long_runs)
{
    ada_rng rng;
    ada_rng_seed(&rng, 107);
    for (int lay = 0; lay < LNMOD_LAYOUT_COUNT; lay++) {
        const int64_t D = 70, S = 100, rows = 2 * S;
        lnmod_desc d = make_desc((lnmod_layout)lay, LNMOD_BF16, LNMOD_BF16, rows, D, S, 45, 6 * D);
        void *x = make_x(&d, &rng);
        wan_mod w = make_wan_mod(&d, &rng, 0.5);
        const int64_t nmod = lnmod_mod_rows(&d), n = rows * D;
        double *dy = malloc((size_t)n * 8), *dx = malloc((size_t)n * 8), *y = malloc((size_t)n * 8);
        double *dsc = malloc((size_t)(nmod * D) * 8), *dsh = malloc((size_t)(nmod * D) * 8);
        long double *es = calloc((size_t)(nmod * D), sizeof *es),
                    *eh = calloc((size_t)(nmod * D), sizeof *eh);
        double mean[200], rstd[200];
        cr_assert(dy && dx && y && dsc && dsh && es && eh);
        for (int64_t i = 0; i < n; i++) dy[i] = ada_rng_normal(&rng);
        cr_assert_eq(ref_lnmod_forward(&d, x, w.scale, w.shift, y, mean, rstd), LNMOD_OK);
        cr_assert_eq(ref_lnmod_backward(&d, x, w.scale, dy, dx, dsc, dsh), LNMOD_OK);
        for (int64_t r = 0; r < rows; r++) {
            int64_t k = naive_mod_row(&d, r);
            long double sg = 0, sgx = 0, g[70], xh[70];
            for (int64_t i = 0; i < D; i++) {
                xh[i] = (load_indep(d.x_dtype, x, r * D + i) - (long double)mean[r]) * rstd[r];
                g[i] = dy[r * D + i] *
                       (1.0L + load_indep(d.mod_dtype, w.scale, k * 6 * D + i));
                sg += g[i];
                sgx += g[i] * xh[i];
                es[k * D + i] += dy[r * D + i] * xh[i];
                eh[k * D + i] += dy[r * D + i];
            }
            for (int64_t i = 0; i < D; i++) {
                long double want = rstd[r] * (g[i] - sg / D - xh[i] * sgx / D);
                cr_assert(fabsl(dx[r * D + i] - want) <= 1e-11L * (1 + fabsl(want)));
            }
        }
        for (int64_t i = 0; i < nmod * D; i++) {
            cr_assert(fabsl(dsc[i] - es[i]) <= 1e-11L * (1 + fabsl(es[i])),
                      "%s dscale[%lld] %.17g vs %.17Lg", lnmod_layout_name(d.layout),
                      (long long)i, dsc[i], es[i]);
            cr_assert(fabsl(dsh[i] - eh[i]) <= 1e-11L * (1 + fabsl(eh[i])));
        }
        free(x);
        free(w.buf);
        free(dy);
        free(dx);
        free(y);
        free(dsc);
        free(dsh);
        free(es);
        free(eh);
    }
}

/* ---- conversions ------------------------------------------------------------------------- */

/* Every bf16 pattern: the decoded fp32 equals the ldexp-of-fields value, and converting back
 * (from fp32 and from double) gives the same pattern; NaNs stay NaNs with their sign. */
Test(convert, bf16_exhaustive)
{
    long bad = 0, first = -1;
    for (uint32_t u = 0; u < 65536; u++) {
        uint16_t h = (uint16_t)u;
        float f = ref_bf16_to_f32(h);
        double want = dec_bf16(h);
        int ok;
        if (isnan(want)) {
            uint16_t b1 = ref_f32_to_bf16(f), b2 = ref_f64_to_bf16((double)f);
            ok = isnan(f) && is_nan16(b1, 8, 7) && is_nan16(b2, 8, 7) &&
                 (b1 & 0x8000) == (h & 0x8000) && (b2 & 0x8000) == (h & 0x8000);
        } else {
            ok = (double)f == want && !!signbit(f) == !!signbit(want) &&
                 ref_f32_to_bf16(f) == h && ref_f64_to_bf16(want) == h;
        }
        if (!ok && bad++ == 0) first = (long)u;
    }
    cr_assert_eq(bad, 0, "%ld bf16 patterns wrong, first 0x%04lx", bad, first);
}

Test(convert, f16_exhaustive)
{
    long bad = 0, first = -1;
    for (uint32_t u = 0; u < 65536; u++) {
        uint16_t h = (uint16_t)u;
        float f = ref_f16_to_f32(h);
        double want = dec_f16(h);
        int ok;
        if (isnan(want)) {
            uint16_t b1 = ref_f32_to_f16(f), b2 = ref_f64_to_f16((double)f);
            ok = isnan(f) && is_nan16(b1, 5, 10) && is_nan16(b2, 5, 10) &&
                 (b1 & 0x8000) == (h & 0x8000) && (b2 & 0x8000) == (h & 0x8000);
        } else {
            ok = (double)f == want && !!signbit(f) == !!signbit(want) &&
                 ref_f32_to_f16(f) == h && ref_f64_to_f16(want) == h;
        }
        if (!ok && bad++ == 0) first = (long)u;
    }
    cr_assert_eq(bad, 0, "%ld f16 patterns wrong, first 0x%04lx", bad, first);
}

static float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* fp32 values exactly halfway between two adjacent bf16 values (the fp32 whose low 16 bits
 * are 0x8000) round to the even one; one fp32 ulp either side rounds to the nearer. Covers
 * every adjacent pair, both signs, subnormals, and the top pair (max finite, Inf). */
Test(convert, bf16_ties_to_even)
{
    long bad = 0, first = -1;
    for (uint32_t lo = 0; lo < 0x7F80; lo++)
        for (uint32_t sgn = 0; sgn <= 0x8000; sgn += 0x8000) {
            uint16_t a = (uint16_t)(sgn | lo), b = (uint16_t)(sgn | (lo + 1));
            uint16_t even = (lo & 1) ? b : a;
            uint32_t mid = ((uint32_t)a << 16) | 0x8000u;
            float fm = f32_from_bits(mid), fbelow = f32_from_bits(mid - 1),
                  fabove = f32_from_bits(mid + 1);
            /* the constructed value really is the midpoint (b may be Inf: skip that check) */
            int is_mid = lo == 0x7F7F ||
                         (double)fm == (dec_bf16(a) + dec_bf16(b)) / 2.0;
            int ok = is_mid && ref_f32_to_bf16(fm) == even && ref_f32_to_bf16(fbelow) == a &&
                     ref_f32_to_bf16(fabove) == b && ref_f64_to_bf16((double)fm) == even &&
                     ref_f64_to_bf16((double)fabove) == b && ref_f64_to_bf16((double)fbelow) == a;
            if (!ok && bad++ == 0) first = (long)a;
        }
    cr_assert_eq(bad, 0, "%ld bf16 tie cases wrong, first lower pattern 0x%04lx", bad, first);
    /* Overflow: the tie above the largest finite bf16 goes to Inf (its pattern is even). */
    cr_assert_eq(ref_f32_to_bf16(FLT_MAX), 0x7F80);
    cr_assert_eq(ref_f32_to_bf16(-FLT_MAX), 0xFF80);
    cr_assert_eq(ref_f64_to_bf16(1e39), 0x7F80);
    cr_assert_eq(ref_f32_to_bf16(INFINITY), 0x7F80);
    cr_assert_eq(ref_f64_to_bf16(-INFINITY), 0xFF80);
}

/* The same for fp16: the midpoint of adjacent fp16 values a, b has 12 significant bits, so
 * it is exact in fp32 (also in the subnormal range, 2^-25 being a normal fp32). For the top
 * pair the midpoint is 65504 + 16 = 65520, which must round to Inf. */
Test(convert, f16_ties_to_even)
{
    long bad = 0, first = -1;
    for (uint32_t lo = 0; lo < 0x7C00; lo++)
        for (uint32_t sgn = 0; sgn <= 0x8000; sgn += 0x8000) {
            uint16_t a = (uint16_t)(sgn | lo), b = (uint16_t)(sgn | (lo + 1));
            uint16_t even = (lo & 1) ? b : a;
            double va = dec_f16(a);
            double vb = lo == 0x7BFF ? (sgn ? -65536.0 : 65536.0) : dec_f16(b);
            double mid = (va + vb) / 2.0;
            float fm = (float)mid;
            float fbelow = nextafterf(fm, (float)va), fabove = nextafterf(fm, (float)vb);
            int ok = (double)fm == mid && ref_f32_to_f16(fm) == even &&
                     ref_f32_to_f16(fbelow) == a && ref_f32_to_f16(fabove) == b &&
                     ref_f64_to_f16(mid) == even && ref_f64_to_f16(nextafter(mid, va)) == a &&
                     ref_f64_to_f16(nextafter(mid, vb)) == b;
            if (!ok && bad++ == 0) first = (long)a;
        }
    cr_assert_eq(bad, 0, "%ld f16 tie cases wrong, first lower pattern 0x%04lx", bad, first);
    cr_assert_eq(ref_f32_to_f16(65520.0f), 0x7C00);
    cr_assert_eq(ref_f32_to_f16(nextafterf(65520.0f, 0.0f)), 0x7BFF);
    cr_assert_eq(ref_f32_to_f16(1e6f), 0x7C00);
    cr_assert_eq(ref_f32_to_f16(-1e6f), 0xFC00);
    cr_assert_eq(ref_f64_to_f16(1e300), 0x7C00);
    cr_assert_eq(ref_f32_to_f16(-INFINITY), 0xFC00);
}

/* fp16 subnormals: quantum q = 2^-24. */
Test(convert, f16_subnormal_rounding)
{
    const double q = 0x1p-24;
    cr_assert_eq(ref_f64_to_f16(q), 0x0001);
    cr_assert_eq(ref_f64_to_f16(0.5 * q), 0x0000);               /* tie -> even (0) */
    cr_assert_eq(ref_f64_to_f16(-0.5 * q), 0x8000);              /* signed zero */
    cr_assert_eq(ref_f64_to_f16(0.5 * q + 0x1p-60), 0x0001);      /* just above the tie */
    cr_assert_eq(ref_f64_to_f16(0.25 * q), 0x0000);
    cr_assert_eq(ref_f64_to_f16(0.75 * q), 0x0001);
    cr_assert_eq(ref_f64_to_f16(1.5 * q), 0x0002);               /* tie -> even (2) */
    cr_assert_eq(ref_f64_to_f16(2.5 * q), 0x0002);               /* tie -> even (2) */
    cr_assert_eq(ref_f64_to_f16(1023.5 * q), 0x0400);            /* into the first normal */
    cr_assert_eq(ref_f64_to_f16(1022.5 * q), 0x03FE);
    cr_assert_eq(ref_f32_to_f16((float)(3.0 * q)), 0x0003);
    cr_assert_eq(ref_f32_to_f16(0x1p-30f), 0x0000);
    cr_assert_eq(ref_f32_to_f16(-0x1.8p-25f), 0x8001);           /* 0.75 q, negative */
    cr_assert(ref_f16_to_f32(0x0001) == 0x1p-24f && ref_f16_to_f32(0x03FF) == 1023 * 0x1p-24f);
    /* bf16 subnormals too: quantum 2^-133. */
    cr_assert_eq(ref_f64_to_bf16(0x1p-133), 0x0001);
    cr_assert_eq(ref_f64_to_bf16(0x1p-134), 0x0000);
    cr_assert_eq(ref_f64_to_bf16(0x1.8p-133), 0x0002);
    cr_assert_eq(ref_f32_to_bf16(0x1.8p-133f), 0x0002);
}

/* A double just above a bf16 (or fp16) tie, by less than half an fp32 ulp: rounding to fp32
 * first lands exactly on the tie, which then goes to even (down); the single rounding sees
 * that the value is above the tie and goes up. */
Test(convert, single_rounding_beats_double_rounding)
{
    double v = 1.0 + 0x1p-8 + 0x1p-30; /* bf16 ulp at 1 is 2^-7; fp32 ulp 2^-23 */
    cr_assert_eq((double)(float)v, 1.0 + 0x1p-8, "fp32 rounding should land on the tie");
    cr_assert_eq(ref_f32_to_bf16((float)v), 0x3F80); /* double rounding: 1.0 */
    cr_assert_eq(ref_f64_to_bf16(v), 0x3F81);        /* single rounding: 1 + 2^-7 */
    double w = 1.0 + 0x1p-11 + 0x1p-30;              /* fp16 ulp at 1 is 2^-10 */
    cr_assert_eq((double)(float)w, 1.0 + 0x1p-11);
    cr_assert_eq(ref_f32_to_f16((float)w), 0x3C00);
    cr_assert_eq(ref_f64_to_f16(w), 0x3C01);
    /* ref_store rounds once as well. */
    uint16_t b;
    ref_store(LNMOD_BF16, &b, 0, v);
    cr_assert_eq(b, 0x3F81);
    ref_store(LNMOD_F16, &b, 0, w);
    cr_assert_eq(b, 0x3C01);
}

/* Random doubles over the whole range of each format (subnormals and overflow included):
 * the result is a nearest value, ties to the even pattern, and negation only flips the sign.
 * ref_f64_to_f32 against the hardware conversion of the C cast (in range). */
Test(convert, f64_rounding_is_nearest)
{
    ada_rng rng;
    ada_rng_seed(&rng, 108);
    struct { int eb, mb, emin_test, emax_test; uint16_t inf; } fmt[2] = {
        {8, 7, -140, 129, 0x7F80}, {5, 10, -30, 17, 0x7C00}};
    for (int f = 0; f < 2; f++) {
        long bad = 0;
        double first = 0;
        for (int it = 0; it < 200000; it++) {
            uint64_t span = (uint64_t)(fmt[f].emax_test - fmt[f].emin_test);
            int e = fmt[f].emin_test + (int)ada_rng_below(&rng, span);
            double v = ldexp(1.0 + ada_rng_uniform(&rng), e);
            uint16_t h = f == 0 ? ref_f64_to_bf16(v) : ref_f64_to_f16(v);
            uint16_t hn = f == 0 ? ref_f64_to_bf16(-v) : ref_f64_to_f16(-v);
            int ok = hn == (h | 0x8000);
            if (h == fmt[f].inf) {
                /* only values at or beyond max + half its ulp may overflow */
                uint16_t mx = (uint16_t)(fmt[f].inf - 1);
                double vm = dec_fields(mx, fmt[f].eb, fmt[f].mb);
                double half = (vm - dec_fields((uint16_t)(mx - 1), fmt[f].eb, fmt[f].mb)) / 2;
                ok = ok && v >= vm + half;
            } else {
                double vh = dec_fields(h, fmt[f].eb, fmt[f].mb), err = fabs(v - vh);
                if (h > 0) {
                    double e2 = fabs(v - dec_fields((uint16_t)(h - 1), fmt[f].eb, fmt[f].mb));
                    ok = ok && (err < e2 || (err == e2 && !(h & 1)));
                }
                if (h + 1 < fmt[f].inf) {
                    double e3 = fabs(v - dec_fields((uint16_t)(h + 1), fmt[f].eb, fmt[f].mb));
                    ok = ok && (err < e3 || (err == e3 && !(h & 1)));
                } else if (h + 1 == fmt[f].inf) {
                    double half = (vh - dec_fields((uint16_t)(h - 1), fmt[f].eb, fmt[f].mb)) / 2;
                    ok = ok && v < vh + half;
                }
            }
            if (!ok && bad++ == 0) first = v;
        }
        cr_assert_eq(bad, 0, "format %d: %ld wrong, first %.17g", f, bad, first);
    }
    long bad = 0;
    for (int it = 0; it < 200000; it++) {
        double v = ldexp(1.0 + ada_rng_uniform(&rng), -160 + (int)ada_rng_below(&rng, 286));
        if (ada_rng_below(&rng, 2)) v = -v;
        float a = ref_f64_to_f32(v), b = (float)v;
        if (memcmp(&a, &b, 4) != 0) bad++;
    }
    cr_assert_eq(bad, 0, "%ld doubles round to fp32 differently from the C cast", bad);
    cr_assert(isinf(ref_f64_to_f32(1e39)) && ref_f64_to_f32(1e39) > 0);
    cr_assert(isnan(ref_f64_to_f32(NAN)));
}

/* ref_ulp is the gap to the next pattern up, for every finite positive fp16/bf16 value, at
 * random fp32 values, at zero, and at the top (max finite and Inf). */
Test(convert, ulp)
{
    long bad = 0;
    for (uint32_t h = 0; h < 0x7C00 - 1; h++) {
        double v = dec_f16((uint16_t)h), gap = dec_f16((uint16_t)(h + 1)) - v;
        if (ref_ulp(LNMOD_F16, v) != gap || ref_ulp(LNMOD_F16, -v) != gap) bad++;
    }
    for (uint32_t h = 0; h < 0x7F80 - 1; h++) {
        double v = dec_bf16((uint16_t)h), gap = dec_bf16((uint16_t)(h + 1)) - v;
        if (ref_ulp(LNMOD_BF16, v) != gap) bad++;
    }
    cr_assert_eq(bad, 0, "%ld ulp mismatches", bad);
    ada_rng rng;
    ada_rng_seed(&rng, 109);
    for (int it = 0; it < 100000; it++) {
        uint32_t u = (uint32_t)ada_rng_below(&rng, 0x7F7FFFFF);
        float f = f32_from_bits(u);
        cr_assert_eq(ref_ulp(LNMOD_F32, f), (double)nextafterf(f, INFINITY) - f);
    }
    cr_assert_eq(ref_ulp(LNMOD_F16, 65504.0), 32.0);
    cr_assert_eq(ref_ulp(LNMOD_F16, INFINITY), 32.0);
    cr_assert_eq(ref_ulp(LNMOD_F16, 1.0), 0x1p-10);
    cr_assert_eq(ref_ulp(LNMOD_BF16, 1.0), 0x1p-7);
    cr_assert_eq(ref_ulp(LNMOD_F32, 1.0), 0x1p-23);
    cr_assert_eq(ref_ulp(LNMOD_F16, 0.0), 0x1p-24);
    cr_assert_eq(ref_ulp(LNMOD_F16, 1e-7), 0x1p-24);
    cr_assert(isnan(ref_ulp(LNMOD_F16, NAN)));
    cr_assert(isnan(ref_ulp((lnmod_dtype)9, 1.0)));
}

/* ref_store rounds once to the dtype and ref_load widens exactly; an invalid dtype writes
 * nothing and loads NaN. */
Test(convert, load_store)
{
    ada_rng rng;
    ada_rng_seed(&rng, 110);
    unsigned char buf[64 * 4];
    for (int t = 0; t < LNMOD_DTYPE_COUNT; t++)
        for (int i = 0; i < 64; i++) {
            double v = ldexp(ada_rng_normal(&rng), (int)ada_rng_below(&rng, 30) - 15);
            ref_store((lnmod_dtype)t, buf, i, v);
            double got = ref_load((lnmod_dtype)t, buf, i);
            double want = t == LNMOD_F32  ? (double)(float)v
                          : t == LNMOD_F16 ? dec_f16(ref_f64_to_f16(v))
                                           : dec_bf16(ref_f64_to_bf16(v));
            cr_assert_eq(got, want);
            cr_assert_eq(got, load_indep((lnmod_dtype)t, buf, i));
        }
    unsigned char before[sizeof buf];
    memcpy(before, buf, sizeof buf);
    ref_store((lnmod_dtype)7, buf, 0, 1.0);
    cr_assert(memcmp(before, buf, sizeof buf) == 0);
    cr_assert(isnan(ref_load((lnmod_dtype)7, buf, 0)));
}

/* ---- argument validation ------------------------------------------------------------------ */

#define VD 8
#define VROWS 4
typedef struct {
    float x[VROWS * VD], scale[4 * 6 * VD], shift[4 * 6 * VD];
    double y[VROWS * VD], mean[VROWS], rstd[VROWS];
    double dy[VROWS * VD], dx[VROWS * VD], dscale[VROWS * VD], dshift[VROWS * VD];
} vbufs;

static void vfill(vbufs *b)
{
    for (int i = 0; i < VROWS * VD; i++) {
        b->x[i] = (float)(i % 5);
        b->dy[i] = 1.0;
        b->y[i] = b->dx[i] = b->dscale[i] = b->dshift[i] = -12345.0; /* sentinels */
    }
    for (int i = 0; i < 4 * 6 * VD; i++) b->scale[i] = b->shift[i] = 0.25f;
    for (int i = 0; i < VROWS; i++) b->mean[i] = b->rstd[i] = -12345.0;
}

static int vuntouched(const vbufs *b)
{
    for (int i = 0; i < VROWS * VD; i++)
        if (b->y[i] != -12345.0 || b->dx[i] != -12345.0 || b->dscale[i] != -12345.0 ||
            b->dshift[i] != -12345.0)
            return 0;
    for (int i = 0; i < VROWS; i++)
        if (b->mean[i] != -12345.0 || b->rstd[i] != -12345.0) return 0;
    return 1;
}

/* Per-sample, two samples of two rows, f32 everywhere, stride 6*D: valid. */
static lnmod_desc vdesc(void)
{
    return make_desc(LNMOD_PER_SAMPLE, LNMOD_F32, LNMOD_F32, VROWS, VD, 2, 1, 6 * VD);
}

/* Runs forward, forward_rows and backward on a descriptor and checks all return `want` and
 * leave every output untouched. */
static void expect_desc_error(const lnmod_desc *d, lnmod_status want, const char *what)
{
    vbufs *b = malloc(sizeof *b);
    cr_assert_not_null(b);
    vfill(b);
    lnmod_status s1 = ref_lnmod_forward(d, b->x, b->scale, b->shift, b->y, b->mean, b->rstd);
    lnmod_status s2 =
        ref_lnmod_forward_rows(d, 0, 1, b->x, b->scale, b->shift, b->y, b->mean, b->rstd);
    lnmod_status s3 = ref_lnmod_backward(d, b->x, b->scale, b->dy, b->dx, b->dscale, b->dshift);
    cr_assert(s1 == want && s2 == want && s3 == want, "%s: got %s/%s/%s, want %s", what,
              lnmod_status_name(s1), lnmod_status_name(s2), lnmod_status_name(s3),
              lnmod_status_name(want));
    cr_assert(vuntouched(b), "%s: an output was written", what);
    free(b);
}

Test(validation, valid_descriptor_writes)
{
    /* The control: with the valid descriptor everything succeeds and writes the outputs, so
     * the sentinel checks of the other tests are able to notice a write. */
    lnmod_desc d = vdesc();
    vbufs *b = malloc(sizeof *b);
    cr_assert_not_null(b);
    vfill(b);
    cr_assert_eq(ref_lnmod_forward(&d, b->x, b->scale, b->shift, b->y, b->mean, b->rstd),
                 LNMOD_OK);
    cr_assert_eq(ref_lnmod_backward(&d, b->x, b->scale, b->dy, b->dx, b->dscale, b->dshift),
                 LNMOD_OK);
    for (int i = 0; i < VROWS * VD; i++) cr_assert(b->y[i] != -12345.0 && b->dx[i] != -12345.0);
    for (int i = 0; i < 2 * VD; i++) cr_assert(b->dscale[i] != -12345.0);
    free(b);
}

Test(validation, null_pointers)
{
    lnmod_desc d = vdesc();
    vbufs *b = malloc(sizeof *b);
    cr_assert_not_null(b);
    vfill(b);
    const lnmod_status N = LNMOD_ERR_NULL_POINTER;
    cr_assert_eq(ref_lnmod_forward(NULL, b->x, b->scale, b->shift, b->y, b->mean, b->rstd), N);
    cr_assert_eq(ref_lnmod_forward(&d, NULL, b->scale, b->shift, b->y, b->mean, b->rstd), N);
    cr_assert_eq(ref_lnmod_forward(&d, b->x, NULL, b->shift, b->y, b->mean, b->rstd), N);
    cr_assert_eq(ref_lnmod_forward(&d, b->x, b->scale, NULL, b->y, b->mean, b->rstd), N);
    cr_assert_eq(ref_lnmod_forward(&d, b->x, b->scale, b->shift, NULL, b->mean, b->rstd), N);
    cr_assert_eq(ref_lnmod_forward_rows(NULL, 0, 1, b->x, b->scale, b->shift, b->y, NULL, NULL), N);
    cr_assert_eq(ref_lnmod_forward_rows(&d, 0, 1, NULL, b->scale, b->shift, b->y, NULL, NULL), N);
    cr_assert_eq(ref_lnmod_forward_rows(&d, 0, 1, b->x, b->scale, b->shift, NULL, NULL, NULL), N);
    cr_assert_eq(ref_lnmod_backward(NULL, b->x, b->scale, b->dy, b->dx, b->dscale, b->dshift), N);
    cr_assert_eq(ref_lnmod_backward(&d, NULL, b->scale, b->dy, b->dx, b->dscale, b->dshift), N);
    cr_assert_eq(ref_lnmod_backward(&d, b->x, NULL, b->dy, b->dx, b->dscale, b->dshift), N);
    cr_assert_eq(ref_lnmod_backward(&d, b->x, b->scale, NULL, b->dx, b->dscale, b->dshift), N);
    cr_assert_eq(ref_lnmod_backward(&d, b->x, b->scale, b->dy, NULL, b->dscale, b->dshift), N);
    cr_assert_eq(ref_lnmod_backward(&d, b->x, b->scale, b->dy, b->dx, NULL, b->dshift), N);
    cr_assert_eq(ref_lnmod_backward(&d, b->x, b->scale, b->dy, b->dx, b->dscale, NULL), N);
    cr_assert(vuntouched(b));
    free(b);
}

Test(validation, bad_descriptors)
{
    lnmod_desc d;
    d = vdesc(), d.D = 0;
    expect_desc_error(&d, LNMOD_ERR_ZERO_DIM, "D = 0");
    d = vdesc(), d.rows = 0;
    expect_desc_error(&d, LNMOD_ERR_ZERO_DIM, "rows = 0");
    d = vdesc(), d.rows = -4;
    expect_desc_error(&d, LNMOD_ERR_ZERO_DIM, "rows < 0");
    d = vdesc(), d.rows_per_sample = 0;
    expect_desc_error(&d, LNMOD_ERR_ZERO_DIM, "rows_per_sample = 0");
    d = vdesc(), d.eps = 0.0;
    expect_desc_error(&d, LNMOD_ERR_EPS, "eps = 0");
    d = vdesc(), d.eps = -1e-6;
    expect_desc_error(&d, LNMOD_ERR_EPS, "eps < 0");
    d = vdesc(), d.eps = NAN;
    expect_desc_error(&d, LNMOD_ERR_EPS, "eps NaN");
    d = vdesc(), d.eps = INFINITY;
    expect_desc_error(&d, LNMOD_ERR_EPS, "eps Inf");
    d = vdesc(), d.scale_stride = VD - 1;
    expect_desc_error(&d, LNMOD_ERR_STRIDE, "scale stride < D");
    d = vdesc(), d.shift_stride = VD - 1;
    expect_desc_error(&d, LNMOD_ERR_STRIDE, "shift stride < D");
    d = vdesc(), d.scale_stride = -6 * VD;
    expect_desc_error(&d, LNMOD_ERR_STRIDE, "negative stride");
    d = vdesc(), d.scale_stride = INT64_MAX / 2 + 1;
    expect_desc_error(&d, LNMOD_ERR_OVERFLOW, "last modulation row offset overflows");
    d = vdesc(), d.layout = LNMOD_PER_TOKEN, d.shift_stride = INT64_MAX / 3;
    expect_desc_error(&d, LNMOD_ERR_OVERFLOW, "per-token offset overflows");
    d = vdesc(), d.rows = 1, d.D = (int64_t)INT_MAX + 1, d.rows_per_sample = 1;
    expect_desc_error(&d, LNMOD_ERR_OVERFLOW, "D beyond one cblas call");
    d = vdesc(), d.rows_per_sample = 3;
    expect_desc_error(&d, LNMOD_ERR_SHAPE, "rows not a multiple of rows_per_sample");
    d = vdesc(), d.layout = LNMOD_PER_FRAME, d.frame_len = 3;
    expect_desc_error(&d, LNMOD_ERR_SHAPE, "frame_len > rows_per_sample");
    d = vdesc(), d.x_dtype = (lnmod_dtype)7;
    expect_desc_error(&d, LNMOD_ERR_DTYPE, "x dtype 7");
    d = vdesc(), d.mod_dtype = (lnmod_dtype)-1;
    expect_desc_error(&d, LNMOD_ERR_DTYPE, "mod dtype -1");
    d = vdesc(), d.layout = (lnmod_layout)5;
    expect_desc_error(&d, LNMOD_ERR_LAYOUT, "layout 5");
    d = vdesc(), d.x_dtype = LNMOD_BF16, d.mod_dtype = LNMOD_F16, d.y_dtype = LNMOD_BF16;
    expect_desc_error(&d, LNMOD_ERR_DTYPE_COMBO, "bf16 x with f16 modulation");
    d = vdesc(), d.x_dtype = LNMOD_BF16, d.y_dtype = LNMOD_F16;
    expect_desc_error(&d, LNMOD_ERR_DTYPE_COMBO, "bf16 x with f16 y");
}

Test(validation, row_ranges)
{
    lnmod_desc d = vdesc();
    vbufs *b = malloc(sizeof *b);
    cr_assert_not_null(b);
    vfill(b);
    const int64_t bad[][2] = {
        {-1, 2}, {0, VROWS + 1}, {3, 2}, {VROWS + 1, VROWS + 1}, {INT64_MIN, 0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(ref_lnmod_forward_rows(&d, bad[i][0], bad[i][1], b->x, b->scale, b->shift,
                                            b->y, b->mean, b->rstd),
                     LNMOD_ERR_SHAPE, "range [%lld, %lld)", (long long)bad[i][0],
                     (long long)bad[i][1]);
    /* An empty range is fine and writes nothing. */
    cr_assert_eq(ref_lnmod_forward_rows(&d, 2, 2, b->x, b->scale, b->shift, b->y, b->mean,
                                        b->rstd),
                 LNMOD_OK);
    cr_assert(vuntouched(b));
    /* A one-row range writes exactly that row. */
    cr_assert_eq(ref_lnmod_forward_rows(&d, 1, 2, b->x, b->scale, b->shift, b->y, b->mean,
                                        b->rstd),
                 LNMOD_OK);
    for (int r = 0; r < VROWS; r++)
        for (int i = 0; i < VD; i++) cr_assert_eq(b->y[r * VD + i] != -12345.0, r == 1);
    cr_assert(b->mean[0] == -12345.0 && b->mean[1] != -12345.0 && b->mean[2] == -12345.0);
    free(b);
}
