/* verify_model_bwd.c -- fp32 CPU models of the backward (verify_model.h): the correct one
 * and the planted bugs. Three phases, each spread over threads: (1) per row, xhat = (x -
 * mean)*rstd and g = dy*(1 + scale) in fp32, mg and mgx by pairwise sums, dx = rstd*(g - mg -
 * xhat*mgx) rounded once to x's dtype; (2) per chunk of VERIFY_MODEL_CHUNK rows of one
 * modulation row, fp32 partial sums of dy*xhat and dy into the workspace; (3) per modulation
 * row, the partials summed in chunk order, rounded once into dscale/dshift at their strides.
 * The chunking is a function of the descriptor only, so the result is bit-identical for any
 * thread count, which is what the GPU kernels promise too. */
#include <stdlib.h>
#include <string.h>

#include "ref_lnmod.h"
#include "verify_model.h"
#include "verify_model_internal.h"
#include "verify_par.h"

/* Chunks of modulation row k and the first chunk's global index (first may be NULL). */
static int64_t chunks_of(const lnmod_desc *d, int64_t k, int64_t *r0, int64_t *r1)
{
    ref_mod_row_range(d, k, r0, r1);
    return (*r1 - *r0 + VERIFY_MODEL_CHUNK - 1) / VERIFY_MODEL_CHUNK;
}

/* Index of modulation row k's first chunk: every modulation row of a layout has the same
 * row count except per-frame's last frame of each sample, so this is closed-form. */
static int64_t first_chunk(const lnmod_desc *d, int64_t k)
{
    int64_t a, b;
    if (d->layout != LNMOD_PER_FRAME) return k * chunks_of(d, 0, &a, &b);
    const int64_t F = lnmod_frames_per_sample(d), per_sample_chunks = (F - 1) * chunks_of(d, 0, &a, &b) +
                                                                      chunks_of(d, F - 1, &a, &b);
    return (k / F) * per_sample_chunks + (k % F) * chunks_of(d, 0, &a, &b);
}

static int64_t total_chunks(const lnmod_desc *d) { return first_chunk(d, lnmod_mod_rows(d)); }

int64_t verify_model_bwd_workspace(int which, const lnmod_desc *d)
{
    (void)which;
    return total_chunks(d) * d->D * 2 * (int64_t)sizeof(float) + 16;
}

typedef struct {
    int which;
    const lnmod_desc *d;
    const void *x, *scale, *dy;
    const float *mean, *rstd;
    void *dx, *dscale, *dshift;
    float *ps, *ph; /* partials: [chunk][D] each */
    int reverse;
} bwd_ctx;

static void dx_rows(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    const bwd_ctx *b = c;
    const lnmod_desc *d = b->d;
    const int64_t D = d->D;
    float *buf = malloc((size_t)(3 * D) * sizeof *buf);
    if (!buf) return;
    float *xh = buf, *g = buf + D, *gx = buf + 2 * D;
    for (int64_t r = lo; r < hi; r++) {
        const int64_t k = lnmod_mod_index(d, r);
        const float mu = b->mean[r], rs = b->rstd[r];
        for (int64_t j = 0; j < D; j++) {
            xh[j] = ((float)ref_load(d->x_dtype, b->x, r * D + j) - mu) * rs;
            const float a = 1.0f + (float)ref_load(d->mod_dtype, b->scale, k * d->scale_stride + j);
            g[j] = (float)ref_load(d->y_dtype, b->dy, r * D + j) * a;
            gx[j] = g[j] * xh[j];
        }
        const float mg = psum(g, D) / (float)D, mgx = psum(gx, D) / (float)D;
        for (int64_t j = 0; j < D; j++) ref_store(d->x_dtype, b->dx, r * D + j, (double)(rs * (g[j] - mg - xh[j] * mgx)));
    }
    free(buf);
}

/* Phase 2 over modulation rows [lo, hi): each of their chunks' partials. */
static void partial_rows(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    const bwd_ctx *b = c;
    const lnmod_desc *d = b->d;
    const int64_t D = d->D;
    for (int64_t k = lo; k < hi; k++) {
        int64_t r0, r1;
        const int64_t nc = chunks_of(d, k, &r0, &r1), c0 = first_chunk(d, k);
        if (b->which == M_BWD_DROP && r1 - r0 > 1) r1--;
        for (int64_t q = 0; q < nc; q++) {
            float *s = b->ps + (c0 + q) * D, *h = b->ph + (c0 + q) * D;
            memset(s, 0, (size_t)D * sizeof *s);
            memset(h, 0, (size_t)D * sizeof *h);
            const int64_t e = r0 + (q + 1) * VERIFY_MODEL_CHUNK < r1 ? r0 + (q + 1) * VERIFY_MODEL_CHUNK : r1;
            for (int64_t r = r0 + q * VERIFY_MODEL_CHUNK; r < e; r++) {
                const float mu = b->mean[r], rs = b->rstd[r];
                for (int64_t j = 0; j < D; j++) {
                    const float v = (float)ref_load(d->y_dtype, b->dy, r * D + j);
                    s[j] += v * (((float)ref_load(d->x_dtype, b->x, r * D + j) - mu) * rs);
                    h[j] += v;
                }
            }
        }
    }
}

/* Phase 3 over modulation rows [lo, hi). */
static void finalize_rows(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    const bwd_ctx *b = c;
    const lnmod_desc *d = b->d;
    const int64_t D = d->D;
    for (int64_t k = lo; k < hi; k++) {
        int64_t r0, r1;
        const int64_t nc = chunks_of(d, k, &r0, &r1), c0 = first_chunk(d, k);
        for (int64_t j = 0; j < D; j++) {
            float s = 0.0f, h = 0.0f;
            for (int64_t q = 0; q < nc; q++) {
                const int64_t qq = c0 + (b->reverse ? nc - 1 - q : q);
                s += b->ps[qq * D + j];
                h += b->ph[qq * D + j];
            }
            const int64_t is = k * d->scale_stride + j, ih = k * d->shift_stride + j;
            if (b->which == M_BWD_ACCUM) {
                s += (float)ref_load(d->mod_dtype, b->dscale, is);
                h += (float)ref_load(d->mod_dtype, b->dshift, ih);
            }
            ref_store(d->mod_dtype, b->dscale, is, (double)s);
            ref_store(d->mod_dtype, b->dshift, ih, (double)h);
        }
    }
}

void verify_model_backward(int which, const lnmod_desc *d, const void *x, const void *scale,
                           const void *dy, const float *mean, const float *rstd, void *dx,
                           void *dscale, void *dshift, void *ws, int threads)
{
    const int64_t nc = total_chunks(d), nmod = lnmod_mod_rows(d);
    bwd_ctx b = {which, d, x, scale, dy, mean, rstd, dx, dscale, dshift, (float *)ws, (float *)ws + nc * d->D, 0};
    if (which == M_BWD_WS) b.reverse = ((const unsigned char *)ws)[0] & 1;
    verify_parallel(d->rows, 6 * d->D, threads, dx_rows, &b);
    const int64_t per_mod = d->rows / nmod;
    verify_parallel(nmod, 3 * d->D * per_mod, threads, partial_rows, &b);
    verify_parallel(nmod, d->D * (nc / nmod + 1), threads, finalize_rows, &b);
    if (which == M_BWD_GAP) /* one element past each row: the gap, or the back guard band */
        for (int64_t k = 0; k < nmod; k++) {
            ref_store(d->mod_dtype, dscale, k * d->scale_stride + d->D, 0.0);
            ref_store(d->mod_dtype, dshift, k * d->shift_stride + d->D, 0.0);
        }
}
