/* res_check.h -- resbench's comparison of the fused op's outputs against the float64
 * reference (reference/ref_lnmod_res.h), every element, over host threads. Host code only.
 *
 * Allowances (|got - ref| <= allowance; NaN/Inf fail), from verify/verify_check.h's rules:
 *   h      r_res*|h_exact| + a_res: one ULP of res_dtype relative to the exact r + g*y (one
 *          fp32 rounding of fmaf plus the rounding to res_dtype: at most 1 ULP even when the
 *          two round twice, kernels/pending/README.md)
 *   out    verify_tol_y(out_dtype) against LN of the KERNEL's stored h (the contract: out is
 *          the norm of the stored h; h itself is judged above), mean and rstd with
 *          verify_tol_mean (x the row's std) and verify_tol_rstd, of the same stored h
 *   t      the norm's part as verify's dx (verify_dx_coef_of with fp32 output: E(1 + 2^-23) +
 *          2^-23|norm part|) plus 2^-23(|t| + |dh|) for the add of dh (one fp32 rounding)
 *   dr     allow_t (1 + r_res) + r_res|t| + a_res
 *   dy     |g| allow_t (1 + r_br) + (r_br + 2^-23)|g t| + a_br (one fp32 rounding of g*t)
 *   dscale, dshift   verify_colsum_allow(mod_dtype, n, ...) over the n rows of the norm row
 *   dgate  verify_colsum_allow over sum|t y| plus (1 + r_mod) sum_i |y_i| allow_t,i: t's own
 *          error enters every term of the sum
 * r_X, a_X: verify_tol_round(X) (one ULP of the dtype relative, its subnormal step). */
#ifndef ADALOAD_RES_CHECK_H
#define ADALOAD_RES_CHECK_H

#include <stdint.h>

#include "lnmod_res_desc.h"

enum { RES_H, RES_OUT, RES_MEAN, RES_RSTD, RES_DR, RES_DY, RES_DGATE, RES_DSCALE, RES_DSHIFT, RES_NOUT };
extern const char *const res_out_name[RES_NOUT];

typedef struct {
    int64_t fails[RES_NOUT]; /* elements past their allowance (non-finite included) */
    double worst;            /* largest error / allowance over every output */
    int worst_of;            /* its output (RES_*), -1 when nothing was compared */
} res_verdict;

int64_t res_verdict_fails(const res_verdict *v);

/* Forward: in (host, storage dtypes, gaps as allocated), got: the kernel's h, out, mean, rstd
 * read back (host). Returns 0, or -1 when the reference refused or memory ran out. */
int res_check_fwd(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *got,
                  int threads, res_verdict *v);

/* Backward: in (host; mean/rstd the statistics the kernel was given), got: dr, dy, and dgate /
 * dscale / dshift at the descriptor's strides ([D] under AFFINE). Returns 0 or -1. */
int res_check_bwd(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *got,
                  int threads, res_verdict *v);

#endif
