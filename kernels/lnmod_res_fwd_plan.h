/* lnmod_res_fwd_plan.h -- the row shape of the fused residual op's dtile forward at the widths
 * its three specialized kernels (D 1536, 3072, 5120) do not take (lnmod_res_fwd_dtile.cu,
 * rg_fwd_kernel), host and device, pure C so that a host test (test_lnmod_res_fwd_plan.c, also
 * built with each planted bug, which must fail it) checks it.
 *   * a row of D elements (D a multiple of 8) is U = D/8 units of 8 (one 16-byte bf16 vector of
 *     y and out, two of the fp32 r and h); T threads (whole warps, 32..LNMOD_RES_FWD_GEN_MAXT)
 *     hold VPT units each (1..LNMOD_RES_FWD_GEN_MAXVPT), thread t the units t, t + T, ...,
 *     those past U masked;
 *   * VPT: the fewest idle unit slots T*VPT - U with T = ceil(U/VPT) rounded up to a warp; on a
 *     tie the larger VPT (more bytes in flight a thread, fewer warps to merge);
 *   * so every warp holds at least one unit in slot 0 (its lane 0), which the kernel's pivot
 *     (the mean of its lanes' first units) needs. */
#ifndef ADALOAD_LNMOD_RES_FWD_PLAN_H
#define ADALOAD_LNMOD_RES_FWD_PLAN_H

#include <stdint.h>

#ifdef __CUDACC__
#define LNMOD_RES_FWD_HD __host__ __device__ __forceinline__
#else
#define LNMOD_RES_FWD_HD static inline
#endif

#define LNMOD_RES_FWD_GEN_MAXT 256 /* threads a CTA at most (__launch_bounds__) */
#define LNMOD_RES_FWD_GEN_MAXVPT 5 /* units a thread at most (D5120's kernel holds 5) */
#define LNMOD_RES_FWD_GEN_MAXD (8 * LNMOD_RES_FWD_GEN_MAXVPT * LNMOD_RES_FWD_GEN_MAXT) /* 10,240 */

/* Threads and units a thread for width D; 0 (nothing set) where the general kernel does not
 * take D (not a multiple of 8, or above LNMOD_RES_FWD_GEN_MAXD). */
LNMOD_RES_FWD_HD int lnmod_res_fwd_gen_shape(int64_t D, int *threads, int *vpt)
{
    if (D < 8 || D % 8 != 0 || D > LNMOD_RES_FWD_GEN_MAXD) return 0;
    const int64_t U = D / 8;
    int64_t best_t = 0, best_idle = -1;
    int best_v = 0;
    for (int v = 1; v <= LNMOD_RES_FWD_GEN_MAXVPT; v++) {
#ifdef LNMOD_RES_FWD_PLANT_ROUND
        const int64_t t = (U + v - 1) / v; /* planted bug: threads not whole warps */
#else
        const int64_t t = ((U + v - 1) / v + 31) / 32 * 32;
#endif
        if (t > LNMOD_RES_FWD_GEN_MAXT) continue;
        const int64_t idle = t * v - U;
        if (best_idle < 0 || idle <= best_idle) { /* <=: the larger VPT on a tie */
            best_idle = idle;
            best_t = t;
            best_v = v;
        }
    }
    if (best_idle < 0) return 0;
    *threads = (int)best_t;
    *vpt = best_v;
    return 1;
}

#endif
