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
} // namespace fv2

#endif
