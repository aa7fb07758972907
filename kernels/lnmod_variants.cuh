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
                                           float *mean, float *rstd, void *workspace,       \
                                           cudaStream_t stream);                            \
    int lnmod_fwd_##NAME##_supports(const lnmod_desc *d);                                   \
    int64_t lnmod_fwd_##NAME##_bytes(const lnmod_desc *d, int want_stats);                  \
    int64_t lnmod_fwd_##NAME##_workspace(const lnmod_desc *d);

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

// dtile backward's bulk path (lnmod_bwd_bulk.cu), which lnmod_bwd_dtile_launch tries first:
// whether it takes descriptor d (its row shape: threads a group, groups a CTA; alignment and
// the device are checked at launch), its workspace bytes (0 none or not taken, -1 overflow),
// its chunks (0 when not taken), and the launch (*ran 0: not taken here, run version 1).
int lnmod_bwd_bulk_takes(const lnmod_desc *d, int *threads, int *groups);
int64_t lnmod_bwd_bulk_workspace(const lnmod_desc *d);
int64_t lnmod_bwd_bulk_chunks(const lnmod_desc *d);
lnmod_status lnmod_bwd_bulk_launch(const lnmod_desc *d, const void *x, const void *scale, const void *dy,
                                   const float *mean, const float *rstd, void *dx, void *dscale, void *dshift,
                                   void *workspace, cudaStream_t stream, int *ran);

// dtile backward per token on the bulk ring (lnmod_bwd_bulk_tok.cu), which
// lnmod_bwd_dtile_launch tries first for a per-token descriptor: whether it takes d (its row
// shape; alignment and the device are checked at launch) and the launch (*ran 0: not taken
// here). No workspace: each row's dscale/dshift are written directly.
int lnmod_bwd_bulk_tok_takes(const lnmod_desc *d, int *threads, int *groups);
lnmod_status lnmod_bwd_bulk_tok_launch(const lnmod_desc *d, const void *x, const void *scale, const void *dy,
                                       const float *mean, const float *rstd, void *dx, void *dscale,
                                       void *dshift, cudaStream_t stream, int *ran);

#endif
