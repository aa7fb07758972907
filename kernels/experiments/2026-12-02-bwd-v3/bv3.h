/* bv3.h -- round 3 of dtile backward v2 (experiment, kernels/experiments/2026-12-02-bwd-v3):
 * the entry points the harness calls. Same contract as lnmod_backward("dtile", ...)
 * (kernels/lnmod.h), the same workspace (lnmod_backward_workspace("dtile")).
 *
 *   BV3_HALF    the production's bulk kernel with the combine buffer halved (dscale's sums,
 *               then dshift's); bits equal to the production's wherever both run;
 *   BV3_K2      two rows a step per warp group (one butterfly, barrier and exchange for
 *               both); bits equal to the production's;
 *   BV3_K2HALF  both;
 *   BV3_TOK     per token: x, dy and the scale row in each ring stage, whole rows per group,
 *               dscale/dshift rows written directly.
 * Shapes a candidate does not take (per token for the first three, per sample/frame for tok,
 * unaligned pointers, D not a multiple of the vector, the row shape of lnmod_bwd_bulk_plan.h,
 * dtype triples other than bf16-f32-bf16, bf16-bf16-f32, f16-f16-f16 and f32-f32-f32, a
 * ring that does not fit, a device below compute capability 9.0) run the built dtile and
 * say so in info->path. */
#ifndef ADALOAD_BV3_H
#define ADALOAD_BV3_H

#include <stddef.h>
#include <stdint.h>

#include "lnmod.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { BV3_DTILE = 0, BV3_HALF = 1, BV3_K2 = 2, BV3_K2HALF = 3, BV3_TOK = 4 };

typedef struct {
    int path;    /* 3: the candidate's kernel ran; 1: the built dtile ran instead */
    int threads; /* per group */
    int groups;  /* per CTA */
    int stages;  /* ring stages per group */
    int grid;    /* CTAs launched */
    int per_sm;  /* CTAs per SM (the occupancy API) */
    int smem;    /* dynamic shared memory per CTA, bytes */
    int64_t cpg; /* chunks per group (tok: 0) */
} bv3_info;

/* The backward by candidate `kernel` (BV3_DTILE: lnmod_backward("dtile") itself). Returns
 * lnmod_backward's statuses; LNMOD_ERR_UNSUPPORTED for an unknown kernel. info may be NULL. */
lnmod_status bv3_backward(int kernel, const lnmod_desc *d, const void *x, const void *scale, const void *dy,
                          const float *mean, const float *rstd, void *dx, void *dscale, void *dshift,
                          void *workspace, size_t workspace_bytes, cudaStream_t stream, bv3_info *info);

/* The candidates' own launches (bv3_bulk.cu compiled three times, bv3_tok.cu): *ran 0 when
 * the shape is not theirs (nothing launched). */
#define BV3_DECLARE(NAME)                                                                                        \
    lnmod_status NAME(const lnmod_desc *d, const void *x, const void *scale, const void *dy, const float *mean, \
                      const float *rstd, void *dx, void *dscale, void *dshift, void *workspace,                 \
                      cudaStream_t stream, bv3_info *info, int *ran);
BV3_DECLARE(bv3_bulk_h1k0)
BV3_DECLARE(bv3_bulk_h0k1)
BV3_DECLARE(bv3_bulk_h1k1)
BV3_DECLARE(bv3_tok_launch)

#ifdef __cplusplus
}
#endif
#endif
