/* fv2.h -- the forward v2 harness's host API: y = LN(x)*(1 + scale) + shift with the same
 * semantics and descriptor as lnmod_forward (kernels/lnmod.h), planned by the built rule
 * (kernels/lnmod_fwd_v2_plan.h) and run on the built kernels (kernels/lnmod_fwd_v2_kern.cuh,
 * _odd.cuh, _chunk.cuh), instantiated here by fv2_inst.cu and fv2_odd3_inst.cu with the
 * harness's caches and alternatives. */
#ifndef ADALOAD_FV2_H
#define ADALOAD_FV2_H

#include <cuda_runtime_api.h>

#include "lnmod_fwd_v2_plan.h"
#include "lnmod.h"

/* The configurations the harness times: the rule's, and two changes of it. */
enum {
    FV2_ALT_RULE = 0, /* fv2_make_plan as is */
    FV2_ALT_SHAPE = 1, /* tile, a warp a row: half the VPT on two warps (the lag path);
                          the lag path on one CTA: the same plan with the mbarrier (round 3);
                          other several-warp REG plans: 40 elements a thread (VPT 5 for 16-bit
                          x, 8 for fp32), up to 8 warps a CTA, then clusters (round 2); odd:
                          twice the warps (up to 16) */
    FV2_ALT_DEEP = 2,  /* the lag path on one CTA (REG or RING, any layout): the same plan
                          behind one barrier a row (round 3; the rule's own form now); other
                          several-warp REG plans dtile leaves to version 1 (8 warps, clusters)
                          and the odd class: the odd kernel with the modulation in registers
                          (fv2_odd2.cuh, round 4; up to 5 windows a thread); other
                          per-sample plans: the rule's shape with two more ring slots (where
                          they fit); per token / per frame (tile): the other modulation mode
                          (REG <-> RING) */
    FV2_ALT_ODD3 = 3   /* round 5's comparison, the other way since the flat chunk kernel
                          became the rule's first class (kernels/lnmod_fwd_v2_chunk.cuh): where
                          the rule picks the chunk class, the rule without it
                          (fv2_tile_odd_plan: the tile plan at aligned widths, the odd one
                          elsewhere -- the rule before the landing); else the rule
                          (same_as_rule) */
};


typedef struct {
    fv2_plan plan;   /* what ran (after the alternative and the real register count) */
    int grid;        /* CTAs */
    int regs;        /* registers a thread (cudaFuncGetAttributes) */
    int local_bytes; /* local memory a thread (spills): 0 expected */
    int fallback;    /* 1: no plan fitted or pointers not element-aligned: v1's dtile ran */
    int same_as_rule; /* 1: the alternative asked for is the rule's configuration */
} fv2_info;

/* The current device's facts (cudaDeviceGetAttribute). 0, or -1 on a CUDA error. */
int fv2_read_dev(fv2_dev *d);

/* Validates like lnmod_forward, plans (alt: FV2_ALT_*), launches on stream; info may be NULL. */
lnmod_status fv2_forward(int alt, const lnmod_desc *d, const void *x, const void *scale,
                         const void *shift, void *y, float *mean, float *rstd, cudaStream_t stream,
                         fv2_info *info);

#endif
