// lnmod_res_fwd_gen.cuh -- dtile's fused forward at the general widths (every D a multiple of 8
// up to LNMOD_RES_FWD_GEN_MAXD that lnmod_res_fwd_dtile.cu's three D-specialized kernels do not
// take): the kernel, launched by lnmod_res_fwd_dtile.cu (rg_launch), its row shape from
// lnmod_res_fwd_plan.h. A header so that its very source also runs on the CPU under an
// emulation of the CUDA features it uses (kernels/experiments/2026-12-04-res-plan/emu/), which
// defines LNMOD_RES_SHARED to place the CTA's shared struct in the emulated CTA's memory.
#ifndef ADALOAD_LNMOD_RES_FWD_GEN_CUH
#define ADALOAD_LNMOD_RES_FWD_GEN_CUH

#include "lnmod_res_common.cuh"
#include "lnmod_res_fwd_plan.h"

#ifndef LNMOD_RES_SHARED
#define LNMOD_RES_SHARED(T, name) __shared__ T name
#endif

namespace lnmod_res_detail {

__device__ __forceinline__ void ld_plain8(const float *p, float *o) // two plain 16-byte loads
{
    const uint4 a = reinterpret_cast<const uint4 *>(p)[0], b = reinterpret_cast<const uint4 *>(p)[1];
    dt<float>::unpack(a, o);
    dt<float>::unpack(b, o + 4);
}

constexpr int RG_MAXW = LNMOD_RES_FWD_GEN_MAXT / 32;

// The CTA's shared memory: the warps' statistics (parity-buffered: one barrier a row) and each
// warp's element count (set once).
struct rg_shared {
    lnmod_part sp[2][RG_MAXW];
    float nel[RG_MAXW];
};

// The same row in registers as rd_fwd_kernel (lnmod_res_fwd_dtile.cu) for the widths its three
// instantiations do not take: U = D/8 units
// of 8 elements, T threads (whole warps, at most 256) of VPT units each (lnmod_res_fwd_gen_shape:
// the fewest idle unit slots T*VPT - U, the larger VPT on a tie), thread t owning units t,
// t + T, ...; a unit past U is masked (not loaded, not stored, not counted). The statistics are
// the kernels' above with the warps' element counts no longer equal: the warp's pivot is the
// mean of its lanes' first units, its mean and M2 are about it, and the merge weighs each
// warp's mean by its count n_w (Chan's merge: M2 = sum M2_w + sum n_w (mean_w - mean)^2).

// Units of warp w (all lanes, all VPT slots) that hold a unit of the row.
__device__ __forceinline__ int rg_warp_units(int w, int T, int U, int VPT)
{
    int n = 0;
    for (int k = 0; k < VPT; k++) n += min(max(U - k * T - 32 * w, 0), 32);
    return n;
}

template <int VPT>
__global__ void __launch_bounds__(LNMOD_RES_FWD_GEN_MAXT) rg_fwd_kernel(res_params p, int U)
{
    LNMOD_RES_SHARED(rg_shared, sm);
    lnmod_part(&sp)[2][RG_MAXW] = sm.sp;
    float *nel = sm.nel;
    const int T = (int)blockDim.x, NW = T >> 5, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int64_t D = p.D;
#ifdef LNMOD_RES_FWD_PLANT_MERGE
    if (tid < NW) nel[tid] = 8.0f * 32.0f * VPT; /* planted bug (CPU emulation): every warp taken as full */
#else
    if (tid < NW) nel[tid] = 8.0f * (float)rg_warp_units(tid, T, U, VPT);
#endif
    __syncthreads();
    const float nwarp = nel[warp];                              // this warp's elements
    const float nlead = (float)min(max(U - 32 * warp, 0), 32); // its lanes with a unit in slot 0
    const float *rg = static_cast<const float *>(p.r);
    const __nv_bfloat16 *yg = static_cast<const __nv_bfloat16 *>(p.y);
    int par = 0;
    for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x, par ^= 1) {
        const int64_t base = row * D + (int64_t)tid * 8;
        float h[VPT][8], y[VPT][8];
#pragma unroll
        for (int k = 0; k < VPT; k++) {
            if (tid + k * T < U) {
                ld_plain8(rg + base + k * T * 8, h[k]);
                lnmod_load_n<__nv_bfloat16, 8>(yg + base + k * T * 8, y[k]);
            } else {
#pragma unroll
                for (int e = 0; e < 8; e++) h[k][e] = y[k][e] = 0.0f;
            }
        }
        const int64_t m = (p.has_gate || !p.affine) ? lnmod_mod_row(p, row) : 0;
        if (p.has_gate) {
            const float *gr = static_cast<const float *>(p.gate) + m * p.gate_stride + tid * 8;
#pragma unroll
            for (int k = 0; k < VPT; k++) {
                if (tid + k * T >= U) continue;
                float g[8];
                lnmod_load_n<float, 8>(gr + k * T * 8, g);
#pragma unroll
                for (int e = 0; e < 8; e++) h[k][e] = fmaf(g[e], y[k][e], h[k][e]);
            }
        } else {
#pragma unroll
            for (int k = 0; k < VPT; k++)
#pragma unroll
                for (int e = 0; e < 8; e++) h[k][e] += y[k][e];
        }
        float *hg = static_cast<float *>(p.h) + base;
#pragma unroll
        for (int k = 0; k < VPT; k++)
            if (tid + k * T < U) lnmod_store_n<float, 8>(hg + k * T * 8, h[k]);

        float hw = lnmod_warp_sum(tid < U ? h[0][0] : 0.0f) / nlead, c = 0.0f, q = 0.0f;
#pragma unroll
        for (int k = 0; k < VPT; k++)
            if (tid + k * T < U)
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    const float d = h[k][e] - hw;
                    c += d;
                    q = fmaf(d, d, q);
                }
        lnmod_warp_sum2(c, q);
        float lw = c / nwarp;
        if (c * lw > 0.888f * q) { // warp-uniform: the pivot was far from the warp's mean
            hw += lw;
            c = 0.0f;
            q = 0.0f;
#pragma unroll
            for (int k = 0; k < VPT; k++)
                if (tid + k * T < U)
#pragma unroll
                    for (int e = 0; e < 8; e++) {
                        const float d = h[k][e] - hw;
                        c += d;
                        q = fmaf(d, d, q);
                    }
            lnmod_warp_sum2(c, q);
            lw = c / nwarp;
        }
        if (lane == 0) sp[par][warp] = lnmod_part{hw, lw, fmaxf(fmaf(-c, lw, q), 0.0f)};
        if (NW > 1) __syncthreads();
        else __syncwarp();
        const float hi = sp[par][0].hi, invd = 1.0f / (float)D;
        float acc = 0.0f;
        for (int w = 0; w < NW; w++) acc = fmaf(nel[w], (sp[par][w].hi - hi) + sp[par][w].lo, acc);
        const float lo = acc * invd;
        float m2 = 0.0f;
        for (int w = 0; w < NW; w++) {
            const float e = ((sp[par][w].hi - hi) + sp[par][w].lo) - lo;
            m2 += sp[par][w].m2;
            m2 = fmaf(nel[w] * e, e, m2);
        }
        const float rs = lnmod_rstd(m2, (float)D, p.eps);
        if (tid == 0) {
            if (p.mean) p.mean[row] = hi + lo;
            if (p.rstd) p.rstd[row] = rs;
        }
        const float nlr = -((hi - hw) + lo) * rs;
        const int64_t k0 = p.affine ? 0 : m;
        const float *sc = static_cast<const float *>(p.scale) + k0 * p.scale_stride + tid * 8;
        const float *sh = static_cast<const float *>(p.shift) + k0 * p.shift_stride + tid * 8;
        __nv_bfloat16 *og = static_cast<__nv_bfloat16 *>(p.out) + base;
#pragma unroll
        for (int k = 0; k < VPT; k++) {
            if (tid + k * T >= U) continue;
            float a[8], b[8], o[8];
            lnmod_load_n<float, 8>(sc + k * T * 8, a);
            lnmod_load_n<float, 8>(sh + k * T * 8, b);
#pragma unroll
            for (int e = 0; e < 8; e++)
                o[e] = fmaf(fmaf(h[k][e] - hw, rs, nlr), p.affine ? a[e] : 1.0f + a[e], b[e]);
            lnmod_store_n<__nv_bfloat16, 8>(og + k * T * 8, o);
        }
    }
}

} // namespace lnmod_res_detail

#endif
