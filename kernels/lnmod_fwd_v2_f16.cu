// lnmod_fwd_v2_f16.cu -- dtile's forward v2 kernels for fp16 x (lnmod_fwd_v2_inst.cuh).
#define FV2_XT 1
#include "lnmod_fwd_v2_inst.cuh"
