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
 * strides -- see lnmod_desc_validate) return an error status and write nothing:
 *   LNMOD_ERR_NULL_POINTER  d or a required array is NULL (checked first)
 *   any lnmod_desc_validate status for a bad descriptor
 *   LNMOD_ERR_OVERFLOW      also when D exceeds what one cblas call takes (INT_MAX here)
 *   LNMOD_ERR_SHAPE         also for a bad row range of ref_lnmod_forward_rows
 *   LNMOD_ERR_ALLOC         the per-call scratch could not be allocated
 * Outputs must not overlap the inputs. Every entry point sets OpenBLAS to one thread.
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

/* The same for rows [r0, r1) only (0 <= r0 <= r1 <= rows, else LNMOD_ERR_SHAPE), with x, y,
 * mean, rstd still pointing at row 0 of the whole arrays: lets callers split the rows over
 * threads. Safe to call concurrently on disjoint ranges (no shared mutable state), and each
 * row's result is bit-identical however the rows are split. r0 == r1 writes nothing. */
lnmod_status ref_lnmod_forward_rows(const lnmod_desc *d, int64_t r0, int64_t r1, const void *x,
                                    const void *scale, const void *shift, double *y,
                                    double *mean, double *rstd);

/* The same rows without a y array: fn(arg, r, y_row, mean, rstd) is called for each row r
 * in order, with y_row the row's D doubles (valid during the call only; the values
 * ref_lnmod_forward_rows stores). A nonzero return from fn stops the visit (still LNMOD_OK).
 * For callers that judge a row at a time (the verifier), so no rows*D doubles are stored. */
typedef int (*ref_row_fn)(void *arg, int64_t r, const double *y_row, double mean, double rstd);
lnmod_status ref_lnmod_forward_visit(const lnmod_desc *d, int64_t r0, int64_t r1, const void *x,
                                     const void *scale, const void *shift, ref_row_fn fn, void *arg);

/* Backward of the forward above with respect to x, scale and shift, given dy [rows, D]
 * (double). dx: [rows, D]; dscale, dshift: [lnmod_mod_rows(d), D], contiguous (row k holds
 * the gradient of modulation row k). All outputs required. */
lnmod_status ref_lnmod_backward(const lnmod_desc *d, const void *x, const void *scale,
                                const double *dy, double *dx, double *dscale, double *dshift);

/* ---- the backward at given statistics (what the kernels compute) ----------------------
 * The kernels' backward (lnmod_backward, kernels/lnmod.h) takes the forward's fp32 mean and
 * rstd as inputs and defines xhat = (x - mean) * rstd from them; these functions compute
 * exactly that in double, from the storage dtypes (dy in d->y_dtype, x in d->x_dtype, scale
 * in d->mod_dtype at d->scale_stride), so a comparison measures the backward's own error and
 * not the rounding of the statistics. x, dy, mean and rstd point at row 0 of the whole
 * arrays. Safe to call concurrently (no shared mutable state). */

/* Per-row reductions of ref_lnmod_backward_row. */
typedef struct {
    double mg, mgx;       /* mean over the row of g and of g * xhat */
    double abs_g, abs_gx; /* mean over the row of |g| and of |g * xhat| */
} ref_bwd_row;

/* Row r (0 <= r < rows, else LNMOD_ERR_SHAPE): g[i] = dy*(1 + scale[m(r)]), xhat[i] =
 * (x - mean[r]) * rstd[r] and dx[i] = rstd[r] * (g - mg - xhat * mgx) for i in [0, D), into
 * caller arrays of D doubles each (indexed from the row's start); info gets the reductions. */
lnmod_status ref_lnmod_backward_row(const lnmod_desc *d, int64_t r, const void *x,
                                    const void *scale, const void *dy, const float *mean,
                                    const float *rstd, double *dx, double *g, double *xhat,
                                    ref_bwd_row *info);

/* The token rows [*r0, *r1) whose modulation row is k (0 <= k < lnmod_mod_rows(d)): in every
 * layout they are one contiguous run. */
void ref_mod_row_range(const lnmod_desc *d, int64_t k, int64_t *r0, int64_t *r1);

/* Columns [j0, j1) of modulation row k (0 <= j0 <= j1 <= D, else LNMOD_ERR_SHAPE):
 * dscale[j - j0] = sum over the rows of k of dy * xhat, dshift[j - j0] = sum of dy, and,
 * when not NULL, abs_dscale / abs_dshift the sums of the absolute values of the same terms
 * (the magnitude an fp32 accumulation's error scales with). Rows are summed in order. */
lnmod_status ref_lnmod_backward_colsums(const lnmod_desc *d, int64_t k, int64_t j0, int64_t j1,
                                        const void *x, const void *dy, const float *mean,
                                        const float *rstd, double *dscale, double *dshift,
                                        double *abs_dscale, double *abs_dshift);

/* Element i of an array stored in dtype t, widened exactly to double (NaN for a dtype that
 * is not one of the enum values). */
double ref_load(lnmod_dtype t, const void *base, int64_t i);
/* Stores v into element i of an array in dtype t, rounding to nearest even once, directly
 * from the double for every dtype (rounding to fp32 first and then to bf16/fp16 would round
 * twice). Writes nothing for an invalid dtype. */
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
/* Direct double -> fp32, round to nearest even, overflow to Inf (no C cast, whose result
 * for an out-of-range double is undefined in C11 without Annex F). */
float ref_f64_to_f32(double v);

/* Distance between adjacent representable values of dtype t at magnitude |v| (one ULP),
 * used by the verifier's tolerance table: 2^(e - mantissa bits) for |v| in [2^e, 2^(e+1)),
 * the subnormal spacing below the smallest normal, the top binade's spacing at and beyond
 * the largest finite value (Inf included). NaN for NaN v or an invalid dtype. */
double ref_ulp(lnmod_dtype t, double v);

#ifdef __cplusplus
}
#endif
#endif
