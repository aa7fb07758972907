/* test_verify.c -- Criterion tests of the verifier's CPU side: the pass condition and the
 * tolerance table (a value one step beyond the allowance fails, NaN and Inf fail), the
 * error statistics and their merge, the guard-band check, and the input generator
 * (determinism, row kinds, NaN gaps in strided modulation, geometry that validates).
 * Run: ctest -R verify_check (or build/harness/test_verify directly). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "ref_lnmod.h"
#include "verify_check.h"
#include "verify_half.h"
#include "verify_inputs.h"

/* A value just inside the allowance (99% of it, clear of the rounding of ref + allowance). */
static double edge(double ref, verify_tol t) { return ref + 0.99 * (t.atol + t.rtol * fabs(ref)); }

Test(tolerance, pass_condition_boundary)
{
    const lnmod_dtype dts[3] = {LNMOD_F32, LNMOD_F16, LNMOD_BF16};
    const double refs[5] = {1.0, -3.75, 1234.5, 1e-9, 0.0};
    for (int i = 0; i < 3; i++) {
        verify_tol t = verify_tol_y(dts[i]);
        for (int k = 0; k < 5; k++) {
            double ref = refs[k];
            double ok = edge(ref, t);
            cr_expect(verify_elem_ok(ref, ref, t.atol, t.rtol), "exact value must pass");
            cr_expect(verify_elem_ok(ok, ref, t.atol, t.rtol), "%s: value inside the allowance must pass",
                      lnmod_dtype_name(dts[i]));
            /* A clear step beyond (1% more than allowed) must fail. */
            double bad = ref + 1.01 * (t.atol + t.rtol * fabs(ref));
            cr_expect(!verify_elem_ok(bad, ref, t.atol, t.rtol), "%s ref %g: %g must fail",
                      lnmod_dtype_name(dts[i]), ref, bad);
            double bad2 = ref - 1.01 * (t.atol + t.rtol * fabs(ref));
            cr_expect(!verify_elem_ok(bad2, ref, t.atol, t.rtol), "below the band must fail too");
        }
    }
}

Test(tolerance, nan_and_inf_fail)
{
    verify_tol t = verify_tol_y(LNMOD_F32);
    cr_expect(!verify_elem_ok(NAN, 1.0, t.atol, t.rtol));
    cr_expect(!verify_elem_ok(-NAN, 0.0, t.atol, t.rtol));
    cr_expect(!verify_elem_ok(INFINITY, 1e300, t.atol, 1e300)); /* even with a huge rtol */
    cr_expect(!verify_elem_ok(-INFINITY, -INFINITY, t.atol, t.rtol));
    cr_expect(!verify_elem_ok(1.0, NAN, t.atol, t.rtol));
    /* A kernel output left at the 0xFF poison reads as NaN in every dtype. */
    uint16_t h = 0xFFFF;
    float f;
    uint32_t u = 0xFFFFFFFFu;
    memcpy(&f, &u, 4);
    cr_expect(isnan(f));
    cr_expect(isnan(ref_load(LNMOD_BF16, &h, 0)));
    cr_expect(isnan(ref_load(LNMOD_F16, &h, 0)));
}

/* bf16: the neighbours of a value are one ULP away; 1 ULP passes, 2 ULP fail wherever the
 * value sits in its binade (the rtol 2^-7 is below 2 ULP everywhere). */
Test(tolerance, bf16_one_ulp_passes_two_fail)
{
    verify_tol t = verify_tol_y(LNMOD_BF16);
    const double vals[6] = {1.0, 1.9921875, 3.0, -0.15625, 100.5, 1.5e5};
    for (int i = 0; i < 6; i++) {
        double ref = vals[i];
        uint16_t b = ref_f64_to_bf16(ref);
        double exact = ref_bf16_to_f32(b);
        uint16_t up1 = (uint16_t)(b + 1), up2 = (uint16_t)(b + 2);
        cr_expect(verify_elem_ok(ref_bf16_to_f32(up1), exact, t.atol, t.rtol),
                  "1 ULP above %g must pass", exact);
        cr_expect(!verify_elem_ok(ref_bf16_to_f32(up2), exact, t.atol, t.rtol),
                  "2 ULP above %g must fail", exact);
    }
}

Test(tolerance, f16_one_ulp_passes_two_fail)
{
    verify_tol t = verify_tol_y(LNMOD_F16);
    const double vals[5] = {1.0, 1.999, 3.0, -0.3, 700.25};
    for (int i = 0; i < 5; i++) {
        uint16_t h = ref_f64_to_f16(vals[i]);
        double exact = ref_f16_to_f32(h);
        cr_expect(verify_elem_ok(ref_f16_to_f32((uint16_t)(h + 1)), exact, t.atol, t.rtol),
                  "1 ULP above %g must pass", exact);
        cr_expect(!verify_elem_ok(ref_f16_to_f32((uint16_t)(h + 2)), exact, t.atol, t.rtol),
                  "2 ULP above %g must fail", exact);
    }
}

Test(tolerance, f32_relative_1e5)
{
    verify_tol t = verify_tol_y(LNMOD_F32);
    cr_expect(verify_elem_ok(1000.0 * (1 + 0.9e-5), 1000.0, t.atol, t.rtol));
    cr_expect(!verify_elem_ok(1000.0 * (1 + 1.1e-5) + 1e-5, 1000.0, t.atol, t.rtol));
    /* Near zero the absolute term decides: 1e-5 passes, 3e-5 does not. */
    cr_expect(verify_elem_ok(1e-5, 0.0, t.atol, t.rtol));
    cr_expect(!verify_elem_ok(3e-5, 0.0, t.atol, t.rtol));
}

Test(stats, counts_worst_and_first_failures)
{
    verify_stats s;
    verify_stats_init(&s);
    const double atol = 1e-5, rtol = 1e-5;
    for (int i = 0; i < 100; i++) verify_stats_add(&s, i, 1.0 + (i == 42 ? 1e-3 : 0.0), 1.0, atol, rtol);
    verify_stats_add(&s, 100, NAN, 2.0, atol, rtol);
    verify_stats_add(&s, 101, 2.0, 2.0, atol, rtol);
    cr_expect_eq(s.n, 102);
    cr_expect_eq(s.failed, 2);
    cr_expect_eq(s.nonfinite, 1);
    cr_expect_eq(s.worst_index, 100, "the NaN is the worst element");
    cr_expect_eq(s.nfirst, 2);
    cr_expect_eq(s.first_index[0], 42);
    cr_expect_eq(s.first_index[1], 100);
    cr_expect(fabs(s.max_abs - 1e-3) < 1e-12);
    cr_expect(!verify_stats_pass(&s));
    double l2 = verify_stats_l2_rel(&s);
    cr_expect(l2 > 0.0 && l2 < 1e-3);
}

Test(stats, merge_equals_single_pass)
{
    /* Split 1000 elements at 3 places into 4 partial stats: the merge must equal one pass. */
    verify_stats one, part[4], merged;
    verify_stats_init(&one);
    verify_stats_init(&merged);
    for (int k = 0; k < 4; k++) verify_stats_init(&part[k]);
    for (int i = 0; i < 1000; i++) {
        double ref = sin(i * 0.1), got = ref + ((i % 97) == 5 ? 0.01 : 1e-7);
        verify_stats_add(&one, i, got, ref, 1e-5, 1e-5);
        verify_stats_add(&part[(i * 4) / 1000], i, got, ref, 1e-5, 1e-5);
    }
    for (int k = 3; k >= 0; k--) verify_stats_merge(&merged, &part[k]); /* any order */
    cr_expect_eq(merged.n, one.n);
    cr_expect_eq(merged.failed, one.failed);
    cr_expect_gt(one.failed, 5);
    cr_expect_eq(merged.worst_index, one.worst_index);
    cr_expect_eq(merged.max_abs, one.max_abs);
    cr_expect_eq(merged.nfirst, VERIFY_FIRST_FAILS);
    for (int i = 0; i < VERIFY_FIRST_FAILS; i++) cr_expect_eq(merged.first_index[i], one.first_index[i]);
    cr_expect(fabs(verify_stats_l2_rel(&merged) - verify_stats_l2_rel(&one)) < 1e-12);
}

Test(compare, y_rows_bf16_wrong_by_two_ulp_fails)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = 4;
    d.D = 8;
    d.rows_per_sample = 4;
    d.scale_stride = d.shift_stride = 8;
    uint16_t y[32];
    double ref[32];
    for (int i = 0; i < 32; i++) {
        ref[i] = 0.37 * (i - 16);
        y[i] = ref_f64_to_bf16(ref[i]); /* correctly rounded: passes */
    }
    verify_stats s;
    verify_stats_init(&s);
    verify_compare_y_rows(&d, 0, 4, y, ref, &s);
    cr_expect(verify_stats_pass(&s), "a correctly rounded bf16 output must pass");
    y[13] = (uint16_t)(y[13] + 2);
    verify_stats_init(&s);
    verify_compare_y_rows(&d, 0, 4, y, ref, &s);
    cr_expect(!verify_stats_pass(&s));
    cr_expect_eq(s.worst_index, 13);
    y[13] = (uint16_t)(y[13] - 2);
    y[31] = 0xFFFF; /* poison left in place */
    verify_stats_init(&s);
    verify_compare_y_rows(&d, 0, 4, y, ref, &s);
    cr_expect_eq(s.nonfinite, 1);
    cr_expect(!verify_stats_pass(&s));
}

Test(compare, mean_allowance_scales_with_row_std)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = 2;
    d.D = 16;
    d.rows_per_sample = 2;
    d.scale_stride = d.shift_stride = 16;
    /* Row 0: std 1 (rstd ~ 1); row 1: constant (rstd = 1/sqrt(eps)). */
    double rm[2] = {0.001, 5.0}, rr[2] = {1.0 / sqrt(1.0 + 1e-6), 1.0 / sqrt(1e-6)};
    float gm[2] = {(float)(0.001 + 5e-6), 5.0f}, gr[2] = {(float)rr[0], (float)rr[1]};
    verify_stats sm, sr;
    verify_stats_init(&sm);
    verify_stats_init(&sr);
    verify_compare_stats_rows(&d, 0, 2, gm, gr, rm, rr, &sm, &sr);
    cr_expect(verify_stats_pass(&sm), "5e-6 off a mean near 0 with std 1 is fine");
    cr_expect(verify_stats_pass(&sr));
    gm[1] = 5.0f * (1.0f + 1e-4f); /* a constant row's mean must be right relatively */
    gr[0] = (float)(rr[0] * (1 + 3e-5));
    verify_stats_init(&sm);
    verify_stats_init(&sr);
    verify_compare_stats_rows(&d, 0, 2, gm, gr, rm, rr, &sm, &sr);
    cr_expect_eq(sm.failed, 1);
    cr_expect_eq(sm.worst_index, 1);
    cr_expect_eq(sr.failed, 1);
    cr_expect_eq(sr.worst_index, 0);
}

Test(guard, detects_one_written_byte)
{
    unsigned char buf[512];
    memset(buf, VERIFY_POISON_BYTE, sizeof buf);
    size_t bad = 12345;
    cr_expect(verify_guard_ok(buf, sizeof buf, &bad));
    cr_expect_eq(bad, 12345, "untouched guard leaves first_bad alone");
    buf[300] = 0xFE;
    cr_expect(!verify_guard_ok(buf, sizeof buf, &bad));
    cr_expect_eq(bad, 300);
    cr_expect(verify_guard_ok(buf, 300, NULL), "the band before the write is intact");
    cr_expect(verify_guard_ok(buf, 0, NULL), "an empty band is intact");
}

Test(inputs, deterministic_and_split_independent)
{
    lnmod_desc d = lnmod_desc_default();
    d.x_dtype = LNMOD_F32;
    d.mod_dtype = LNMOD_F32;
    d.y_dtype = LNMOD_F32;
    verify_geom g;
    verify_pick_geometry(&d, 12, 40, 0x1234, &g);
    cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
    float a[480], b[480];
    verify_fill_x_rows(&d, 99, g.salt, 0, 12, a);
    verify_fill_x_rows(&d, 99, g.salt, 0, 5, b);
    verify_fill_x_rows(&d, 99, g.salt, 5, 12, b);
    cr_expect(memcmp(a, b, sizeof a) == 0, "row split must not change the inputs");
    verify_fill_x_rows(&d, 100, g.salt, 0, 12, b);
    cr_expect(memcmp(a, b, sizeof a) != 0, "another seed gives other inputs");
    /* Row kinds: every kind shows up within 6 rows and looks like its description. */
    int seen[5] = {0};
    for (int r = 0; r < 12; r++) {
        verify_row_kind k = verify_row_kind_of(12, r, g.salt);
        seen[k] = 1;
        const float *x = a + r * 40;
        double mn = x[0], mx = x[0], sum = 0;
        for (int j = 0; j < 40; j++) {
            mn = fmin(mn, x[j]);
            mx = fmax(mx, x[j]);
            sum += x[j];
        }
        if (k == VROW_CONSTANT) cr_expect_eq(mn, mx, "constant row %d", r);
        if (k == VROW_LARGE_MEAN) cr_expect(fabs(sum / 40 - 1e4) < 0.1 && mx - mn < 0.1, "row %d", r);
        if (k == VROW_HUGE) cr_expect(mx - mn > 1e14, "huge row %d", r);
        if (k == VROW_OUTLIER) cr_expect(fmax(fabs(mn), fabs(mx)) > 20.0, "outlier row %d", r);
    }
    for (int k = 0; k < 5; k++) cr_expect(seen[k], "row kind %d missing", k);
    for (int r = 0; r < 3; r++) cr_expect_eq(verify_row_kind_of(2, r, g.salt), VROW_NORMAL);
}

Test(inputs, modulation_gaps_are_nan)
{
    lnmod_desc d = lnmod_desc_default();
    d.layout = LNMOD_PER_TOKEN;
    d.rows = 3;
    d.D = 5;
    d.rows_per_sample = 3;
    d.scale_stride = 13; /* 2D+3 */
    d.shift_stride = 30; /* 6D */
    int64_t ns = verify_mod_elems(&d, d.scale_stride), nh = verify_mod_elems(&d, d.shift_stride);
    cr_assert_eq(ns, 2 * 13 + 5);
    float sc[31], sh[65];
    verify_fill_mod_rows(&d, 7, 0, 3, sc, sh);
    for (int64_t i = 0; i < ns; i++) {
        int in_row = (i % 13) < 5;
        cr_expect(in_row ? isfinite(sc[i]) : isnan(sc[i]), "scale[%ld]", (long)i);
    }
    for (int64_t i = 0; i < nh; i++) {
        int in_row = (i % 30) < 5;
        cr_expect(in_row ? isfinite(sh[i]) : isnan(sh[i]), "shift[%ld]", (long)i);
    }
}

Test(inputs, geometry_validates_and_covers)
{
    /* Every layout x shape of the full grid (and the large case's shape) with every pattern
     * of the geometry bits (the low 16 bits of the case hash) gives a valid descriptor; and
     * both frame_len kinds, all three strides, misaligned offsets, eps 1e-5 and the no-stats
     * path all occur. */
    const int64_t Ds[] = {1, 7, 33, 127, 264, 1000, 1536, 1537, 2048, 2304, 3072, 4096, 5119, 5120, 8192, 12288};
    const int64_t Rs[] = {1, 3, 60, 1560, 32760, 524800};
    int64_t frame_div = 0, frame_nodiv = 0, wide = 0, narrow = 0, odd = 0, off = 0, eps5 = 0, nostats = 0;
    int64_t off_all = 0, off_xsh = 0, off_ysc = 0, aligned = 0, n = 0;
    for (int l = 0; l < 3; l++)
        for (int a = 0; a < (int)(sizeof Ds / sizeof Ds[0]); a++)
            for (int b = 0; b < 6; b++)
                for (uint64_t bits = 0; bits < (1u << 16); bits += (b == 5 ? 97 : 1)) {
                    lnmod_desc d = lnmod_desc_default();
                    d.layout = (lnmod_layout)l;
                    verify_geom g;
                    verify_pick_geometry(&d, Rs[b], Ds[a], bits | (0xabcULL << 20), &g);
                    if (lnmod_desc_validate(&d) != LNMOD_OK || d.rows % d.rows_per_sample != 0)
                        cr_assert_fail("invalid: layout %d D %ld rows %ld bits %lx", l, (long)Ds[a],
                                       (long)Rs[b], (unsigned long)bits);
                    if (l == LNMOD_PER_FRAME && d.rows_per_sample > 2) {
                        if (d.rows_per_sample % d.frame_len == 0) frame_div++;
                        else frame_nodiv++;
                    }
                    if (d.scale_stride == 6 * d.D && d.D > 1) wide++;
                    if (d.scale_stride == d.D) narrow++;
                    if (d.scale_stride == 2 * d.D + 3) odd++;
                    if (g.off.x || g.off.y) off++;
                    n++;
                    if (g.off.x && g.off.y && g.off.scale && g.off.shift) off_all++;
                    else if (g.off.x && g.off.shift && !g.off.y && !g.off.scale) off_xsh++;
                    else if (g.off.y && g.off.scale && !g.off.x && !g.off.shift) off_ysc++;
                    else if (!g.off.x && !g.off.y && !g.off.scale && !g.off.shift) aligned++;
                    else cr_assert_fail("offsets of no kind: layout %d D %ld bits %lx", l, (long)Ds[a], (unsigned long)bits);
                    if (d.eps == 1e-5) eps5++;
                    if (!g.want_stats) nostats++;
                }
    cr_expect(frame_div > 0 && frame_nodiv > 0);
    cr_expect(wide > 0 && narrow > 0 && odd > 0);
    cr_expect(off > 0 && eps5 > 0 && nostats > 0);
    /* each kind of misalignment occurs; three quarters of the sets are aligned */
    cr_expect(off_all > 0 && off_xsh > 0 && off_ysc > 0);
    cr_expect(aligned * 8 > n * 5 && aligned * 8 < n * 7, "aligned %ld of %ld", (long)aligned, (long)n);
}

/* The verifier's inline conversions agree with the reference's, value by value: all 65536
 * half patterns widened, and fp32 values of every magnitude (random bits) narrowed. */
Test(half, widening_matches_reference_exhaustively)
{
    for (uint32_t h = 0; h < 65536; h++) {
        float a = verify_f16_to_f32((uint16_t)h), b = ref_f16_to_f32((uint16_t)h);
        if (isnan(b)) cr_expect(isnan(a), "f16 %04x", h);
        else cr_expect(a == b && signbit(a) == signbit(b), "f16 %04x: %g vs %g", h, a, b);
        float c = verify_bf16_to_f32((uint16_t)h), e = ref_bf16_to_f32((uint16_t)h);
        if (isnan(e)) cr_expect(isnan(c), "bf16 %04x", h);
        else cr_expect(c == e && signbit(c) == signbit(e), "bf16 %04x: %g vs %g", h, c, e);
    }
}

Test(half, narrowing_round_trips_and_matches_reference)
{
    for (uint32_t h = 0; h < 65536; h++) {
        float f = verify_f16_to_f32((uint16_t)h);
        if (!isnan(f)) cr_expect_eq(verify_f32_to_f16(f), h, "f16 %04x round trip", h);
        float g = verify_bf16_to_f32((uint16_t)h);
        if (!isnan(g)) cr_expect_eq(verify_f32_to_bf16(g), h, "bf16 %04x round trip", h);
    }
    ada_rng r;
    ada_rng_seed(&r, 2024);
    int64_t bad16 = 0, badb = 0;
    for (int i = 0; i < 2000000; i++) {
        uint32_t u = (uint32_t)ada_rng_u64(&r);
        /* Half of the draws near fp16's range (|x| in 2^-26 .. 2^17) to hit subnormals,
         * ties and overflow; the rest anywhere. */
        if (i & 1) u = (u & 0x807fffffu) | ((uint32_t)(101 + ada_rng_below(&r, 43)) << 23);
        float f;
        memcpy(&f, &u, 4);
        if (isnan(f)) continue;
        if (verify_f32_to_f16(f) != ref_f32_to_f16(f)) bad16++;
        if (verify_f32_to_bf16(f) != ref_f32_to_bf16(f)) badb++;
    }
    cr_expect_eq(bad16, 0, "fp16 narrowing differs from the reference for %ld values", (long)bad16);
    cr_expect_eq(badb, 0, "bf16 narrowing differs from the reference for %ld values", (long)badb);
    /* Ties to even and overflow, by hand. */
    cr_expect_eq(verify_f32_to_f16(65504.0f), 0x7bff);
    cr_expect_eq(verify_f32_to_f16(65519.0f), 0x7bff);
    cr_expect_eq(verify_f32_to_f16(65520.0f), 0x7c00);
    cr_expect_eq(verify_f32_to_f16(1.0f + 0x1p-11f), 0x3c00, "tie goes to even");
    cr_expect_eq(verify_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02, "tie goes to even (up)");
    cr_expect_eq(verify_f32_to_f16(0x1p-25f), 0x0000, "half the smallest subnormal ties to 0");
    cr_expect_eq(verify_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80, "bf16 tie to even");
    cr_expect_eq(verify_f32_to_bf16(3.4e38f), 0x7f80, "bf16 overflow to Inf");
}

/* The comparison loop's fast path gives what verify_stats_add gives element by element:
 * counts, failures (including ones below an earlier, larger failure), NaN, the worst element
 * and the first failures. */
Test(compare, fast_path_equals_elementwise)
{
    lnmod_desc d = lnmod_desc_default();
    d.y_dtype = LNMOD_F32;
    d.rows = 50;
    d.D = 200;
    d.rows_per_sample = 50;
    d.scale_stride = d.shift_stride = 200;
    const int64_t n = d.rows * d.D;
    float *y = malloc((size_t)n * sizeof *y);
    double *ref = malloc((size_t)n * sizeof *ref);
    cr_assert(y && ref);
    ada_rng r;
    ada_rng_seed(&r, 5);
    for (int64_t i = 0; i < n; i++) {
        ref[i] = verify_gauss(&r) * (i % 7 == 0 ? 1e-3 : 1.0);
        y[i] = (float)ref[i];
    }
    y[100] = (float)(ref[100] + 1.0);   /* a large failure first */
    y[5000] = (float)(ref[5000] + 1e-3); /* then smaller ones, which must still count */
    y[7001] = (float)(ref[7001] - 5e-4);
    y[9000] = NAN;
    verify_stats fast, slow;
    verify_stats_init(&fast);
    verify_stats_init(&slow);
    verify_compare_y_rows(&d, 0, 20, y, ref, &fast); /* two calls, as threads would */
    verify_compare_y_rows(&d, 20, 50, y, ref, &fast);
    verify_tol t = verify_tol_y(LNMOD_F32);
    for (int64_t i = 0; i < n; i++) verify_stats_add(&slow, i, y[i], ref[i], t.atol, t.rtol);
    cr_expect_eq(fast.n, slow.n);
    cr_expect_eq(fast.failed, 4);
    cr_expect_eq(slow.failed, 4);
    cr_expect_eq(fast.nonfinite, 1);
    cr_expect_eq(fast.worst_index, slow.worst_index);
    cr_expect_eq(fast.max_abs, slow.max_abs);
    cr_expect_eq(fast.nfirst, 4);
    for (int i = 0; i < 4; i++) cr_expect_eq(fast.first_index[i], slow.first_index[i]);
    cr_expect(fabs(verify_stats_l2_rel(&fast) - verify_stats_l2_rel(&slow)) <= 1e-12);
    free(y);
    free(ref);
}

/* ---- the grid's case identities and the registry's names ------------------------------- */

#include "build_info.h"
#include "verify.h"
#include "lnmod_res_fwd_chunk_plan.h"
#include "verify_res.h"
#if ADALOAD_HAVE_CUDA
#include "lnmod.h"
#endif

Test(verify_grid, registry_names_are_the_registrys)
{
    int n;
    const char *const *names = verify_registry_variants(&n);
    cr_assert_geq(n, 1, "no variant names read from kernels/lnmod_registry.cu");
    cr_assert_null(names[n]);
#if ADALOAD_HAVE_CUDA
    int k = 0;
    for (const lnmod_variant *v = lnmod_variants; v->name; v++, k++) {
        cr_assert_lt(k, n, "the registry has more variants than were read from its source");
        cr_assert_str_eq(names[k], v->name);
#if ADALOAD_KERNEL_BACKWARD
        cr_assert_eq(verify_registry_has_backward(v->name), v->backward != NULL, "%s: backward read wrong", v->name);
#else
        cr_assert_not(verify_registry_has_backward(v->name), "%s: backward read wrong", v->name);
#endif
    }
    cr_assert_eq(k, n);
#endif
}

Test(verify_grid, keys_of_the_full_grid)
{
    const char *v[] = {"naive", "dtile"};
    char **keys;
    int64_t n;
    cr_assert_eq(verify_grid_keys("full", v, 2, &keys, &n), VERIFY_OK);
    /* both directions where the registry's variants have a backward (ADALOAD_KERNEL_BACKWARD:
     * every variant; without it, while the backward waits in kernels/pending/, none) */
    const int dirs = ADALOAD_KERNEL_BACKWARD ? 2 : 1;
    cr_assert_eq(verify_registry_has_backward("naive") && verify_registry_has_backward("dtile"), dirs == 2);
    cr_assert(!verify_registry_has_backward("model") && !verify_registry_has_backward(NULL));
    /* and the fused residual op's cases (verify_res.h), both directions, for the two (both have it) */
    verify_res_set *rs;
    int nrs;
    cr_assert_eq(verify_res_grid_sets("full", &rs, &nrs), VERIFY_OK);
    /* the chunk forward's every T and every R by some set it takes (Wan's dtypes, per sample or frame) */
    int seen_T[4] = {0}, seen_R[5] = {0};
    for (int i = 0; i < nrs; i++) {
        int T, K, R;
        if (rs[i].combo != 0 || rs[i].layout == LNMOD_PER_TOKEN || !lnmod_res_chunk_shape(rs[i].D, &T, &K, &R)) continue;
        seen_T[T == 64 ? 0 : T == 128 ? 1 : T == 256 ? 2 : 3] = 1;
        seen_R[R] = 1;
    }
    for (int i = 0; i < 4; i++) {
        cr_assert(seen_T[i], "the chunk forward's T %d never run by the full grid", 64 << i);
        cr_assert(seen_R[i + 1], "the chunk forward's R %d never run by the full grid", i + 1);
    }
    free(rs);
    /* + in place / no dh, the two 65,601-row sets, D 2056 x 4, the chunk forward's 8 D x 3 sites */
    cr_assert_eq(nrs, 3 * 3 * 6 * 5 * 3 + 3 + 2 + 4 + 8 * 3);
    cr_assert(verify_registry_has_res("naive") && verify_registry_has_res("dtile") &&
              !verify_registry_has_res("row_per_warp"));
    /* 16 D x 4 rows x 3 layouts x 9 dtype triples, verify_grid.c's 6 + 9 long samples and 6 sets
     * of the backward's wide shapes, the huge set */
    cr_assert_eq(n, dirs * 2 * (16 * 4 * 3 * 9 + 6 + 9 + 6 + 1) + 2 * 2 * nrs);
    int64_t nres = 0;
    for (int64_t i = 0; i < n; i++) nres += !strncmp(keys[i], "lnmod_res ", 10);
    cr_assert_eq(nres, 2 * 2 * nrs);
    for (int64_t i = 1; i < n; i++) cr_assert_lt(strcmp(keys[i - 1], keys[i]), 0, "sorted, no repeats");
    json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i}", "variant", "dtile", "x", "bf16", "mod", "f32", "y",
                          "bf16", "layout", "sample", "D", 4096, "rows", 524800);
    char k[128];
    cr_assert_eq(verify_case_key_json(c, k, sizeof k), 0);
    cr_assert_str_eq(k, "dtile bf16-f32-bf16 sample fwd D=4096 rows=524800", "no direction: forward");
    int found = 0;
    for (int64_t i = 0; i < n; i++) found += !strcmp(keys[i], k);
    cr_assert_eq(found, 1, "the rows*D > 2^31 case");
    json_object_set_new(c, "direction", json_string("bwd"));
    cr_assert_eq(verify_case_key_json(c, k, sizeof k), 0);
    cr_assert_str_eq(k, "dtile bf16-f32-bf16 sample bwd D=4096 rows=524800");
    found = 0;
    for (int64_t i = 0; i < n; i++) found += !strcmp(keys[i], k);
    cr_assert_eq(found, dirs - 1, "the rows*D > 2^31 case, backward");
    json_object_set_new(c, "op", json_string("lnmod"));
    cr_assert_eq(verify_case_key_json(c, k, sizeof k), 0);
    cr_assert_str_eq(k, "dtile bf16-f32-bf16 sample bwd D=4096 rows=524800", "\"op\": \"lnmod\" keys as before");
    json_object_set_new(c, "op", json_string("nope"));
    cr_assert_eq(verify_case_key_json(c, k, sizeof k), -1, "an unknown op has no key");
    json_object_del(c, "op");
    json_object_del(c, "rows");
    cr_assert_eq(verify_case_key_json(c, k, sizeof k), -1);
    json_decref(c);
    /* a fused-op case record keys as its op's: one of the grid's */
    const verify_res_set set = {VERIFY_RES_SITE_FFN, LNMOD_PER_FRAME, 0, 1536, 1560, 1, 0};
    c = verify_res_case_json("dtile", &set, "bwd");
    cr_assert_eq(verify_case_key_json(c, k, sizeof k), 0);
    cr_assert_str_eq(k, "lnmod_res dtile ffn f32-bf16-f32-bf16 frame bwd D=1536 rows=1560 inplace=1 dh=1");
    found = 0;
    for (int64_t i = 0; i < n; i++) found += !strcmp(keys[i], k);
    cr_assert_eq(found, 1, "the in-place set, backward");
    json_decref(c);
    free(keys);
    cr_assert_eq(verify_grid_keys("huge", v, 2, &keys, &n), VERIFY_ERR_ARG);
}

/* The full grid largest first: rows*D never grows along the order, the rows*D > 2^31 set
 * is last, and the sets are the grid's (same multiset: each set's identity once), so a
 * shard or a record holds the same cases in another order. */
Test(grid, largest_first)
{
    verify_set *a, *b;
    int na, nb;
    cr_assert_eq(verify_grid_sets("full", &a, &na), VERIFY_OK);
    cr_assert_eq(verify_grid_sets("full", &b, &nb), VERIFY_OK);
    cr_assert_eq(verify_sets_largest_first(b, nb), 0);
    cr_assert(b[nb - 1].huge, "the huge set last");
    for (int i = 1; i < nb - 1; i++)
        cr_assert_geq(b[i - 1].rows * b[i - 1].D, b[i].rows * b[i].D, "set %d grows", i);
    for (int i = 0; i < na; i++) {
        int found = 0;
        for (int j = 0; j < nb && !found; j++)
            found = a[i].layout == b[j].layout && a[i].combo == b[j].combo && a[i].D == b[j].D &&
                    a[i].rows == b[j].rows && a[i].huge == b[j].huge;
        cr_assert(found, "set %d of the grid is missing", i);
    }
    free(a);
    free(b);
}
