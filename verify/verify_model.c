/* verify_model.c -- fp32 CPU models of the LayerNorm-Modulate kernel, one right and four
 * deliberately wrong (see verify_model.h). The right one follows the kernels' contract:
 * rough fp32 mean m_hi, deviations d = x - m_hi, c = sum d, lo = c / D,
 * M2 = sum d^2 - c^2 / D, rstd = 1/sqrt(M2/D + eps), xhat = ((x - m_hi) - lo) * rstd,
 * y = fma(xhat, 1 + scale, shift) rounded once to y's dtype. Sums are pairwise over blocks of
 * 32, like the GPU's tree reductions, so their error grows with log D. model_pivot follows
 * dtile's specialized path instead (one-pass statistics around a per-part pivot, see
 * pivot_row). */
#include "verify_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_lnmod.h"

#include "verify_model_internal.h"

const verify_model_info verify_models[] = {
    {"model", "fp32 CPU model of the kernels' algorithm (must pass)"},
    {"model_onepass", "wrong: E[x^2]-E[x]^2 variance with a plain fp32 mean"},
    {"model_eps", "wrong: eps hard-coded to 1e-5"},
    {"model_oob", "wrong: writes one element past the end of y"},
    {"model_lazy", "wrong: leaves the last row of y unwritten"},
    {"model_pivot", "fp32 CPU model of dtile's one-pass pivot statistics (must pass)"},
    {"model_bwd_drop", "wrong backward: column sums skip the last row of each modulation row"},
    {"model_bwd_gap", "wrong backward: writes past each dscale/dshift row (gap between rows)"},
    {"model_bwd_accum", "wrong backward: adds into dscale/dshift instead of overwriting"},
    {"model_bwd_ws", "wrong backward: the finalize's order depends on the workspace's content"},
    {NULL, NULL},
};

int verify_model_find(const char *name)
{
    for (int i = 0; verify_models[i].name; i++)
        if (name && !strcmp(verify_models[i].name, name)) return i;
    return -1;
}

/* dtile's statistics (kernels/lnmod_fwd_dtile.cu, dtile_row) on one row xr[0..D): parts of
 * PIVOT_PART consecutive elements stand for the warps' shares. Each part pivots on the mean
 * of 32 of its elements (its first element when it has fewer than 32), sums d = x - pivot
 * and d^2 in one pass, and repeats the pass around pivot + c/n when the pivot was far from
 * the part's mean (c*lo > 0.888 q); the parts merge by Chan's formula around part 0's pivot.
 * Outputs y = fma(fma(d, rs, -L*rs), 1 + scale, shift) with L = (hi - pivot) + lo, and the
 * mean hi + lo and rstd. parts: scratch of 4 floats per part. */
enum { PIVOT_PART = 64 };

static void pivot_row(int64_t D, const float *xr, const float *g, const float *b, float eps,
                      float *parts, float *out, float *mean, float *rstd)
{
    const int64_t np = (D + PIVOT_PART - 1) / PIVOT_PART;
    float *hw = parts, *lw = parts + np, *m2w = parts + 2 * np, *nw = parts + 3 * np;
    for (int64_t w = 0; w < np; w++) {
        const float *x = xr + w * PIVOT_PART;
        const int64_t n = D - w * PIVOT_PART < PIVOT_PART ? D - w * PIVOT_PART : PIVOT_PART;
        float piv = x[0];
        if (n >= 32) {
            float smp[32];
            for (int j = 0; j < 32; j++) smp[j] = x[j * (n / 32)];
            piv = psum(smp, 32) * (1.0f / 32.0f);
        }
        float dv[PIVOT_PART], d2[PIVOT_PART];
        for (int64_t j = 0; j < n; j++) {
            dv[j] = x[j] - piv;
            d2[j] = dv[j] * dv[j];
        }
        float c = psum(dv, n), q = psum(d2, n), lo = c / (float)n;
        if (c * lo > 0.888f * q) {
            piv += lo;
            for (int64_t j = 0; j < n; j++) {
                dv[j] = x[j] - piv;
                d2[j] = dv[j] * dv[j];
            }
            c = psum(dv, n);
            q = psum(d2, n);
            lo = c / (float)n;
        }
        hw[w] = piv;
        lw[w] = lo;
        m2w[w] = fmaxf(fmaf(-c, lo, q), 0.0f);
        nw[w] = (float)n;
    }
    const float hi = hw[0];
    float acc = 0.0f;
    for (int64_t w = 0; w < np; w++) acc = fmaf(nw[w], (hw[w] - hi) + lw[w], acc);
    const float lo = acc / (float)D;
    float m2 = 0.0f;
    for (int64_t w = 0; w < np; w++) {
        const float e = ((hw[w] - hi) + lw[w]) - lo;
        m2 += m2w[w] + nw[w] * e * e;
    }
    const float var = fmaxf(m2 / (float)D, 0.0f);
    const float rs = 1.0f / sqrtf(var + eps);
    for (int64_t j = 0; j < D; j++) {
        const int64_t w = j / PIVOT_PART;
        const float nlr = -((hi - hw[w]) + lo) * rs;
        out[j] = fmaf(fmaf(xr[j] - hw[w], rs, nlr), g[j], b[j]);
    }
    *mean = hi + lo;
    *rstd = rs;
}

void verify_model_rows(int which, const lnmod_desc *d, int64_t r0, int64_t r1, const void *x,
                       const void *scale, const void *shift, void *y, float *mean, float *rstd)
{
    const int64_t D = d->D;
    const float eps = which == M_EPS ? 1e-5f : (float)d->eps;
    float xs[32], tmp[32]; /* one chunk of 32 elements at a time */
    if (which == M_PIVOT) {
        /* Row scratch: x, 1 + scale, shift, y as fp32, and 4 floats per part. Without memory
         * the rows stay unwritten (NaN-poisoned by the verifier: the case fails, loudly). */
        const int64_t np = (D + PIVOT_PART - 1) / PIVOT_PART;
        float *buf = malloc((size_t)(4 * D + 4 * np) * sizeof *buf);
        if (!buf) return;
        float *xr = buf, *g = buf + D, *b = buf + 2 * D, *out = buf + 3 * D, *parts = buf + 4 * D;
        for (int64_t r = r0; r < r1; r++) {
            const int64_t k = lnmod_mod_index(d, r);
            for (int64_t j = 0; j < D; j++) {
                xr[j] = (float)ref_load(d->x_dtype, x, r * D + j);
                g[j] = 1.0f + (float)ref_load(d->mod_dtype, scale, k * d->scale_stride + j);
                b[j] = (float)ref_load(d->mod_dtype, shift, k * d->shift_stride + j);
            }
            float mu, rs;
            pivot_row(D, xr, g, b, eps, parts, out, &mu, &rs);
            for (int64_t j = 0; j < D; j++) ref_store(d->y_dtype, y, r * D + j, (double)out[j]);
            if (mean) mean[r] = mu;
            if (rstd) rstd[r] = rs;
        }
        free(buf);
        return;
    }
    for (int64_t r = r0; r < r1; r++) {
        if (which == M_LAZY && r == d->rows - 1) continue;
        const int64_t base = r * D;
        /* Pass 1: rough mean (pairwise over chunks of 32 floats). */
        float m_hi, lo, var;
        {
            float acc[64];
            int na = 0;
            float total = 0.0f;
            for (int64_t j0 = 0; j0 < D; j0 += 32) {
                int64_t n = D - j0 < 32 ? D - j0 : 32;
                for (int64_t j = 0; j < n; j++) xs[j] = (float)ref_load(d->x_dtype, x, base + j0 + j);
                float s = psum(xs, n);
                acc[na++] = s;
                if (na == 64) {
                    total += psum(acc, na);
                    na = 0;
                }
            }
            total += psum(acc, na);
            m_hi = total / (float)D;
        }
        if (which == M_ONEPASS) {
            float acc2 = 0.0f;
            for (int64_t j = 0; j < D; j++) {
                float v = (float)ref_load(d->x_dtype, x, base + j);
                acc2 += v * v;
            }
            lo = 0.0f;
            var = acc2 / (float)D - m_hi * m_hi;
            if (var < 0.0f) var = 0.0f;
        } else {
            float c = 0.0f, s2 = 0.0f;
            float accc[64], accs[64];
            int na = 0;
            for (int64_t j0 = 0; j0 < D; j0 += 32) {
                int64_t n = D - j0 < 32 ? D - j0 : 32;
                for (int64_t j = 0; j < n; j++) {
                    float dv = (float)ref_load(d->x_dtype, x, base + j0 + j) - m_hi;
                    xs[j] = dv;
                    tmp[j] = dv * dv;
                }
                accc[na] = psum(xs, n);
                accs[na] = psum(tmp, n);
                if (++na == 64) {
                    c += psum(accc, na);
                    s2 += psum(accs, na);
                    na = 0;
                }
            }
            c += psum(accc, na);
            s2 += psum(accs, na);
            lo = c / (float)D;
            float M2 = s2 - c * lo;
            var = M2 > 0.0f ? M2 / (float)D : 0.0f;
        }
        float rs = 1.0f / sqrtf(var + eps);
        const int64_t k = lnmod_mod_index(d, r);
        for (int64_t j = 0; j < D; j++) {
            float xv = (float)ref_load(d->x_dtype, x, base + j);
            float xh = ((xv - m_hi) - lo) * rs;
            float a = 1.0f + (float)ref_load(d->mod_dtype, scale, k * d->scale_stride + j);
            float b = (float)ref_load(d->mod_dtype, shift, k * d->shift_stride + j);
            ref_store(d->y_dtype, y, base + j, (double)fmaf(xh, a, b));
        }
        if (mean) mean[r] = m_hi + lo;
        if (rstd) rstd[r] = rs;
        if (which == M_OOB && r == d->rows - 1) ref_store(d->y_dtype, y, base + D, 0.0);
    }
}
