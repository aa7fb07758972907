// fv2_int.h -- between fv2.cu (planning) and fv2_inst.cu (one x dtype's kernels): launches a
// finished-but-for-registers plan. Internal to the experiment.
#ifndef ADALOAD_FV2_INT_H
#define ADALOAD_FV2_INT_H

#include "fv2.h"
#include "lnmod_common.cuh"

namespace fv2 {
// Launches plan p (its ring depth finished with the kernel's real register count; extra_ns
// more slots where they fit) of descriptor d; fills info. LNMOD_ERR_UNSUPPORTED when the
// plan's kernel cannot be resident (the caller then tries the odd class / v1).
lnmod_status launch_x_bf16(const lnmod_desc *d, fv2_plan *p, const fv2_dev *dev, int extra_ns,
                           const lnmod_detail::lnmod_kparams &kp, cudaStream_t st, fv2_info *info);
lnmod_status launch_x_f16(const lnmod_desc *d, fv2_plan *p, const fv2_dev *dev, int extra_ns,
                          const lnmod_detail::lnmod_kparams &kp, cudaStream_t st, fv2_info *info);
lnmod_status launch_x_f32(const lnmod_desc *d, fv2_plan *p, const fv2_dev *dev, int extra_ns,
                          const lnmod_detail::lnmod_kparams &kp, cudaStream_t st, fv2_info *info);
// The flat chunk kernel (the built lnmod_fwd_v2_chunk.cuh, instantiated by fv2_odd3_inst.cu)
// for 16-bit x: finishes chunk plan pl (ring depth from the kernel's real registers; ns_cap > 0
// caps it) and launches; fills info. LNMOD_ERR_UNSUPPORTED when it cannot (not a chunk plan, y
// not x's dtype, no shape, not resident).
lnmod_status launch_chunk_bf16(const lnmod_desc *d, fv2_plan *pl, const fv2_dev *dev, int ns_cap,
                               const lnmod_detail::lnmod_kparams &kp, cudaStream_t st, fv2_info *info);
lnmod_status launch_chunk_f16(const lnmod_desc *d, fv2_plan *pl, const fv2_dev *dev, int ns_cap,
                              const lnmod_detail::lnmod_kparams &kp, cudaStream_t st, fv2_info *info);
} // namespace fv2

#endif
