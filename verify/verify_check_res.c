/* verify_check_res.c -- see verify_check_res.h. Each phase is one verify_parallel pass over
 * work items (rows, or (modulation row, block of 64 columns)); every thread keeps its own
 * verdict, merged in thread order at the end. */
#include "verify_check_res.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_lnmod_res.h"
#include "verify_check.h"
#include "verify_par.h"

#define U23 0x1p-23
#define COLS 64

static const char *const out_names[VERIFY_RES_NOUT] = {"h",  "out",   "mean",   "rstd",  "dr",
                                                       "dy", "dgate", "dscale", "dshift"};

const char *verify_res_output_name(int which)
{
    return which >= 0 && which < VERIFY_RES_NOUT ? out_names[which] : "?";
}

int64_t verify_res_verdict_fails(const verify_res_verdict *v)
{
    int64_t n = 0;
    for (int k = 0; k < VERIFY_RES_NOUT; k++) n += v->fails[k];
    return n;
}

int verify_res_verdict_mask(const verify_res_verdict *v)
{
    int m = 0;
    for (int k = 0; k < VERIFY_RES_NOUT; k++)
        if (v->fails[k]) m |= 1 << k;
    return m;
}

static void verdict_init(verify_res_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->worst_of = -1;
}

static void add(verify_res_verdict *v, int what, double got, double ref, double allow)
{
    double ratio = INFINITY;
    if (isfinite(got) && isfinite(ref)) ratio = got == ref ? 0.0 : fabs(got - ref) / allow;
    if (!(ratio <= 1.0)) v->fails[what]++;
    if (v->worst_of < 0 || !(ratio <= v->worst)) {
        v->worst = ratio;
        v->worst_of = what;
    }
}

static void merge(verify_res_verdict *v, const verify_res_verdict *o)
{
    for (int k = 0; k < VERIFY_RES_NOUT; k++) v->fails[k] += o->fails[k];
    if (o->worst_of >= 0 && (v->worst_of < 0 || !(o->worst <= v->worst))) {
        v->worst = o->worst;
        v->worst_of = o->worst_of;
    }
}

/* What every phase's items read; per-thread verdicts and error flags. */
typedef struct {
    const lnmod_res_desc *d;
    const lnmod_res_fwd_in *fin;
    const lnmod_res_fwd_out *fgot;
    const lnmod_res_bwd_in *bin;
    const lnmod_res_bwd_out *bgot;
    lnmod_res_desc d2;    /* forward phase 2: the stored h normalized */
    lnmod_res_fwd_in in2; /* its inputs: r = the stored h, y = 0 */
    double *h, *out, *mean, *rstd;
    ref_bwd_row *info;   /* backward: per row */
    verify_dx_coef *coef;
    int64_t nb;          /* blocks of COLS columns */
    verify_res_verdict v[VERIFY_MAX_THREADS];
    int err[VERIFY_MAX_THREADS];
} ctx_t;

static ctx_t *ctx_new(const lnmod_res_desc *d)
{
    ctx_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->d = d;
    for (int t = 0; t < VERIFY_MAX_THREADS; t++) verdict_init(&c->v[t]);
    c->nb = (d->D + COLS - 1) / COLS;
    return c;
}

/* Merges the threads' verdicts into *v; -1 when any item failed. */
static int ctx_finish(ctx_t *c, verify_res_verdict *v)
{
    int err = 0;
    for (int t = 0; t < VERIFY_MAX_THREADS; t++) {
        merge(v, &c->v[t]);
        err |= c->err[t];
    }
    return err ? -1 : 0;
}

static int threads_of(int threads)
{
    return threads < 1 ? 1 : threads > VERIFY_MAX_THREADS ? VERIFY_MAX_THREADS : threads;
}

/* ---- the forward ---- */

static void fwd_h_rows(void *arg, int64_t lo, int64_t hi, int tid)
{
    ctx_t *c = arg;
    const lnmod_res_desc *d = c->d;
    const verify_tol tr = verify_tol_round(d->res_dtype);
    if (ref_lnmod_res_forward_rows(d, lo, hi, c->fin, c->h, c->out, NULL, NULL) != LNMOD_OK) {
        c->err[tid] = 1;
        return;
    }
    for (int64_t e = lo * d->D; e < hi * d->D; e++)
        add(&c->v[tid], VERIFY_RES_H, ref_load(d->res_dtype, c->fgot->h, e), c->h[e],
            tr.rtol * fabs(c->h[e]) + tr.atol);
}

static void fwd_out_rows(void *arg, int64_t lo, int64_t hi, int tid)
{
    ctx_t *c = arg;
    const lnmod_res_desc *d = c->d;
    const verify_tol ty = verify_tol_y(d->out_dtype), tm = verify_tol_mean(), ts = verify_tol_rstd();
    if (ref_lnmod_res_forward_rows(&c->d2, lo, hi, &c->in2, c->h, c->out, c->mean, c->rstd) != LNMOD_OK) {
        c->err[tid] = 1;
        return;
    }
    for (int64_t e = lo * d->D; e < hi * d->D; e++)
        add(&c->v[tid], VERIFY_RES_OUT, ref_load(d->out_dtype, c->fgot->out, e), c->out[e],
            ty.atol + ty.rtol * fabs(c->out[e]));
    for (int64_t i = lo; i < hi; i++) {
        const double var = 1.0 / (c->rstd[i] * c->rstd[i]) - d->eps, sd = var > 0.0 ? sqrt(var) : 0.0;
        if (c->fgot->mean)
            add(&c->v[tid], VERIFY_RES_MEAN, c->fgot->mean[i], c->mean[i], tm.atol * sd + tm.rtol * fabs(c->mean[i]));
        if (c->fgot->rstd)
            add(&c->v[tid], VERIFY_RES_RSTD, c->fgot->rstd[i], c->rstd[i], ts.atol + ts.rtol * fabs(c->rstd[i]));
    }
}

int verify_res_check_fwd(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *got,
                         int threads, verify_res_verdict *v)
{
    verdict_init(v);
    ctx_t *c = ctx_new(d);
    const int64_t n = d->rows * d->D;
    void *zero = calloc((size_t)n, lnmod_dtype_size(d->branch_dtype));
    if (c) {
        c->h = malloc((size_t)n * sizeof *c->h);
        c->out = malloc((size_t)n * sizeof *c->out);
        c->mean = malloc((size_t)d->rows * sizeof *c->mean);
        c->rstd = malloc((size_t)d->rows * sizeof *c->rstd);
    }
    int rc = -1;
    if (c && zero && c->h && c->out && c->mean && c->rstd) {
        c->fin = in;
        c->fgot = got;
        /* 1. h against the exact r + g*y; 2. out, mean, rstd against LN of the stored h. */
        verify_parallel(d->rows, d->D, threads_of(threads), fwd_h_rows, c);
        c->d2 = *d;
        c->d2.gate = LNMOD_RES_GATE_NONE;
        const lnmod_res_fwd_in in2 = {got->h, zero, NULL, in->scale, in->shift};
        c->in2 = in2;
        verify_parallel(d->rows, d->D, threads_of(threads), fwd_out_rows, c);
        rc = ctx_finish(c, v);
    }
    if (c) free(c->h), free(c->out), free(c->mean), free(c->rstd);
    free(c);
    free(zero);
    return rc;
}

/* ---- the backward ---- */

/* The allowance of t (dL/dh) at one element (verify_check_res.h). */
static double allow_t(const verify_dx_coef *c, double gm, double xh, double t, double dh)
{
    return c->c0 + c->c_g * fabs(gm) + c->c_x * fabs(xh) + U23 * (fabs(t) + fabs(dh) + fabs(t - dh));
}

static void bwd_rows(void *arg, int64_t lo, int64_t hi, int tid)
{
    ctx_t *c = arg;
    const lnmod_res_desc *d = c->d;
    const lnmod_res_bwd_in *in = c->bin;
    const int64_t D = d->D;
    const int gate = d->gate == LNMOD_RES_GATE;
    const verify_tol rr = verify_tol_round(d->res_dtype), rb = verify_tol_round(d->branch_dtype);
    double *buf = malloc((size_t)(4 * D) * sizeof *buf);
    if (!buf) {
        c->err[tid] = 1;
        return;
    }
    double *dr = buf, *dy = buf + D, *gm = buf + 2 * D, *xh = buf + 3 * D;
    for (int64_t i = lo; i < hi; i++) {
        if (ref_lnmod_res_backward_row(d, i, in, dr, dy, gm, xh, &c->info[i]) != LNMOD_OK) {
            c->err[tid] = 1;
            break;
        }
        const verify_dx_row vr = {in->rstd[i], c->info[i].mg, c->info[i].mgx, c->info[i].abs_g,
                                  c->info[i].abs_gx, D, LNMOD_F32};
        c->coef[i] = verify_dx_coef_of(&vr);
        const int64_t m = gate ? lnmod_res_mod_index(d, i) : 0;
        for (int64_t j = 0; j < D; j++) {
            const double dh = in->dh ? ref_load(d->res_dtype, in->dh, i * D + j) : 0.0;
            const double at = allow_t(&c->coef[i], gm[j], xh[j], dr[j], dh);
            const double g = gate ? ref_load(d->mod_dtype, in->gate, m * d->gate_stride + j) : 1.0;
            add(&c->v[tid], VERIFY_RES_DR, ref_load(d->res_dtype, c->bgot->dr, i * D + j), dr[j],
                at * (1.0 + rr.rtol) + rr.rtol * fabs(dr[j]) + rr.atol);
            add(&c->v[tid], VERIFY_RES_DY, ref_load(d->branch_dtype, c->bgot->dy, i * D + j), dy[j],
                fabs(g) * at * (1.0 + rb.rtol) + (rb.rtol + U23) * fabs(dy[j]) + rb.atol);
        }
    }
    free(buf);
}

static void bwd_norm_items(void *arg, int64_t lo, int64_t hi, int tid)
{
    ctx_t *c = arg;
    const lnmod_res_desc *d = c->d;
    const int affine = d->norm == LNMOD_RES_AFFINE;
    const lnmod_desc map = lnmod_res_map_desc(d);
    for (int64_t it = lo; it < hi; it++) {
        double s[COLS], h[COLS], as[COLS], ah[COLS];
        const int64_t k = it / c->nb, j0 = (it - k * c->nb) * COLS, j1 = j0 + COLS < d->D ? j0 + COLS : d->D;
        if (ref_lnmod_res_norm_colsums(d, k, j0, j1, c->bin, s, h, as, ah) != LNMOD_OK) {
            c->err[tid] = 1;
            return;
        }
        int64_t r0 = 0, r1 = d->rows;
        if (!affine) ref_mod_row_range(&map, k, &r0, &r1);
        const verify_colsum_coef cc = verify_colsum_coef_of(d->mod_dtype, r1 - r0);
        const int64_t ss = affine ? 0 : d->scale_stride, hs = affine ? 0 : d->shift_stride;
        for (int64_t j = j0; j < j1; j++) {
            add(&c->v[tid], VERIFY_RES_DSCALE, ref_load(d->mod_dtype, c->bgot->dscale, k * ss + j), s[j - j0],
                verify_colsum_allow_c(&cc, s[j - j0], as[j - j0]));
            add(&c->v[tid], VERIFY_RES_DSHIFT, ref_load(d->mod_dtype, c->bgot->dshift, k * hs + j), h[j - j0],
                verify_colsum_allow_c(&cc, h[j - j0], ah[j - j0]));
        }
    }
}

/* sum over the rows of gate row k of |y| allow_t, columns [j0, j1), into ex. */
static void gate_t_error(const ctx_t *c, int64_t r0, int64_t r1, int64_t j0, int64_t j1, double *ex)
{
    const lnmod_res_desc *d = c->d;
    const lnmod_res_bwd_in *in = c->bin;
    const int affine = d->norm == LNMOD_RES_AFFINE;
    const int64_t D = d->D;
    for (int64_t j = j0; j < j1; j++) ex[j - j0] = 0.0;
    for (int64_t i = r0; i < r1; i++) {
        const double mu = in->mean[i], rs = in->rstd[i];
        const int64_t kn = lnmod_res_norm_index(d, i);
        for (int64_t j = j0; j < j1; j++) {
            const double sc = ref_load(d->mod_dtype, in->scale, (affine ? 0 : kn * d->scale_stride) + j);
            const double gm = ref_load(d->out_dtype, in->dout, i * D + j) * (affine ? sc : 1.0 + sc);
            const double xh = (ref_load(d->res_dtype, in->h, i * D + j) - mu) * rs;
            const double dh = in->dh ? ref_load(d->res_dtype, in->dh, i * D + j) : 0.0;
            const double tv = dh + rs * (gm - c->info[i].mg - xh * c->info[i].mgx);
            ex[j - j0] += fabs(ref_load(d->branch_dtype, in->y, i * D + j)) * allow_t(&c->coef[i], gm, xh, tv, dh);
        }
    }
}

static void bwd_gate_items(void *arg, int64_t lo, int64_t hi, int tid)
{
    ctx_t *c = arg;
    const lnmod_res_desc *d = c->d;
    const lnmod_desc map = lnmod_res_map_desc(d);
    const verify_tol rm = verify_tol_round(d->mod_dtype);
    for (int64_t it = lo; it < hi; it++) {
        double g[COLS], ag[COLS], ex[COLS];
        const int64_t k = it / c->nb, j0 = (it - k * c->nb) * COLS, j1 = j0 + COLS < d->D ? j0 + COLS : d->D;
        if (ref_lnmod_res_gate_colsums(d, k, j0, j1, c->bin, c->info, g, ag) != LNMOD_OK) {
            c->err[tid] = 1;
            return;
        }
        int64_t r0, r1;
        ref_mod_row_range(&map, k, &r0, &r1);
        gate_t_error(c, r0, r1, j0, j1, ex);
        const verify_colsum_coef cc = verify_colsum_coef_of(d->mod_dtype, r1 - r0);
        for (int64_t j = j0; j < j1; j++)
            add(&c->v[tid], VERIFY_RES_DGATE, ref_load(d->mod_dtype, c->bgot->dgate, k * d->gate_stride + j),
                g[j - j0], verify_colsum_allow_c(&cc, g[j - j0], ag[j - j0]) + (1.0 + rm.rtol) * ex[j - j0]);
    }
}

int verify_res_check_bwd(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *got,
                         int threads, verify_res_verdict *v)
{
    verdict_init(v);
    ctx_t *c = ctx_new(d);
    if (c) {
        c->info = malloc((size_t)d->rows * sizeof *c->info);
        c->coef = malloc((size_t)d->rows * sizeof *c->coef);
    }
    int rc = -1;
    if (c && c->info && c->coef) {
        const int nt = threads_of(threads);
        c->bin = in;
        c->bgot = got;
        /* 1. dr and dy row by row (and each row's t coefficients); 2. dscale, dshift; 3. dgate. */
        verify_parallel(d->rows, d->D, nt, bwd_rows, c);
        int err = 0;
        for (int t = 0; t < VERIFY_MAX_THREADS; t++) err |= c->err[t];
        if (!err) {
            /* an item's cost: its block's columns over the rows of its modulation row */
            const int64_t nn = lnmod_res_norm_rows(d), ng = lnmod_res_mod_rows(d);
            verify_parallel(nn * c->nb, COLS * (d->rows / nn + 1), nt, bwd_norm_items, c);
            if (d->gate == LNMOD_RES_GATE)
                verify_parallel(ng * c->nb, 2 * COLS * (d->rows / ng + 1), nt, bwd_gate_items, c);
        }
        rc = ctx_finish(c, v);
    }
    if (c) free(c->info), free(c->coef);
    free(c);
    return rc;
}
