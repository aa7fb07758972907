/* fv2_odd2_plan.h -- the plan of the experiment's second odd kernel (fv2_odd2.cuh), for the
 * harness (fv2.cu: its v2b column at odd plans) and the CPU emulation (fv2_emu_test.cc). */
#ifndef ADALOAD_FV2_ODD2_PLAN_H
#define ADALOAD_FV2_ODD2_PLAN_H

#include "lnmod_fwd_v2_plan.h"

/* Most windows a thread fv2_odd2.cuh is instantiated for (fv2_inst.cu). */
#define FV2_ODD2_MAX_VPT 5

/* Makes odd plan p (fv2_odd_shape) the odd kernel with the modulation in registers for
 * problem q: mode FV2_MOD_REG, lag 1 (fv2_finish then keeps NS >= 3: the kernel holds one row
 * more than the odd kernel), the slot holding the row's windows of x and then the staging of
 * its ceil(D / VEC) groups in y's dtype. Returns 0, or 1 when it does not apply (not the odd
 * class, or more than FV2_ODD2_MAX_VPT windows a thread). The caller runs fv2_finish. */
static inline int odd2_plan(fv2_plan *p, const fv2_problem *q)
{
    if (p->cls != FV2_ODD || p->vpt < 1 || p->vpt > FV2_ODD2_MAX_VPT) return 1;
    p->mode = FV2_MOD_REG;
    p->lag = 1;
    p->slot_bytes = (int64_t)p->vpt * p->threads * 16 + fv2_ceil(q->D, p->vec) * p->vec * q->sy;
    return 0;
}

#endif
