// lnmod_bwd_row_per_warp.cu -- variant "row_per_warp", backward.
//
// One warp per row (8 per block, grid-stride), 128-bit accesses when everything is aligned
// (scalar otherwise): the row sums a = sum g and b = sum g*xhat in one pass and a warp
// butterfly (no shared memory, no barrier), dx in a second pass over the row (mostly from
// L1/L2). Then bwd_col_kernel with 128-bit columns re-reads x and dy for the dscale/dshift
// sums of the fixed chunk plan, and the finalize adds the partials (lnmod_bwd_common.cuh).
// Bytes it moves: lnmod_bwd_reread_bytes. Against dtile: x and dy cross the memory bus
// twice (row pass, column pass) where dtile reads them once and keeps the column sums on
// chip; against naive: a warp per row instead of a block, vectors instead of scalars.
#include "lnmod_bwd_common.cuh"
#include "lnmod_variants.cuh"

using namespace lnmod_detail;

lnmod_status lnmod_bwd_row_per_warp_launch(const lnmod_desc *d, const void *x,
                                           const void *scale, const void *dy,
                                           const float *mean, const float *rstd, void *dx,
                                           void *dscale, void *dshift, void *workspace,
                                           size_t workspace_bytes, cudaStream_t stream)
{
    (void)workspace_bytes;
    const lnmod_bparams p =
        lnmod_make_bparams(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace);
    return lnmod_dispatch_dtypes(d, [&](auto tx, auto tm, auto ty) {
        return lnmod_bwd_reread_run<typename decltype(tx)::type, typename decltype(tm)::type,
                                    typename decltype(ty)::type>(p, stream);
    });
}

int64_t lnmod_bwd_row_per_warp_workspace(const lnmod_desc *d)
{
    int64_t glen, cpg, ng;
    return lnmod_bwd_plan(d, &glen, &cpg, &ng);
}

int64_t lnmod_bwd_row_per_warp_bytes(const lnmod_desc *d) { return lnmod_bwd_reread_bytes(d); }
