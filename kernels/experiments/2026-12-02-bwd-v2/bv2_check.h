/* bv2_check.h -- the harness's comparison of backward outputs against the float64 reference
 * at the kernels' own fp32 statistics (reference/ref_lnmod.h), with the verifier's backward
 * allowances (verify/verify_check.h), over host threads. Host code only. */
#ifndef ADALOAD_BV2_CHECK_H
#define ADALOAD_BV2_CHECK_H

#include <stdint.h>

#include "lnmod_desc.h"

/* One kernel's outputs as the host read them back: dx [rows*D] in x's dtype, dscale/dshift
 * at the descriptor's strides in the modulation dtype (element 0 = modulation row 0). */
typedef struct {
    const void *dx, *dscale, *dshift;
    int64_t fails;       /* out: elements past their allowance (non-finite included) */
    double worst;        /* out: the largest error / allowance */
    const char *worst_of; /* out: "dx", "dscale" or "dshift" */
} bv2_got;

/* Compares every element of n outputs. x, scale, dy: the inputs (host, storage dtypes);
 * mean, rstd: the statistics the kernels used. threads: host threads. Returns 0, or -1 when
 * the reference refused (a bug of the harness). */
int bv2_check(const lnmod_desc *d, const void *x, const void *scale, const void *dy,
              const float *mean, const float *rstd, bv2_got *got, int n, int threads);

#endif
