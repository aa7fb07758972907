// lnmod_res_variants.cuh -- the fused residual op's (lnmod_res.h) variant entry points: the
// registry's (lnmod_registry.cu: res_forward, res_backward, res_bwd_workspace, res_bytes_moved,
// res_bwd_bytes_moved of "naive" and "dtile") and the kernels' own behind them (namespace
// lnmod_res_detail, C++ only). Each is called after lnmod_res_forward / lnmod_res_backward
// validated the descriptor, the inputs, the outputs and (backward) the workspace.
#ifndef ADALOAD_LNMOD_RES_VARIANTS_CUH
#define ADALOAD_LNMOD_RES_VARIANTS_CUH

#include <cuda_runtime.h>

#include "lnmod.h"
#include "lnmod_res.h"

// The registry's entries. naive: its kernels for every descriptor. dtile: its fused forward
// where it takes the shape (lnmod_res_fwd_dtile.cu), else naive's; its backward the bulk ring
// (lnmod_res_bwd_bulk.cu), else version 1 (lnmod_res_bwd_dtile.cu), else naive's. One workspace
// layout for all (lnmod_res_common.cu).
lnmod_status lnmod_res_fwd_naive_launch(const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                                        const lnmod_res_fwd_out *out, void *workspace, cudaStream_t stream);
lnmod_status lnmod_res_bwd_naive_launch(const lnmod_res_desc *d, const lnmod_res_bwd_in *in,
                                        const lnmod_res_bwd_out *out, void *workspace,
                                        size_t workspace_bytes, cudaStream_t stream);
lnmod_status lnmod_res_fwd_dtile_launch(const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                                        const lnmod_res_fwd_out *out, void *workspace, cudaStream_t stream);
lnmod_status lnmod_res_bwd_dtile_launch(const lnmod_res_desc *d, const lnmod_res_bwd_in *in,
                                        const lnmod_res_bwd_out *out, void *workspace,
                                        size_t workspace_bytes, cudaStream_t stream);
int64_t lnmod_res_bwd_workspace(const lnmod_res_desc *d); // -1: overflow
int64_t lnmod_res_fwd_naive_workspace(const lnmod_res_desc *d); // 0
int64_t lnmod_res_fwd_dtile_workspace(const lnmod_res_desc *d); // LNMOD_RES_FWD_WORKSPACE
int64_t lnmod_res_fwd_naive_bytes(const lnmod_res_desc *d, int want_stats);
int64_t lnmod_res_bwd_naive_bytes(const lnmod_res_desc *d, int has_dh);
int64_t lnmod_res_fwd_dtile_bytes(const lnmod_res_desc *d, int want_stats);
int64_t lnmod_res_bwd_dtile_bytes(const lnmod_res_desc *d, int has_dh);

namespace lnmod_res_detail {

lnmod_status res_fwd_naive(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out,
                           cudaStream_t stream);
lnmod_status res_bwd_naive(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out,
                           void *workspace, cudaStream_t stream);

// dtile forward's fused kernel: 1 when it takes d with these pointers (Wan's dtypes, D 1536 /
// 3072 / 5120, 16-byte aligned; res_fwd_dtile_shape: the descriptor's part of that rule).
int res_fwd_dtile_shape(const lnmod_res_desc *d);
int res_fwd_dtile_takes(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out);
lnmod_status res_fwd_dtile(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out,
                           cudaStream_t stream);

// dtile backward version 1 (lnmod_res_bwd_dtile.cu): 1 when its fused kernel takes d with these
// pointers (MODULATE, Wan's dtypes, D 1536 / 3072 / 5120, aligned).
int res_bwd_dtile_shape(const lnmod_res_desc *d);
int res_bwd_dtile_takes(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out);
lnmod_status res_bwd_dtile(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out,
                           void *workspace, cudaStream_t stream);

// dtile backward on the bulk ring (lnmod_res_bwd_bulk.cu): 1 when it takes d with these pointers
// (Wan's dtypes, D a multiple of 8 in 16..6144, aligned; MODULATE, or AFFINE with a gate per
// sample or per frame whose bulk chunks all hold rows); res_bwd_bulk sets *ran = 0
// (and launches nothing) where the device lacks the bulk copy engine (below compute capability
// 9.0) or its ring does not fit the shared memory.
int res_bwd_bulk_shape(const lnmod_res_desc *d);
int res_bwd_bulk_takes(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out);
lnmod_status res_bwd_bulk(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out,
                          void *workspace, cudaStream_t stream, int *ran);

} // namespace lnmod_res_detail

#endif
