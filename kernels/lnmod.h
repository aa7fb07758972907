/* lnmod.h -- C API of the LayerNorm-Modulate forward and backward CUDA kernels.
 *
 * Any C program can call it: the kernels live in liblnmod_cuda (CUDA C), this header needs
 * only cuda_runtime_api.h. Pick a variant by name from the registry (`adaload verify --list`
 * prints it), fill an lnmod_desc (lnmod_desc.h), pass device pointers and a stream:
 *
 *   lnmod_desc d = lnmod_desc_default();
 *   d.rows = B*S; d.D = 5120; d.rows_per_sample = S; d.scale_stride = d.shift_stride = 6*5120;
 *   lnmod_status st = lnmod_forward("dtile", &d, x, scale, shift, y, mean, rstd, ws, 16, stream); // ws zeroed once
 *
 * mean and rstd (fp32, [rows]) are optional outputs for a later backward: pass NULL to skip.
 * The backward takes x, the forward's scale, the gradient dy of y and the forward's mean and
 * rstd, and writes dx, dscale and dshift (see lnmod_backward below):
 *
 *   size_t ws; lnmod_backward_workspace("dtile", &d, &ws);   // device bytes, may be 0
 *   st = lnmod_backward("dtile", &d, x, scale, dy, mean, rstd, dx, dscale, dshift, wsp, ws, stream);
 *
 * Every call validates the descriptor and pointers on the host before touching the GPU and
 * returns a status; it never aborts. A launch error is reported as LNMOD_ERR_CUDA (the
 * launch is asynchronous: errors of the running kernel surface at the next synchronization).
 */
#ifndef ADALOAD_LNMOD_H
#define ADALOAD_LNMOD_H

#include <cuda_runtime_api.h>

#include "lnmod_desc.h"
#include "lnmod_res_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef lnmod_status (*lnmod_launch_fn)(const lnmod_desc *d, const void *x, const void *scale,
                                        const void *shift, void *y, float *mean, float *rstd,
                                        void *workspace, cudaStream_t stream);

/* The backward of one variant (called only after lnmod_backward's checks). */
typedef lnmod_status (*lnmod_bwd_launch_fn)(const lnmod_desc *d, const void *x,
                                            const void *scale, const void *dy,
                                            const float *mean, const float *rstd, void *dx,
                                            void *dscale, void *dshift, void *workspace,
                                            size_t workspace_bytes, cudaStream_t stream);

/* The fused gated residual + LayerNorm-Modulate op of one variant (lnmod_res.h; called only
 * after lnmod_res_forward's / lnmod_res_backward's checks). */
typedef lnmod_status (*lnmod_res_fwd_fn)(const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                                         const lnmod_res_fwd_out *out, void *workspace,
                                         cudaStream_t stream);
typedef lnmod_status (*lnmod_res_bwd_fn)(const lnmod_res_desc *d, const lnmod_res_bwd_in *in,
                                         const lnmod_res_bwd_out *out, void *workspace,
                                         size_t workspace_bytes, cudaStream_t stream);

typedef struct {
    const char *name;        /* stable: benchmark history is keyed by it */
    const char *description; /* one line */
    /* Non-zero when the variant handles d (every valid descriptor, for the shipped ones). */
    int (*supports)(const lnmod_desc *d);
    lnmod_launch_fn launch;  /* called only after validation */
    /* Bytes this variant really moves through device memory (>= lnmod_fwd_min_bytes),
     * counting its re-reads; for the kernel notes. */
    int64_t (*bytes_moved)(const lnmod_desc *d, int want_stats);
    /* The forward's workspace bytes (state: zero on entry, left zero; lnmod_forward_workspace). */
    int64_t (*fwd_workspace)(const lnmod_desc *d);
    /* The backward: its launch, the device workspace it needs (a function of the descriptor
     * alone), and the bytes it really moves (>= lnmod_bwd_min_bytes). */
    lnmod_bwd_launch_fn backward;
    int64_t (*bwd_workspace)(const lnmod_desc *d);
    int64_t (*bwd_bytes_moved)(const lnmod_desc *d);
    /* The fused residual op (lnmod_res.h), NULL where the variant has none: forward,
     * backward, the workspace bytes of each (functions of the descriptor alone; -1:
     * overflow) and the bytes each direction really moves (>= lnmod_res_fwd_min_bytes /
     * lnmod_res_bwd_min_bytes). Every valid lnmod_res_desc is supported where they exist. */
    lnmod_res_fwd_fn res_forward;
    lnmod_res_bwd_fn res_backward;
    int64_t (*res_fwd_workspace)(const lnmod_res_desc *d);
    int64_t (*res_bwd_workspace)(const lnmod_res_desc *d);
    int64_t (*res_bytes_moved)(const lnmod_res_desc *d, int want_stats);
    int64_t (*res_bwd_bytes_moved)(const lnmod_res_desc *d, int has_dh);
} lnmod_variant;

/* The registry: a table ended by an entry whose name is NULL. */
extern const lnmod_variant lnmod_variants[];

/* The variant called name, or NULL. */
const lnmod_variant *lnmod_find_variant(const char *name);

/* Device workspace bytes lnmod_forward needs for (variant, d): 0 for naive and row_per_warp,
 * 16 for dtile (its chunk ring's ticket counter). This workspace is state: zero before its
 * first use (cudaMemset once); every call leaves it zero, so one workspace serves every later
 * call on the same stream; calls that may run at the same time need one each. */
lnmod_status lnmod_forward_workspace(const char *variant, const lnmod_desc *d, size_t *bytes);

/* Validates (descriptor, pointers, variant, workspace: at least lnmod_forward_workspace bytes,
 * 16-byte aligned, zero on entry; NULL when 0) and launches the forward on stream. */
lnmod_status lnmod_forward(const char *variant, const lnmod_desc *d, const void *x,
                           const void *scale, const void *shift, void *y, float *mean,
                           float *rstd, void *workspace, size_t workspace_bytes,
                           cudaStream_t stream);

/* Device workspace bytes lnmod_backward needs for (variant, d); 0 when it needs none. The
 * size depends on the descriptor only (never on the device), as does every split of the
 * column sums: the results are bit-identical run to run and on any GPU of one architecture. */
lnmod_status lnmod_backward_workspace(const char *variant, const lnmod_desc *d, size_t *bytes);

/* The backward of y = LN(x)*(1 + scale) + shift, with xhat = (x - mean)*rstd, g = dy*(1+scale):
 *   dx[r,d]     = rstd_r * (g - mean_d(g) - xhat * mean_d(g*xhat))
 *   dscale[m,d] = sum over the rows r with m(r) = m of dy[r,d]*xhat[r,d]
 *   dshift[m,d] = sum over the same rows of dy[r,d]
 * dy has y's dtype, dx x's dtype, dscale/dshift the modulation dtype, written with the
 * descriptor's scale_stride / shift_stride (so straight into the gradient of Wan's [B,6,D]
 * modulation); every element of them is overwritten, never accumulated into. Accumulation in
 * fp32, one rounding at the end. mean and rstd ([rows] fp32, as the forward wrote them) are
 * required. workspace: device memory of at least lnmod_backward_workspace bytes, 16-byte
 * aligned (NULL when that is 0), its content on entry is ignored; it is in use until the
 * work on stream is done. dscale and dshift must not overlap each other, x, dy or dx.
 * Errors: the descriptor's, LNMOD_ERR_NULL_POINTER (x, scale, dy, mean, rstd, dx, dscale,
 * dshift, or a workspace that is needed), LNMOD_ERR_WORKSPACE (too small or misaligned),
 * LNMOD_ERR_UNKNOWN_VARIANT, LNMOD_ERR_UNSUPPORTED, LNMOD_ERR_CUDA. */
lnmod_status lnmod_backward(const char *variant, const lnmod_desc *d, const void *x,
                            const void *scale, const void *dy, const float *mean,
                            const float *rstd, void *dx, void *dscale, void *dshift,
                            void *workspace, size_t workspace_bytes, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
