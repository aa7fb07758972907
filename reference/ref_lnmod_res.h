/* ref_lnmod_res.h -- the float64 CPU reference of the fused gated residual + LayerNorm-Modulate
 * op (issue 22), forward and backward. The op, its dtypes and the descriptor's rules are
 * lnmod_res_desc.h's (kernels/); this file only says how the reference computes.
 *
 * Inputs are read in their storage dtypes and widened exactly to double; every result is a
 * double. h = r + g*y is formed in double (exact but for one double rounding), returned as
 * that exact value, and rounded once to res_dtype before it is normalized (the contract: out
 * is LN of the stored h). Statistics of a row are two-pass in double, in order.
 *
 *   lnmod_res_fwd_in in = {r, y, gate, scale, shift};
 *   lnmod_status st = ref_lnmod_res_forward(&d, &in, h, out, mean, rstd);
 *
 * Errors, and then nothing is written: LNMOD_ERR_NULL_POINTER (a required input or output;
 * first), the statuses of lnmod_res_desc_validate, LNMOD_ERR_SHAPE (a row, column or
 * modulation row out of range), LNMOD_ERR_UNSUPPORTED (gate column sums without a gate),
 * LNMOD_ERR_ALLOC (scratch). No global state: calls on disjoint ranges may run concurrently,
 * and a row's result does not depend on how rows are split. Outputs must not overlap inputs.
 */
#ifndef ADALOAD_REF_LNMOD_RES_H
#define ADALOAD_REF_LNMOD_RES_H

#include <stdint.h>

#include "lnmod_res_desc.h"
#include "ref_lnmod.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Forward of rows [i0, i1) (0 <= i0 <= i1 <= rows): h and out [rows, D] doubles (required),
 * mean and rstd [rows] doubles (optional, NULL to skip; the statistics of the stored h), all
 * indexed from row 0 of the whole arrays. */
lnmod_status ref_lnmod_res_forward_rows(const lnmod_res_desc *d, int64_t i0, int64_t i1,
                                        const lnmod_res_fwd_in *in, double *h, double *out,
                                        double *mean, double *rstd);
lnmod_status ref_lnmod_res_forward(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, double *h,
                                   double *out, double *mean, double *rstd);

/* The exact gradient of L = sum dout*out + sum dh*h (dh NULL: zero), float64 throughout, the
 * statistics recomputed in double from the stored h. in: the forward's inputs (shift unused).
 * dout, dh: [rows, D] doubles. Outputs: dr, dy [rows, D]; dgate [mod_rows, D] (required with a
 * gate, ignored without); dscale, dshift [norm_rows, D] -- all contiguous doubles. Column sums
 * run over the rows in order. */
lnmod_status ref_lnmod_res_backward(const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                                    const double *dout, const double *dh, double *dr, double *dy,
                                    double *dgate, double *dscale, double *dshift);

/* ---- the backward at given statistics (what the kernels compute) ---------------------------
 * xhat = (h - mean) * rstd with the forward's fp32 mean and rstd as given, from the stored h
 * (in->h); every input in its storage dtype (lnmod_res_bwd_in). */

/* Row i: dr[j] = t, dy[j] = g * t (t without a gate), gm[j] = dout * (1 + scale) (or * weight)
 * and xhat[j], for j in [0, D), into caller arrays of D doubles each; info gets the row means
 * of gm and gm*xhat and of their absolute values (ref_bwd_row). */
lnmod_status ref_lnmod_res_backward_row(const lnmod_res_desc *d, int64_t i, const lnmod_res_bwd_in *in,
                                        double *dr, double *dy, double *gm, double *xhat,
                                        ref_bwd_row *info);

/* Columns [j0, j1) of norm row k (0 <= k < lnmod_res_norm_rows(d)): dscale = sum of dout*xhat
 * and dshift = sum of dout over the token rows of k (all rows under AFFINE); abs_dscale and
 * abs_dshift (optional) the sums of the terms' absolute values. Indexed from column j0. */
lnmod_status ref_lnmod_res_norm_colsums(const lnmod_res_desc *d, int64_t k, int64_t j0, int64_t j1,
                                        const lnmod_res_bwd_in *in, double *dscale, double *dshift,
                                        double *abs_dscale, double *abs_dshift);

/* Columns [j0, j1) of gate row k (0 <= k < lnmod_res_mod_rows(d)): dgate = sum of t*y over
 * the token rows of k, t formed as ref_lnmod_res_backward_row does from rowinfo[i] (that
 * function's info for every token row i of k, indexed from row 0); abs_dgate (optional) the
 * sum of |t*y|. LNMOD_ERR_UNSUPPORTED without a gate. */
lnmod_status ref_lnmod_res_gate_colsums(const lnmod_res_desc *d, int64_t k, int64_t j0, int64_t j1,
                                        const lnmod_res_bwd_in *in, const ref_bwd_row *rowinfo,
                                        double *dgate, double *abs_dgate);

/* v rounded once to dtype t and widened back (the stored value of v); NaN for a bad dtype. */
double ref_round_to(lnmod_dtype t, double v);

#ifdef __cplusplus
}
#endif
#endif
