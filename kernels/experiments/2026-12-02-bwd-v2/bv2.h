/* bv2.h -- dtile backward v2 (experiment, kernels/experiments/2026-12-02-bwd-v2): the entry
 * points the harness calls. Same contract as lnmod_backward("dtile", ...) (kernels/lnmod.h)
 * except the plan: bv2_workspace gives v2's workspace bytes, and the bits of dscale/dshift
 * depend on G (the warp groups per CTA) and the CTA's shape besides the descriptor.
 *
 * G = 1 is v1's CTA (one group of T threads per row) with v2's 32-bit walk and plan;
 * G = 2..8 put G groups of T threads in one CTA, each taking every G-th row of the chunk
 * (bv2_plan.h). Round 1's configurations (bv2.cu): G = 1..4, the shape rule of v1, a ring
 * filled by per-thread cp.async. Round 2's (bv2_r2.cu): at least min_vpt vectors a thread,
 * up to 960 threads a CTA, G = 6 and 8, and a ring filled by the bulk copy engine. Shapes the fused v2 path does not take (per token, unaligned pointers, D not
 * a multiple of the vector width, dtype triples other than bf16-f32-bf16, f32-f32-f32,
 * bf16-bf16-f32 and f16-f16-f16, a CTA or ring that does not fit) run v1's dtile instead and
 * say so in info->path. */
#ifndef ADALOAD_BV2_H
#define ADALOAD_BV2_H

#include <stddef.h>
#include <stdint.h>

#include "lnmod.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int path;     /* 2: v2's fused kernel ran; 1: v1's dtile ran instead */
    int threads;  /* per group */
    int vpt;      /* 16-byte vectors per thread */
    int stages;   /* ring stages per group */
    int grid;     /* CTAs launched */
    int64_t cpg;  /* chunks per group of v2's plan */
    int per_sm;   /* CTAs per SM (the occupancy API) */
    int smem;     /* dynamic shared memory per CTA, bytes */
} bv2_info;

/* One v2 configuration. Round 1's: bulk 0, min_vpt 1, cta_max 768. */
typedef struct {
    int G;       /* warp groups per CTA: 1..4 (round 1), 2..4, 6, 8 (round 2) */
    int target;  /* about this many chunks: BV2_TARGET_V1 (256) or BV2_TARGET_FINE (512) */
    int hold;    /* 1: G = 2 keeping the row's words in registers (round 1's g2h) */
    int bulk;    /* 1: the ring is filled by the bulk copy engine (bv2_dev.cuh) */
    int min_vpt; /* 16-byte vectors per thread at least: 1 (v1's rule) or 2 (16 bf16 elements) */
    int cta_max; /* threads per CTA at most: 768 (80 registers a thread) or 960 (64) */
    int no_fence; /* bulk: 1 = no fence.proxy.async before a copy reuses a stage (the group
                   * barrier alone orders the reads before it, as CUTLASS's pipelines do) */
    int fixed_t;  /* two vectors a thread: 1 = the group's thread count compiled in (96, 192,
                   * 320: bf16 D1536, D3072, D5120 exactly); other shapes run v1 */
} bv2_config;

/* Workspace bytes bv2_backward needs for d with either chunk target (and for v1, which the
 * fallback runs): 0 when none needs any, -1 when it overflows. */
int64_t bv2_workspace(const lnmod_desc *d);

/* G = BV2_G2_HOLD: two groups whose threads keep a row's 16-byte words in registers between
 * the two passes over it instead of reading the ring twice. */
enum { BV2_G2_HOLD = 12 };

/* The backward with G warp groups per CTA (1..4, or BV2_G2_HOLD) and about `target` chunks (256 or 512,
 * bv2_plan.h). Validates like lnmod_backward (it calls it for the fallback) and returns its
 * statuses; LNMOD_ERR_UNSUPPORTED for G outside 1..4 or another target.
 * info (may be NULL) says what ran. */
lnmod_status bv2_backward(int G, int target, const lnmod_desc *d, const void *x, const void *scale,
                          const void *dy, const float *mean, const float *rstd, void *dx,
                          void *dscale, void *dshift, void *workspace, size_t workspace_bytes,
                          cudaStream_t stream, bv2_info *info);

/* The same for any configuration (LNMOD_ERR_UNSUPPORTED for one outside the lists above).
 * What a configuration has no compiled kernel for (round 2: the dtype triples bf16-f32-bf16
 * and bf16-bf16-f32 only) runs v1 and says so in info->path. */
lnmod_status bv2_backward_cfg(const bv2_config *c, const lnmod_desc *d, const void *x, const void *scale,
                              const void *dy, const float *mean, const float *rstd, void *dx,
                              void *dscale, void *dshift, void *workspace, size_t workspace_bytes,
                              cudaStream_t stream, bv2_info *info);

#ifdef __cplusplus
}
#endif
#endif
