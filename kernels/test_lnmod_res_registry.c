/* test_lnmod_res_registry.c -- Criterion tests of the fused residual op's registry entries and of
 * lnmod_res_forward_workspace / _forward / _backward_workspace / _backward's host-side checks (lnmod_res.h). Needs no
 * GPU: every call here is rejected before its launch, so the fake device pointers are never
 * touched. Built only with the CUDA parts (it links lnmod_cuda). The kernels' results are
 * checked on a GPU (kernels/experiments/2026-12-02-res; `adaload verify` once wired). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "lnmod.h"
#include "lnmod_res.h"

/* Never dereferenced: each call below is rejected before the launch. */
#define FAKE_PTR(n) ((void *)(uintptr_t)(0x1000u * (n)))

/* Wan 14B 480p's third site: gate, MODULATE, per sample, fp32 residual, bf16 branch/out. */
static lnmod_res_desc wan14b(void)
{
    lnmod_res_desc d = lnmod_res_desc_default();
    d.rows = 32760;
    d.D = 5120;
    d.rows_per_sample = 32760;
    d.gate = LNMOD_RES_GATE;
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * 5120;
    return d;
}

static lnmod_res_fwd_in fwd_in(void)
{
    lnmod_res_fwd_in in = {FAKE_PTR(1), FAKE_PTR(2), FAKE_PTR(3), FAKE_PTR(4), FAKE_PTR(5)};
    return in;
}

static lnmod_res_bwd_in bwd_in(void)
{
    lnmod_res_bwd_in in = {FAKE_PTR(1), FAKE_PTR(2), FAKE_PTR(3), FAKE_PTR(4),
                           FAKE_PTR(5), FAKE_PTR(6), (const float *)FAKE_PTR(7),
                           (const float *)FAKE_PTR(8)};
    return in;
}

static lnmod_res_bwd_out bwd_out(void)
{
    lnmod_res_bwd_out o = {FAKE_PTR(9), FAKE_PTR(10), FAKE_PTR(11), FAKE_PTR(12), FAKE_PTR(13)};
    return o;
}

Test(lnmod_res_registry, naive_and_dtile_have_the_fused_op)
{
    for (const lnmod_variant *v = lnmod_variants; v->name; v++) {
        const int has = !strcmp(v->name, "naive") || !strcmp(v->name, "dtile");
        cr_assert_eq(v->res_forward != NULL, has, "%s", v->name);
        cr_assert_eq(v->res_backward != NULL, has, "%s", v->name);
        cr_assert_eq(v->res_bwd_workspace != NULL, has, "%s", v->name);
        cr_assert_eq(v->res_fwd_workspace != NULL, has, "%s", v->name);
        cr_assert_eq(v->res_bytes_moved != NULL, has, "%s", v->name);
        cr_assert_eq(v->res_bwd_bytes_moved != NULL, has, "%s", v->name);
    }
}

Test(lnmod_res_registry, forward_rejects_bad_input_before_the_gpu)
{
    const lnmod_res_desc d = wan14b();
    const lnmod_res_fwd_in in = fwd_in();
    lnmod_res_fwd_out o = {FAKE_PTR(6), FAKE_PTR(7), NULL, NULL};
    void *W = FAKE_PTR(21);
    cr_assert_eq(lnmod_res_forward("dtile", NULL, &in, &o, W, 16, 0), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_res_forward("dtile", &d, NULL, &o, W, 16, 0), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_res_forward("dtile", &d, &in, NULL, W, 16, 0), LNMOD_ERR_NULL_POINTER);
    lnmod_res_fwd_in bi = in;
    bi.gate = NULL; /* a gate is required with LNMOD_RES_GATE */
    cr_assert_eq(lnmod_res_forward("naive", &d, &bi, &o, W, 16, 0), LNMOD_ERR_NULL_POINTER);
    lnmod_res_desc bad = d;
    bad.D = 0;
    cr_assert_eq(lnmod_res_forward("dtile", &bad, &in, &o, W, 16, 0), LNMOD_ERR_ZERO_DIM);
    bad = d;
    bad.norm = LNMOD_RES_NORM_COUNT;
    cr_assert_eq(lnmod_res_forward("dtile", &bad, &in, &o, W, 16, 0), LNMOD_ERR_LAYOUT);
    bad = d;
    bad.res_dtype = LNMOD_F16; /* neither fp32 nor the branch's bf16 */
    /* The descriptor before the variant's name. */
    cr_assert_eq(lnmod_res_forward("nope", &bad, &in, &o, W, 16, 0), LNMOD_ERR_DTYPE_COMBO);
    lnmod_res_fwd_out bo = o;
    bo.out = NULL;
    cr_assert_eq(lnmod_res_forward("nope", &d, &in, &bo, W, 16, 0), LNMOD_ERR_NULL_POINTER);
    bo = o;
    bo.h = NULL;
    cr_assert_eq(lnmod_res_forward("dtile", &d, &in, &bo, W, 16, 0), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_res_forward("nope", &d, &in, &o, W, 16, 0), LNMOD_ERR_UNKNOWN_VARIANT);
    cr_assert_eq(lnmod_res_forward(NULL, &d, &in, &o, W, 16, 0), LNMOD_ERR_UNKNOWN_VARIANT);
    cr_assert_eq(lnmod_res_forward("row_per_warp", &d, &in, &o, W, 16, 0), LNMOD_ERR_UNSUPPORTED);
    /* The workspace after the variant: dtile's 16 bytes needed, 16-byte aligned; naive's none. */
    cr_assert_eq(lnmod_res_forward("dtile", &d, &in, &o, NULL, 16, 0), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_res_forward("dtile", &d, &in, &o, W, 15, 0), LNMOD_ERR_WORKSPACE);
    cr_assert_eq(lnmod_res_forward("dtile", &d, &in, &o, (char *)W + 8, 64, 0), LNMOD_ERR_WORKSPACE);
    cr_assert_eq(lnmod_res_forward("nope", &d, &in, &o, NULL, 0, 0), LNMOD_ERR_UNKNOWN_VARIANT);
}

Test(lnmod_res_registry, forward_workspace_query)
{
    const lnmod_res_desc d = wan14b();
    size_t a = 1, b = 0;
    cr_assert_eq(lnmod_res_forward_workspace("dtile", &d, NULL), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_res_forward_workspace("dtile", NULL, &a), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_res_forward_workspace("nope", &d, &a), LNMOD_ERR_UNKNOWN_VARIANT);
    cr_assert_eq(lnmod_res_forward_workspace("row_per_warp", &d, &a), LNMOD_ERR_UNSUPPORTED);
    lnmod_res_desc bad = d;
    bad.D = 0;
    cr_assert_eq(lnmod_res_forward_workspace("dtile", &bad, &a), LNMOD_ERR_ZERO_DIM);
    cr_assert_eq(lnmod_res_forward_workspace("naive", &d, &a), LNMOD_OK);
    cr_assert_eq(lnmod_res_forward_workspace("dtile", &d, &b), LNMOD_OK);
    cr_assert_eq(a, 0u, "naive needs no forward workspace (%zu)", a);
    cr_assert_eq(b, 16u, "dtile's ticket counter: two 64-bit words (%zu)", b);
    /* The same at any width, whichever of dtile's kernels takes the call. */
    bad = d;
    bad.D = 1000;
    cr_assert_eq(lnmod_res_forward_workspace("dtile", &bad, &b), LNMOD_OK);
    cr_assert_eq(b, 16u);
}

Test(lnmod_res_registry, workspace_query)
{
    const lnmod_res_desc d = wan14b();
    size_t a = 0, b = 1;
    cr_assert_eq(lnmod_res_backward_workspace("dtile", &d, NULL), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_res_backward_workspace("dtile", NULL, &a), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_res_backward_workspace("nope", &d, &a), LNMOD_ERR_UNKNOWN_VARIANT);
    cr_assert_eq(lnmod_res_backward_workspace("row_per_warp", &d, &a), LNMOD_ERR_UNSUPPORTED);
    cr_assert_eq(lnmod_res_backward_workspace("naive", &d, &a), LNMOD_OK);
    cr_assert_eq(lnmod_res_backward_workspace("dtile", &d, &b), LNMOD_OK);
    /* One layout for both: the row sums (8 B a row) and the partials of 256 chunks of 32,760
     * rows (2 norm sums + 1 gate sum, D floats each). */
    cr_assert_eq(a, b);
    const uint64_t want = (uint64_t)32760 * 8 + (uint64_t)256 * 3 * 5120 * 4;
    cr_assert_eq((uint64_t)a, want, "%zu bytes, want %llu", a, (unsigned long long)want);
    /* A workspace is a function of the descriptor: 16-byte aligned parts, never below the rows. */
    lnmod_res_desc t = d;
    t.layout = LNMOD_PER_TOKEN; /* one row a group: final values, no partials */
    cr_assert_eq(lnmod_res_backward_workspace("dtile", &t, &a), LNMOD_OK);
    cr_assert_eq((uint64_t)a, (uint64_t)32760 * 8);
}

Test(lnmod_res_registry, backward_rejects_bad_input_before_the_gpu)
{
    const lnmod_res_desc d = wan14b();
    const lnmod_res_bwd_in in = bwd_in();
    const lnmod_res_bwd_out o = bwd_out();
    size_t ws = 0;
    cr_assert_eq(lnmod_res_backward_workspace("dtile", &d, &ws), LNMOD_OK);
    void *w = FAKE_PTR(20);
    cr_assert_eq(lnmod_res_backward("dtile", NULL, &in, &o, w, ws, 0), LNMOD_ERR_NULL_POINTER);
    lnmod_res_bwd_in bi = in;
    bi.rstd = NULL;
    cr_assert_eq(lnmod_res_backward("dtile", &d, &bi, &o, w, ws, 0), LNMOD_ERR_NULL_POINTER);
    lnmod_res_bwd_out bo = o;
    bo.dgate = NULL; /* required with a gate */
    cr_assert_eq(lnmod_res_backward("dtile", &d, &in, &bo, w, ws, 0), LNMOD_ERR_NULL_POINTER);
    bo = o;
    bo.dshift = NULL;
    cr_assert_eq(lnmod_res_backward("naive", &d, &in, &bo, w, ws, 0), LNMOD_ERR_NULL_POINTER);
    lnmod_res_desc bad = d;
    bad.eps = 0.0;
    cr_assert_eq(lnmod_res_backward("nope", &bad, &in, &o, w, ws, 0), LNMOD_ERR_EPS);
    cr_assert_eq(lnmod_res_backward("nope", &d, &in, &o, w, ws, 0), LNMOD_ERR_UNKNOWN_VARIANT);
    cr_assert_eq(lnmod_res_backward("row_per_warp", &d, &in, &o, w, ws, 0), LNMOD_ERR_UNSUPPORTED);
    cr_assert_eq(lnmod_res_backward("dtile", &d, &in, &o, NULL, ws, 0), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(lnmod_res_backward("dtile", &d, &in, &o, w, ws - 1, 0), LNMOD_ERR_WORKSPACE);
    cr_assert_eq(lnmod_res_backward("naive", &d, &in, &o, (char *)w + 8, ws + 64, 0),
                 LNMOD_ERR_WORKSPACE);
    /* Without a gate, dgate and gate may be NULL: the checks pass them (the launch is not
     * reached here: the workspace is still too small). */
    lnmod_res_desc ng = d;
    ng.gate = LNMOD_RES_GATE_NONE;
    bi = in;
    bi.gate = NULL;
    bi.y = NULL;
    bo = o;
    bo.dgate = NULL;
    cr_assert_eq(lnmod_res_backward("dtile", &ng, &bi, &bo, w, 16, 0), LNMOD_ERR_WORKSPACE);
}

Test(lnmod_res_registry, bytes_moved_never_below_the_floor)
{
    static const int64_t Ds[] = {1, 77, 1000, 1536, 3072, 5120, 8192};
    static const lnmod_layout lays[] = {LNMOD_PER_SAMPLE, LNMOD_PER_TOKEN, LNMOD_PER_FRAME};
    static const lnmod_dtype bt[] = {LNMOD_BF16, LNMOD_F16, LNMOD_F32};
    for (const lnmod_variant *v = lnmod_variants; v->name; v++) {
        if (!v->res_forward) continue;
        for (size_t k = 0; k < sizeof Ds / sizeof Ds[0]; k++)
            for (size_t l = 0; l < 3; l++)
                for (int gate = 0; gate < 2; gate++)
                    for (int norm = 0; norm < 2; norm++)
                        for (size_t b = 0; b < 3; b++)
                            for (int f = 0; f < 2; f++) {
                                lnmod_res_desc d = wan14b();
                                d.D = Ds[k];
                                d.gate_stride = d.scale_stride = d.shift_stride = 6 * d.D;
                                d.rows_per_sample = 8190;
                                d.frame_len = 1560;
                                d.layout = lays[l];
                                d.gate = gate ? LNMOD_RES_GATE : LNMOD_RES_GATE_NONE;
                                d.norm = norm ? LNMOD_RES_AFFINE : LNMOD_RES_MODULATE;
                                d.branch_dtype = d.out_dtype = bt[b];
                                d.res_dtype = d.mod_dtype = f ? LNMOD_F32 : bt[b];
                                cr_assert_eq(lnmod_res_desc_validate(&d), LNMOD_OK);
                                for (int s = 0; s < 2; s++) {
                                    const int64_t fl = lnmod_res_fwd_min_bytes(&d, s);
                                    const int64_t got = v->res_bytes_moved(&d, s);
                                    cr_assert_geq(got, fl, "%s fwd D %lld: %lld < %lld", v->name,
                                                  (long long)d.D, (long long)got, (long long)fl);
                                    const int64_t bfl = lnmod_res_bwd_min_bytes(&d, s);
                                    const int64_t bgot = v->res_bwd_bytes_moved(&d, s);
                                    cr_assert_geq(bgot, bfl, "%s bwd D %lld: %lld < %lld",
                                                  v->name, (long long)d.D, (long long)bgot,
                                                  (long long)bfl);
                                }
                                cr_assert_eq(v->res_bytes_moved(&d, 1) - v->res_bytes_moved(&d, 0),
                                             8 * d.rows);
                            }
    }
}

Test(lnmod_res_registry, dtile_moves_fewer_bytes_at_the_wan_shapes)
{
    const lnmod_variant *n = lnmod_find_variant("naive"), *t = lnmod_find_variant("dtile");
    static const int64_t Ds[] = {1536, 3072, 5120};
    for (size_t k = 0; k < 3; k++) {
        lnmod_res_desc d = wan14b();
        d.D = Ds[k];
        d.gate_stride = d.scale_stride = d.shift_stride = 6 * d.D;
        cr_assert_lt(t->res_bytes_moved(&d, 1), n->res_bytes_moved(&d, 1));
        cr_assert_lt(t->res_bwd_bytes_moved(&d, 1), n->res_bwd_bytes_moved(&d, 1));
        /* dtile's forward: the floor's 12 B an element plus the modulation re-read per row. */
        cr_assert_eq(t->res_bytes_moved(&d, 0), d.rows * d.D * (12 + 3 * 4));
    }
    /* Where dtile's fused kernels do not take the shape it moves naive's bytes (D 1004: not a
     * multiple of 8, so no bulk ring; not a width of version 1 or of the forward). */
    lnmod_res_desc d = wan14b();
    d.D = 1004;
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * 1004;
    cr_assert_eq(t->res_bytes_moved(&d, 1), n->res_bytes_moved(&d, 1));
    cr_assert_eq(t->res_bwd_bytes_moved(&d, 1), n->res_bwd_bytes_moved(&d, 1));
    /* D 1000 (a multiple of 8): the bulk ring and the general forward take it. */
    d.D = 1000;
    d.gate_stride = d.scale_stride = d.shift_stride = 6000;
    cr_assert_eq(t->res_bytes_moved(&d, 0), d.rows * d.D * (12 + 3 * 4));
    cr_assert_lt(t->res_bwd_bytes_moved(&d, 1), n->res_bwd_bytes_moved(&d, 1));
    /* D 10,248 (a multiple of 8 beyond the general forward's 10,240): naive's forward. */
    d.D = 10248;
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * 10248;
    cr_assert_eq(t->res_bytes_moved(&d, 1), n->res_bytes_moved(&d, 1));
}
