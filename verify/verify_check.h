/* verify_check.h -- how `adaload verify` judges a kernel's output against the float64
 * reference: the tolerance table, the element pass condition, error statistics and the
 * guard-band check. Pure C (no CUDA); unit-tested by harness/test_verify.c.
 *
 * Pass condition of one element (NaN and Inf fail by construction, since every comparison
 * with NaN is false):   |got - ref| <= atol + rtol * |ref|
 *
 * Tolerance table (the record's "tolerances" object is built from it, verify_tol_json):
 *   y f32   rtol 1e-5   atol 1e-5   A correct kernel computes in fp32 with one final
 *                                   rounding; xhat = (x - mean) * rstd comes out within
 *                                   ~1e-6 relative (a few fp32 roundings plus the
 *                                   reductions' error, which grows with log D), so 1e-5
 *                                   leaves a 10x margin. atol covers the cancellation
 *                                   xhat*(1+scale) + shift ~ 0: the verifier's inputs keep
 *                                   those two terms below ~10 in magnitude wherever they can
 *                                   cancel (|xhat| <= ~4, |1+scale| <= ~2.7, |shift| <= ~3.5),
 *                                   so the fp32 error there stays below 1e-5.
 *   y bf16  rtol 2^-7   atol 1e-5   One bf16 ULP at |v| is between 2^-8|v| and 2^-7|v|, so
 *                                   2^-7|ref| allows 1 ULP of the exact value: 1/2 ULP for
 *                                   the final rounding plus the fp32 error that may push the
 *                                   value across a rounding boundary. atol: as for f32 (the
 *                                   fp32 error near y ~ 0, where 1 ULP would be ~0).
 *   y f16   rtol 2^-10  atol 1e-5   Same argument with 11 significand bits; atol also covers
 *                                   fp16 subnormals (spacing 2^-24 ~ 6e-8).
 *   mean    rtol 1e-5, plus 1e-5 x the row's standard deviation: an error in the mean
 *           matters relative to the spread (it shifts xhat by err/std), and a row of
 *           N(0,1) values has a mean near 0 that no fp32 sum can match relatively.
 *           Constant rows (std 0) must give the mean to 1e-5 relative.
 *   rstd    rtol 1e-5   (fp32 variance within ~1e-6 relative; rsqrtf within 2 ULP; the
 *           rstd of a constant row is 1/sqrt(eps), e.g. 1000 for eps = 1e-6)
 *
 * The backward (dx, dscale, dshift; derivation in README.md, "Correctness"): an fp32 error
 * bound from the magnitudes of the reference's own terms, in units of u = 2^-24, plus the
 * output dtype's rounding. With sigma(n) = min(n - 1, lambda*sqrt(n)), lambda = 10, the
 * error factor of an fp32 sum of n terms (n - 1: any order, worst case; lambda*sqrt(n):
 * Higham & Mary's probabilistic bound, failing with probability <= 2n exp(-lambda^2/2)):
 *   dx      E = rstd*u*(8(|g| + |mg| + |xhat*mgx|) + (sigma(D) + 4) A_g
 *                       + |xhat| (sigma(D) + 7) A_gx)
 *           (g = dy*(1+scale); mg, mgx the row means of g and g*xhat; A_g, A_gx the row
 *           means of |g| and |g*xhat|)
 *   dscale, dshift  E = u*(sigma(n) + 4) * sum|term| over the n rows of the modulation row
 *   allowance = E*(1 + r) + r*|ref| + a, r = 2^-23 (f32), 2^-10 (f16), 2^-7 (bf16): one ULP
 *   of the output dtype relative (twice the half ULP of the final rounding, as for y), a its
 *   subnormal step (one ULP below the normal range).
 *
 * Statistics per output: max |got-ref|, max |got-ref|/|ref| (over ref != 0),
 * ||got-ref||_2 / ||ref||_2, the worst element (largest error / allowance; > 1 fails), the
 * first few failing elements, the count of non-finite outputs and of failures.
 */
#ifndef ADALOAD_VERIFY_CHECK_H
#define ADALOAD_VERIFY_CHECK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lnmod_desc.h"

typedef struct {
    double atol;
    double rtol;
} verify_tol;

/* Tolerance of y for its dtype (table above). */
verify_tol verify_tol_y(lnmod_dtype y_dtype);
/* Tolerances of the fp32 statistics; mean's atol is multiplied by the row's std. */
verify_tol verify_tol_mean(void);
verify_tol verify_tol_rstd(void);
/* The table as a JSON object (for the record). */
json_t *verify_tol_json(void);

/* ---- the backward ---- */
#define VERIFY_BWD_LAMBDA 10.0
#define VERIFY_U 0x1p-24
/* sigma(n) above. */
double verify_sum_factor(int64_t n);
/* Relative rounding r and absolute a of an output in dtype t (table above). */
verify_tol verify_tol_round(lnmod_dtype t);
/* Row-level inputs of the dx allowance (from ref_lnmod_backward_row). */
typedef struct {
    double rstd, mg, mgx, abs_g, abs_gx;
    int64_t D;
    lnmod_dtype dtype; /* dx's (x's) dtype */
} verify_dx_row;
/* The allowance of one dx element of reference ref, with g and xhat at that element. */
double verify_dx_allow(const verify_dx_row *r, double ref, double g, double xhat);
/* The same, factored per row: allowance = c0 + c_g|g| + c_x|xhat| + r|ref| (what the
 * comparison loops use; verify_dx_allow is this). */
typedef struct {
    double c0, c_g, c_x, r;
} verify_dx_coef;
verify_dx_coef verify_dx_coef_of(const verify_dx_row *r);
static inline double verify_dx_allow_c(const verify_dx_coef *c, double ref, double g, double xhat)
{
    return c->c0 + c->c_g * fabs(g) + c->c_x * fabs(xhat) + c->r * fabs(ref);
}
/* The allowance of one dscale/dshift element: a sum of n terms with sum|term| = abs_sum. */
double verify_colsum_allow(lnmod_dtype mod_dtype, int64_t n, double ref, double abs_sum);
/* The same, factored per sum length: allowance = c_abs*abs_sum + r|ref| + a. */
typedef struct {
    double c_abs, r, a;
} verify_colsum_coef;
verify_colsum_coef verify_colsum_coef_of(lnmod_dtype mod_dtype, int64_t n);
static inline double verify_colsum_allow_c(const verify_colsum_coef *c, double ref, double abs_sum)
{
    return c->c_abs * abs_sum + c->r * fabs(ref) + c->a;
}

/* 1 when got passes against ref: |got - ref| <= atol + rtol*|ref| (0 for NaN/Inf got, or a
 * non-finite ref). */
int verify_elem_ok(double got, double ref, double atol, double rtol);

#define VERIFY_FIRST_FAILS 4

typedef struct {
    int64_t n;            /* elements compared */
    int64_t failed;       /* elements that fail the pass condition (non-finite included) */
    int64_t nonfinite;    /* NaN or Inf outputs */
    double max_abs;       /* max |got - ref| over finite outputs */
    double max_rel;       /* max |got - ref| / |ref| over finite outputs with ref != 0 */
    double worst_ratio;   /* max |got - ref| / (atol + rtol|ref|); +Inf for a non-finite */
    int64_t worst_index;  /* element of worst_ratio, -1 when n == 0 */
    double worst_got, worst_ref;
    double sum_sq_err;    /* over finite outputs */
    double sum_sq_ref;
    int nfirst;           /* first failing elements, by index */
    int64_t first_index[VERIFY_FIRST_FAILS];
    double first_got[VERIFY_FIRST_FAILS];
    double first_ref[VERIFY_FIRST_FAILS];
} verify_stats;

void verify_stats_init(verify_stats *s);
/* Adds element `index` (its position in the output array) to s. */
void verify_stats_add(verify_stats *s, int64_t index, double got, double ref, double atol,
                      double rtol);
/* Merges b into a (a and b may come from different threads, any order). */
void verify_stats_merge(verify_stats *a, const verify_stats *b);
/* ||got-ref|| / ||ref||; 0 when both are 0, +Inf when only the reference is 0. */
double verify_stats_l2_rel(const verify_stats *s);
/* 1 when every element passed and none is non-finite. */
int verify_stats_pass(const verify_stats *s);
/* {n, failed, nonfinite, max_abs, max_rel, l2_rel, worst_ratio, worst_index, worst_got,
 *  worst_ref, first_failures:[{index, got, ref}]}; non-finite numbers become null. */
json_t *verify_stats_json(const verify_stats *s);

/* Compares the n elements [i0, i0 + n) of y (stored in d->y_dtype, indexed from element 0)
 * against ref[0..n) (doubles: a row of the reference at a time, say) into s; indices in s
 * are y's. Equal to verify_stats_add on every element. */
void verify_compare_y_span(const lnmod_desc *d, int64_t i0, int64_t n, const void *got_y, const double *ref,
                           verify_stats *s);
/* Compares rows [r0, r1) of y (stored in d->y_dtype, indexed from row 0) against the
 * reference ref_y (doubles, indexed from row 0) into s. */
void verify_compare_y_rows(const lnmod_desc *d, int64_t r0, int64_t r1, const void *got_y,
                           const double *ref_y, verify_stats *s);
/* The same for the fp32 statistics of rows [r0, r1); ref_rstd also gives each row's std
 * for the mean's allowance (std = sqrt(max(0, 1/rstd^2 - eps))). */
void verify_compare_stats_rows(const lnmod_desc *d, int64_t r0, int64_t r1,
                               const float *got_mean, const float *got_rstd,
                               const double *ref_mean, const double *ref_rstd,
                               verify_stats *s_mean, verify_stats *s_rstd);

/* Guard bands: every byte of buf[0, n) must still hold VERIFY_POISON_BYTE. Returns 1 when
 * untouched, 0 otherwise (then *first_bad, when not NULL, is the first written byte). */
#define VERIFY_POISON_BYTE 0xFF
int verify_guard_ok(const void *buf, size_t n, size_t *first_bad);

#endif
