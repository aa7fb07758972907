/* verify_res_gpu.c -- the GPU runner of verify_res.h: a kernel variant of lnmod_res.h on device
 * buffers. Every output sits between 256-byte guard bands; outputs, bands and the gaps of the
 * strided dgate/dscale/dshift rows are poisoned before each launch (0xFF, a NaN, the first
 * time; 0xA5, a finite number, the second; the backward's workspace 0xFF then 0x5A) and must
 * keep the poison; the two launches must give the same bytes. The forward's workspace (state:
 * lnmod_res.h) is zeroed once, before the first launch, and must be zero again after each --
 * the second launch runs on it as the first left it. The results of the first go back into the
 * caller's host outputs. The buffers stay in the runner's pool (verify_res_gpu_pool) from call
 * to call. Built with CUDA only (a stub without). */
#include "verify_res.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ada_cuda.h"

#if ADALOAD_HAVE_CUDA
#include "lnmod_res.h"

#define GUARD 256

typedef struct {
    unsigned char *base; /* GUARD + bytes + GUARD */
    size_t bytes;
    unsigned char *host[2]; /* the two launches' bytes, bands included */
} dbuf;

/* The pool's slots: one a buffer of the forward and the backward. */
enum { S_R, S_Y, S_E, S_H, S_O, S_MU, S_RSD, S_GO, S_DH, S_DR, S_DY, S_DE, S_WS, S_FWS };

static int cuda_err(cudaError_t e, const char *what, char *err, size_t errn)
{
    if (e == cudaSuccess) return 0;
    snprintf(err, errn, "CUDA: %s: %s", what, cudaGetErrorString(e));
    return -1;
}

/* b := the pool's slot for bytes (device exactly bytes + bands, host copies at least). */
static int dalloc(verify_res_gpu_pool *p, int slot, dbuf *b, size_t bytes, char *err, size_t errn)
{
    memset(b, 0, sizeof *b);
    b->bytes = bytes;
    b->host[0] = verify_host_get_xfer(p->bk, &p->host[slot][0], bytes + 2 * GUARD);
    b->host[1] = verify_host_get_xfer(p->bk, &p->host[slot][1], bytes + 2 * GUARD);
    if (!b->host[0] || !b->host[1]) return snprintf(err, errn, "out of host memory"), -1;
    b->base = verify_dev_get(p->bk, &p->dev[slot], bytes + 2 * GUARD);
    if (!b->base) return snprintf(err, errn, "CUDA: cudaMalloc of %zu bytes failed", bytes + 2 * GUARD), -1;
    return 0;
}

static void *dp(const dbuf *b) { return b->base ? b->base + GUARD : NULL; }

static int poison(dbuf *b, int v, char *err, size_t errn)
{
    return cuda_err(cudaMemset(b->base, v, b->bytes + 2 * GUARD), "cudaMemset", err, errn);
}

static int up(dbuf *b, const void *src, char *err, size_t errn)
{
    return cuda_err(cudaMemcpy(dp(b), src, b->bytes, cudaMemcpyHostToDevice), "upload", err, errn);
}

static int down(dbuf *b, int run, char *err, size_t errn)
{
    return cuda_err(cudaMemcpy(b->host[run], b->base, b->bytes + 2 * GUARD, cudaMemcpyDeviceToHost), "download", err,
                    errn);
}

/* Bytes of the two bands of launch `run` that lost the poison v. */
static int64_t bands_bad(const dbuf *b, int run, int v)
{
    int64_t bad = 0;
    for (size_t i = 0; i < GUARD; i++) bad += (b->host[run][i] != v) + (b->host[run][GUARD + b->bytes + i] != v);
    return bad;
}

/* 1 when the two launches' data bytes differ. */
static int differs(const dbuf *b) { return memcmp(b->host[0] + GUARD, b->host[1] + GUARD, b->bytes) != 0; }

static int sync_status(lnmod_status st, const char *what, char *err, size_t errn)
{
    if (st != LNMOD_OK) return snprintf(err, errn, "%s: %s", what, lnmod_strerror(st)), -1;
    return cuda_err(cudaDeviceSynchronize(), what, err, errn);
}

static int gpu_fwd(verify_res_runner *rn, const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                   const lnmod_res_fwd_out *out, char *err, size_t errn)
{
    const char *variant = rn->name; /* the kernel variant */
    const size_t n = (size_t)(d->rows * d->D), rows = (size_t)d->rows;
    const size_t rs = lnmod_dtype_size(d->res_dtype), bs = lnmod_dtype_size(d->branch_dtype);
    const size_t ms = lnmod_dtype_size(d->mod_dtype), os = lnmod_dtype_size(d->out_dtype);
    const int inplace = out->h == in->r;
    const char *m0 = rn->mod_in;
    verify_res_gpu_pool *pool = rn->arg;
    dbuf r = {0}, y = {0}, e = {0}, h = {0}, o = {0}, mu = {0}, rsd = {0}, fw = {0};
    size_t fwb = 0;
    int rc = -1;
    rn->guard_bad = rn->nondet = 0;
    if (lnmod_res_forward_workspace(variant, d, &fwb) != LNMOD_OK) {
        snprintf(err, errn, "lnmod_res_forward_workspace refused %s", variant);
        goto done;
    }
    if (fwb && (dalloc(pool, S_FWS, &fw, fwb, err, errn) || poison(&fw, 0xFF, err, errn) ||
                cuda_err(cudaMemset(dp(&fw), 0, fwb), "cudaMemset (forward workspace)", err, errn)))
        goto done;
    if ((!inplace && dalloc(pool, S_R, &r, n * rs, err, errn)) || dalloc(pool, S_Y, &y, n * bs, err, errn) ||
        dalloc(pool, S_E, &e, (size_t)rn->mod_elems * ms, err, errn) || dalloc(pool, S_H, &h, n * rs, err, errn) ||
        dalloc(pool, S_O, &o, n * os, err, errn) || dalloc(pool, S_MU, &mu, rows * 4, err, errn) ||
        dalloc(pool, S_RSD, &rsd, rows * 4, err, errn))
        goto done;
    dbuf *outs[4] = {&h, &o, &mu, &rsd};
    const int used[4] = {1, 1, out->mean != NULL, out->rstd != NULL};
    for (int run = 0; run < 2; run++) {
        const int pv = run ? 0xA5 : 0xFF;
        for (int k = 0; k < 4; k++)
            if (poison(outs[k], pv, err, errn)) goto done;
        if (up(inplace ? &h : &r, in->r, err, errn) || up(&y, in->y, err, errn) || up(&e, rn->mod_in, err, errn))
            goto done;
        char *ed = dp(&e);
        const lnmod_res_fwd_in din = {inplace ? dp(&h) : dp(&r), dp(&y),
                                      d->gate == LNMOD_RES_GATE ? ed + ((const char *)in->gate - m0) : NULL,
                                      ed + ((const char *)in->scale - m0), ed + ((const char *)in->shift - m0)};
        const lnmod_res_fwd_out dout = {dp(&h), dp(&o), out->mean ? dp(&mu) : NULL, out->rstd ? dp(&rsd) : NULL};
        if (sync_status(lnmod_res_forward(variant, d, &din, &dout, dp(&fw), fwb, 0), "lnmod_res_forward", err, errn))
            goto done;
        for (int k = 0; k < 4; k++) {
            if (down(outs[k], run, err, errn)) goto done;
            if (used[k]) rn->guard_bad += bands_bad(outs[k], run, pv);
        }
        if (fwb) {
            if (down(&fw, run, err, errn)) goto done;
            rn->guard_bad += bands_bad(&fw, run, 0xFF);
            for (size_t i = 0; i < fwb; i++)
                if (fw.host[run][GUARD + i] != 0) {
                    snprintf(err, errn, "launch %d left the forward workspace non-zero (byte %zu of %zu)", run + 1,
                             i, fwb);
                    goto done;
                }
        }
    }
    for (int k = 0; k < 4; k++)
        if (used[k]) rn->nondet += differs(outs[k]);
    memcpy(out->h, h.host[0] + GUARD, h.bytes);
    memcpy(out->out, o.host[0] + GUARD, o.bytes);
    if (out->mean) memcpy(out->mean, mu.host[0] + GUARD, mu.bytes);
    if (out->rstd) memcpy(out->rstd, rsd.host[0] + GUARD, rsd.bytes);
    rc = 0;
done:
    return rc;
}

/* 1 for the elements of the gradient buffer (mod_elems of mod_dtype, rows 6*D apart) the
 * backward writes: dshift at chunk 0, dscale at chunk 1 of each norm row (row 0 only under
 * AFFINE: [D] each), dgate at chunk 2 of each gate row; in the pool's mask; NULL out of memory. */
static unsigned char *written_mask(verify_res_gpu_pool *pool, const lnmod_res_desc *d, int64_t elems)
{
    const size_t n = (size_t)(elems > 0 ? elems : 1);
    unsigned char *w = verify_host_get(&pool->mask, n);
    if (!w) return NULL;
    memset(w, 0, n);
    const int64_t D = d->D, nn = lnmod_res_norm_rows(d), ng = d->gate == LNMOD_RES_GATE ? lnmod_res_mod_rows(d) : 0;
    for (int64_t k = 0; k < nn; k++) memset(w + k * 6 * D, 1, (size_t)(2 * D));
    for (int64_t k = 0; k < ng; k++) memset(w + k * 6 * D + 2 * D, 1, (size_t)D);
    return w;
}

/* Bytes of the gradient buffer's unwritten elements (mask 0) that lost the poison v. */
static int64_t gaps_bad(const dbuf *b, int run, const unsigned char *mask, size_t esize, int v)
{
    int64_t bad = 0;
    const unsigned char *h = b->host[run] + GUARD;
    for (size_t k = 0; k < b->bytes / esize; k++)
        if (!mask[k])
            for (size_t j = 0; j < esize; j++) bad += h[k * esize + j] != v;
    return bad;
}

static int gpu_bwd(verify_res_runner *rn, const lnmod_res_desc *d, const lnmod_res_bwd_in *in,
                   const lnmod_res_bwd_out *out, char *err, size_t errn)
{
    const char *variant = rn->name; /* the kernel variant */
    const size_t n = (size_t)(d->rows * d->D), rows = (size_t)d->rows;
    const size_t rs = lnmod_dtype_size(d->res_dtype), bs = lnmod_dtype_size(d->branch_dtype);
    const size_t ms = lnmod_dtype_size(d->mod_dtype), os = lnmod_dtype_size(d->out_dtype);
    const int inplace = in->dh && out->dr == in->dh, gate = d->gate == LNMOD_RES_GATE;
    const char *m0 = rn->mod_in, *g0 = rn->mod_out;
    dbuf h = {0}, y = {0}, e = {0}, go = {0}, dh = {0}, mu = {0}, rsd = {0}, dr = {0}, dy = {0}, de = {0}, ws = {0};
    verify_res_gpu_pool *pool = rn->arg;
    unsigned char *mask = written_mask(pool, d, rn->mod_elems);
    size_t wsb = 0;
    int rc = -1;
    rn->guard_bad = rn->nondet = 0;
    if (!mask) return snprintf(err, errn, "out of host memory"), -1;
    if (lnmod_res_backward_workspace(variant, d, &wsb) != LNMOD_OK) {
        snprintf(err, errn, "lnmod_res_backward_workspace refused %s", variant);
        goto done;
    }
    if (dalloc(pool, S_H, &h, n * rs, err, errn) || dalloc(pool, S_Y, &y, n * bs, err, errn) ||
        dalloc(pool, S_E, &e, (size_t)rn->mod_elems * ms, err, errn) || dalloc(pool, S_GO, &go, n * os, err, errn) ||
        (in->dh && !inplace && dalloc(pool, S_DH, &dh, n * rs, err, errn)) ||
        dalloc(pool, S_MU, &mu, rows * 4, err, errn) || dalloc(pool, S_RSD, &rsd, rows * 4, err, errn) ||
        dalloc(pool, S_DR, &dr, n * rs, err, errn) || dalloc(pool, S_DY, &dy, n * bs, err, errn) ||
        dalloc(pool, S_DE, &de, (size_t)rn->mod_elems * ms, err, errn) || (wsb && dalloc(pool, S_WS, &ws, wsb, err, errn)))
        goto done;
    for (int run = 0; run < 2; run++) {
        const int pv = run ? 0xA5 : 0xFF;
        if (poison(&dr, pv, err, errn) || poison(&dy, pv, err, errn) || poison(&de, pv, err, errn) ||
            (wsb && poison(&ws, run ? 0x5A : 0xFF, err, errn)))
            goto done;
        if (up(&h, in->h, err, errn) || (in->y && up(&y, in->y, err, errn)) || up(&e, rn->mod_in, err, errn) ||
            up(&go, in->dout, err, errn) || (in->dh && up(inplace ? &dr : &dh, in->dh, err, errn)) ||
            up(&mu, in->mean, err, errn) || up(&rsd, in->rstd, err, errn))
            goto done;
        char *ed = dp(&e), *gd = dp(&de);
        const lnmod_res_bwd_in din = {dp(&h), in->y ? dp(&y) : NULL, gate ? ed + ((const char *)in->gate - m0) : NULL,
                                      ed + ((const char *)in->scale - m0), dp(&go),
                                      in->dh ? (inplace ? dp(&dr) : dp(&dh)) : NULL, dp(&mu), dp(&rsd)};
        const lnmod_res_bwd_out dout = {dp(&dr), dp(&dy), gate ? gd + ((const char *)out->dgate - g0) : NULL,
                                        gd + ((const char *)out->dscale - g0), gd + ((const char *)out->dshift - g0)};
        if (sync_status(lnmod_res_backward(variant, d, &din, &dout, dp(&ws), wsb, 0), "lnmod_res_backward", err, errn))
            goto done;
        if (down(&dr, run, err, errn) || down(&dy, run, err, errn) || down(&de, run, err, errn)) goto done;
        rn->guard_bad += bands_bad(&dr, run, pv) + bands_bad(&dy, run, pv) + bands_bad(&de, run, pv) +
                         gaps_bad(&de, run, mask, ms, pv);
    }
    rn->nondet = differs(&dr) + differs(&dy); /* de: its written elements only (its gaps hold each run's poison) */
    for (size_t k = 0; k < de.bytes / ms; k++)
        if (mask[k] && memcmp(de.host[0] + GUARD + k * ms, de.host[1] + GUARD + k * ms, ms) != 0) {
            rn->nondet++;
            break;
        }
    memcpy(out->dr, dr.host[0] + GUARD, dr.bytes);
    memcpy(out->dy, dy.host[0] + GUARD, dy.bytes);
    memcpy(rn->mod_out, de.host[0] + GUARD, de.bytes);
    rc = 0;
done:
    return rc;
}

int verify_res_gpu_runner(const char *variant, verify_res_gpu_pool *pool, verify_res_runner *rn)
{
    if (!pool || !pool->bk) return -1;
    memset(rn, 0, sizeof *rn);
    rn->name = variant; /* must outlive the runner */
    rn->arg = pool;
    rn->forward = gpu_fwd;
    rn->backward = gpu_bwd;
    return 0;
}

#else

int verify_res_gpu_runner(const char *variant, verify_res_gpu_pool *pool, verify_res_runner *rn)
{
    (void)variant, (void)pool, (void)rn;
    return -1;
}

#endif

/* Both builds (the session frees its pool whether or not the runner ever ran). */
void verify_res_gpu_pool_free(verify_res_gpu_pool *p)
{
    if (!p || !p->bk) return;
    for (int k = 0; k < VERIFY_RES_GPU_NBUF; k++) {
        verify_dev_free(p->bk, &p->dev[k]);
        verify_host_free(&p->host[k][0]);
        verify_host_free(&p->host[k][1]);
    }
    verify_host_free(&p->mask);
}
