// lnmod_registry.cu -- the table of variants, lnmod_forward() and lnmod_backward(), the
// checked entry points (API in lnmod.h; the fused residual op's, lnmod_res.h, are in
// lnmod_res_registry.cu over the entries' res_* functions: naive's and dtile's).
//
// Registry order is naive, row_per_warp, dtile; names are keys of the benchmark history and
// never change. lnmod_forward checks everything on the host before any CUDA call: the
// descriptor (lnmod_desc_validate), NULL x/scale/shift/y, the variant name, supports();
// then it launches, and maps a launch failure to LNMOD_ERR_CUDA. mean/rstd may be NULL.
#include <stdint.h>
#include <string.h>

#include "lnmod.h"
#include "lnmod_res_variants.cuh"
#include "lnmod_variants.cuh"

extern "C" const lnmod_variant lnmod_variants[] = {
    {"naive",
     "one block per row, scalar loads, 3 passes over x in global memory, shared-memory trees",
     lnmod_fwd_naive_supports, lnmod_fwd_naive_launch, lnmod_fwd_naive_bytes, lnmod_fwd_naive_workspace,
     lnmod_bwd_naive_launch, lnmod_bwd_naive_workspace, lnmod_bwd_naive_bytes,
     lnmod_res_fwd_naive_launch, lnmod_res_bwd_naive_launch, lnmod_res_fwd_naive_workspace,
     lnmod_res_bwd_workspace,
     lnmod_res_fwd_naive_bytes, lnmod_res_bwd_naive_bytes},
    {"row_per_warp",
     "one warp per row, 8 rows per block, 128-bit loads when aligned, x re-read per pass, "
     "warp shuffles",
     lnmod_fwd_row_per_warp_supports, lnmod_fwd_row_per_warp_launch,
     lnmod_fwd_row_per_warp_bytes, lnmod_fwd_row_per_warp_workspace, lnmod_bwd_row_per_warp_launch,
     lnmod_bwd_row_per_warp_workspace, lnmod_bwd_row_per_warp_bytes, NULL, NULL, NULL, NULL,
     NULL, NULL},
    {"dtile",
     "D-tile fused: 128-bit tiles configured per D, dtype, alignment and device (forward v2; "
     "v1's exact-fit tiles at its six widths), rows staged ahead through a cp.async ring, "
     "pivot statistics, split barriers, modulation kept on chip, strided persistent grid",
     lnmod_fwd_dtile_supports, lnmod_fwd_dtile_launch, lnmod_fwd_dtile_bytes, lnmod_fwd_dtile_workspace,
     lnmod_bwd_dtile_launch, lnmod_bwd_dtile_workspace, lnmod_bwd_dtile_bytes,
     lnmod_res_fwd_dtile_launch, lnmod_res_bwd_dtile_launch, lnmod_res_fwd_dtile_workspace,
     lnmod_res_bwd_workspace,
     lnmod_res_fwd_dtile_bytes, lnmod_res_bwd_dtile_bytes},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

extern "C" const lnmod_variant *lnmod_find_variant(const char *name)
{
    if (!name) return NULL;
    for (const lnmod_variant *v = lnmod_variants; v->name; v++)
        if (!strcmp(v->name, name)) return v;
    return NULL;
}

extern "C" lnmod_status lnmod_forward_workspace(const char *variant, const lnmod_desc *d, size_t *bytes)
{
    if (!bytes) return LNMOD_ERR_NULL_POINTER;
    lnmod_status st = lnmod_desc_validate(d);
    if (st != LNMOD_OK) return st;
    const lnmod_variant *v = lnmod_find_variant(variant);
    if (!v) return LNMOD_ERR_UNKNOWN_VARIANT;
    if (!v->supports(d)) return LNMOD_ERR_UNSUPPORTED;
    *bytes = (size_t)v->fwd_workspace(d);
    return LNMOD_OK;
}

extern "C" lnmod_status lnmod_forward(const char *variant, const lnmod_desc *d, const void *x,
                                      const void *scale, const void *shift, void *y,
                                      float *mean, float *rstd, void *workspace, size_t workspace_bytes,
                                      cudaStream_t stream)
{
    lnmod_status st = lnmod_desc_validate(d);
    if (st != LNMOD_OK) return st;
    if (!x || !scale || !shift || !y) return LNMOD_ERR_NULL_POINTER;
    const lnmod_variant *v = lnmod_find_variant(variant);
    if (!v) return LNMOD_ERR_UNKNOWN_VARIANT;
    if (!v->supports(d)) return LNMOD_ERR_UNSUPPORTED;
    const int64_t need = v->fwd_workspace(d);
    if (need > 0) {
        if (!workspace) return LNMOD_ERR_NULL_POINTER;
        if ((uint64_t)workspace_bytes < (uint64_t)need || ((uintptr_t)workspace & 15u) != 0) return LNMOD_ERR_WORKSPACE;
    }
    return v->launch(d, x, scale, shift, y, mean, rstd, need > 0 ? workspace : NULL, stream);
}

// The backward's checks, shared by the workspace query and the launch.
static lnmod_status bwd_variant(const char *variant, const lnmod_desc *d,
                                const lnmod_variant **out)
{
    lnmod_status st = lnmod_desc_validate(d);
    if (st != LNMOD_OK) return st;
    const lnmod_variant *v = lnmod_find_variant(variant);
    if (!v) return LNMOD_ERR_UNKNOWN_VARIANT;
    if (!v->backward || !v->supports(d)) return LNMOD_ERR_UNSUPPORTED;
    *out = v;
    return LNMOD_OK;
}

extern "C" lnmod_status lnmod_backward_workspace(const char *variant, const lnmod_desc *d,
                                                 size_t *bytes)
{
    if (!bytes) return LNMOD_ERR_NULL_POINTER;
    const lnmod_variant *v = NULL;
    lnmod_status st = bwd_variant(variant, d, &v);
    if (st != LNMOD_OK) return st;
    const int64_t need = v->bwd_workspace(d);
    if (need < 0) return LNMOD_ERR_OVERFLOW;
    *bytes = (size_t)need;
    return LNMOD_OK;
}

extern "C" lnmod_status lnmod_backward(const char *variant, const lnmod_desc *d, const void *x,
                                       const void *scale, const void *dy, const float *mean,
                                       const float *rstd, void *dx, void *dscale, void *dshift,
                                       void *workspace, size_t workspace_bytes,
                                       cudaStream_t stream)
{
    const lnmod_variant *v = NULL;
    lnmod_status st = bwd_variant(variant, d, &v);
    if (st != LNMOD_OK) return st;
    if (!x || !scale || !dy || !mean || !rstd || !dx || !dscale || !dshift)
        return LNMOD_ERR_NULL_POINTER;
    const int64_t need = v->bwd_workspace(d);
    if (need < 0) return LNMOD_ERR_OVERFLOW;
    if (need > 0) {
        if (!workspace) return LNMOD_ERR_NULL_POINTER;
        if ((uint64_t)workspace_bytes < (uint64_t)need || ((uintptr_t)workspace & 15u) != 0)
            return LNMOD_ERR_WORKSPACE;
    }
    return v->backward(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace,
                       workspace_bytes, stream);
}
