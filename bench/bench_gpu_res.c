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
    if (!bwd) return v->res_forward ? NULL : "has no fused residual op";
    if (!v->res_backward) return "has no fused residual backward";
    return lnmod_res_backward_workspace(variant, d, ws) != LNMOD_OK ? "has no fused residual backward for this shape"
                                                                    : NULL;
}

void ada_res_offsets_make(const lnmod_res_desc *d, int bwd, size_t ws, ada_res_offsets *o)
{
    size_t elems = (size_t)(d->rows * d->D);
    size_t rb = align256(elems * lnmod_dtype_size(d->res_dtype));
    size_t yb = align256(elems * lnmod_dtype_size(d->branch_dtype));
    size_t ob = align256(elems * lnmod_dtype_size(d->out_dtype));
    size_t eb = align256((size_t)(lnmod_res_mod_rows(d) * d->gate_stride) * lnmod_dtype_size(d->mod_dtype));
    size_t sb = align256((size_t)(8 * d->rows));
    size_t at = 0;
    *o = (ada_res_offsets){0};
    o->r = at, at += rb;
    o->y = at, at += yb;
    o->e = at, at += eb;
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
        o->ws = at, at += align256(ws);
    }
    o->set_bytes = at;
}

int ada_res_launch(const char *variant, const lnmod_res_desc *d, int bwd, const ada_res_offsets *o, char *base,
                   size_t ws, cudaStream_t stream)
{
    const size_t chunk = (size_t)d->D * lnmod_dtype_size(d->mod_dtype);
    char *e = base + o->e, *de = base + o->de;
    float *mean = (float *)(base + o->stats), *rstd = mean + d->rows;
    if (!bwd) {
        lnmod_res_fwd_in in = {base + o->r, base + o->y, e + 5 * chunk, e + chunk, e};
        lnmod_res_fwd_out out = {base + o->h, base + o->out, mean, rstd};
        return (int)lnmod_res_forward(variant, d, &in, &out, stream);
    }
    lnmod_res_bwd_in in = {base + o->r, base + o->y, e + 5 * chunk, e + chunk, base + o->dout, base + o->dh,
                           mean, rstd};
    lnmod_res_bwd_out out = {base + o->dr, base + o->dy, de + 5 * chunk, de + chunk, de};
    return (int)lnmod_res_backward(variant, d, &in, &out, ws ? base + o->ws : NULL, ws, stream);
}
#else
typedef int ada_bench_gpu_res_unused; /* an empty translation unit is not C11 */
#endif
