/* verify_model_res.h -- fp32 CPU models of the fused gated residual + LayerNorm-Modulate op
 * (issue 22; the op in lnmod_res_desc.h), forward and backward, the way the kernels are to
 * compute it, and planted wrong ones, so the checks of "op": "lnmod_res" cases can be shown to
 * catch wrong kernels before any kernel exists (kernels/lnmod_res_design.md: what verify still
 * has to wire up). Host memory, laid out as the device buffers would be.
 *
 *   res_model           h = fmaf(g, y, r) in fp32, rounded once to res_dtype and written; the
 *                       statistics of the stored h (pairwise fp32 sums, two passes); out =
 *                       fmaf(xhat, a, b) rounded once. Backward: per row gm = dout*a, mg and
 *                       mgx by pairwise sums, t = dh + rstd*(gm - mg - xhat*mgx), dr = t, dy =
 *                       g*t each rounded once; column sums (dgate of t*y, dscale of dout*xhat,
 *                       dshift of dout) as fp32 partials of VERIFY_MODEL_CHUNK rows in the
 *                       workspace, finalized in chunk order: must pass
 *   res_no_gate         the forward ignores the gate (h = r + y): must fail h and out
 *   res_no_h            the forward leaves h unwritten (out is right): must fail h (NaN poison)
 *   res_bwd_no_dh       the backward drops dh (t = the norm's part only): must fail dr, dy, dgate
 *   res_bwd_dgate_dh    dgate sums dh*y only, the norm's part of t forgotten: must fail dgate
 * The forward of the res_bwd_* models is res_model's; so is the backward of the others.
 * In place as lnmod_res.h allows: h may be r (forward), dr may be dh (backward; dgate's
 * partials are taken in the pass that writes dr, from the dh read just before).
 */
#ifndef ADALOAD_VERIFY_MODEL_RES_H
#define ADALOAD_VERIFY_MODEL_RES_H

#include <stdint.h>

#include "lnmod_res_desc.h"
#include "verify_model.h"

/* Table ended by a NULL name (the same info type as verify_models). */
extern const verify_model_info verify_res_models[];

/* Index into verify_res_models, or -1. */
int verify_res_model_find(const char *name);

/* The forward of model which on host memory, rows spread over threads. Checks the descriptor,
 * inputs and outputs (lnmod_res_check_*) and returns their status without writing anything;
 * LNMOD_ERR_ALLOC when its scratch cannot be had (then it may have written part of it). */
lnmod_status verify_res_model_forward(int which, const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                                      const lnmod_res_fwd_out *out, int threads);

/* Workspace bytes of the backward for d (a function of d only): the column sums' chunk
 * partials. */
int64_t verify_res_model_bwd_workspace(const lnmod_res_desc *d);

/* The backward of model which; ws holds verify_res_model_bwd_workspace(d) bytes (content on
 * entry ignored). Status as the forward's. */
lnmod_status verify_res_model_backward(int which, const lnmod_res_desc *d, const lnmod_res_bwd_in *in,
                                       const lnmod_res_bwd_out *out, void *ws, int threads);

#endif
