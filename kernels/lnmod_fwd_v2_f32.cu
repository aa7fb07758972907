// lnmod_fwd_v2_f32.cu -- dtile's forward v2 kernels for fp32 x (lnmod_fwd_v2_inst.cuh).
#define FV2_XT 0
#include "lnmod_fwd_v2_inst.cuh"
