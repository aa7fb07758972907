/* bench_variant.c -- built-in or plug-in variants for the GPU benchmarks (bench_variant.h). */
#include "build_info.h"

#if ADALOAD_HAVE_CUDA
#include "bench_variant.h"

#include "ada_plugin.h"
#include "lnmod.h"

int ada_bench_variant_exists(const char *name)
{
    return ada_plugin_is_name(name) ? ada_plugin_find(name) >= 0 : lnmod_find_variant(name) != NULL;
}

const char *ada_bench_variant_why(const char *name, const lnmod_desc *d, int bwd, size_t *ws)
{
    if (ada_plugin_is_name(name)) {
        int i = ada_plugin_find(name);
        if (i < 0) return "no such variant in this build";
        if (!ada_plugin_supports(i, d)) return "does not support this shape";
        if (!bwd) return NULL;
        if (!ada_plugin_has_backward(i)) return "has no backward";
        return ada_plugin_backward_workspace(i, d, ws) != LNMOD_OK ? "has no backward for this shape" : NULL;
    }
    const lnmod_variant *v = lnmod_find_variant(name);
    if (!v) return "no such variant in this build";
    if (v->supports && !v->supports(d)) return "does not support this shape";
    if (!bwd) return NULL;
#if ADALOAD_KERNEL_BACKWARD
    if (!v->backward) return "has no backward in this build";
    return lnmod_backward_workspace(v->name, d, ws) != LNMOD_OK ? "has no backward for this shape" : NULL;
#else
    return (void)ws, "has no backward in this build (kernels/pending/)";
#endif
}

int ada_bench_variant_forward(const char *name, const lnmod_desc *d, const void *x, const void *scale,
                              const void *shift, void *y, void *fwd_ws, cudaStream_t stream)
{
    if (ada_plugin_is_name(name))
        return ada_plugin_forward(ada_plugin_find(name), d, x, scale, shift, y, NULL, NULL, stream);
    return (int)lnmod_forward(name, d, x, scale, shift, y, NULL, NULL, fwd_ws, ADA_BENCH_FWD_WS, stream);
}

int ada_bench_variant_backward(const char *name, const lnmod_desc *d, const void *x, const void *scale,
                               const void *dy, const float *mean, const float *rstd, void *dx, void *dscale,
                               void *dshift, void *ws, size_t ws_bytes, cudaStream_t stream)
{
    if (ada_plugin_is_name(name))
        return ada_plugin_backward(ada_plugin_find(name), d, x, scale, dy, mean, rstd, dx, dscale, dshift, ws,
                                   ws_bytes, stream);
#if ADALOAD_KERNEL_BACKWARD
    return (int)lnmod_backward(name, d, x, scale, dy, mean, rstd, dx, dscale, dshift, ws, ws_bytes, stream);
#else
    (void)d, (void)x, (void)scale, (void)dy, (void)mean, (void)rstd, (void)dx, (void)dscale, (void)dshift;
    (void)ws, (void)ws_bytes, (void)stream;
    return LNMOD_ERR_UNSUPPORTED; /* not reached: ada_bench_variant_why skips the backward */
#endif
}
#else
typedef int ada_bench_variant_unused; /* an empty translation unit is not C11 */
#endif
