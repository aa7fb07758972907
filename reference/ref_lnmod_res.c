/* ref_lnmod_res.c -- the float64 reference of the fused gated residual + LayerNorm-Modulate op
 * (contract in ref_lnmod_res.h, the op in lnmod_res_desc.h).
 *
 * Per token row i (every quantity a double): widen r, y and the gate row; h = r + g*y; hs =
 * h rounded once to res_dtype; mean = sum(hs)/D, var = sum((hs - mean)^2)/D in order (two
 * passes); xhat = (hs - mean)*rstd; out = xhat*a + b with a = 1 + scale (or weight) and b =
 * shift (or bias). The backward forms gm = dout*a, its row means mg and mgx (of gm*xhat), t =
 * dh + rstd*(gm - mg - xhat*mgx) through one inline function (bwd_t) wherever t is needed, so
 * the row function and the gate's column sums give t bit for bit alike. Plain double loops
 * (no BLAS): rows are summed in order. Built with -ffp-contract=off (reference/CMakeLists.txt).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_lnmod_res.h"

double ref_round_to(lnmod_dtype t, double v)
{
    unsigned char tmp[4];
    if (lnmod_dtype_size(t) == 0) return NAN;
    ref_store(t, tmp, 0, v);
    return ref_load(t, tmp, 0);
}

static double *alloc_d(int64_t n) { return malloc((size_t)(n > 0 ? n : 1) * sizeof(double)); }

/* a[j] = 1 + scale (MODULATE) or weight (AFFINE) of the norm row of token row i; b[j] the
 * shift or bias (b may be NULL). */
static void norm_row(const lnmod_res_desc *d, int64_t i, const void *scale, const void *shift,
                     double *a, double *b)
{
    const int modulate = d->norm == LNMOD_RES_MODULATE;
    const int64_t k = lnmod_res_norm_index(d, i);
    const int64_t os = modulate ? k * d->scale_stride : 0, oh = modulate ? k * d->shift_stride : 0;
    for (int64_t j = 0; j < d->D; j++) {
        const double s = ref_load(d->mod_dtype, scale, os + j);
        a[j] = modulate ? 1.0 + s : s;
        if (b) b[j] = ref_load(d->mod_dtype, shift, oh + j);
    }
}

/* Gate element j of token row i (1 without a gate). */
static inline double gate_at(const lnmod_res_desc *d, const void *gate, int64_t i, int64_t j)
{
    if (d->gate == LNMOD_RES_GATE_NONE) return 1.0;
    return ref_load(d->mod_dtype, gate, lnmod_res_mod_index(d, i) * d->gate_stride + j);
}

/* hs[0..D) = the stored h of row i, h (may be NULL) the exact one; mean and rstd of hs. */
static void fwd_h_row(const lnmod_res_desc *d, int64_t i, const lnmod_res_fwd_in *in, double *h,
                      double *hs, double *mean, double *rstd)
{
    const int64_t D = d->D;
    double s = 0.0;
    for (int64_t j = 0; j < D; j++) {
        const double v = ref_load(d->res_dtype, in->r, i * D + j) +
                         gate_at(d, in->gate, i, j) * ref_load(d->branch_dtype, in->y, i * D + j);
        if (h) h[j] = v;
        hs[j] = ref_round_to(d->res_dtype, v);
        s += hs[j];
    }
    const double mu = s / (double)D;
    double ss = 0.0;
    for (int64_t j = 0; j < D; j++) ss += (hs[j] - mu) * (hs[j] - mu);
    *mean = mu;
    *rstd = 1.0 / sqrt(ss / (double)D + d->eps);
}

lnmod_status ref_lnmod_res_forward_rows(const lnmod_res_desc *d, int64_t i0, int64_t i1,
                                        const lnmod_res_fwd_in *in, double *h, double *out,
                                        double *mean, double *rstd)
{
    if (!h || !out) return LNMOD_ERR_NULL_POINTER;
    lnmod_status st = lnmod_res_check_fwd_in(d, in);
    if (st != LNMOD_OK) return st;
    if (i0 < 0 || i1 < i0 || i1 > d->rows) return LNMOD_ERR_SHAPE;
    const int64_t D = d->D;
    double *buf = alloc_d(3 * D);
    if (!buf) return LNMOD_ERR_ALLOC;
    double *hs = buf, *a = buf + D, *b = buf + 2 * D;
    for (int64_t i = i0; i < i1; i++) {
        double mu, rs;
        fwd_h_row(d, i, in, h + i * D, hs, &mu, &rs);
        norm_row(d, i, in->scale, in->shift, a, b);
        for (int64_t j = 0; j < D; j++) out[i * D + j] = (hs[j] - mu) * rs * a[j] + b[j];
        if (mean) mean[i] = mu;
        if (rstd) rstd[i] = rs;
    }
    free(buf);
    return LNMOD_OK;
}

lnmod_status ref_lnmod_res_forward(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, double *h,
                                   double *out, double *mean, double *rstd)
{
    if (!d) return LNMOD_ERR_NULL_POINTER;
    return ref_lnmod_res_forward_rows(d, 0, d->rows, in, h, out, mean, rstd);
}

/* ---- the backward ---------------------------------------------------------------------------- */

/* t = dh + rstd*(gm - mg - xhat*mgx): the one expression of dL/dh. */
static inline double bwd_t(double dh, double rs, double gm, double mg, double xhat, double mgx)
{
    return dh + rs * (gm - mg - xhat * mgx);
}

/* The row part shared by both backwards: gm and xhat are filled on entry (xhat from the
 * statistics, gm = dout*a); writes dr, dy and info. dh: the row's D values, or NULL. */
static void bwd_row_core(const lnmod_res_desc *d, int64_t i, const void *gate, const double *dh,
                         double rs, const double *gm, const double *xhat, double *dr, double *dy,
                         ref_bwd_row *info)
{
    const int64_t D = d->D;
    double sg = 0.0, sgx = 0.0, ag = 0.0, agx = 0.0;
    for (int64_t j = 0; j < D; j++) {
        const double gx = gm[j] * xhat[j];
        sg += gm[j];
        sgx += gx;
        ag += fabs(gm[j]);
        agx += fabs(gx);
    }
    const double mg = sg / (double)D, mgx = sgx / (double)D;
    for (int64_t j = 0; j < D; j++) {
        dr[j] = bwd_t(dh ? dh[j] : 0.0, rs, gm[j], mg, xhat[j], mgx);
        dy[j] = gate_at(d, gate, i, j) * dr[j];
    }
    *info = (ref_bwd_row){mg, mgx, ag / (double)D, agx / (double)D};
}

lnmod_status ref_lnmod_res_backward(const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                                    const double *dout, const double *dh, double *dr, double *dy,
                                    double *dgate, double *dscale, double *dshift)
{
    if (!d || !in || !dout || !dr || !dy || !dscale || !dshift) return LNMOD_ERR_NULL_POINTER;
    if (d->gate == LNMOD_RES_GATE && !dgate) return LNMOD_ERR_NULL_POINTER;
    lnmod_res_fwd_in fin = *in;
    if (!fin.shift) fin.shift = fin.scale; /* the backward does not read shift */
    lnmod_status st = lnmod_res_check_fwd_in(d, &fin);
    if (st != LNMOD_OK) return st;
    const int64_t D = d->D, nn = lnmod_res_norm_rows(d), nm = lnmod_res_mod_rows(d);
    double *buf = alloc_d(4 * D);
    if (!buf) return LNMOD_ERR_ALLOC;
    double *hs = buf, *a = buf + D, *gm = buf + 2 * D, *xh = buf + 3 * D;
    memset(dscale, 0, (size_t)(nn * D) * sizeof *dscale);
    memset(dshift, 0, (size_t)(nn * D) * sizeof *dshift);
    if (d->gate == LNMOD_RES_GATE) memset(dgate, 0, (size_t)(nm * D) * sizeof *dgate);
    for (int64_t i = 0; i < d->rows; i++) {
        double mu, rs;
        fwd_h_row(d, i, &fin, NULL, hs, &mu, &rs);
        norm_row(d, i, fin.scale, NULL, a, NULL);
        const double *go = dout + i * D;
        for (int64_t j = 0; j < D; j++) {
            xh[j] = (hs[j] - mu) * rs;
            gm[j] = go[j] * a[j];
        }
        ref_bwd_row info;
        bwd_row_core(d, i, fin.gate, dh ? dh + i * D : NULL, rs, gm, xh, dr + i * D, dy + i * D, &info);
        double *sc = dscale + lnmod_res_norm_index(d, i) * D, *sh = dshift + lnmod_res_norm_index(d, i) * D;
        for (int64_t j = 0; j < D; j++) {
            sc[j] += go[j] * xh[j];
            sh[j] += go[j];
        }
        if (d->gate == LNMOD_RES_GATE) {
            double *dg = dgate + lnmod_res_mod_index(d, i) * D;
            for (int64_t j = 0; j < D; j++) dg[j] += dr[i * D + j] * ref_load(d->branch_dtype, fin.y, i * D + j);
        }
    }
    free(buf);
    return LNMOD_OK;
}

lnmod_status ref_lnmod_res_backward_row(const lnmod_res_desc *d, int64_t i, const lnmod_res_bwd_in *in,
                                        double *dr, double *dy, double *gm, double *xhat,
                                        ref_bwd_row *info)
{
    if (!dr || !dy || !gm || !xhat || !info) return LNMOD_ERR_NULL_POINTER;
    lnmod_status st = lnmod_res_check_bwd_in(d, in);
    if (st != LNMOD_OK) return st;
    if (i < 0 || i >= d->rows) return LNMOD_ERR_SHAPE;
    const int64_t D = d->D;
    const double mu = (double)in->mean[i], rs = (double)in->rstd[i];
    double *dh = NULL;
    if (in->dh) {
        if (!(dh = alloc_d(D))) return LNMOD_ERR_ALLOC;
        for (int64_t j = 0; j < D; j++) dh[j] = ref_load(d->res_dtype, in->dh, i * D + j);
    }
    norm_row(d, i, in->scale, NULL, gm, NULL); /* a, for now */
    for (int64_t j = 0; j < D; j++) {
        xhat[j] = (ref_load(d->res_dtype, in->h, i * D + j) - mu) * rs;
        gm[j] *= ref_load(d->out_dtype, in->dout, i * D + j);
    }
    bwd_row_core(d, i, in->gate, dh, rs, gm, xhat, dr, dy, info);
    free(dh);
    return LNMOD_OK;
}

/* The token rows [*i0, *i1) of modulation row k (one contiguous run in every layout). */
static void map_rows(const lnmod_res_desc *d, int64_t k, int64_t *i0, int64_t *i1)
{
    const lnmod_desc g = lnmod_res_map_desc(d);
    ref_mod_row_range(&g, k, i0, i1);
}

lnmod_status ref_lnmod_res_norm_colsums(const lnmod_res_desc *d, int64_t k, int64_t j0, int64_t j1,
                                        const lnmod_res_bwd_in *in, double *dscale, double *dshift,
                                        double *abs_dscale, double *abs_dshift)
{
    if (!dscale || !dshift) return LNMOD_ERR_NULL_POINTER;
    lnmod_status st = lnmod_res_check_bwd_in(d, in);
    if (st != LNMOD_OK) return st;
    if (k < 0 || k >= lnmod_res_norm_rows(d) || j0 < 0 || j1 < j0 || j1 > d->D) return LNMOD_ERR_SHAPE;
    int64_t i0 = 0, i1 = d->rows;
    if (d->norm == LNMOD_RES_MODULATE) map_rows(d, k, &i0, &i1);
    const int64_t D = d->D, n = j1 - j0;
    for (int64_t j = 0; j < n; j++) {
        dscale[j] = dshift[j] = 0.0;
        if (abs_dscale) abs_dscale[j] = 0.0;
        if (abs_dshift) abs_dshift[j] = 0.0;
    }
    for (int64_t i = i0; i < i1; i++) {
        const double mu = (double)in->mean[i], rs = (double)in->rstd[i];
        for (int64_t j = 0; j < n; j++) {
            const double go = ref_load(d->out_dtype, in->dout, i * D + j0 + j);
            const double term = go * ((ref_load(d->res_dtype, in->h, i * D + j0 + j) - mu) * rs);
            dscale[j] += term;
            dshift[j] += go;
            if (abs_dscale) abs_dscale[j] += fabs(term);
            if (abs_dshift) abs_dshift[j] += fabs(go);
        }
    }
    return LNMOD_OK;
}

lnmod_status ref_lnmod_res_gate_colsums(const lnmod_res_desc *d, int64_t k, int64_t j0, int64_t j1,
                                        const lnmod_res_bwd_in *in, const ref_bwd_row *rowinfo,
                                        double *dgate, double *abs_dgate)
{
    if (!rowinfo || !dgate) return LNMOD_ERR_NULL_POINTER;
    lnmod_status st = lnmod_res_check_bwd_in(d, in);
    if (st != LNMOD_OK) return st;
    if (d->gate != LNMOD_RES_GATE) return LNMOD_ERR_UNSUPPORTED;
    if (k < 0 || k >= lnmod_res_mod_rows(d) || j0 < 0 || j1 < j0 || j1 > d->D) return LNMOD_ERR_SHAPE;
    int64_t i0, i1;
    map_rows(d, k, &i0, &i1);
    const int64_t D = d->D, n = j1 - j0;
    for (int64_t j = 0; j < n; j++) {
        dgate[j] = 0.0;
        if (abs_dgate) abs_dgate[j] = 0.0;
    }
    for (int64_t i = i0; i < i1; i++) {
        const double mu = (double)in->mean[i], rs = (double)in->rstd[i];
        const int64_t kn = lnmod_res_norm_index(d, i);
        const int modulate = d->norm == LNMOD_RES_MODULATE;
        for (int64_t j = j0; j < j1; j++) {
            const double s = ref_load(d->mod_dtype, in->scale, (modulate ? kn * d->scale_stride : 0) + j);
            const double gm = ref_load(d->out_dtype, in->dout, i * D + j) * (modulate ? 1.0 + s : s);
            const double xh = (ref_load(d->res_dtype, in->h, i * D + j) - mu) * rs;
            const double dh = in->dh ? ref_load(d->res_dtype, in->dh, i * D + j) : 0.0;
            const double term = bwd_t(dh, rs, gm, rowinfo[i].mg, xh, rowinfo[i].mgx) *
                                ref_load(d->branch_dtype, in->y, i * D + j);
            dgate[j - j0] += term;
            if (abs_dgate) abs_dgate[j - j0] += fabs(term);
        }
    }
    return LNMOD_OK;
}
