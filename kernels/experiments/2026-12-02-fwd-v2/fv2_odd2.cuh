// fv2_odd2.cuh -- the experiment's second odd kernel (issue 21, odd D; not in the built kernels):
// the landed odd kernel (kernels/lnmod_fwd_v2_odd.cuh) with the modulation in registers.
//
// Why: the landed odd kernel gives each thread the 16-byte windows of x at absolute addresses,
// so the row elements a thread owns move with the row's phase, and it reads (1 + scale) and
// shift one element at a time through L1 at every row: 2 VEC scalar loads a window (16 for
// bf16 x with fp32 modulation), lanes 32 bytes apart -- about 8 L1 wavefronts an instruction,
// ~128 a warp's 32 windows, against one cp.async and one store. That bounds it near 2 TB/s on
// an H200 (21-31% of copy measured; twice the warps or two more ring slots changed nothing).
// Here a thread owns LOGICAL groups of the row instead -- elements VEC g .. VEC g + VEC - 1 of
// group g = t, t + T, ... -- which do not move with the phase, so their (1 + scale) and shift
// stay in registers for the modulation row's run (loaded once a run, as the tile kernel's REG).
//
// Per row (one CTA of W warps a row, rows blockIdx.x + i gridDim.x, as the odd kernel):
//   x: the odd kernel's aligned windows into a ring slot (cp.async), its statistics over the
//      thread's own windows, the parts through one __syncthreads a row (B_i);
//   after B_i every window of the row is in the slot: group g's 16 bytes start phase * sx
//      bytes into window g, so two aligned shared loads and a funnel shift give them;
//   y is computed in logical order into the slot's staging area (VEC sy bytes a group,
//      aligned); y's own 16-byte windows (absolute, with y's own phase) are read back from
//      the staging -- two aligned loads and a shift again -- and stored whole, the row's two
//      edge windows element by element. The staging of row i is written after B_i and read
//      after B_{i+1} (the next row's barrier: no second barrier a row); the last row's after
//      one more barrier at the end.
//   Ring: PD = NS - 2 rows in flight (the odd kernel: NS - 1): the slot of row i - 1 is read
//      by other threads (its x windows, then its staging) until B_{i+1}, so iteration i
//      refills row i - 2's slot (its x part only; the staging part is rewritten at row
//      i - 2 + NS >= i + 1, after B_{i+1}). NS >= 3: the plan asks it through lag = 1.
// Slot layout (16-byte words): vpt * blockDim.x windows of x, then the staging of the row's
// ceil(D / VEC) groups (VEC sy / 16 words each).
// FV2_EMU_PLANT_ODD2PD / _ODD2Y: the emulation test's planted bugs (one more row in flight; y
// stored from the staging right after computing it, no barrier between).
#ifndef ADALOAD_FV2_ODD2_CUH
#define ADALOAD_FV2_ODD2_CUH

#include "lnmod_fwd_v2_kern.cuh"

namespace fv2 {

// The 16 bytes at byte offset s (0..15, a multiple of 2) of the 32 bytes lo:hi.
template <int O> __device__ __forceinline__ uint4 odd2_words(const unsigned (&w)[8], unsigned sh)
{
    return make_uint4(__funnelshift_r(w[O], w[O + 1], sh), __funnelshift_r(w[O + 1], w[O + 2], sh),
                      __funnelshift_r(w[O + 2], w[O + 3], sh), __funnelshift_r(w[O + 3], w[O + 4], sh));
}
__device__ __forceinline__ uint4 odd2_shift(uint4 lo, uint4 hi, int s)
{
    const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    const unsigned sh = (unsigned)(s & 3) * 8u;
    switch (s >> 2) { // uniform over the row: no divergence, no indexed (local-memory) read
    case 0: return odd2_words<0>(w, sh);
    case 1: return odd2_words<1>(w, sh);
    case 2: return odd2_words<2>(w, sh);
    default: return odd2_words<3>(w, sh);
    }
}

template <typename TX, typename TM, typename TY, int VPT> struct odd2_ctx {
    static constexpr int VEC = dt<TX>::VEC;
    static constexpr int YW = VEC * (int)sizeof(TY) / 16; // staging words a group (1 or 2)
    const lnmod_kparams &p;
    int t, T;
    int64_t nl;          // groups of a row
    int64_t m_end;       // first row past the modulation run in registers
    float g[VPT][VEC], b[VPT][VEC];

    __device__ odd2_ctx(const lnmod_kparams &p_) : p(p_), m_end(-1)
    {
        t = (int)threadIdx.x;
        T = (int)blockDim.x;
        nl = (p.D + VEC - 1) / VEC;
    }

    // (1 + scale) and shift of the thread's groups for modulation row m(r), when r left the run.
    __device__ __forceinline__ void mod_reg(int64_t r)
    {
        if (r < m_end) return;
        int64_t m;
        lnmod_mod_run(p, r, &m, &m_end);
        const TM *sc = static_cast<const TM *>(p.scale) + m * p.scale_stride;
        const TM *sh = static_cast<const TM *>(p.shift) + m * p.shift_stride;
#pragma unroll
        for (int q = 0; q < VPT; q++) {
            const int64_t j0 = (t + (int64_t)q * T) * VEC;
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const bool in = j0 + e < p.D;
                g[q][e] = in ? 1.0f + dt<TM>::to_f(__ldg(sc + j0 + e)) : 1.0f;
                b[q][e] = in ? dt<TM>::to_f(__ldg(sh + j0 + e)) : 0.0f;
            }
        }
    }

    // y of row r (x windows in slot, statistics hi, lo, rs) into the slot's staging, in
    // logical order.
    __device__ __forceinline__ void compute(const uint4 *slot, uint4 *stage, const odd_row<TX> &R, float hi, float lo,
                                            float rs)
    {
        const int s = (int)R.phase * (int)sizeof(TX);
        const float nlr = -lo * rs;
#pragma unroll
        for (int q = 0; q < VPT; q++) {
            const int64_t gi = t + (int64_t)q * T;
            if (gi < nl) {
                uint4 v = lnmod_lds16(slot + gi);
                if (s) {
                    const uint4 z = make_uint4(0, 0, 0, 0);
                    v = odd2_shift(v, gi + 1 < R.nw ? lnmod_lds16(slot + gi + 1) : z, s);
                }
                float f[VEC], o[VEC];
                dt<TX>::unpack(v, f);
#pragma unroll
                for (int e = 0; e < VEC; e++) o[e] = fmaf(fmaf(f[e] - hi, rs, nlr), g[q][e], b[q][e]);
                lnmod_store_n<TY, VEC>(reinterpret_cast<TY *>(stage + gi * YW), o);
            }
        }
    }

    // Row r's y from the staging to global memory: y's 16-byte windows (with y's own phase)
    // whole, the row's edge windows element by element.
    __device__ __forceinline__ void store(const uint4 *stage, int64_t r) const
    {
        constexpr int VY = 16 / (int)sizeof(TY);
        TY *yr = static_cast<TY *>(p.y) + r * p.D;
        const uintptr_t a = (uintptr_t)yr;
        const int64_t py = (int64_t)((a & 15u) / sizeof(TY));
        const int s = 16 - (int)(py * (int64_t)sizeof(TY)); // staging offset of y window w: 16 (w - 1) + s
        uint4 *first = reinterpret_cast<uint4 *>(a & ~(uintptr_t)15u);
        const int64_t nwy = fv2_odd_windows(p.D, VY, py);
        const TY *st = reinterpret_cast<const TY *>(stage);
        for (int64_t w = t; w < nwy; w += T) {
            const int64_t j0 = fv2_odd_elem(VY, py, w, 0);
            if (j0 >= 0 && j0 + VY <= p.D) {
                const uint4 v = py == 0 ? lnmod_lds16(stage + w) : odd2_shift(lnmod_lds16(stage + w - 1), lnmod_lds16(stage + w), s);
                lnmod_st_vec(first + w, v);
            } else {
                for (int e = 0; e < VY; e++)
                    if (j0 + e >= 0 && j0 + e < p.D) yr[j0 + e] = st[j0 + e];
            }
        }
    }
};

template <typename TX, typename TM, typename TY, int VPT>
__global__ void __launch_bounds__(512, 1) odd2_kernel(lnmod_kparams p, kcfg k)
{
#ifdef FV2_EMU
    part4(*parts)[16] = reinterpret_cast<part4(*)[16]>(emu::static_smem());
#else
    __shared__ part4 parts[2][16];
#endif
    using X = odd2_ctx<TX, TM, TY, VPT>;
    X cx(p);
    const int warp = threadIdx.x >> 5, W = blockDim.x >> 5;
    const int xwords = k.vpt * blockDim.x;
    const int64_t words = xwords + cx.nl * X::YW;
    const int64_t n = blockIdx.x < p.rows ? (p.rows - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
#ifdef FV2_EMU_PLANT_ODD2PD
    const int PD = k.NS - 1;
#else
    const int PD = k.NS - 2;
#endif
    for (int s = 0; s < PD; s++) {
        if (s < n) odd_issue<TX>(p, k, fv2_smem + (int64_t)s * words, blockIdx.x + s * (int64_t)gridDim.x);
        lnmod_cp_commit();
    }
    int si = 0, sn = PD % k.NS, sp = 0; // slots of rows i, i + PD and i - 1
    for (int64_t i = 0; i < n; i++) {
        cp_wait_rt(PD - 1);
        const int64_t r = blockIdx.x + i * gridDim.x;
        if (i + PD < n) odd_issue<TX>(p, k, fv2_smem + (int64_t)sn * words, r + PD * (int64_t)gridDim.x);
        lnmod_cp_commit();
        uint4 *slot = fv2_smem + (int64_t)si * words;
        const odd_row<TX> R(p, r);
        const part4 pt = odd_stats<TX>(p, k, slot, R);
        const int par = (int)(i & 1);
        if ((threadIdx.x & 31) == 0) parts[par][warp] = pt;
        __syncthreads(); // B_i: row i's parts and windows are all in; row i - 1's staging too
#ifndef FV2_EMU_PLANT_ODD2Y
        if (i > 0) cx.store(fv2_smem + (int64_t)sp * words + xwords, r - (int64_t)gridDim.x);
#endif
        float hi, lo, rs;
        merge_parts(parts[par], W, (float)p.D, p.eps, &hi, &lo, &rs);
        if (threadIdx.x == 0) {
            if (p.mean) p.mean[r] = hi + lo;
            if (p.rstd) p.rstd[r] = rs;
        }
        cx.mod_reg(r);
        cx.compute(slot, slot + xwords, R, hi, lo, rs);
#ifdef FV2_EMU_PLANT_ODD2Y
        cx.store(slot + xwords, r);
        (void)sp;
#endif
        sp = si;
        si = si + 1 == k.NS ? 0 : si + 1;
        sn = sn + 1 == k.NS ? 0 : sn + 1;
    }
#ifndef FV2_EMU_PLANT_ODD2Y
    if (n > 0) { // the last row's staging (uniform over the CTA: n is)
        __syncthreads();
        cx.store(fv2_smem + (int64_t)sp * words + xwords, blockIdx.x + (n - 1) * (int64_t)gridDim.x);
    }
#endif
}

} // namespace fv2

#endif
