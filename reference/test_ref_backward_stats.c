/* test_ref_backward_stats.c -- Criterion tests of the reference's backward at given
 * statistics (ref_lnmod_backward_row, ref_lnmod_backward_colsums, ref_mod_row_range): the
 * row ranges against lnmod_mod_index in every layout, the results against an independent
 * long-double evaluation from the same fp32 mean and rstd, agreement with ref_lnmod_backward
 * (which computes its own statistics) when the fp32 statistics are close, and argument
 * checks. Part of test_reference. */
#include "test_ref_helpers.h"

/* Every row lies in the range of its modulation row, and the ranges tile [0, rows). */
Test(backward_stats, mod_row_ranges_tile_the_rows)
{
    const int64_t shapes[][3] = {{12, 12, 5}, {12, 6, 4}, {12, 6, 6}, {30, 10, 3}, {7, 7, 1}, {1, 1, 1}};
    for (int lay = 0; lay < LNMOD_LAYOUT_COUNT; lay++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            lnmod_desc d = make_desc((lnmod_layout)lay, LNMOD_F32, LNMOD_F32, shapes[s][0], 3,
                                     shapes[s][1], shapes[s][2], 3);
            cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
            int64_t next = 0;
            for (int64_t k = 0; k < lnmod_mod_rows(&d); k++) {
                int64_t r0, r1;
                ref_mod_row_range(&d, k, &r0, &r1);
                cr_assert(r0 == next && r1 > r0, "%s shape %zu k %lld: [%lld, %lld)",
                          lnmod_layout_name(d.layout), s, (long long)k, (long long)r0, (long long)r1);
                for (int64_t r = r0; r < r1; r++) cr_assert_eq(lnmod_mod_index(&d, r), k);
                next = r1;
            }
            cr_assert_eq(next, d.rows);
        }
}

/* bf16 x and dy, fp32 modulation at stride 6D, fp32 statistics rounded from the forward's:
 * dx, dscale and dshift equal a long-double evaluation of the formulas from those fp32
 * statistics; the absolute sums and the row reductions too. */
Test(backward_stats, matches_long_double_at_given_stats)
{
    ada_rng rng;
    ada_rng_seed(&rng, 211);
    for (int lay = 0; lay < LNMOD_LAYOUT_COUNT; lay++) {
        const int64_t D = 37, S = 40, rows = 2 * S;
        lnmod_desc d = make_desc((lnmod_layout)lay, LNMOD_BF16, LNMOD_F32, rows, D, S, 15, 6 * D);
        void *x = make_x(&d, &rng);
        wan_mod w = make_wan_mod(&d, &rng, 0.5);
        const int64_t n = rows * D, nmod = lnmod_mod_rows(&d);
        uint16_t *dy = malloc((size_t)n * 2);
        double *y = malloc((size_t)n * 8), m64[80], r64[80];
        float mean[80], rstd[80];
        cr_assert(dy && y);
        for (int64_t i = 0; i < n; i++) ref_store(LNMOD_BF16, dy, i, ada_rng_normal(&rng));
        cr_assert_eq(ref_lnmod_forward(&d, x, w.scale, w.shift, y, m64, r64), LNMOD_OK);
        for (int64_t r = 0; r < rows; r++) mean[r] = (float)m64[r], rstd[r] = (float)r64[r];
        double dx[37], g[37], xh[37];
        for (int64_t r = 0; r < rows; r++) {
            ref_bwd_row info;
            cr_assert_eq(ref_lnmod_backward_row(&d, r, x, w.scale, dy, mean, rstd, dx, g, xh, &info), LNMOD_OK);
            const int64_t k = naive_mod_row(&d, r);
            long double lg[37], lx[37], sg = 0, sgx = 0, ag = 0;
            for (int64_t i = 0; i < D; i++) {
                lx[i] = (load_indep(LNMOD_BF16, x, r * D + i) - (long double)mean[r]) * rstd[r];
                lg[i] = load_indep(LNMOD_BF16, dy, r * D + i) * (1.0L + load_indep(LNMOD_F32, w.scale, k * 6 * D + i));
                sg += lg[i];
                sgx += lg[i] * lx[i];
                ag += fabsl(lg[i]);
            }
            cr_assert(fabsl(info.mg - sg / D) <= 1e-13L * (1 + ag / D));
            cr_assert(fabsl(info.abs_g - ag / D) <= 1e-13L * (1 + ag / D));
            for (int64_t i = 0; i < D; i++) {
                long double want = rstd[r] * (lg[i] - sg / D - lx[i] * sgx / D);
                cr_assert(fabsl(dx[i] - want) <= 1e-12L * (1 + fabsl(want)), "%s row %lld col %lld: %.17g vs %.17Lg",
                          lnmod_layout_name(d.layout), (long long)r, (long long)i, dx[i], want);
                cr_assert(fabsl(g[i] - lg[i]) <= 1e-15L * (1 + fabsl(lg[i])) && fabsl(xh[i] - lx[i]) <= 1e-13L * (1 + fabsl(lx[i])));
            }
        }
        /* Column sums, in two column pieces [0, 20) and [20, D). */
        for (int64_t k = 0; k < nmod; k++) {
            double s[37], h[37], as[37], ah[37];
            cr_assert_eq(ref_lnmod_backward_colsums(&d, k, 0, 20, x, dy, mean, rstd, s, h, as, ah), LNMOD_OK);
            cr_assert_eq(ref_lnmod_backward_colsums(&d, k, 20, D, x, dy, mean, rstd, s + 20, h + 20, as + 20, ah + 20),
                         LNMOD_OK);
            for (int64_t i = 0; i < D; i++) {
                long double es = 0, eh = 0, eas = 0, eah = 0;
                for (int64_t r = 0; r < rows; r++) {
                    if (naive_mod_row(&d, r) != k) continue;
                    long double v = load_indep(LNMOD_BF16, dy, r * D + i);
                    long double t = v * ((load_indep(LNMOD_BF16, x, r * D + i) - (long double)mean[r]) * rstd[r]);
                    es += t, eh += v, eas += fabsl(t), eah += fabsl(v);
                }
                cr_assert(fabsl(s[i] - es) <= 1e-12L * (1 + eas), "%s dscale[%lld,%lld]", lnmod_layout_name(d.layout),
                          (long long)k, (long long)i);
                cr_assert(fabsl(h[i] - eh) <= 1e-12L * (1 + eah) && fabsl(as[i] - eas) <= 1e-12L * (1 + eas) &&
                          fabsl(ah[i] - eah) <= 1e-12L * (1 + eah));
            }
        }
        free(x);
        free(w.buf);
        free(dy);
        free(y);
    }
}

/* With fp32 statistics the result is the full backward's up to the statistics' rounding:
 * within 1e-5 relative of ref_lnmod_backward (normal rows, O(1) mean and spread). */
Test(backward_stats, close_to_the_full_backward)
{
    ada_rng rng;
    ada_rng_seed(&rng, 212);
    const int64_t D = 64, rows = 24;
    lnmod_desc d = make_desc(LNMOD_PER_FRAME, LNMOD_F32, LNMOD_F32, rows, D, 12, 5, 6 * D);
    void *x = make_x(&d, &rng);
    wan_mod w = make_wan_mod(&d, &rng, 0.5);
    const int64_t n = rows * D, nmod = lnmod_mod_rows(&d);
    float *dyf = malloc((size_t)n * 4);
    double *dy = malloc((size_t)n * 8), *dxf = malloc((size_t)n * 8), *y = malloc((size_t)n * 8);
    double *dsc = malloc((size_t)(nmod * D) * 8), *dsh = malloc((size_t)(nmod * D) * 8), m64[24], r64[24];
    float mean[24], rstd[24];
    cr_assert(dyf && dy && dxf && y && dsc && dsh);
    for (int64_t i = 0; i < n; i++) dyf[i] = (float)ada_rng_normal(&rng), dy[i] = dyf[i];
    d.y_dtype = LNMOD_F32;
    cr_assert_eq(ref_lnmod_forward(&d, x, w.scale, w.shift, y, m64, r64), LNMOD_OK);
    for (int64_t r = 0; r < rows; r++) mean[r] = (float)m64[r], rstd[r] = (float)r64[r];
    cr_assert_eq(ref_lnmod_backward(&d, x, w.scale, dy, dxf, dsc, dsh), LNMOD_OK);
    double dx[64], g[64], xh[64];
    for (int64_t r = 0; r < rows; r++) {
        ref_bwd_row info;
        cr_assert_eq(ref_lnmod_backward_row(&d, r, x, w.scale, dyf, mean, rstd, dx, g, xh, &info), LNMOD_OK);
        for (int64_t i = 0; i < D; i++)
            cr_assert(fabs(dx[i] - dxf[r * D + i]) <= 1e-5 * r64[r] * (1 + fabs(g[i])), "row %lld col %lld: %.9g vs %.9g",
                      (long long)r, (long long)i, dx[i], dxf[r * D + i]);
    }
    for (int64_t k = 0; k < nmod; k++) {
        double s[64], h[64];
        cr_assert_eq(ref_lnmod_backward_colsums(&d, k, 0, D, x, dyf, mean, rstd, s, h, NULL, NULL), LNMOD_OK);
        for (int64_t i = 0; i < D; i++) {
            cr_assert(fabs(s[i] - dsc[k * D + i]) <= 1e-5 * 12);
            cr_assert_eq(h[i], dsh[k * D + i]); /* sums of the same fp32 values: exact in double */
        }
    }
    free(x), free(w.buf), free(dyf), free(dy), free(dxf), free(y), free(dsc), free(dsh);
}

Test(backward_stats, argument_checks)
{
    lnmod_desc d = make_desc(LNMOD_PER_SAMPLE, LNMOD_F32, LNMOD_F32, 4, 8, 2, 1, 8);
    float x[32] = {0}, sc[16] = {0}, dy[32] = {0}, mean[4] = {0}, rstd[4] = {1, 1, 1, 1};
    double dx[8], g[8], xh[8], s[8], h[8];
    ref_bwd_row info;
    const lnmod_status N = LNMOD_ERR_NULL_POINTER, E = LNMOD_ERR_SHAPE;
    cr_assert_eq(ref_lnmod_backward_row(&d, 0, x, sc, dy, mean, rstd, dx, g, xh, &info), LNMOD_OK);
    cr_assert_eq(ref_lnmod_backward_row(NULL, 0, x, sc, dy, mean, rstd, dx, g, xh, &info), N);
    cr_assert_eq(ref_lnmod_backward_row(&d, 0, x, sc, dy, NULL, rstd, dx, g, xh, &info), N);
    cr_assert_eq(ref_lnmod_backward_row(&d, 0, x, sc, dy, mean, rstd, dx, g, xh, NULL), N);
    cr_assert_eq(ref_lnmod_backward_row(&d, -1, x, sc, dy, mean, rstd, dx, g, xh, &info), E);
    cr_assert_eq(ref_lnmod_backward_row(&d, 4, x, sc, dy, mean, rstd, dx, g, xh, &info), E);
    cr_assert_eq(ref_lnmod_backward_colsums(&d, 0, 0, 8, x, dy, mean, rstd, s, h, NULL, NULL), LNMOD_OK);
    cr_assert_eq(ref_lnmod_backward_colsums(&d, 0, 0, 8, x, NULL, mean, rstd, s, h, NULL, NULL), N);
    cr_assert_eq(ref_lnmod_backward_colsums(&d, 2, 0, 8, x, dy, mean, rstd, s, h, NULL, NULL), E);
    cr_assert_eq(ref_lnmod_backward_colsums(&d, -1, 0, 8, x, dy, mean, rstd, s, h, NULL, NULL), E);
    cr_assert_eq(ref_lnmod_backward_colsums(&d, 0, 3, 2, x, dy, mean, rstd, s, h, NULL, NULL), E);
    cr_assert_eq(ref_lnmod_backward_colsums(&d, 0, 0, 9, x, dy, mean, rstd, s, h, NULL, NULL), E);
    d.D = 0;
    cr_assert_eq(ref_lnmod_backward_row(&d, 0, x, sc, dy, mean, rstd, dx, g, xh, &info), LNMOD_ERR_ZERO_DIM);
    cr_assert_eq(ref_lnmod_backward_colsums(&d, 0, 0, 0, x, dy, mean, rstd, s, h, NULL, NULL), LNMOD_ERR_ZERO_DIM);
}
