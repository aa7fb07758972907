/* lnmod_res.h -- C API of the fused gated residual + LayerNorm-Modulate CUDA kernels (issue
 * 22), in liblnmod_cuda beside lnmod.h's. The op, the dtypes and every rule of the descriptor
 * and the inputs are lnmod_res_desc.h's (its one owner); the variants are the registry's
 * (lnmod.h: an entry's res_forward / res_backward, NULL where it has no fused op: naive and
 * dtile have it, row_per_warp not). Design and bytes: lnmod_res_design.md.
 *
 *   // Wan's third site: x = x + y_ffn * e[5], then the next block's norm1(x)*(1 + e'[1]) + e'[0]
 *   lnmod_res_desc d = lnmod_res_desc_default();
 *   d.rows = B*S; d.D = 5120; d.rows_per_sample = S;
 *   d.gate_stride = d.scale_stride = d.shift_stride = 6*5120;        // chunk views of e [B,6,D]
 *   lnmod_res_fwd_in in = {x, y_ffn, e + 5*D, e_next + D, e_next};  // r, y, gate, scale, shift
 *   lnmod_res_fwd_out o = {x, x_norm, mean, rstd};                    // h in place over r
 *   size_t fws; lnmod_res_forward_workspace("dtile", &d, &fws);       // 16: allocate it zeroed
 *   lnmod_status st = lnmod_res_forward("dtile", &d, &in, &o, fwsp, fws, stream); // once, reuse
 *
 *   size_t ws; lnmod_res_backward_workspace("dtile", &d, &ws);
 *   lnmod_res_bwd_in bi = {x, y_ffn, e + 5*D, e_next + D, d_x_norm, d_x, mean, rstd};
 *   lnmod_res_bwd_out bo = {d_x, d_y, de + 5*D, de_next + D, de_next};
 *   st = lnmod_res_backward("dtile", &d, &bi, &bo, wsp, ws, stream);
 *
 * Every call validates on the host first (lnmod_res_check_fwd_in / _bwd_in, then the outputs
 * below, then the variant) and returns a status; a launch error is LNMOD_ERR_CUDA.
 */
#ifndef ADALOAD_LNMOD_RES_H
#define ADALOAD_LNMOD_RES_H

#include <cuda_runtime_api.h>

#include "lnmod_res_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The outputs (lnmod_res_fwd_out, lnmod_res_bwd_out) and their rules are lnmod_res_desc.h's. */

/* Device workspace bytes lnmod_res_forward needs for (variant, d): 0 for naive, 16 for dtile
 * (its chunk ring's ticket counter: the CTAs take the rows in order from it). Unlike the
 * backward's, this workspace is state: it must be zero before its first use (cudaMemset once)
 * and every call leaves it zero again, so one workspace serves every later call on the same
 * stream with no memset; calls that may run at the same time (two streams) need one each. */
lnmod_status lnmod_res_forward_workspace(const char *variant, const lnmod_res_desc *d,
                                         size_t *bytes);

/* The forward of one variant: h = r + g*y rounded once to res_dtype, out = the norm of that
 * stored h with fp32 statistics (two-pass over the row held in registers/shared memory), one
 * rounding of out at the end. workspace: at least lnmod_res_forward_workspace bytes, 16-byte
 * aligned, zero on entry (above; NULL when 0). Errors: the descriptor's and inputs',
 * LNMOD_ERR_NULL_POINTER (h or out, or a needed workspace), LNMOD_ERR_UNKNOWN_VARIANT,
 * LNMOD_ERR_UNSUPPORTED, LNMOD_ERR_WORKSPACE, LNMOD_ERR_CUDA. A workspace that is not zero on
 * entry is not detected: the ring would skip rows (verify checks that every call leaves it zero). */
lnmod_status lnmod_res_forward(const char *variant, const lnmod_res_desc *d,
                               const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out,
                               void *workspace, size_t workspace_bytes, cudaStream_t stream);

/* Device workspace bytes lnmod_res_backward needs for (variant, d); 0 when none. A function of
 * the descriptor alone, as is every split of the column sums (dgate, dscale, dshift), so the
 * results are bit-identical run to run and on any GPU of one architecture (the same rule as
 * lnmod_backward_workspace). */
lnmod_status lnmod_res_backward_workspace(const char *variant, const lnmod_res_desc *d,
                                          size_t *bytes);

/* The backward (lnmod_res_desc.h gives the formulas): t = dh + rstd*(gm - mg - xhat*mgx) in
 * fp32 per element, dr = t and dy = g*t each rounded once from the fp32 t; dgate, dscale and
 * dshift accumulated in fp32 per chunk of rows into the workspace and finalized in a fixed
 * order, one rounding at the end. in->dh NULL: no gradient along the residual (zero).
 * workspace: at least lnmod_res_backward_workspace bytes, 16-byte aligned (NULL when 0), its
 * content on entry ignored, in use until the work on stream is done. Errors: as the forward,
 * LNMOD_ERR_NULL_POINTER for a required output or a needed workspace, LNMOD_ERR_WORKSPACE. */
lnmod_status lnmod_res_backward(const char *variant, const lnmod_res_desc *d,
                                const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out,
                                void *workspace, size_t workspace_bytes, cudaStream_t stream);

/* The fewest bytes each variant really moves (>= lnmod_res_fwd_min_bytes / _bwd_min_bytes),
 * for the notes and the benchmarks' copy ceiling, are the registry entries' res_bytes_moved and
 * res_bwd_bytes_moved (lnmod.h). */

#ifdef __cplusplus
}
#endif
#endif
