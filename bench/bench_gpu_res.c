/* bench_gpu_res.c -- the fused gated residual op's sizing and launches for the GPU
 * benchmarks (bench_gpu_res.h). */
#include "build_info.h"

#if ADALOAD_HAVE_CUDA
#include "bench_gpu_res.h"

#include "ada_plugin.h"
#include "lnmod.h"
#include "lnmod_res.h"

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

const char *ada_res_variant_why(const char *variant, const lnmod_res_desc *d, int bwd, size_t *ws)
{
    if (ada_plugin_is_name(variant)) return "has no fused residual op (plug-ins have none)";
    const lnmod_variant *v = lnmod_find_variant(variant);
    if (!v) return "no such variant in this build";
    if (lnmod_res_desc_validate(d) != LNMOD_OK) return "does not support this shape";
    if (!bwd) {
        if (!v->res_forward) return "has no fused residual op";
        if (lnmod_res_forward_workspace(variant, d, ws) != LNMOD_OK) return "has no fused residual forward for this shape";
        return *ws > ADA_RES_FWD_WS ? "needs a larger forward workspace than the bench keeps" : NULL;
    }
    if (!v->res_backward) return "has no fused residual backward";
    return lnmod_res_backward_workspace(variant, d, ws) != LNMOD_OK ? "has no fused residual backward for this shape"
                                                                    : NULL;
}

/* The chunks of the site (bench_gpu_res.h): offsets of gate, scale, shift inside the table
 * region tab (or the weight region wb under AFFINE), and of their gradients in dtab / dwb. */
static void site_chunks(const lnmod_res_desc *d, ada_res_offsets *o, size_t tab, size_t wb, size_t dtab, size_t dwb)
{
    const size_t chunk = (size_t)d->D * lnmod_dtype_size(d->mod_dtype);
    const int affine = d->norm == LNMOD_RES_AFFINE;
    o->has_gate = d->gate == LNMOD_RES_GATE;
    /* The gate: e[2] at site 1 (AFFINE), e[5] at site 3. */
    o->gate = tab + (affine ? 2 : 5) * chunk;
    o->dgate = dtab + (affine ? 2 : 5) * chunk;
    if (affine) { /* norm3's weight and bias, [D] each */
        o->scale = wb, o->shift = wb + chunk;
        o->dscale = dwb, o->dshift = dwb + chunk;
    } else { /* site 2: e[4], e[3]; site 3: e'[1], e'[0] */
        const size_t sc = o->has_gate ? 1 : 4, sf = o->has_gate ? 0 : 3;
        o->scale = tab + sc * chunk, o->shift = tab + sf * chunk;
        o->dscale = dtab + sc * chunk, o->dshift = dtab + sf * chunk;
    }
}

void ada_res_offsets_make(const lnmod_res_desc *d, int bwd, size_t ws, ada_res_offsets *o)
{
    size_t elems = (size_t)(d->rows * d->D);
    size_t rb = align256(elems * lnmod_dtype_size(d->res_dtype));
    size_t yb = align256(elems * lnmod_dtype_size(d->branch_dtype));
    size_t ob = align256(elems * lnmod_dtype_size(d->out_dtype));
    size_t eb = align256((size_t)(lnmod_res_mod_rows(d) * 6 * d->D) * lnmod_dtype_size(d->mod_dtype));
    size_t wbb = d->norm == LNMOD_RES_AFFINE ? align256((size_t)(2 * d->D) * lnmod_dtype_size(d->mod_dtype)) : 0;
    size_t sb = align256((size_t)(8 * d->rows));
    size_t at = 0;
    *o = (ada_res_offsets){0};
    o->r = at, at += rb;
    o->y = at, at += yb;
    o->e = at, at += eb;
    o->wb = at, at += wbb;
    o->stats = at, at += sb;
    if (!bwd) {
        o->h = at, at += rb;
        o->out = at, at += ob;
    } else {
        o->dout = at, at += ob;
        o->dh = at, at += rb;
        o->dr = at, at += rb;
        o->dy = at, at += yb;
        o->de = at, at += eb;
        o->dwb = at, at += wbb;
        o->ws = at, at += align256(ws);
    }
    site_chunks(d, o, o->e, o->wb, o->de, o->dwb);
    o->set_bytes = at;
}

int ada_res_launch(const char *variant, const lnmod_res_desc *d, int bwd, const ada_res_offsets *o, char *base,
                   size_t ws, void *fwd_ws, cudaStream_t stream)
{
    float *mean = (float *)(base + o->stats), *rstd = mean + d->rows;
    const void *gate = o->has_gate ? base + o->gate : NULL;
    if (!bwd) {
        lnmod_res_fwd_in in = {base + o->r, base + o->y, gate, base + o->scale, base + o->shift};
        lnmod_res_fwd_out out = {base + o->h, base + o->out, mean, rstd};
        return (int)lnmod_res_forward(variant, d, &in, &out, ws ? fwd_ws : NULL, ws, stream);
    }
    lnmod_res_bwd_in in = {base + o->r, base + o->y, gate, base + o->scale, base + o->dout, base + o->dh, mean, rstd};
    lnmod_res_bwd_out out = {base + o->dr, base + o->dy, o->has_gate ? base + o->dgate : NULL, base + o->dscale,
                             base + o->dshift};
    return (int)lnmod_res_backward(variant, d, &in, &out, ws ? base + o->ws : NULL, ws, stream);
}
#else
typedef int ada_bench_gpu_res_unused; /* an empty translation unit is not C11 */
#endif
