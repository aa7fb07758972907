/* verify_check_res.h -- the comparison of the fused gated residual + LayerNorm-Modulate op's
 * outputs (lnmod_res_desc.h) with the float64 reference (reference/ref_lnmod_res.h), every
 * element, over host threads: the allowances "op": "lnmod_res" cases are judged by. Host
 * memory; no CUDA. Derived as verify_check.h's (the experiment kernels/experiments/
 * 2026-12-02-res checked the GPU kernels with the same rules, its res_check.cc):
 *
 *   h      r_res|h_exact| + a_res: one ULP of res_dtype relative to the exact r + g*y (fmaf's
 *          rounding plus the store's: at most 1 ULP even when they round twice)
 *   out    verify_tol_y(out_dtype) against LN of the STORED h the kernel wrote (the contract:
 *          out is the norm of the stored h; h itself is judged above); mean and rstd with
 *          verify_tol_mean (x the row's std) and verify_tol_rstd, of the same stored h
 *   t      (dL/dh, internal) the norm's part as verify's dx at fp32 output (verify_dx_coef_of)
 *          plus 2^-23(|t| + |dh| + |t - dh|) for the add of dh
 *   dr     allow_t (1 + r_res) + r_res|t| + a_res
 *   dy     |g| allow_t (1 + r_br) + (r_br + 2^-23)|g t| + a_br (one fp32 rounding of g*t)
 *   dscale, dshift   verify_colsum_allow(mod_dtype, n) over the n rows of the norm row
 *   dgate  verify_colsum_allow over sum|t y| plus (1 + r_mod) sum_i |y_i| allow_t,i: t's own
 *          error enters every term of the sum
 * r_X, a_X: verify_tol_round(X). A NaN or Inf output, or a non-finite reference, fails. */
#ifndef ADALOAD_VERIFY_CHECK_RES_H
#define ADALOAD_VERIFY_CHECK_RES_H

#include <stdint.h>

#include "lnmod_res_desc.h"

enum {
    VERIFY_RES_H,
    VERIFY_RES_OUT,
    VERIFY_RES_MEAN,
    VERIFY_RES_RSTD,
    VERIFY_RES_DR,
    VERIFY_RES_DY,
    VERIFY_RES_DGATE,
    VERIFY_RES_DSCALE,
    VERIFY_RES_DSHIFT,
    VERIFY_RES_NOUT
};

/* "h", "out", "mean", "rstd", "dr", "dy", "dgate", "dscale", "dshift". */
const char *verify_res_output_name(int which);

typedef struct {
    int64_t fails[VERIFY_RES_NOUT]; /* elements past their allowance (non-finite included) */
    double worst;                   /* the largest error / allowance over every output */
    int worst_of;                   /* its output (VERIFY_RES_*), -1 when nothing was compared */
} verify_res_verdict;

/* Elements that failed, over every output. */
int64_t verify_res_verdict_fails(const verify_res_verdict *v);
/* Bit k set when output k failed at least once. */
int verify_res_verdict_mask(const verify_res_verdict *v);

/* Forward: in (host, storage dtypes, gaps as allocated), got: h, out, mean, rstd as the
 * kernel wrote them (host; mean/rstd may be NULL: not compared). 0, or -1 when the reference
 * refused or host memory ran out (*v then partial). */
int verify_res_check_fwd(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *got,
                         int threads, verify_res_verdict *v);

/* Backward: in (host; mean and rstd the statistics the kernel was given), got: dr, dy and
 * dgate / dscale / dshift at the descriptor's strides ([D] under AFFINE). 0 or -1. */
int verify_res_check_bwd(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *got,
                         int threads, verify_res_verdict *v);

#endif
