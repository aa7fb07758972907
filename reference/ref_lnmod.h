/* ref_lnmod.h -- the float64 CPU reference of LayerNorm-Modulate, forward and backward, and
 * exact host conversions between fp32 and bf16/fp16.
 *
 * Inputs are read in their storage dtype (as the kernels read them: x fp32/fp16/bf16,
 * scale/shift fp32 or x's dtype, per lnmod_desc), widened exactly to double, and every
 * result is computed and returned in double. Statistics are two-pass in double:
 * mean = sum(x)/D, then var = sum((x-mean)^2)/D (never E[x^2]-E[x]^2).
 * OpenBLAS is used where it is the natural tool (cblas_ddot for row sums, cblas_dgemv with a
 * ones vector for the column sums of the backward), always with one OpenBLAS thread.
 *
 *   double *y = malloc(rows*D*sizeof *y), *mean = ..., *rstd = ...;
 *   lnmod_status st = ref_lnmod_forward(&desc, x_host, scale_host, shift_host, y, mean, rstd);
 *
 * Bad arguments (NULL pointers, D = 0, rows = 0, eps <= 0, overlapping or overflowing
 * strides -- see lnmod_desc_validate) return an error status and write nothing.
 */
#ifndef ADALOAD_REF_LNMOD_H
#define ADALOAD_REF_LNMOD_H

#include <stdint.h>

#include "lnmod_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Forward. x: [rows, D] in desc->x_dtype; scale/shift: modulation rows in desc->mod_dtype at
 * desc->scale_stride / shift_stride. y: [rows, D] doubles (required). mean, rstd: [rows]
 * doubles, optional (NULL to skip). desc->y_dtype is ignored here: the reference result is
 * the exact double; callers round it if they want the y_dtype value. */
lnmod_status ref_lnmod_forward(const lnmod_desc *d, const void *x, const void *scale,
                               const void *shift, double *y, double *mean, double *rstd);

/* The same for rows [r0, r1) only (0 <= r0 <= r1 <= rows), with x, y, mean, rstd still
 * pointing at row 0 of the whole arrays: lets callers split the rows over threads. */
lnmod_status ref_lnmod_forward_rows(const lnmod_desc *d, int64_t r0, int64_t r1, const void *x,
                                    const void *scale, const void *shift, double *y,
                                    double *mean, double *rstd);

/* Backward of the forward above with respect to x, scale and shift, given dy [rows, D]
 * (double). dx: [rows, D]; dscale, dshift: [lnmod_mod_rows(d), D], contiguous (row k holds
 * the gradient of modulation row k). All outputs required. */
lnmod_status ref_lnmod_backward(const lnmod_desc *d, const void *x, const void *scale,
                                const double *dy, double *dx, double *dscale, double *dshift);

/* Element i of an array stored in dtype t, widened exactly to double. */
double ref_load(lnmod_dtype t, const void *base, int64_t i);
/* Stores v into element i of an array in dtype t, rounding to nearest even once
 * (double -> fp32 by the C cast, which rounds to nearest; then to bf16/fp16 from fp32
 * would round twice, so bf16/fp16 are rounded directly from the double). */
void ref_store(lnmod_dtype t, void *base, int64_t i, double v);

/* Exact conversions, round to nearest even; NaN stays NaN (quiet), Inf stays Inf,
 * subnormals are handled exactly. */
float ref_bf16_to_f32(uint16_t h);
uint16_t ref_f32_to_bf16(float f);
float ref_f16_to_f32(uint16_t h);
uint16_t ref_f32_to_f16(float f);
/* Direct double -> bf16/fp16 with a single rounding (no double rounding through fp32). */
uint16_t ref_f64_to_bf16(double v);
uint16_t ref_f64_to_f16(double v);

/* Distance between adjacent representable values of dtype t at magnitude |v| (one ULP),
 * used by the verifier's tolerance table. */
double ref_ulp(lnmod_dtype t, double v);

#ifdef __cplusplus
}
#endif
#endif
