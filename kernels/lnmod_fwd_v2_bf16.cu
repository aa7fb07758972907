// lnmod_fwd_v2_bf16.cu -- dtile's forward v2 kernels for bf16 x (lnmod_fwd_v2_inst.cuh).
#define FV2_XT 2
#include "lnmod_fwd_v2_inst.cuh"
