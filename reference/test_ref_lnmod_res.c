/* test_ref_lnmod_res.c -- Criterion tests of the fused gated residual + LayerNorm-Modulate
 * reference (ref_lnmod_res.h): the forward against a naive long-double evaluation at Wan 2.1's
 * three residual sites (and every layout and dtype mix), the backward against central finite
 * differences of that naive forward, the backward at given statistics against the float64
 * backward, and the validation (bad arguments: a status, nothing written). Part of
 * test_reference. The naive code below calls nothing under test but ref_store/ref_load to
 * round values into a storage dtype (ref_convert has its own tests). */
#include <stdio.h>

#include "ref_lnmod_res.h"
#include "test_ref_helpers.h"

/* ---- a naive long-double op over long-double inputs --------------------------------------- */

typedef struct {
    lnmod_res_desc d;
    int64_t nm, nn;                     /* gate rows, norm rows */
    long double *r, *y, *g, *sc, *sh;   /* [rows*D], [rows*D], [nm*D], [nn*D], [nn*D] compact */
    long double *dout, *dh;             /* [rows*D] */
    /* the same values in their storage dtypes, laid out as the descriptor says */
    void *rs, *ys, *gs, *scs, *shs;
} res_case;

/* L = sum dout*out + sum dh*h, out of LN(h rounded to res_dtype when round_h). */
static long double naive_loss(const res_case *c, int round_h, long double *out, long double *h)
{
    const lnmod_res_desc *d = &c->d;
    const int64_t D = d->D;
    long double L = 0, hr[64];
    cr_assert(D <= 64);
    for (int64_t i = 0; i < d->rows; i++) {
        lnmod_desc g = lnmod_res_map_desc(d);
        const int64_t k = naive_mod_row(&g, i), kn = d->norm == LNMOD_RES_AFFINE ? 0 : k;
        long double s = 0;
        for (int64_t j = 0; j < D; j++) {
            const long double gate = d->gate == LNMOD_RES_GATE ? c->g[k * D + j] : 1.0L;
            const long double v = c->r[i * D + j] + gate * c->y[i * D + j];
            unsigned char t[4];
            ref_store(d->res_dtype, t, 0, (double)v);
            hr[j] = round_h ? (long double)load_indep(d->res_dtype, t, 0) : v;
            if (h) h[i * D + j] = v;
            L += c->dh[i * D + j] * v;
            s += hr[j];
        }
        const long double mu = s / D;
        long double ss = 0;
        for (int64_t j = 0; j < D; j++) ss += (hr[j] - mu) * (hr[j] - mu);
        const long double rstd = 1.0L / sqrtl(ss / D + d->eps);
        for (int64_t j = 0; j < D; j++) {
            const long double a = d->norm == LNMOD_RES_AFFINE ? c->sc[kn * D + j] : 1.0L + c->sc[kn * D + j];
            const long double o = c->sh[kn * D + j] + a * rstd * (hr[j] - mu);
            if (out) out[i * D + j] = o;
            L += c->dout[i * D + j] * o;
        }
    }
    return L;
}

/* Wan's three sites on [B=2, S=3] rows of D = 5 (per-frame: frames of 2 and 1 rows). */
enum { SITE_ATTN, SITE_CROSS, SITE_FFN, SITE_COUNT };
static const char *const site_name[SITE_COUNT] = {"x+y*e2,norm3", "x+ca,norm2*(1+e4)+e3",
                                                  "x+y*e5,norm1*(1+e1)+e0"};

static lnmod_res_desc site_desc(int site, lnmod_layout l, lnmod_dtype res, lnmod_dtype branch)
{
    lnmod_res_desc d = lnmod_res_desc_default();
    d.rows = 6;
    d.D = 5;
    d.rows_per_sample = 3;
    d.frame_len = 2;
    d.layout = l;
    d.res_dtype = res;
    d.branch_dtype = branch;
    d.out_dtype = branch;
    d.mod_dtype = LNMOD_F32;
    d.eps = 0.01;
    d.gate = site == SITE_CROSS ? LNMOD_RES_GATE_NONE : LNMOD_RES_GATE;
    d.norm = site == SITE_ATTN ? LNMOD_RES_AFFINE : LNMOD_RES_MODULATE;
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * d.D; /* chunks of e [nmod, 6, D] */
    return d;
}

/* A value on a grid of 2^-q with |v| <= lim, exact in every dtype used here. */
static long double grid(ada_rng *rng, int q, int lim)
{
    const int64_t n = (int64_t)lim << q;
    return (long double)ldexp((double)((int64_t)ada_rng_below(rng, (uint64_t)(2 * n + 1)) - n), -q);
}

/* Inputs on coarse grids (so r + g*y is exact in fp32: the stored h is the exact h), stored
 * into strided buffers; the e rows other than the used chunk are NaN. */
static res_case make_case(const lnmod_res_desc *d, ada_rng *rng)
{
    res_case c;
    memset(&c, 0, sizeof c);
    c.d = *d;
    const int64_t D = d->D, n = d->rows * D;
    c.nm = lnmod_res_mod_rows(d);
    c.nn = lnmod_res_norm_rows(d);
    long double *all = calloc((size_t)(4 * n + c.nm * D + 2 * c.nn * D), sizeof *all);
    cr_assert_not_null(all);
    c.r = all, c.y = all + n, c.dout = all + 2 * n, c.dh = all + 3 * n, c.g = all + 4 * n;
    c.sc = c.g + c.nm * D, c.sh = c.sc + c.nn * D;
    c.rs = malloc((size_t)n * 4), c.ys = malloc((size_t)n * 4);
    c.gs = malloc((size_t)(c.nm * 6 * D) * 4);
    c.scs = malloc((size_t)(c.nn * 6 * D) * 4), c.shs = malloc((size_t)(c.nn * 6 * D) * 4);
    cr_assert(c.rs && c.ys && c.gs && c.scs && c.shs);
    for (int64_t i = 0; i < c.nm * 6 * D; i++) ref_store(d->mod_dtype, c.gs, i, NAN);
    for (int64_t i = 0; i < c.nn * 6 * D; i++) {
        ref_store(d->mod_dtype, c.scs, i, NAN);
        ref_store(d->mod_dtype, c.shs, i, NAN);
    }
    for (int64_t i = 0; i < n; i++) {
        c.r[i] = grid(rng, 6, 2);
        c.y[i] = grid(rng, 6, 1);
        c.dout[i] = grid(rng, 4, 1);
        c.dh[i] = grid(rng, 4, 1);
        ref_store(d->res_dtype, c.rs, i, (double)c.r[i]);
        ref_store(d->branch_dtype, c.ys, i, (double)c.y[i]);
    }
    const int64_t gst = d->gate_stride, sst = d->norm == LNMOD_RES_AFFINE ? 0 : d->scale_stride;
    for (int64_t k = 0; k < c.nm; k++)
        for (int64_t j = 0; j < D; j++) {
            c.g[k * D + j] = grid(rng, 6, 1);
            ref_store(d->mod_dtype, c.gs, k * gst + j, (double)c.g[k * D + j]);
        }
    for (int64_t k = 0; k < c.nn; k++)
        for (int64_t j = 0; j < D; j++) {
            c.sc[k * D + j] = grid(rng, 6, 1);
            c.sh[k * D + j] = grid(rng, 6, 1);
            ref_store(d->mod_dtype, c.scs, k * sst + j, (double)c.sc[k * D + j]);
            ref_store(d->mod_dtype, c.shs, k * sst + j, (double)c.sh[k * D + j]);
        }
    return c;
}

static void free_case(res_case *c)
{
    free(c->r);
    free(c->rs), free(c->ys), free(c->gs), free(c->scs), free(c->shs);
}

static lnmod_res_fwd_in fwd_in(const res_case *c)
{
    return (lnmod_res_fwd_in){c->rs, c->ys, c->gs, c->scs, c->shs};
}

/* ---- forward -------------------------------------------------------------------------------- */

static void check_forward(const lnmod_res_desc *d, ada_rng *rng, const char *what)
{
    res_case c = make_case(d, rng);
    const int64_t n = d->rows * d->D;
    /* off-grid r, so that h really rounds in a bf16/fp16 residual */
    for (int64_t i = 0; i < n; i++) {
        c.r[i] += (long double)ldexp(ada_rng_uniform(rng), -9);
        unsigned char t[4];
        ref_store(d->res_dtype, t, 0, (double)c.r[i]);
        c.r[i] = load_indep(d->res_dtype, t, 0);
        ref_store(d->res_dtype, c.rs, i, (double)c.r[i]);
    }
    long double out[30], h[30];
    double gh[30], go[30], mean[6], rstd[6];
    naive_loss(&c, 1, out, h);
    lnmod_res_fwd_in in = fwd_in(&c);
    cr_assert_eq(ref_lnmod_res_forward(d, &in, gh, go, mean, rstd), LNMOD_OK, "%s", what);
    for (int64_t i = 0; i < n; i++) {
        cr_assert(fabsl(gh[i] - h[i]) <= 1e-15L * (1 + fabsl(h[i])), "%s h[%lld]", what, (long long)i);
        cr_assert(fabsl(go[i] - out[i]) <= 1e-12L * (1 + fabsl(out[i])), "%s out[%lld] = %.17g, naive %.17Lg",
                  what, (long long)i, go[i], out[i]);
    }
    /* rows split anywhere give the same bits */
    double gh2[30], go2[30];
    cr_assert_eq(ref_lnmod_res_forward_rows(d, 0, 2, &in, gh2, go2, NULL, NULL), LNMOD_OK);
    cr_assert_eq(ref_lnmod_res_forward_rows(d, 2, 6, &in, gh2, go2, NULL, NULL), LNMOD_OK);
    cr_assert(!memcmp(go, go2, sizeof go) && !memcmp(gh, gh2, sizeof gh), "%s split", what);
    free_case(&c);
}

Test(ref_res, forward_three_sites_all_layouts_and_dtypes)
{
    ada_rng rng;
    ada_rng_seed(&rng, 2201);
    const lnmod_dtype mix[4][2] = {{LNMOD_F32, LNMOD_BF16}, {LNMOD_F32, LNMOD_F16},
                                   {LNMOD_BF16, LNMOD_BF16}, {LNMOD_F16, LNMOD_F16}};
    for (int s = 0; s < SITE_COUNT; s++)
        for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++)
            for (int m = 0; m < 4; m++) {
                lnmod_res_desc d = site_desc(s, (lnmod_layout)l, mix[m][0], mix[m][1]);
                char what[96];
                snprintf(what, sizeof what, "%s %s res %s branch %s", site_name[s], lnmod_layout_name(d.layout),
                         lnmod_dtype_name(mix[m][0]), lnmod_dtype_name(mix[m][1]));
                check_forward(&d, &rng, what);
            }
}

/* ---- backward against central differences --------------------------------------------------- */

static double central(res_case *c, long double *p)
{
    const long double keep = *p, step = 1e-6L;
    *p = keep + step;
    const long double lp = naive_loss(c, 0, NULL, NULL);
    *p = keep - step;
    const long double lm = naive_loss(c, 0, NULL, NULL);
    *p = keep;
    return (double)((lp - lm) / (2 * step));
}

/* |fd - got| <= 1e-7 (1 + |fd|): the central difference's truncation error (step 1e-6,
 * eps = 0.01 so rstd <= 10) is ~1e-9, its rounding (long double, |L| ~ 10) ~1e-12; any wrong
 * or missing term (dh, the gate, the xhat*mgx term, affine vs 1 + scale) is O(0.01..1). */
static void expect_fd(res_case *c, long double *p, double got, const char *what, const char *name,
                      int64_t idx)
{
    const double fd = central(c, p);
    cr_assert(fabs(fd - got) <= 1e-7 * (1 + fabs(fd)), "%s d%s[%lld] = %.12g, fd %.12g", what, name,
              (long long)idx, got, fd);
}

Test(ref_res, backward_finite_differences_three_sites)
{
    ada_rng rng;
    ada_rng_seed(&rng, 2202);
    for (int s = 0; s < SITE_COUNT; s++)
        for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++) {
            lnmod_res_desc d = site_desc(s, (lnmod_layout)l, LNMOD_F32, LNMOD_BF16);
            res_case c = make_case(&d, &rng);
            const int64_t D = d.D, n = d.rows * D;
            double dout[30], dh[30], dr[30], dy[30], dg[30], dsc[30], dsh[30], h[30], out[30];
            for (int64_t i = 0; i < n; i++) dout[i] = (double)c.dout[i], dh[i] = (double)c.dh[i];
            lnmod_res_fwd_in in = fwd_in(&c);
            cr_assert_eq(ref_lnmod_res_forward(&d, &in, h, out, NULL, NULL), LNMOD_OK);
            for (int64_t i = 0; i < n; i++) cr_assert_eq(ref_round_to(d.res_dtype, h[i]), h[i], "h exact");
            cr_assert_eq(ref_lnmod_res_backward(&d, &in, dout, dh, dr, dy, dg, dsc, dsh), LNMOD_OK);
            char what[64];
            snprintf(what, sizeof what, "%s %s", site_name[s], lnmod_layout_name(d.layout));
            for (int64_t i = 0; i < n; i++) {
                expect_fd(&c, &c.r[i], dr[i], what, "r", i);
                expect_fd(&c, &c.y[i], dy[i], what, "y", i);
            }
            if (d.gate == LNMOD_RES_GATE)
                for (int64_t i = 0; i < c.nm * D; i++) expect_fd(&c, &c.g[i], dg[i], what, "gate", i);
            for (int64_t i = 0; i < c.nn * D; i++) {
                expect_fd(&c, &c.sc[i], dsc[i], what, "scale", i);
                expect_fd(&c, &c.sh[i], dsh[i], what, "shift", i);
            }
            free_case(&c);
        }
}

/* ---- the backward at given statistics -------------------------------------------------------- */

/* The row and column-sum functions at the forward's statistics rounded to fp32 against the
 * float64 backward at its own: they differ by the statistics' rounding only (~1e-7 relative),
 * so 1e-5 (1 + |ref|) holds; dropping dh, the gate or a row is O(0.1). */
static void check_at_stats(const lnmod_res_desc *d, ada_rng *rng, const char *what)
{
    res_case c = make_case(d, rng);
    const int64_t D = d->D, n = d->rows * D;
    double h[30], out[30], mean[6], rstd[6], dout[30], dh[30];
    double dr[30], dy[30], dg[30], dsc[30], dsh[30];
    float mf[6], rf[6];
    unsigned char hs[120], douts[120], dhs[120];
    lnmod_res_fwd_in in = fwd_in(&c);
    cr_assert_eq(ref_lnmod_res_forward(d, &in, h, out, mean, rstd), LNMOD_OK);
    for (int64_t i = 0; i < n; i++) {
        ref_store(d->res_dtype, hs, i, h[i]);
        ref_store(d->out_dtype, douts, i, (double)c.dout[i]);
        ref_store(d->res_dtype, dhs, i, (double)c.dh[i]);
        dout[i] = ref_load(d->out_dtype, douts, i);
        dh[i] = ref_load(d->res_dtype, dhs, i);
    }
    for (int64_t i = 0; i < d->rows; i++) mf[i] = (float)mean[i], rf[i] = (float)rstd[i];
    cr_assert_eq(ref_lnmod_res_backward(d, &in, dout, dh, dr, dy, dg, dsc, dsh), LNMOD_OK);
    lnmod_res_bwd_in b = {hs, c.ys, c.gs, c.scs, douts, dhs, mf, rf};
    ref_bwd_row info[6];
    for (int64_t i = 0; i < d->rows; i++) {
        double r1[5], y1[5], gm[5], xh[5];
        cr_assert_eq(ref_lnmod_res_backward_row(d, i, &b, r1, y1, gm, xh, &info[i]), LNMOD_OK);
        for (int64_t j = 0; j < D; j++) {
            cr_assert(fabs(r1[j] - dr[i * D + j]) <= 1e-5 * (1 + fabs(dr[i * D + j])), "%s dr[%lld,%lld]", what,
                      (long long)i, (long long)j);
            cr_assert(fabs(y1[j] - dy[i * D + j]) <= 1e-5 * (1 + fabs(dy[i * D + j])), "%s dy", what);
        }
    }
    for (int64_t k = 0; k < c.nn; k++) {
        double s[5], t[5], as[5], at[5];
        cr_assert_eq(ref_lnmod_res_norm_colsums(d, k, 1, 5, &b, s, t, as, at), LNMOD_OK);
        for (int64_t j = 1; j < D; j++) {
            cr_assert(fabs(s[j - 1] - dsc[k * D + j]) <= 1e-5 * (1 + as[j - 1]), "%s dscale", what);
            cr_assert(fabs(t[j - 1] - dsh[k * D + j]) <= 1e-5 * (1 + at[j - 1]), "%s dshift", what);
        }
    }
    for (int64_t k = 0; k < c.nm && d->gate == LNMOD_RES_GATE; k++) {
        double g1[5], ag[5];
        cr_assert_eq(ref_lnmod_res_gate_colsums(d, k, 0, D, &b, info, g1, ag), LNMOD_OK);
        for (int64_t j = 0; j < D; j++)
            cr_assert(fabs(g1[j] - dg[k * D + j]) <= 1e-5 * (1 + ag[j]), "%s dgate[%lld,%lld] = %.9g want %.9g",
                      what, (long long)k, (long long)j, g1[j], dg[k * D + j]);
    }
    free_case(&c);
}

Test(ref_res, backward_at_given_statistics)
{
    ada_rng rng;
    ada_rng_seed(&rng, 2203);
    for (int s = 0; s < SITE_COUNT; s++)
        for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++)
            for (int bf = 0; bf < 2; bf++) {
                lnmod_res_desc d = site_desc(s, (lnmod_layout)l, bf ? LNMOD_BF16 : LNMOD_F32, LNMOD_BF16);
                char what[64];
                snprintf(what, sizeof what, "%s %s res %s", site_name[s], lnmod_layout_name(d.layout),
                         lnmod_dtype_name(d.res_dtype));
                check_at_stats(&d, &rng, what);
            }
}

/* ---- validation: a status, and nothing written ------------------------------------------- */

#define SENTINEL 12345.0
static void fill(double *a, int n)
{
    for (int i = 0; i < n; i++) a[i] = SENTINEL;
}
static void untouched(const double *a, int n, const char *what)
{
    for (int i = 0; i < n; i++) cr_assert_eq(a[i], SENTINEL, "%s wrote element %d", what, i);
}

Test(ref_res, bad_arguments_write_nothing)
{
    ada_rng rng;
    ada_rng_seed(&rng, 2204);
    lnmod_res_desc d = site_desc(SITE_FFN, LNMOD_PER_SAMPLE, LNMOD_F32, LNMOD_BF16);
    res_case c = make_case(&d, &rng);
    lnmod_res_fwd_in in = fwd_in(&c), in_nogate = in;
    in_nogate.gate = NULL;
    lnmod_res_desc bad = d;
    bad.gate_stride = 3; /* gate rows of 5 would overlap */
    double o1[30], o2[30], o3[30], o4[30], o5[30], o6[30], o7[30];
    double *outs[7] = {o1, o2, o3, o4, o5, o6, o7};
    for (int i = 0; i < 7; i++) fill(outs[i], 30);
    cr_assert_eq(ref_lnmod_res_forward(NULL, &in, o1, o2, o3, o4), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(ref_lnmod_res_forward(&d, NULL, o1, o2, o3, o4), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(ref_lnmod_res_forward(&d, &in_nogate, o1, o2, o3, o4), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(ref_lnmod_res_forward(&d, &in, NULL, o2, o3, o4), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(ref_lnmod_res_forward(&bad, &in, o1, o2, o3, o4), LNMOD_ERR_STRIDE);
    cr_assert_eq(ref_lnmod_res_forward_rows(&d, 4, 7, &in, o1, o2, o3, o4), LNMOD_ERR_SHAPE);
    cr_assert_eq(ref_lnmod_res_forward_rows(&d, 3, 2, &in, o1, o2, o3, o4), LNMOD_ERR_SHAPE);
    double dd[30] = {0};
    cr_assert_eq(ref_lnmod_res_backward(&d, &in, dd, dd, o1, o2, NULL, o3, o4), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(ref_lnmod_res_backward(&d, &in, NULL, dd, o1, o2, o5, o3, o4), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(ref_lnmod_res_backward(&bad, &in, dd, dd, o1, o2, o5, o3, o4), LNMOD_ERR_STRIDE);
    float st[6] = {0};
    lnmod_res_bwd_in b = {c.rs, c.ys, c.gs, c.scs, c.ys, NULL, st, st}, b_nomean = b;
    b_nomean.mean = NULL;
    ref_bwd_row info[6];
    memset(info, 0, sizeof info);
    cr_assert_eq(ref_lnmod_res_backward_row(&d, 6, &b, o1, o2, o3, o4, info), LNMOD_ERR_SHAPE);
    cr_assert_eq(ref_lnmod_res_backward_row(&d, -1, &b, o1, o2, o3, o4, info), LNMOD_ERR_SHAPE);
    cr_assert_eq(ref_lnmod_res_backward_row(&d, 0, &b_nomean, o1, o2, o3, o4, info), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(ref_lnmod_res_backward_row(&bad, 0, &b, o1, o2, o3, o4, info), LNMOD_ERR_STRIDE);
    cr_assert_eq(ref_lnmod_res_norm_colsums(&d, 2, 0, 5, &b, o1, o2, o3, o4), LNMOD_ERR_SHAPE);
    cr_assert_eq(ref_lnmod_res_norm_colsums(&d, 0, 3, 6, &b, o1, o2, o3, o4), LNMOD_ERR_SHAPE);
    cr_assert_eq(ref_lnmod_res_norm_colsums(&d, 0, 0, 5, &b, NULL, o2, o3, o4), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(ref_lnmod_res_gate_colsums(&d, 2, 0, 5, &b, info, o1, o2), LNMOD_ERR_SHAPE);
    cr_assert_eq(ref_lnmod_res_gate_colsums(&d, 0, 0, 5, &b, NULL, o1, o2), LNMOD_ERR_NULL_POINTER);
    lnmod_res_desc nogate = d;
    nogate.gate = LNMOD_RES_GATE_NONE;
    cr_assert_eq(ref_lnmod_res_gate_colsums(&nogate, 0, 0, 5, &b, info, o1, o2), LNMOD_ERR_UNSUPPORTED);
    for (int i = 0; i < 7; i++) untouched(outs[i], 30, "a refused call");
    /* a valid empty range writes nothing and is fine */
    cr_assert_eq(ref_lnmod_res_forward_rows(&d, 3, 3, &in, o1, o2, o3, o4), LNMOD_OK);
    untouched(o1, 30, "an empty range");
    free_case(&c);
}
