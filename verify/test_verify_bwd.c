/* test_verify_bwd.c -- Criterion tests of the verifier's backward side: the fp32 sum factor
 * and the allowances (a planted one-term error fails, an fp32 evaluation passes), and the
 * grid's one enumeration (verify_grid_cases) against what a session really records, on the
 * CPU models; the threaded guard/gap/equality checks (verify_span.h). Run: ctest -R verify_bwd. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "ada_rng.h"
#include "verify.h"
#include "verify_check.h"
#include "verify_span.h"

Test(bwd_tolerance, sum_factor)
{
    cr_expect_eq(verify_sum_factor(1), 0.0);
    cr_expect_eq(verify_sum_factor(2), 1.0);
    cr_expect_eq(verify_sum_factor(50), 49.0);                   /* worst case below lambda^2 */
    cr_expect_eq(verify_sum_factor(10000), 1000.0);              /* lambda sqrt(n) above */
    cr_expect(fabs(verify_sum_factor(32760) - 10.0 * sqrt(32760.0)) < 1e-9);
}

/* A column sum of n fp32 products evaluated in fp32, rows in order, passes; the same sum with
 * one row left out fails, for n from 3 to 1560 (at n = 32760 one missing term of ~0.8 is
 * below the allowance, ~2: the grid's smaller sums catch it, see README). */
Test(bwd_tolerance, colsum_catches_one_missing_term)
{
    ada_rng rng;
    ada_rng_seed(&rng, 5);
    const int64_t ns[] = {3, 60, 780, 1560};
    for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++) {
        const int64_t n = ns[q];
        for (int trial = 0; trial < 20; trial++) {
            double ref = 0.0, abs = 0.0;
            float f = 0.0f, last = 0.0f;
            for (int64_t i = 0; i < n; i++) {
                const float a = (float)ada_rng_normal(&rng), b = (float)ada_rng_normal(&rng);
                ref += (double)a * (double)b;
                abs += fabs((double)a * (double)b);
                last = a * b;
                f += last;
            }
            if (fabs((double)last) < 0.05) continue; /* a term too small to be a test */
            const double allow = verify_colsum_allow(LNMOD_F32, n, ref, abs);
            cr_expect(fabs((double)f - ref) <= allow, "n %lld: the fp32 sum fails (%g > %g)", (long long)n,
                      fabs((double)f - ref), allow);
            cr_expect(fabs((double)(f - last) - ref) > allow, "n %lld: a missing term of %g passes (allowance %g)",
                      (long long)n, (double)last, allow);
        }
    }
}

/* dx of an fp32 evaluation passes; dropping the mean(g) term or using D - 1 in the means fails
 * at D = 7. */
Test(bwd_tolerance, dx_fp32_passes_bugs_fail)
{
    ada_rng rng;
    ada_rng_seed(&rng, 6);
    const int D = 7;
    for (int trial = 0; trial < 50; trial++) {
        double x[7], g[7], xh[7], mu = 0, var = 0;
        float gf[7], xf[7];
        for (int i = 0; i < D; i++) mu += x[i] = ada_rng_normal(&rng);
        mu /= D;
        for (int i = 0; i < D; i++) var += (x[i] - mu) * (x[i] - mu);
        const double rs = 1.0 / sqrt(var / D + 1e-6);
        const float rsf = (float)rs, muf = (float)mu;
        double sg = 0, sgx = 0, ag = 0, agx = 0;
        float sgf = 0, sgxf = 0;
        for (int i = 0; i < D; i++) {
            xf[i] = ((float)x[i] - muf) * rsf;
            xh[i] = ((double)(float)x[i] - (double)muf) * (double)rsf;
            gf[i] = (float)ada_rng_normal(&rng);
            g[i] = gf[i];
            sg += g[i], sgx += g[i] * xh[i], ag += fabs(g[i]), agx += fabs(g[i] * xh[i]);
            sgf += gf[i], sgxf += gf[i] * xf[i];
        }
        const verify_dx_row R = {rsf, sg / D, sgx / D, ag / D, agx / D, D, LNMOD_F32};
        for (int i = 0; i < D; i++) {
            const double ref = (double)rsf * (g[i] - sg / D - xh[i] * sgx / D);
            const double allow = verify_dx_allow(&R, ref, g[i], xh[i]);
            const float ok = rsf * (gf[i] - sgf / (float)D - xf[i] * (sgxf / (float)D));
            const float nomean = rsf * (gf[i] - xf[i] * (sgxf / (float)D));
            const float dm1 = rsf * (gf[i] - sgf / (float)(D - 1) - xf[i] * (sgxf / (float)(D - 1)));
            cr_expect(fabs((double)ok - ref) <= allow, "fp32 dx fails: %g > %g", fabs((double)ok - ref), allow);
            if (fabs(sg / D) > 0.05) cr_expect(fabs((double)nomean - ref) > allow, "dropping mean(g) passes");
            if (fabs(sg) + fabs(xh[i] * sgx) > 0.2 && fabs(ref - (double)dm1) > 1e-3)
                cr_expect(fabs((double)dm1 - ref) > allow, "D - 1 in the means passes");
        }
    }
}

/* The session records exactly verify_grid_cases' list, in its order, with the identity in
 * every record; and the direction filter. */
Test(grid_cases, session_records_the_enumeration)
{
    const char *variants[2] = {"model", "model_bwd_drop"};
    const int has_bwd[2] = {1, 1};
    for (int dirs = VERIFY_DIR_FWD; dirs <= VERIFY_DIR_BOTH; dirs++) {
        verify_case_id *keys;
        int64_t nk;
        cr_assert_eq(verify_grid_cases("smoke", variants, has_bwd, 2, dirs, &keys, &nk), VERIFY_OK);
        verify_set *sets;
        int nsets;
        cr_assert_eq(verify_grid_sets("smoke", &sets, &nsets), VERIFY_OK);
        cr_assert_eq(nk, (int64_t)nsets * 2 * (dirs == VERIFY_DIR_BOTH ? 2 : 1));
        verify_config c = {.grid = "smoke", .directions = dirs, .seed = 3, .threads = 2, .cpu_model = 1,
                           .variants = {"model", "model_bwd_drop"}, .nvariants = 2};
        verify_session *s;
        cr_assert_eq(verify_session_new(&c, nsets, &s), VERIFY_OK);
        cr_assert_eq(verify_session_totals(s)->ncases_total, nk);
        for (int i = 0; i < nsets; i++) verify_session_run_set(s, &sets[i]);
        verify_session_finish(s);
        json_t *cases = verify_session_take_cases(s);
        cr_assert_eq((int64_t)json_array_size(cases), nk);
        for (int64_t i = 0; i < nk; i++) {
            json_t *r = json_array_get(cases, (size_t)i);
            lnmod_dtype x, m, y;
            verify_combo(keys[i].set.combo, &x, &m, &y);
            cr_assert_str_eq(json_string_value(json_object_get(r, "variant")), keys[i].variant);
            cr_assert_str_eq(json_string_value(json_object_get(r, "direction")), verify_direction_name(keys[i].direction));
            cr_assert_str_eq(json_string_value(json_object_get(r, "x")), lnmod_dtype_name(x));
            cr_assert_str_eq(json_string_value(json_object_get(r, "mod")), lnmod_dtype_name(m));
            cr_assert_str_eq(json_string_value(json_object_get(r, "y")), lnmod_dtype_name(y));
            cr_assert_str_eq(json_string_value(json_object_get(r, "layout")), lnmod_layout_name(keys[i].set.layout));
            cr_assert_eq(json_integer_value(json_object_get(r, "D")), keys[i].set.D);
            cr_assert_eq(json_integer_value(json_object_get(r, "rows")), keys[i].set.rows);
        }
        /* model passes both directions; model_bwd_drop fails only backward cases */
        const verify_totals *t = verify_session_totals(s);
        cr_expect_eq(t->v_failed[0][0] + t->v_failed[1][0] + t->v_failed[0][1], 0);
        cr_expect_eq(t->v_failed[1][1] > 0, (dirs & VERIFY_DIR_BWD) != 0);
        json_decref(cases);
        verify_session_free(s);
        free(sets);
        free(keys);
    }
}

Test(grid_cases, variants_without_backward_and_bad_arguments)
{
    const char *variants[2] = {"a", "b"};
    const int has_bwd[2] = {0, 1};
    verify_case_id *keys;
    int64_t nk;
    cr_assert_eq(verify_grid_cases("quick", variants, has_bwd, 2, VERIFY_DIR_BOTH, &keys, &nk), VERIFY_OK);
    verify_set *sets;
    int nsets;
    cr_assert_eq(verify_grid_sets("quick", &sets, &nsets), VERIFY_OK);
    cr_assert_eq(nk, 3 * (int64_t)nsets); /* a, b forward; b backward */
    for (int64_t i = 0; i < nk; i++)
        cr_assert(!(keys[i].direction == VERIFY_DIR_BWD && !strcmp(keys[i].variant, "a")));
    cr_assert_eq(strcmp(keys[2].variant, "b"), 0);
    cr_assert_eq(keys[2].direction, VERIFY_DIR_BWD);
    free(keys);
    free(sets);
    cr_assert_eq(verify_grid_cases("huge", variants, has_bwd, 2, VERIFY_DIR_BOTH, &keys, &nk), VERIFY_ERR_ARG);
    cr_assert_eq(verify_grid_cases("quick", variants, has_bwd, 2, 8, &keys, &nk), VERIFY_ERR_ARG);
}

/* The span checks: poison in the front band, every gap and the rest; data equal bit for bit;
 * one wrong byte anywhere outside (first gap, a middle gap, the last gap, the bands) or in
 * the data (first, middle, last row) is found, with 1 thread and with 7, the same answer. */
Test(bwd_span, finds_every_planted_byte_on_any_thread_count)
{
    const verify_span sp = {.bytes = 64 + 40000 * 40 + 8 * 4 + 64, .front = 64, .es = 4, .nrows = 40000, .D = 8,
                            .stride = 10};
    unsigned char *a = malloc(sp.bytes), *c = malloc(sp.bytes);
    cr_assert(a && c);
    memset(a, 0xFF, sp.bytes);
    for (int64_t r = 0; r < sp.nrows; r++)
        for (int64_t i = 0; i < sp.D * 4; i++) a[sp.front + (size_t)(r * sp.stride * 4 + i)] = (unsigned char)(r + i);
    memcpy(c, a, sp.bytes);
    const int threads[2] = {1, 7};
    for (int t = 0; t < 2; t++) {
        cr_expect(verify_span_outside_ok(&sp, a, 0xFF, threads[t]));
        cr_expect(verify_span_same(&sp, a, c, threads[t]));
        cr_expect(!verify_span_outside_ok(&sp, a, 0xA5, threads[t]));
        const size_t out[5] = {0, sp.front + 8 * 4, sp.front + (size_t)(20000 * 40 + 33), sp.front + (size_t)(39998 * 40 + 39),
                               sp.bytes - 1};
        for (int k = 0; k < 5; k++) {
            a[out[k]] ^= 1;
            cr_expect(!verify_span_outside_ok(&sp, a, 0xFF, threads[t]), "byte %zu, %d threads", out[k], threads[t]);
            cr_expect(verify_span_same(&sp, a, c, threads[t]), "gaps are not data");
            a[out[k]] ^= 1;
        }
        const size_t in[3] = {sp.front, sp.front + (size_t)(23777 * 40 + 17), sp.front + (size_t)(39999 * 40 + 31)};
        for (int k = 0; k < 3; k++) {
            c[in[k]] ^= 0x80;
            cr_expect(!verify_span_same(&sp, a, c, threads[t]), "byte %zu, %d threads", in[k], threads[t]);
            cr_expect(verify_span_outside_ok(&sp, c, 0xFF, threads[t]), "data is not outside");
            c[in[k]] ^= 0x80;
        }
    }
    free(a);
    free(c);
}
