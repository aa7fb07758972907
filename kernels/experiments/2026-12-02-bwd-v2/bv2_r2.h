/* bv2_r2.h -- round 2's configurations of dtile backward v2 (experiment; bv2_r2.cu), called by
 * bv2_backward_cfg after it validated the descriptor, the pointers and the workspace. Sets
 * *ran when a v2 kernel ran; leaves it false (and returns LNMOD_OK) when the configuration
 * does not take the shape, so that the caller runs v1. Internal to the experiment. */
#ifndef ADALOAD_BV2_R2_H
#define ADALOAD_BV2_R2_H

#include "bv2.h"

lnmod_status bv2_r2_backward(const bv2_config *c, const lnmod_desc *d, const void *x, const void *scale,
                             const void *dy, const float *mean, const float *rstd, void *dx, void *dscale,
                             void *dshift, void *workspace, cudaStream_t stream, bv2_info *info, bool *ran);

#endif
