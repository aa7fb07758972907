// lnmod_fwd_v2.h -- dtile's forward v2 (issue 21), internal to kernels/: between
// lnmod_fwd_dtile.cu (which decides where v2 runs), lnmod_fwd_v2.cu (the device's facts, the
// problem, the plan of lnmod_fwd_v2_plan.h and its fallbacks) and the kernels of one x dtype
// each (lnmod_fwd_v2_bf16.cu / _f16.cu / _f32.cu, all three from lnmod_fwd_v2_inst.cuh).
// Every launch reads the device's facts, the chosen kernel's attributes and its occupancy; the
// one exception is the memory clock, read once a device (its query costs ~356 us on an H200:
// lnmod_fwd_v2.cu, mem_clock_khz).
#ifndef ADALOAD_LNMOD_FWD_V2_H
#define ADALOAD_LNMOD_FWD_V2_H

#include "lnmod_common.cuh"
#include "lnmod_fwd_v2_plan.h"

namespace fv2 {

// The current device's facts (cudaDeviceGetAttribute). 0, or -1 on a CUDA error.
int read_dev(fv2_dev *d);

// The problem of a descriptor's launch parameters (its pointers' alignment included).
fv2_problem problem_of(const lnmod_desc *d, const lnmod_detail::lnmod_kparams &p);

// y = LN(x)*(1 + scale) + shift by the rule, on stream (a tile plan that cannot run here --
// not resident, or needing thread-block clusters on a device without them -- runs as the
// chunk class where it is eligible, else as the odd class; a chunk plan that cannot be
// resident as the odd class). LNMOD_OK; LNMOD_ERR_CUDA; LNMOD_ERR_UNSUPPORTED where version 1
// keeps the problem (fv2_v1_keeps on this device) or no plan of the rule can run here (pointers
// not aligned to their element size, or nothing fits): the caller then runs version 1. d is
// valid (lnmod_forward checked it).
lnmod_status forward(const lnmod_desc *d, const lnmod_detail::lnmod_kparams &p, void *workspace, cudaStream_t stream);

// Launches plan p (its ring depth finished with the chosen kernel's real register count) for
// one x dtype; LNMOD_ERR_UNSUPPORTED when the kernel cannot be resident.
lnmod_status launch_x_bf16(const lnmod_desc *d, fv2_plan *p, const fv2_dev *dev,
                           const lnmod_detail::lnmod_kparams &kp, void *ws, cudaStream_t st);
lnmod_status launch_x_f16(const lnmod_desc *d, fv2_plan *p, const fv2_dev *dev,
                          const lnmod_detail::lnmod_kparams &kp, void *ws, cudaStream_t st);
lnmod_status launch_x_f32(const lnmod_desc *d, fv2_plan *p, const fv2_dev *dev,
                          const lnmod_detail::lnmod_kparams &kp, void *ws, cudaStream_t st);

} // namespace fv2

#endif
