// res_variants.h -- the variants' entry points behind res_api.cu (C++ only). Each is called
// after the API validated the descriptor, the inputs and the outputs.
#ifndef ADALOAD_RES_VARIANTS_H
#define ADALOAD_RES_VARIANTS_H

#include <cuda_runtime.h>

#include "lnmod_res_desc.h"

namespace res_detail {

lnmod_status res_fwd_naive(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out,
                           cudaStream_t stream);
int64_t res_bwd_naive_workspace(const lnmod_res_desc *d); // -1: overflow
lnmod_status res_bwd_naive(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out,
                           void *workspace, cudaStream_t stream);

// dtile forward: 1 when its fused path takes d with these pointers (else the API runs naive
// and says so through res_last_path).
int res_fwd_dtile_takes(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out);
lnmod_status res_fwd_dtile(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out,
                           cudaStream_t stream);

// dtile backward (res_dtile_bwd.cu): 1 when its fused path takes d with these pointers (else
// the API runs naive's backward). Workspace: naive's (the same layout).
int res_bwd_dtile_takes(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out);
lnmod_status res_bwd_dtile(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out,
                           void *workspace, cudaStream_t stream);

// dtile_bulk backward (res_dtile_bulk.cu): 1 when its fused path takes d with these pointers;
// res_bwd_bulk sets *ran = 0 (and launches nothing) where the device lacks the bulk copy
// engine or its ring does not fit the shared memory (the API then runs dtile's or naive's).
// Workspace: naive's (the same layout).
int res_bwd_bulk_takes(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out);
lnmod_status res_bwd_bulk(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out,
                          void *workspace, cudaStream_t stream, int *ran);

} // namespace res_detail

#endif
