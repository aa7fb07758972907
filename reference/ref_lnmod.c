/* ref_lnmod.c -- the float64 CPU reference of LayerNorm-Modulate, forward and backward
 * (API and contract in ref_lnmod.h; the op in lnmod_desc.h).
 *
 * How it computes, per token row r (every quantity a double):
 *   1. the row of x is widened exactly from its storage dtype into a scratch row;
 *   2. mean = ddot(x, ones) / D; dev = x - mean; var = ddot(dev, dev) / D  (two passes: the
 *      one-pass E[x^2] - E[x]^2 cancels catastrophically for rows with a large mean);
 *   3. rstd = 1 / sqrt(var + eps); xhat = dev * rstd; y = xhat * (1 + scale) + shift.
 * The backward reuses steps 1-3 and forms g = dy * (1 + scale),
 *   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),
 * and accumulates dscale = sum dy * xhat, dshift = sum dy over the token rows of each
 * modulation row. In all three layouts the rows sharing a modulation row are one contiguous
 * run (m(r) never decreases), so the column sums are cblas_dgemv of a ones vector against
 * chunks of at most REF_CHUNK rows: dy itself for dshift, a scratch of dy * xhat for dscale.
 *
 * The backward at given statistics (ref_lnmod_backward_row / _colsums, the kernels' contract)
 * takes the forward's fp32 mean and rstd as they are, forms xhat = (x - mean) * rstd from
 * them, and sums in plain double loops (rows in order), one row or one column block at a
 * time, so callers can spread rows and modulation rows over threads and compare as they go.
 *
 * Built with -ffp-contract=off (reference/CMakeLists.txt): no fused multiply-adds change the
 * results between compilers. OpenBLAS runs with one thread (set in every entry point) because
 * callers split rows over their own threads. Scratch memory is malloc'd per call and freed:
 * no global state, so concurrent calls on disjoint row ranges are safe. Results do not
 * depend on how the rows are split: each row is computed alone, from the same inputs, with
 * scratch rows at the same (64-byte) alignment.
 */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ref_lnmod.h"

/* Token rows per dgemv in the backward column sums: big enough that the dgemv is not all
 * call overhead, small enough that the dy * xhat scratch stays in cache at D = 5120. */
#define REF_CHUNK 32

/* The largest length a cblas call can take in this OpenBLAS build (blasint is int unless
 * OpenBLAS was built with 64-bit integers). */
#define REF_BLAS_MAX ((int64_t)(sizeof(blasint) >= 8 ? INT64_MAX : INT_MAX))

/* 64-byte aligned array of n doubles, or NULL. The fixed alignment keeps the vectorised
 * OpenBLAS kernels on the same code path for every call, so a row gives the same bits
 * whichever call computes it. */
static double *alloc_doubles(int64_t n)
{
    if (n <= 0) n = 1;
    if ((uint64_t)n > (SIZE_MAX - 63) / sizeof(double)) return NULL;
    size_t bytes = ((size_t)n * sizeof(double) + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes);
}

/* out[0..n) = elements [off, off+n) of an array stored in dtype t, widened exactly. */
static void widen(lnmod_dtype t, const void *base, int64_t off, int64_t n, double *out)
{
    switch (t) {
    case LNMOD_F32: {
        const char *p = (const char *)base + (size_t)off * sizeof(float);
        for (int64_t i = 0; i < n; i++) {
            float f;
            memcpy(&f, p + (size_t)i * sizeof f, sizeof f);
            out[i] = (double)f;
        }
        break;
    }
    case LNMOD_F16:
    case LNMOD_BF16: {
        const char *p = (const char *)base + (size_t)off * sizeof(uint16_t);
        for (int64_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, p + (size_t)i * sizeof h, sizeof h);
            if (t == LNMOD_BF16) { /* bf16 is the top half of an fp32 (inline: the hot loop) */
                const uint32_t u = (uint32_t)h << 16;
                float f;
                memcpy(&f, &u, sizeof f);
                out[i] = (double)f;
            } else if (((h >> 10) & 0x1Fu) - 1u < 30u) { /* a normal fp16: rebias inline */
                const uint32_t u = ((uint32_t)(h & 0x8000u) << 16) | ((((h >> 10) & 0x1Fu) + 112u) << 23) |
                                   ((uint32_t)(h & 0x3FFu) << 13);
                float f;
                memcpy(&f, &u, sizeof f);
                out[i] = (double)f;
            } else {
                out[i] = (double)ref_f16_to_f32(h); /* zero, subnormal, Inf, NaN */
            }
        }
        break;
    }
    default: break; /* unreachable: the descriptor was validated */
    }
}

/* Validation shared by every entry point, after the NULL checks: the descriptor itself and
 * the one limit of this implementation (a row must fit one cblas call). */
static lnmod_status check_desc(const lnmod_desc *d)
{
    lnmod_status st = lnmod_desc_validate(d);
    if (st != LNMOD_OK) return st;
    if (d->D > REF_BLAS_MAX) return LNMOD_ERR_OVERFLOW;
    return LNMOD_OK;
}

/* Two-pass statistics of the widened row xr[0..D): leaves x - mean in dev and returns mean
 * and rstd. ones holds at least D ones. */
static void row_stats(const double *xr, const double *ones, double *dev, int64_t D, double eps,
                      double *mean_out, double *rstd_out)
{
    const blasint n = (blasint)D;
    const double mean = cblas_ddot(n, xr, 1, ones, 1) / (double)D;
    for (int64_t i = 0; i < D; i++) dev[i] = xr[i] - mean;
    const double var = cblas_ddot(n, dev, 1, dev, 1) / (double)D;
    *mean_out = mean;
    *rstd_out = 1.0 / sqrt(var + eps);
}

/* onep[0..D) = 1 + scale row k; sh[0..D) = shift row k (sh may be NULL). */
static void load_mod_row(const lnmod_desc *d, const void *scale, const void *shift, int64_t k,
                         double *onep, double *sh)
{
    widen(d->mod_dtype, scale, k * d->scale_stride, d->D, onep);
    for (int64_t i = 0; i < d->D; i++) onep[i] = 1.0 + onep[i];
    if (sh) widen(d->mod_dtype, shift, k * d->shift_stride, d->D, sh);
}

lnmod_status ref_lnmod_forward_visit(const lnmod_desc *d, int64_t r0, int64_t r1, const void *x,
                                     const void *scale, const void *shift, ref_row_fn fn, void *arg)
{
    if (!d || !x || !scale || !shift || !fn) return LNMOD_ERR_NULL_POINTER;
    lnmod_status st = check_desc(d);
    if (st != LNMOD_OK) return st;
    if (r0 < 0 || r1 < r0 || r1 > d->rows) return LNMOD_ERR_SHAPE;
    if (r0 == r1) return LNMOD_OK;

    const int64_t D = d->D;
    double *buf = alloc_doubles(6 * D);
    if (!buf) return LNMOD_ERR_ALLOC;
    double *ones = buf, *xr = buf + D, *dev = buf + 2 * D, *onep = buf + 3 * D,
           *sh = buf + 4 * D, *yr = buf + 5 * D;
    for (int64_t i = 0; i < D; i++) ones[i] = 1.0;
    openblas_set_num_threads(1);

    int64_t kcur = -1;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t k = lnmod_mod_index(d, r);
        if (k != kcur) { /* consecutive rows usually share it: widen it once */
            load_mod_row(d, scale, shift, k, onep, sh);
            kcur = k;
        }
        widen(d->x_dtype, x, r * D, D, xr);
        double mu, rs;
        row_stats(xr, ones, dev, D, d->eps, &mu, &rs);
        for (int64_t i = 0; i < D; i++) {
            const double xhat = dev[i] * rs;
            yr[i] = xhat * onep[i] + sh[i];
        }
        if (fn(arg, r, yr, mu, rs) != 0) break;
    }
    free(buf);
    return LNMOD_OK;
}

typedef struct {
    int64_t D;
    double *y, *mean, *rstd;
} store_rows;

static int store_row(void *arg, int64_t r, const double *yr, double mean, double rstd)
{
    const store_rows *o = arg;
    memcpy(o->y + r * o->D, yr, (size_t)o->D * sizeof *yr);
    if (o->mean) o->mean[r] = mean;
    if (o->rstd) o->rstd[r] = rstd;
    return 0;
}

lnmod_status ref_lnmod_forward_rows(const lnmod_desc *d, int64_t r0, int64_t r1, const void *x,
                                    const void *scale, const void *shift, double *y,
                                    double *mean, double *rstd)
{
    if (!d || !x || !scale || !shift || !y) return LNMOD_ERR_NULL_POINTER;
    store_rows o = {d->D, y, mean, rstd};
    return ref_lnmod_forward_visit(d, r0, r1, x, scale, shift, store_row, &o);
}

lnmod_status ref_lnmod_forward(const lnmod_desc *d, const void *x, const void *scale,
                               const void *shift, double *y, double *mean, double *rstd)
{
    if (!d) return LNMOD_ERR_NULL_POINTER;
    return ref_lnmod_forward_rows(d, 0, d->rows, x, scale, shift, y, mean, rstd);
}

lnmod_status ref_lnmod_backward(const lnmod_desc *d, const void *x, const void *scale,
                                const double *dy, double *dx, double *dscale, double *dshift)
{
    if (!d || !x || !scale || !dy || !dx || !dscale || !dshift) return LNMOD_ERR_NULL_POINTER;
    lnmod_status st = check_desc(d);
    if (st != LNMOD_OK) return st;

    const int64_t D = d->D, rows = d->rows;
    const int64_t nones = D > REF_CHUNK ? D : REF_CHUNK;
    /* ones | xr | xhat | onep | g | prod[REF_CHUNK][D] */
    double *buf = alloc_doubles(nones + 4 * D + REF_CHUNK * D);
    if (!buf) return LNMOD_ERR_ALLOC;
    double *ones = buf, *xr = ones + nones, *xhat = xr + D, *onep = xhat + D, *g = onep + D,
           *prod = g + D;
    for (int64_t i = 0; i < nones; i++) ones[i] = 1.0;
    openblas_set_num_threads(1);

    /* Every modulation row receives at least one token row, but zero them all anyway so the
     * accumulation below (beta = 1) starts from a defined value. The descriptor was
     * validated, so nmod * D fits in int64_t (it is at most the last row's end offset). */
    const int64_t nmod = lnmod_mod_rows(d);
    for (int64_t i = 0; i < nmod * D; i++) dscale[i] = dshift[i] = 0.0;

    int64_t r = 0;
    while (r < rows) {
        const int64_t k = lnmod_mod_index(d, r);
        load_mod_row(d, scale, NULL, k, onep, NULL);
        /* The run of rows with modulation row k, cut into chunks for the column sums. */
        int64_t run_end = r + 1;
        while (run_end < rows && lnmod_mod_index(d, run_end) == k) run_end++;
        while (r < run_end) {
            const int64_t c1 = (run_end - r < REF_CHUNK) ? run_end : r + REF_CHUNK;
            for (int64_t rr = r; rr < c1; rr++) {
                widen(d->x_dtype, x, rr * D, D, xr);
                double mu, rs;
                row_stats(xr, ones, xhat, D, d->eps, &mu, &rs);
                const double *dyr = dy + rr * D;
                double *pr = prod + (rr - r) * D;
                for (int64_t i = 0; i < D; i++) {
                    xhat[i] *= rs;
                    g[i] = dyr[i] * onep[i];
                    pr[i] = dyr[i] * xhat[i];
                }
                const double mg = cblas_ddot((blasint)D, g, 1, ones, 1) / (double)D;
                const double mgx = cblas_ddot((blasint)D, g, 1, xhat, 1) / (double)D;
                double *dxr = dx + rr * D;
                for (int64_t i = 0; i < D; i++) dxr[i] = rs * (g[i] - mg - xhat[i] * mgx);
            }
            const blasint m = (blasint)(c1 - r), n = (blasint)D;
            cblas_dgemv(CblasRowMajor, CblasTrans, m, n, 1.0, prod, n, ones, 1, 1.0,
                        dscale + k * D, 1);
            cblas_dgemv(CblasRowMajor, CblasTrans, m, n, 1.0, dy + r * D, n, ones, 1, 1.0,
                        dshift + k * D, 1);
            r = c1;
        }
    }
    free(buf);
    return LNMOD_OK;
}

/* ---- the backward at given statistics ------------------------------------------------------ */

lnmod_status ref_lnmod_backward_row(const lnmod_desc *d, int64_t r, const void *x,
                                    const void *scale, const void *dy, const float *mean,
                                    const float *rstd, double *dx, double *g, double *xhat,
                                    ref_bwd_row *info)
{
    if (!d || !x || !scale || !dy || !mean || !rstd || !dx || !g || !xhat || !info)
        return LNMOD_ERR_NULL_POINTER;
    lnmod_status st = check_desc(d);
    if (st != LNMOD_OK) return st;
    if (r < 0 || r >= d->rows) return LNMOD_ERR_SHAPE;
    const int64_t D = d->D, k = lnmod_mod_index(d, r);
    const double mu = (double)mean[r], rs = (double)rstd[r];
    widen(d->mod_dtype, scale, k * d->scale_stride, D, g);    /* scale, for now */
    widen(d->x_dtype, x, r * D, D, xhat);                    /* x, for now */
    widen(d->y_dtype, dy, r * D, D, dx);                     /* dy, for now */
    double sg = 0.0, sgx = 0.0, ag = 0.0, agx = 0.0;
    for (int64_t i = 0; i < D; i++) {
        xhat[i] = (xhat[i] - mu) * rs;
        g[i] = dx[i] * (1.0 + g[i]);
        const double gx = g[i] * xhat[i];
        sg += g[i];
        sgx += gx;
        ag += fabs(g[i]);
        agx += fabs(gx);
    }
    const double mg = sg / (double)D, mgx = sgx / (double)D;
    for (int64_t i = 0; i < D; i++) dx[i] = rs * (g[i] - mg - xhat[i] * mgx);
    *info = (ref_bwd_row){mg, mgx, ag / (double)D, agx / (double)D};
    return LNMOD_OK;
}

void ref_mod_row_range(const lnmod_desc *d, int64_t k, int64_t *r0, int64_t *r1)
{
    const int64_t S = d->rows_per_sample;
    switch (d->layout) {
    case LNMOD_PER_TOKEN: *r0 = k, *r1 = k + 1; break;
    case LNMOD_PER_FRAME: {
        const int64_t L = d->frame_len, F = lnmod_frames_per_sample(d), b = k / F, f = k % F;
        *r0 = b * S + f * L;
        *r1 = b * S + ((f + 1) * L < S ? (f + 1) * L : S);
        break;
    }
    case LNMOD_PER_SAMPLE:
    default: *r0 = k * S, *r1 = (k + 1) * S; break;
    }
}

/* Columns per widened block of the column sums (stays in L1 with x and dy). */
#define REF_COLS 512

lnmod_status ref_lnmod_backward_colsums(const lnmod_desc *d, int64_t k, int64_t j0, int64_t j1,
                                        const void *x, const void *dy, const float *mean,
                                        const float *rstd, double *dscale, double *dshift,
                                        double *abs_dscale, double *abs_dshift)
{
    if (!d || !x || !dy || !mean || !rstd || !dscale || !dshift) return LNMOD_ERR_NULL_POINTER;
    lnmod_status st = check_desc(d);
    if (st != LNMOD_OK) return st;
    if (k < 0 || k >= lnmod_mod_rows(d) || j0 < 0 || j1 < j0 || j1 > d->D) return LNMOD_ERR_SHAPE;
    int64_t r0, r1;
    ref_mod_row_range(d, k, &r0, &r1);
    double xr[REF_COLS], dr[REF_COLS];
    for (int64_t c0 = j0; c0 < j1; c0 += REF_COLS) {
        const int64_t n = j1 - c0 < REF_COLS ? j1 - c0 : REF_COLS;
        double *s = dscale + (c0 - j0), *h = dshift + (c0 - j0);
        double *as = abs_dscale ? abs_dscale + (c0 - j0) : NULL;
        double *ah = abs_dshift ? abs_dshift + (c0 - j0) : NULL;
        for (int64_t i = 0; i < n; i++) {
            s[i] = h[i] = 0.0;
            if (as) as[i] = 0.0;
            if (ah) ah[i] = 0.0;
        }
        for (int64_t r = r0; r < r1; r++) {
            widen(d->x_dtype, x, r * d->D + c0, n, xr);
            widen(d->y_dtype, dy, r * d->D + c0, n, dr);
            const double mu = (double)mean[r], rs = (double)rstd[r];
            if (as && ah) {
                for (int64_t i = 0; i < n; i++) {
                    const double t = dr[i] * ((xr[i] - mu) * rs);
                    s[i] += t;
                    h[i] += dr[i];
                    as[i] += fabs(t);
                    ah[i] += fabs(dr[i]);
                }
                continue;
            }
            for (int64_t i = 0; i < n; i++) {
                const double t = dr[i] * ((xr[i] - mu) * rs);
                s[i] += t;
                h[i] += dr[i];
            }
            if (as)
                for (int64_t i = 0; i < n; i++) as[i] += fabs(dr[i] * ((xr[i] - mu) * rs));
            if (ah)
                for (int64_t i = 0; i < n; i++) ah[i] += fabs(dr[i]);
        }
    }
    return LNMOD_OK;
}
