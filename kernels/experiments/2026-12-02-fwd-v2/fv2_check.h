/* fv2_check.h -- the harness's comparison of forward outputs against the float64 reference
 * (reference/ref_lnmod.h) with the verifier's tolerances (verify/verify_check.h: y by its
 * dtype, mean with 1e-5 of the row's spread, rstd 1e-5), over host threads. Host code only. */
#ifndef ADALOAD_FV2_CHECK_H
#define ADALOAD_FV2_CHECK_H

#include <stdint.h>

#include "lnmod_desc.h"

/* One kernel's outputs as the host read them back: y [rows*D] in the y dtype, mean and rstd
 * [rows] (NULL: not compared). */
typedef struct {
    const void *y;
    const float *mean, *rstd;
    int64_t fails;        /* out: elements past their tolerance (non-finite included) */
    double worst;         /* out: the largest error / tolerance */
    const char *worst_of; /* out: "y", "mean" or "rstd" */
} fv2_got;

/* Compares every element of n outputs with host threads. Returns 0, or -1 when the
 * reference refused (a bug of the harness). */
int fv2_check(const lnmod_desc *d, const void *x, const void *scale, const void *shift, fv2_got *got,
              int n, int threads);

#endif
