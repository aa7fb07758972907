/* test_ref_backward.c -- Criterion tests of the float64 reference's backward (against
 * central finite differences, and long column sums) and of its argument validation (every
 * entry point, outputs untouched on an error). Part of test_reference. */
#include "test_ref_helpers.h"

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

