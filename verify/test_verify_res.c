/* test_verify_res.c -- the fp32 CPU models of the fused gated residual + LayerNorm-Modulate op
 * (verify_model_res.h) against the float64 reference (ref_lnmod_res.h) at Wan 2.1's three
 * residual sites, every layout, an fp32 and a bf16 residual: res_model passes everything, and
 * each planted model fails exactly the outputs its bug touches -- under two bounds: the
 * verifier's allowances for "op": "lnmod_res" cases (verify_check_res.h), and this test's
 * own, looser one, kept as a second witness: the
 * verifier's y/mean/rstd tolerances (verify_check.h) for out and the statistics, one ULP of
 * res_dtype for h, and for the backward 1e-4 of the magnitude of each result's terms plus one
 * ULP of its dtype -- ~100x an fp32 computation's error and ~100x below any planted bug's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ada_rng.h"
#include "ref_lnmod_res.h"
#include "verify_check.h"
#include "verify_check_res.h"
#include "verify_model_res.h"

enum { F_H = 1, F_OUT = 2, F_MEAN = 4, F_RSTD = 8, F_DR = 16, F_DY = 32, F_DGATE = 64, F_DSCALE = 128, F_DSHIFT = 256 };
enum { SITE_ATTN, SITE_CROSS, SITE_FFN, SITE_COUNT };

static lnmod_res_desc site_desc(int site, lnmod_layout l, lnmod_dtype res)
{
    lnmod_res_desc d = lnmod_res_desc_default();
    d.rows = 80;
    d.rows_per_sample = 40;
    d.frame_len = 16; /* frames of 16, 16, 8 rows; chunks of 16 */
    d.D = 64;
    d.layout = l;
    d.res_dtype = res;
    d.gate = site == SITE_CROSS ? LNMOD_RES_GATE_NONE : LNMOD_RES_GATE;
    d.norm = site == SITE_ATTN ? LNMOD_RES_AFFINE : LNMOD_RES_MODULATE;
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * d.D;
    return d;
}

typedef struct {
    void *buf[12];
    int n;
} pool;
static void *take(pool *p, int64_t elems, lnmod_dtype t, double fill)
{
    void *b = malloc((size_t)elems * 4 + 16);
    cr_assert_not_null(b);
    for (int64_t i = 0; i < elems; i++) ref_store(t, b, i, fill);
    p->buf[p->n++] = b;
    return b;
}
static void drop(pool *p)
{
    for (int i = 0; i < p->n; i++) free(p->buf[i]);
}

static void randomize(lnmod_dtype t, void *b, int64_t n, ada_rng *rng, double mu, double sd)
{
    for (int64_t i = 0; i < n; i++) ref_store(t, b, i, mu + sd * ada_rng_normal(rng));
}

static int bad(double got, double ref, double allow) { return !(fabs(got - ref) <= allow); }

/* Which outputs of model `which` fail this test's bound (F_* bits); *strict: which fail the
 * verifier's allowances (verify_check_res.h; its VERIFY_RES_* bits are the F_* bits). */
static int judge(int which, const lnmod_res_desc *d, uint64_t seed, int *strict)
{
    ada_rng rng;
    ada_rng_seed(&rng, seed);
    pool p = {{0}, 0};
    const int64_t D = d->D, n = d->rows * D, nm = lnmod_res_mod_rows(d), nn = lnmod_res_norm_rows(d);
    const int64_t me = (nm > nn ? nm : nn) * 6 * D;
    void *r = take(&p, n, d->res_dtype, 0), *y = take(&p, n, d->branch_dtype, 0);
    void *e = take(&p, me, d->mod_dtype, NAN), *dout = take(&p, n, d->out_dtype, 0);
    void *dh = take(&p, n, d->res_dtype, 0);
    randomize(d->res_dtype, r, n, &rng, 1.5, 2.0);
    randomize(d->branch_dtype, y, n, &rng, 0.0, 1.0);
    randomize(d->out_dtype, dout, n, &rng, 0.0, 1.0);
    randomize(d->res_dtype, dh, n, &rng, 0.0, 1.0);
    /* e[k] = [shift, scale, gate, NaN, NaN, NaN] rows of D, like Wan's [B, 6, D] */
    for (int64_t k = 0; k < (nm > nn ? nm : nn); k++)
        for (int64_t j = 0; j < D; j++)
            for (int64_t c = 0; c < 3; c++)
                ref_store(d->mod_dtype, e, k * 6 * D + c * D + j, (c == 1 ? 0.3 : 0.5) * ada_rng_normal(&rng));
    lnmod_res_fwd_in in = {r, y, (char *)e + 2 * D * 4, (char *)e + D * 4, e};
    void *h = take(&p, n, d->res_dtype, NAN), *out = take(&p, n, d->out_dtype, NAN);
    float *mean = take(&p, d->rows, LNMOD_F32, NAN), *rstd = take(&p, d->rows, LNMOD_F32, NAN);
    lnmod_res_fwd_out fo = {h, out, mean, rstd};
    cr_assert_eq(verify_res_model_forward(which, d, &in, &fo, 2), LNMOD_OK);
    verify_res_verdict vf, vb;
    cr_assert_eq(verify_res_check_fwd(d, &in, &fo, 2, &vf), 0);
    double *rh = malloc((size_t)(4 * n) * sizeof *rh), *ro = rh + n, *rm = rh + 2 * n, *rr = rm + d->rows;
    cr_assert_not_null(rh);
    cr_assert_eq(ref_lnmod_res_forward(d, &in, rh, ro, rm, rr), LNMOD_OK);
    int fail = 0;
    const verify_tol ty = verify_tol_y(d->out_dtype), th = verify_tol_round(d->res_dtype);
    for (int64_t i = 0; i < n; i++) {
        if (bad(ref_load(d->res_dtype, h, i), rh[i], th.rtol * fabs(rh[i]) + 1e-6)) fail |= F_H;
        if (bad(ref_load(d->out_dtype, out, i), ro[i], ty.atol + ty.rtol * fabs(ro[i]))) fail |= F_OUT;
    }
    for (int64_t i = 0; i < d->rows; i++) {
        const verify_tol tm = verify_tol_mean(), tr = verify_tol_rstd();
        if (bad(mean[i], rm[i], tm.atol / rr[i] + tm.rtol * fabs(rm[i]))) fail |= F_MEAN;
        if (bad(rstd[i], rr[i], tr.atol + tr.rtol * fabs(rr[i]))) fail |= F_RSTD;
    }
    /* the backward from the model's own stored h and statistics (the correct forward's where
     * the planted bug is in the forward, so each bug shows in its own outputs) */
    if (which == verify_res_model_find("res_no_h") || which == verify_res_model_find("res_no_gate"))
        cr_assert_eq(verify_res_model_forward(0, d, &in, &fo, 2), LNMOD_OK);
    lnmod_res_bwd_in bi = {h, y, in.gate, in.scale, dout, dh, mean, rstd};
    void *dr = take(&p, n, d->res_dtype, NAN), *dy = take(&p, n, d->branch_dtype, NAN);
    void *de = take(&p, me, d->mod_dtype, NAN);
    lnmod_res_bwd_out bo = {dr, dy, (char *)de + 2 * D * 4, (char *)de + D * 4, de};
    void *ws = malloc((size_t)verify_res_model_bwd_workspace(d));
    cr_assert_not_null(ws);
    cr_assert_eq(verify_res_model_backward(which, d, &bi, &bo, ws, 2), LNMOD_OK);
    cr_assert_eq(verify_res_check_bwd(d, &bi, &bo, 2, &vb), 0);
    *strict = verify_res_verdict_mask(&vf) | verify_res_verdict_mask(&vb);
    if (which == 0) /* the correct model: within the allowances everywhere, by a margin */
        cr_assert(vf.worst <= 1.0 && vb.worst <= 1.0, "worst %g (%s) / %g (%s)", vf.worst,
                  verify_res_output_name(vf.worst_of), vb.worst, verify_res_output_name(vb.worst_of));
    double *t = malloc((size_t)(8 * D) * sizeof *t), *g = t + D, *gm = t + 2 * D, *xh = t + 3 * D;
    double *as = t + 4 * D, *ah = t + 5 * D, *s = t + 6 * D, *sh = t + 7 * D;
    ref_bwd_row *info = malloc((size_t)d->rows * sizeof *info);
    cr_assert(t && info);
    const double rd = verify_tol_round(d->res_dtype).rtol, rb = verify_tol_round(d->branch_dtype).rtol;
    const double rmod = verify_tol_round(d->mod_dtype).rtol;
    for (int64_t i = 0; i < d->rows; i++) {
        cr_assert_eq(ref_lnmod_res_backward_row(d, i, &bi, t, g, gm, xh, &info[i]), LNMOD_OK);
        for (int64_t j = 0; j < D; j++) {
            const double mag = 1 + fabs(ref_load(d->res_dtype, dh, i * D + j)) +
                               rstd[i] * (fabs(gm[j]) + info[i].abs_g + fabs(xh[j]) * info[i].abs_gx);
            if (bad(ref_load(d->res_dtype, dr, i * D + j), t[j], 1e-4 * mag + rd * fabs(t[j]))) fail |= F_DR;
            const double gate = fabs(t[j]) > 0 ? fabs(g[j]) / fabs(t[j]) : 1; /* |g|: dy = g * t */
            if (bad(ref_load(d->branch_dtype, dy, i * D + j), g[j], 1e-4 * mag * gate + rb * fabs(g[j])))
                fail |= F_DY;
        }
    }
    for (int64_t k = 0; k < nn; k++) {
        cr_assert_eq(ref_lnmod_res_norm_colsums(d, k, 0, D, &bi, s, sh, as, ah), LNMOD_OK);
        const int64_t os = d->norm == LNMOD_RES_AFFINE ? 0 : k * d->scale_stride;
        const int64_t oh = d->norm == LNMOD_RES_AFFINE ? 0 : k * d->shift_stride;
        for (int64_t j = 0; j < D; j++) {
            if (bad(ref_load(d->mod_dtype, bo.dscale, os + j), s[j], 1e-4 * (1 + as[j]) + rmod * fabs(s[j])))
                fail |= F_DSCALE;
            if (bad(ref_load(d->mod_dtype, bo.dshift, oh + j), sh[j], 1e-4 * (1 + ah[j]) + rmod * fabs(sh[j])))
                fail |= F_DSHIFT;
        }
    }
    for (int64_t k = 0; k < nm && d->gate == LNMOD_RES_GATE; k++) {
        cr_assert_eq(ref_lnmod_res_gate_colsums(d, k, 0, D, &bi, info, s, as), LNMOD_OK);
        for (int64_t j = 0; j < D; j++)
            if (bad(ref_load(d->mod_dtype, bo.dgate, k * d->gate_stride + j), s[j], 1e-3 * (1 + as[j]) + rmod * fabs(s[j])))
                fail |= F_DGATE;
    }
    free(t), free(info), free(ws), free(rh);
    drop(&p);
    return fail;
}

/* Every site x layout x residual dtype: the failing outputs of model `name`, against want(site)
 * (this test's bound) and want_strict(site) (the verifier's allowances). */
static void expect(const char *name, int (*want)(int site), int (*want_strict)(int site))
{
    const int which = verify_res_model_find(name);
    cr_assert_geq(which, 0, "%s", name);
    for (int s = 0; s < SITE_COUNT; s++)
        for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++)
            for (int bf = 0; bf < 2; bf++) {
                lnmod_res_desc d = site_desc(s, (lnmod_layout)l, bf ? LNMOD_BF16 : LNMOD_F32);
                int strict = -1;
                const int got = judge(which, &d, 2210 + (uint64_t)(s * 10 + l * 2 + bf), &strict);
                cr_assert_eq(got, want(s), "%s site %d %s res %s: failed 0x%x, want 0x%x", name, s,
                             lnmod_layout_name(d.layout), lnmod_dtype_name(d.res_dtype), got, want(s));
                cr_assert_eq(strict, want_strict(s), "%s site %d %s res %s: allowances failed 0x%x, want 0x%x",
                             name, s, lnmod_layout_name(d.layout), lnmod_dtype_name(d.res_dtype), strict,
                             want_strict(s));
            }
}

static int none(int s) { return (void)s, 0; }
static int no_gate(int s) { return s == SITE_CROSS ? 0 : F_H | F_OUT | F_MEAN | F_RSTD; }
static int no_h(int s) { return (void)s, F_H; }
static int no_dh(int s) { return F_DR | F_DY | (s == SITE_CROSS ? 0 : F_DGATE); }
static int dgate_dh(int s) { return s == SITE_CROSS ? 0 : F_DGATE; }
/* Under the verifier's allowances out, mean and rstd are judged against the norm of the h the
 * model stored: a wrong h fails h alone, an unwritten (NaN) h every forward output. */
static int no_gate_strict(int s) { return s == SITE_CROSS ? 0 : F_H; }
static int no_h_strict(int s) { return (void)s, F_H | F_OUT | F_MEAN | F_RSTD; }

Test(verify_res_model, correct_model_passes) { expect("res_model", none, none); }
Test(verify_res_model, gate_ignored_fails_h_and_out) { expect("res_no_gate", no_gate, no_gate_strict); }
Test(verify_res_model, h_unwritten_fails_h) { expect("res_no_h", no_h, no_h_strict); }
Test(verify_res_model, dh_dropped_fails_dr_dy_dgate) { expect("res_bwd_no_dh", no_dh, no_dh); }
Test(verify_res_model, dgate_without_norm_fails_dgate) { expect("res_bwd_dgate_dh", dgate_dh, dgate_dh); }

Test(verify_res_model, refusals_write_nothing)
{
    lnmod_res_desc d = site_desc(SITE_FFN, LNMOD_PER_SAMPLE, LNMOD_F32);
    float buf[4] = {1, 2, 3, 4};
    lnmod_res_fwd_in in = {buf, buf, NULL, buf, buf}; /* a gate descriptor without a gate */
    lnmod_res_fwd_out o = {buf, buf, NULL, NULL};
    cr_assert_eq(verify_res_model_forward(0, &d, &in, &o, 1), LNMOD_ERR_NULL_POINTER);
    in.gate = buf;
    d.D = 0;
    cr_assert_eq(verify_res_model_forward(0, &d, &in, &o, 1), LNMOD_ERR_ZERO_DIM);
    d.D = 64;
    lnmod_res_bwd_in bi = {buf, buf, buf, buf, buf, NULL, buf, buf};
    lnmod_res_bwd_out bo = {buf, buf, NULL, buf, buf};
    cr_assert_eq(verify_res_model_backward(0, &d, &bi, &bo, buf, 1), LNMOD_ERR_NULL_POINTER);
    for (int i = 0; i < 4; i++) cr_assert_eq(buf[i], (float)(i + 1));
    cr_assert_eq(verify_res_model_find("nope"), -1);
}

/* In place (h over r, dr over dh) and any thread count give res_model's out-of-place bits. */
static void run_both(const lnmod_res_desc *d, int inplace, int threads, unsigned char *fwd, unsigned char *bwd)
{
    ada_rng rng;
    ada_rng_seed(&rng, 2230);
    const int64_t D = d->D, n = d->rows * D, me = lnmod_res_mod_rows(d) * 6 * D, nb = n * 4;
    unsigned char *m = calloc((size_t)(10 * nb + 2 * me * 4 + 64), 1);
    cr_assert_not_null(m);
    void *r = m, *y = m + nb, *dout = m + 2 * nb, *dh = m + 3 * nb, *h = m + 4 * nb, *out = m + 5 * nb;
    void *dr = m + 6 * nb, *dy = m + 7 * nb;
    float *st = (float *)(m + 8 * nb);
    void *e = m + 10 * nb, *de = m + 10 * nb + me * 4;
    randomize(d->res_dtype, r, n, &rng, 1.0, 2.0);
    randomize(d->branch_dtype, y, n, &rng, 0.0, 1.0);
    randomize(d->out_dtype, dout, n, &rng, 0.0, 1.0);
    randomize(d->res_dtype, dh, n, &rng, 0.0, 1.0);
    randomize(d->mod_dtype, e, me, &rng, 0.0, 0.5);
    lnmod_res_fwd_in in = {r, y, (char *)e + 2 * D * 4, (char *)e + D * 4, e};
    lnmod_res_fwd_out fo = {inplace ? r : h, out, st, st + d->rows};
    cr_assert_eq(verify_res_model_forward(0, d, &in, &fo, threads), LNMOD_OK);
    memcpy(fwd, fo.h, (size_t)nb);
    memcpy(fwd + nb, out, (size_t)nb);
    lnmod_res_bwd_in bi = {fo.h, y, in.gate, in.scale, dout, dh, st, st + d->rows};
    lnmod_res_bwd_out bo = {inplace ? dh : dr, dy, (char *)de + 2 * D * 4, (char *)de + D * 4, de};
    void *ws = malloc((size_t)verify_res_model_bwd_workspace(d));
    cr_assert_not_null(ws);
    cr_assert_eq(verify_res_model_backward(0, d, &bi, &bo, ws, threads), LNMOD_OK);
    memcpy(bwd, bo.dr, (size_t)nb);
    memcpy(bwd + nb, dy, (size_t)nb);
    memcpy(bwd + 2 * nb, de, (size_t)(me * 4));
    free(ws);
    free(m);
}

Test(verify_res_model, in_place_and_threads_same_bits)
{
    for (int s = 0; s < SITE_COUNT; s++) {
        lnmod_res_desc d = site_desc(s, LNMOD_PER_FRAME, LNMOD_BF16);
        const size_t nb = (size_t)(d.rows * d.D * 4), me = (size_t)(lnmod_res_mod_rows(&d) * 6 * d.D * 4);
        unsigned char *fa = malloc(2 * nb), *fb = malloc(2 * nb), *ba = malloc(2 * nb + me), *bb = malloc(2 * nb + me);
        cr_assert(fa && fb && ba && bb);
        run_both(&d, 0, 1, fa, ba);
        run_both(&d, 1, 3, fb, bb);
        cr_assert(!memcmp(fa, fb, 2 * nb), "site %d: forward in place differs", s);
        cr_assert(!memcmp(ba, bb, 2 * nb + me), "site %d: backward in place differs", s);
        free(fa), free(fb), free(ba), free(bb);
    }
}
