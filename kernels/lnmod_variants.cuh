// lnmod_variants.cuh -- the private entry points of each variant, one trio per kernel file
// (forward: launch, supports, bytes_moved; backward: launch, workspace, bytes_moved),
// gathered into the registry by lnmod_registry.cu. Launchers are called only after lnmod_forward has validated the
// descriptor and pointers; each returns LNMOD_OK or LNMOD_ERR_CUDA.
#ifndef ADALOAD_LNMOD_VARIANTS_CUH
#define ADALOAD_LNMOD_VARIANTS_CUH

#include "lnmod.h"

#define LNMOD_DECLARE_VARIANT(NAME)                                                         \
    lnmod_status lnmod_fwd_##NAME##_launch(const lnmod_desc *d, const void *x,              \
                                           const void *scale, const void *shift, void *y,   \
                                           float *mean, float *rstd, cudaStream_t stream);  \
    int lnmod_fwd_##NAME##_supports(const lnmod_desc *d);                                   \
    int64_t lnmod_fwd_##NAME##_bytes(const lnmod_desc *d, int want_stats);

LNMOD_DECLARE_VARIANT(naive)
LNMOD_DECLARE_VARIANT(row_per_warp)
LNMOD_DECLARE_VARIANT(dtile)

// The backward of each variant (launch, workspace bytes, bytes moved), one file each.
#define LNMOD_DECLARE_BACKWARD(NAME)                                                        \
    lnmod_status lnmod_bwd_##NAME##_launch(                                                  \
        const lnmod_desc *d, const void *x, const void *scale, const void *dy,               \
        const float *mean, const float *rstd, void *dx, void *dscale, void *dshift,          \
        void *workspace, size_t workspace_bytes, cudaStream_t stream);                       \
    int64_t lnmod_bwd_##NAME##_workspace(const lnmod_desc *d);                               \
    int64_t lnmod_bwd_##NAME##_bytes(const lnmod_desc *d);

LNMOD_DECLARE_BACKWARD(naive)
LNMOD_DECLARE_BACKWARD(row_per_warp)
LNMOD_DECLARE_BACKWARD(dtile)

#endif
