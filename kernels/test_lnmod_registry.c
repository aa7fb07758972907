/* test_lnmod_registry.c -- Criterion tests of the variant registry and of lnmod_forward's
 * host-side checks. Needs no GPU: every case here fails validation before any CUDA call, so
 * the fake device pointers are never touched. Built only with the CUDA parts (it links
 * lnmod_cuda). The kernels' results are checked on a GPU by `adaload verify`. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "lnmod.h"

/* Never dereferenced: each call below is rejected before the launch. */
#define FAKE_PTR(n) ((void *)(uintptr_t)(0x1000u * (n)))

static lnmod_desc wan14b(void)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = 32760;
    d.D = 5120;
    d.rows_per_sample = 32760;
    d.scale_stride = d.shift_stride = 6 * 5120;
    return d;
}

Test(lnmod_registry, order_and_names_are_stable)
{
    static const char *const want[] = {"naive", "row_per_warp", "dtile"};
    size_t n = 0;
    for (const lnmod_variant *v = lnmod_variants; v->name; v++, n++) {
        cr_assert_lt(n, 3, "more variants than expected");
        cr_assert_str_eq(v->name, want[n]);
        cr_assert(v->description && v->description[0], "%s has no description", v->name);
        cr_assert(v->supports && v->launch && v->bytes_moved, "%s lacks a function", v->name);
    }
    cr_assert_eq(n, 3);
}

Test(lnmod_registry, find_by_name)
{
    cr_assert_eq(lnmod_find_variant("dtile"), &lnmod_variants[2]);
    cr_assert_eq(lnmod_find_variant("naive"), &lnmod_variants[0]);
    cr_assert_null(lnmod_find_variant("dtile2"));
    cr_assert_null(lnmod_find_variant(""));
    cr_assert_null(lnmod_find_variant(NULL));
}

Test(lnmod_registry, forward_rejects_bad_input_before_the_gpu)
{
    lnmod_desc d = wan14b();
    void *x = FAKE_PTR(1), *sc = FAKE_PTR(2), *sh = FAKE_PTR(3), *y = FAKE_PTR(4), *W = FAKE_PTR(5);
    cr_assert_eq(lnmod_forward("dtile", NULL, x, sc, sh, y, NULL, NULL, W, 16, 0),
                 LNMOD_ERR_NULL_POINTER);
    lnmod_desc bad = d;
    bad.D = 0;
    cr_assert_eq(lnmod_forward("dtile", &bad, x, sc, sh, y, NULL, NULL, W, 16, 0), LNMOD_ERR_ZERO_DIM);
    bad = d;
    bad.eps = 0.0;
    cr_assert_eq(lnmod_forward("naive", &bad, x, sc, sh, y, NULL, NULL, W, 16, 0), LNMOD_ERR_EPS);
    bad = d;
    bad.y_dtype = LNMOD_F16; /* bf16 x with fp16 y */
    cr_assert_eq(lnmod_forward("row_per_warp", &bad, x, sc, sh, y, NULL, NULL, W, 16, 0),
                 LNMOD_ERR_DTYPE_COMBO);
    /* The descriptor is checked before the pointers, the pointers before the name. */
    cr_assert_eq(lnmod_forward("nope", &bad, NULL, sc, sh, y, NULL, NULL, W, 16, 0),
                 LNMOD_ERR_DTYPE_COMBO);
    cr_assert_eq(lnmod_forward("dtile", &d, NULL, sc, sh, y, NULL, NULL, W, 16, 0),
                 LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_forward("dtile", &d, x, NULL, sh, y, NULL, NULL, W, 16, 0),
                 LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_forward("dtile", &d, x, sc, NULL, y, NULL, NULL, W, 16, 0),
                 LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_forward("dtile", &d, x, sc, sh, NULL, NULL, NULL, W, 16, 0),
                 LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_forward("nope", &d, NULL, sc, sh, y, NULL, NULL, W, 16, 0),
                 LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_forward("nope", &d, x, sc, sh, y, NULL, NULL, W, 16, 0),
                 LNMOD_ERR_UNKNOWN_VARIANT);
    cr_assert_eq(lnmod_forward(NULL, &d, x, sc, sh, y, NULL, NULL, W, 16, 0),
                 LNMOD_ERR_UNKNOWN_VARIANT);
    /* dtile's forward workspace: needed, at least 16 bytes, 16-byte aligned. */
    cr_assert_eq(lnmod_forward("dtile", &d, x, sc, sh, y, NULL, NULL, NULL, 16, 0), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_forward("dtile", &d, x, sc, sh, y, NULL, NULL, W, 15, 0), LNMOD_ERR_WORKSPACE);
    cr_assert_eq(lnmod_forward("dtile", &d, x, sc, sh, y, NULL, NULL, (char *)W + 8, 64, 0), LNMOD_ERR_WORKSPACE);
}

Test(lnmod_registry, forward_workspace_query)
{
    lnmod_desc d = wan14b();
    size_t n = 99;
    cr_assert_eq(lnmod_forward_workspace("dtile", &d, NULL), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_forward_workspace("nope", &d, &n), LNMOD_ERR_UNKNOWN_VARIANT);
    lnmod_desc bad = d;
    bad.D = 0;
    cr_assert_eq(lnmod_forward_workspace("dtile", &bad, &n), LNMOD_ERR_ZERO_DIM);
    for (const lnmod_variant *v = lnmod_variants; v->name; v++) {
        cr_assert_eq(lnmod_forward_workspace(v->name, &d, &n), LNMOD_OK, "%s", v->name);
        cr_assert_eq(n, strcmp(v->name, "dtile") ? 0u : 16u, "%s: %zu bytes", v->name, n);
    }
}

Test(lnmod_registry, every_variant_supports_every_valid_descriptor)
{
    static const lnmod_dtype xt[] = {LNMOD_F32, LNMOD_F16, LNMOD_BF16};
    static const int64_t Ds[] = {1, 7, 1536, 5120, 12288};
    for (const lnmod_variant *v = lnmod_variants; v->name; v++) {
        for (size_t i = 0; i < 3; i++)
            for (int mf = 0; mf < 2; mf++)
                for (int yf = 0; yf < 2; yf++)
                    for (int lay = 0; lay < LNMOD_LAYOUT_COUNT; lay++)
                        for (size_t k = 0; k < sizeof Ds / sizeof Ds[0]; k++) {
                            lnmod_desc d = wan14b();
                            d.D = Ds[k];
                            d.scale_stride = d.shift_stride = 6 * d.D;
                            d.rows_per_sample = 4680;
                            d.frame_len = 1560;
                            d.layout = (lnmod_layout)lay;
                            d.x_dtype = xt[i];
                            d.mod_dtype = mf ? LNMOD_F32 : xt[i];
                            d.y_dtype = yf ? LNMOD_F32 : xt[i];
                            cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK);
                            cr_assert(v->supports(&d), "%s rejects a valid descriptor",
                                      v->name);
                        }
        lnmod_desc bad = wan14b();
        bad.rows = 0;
        cr_assert_not(v->supports(&bad), "%s accepts rows = 0", v->name);
    }
}

Test(lnmod_registry, bytes_moved_never_below_the_floor)
{
    static const int64_t Ds[] = {1, 1000, 1536, 3072, 5120, 8192, 12288};
    static const lnmod_layout lays[] = {LNMOD_PER_SAMPLE, LNMOD_PER_TOKEN, LNMOD_PER_FRAME};
    for (const lnmod_variant *v = lnmod_variants; v->name; v++)
        for (size_t k = 0; k < sizeof Ds / sizeof Ds[0]; k++)
            for (size_t l = 0; l < 3; l++)
                for (int ws = 0; ws < 2; ws++) {
                    lnmod_desc d = wan14b();
                    d.D = Ds[k];
                    d.scale_stride = d.shift_stride = 6 * d.D;
                    d.rows_per_sample = 8190;
                    d.frame_len = 1560;
                    d.layout = lays[l];
                    int64_t floor = lnmod_fwd_min_bytes(&d, ws);
                    int64_t b = v->bytes_moved(&d, ws);
                    cr_assert_geq(b, floor, "%s D=%lld moves %lld < floor %lld", v->name,
                                  (long long)d.D, (long long)b, (long long)floor);
                    /* mean and rstd cost 8 bytes per row, whatever the variant. */
                    if (ws) cr_assert_eq(b - v->bytes_moved(&d, 0), 8 * d.rows);
                }
}

Test(lnmod_registry, bytes_moved_counts_re_reads)
{
    lnmod_desc d = wan14b(); /* bf16 x/y, fp32 per-sample modulation, one sample */
    const int64_t n = d.rows * d.D;
    /* naive and row_per_warp read x three times and the modulation once per row. */
    const int64_t reread = n * (3 * 2 + 2) + 2 * n * 4;
    cr_assert_eq(lnmod_find_variant("naive")->bytes_moved(&d, 0), reread);
    cr_assert_eq(lnmod_find_variant("row_per_warp")->bytes_moved(&d, 0), reread);
    /* dtile holds the row and the modulation on chip at version 1's widths: the floor... */
    cr_assert_eq(lnmod_find_variant("dtile")->bytes_moved(&d, 0), lnmod_fwd_min_bytes(&d, 0));
    /* ...and reads x once at every other width too (the forward v2: a ring, no re-reads). */
    d.D = 1000;
    d.scale_stride = d.shift_stride = 6000;
    cr_assert_eq(lnmod_find_variant("dtile")->bytes_moved(&d, 0), lnmod_fwd_min_bytes(&d, 0));
}
