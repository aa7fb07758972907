/* lnmod_res_desc.h -- the descriptor of the fused gated residual + LayerNorm-Modulate op
 * (issue 22), its validation, its input pointers' rules and its minimal byte counts. Pure
 * C11, no CUDA. The one owner of these rules: the float64 reference (reference/
 * ref_lnmod_res.h), the CPU models (verify/verify_model_res.h) and the
 * kernels (lnmod_res.h) all call lnmod_res_desc_validate and lnmod_res_check_*_in.
 *
 * The op, for each token row i of [rows, D] (Wan 2.1's three residual sites,
 * kernels/lnmod_res_design.md):
 *   h[i,:]   = r[i,:] + g[m(i),:] * y[i,:]      (g = 1 when gate == LNMOD_RES_GATE_NONE)
 *   hs       = h rounded once to res_dtype      (what is stored, and what is normalized)
 *   mean_i, rstd_i = the biased two-pass statistics of hs[i,:], rstd = 1/sqrt(var + eps)
 *   xhat     = (hs - mean_i) * rstd_i
 *   out[i,:] = xhat * (1 + scale[m(i),:]) + shift[m(i),:]   (LNMOD_RES_MODULATE)
 *   out[i,:] = xhat * weight[:] + bias[:]                   (LNMOD_RES_AFFINE: scale = weight,
 *                                                             shift = bias, one row of D each)
 * m(i) is lnmod_desc's map (lnmod_desc.h) of `layout`, rows_per_sample and frame_len; the gate
 * row k starts at k * gate_stride, scale/shift rows at k * scale_stride / shift_stride
 * (MODULATE only; under AFFINE, weight and bias are contiguous [D] and their strides ignored).
 * out is LN of the STORED h: the fused op gives what the unfused chain (x = x + g*y in
 * res_dtype, then the norm of x) gives, and the backward's saved h is what was normalized.
 *
 * Backward, given d_out = dL/dout (out_dtype) and dh = dL/dh from h's other uses (res_dtype,
 * optional: NULL is zero), with gm = d_out * (1 + scale) (MODULATE) or d_out * weight (AFFINE),
 * mg and mgx the row means of gm and gm * xhat:
 *   t[i,:]       = dh + rstd_i * (gm - mg_i - xhat * mgx_i)   (dL/dh in total)
 *   dr           = t                (res_dtype)
 *   dy           = g[m(i)] * t      (branch_dtype; t itself without a gate)
 *   dgate[k,:]   = sum over i with m(i) = k of t * y          (mod_dtype, at gate_stride)
 *   dscale[k,:]  = sum over the rows of norm row k of d_out * xhat,  dshift[k,:] = sum of d_out
 * where the norm rows are the modulation rows under MODULATE and one row (all token rows:
 * dweight, dbias) under AFFINE. mean and rstd are the forward's fp32 statistics, taken as given.
 *
 * Dtypes: branch_dtype (y) any of fp32/fp16/bf16; res_dtype (r, h, dh, dr), mod_dtype (gate,
 * scale, shift and their gradients) and out_dtype (out, d_out) each fp32 or branch_dtype. Wan:
 * res fp32, branch bf16, mod fp32, out bf16.
 *
 *   lnmod_res_desc d = lnmod_res_desc_default();   // eps 1e-6, res fp32, branch/out bf16, mod fp32
 *   d.rows = 32760; d.D = 5120; d.rows_per_sample = 32760;
 *   d.gate_stride = d.scale_stride = d.shift_stride = 6 * 5120;   // chunk views of e [B,6,D]
 *   lnmod_status st = lnmod_res_desc_validate(&d);
 */
#ifndef ADALOAD_LNMOD_RES_DESC_H
#define ADALOAD_LNMOD_RES_DESC_H

#include <stdint.h>

#include "lnmod_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    LNMOD_RES_GATE_NONE = 0, /* h = r + y (Wan's x = x + cross_attn(...)) */
    LNMOD_RES_GATE = 1,      /* h = r + g[m(i)] * y (Wan's x = x + y * e[2], x + y * e[5]) */
    LNMOD_RES_GATE_COUNT
} lnmod_res_gate;

typedef enum {
    LNMOD_RES_MODULATE = 0, /* out = LN(h) * (1 + scale[m(i)]) + shift[m(i)] (norm1, norm2) */
    LNMOD_RES_AFFINE = 1,   /* out = LN(h) * weight + bias, [D] each (Wan's norm3) */
    LNMOD_RES_NORM_COUNT
} lnmod_res_norm;

typedef struct {
    int64_t rows;            /* token rows: B * S */
    int64_t D;               /* hidden size */
    int64_t rows_per_sample; /* S (per-sample and per-frame maps) */
    int64_t frame_len;       /* L (per-frame map) */
    lnmod_layout layout;     /* the map m(i) of the gate and, under MODULATE, of scale/shift */
    lnmod_res_gate gate;
    lnmod_res_norm norm;
    lnmod_dtype res_dtype;    /* r, h, dh, dr */
    lnmod_dtype branch_dtype; /* y, dy */
    lnmod_dtype mod_dtype;    /* gate, scale, shift (weight, bias) and their gradients */
    lnmod_dtype out_dtype;    /* out, d_out */
    int64_t gate_stride;      /* elements between gate rows k and k+1 */
    int64_t scale_stride;     /* the same for scale (MODULATE) */
    int64_t shift_stride;     /* the same for shift (MODULATE) */
    double eps;
} lnmod_res_desc;

/* eps 1e-6, res fp32, branch and out bf16, mod fp32, per-sample gate, MODULATE; sizes 0. */
lnmod_res_desc lnmod_res_desc_default(void);

/* Checks every field; touches nothing but *d. LNMOD_OK or the first error:
 *   LNMOD_ERR_NULL_POINTER  d is NULL
 *   LNMOD_ERR_LAYOUT        layout, gate or norm is not one of its enum values
 *   LNMOD_ERR_DTYPE         a dtype is not one of the enum values
 *   LNMOD_ERR_DTYPE_COMBO   res, mod or out dtype is neither fp32 nor branch_dtype
 *   and lnmod_desc_validate's statuses (ZERO_DIM, EPS, SHAPE, STRIDE, OVERFLOW) for the
 *   geometry: rows, D, eps always; rows_per_sample, frame_len and the map's strides only where
 *   the map is used (a gate, or MODULATE) -- the same rules as lnmod_desc, from its one owner.
 *   Under AFFINE without a gate the layout fields are not looked at. */
lnmod_status lnmod_res_desc_validate(const lnmod_res_desc *d);

/* Modulation rows of the map (B, rows or B*F, as lnmod_mod_rows); for a valid d. */
int64_t lnmod_res_mod_rows(const lnmod_res_desc *d);
/* Rows of scale/shift and of dscale/dshift: lnmod_res_mod_rows under MODULATE, 1 under AFFINE. */
int64_t lnmod_res_norm_rows(const lnmod_res_desc *d);
/* m(i) of token row i (0 <= i < rows); for a valid d. */
int64_t lnmod_res_mod_index(const lnmod_res_desc *d, int64_t i);
/* The row of scale/shift that token row i uses: m(i) under MODULATE, 0 under AFFINE. */
int64_t lnmod_res_norm_index(const lnmod_res_desc *d, int64_t i);
/* The map alone as an lnmod_desc (rows, D, layout, S, L, eps; fp32 dtypes, strides = D), for
 * lnmod_mod_index and ref_mod_row_range; for a valid d. */
lnmod_desc lnmod_res_map_desc(const lnmod_res_desc *d);

/* The forward's inputs (host or device pointers, laid out as the descriptor says). */
typedef struct {
    const void *r;     /* [rows, D] res_dtype */
    const void *y;     /* [rows, D] branch_dtype */
    const void *gate;  /* gate rows at gate_stride, mod_dtype; ignored without a gate */
    const void *scale; /* MODULATE: rows at scale_stride; AFFINE: weight [D] */
    const void *shift; /* MODULATE: rows at shift_stride; AFFINE: bias [D] */
} lnmod_res_fwd_in;

/* The backward's inputs. */
typedef struct {
    const void *h;     /* [rows, D] res_dtype: the forward's stored h */
    const void *y;     /* [rows, D] branch_dtype; read only with a gate (for dgate) */
    const void *gate;  /* as in the forward; ignored without a gate */
    const void *scale; /* as in the forward (weight under AFFINE); shift is not needed */
    const void *dout;  /* [rows, D] out_dtype */
    const void *dh;    /* [rows, D] res_dtype, or NULL for zero */
    const float *mean; /* [rows] the forward's */
    const float *rstd; /* [rows] the forward's */
} lnmod_res_bwd_in;

/* Outputs of the forward (device pointers for the kernels, host for the CPU models). h: [rows, D] res_dtype, required; it may be r
 * itself (in place: each element of r is read before the same thread writes h there), no
 * other overlap. out: [rows, D] out_dtype, required. mean, rstd: [rows] fp32, optional (NULL
 * to skip; the backward needs them). */
typedef struct {
    void *h;
    void *out;
    float *mean;
    float *rstd;
} lnmod_res_fwd_out;

/* Outputs of the backward. dr: [rows, D] res_dtype, required; it may be in->dh itself (in
 * place). dy: [rows, D] branch_dtype, required. dgate: gate rows at gate_stride (mod_dtype),
 * required with a gate, ignored without. dscale, dshift: norm rows at scale_stride /
 * shift_stride (MODULATE) or [D] (AFFINE: dweight, dbias), required. Every element of the
 * column-sum outputs is overwritten, never accumulated into; they must not overlap each other
 * or any other array. */
typedef struct {
    void *dr;
    void *dy;
    void *dgate;
    void *dscale;
    void *dshift;
} lnmod_res_bwd_out;

/* The outputs' pointer rules (checked by the kernels' entry points and the CPU models after
 * the inputs'): LNMOD_ERR_NULL_POINTER for a NULL out, h, out->out (forward), dr, dy, dscale,
 * dshift, or dgate with a gate (backward). Overlaps cannot be checked here. */
lnmod_status lnmod_res_check_fwd_out(const lnmod_res_desc *d, const lnmod_res_fwd_out *out);
lnmod_status lnmod_res_check_bwd_out(const lnmod_res_desc *d, const lnmod_res_bwd_out *out);

/* lnmod_res_desc_validate, then the pointer rules: NULL d, in, r, y, scale, shift, or a NULL
 * gate with a gate, is LNMOD_ERR_NULL_POINTER (checked before the descriptor). */
lnmod_status lnmod_res_check_fwd_in(const lnmod_res_desc *d, const lnmod_res_fwd_in *in);
/* The same for the backward: h, scale, dout, mean, rstd always; y and gate with a gate. */
lnmod_status lnmod_res_check_bwd_in(const lnmod_res_desc *d, const lnmod_res_bwd_in *in);

/* The fewest bytes a forward must move: read r and y, write h and out (rows*D each, in their
 * dtypes), read each gate row and each scale/shift row once (norm rows), plus 8 bytes a row
 * for mean and rstd when want_stats. Saturates at INT64_MAX, as lnmod_fwd_min_bytes. */
int64_t lnmod_res_fwd_min_bytes(const lnmod_res_desc *d, int want_stats);
/* The fewest bytes a backward must move: read h, d_out, dh (when has_dh) and, with a gate, y;
 * write dr and dy; read mean and rstd (8 bytes a row); read each gate and scale row and write
 * each dgate, dscale and dshift row once. Saturates at INT64_MAX. */
int64_t lnmod_res_bwd_min_bytes(const lnmod_res_desc *d, int has_dh);

#ifdef __cplusplus
}
#endif
#endif
