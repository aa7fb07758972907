// lnmod_fwd_v2_kern.cuh -- dtile's forward v2 kernels: the tile kernel (compile-time VPT,
// modulation in registers or streamed through the ring), in lnmod_fwd_v2_odd.cuh the odd
// kernel (16-byte windows of x at absolute addresses) and in lnmod_fwd_v2_chunk.cuh the flat
// chunk kernel (chunks of rows by bulk copies). The plan and index math are in
// lnmod_fwd_v2_plan.h; the why in kernels/NOTES.md ("forward v2"). Included by
// lnmod_fwd_v2_inst.cuh only (one x dtype per translation unit). The FV2_EMU blocks are the
// CPU emulation's hooks (kernels/experiments/2026-12-02-fwd-v2/fv2_emu.h runs this very source
// on the CPU); the FV2_EMU_PLANT_* blocks its planted bugs. Neither is defined in a build.
#ifndef ADALOAD_LNMOD_FWD_V2_KERN_CUH
#define ADALOAD_LNMOD_FWD_V2_KERN_CUH

#include "lnmod_fwd_v2_plan.h"
#include "lnmod_common.cuh"
#include "lnmod_chunk_ring.cuh" // the flat chunk kernel's bulk copies and row sums

namespace fv2 {

using namespace lnmod_detail;
using namespace lnmod_chunk;

// Kernel arguments besides the descriptor's (lnmod_kparams).
struct kcfg {
    int64_t nv, nvc;
    int W, C, G, NS, vpt; // vpt: the odd kernel's windows a thread (the tile kernel's is a template)
    int NB;               // the lag path on one CTA (fv2_plan.nbar): 1 one __syncthreads a row (the
                          // rule), 0 a CTA-scope mbarrier (the experiment's comparison)
};

// One part of a row's statistics: pivot hi, mean offset lo, M2 around hi + lo, elements n.
struct part4 {
    float hi, lo, m2, n;
};

#ifdef FV2_EMU // the host emulation (fv2_emu.h): per-CTA shared memory and cluster state
#define fv2_smem (emu::smem())
__device__ __forceinline__ unsigned cluster_rank() { return emu::cluster_rank(); }
__device__ __forceinline__ void cluster_arrive() { emu::cluster_arrive(); }
__device__ __forceinline__ void cluster_wait() { emu::cluster_wait(); }
__device__ __forceinline__ void st_part_cluster(part4 *local, unsigned rank, part4 v) { *emu::map_rank(local, rank) = v; }
__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count) { emu::mbar_init(bar, count); }
__device__ __forceinline__ void mbar_arrive(uint64_t *bar) { emu::mbar_arrive(bar); }
__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity) { emu::mbar_wait(bar, parity); }
#else
extern __shared__ uint4 fv2_smem[];

// ---- cluster and mbarrier helpers (sm_90; below it they trap: the host launches no kernel
// that reaches them on a device without clusters, lnmod_fwd_v2.cu) -------------------------
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }
// Stores a part into the shared memory of CTA `rank` of the cluster (itself included).
__device__ __forceinline__ void st_part_cluster(part4 *local, unsigned rank, part4 v)
{
    unsigned la = (unsigned)__cvta_generic_to_shared(local), ra;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(la), "r"(rank));
    asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(ra), "f"(v.hi), "f"(v.lo), "f"(v.m2),
                 "f"(v.n)
                 : "memory");
}
// A CTA-scope mbarrier: the lag path's split barrier when a row is one CTA's. The cluster
// barrier's arrive.release orders every thread's earlier stores at cluster scope, which for
// the y just written to global memory means waiting until they reach L2, at every row;
// mbarrier.arrive releases at CTA scope (what it orders, the parts, is in shared memory).
__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(bar)), "r"(count)
                 : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t *bar)
{
    asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.shared::cta.b64 st, [%0];\n\t}" ::"r"(
                     (unsigned)__cvta_generic_to_shared(bar))
                 : "memory");
}
// Returns once the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity)
{
    const unsigned a = (unsigned)__cvta_generic_to_shared(bar);
    unsigned done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(a), "r"(parity)
                     : "memory");
    } while (!done);
}
#else
__device__ __forceinline__ unsigned cluster_rank()
{
    __trap();
    return 0;
}
__device__ __forceinline__ void cluster_arrive() { __trap(); }
__device__ __forceinline__ void cluster_wait() { __trap(); }
__device__ __forceinline__ void st_part_cluster(part4 *, unsigned, part4) { __trap(); }
__device__ __forceinline__ void mbar_init(uint64_t *, unsigned) { __trap(); }
__device__ __forceinline__ void mbar_arrive(uint64_t *) { __trap(); }
__device__ __forceinline__ void mbar_wait(uint64_t *, unsigned) { __trap(); }
#endif
#endif

// cp.async.wait_group with a run-time depth (uniform; the instruction needs an immediate).
__device__ __forceinline__ void cp_wait_rt(int n)
{
    switch (n) {
    case 0: lnmod_cp_wait<0>(); break;
    case 1: lnmod_cp_wait<1>(); break;
    case 2: lnmod_cp_wait<2>(); break;
    case 3: lnmod_cp_wait<3>(); break;
    case 4: lnmod_cp_wait<4>(); break;
    case 5: lnmod_cp_wait<5>(); break;
    default: lnmod_cp_wait<6>(); break;
    }
}

// Chan's merge of np parts with counts (part 0 has n > 0) around part 0's pivot.
__device__ __forceinline__ void merge_parts(const part4 *P, int np, float D, float eps, float *hi, float *lo, float *rs)
{
    const float piv = P[0].hi;
    float acc = 0.0f;
    for (int i = 0; i < np; i++)
        if (P[i].n > 0.0f) acc = fmaf(P[i].n, (P[i].hi - piv) + P[i].lo, acc);
    const float l = acc / D;
    float m = 0.0f;
    for (int i = 0; i < np; i++)
        if (P[i].n > 0.0f) {
            const float e = ((P[i].hi - piv) + P[i].lo) - l;
            m += P[i].m2 + P[i].n * e * e;
        }
    *hi = piv;
    *lo = l;
    *rs = lnmod_rstd(m, D, eps);
}

// A warp's part from its sums around pivot hw: c = sum d, q = sum d^2 over nw elements.
__device__ __forceinline__ part4 make_part(float hw, float c, float q, float nw)
{
    part4 r;
    r.hi = hw;
    r.lo = nw > 0.0f ? c / nw : 0.0f;
    r.m2 = nw > 0.0f ? fmaxf(fmaf(-c, r.lo, q), 0.0f) : 0.0f;
    r.n = nw;
    return r;
}

// ---- the tile kernel -------------------------------------------------------------------
template <typename TX, typename TM, bool RING> struct tile_traits {
    static constexpr int VEC = dt<TX>::VEC;
    static constexpr int MV = RING ? (int)(VEC * sizeof(TM) / 16) : 0; // 16-byte words of scale a vector
    static constexpr int TME = 16 / (int)sizeof(TM);                  // TM elements a word
};

template <typename TX, typename TM, typename TY, int VPT, bool RING> struct tile_ctx {
    using TT = tile_traits<TX, TM, RING>;
    static constexpr int VEC = TT::VEC, MV = TT::MV;
    const lnmod_kparams &p;
    const kcfg &k;
    uint4 *ring; // this group's slots
    int t, T, c; // thread of the group, threads of the group, CTA of the cluster
    int slot_words;
    unsigned valid;  // bit k: vector k of this thread exists
    int64_t v0;      // vector index at k = 0
    float nw;        // elements this warp owns of a row
    int64_t m_end;   // REG: first row past the current modulation run
    float g[RING ? 1 : VPT][VEC], b[RING ? 1 : VPT][VEC];

    __device__ tile_ctx(const lnmod_kparams &p_, const kcfg &k_, uint4 *ring_, int t_, int T_, int c_)
        : p(p_), k(k_), ring(ring_), t(t_), T(T_), c(c_), m_end(-1)
    {
        slot_words = VPT * T * (1 + 2 * MV);
        v0 = (int64_t)c * k.nvc + t;
        const int64_t end = (int64_t)(c + 1) * k.nvc < k.nv ? (int64_t)(c + 1) * k.nvc : k.nv;
        valid = 0;
        int mine = 0;
#pragma unroll
        for (int q = 0; q < VPT; q++)
            if (v0 + (int64_t)q * T < end) {
                valid |= 1u << q;
                mine += VEC;
            }
        nw = (float)lnmod_warp_sum_i64(mine);
    }
    __device__ __forceinline__ uint4 *slot(int s) const { return ring + (int64_t)s * slot_words; }

    __device__ __forceinline__ void issue(int s, int64_t r) const
    {
        uint4 *dst = slot(s) + t;
        const TX *xr = static_cast<const TX *>(p.x) + r * p.D + v0 * VEC;
#pragma unroll
        for (int q = 0; q < VPT; q++)
            if (valid >> q & 1) lnmod_cp_async16(dst + q * T, xr + (int64_t)q * T * VEC);
        if constexpr (RING) {
            const int64_t m = lnmod_mod_row(p, r);
            const TM *sc = static_cast<const TM *>(p.scale) + m * p.scale_stride + v0 * VEC;
            const TM *sh = static_cast<const TM *>(p.shift) + m * p.shift_stride + v0 * VEC;
#pragma unroll
            for (int q = 0; q < VPT; q++)
                if (valid >> q & 1)
#pragma unroll
                    for (int w = 0; w < MV; w++) {
                        lnmod_cp_async16(dst + (VPT + q * MV + w) * T, sc + (int64_t)q * T * VEC + w * TT::TME);
                        lnmod_cp_async16(dst + (VPT * (1 + MV) + q * MV + w) * T, sh + (int64_t)q * T * VEC + w * TT::TME);
                    }
        }
    }

    // The warp's part of the row in slot s: one pass around lane 0's first element, a second
    // around the pass's mean when that pivot was far from it (warp-uniform decision).
    __device__ __forceinline__ part4 stats(int s) const
    {
        const uint4 *src = slot(s) + t;
        float f[VEC];
        dt<TX>::unpack(lnmod_lds16(src), f); // lane 0's vector 0 exists when the warp owns any
        float hw = __shfl_sync(0xffffffffu, f[0], 0);
        float cs[2] = {0.0f, 0.0f}, qs[2] = {0.0f, 0.0f};
#pragma unroll
        for (int q = 0; q < VPT; q++)
            if (valid >> q & 1) {
                if (q) dt<TX>::unpack(lnmod_lds16(src + q * T), f);
#pragma unroll
                for (int e = 0; e < VEC; e++) {
                    const float d = f[e] - hw;
                    cs[e & 1] += d;
                    qs[e & 1] = fmaf(d, d, qs[e & 1]);
                }
            }
        float cc = cs[0] + cs[1], qq = qs[0] + qs[1];
        lnmod_warp_sum2(cc, qq);
        const float lw = nw > 0.0f ? cc / nw : 0.0f;
        if (cc * lw > 0.888f * qq) { // n (mean - hw)^2 > ~7.9 M2: repeat around hw + lw
            hw += lw;
            float c2 = 0.0f, q2 = 0.0f;
#pragma unroll
            for (int q = 0; q < VPT; q++)
                if (valid >> q & 1) {
                    dt<TX>::unpack(lnmod_lds16(src + q * T), f);
#pragma unroll
                    for (int e = 0; e < VEC; e++) {
                        const float d = f[e] - hw;
                        c2 += d;
                        q2 = fmaf(d, d, q2);
                    }
                }
            lnmod_warp_sum2(c2, q2);
            cc = c2;
            qq = q2;
        }
        return make_part(hw, cc, qq, nw);
    }

    // REG: (1 + scale) and shift of modulation row m(r) when r left the current run.
    __device__ __forceinline__ void mod_reg(int64_t r)
    {
        if constexpr (!RING) {
            if (r < m_end) return;
            int64_t m;
            lnmod_mod_run(p, r, &m, &m_end);
            const TM *sc = static_cast<const TM *>(p.scale) + m * p.scale_stride + v0 * VEC;
            const TM *sh = static_cast<const TM *>(p.shift) + m * p.shift_stride + v0 * VEC;
#pragma unroll
            for (int q = 0; q < VPT; q++)
                if (valid >> q & 1) {
                    lnmod_load_n<TM, VEC>(sc + (int64_t)q * T * VEC, g[q]);
                    lnmod_load_n<TM, VEC>(sh + (int64_t)q * T * VEC, b[q]);
#pragma unroll
                    for (int e = 0; e < VEC; e++) g[q][e] = 1.0f + g[q][e];
                }
        }
    }

    // y of the row r in slot s with its statistics: ((x - hi) - lo) * rs * (1 + scale) + shift.
    __device__ __forceinline__ void output(int s, int64_t r, float hi, float lo, float rs, bool writer)
    {
        if (writer) {
            if (p.mean) p.mean[r] = hi + lo;
            if (p.rstd) p.rstd[r] = rs;
        }
        mod_reg(r);
        const uint4 *src = slot(s) + t;
        TY *yr = static_cast<TY *>(p.y) + r * p.D + v0 * VEC;
        const float nlr = -lo * rs;
#pragma unroll
        for (int q = 0; q < VPT; q++)
            if (valid >> q & 1) {
                float f[VEC], o[VEC];
                dt<TX>::unpack(lnmod_lds16(src + q * T), f);
                if constexpr (RING) {
                    float gs[VEC], bs[VEC];
#pragma unroll
                    for (int w = 0; w < MV; w++) {
                        dt<TM>::unpack(lnmod_lds16(src + (VPT + q * MV + w) * T), gs + w * TT::TME);
                        dt<TM>::unpack(lnmod_lds16(src + (VPT * (1 + MV) + q * MV + w) * T), bs + w * TT::TME);
                    }
#pragma unroll
                    for (int e = 0; e < VEC; e++) o[e] = fmaf(fmaf(f[e] - hi, rs, nlr), 1.0f + gs[e], bs[e]);
                } else {
#pragma unroll
                    for (int e = 0; e < VEC; e++) o[e] = fmaf(fmaf(f[e] - hi, rs, nlr), g[q][e], b[q][e]);
                }
                lnmod_store_n<TY, VEC>(yr + (int64_t)q * T * VEC, o);
            }
    }
};

// Row i of a group: gid + i*NG. W = C = 1: G independent warps per CTA, no barrier. Else one
// group per CTA, C CTAs per row, statistics one row ahead, parts through a cluster barrier.
template <typename TX, typename TM, typename TY, int VPT, bool RING>
__global__ void __launch_bounds__(256, 1) tile_kernel(lnmod_kparams p, kcfg k)
{
    const bool solo = k.W * k.C == 1;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int c = solo ? 0 : (int)cluster_rank();
    const int g = solo ? warp : 0, T = solo ? 32 : (int)blockDim.x, t = solo ? lane : (int)threadIdx.x;
    const int64_t gid = solo ? (int64_t)blockIdx.x * k.G + g : (int64_t)blockIdx.x / k.C;
    const int64_t NG = solo ? (int64_t)gridDim.x * k.G : (int64_t)gridDim.x / k.C;
    using X = tile_ctx<TX, TM, TY, VPT, RING>;
    const int words = VPT * T * (1 + 2 * X::MV);
    X cx(p, k, fv2_smem + (int64_t)g * k.NS * words, t, T, c);
    // The parts of three rows' statistics (lag path only) follow the ring, at the same offset
    // in every CTA of the cluster (mapa addresses them there).
    part4(*parts)[FV2_MAX_PARTS] = reinterpret_cast<part4(*)[FV2_MAX_PARTS]>(fv2_smem + (int64_t)k.NS * words);
    // One CTA a row (C == 1): the parts meet behind one __syncthreads a row (NB 1: the CTA is
    // the row's W warps) or a CTA-scope mbarrier (NB 0: a phase a row, one arrival a warp: its
    // lane 0 wrote the warp's part). Clusters: the cluster barrier. Why not a named barrier
    // (bar.sync ID, count): a kernel that names one reserves barriers for every CTA of every
    // launch -- with a run-time ID all 16 -- and that cut the resident CTAs of the warp-a-row
    // plans, which share this kernel (H100, 2026-12-05: D 256 2.5x, D 1408 1.3x slower).
    // racecheck follows __syncthreads, not the mbarrier (the experiment's rounds 2-3).
    uint64_t *bar = reinterpret_cast<uint64_t *>(parts + 3);
    if (k.C > 1) { // every CTA of the cluster runs before any writes into another's memory
        cluster_arrive();
        cluster_wait();
    } else if (!solo && !k.NB) {
        if (threadIdx.x == 0) mbar_init(bar, (unsigned)k.W);
        __syncthreads();
    }
    const int64_t n = gid < p.rows ? (p.rows - gid + NG - 1) / NG : 0;
    if (n == 0) return; // uniform over the group (and the cluster)
    const int lag = solo ? 0 : 1, PD = k.NS - 1 - lag;
    for (int s = 0; s < PD; s++) {
        if (s < n) cx.issue(s, gid + s * NG);
        lnmod_cp_commit();
    }
    // Slots and parts buffers by counters (no 64-bit remainders in the row loop): row i sits
    // in slot si, row i + PD goes to slot sn, row i - 1 sat in slot sp and parts buffer bp.
    int si = 0, sn = PD % k.NS, sp = k.NS - 1, bi = 0, bp = 2;
    int64_t r = gid, rn = gid + (int64_t)PD * NG;
    for (int64_t i = 0; i < n; i++, r += NG, rn += NG) {
#ifdef FV2_EMU_PLANT_WAIT // the emulation test's planted bug: one group too many left in flight
        cp_wait_rt(PD);
#else
        cp_wait_rt(PD - 1); // row i landed
#endif
        if (i + PD < n) cx.issue(sn, rn);
        lnmod_cp_commit();
        const part4 pt = cx.stats(si);
        if (solo) {
            float hi, lo, rs;
            merge_parts(&pt, 1, (float)p.D, p.eps, &hi, &lo, &rs);
            cx.output(si, r, hi, lo, rs, lane == 0);
        } else {
            if (k.C > 1) {
                if (i > 0) cluster_wait(); // row i-1's parts are all in
                if (lane == 0)
                    for (int cc = 0; cc < k.C; cc++) st_part_cluster(&parts[bi][c * k.W + warp], (unsigned)cc, pt);
                cluster_arrive();
            } else if (k.NB) { // every warp behind one barrier a row: row i's parts all in after it
                if (lane == 0) parts[bi][warp] = pt;
#ifndef FV2_EMU_PLANT_NBAR // the emulation test's planted bug: no barrier (warps run rows apart)
                __syncthreads();
#endif
            } else {
                if (i > 0) mbar_wait(bar, (unsigned)((i - 1) & 1)); // row i-1's phase: its parts are all in
                // Every lane past that wait before the warp arrives for row i: else a lane still
                // to test row i-1's parity could see it again, flipped back by row i's phase.
                __syncwarp();
                if (lane == 0) {
                    parts[bi][warp] = pt;
                    mbar_arrive(bar);
                }
            }
            if (i > 0) {
                float hi, lo, rs;
#ifdef FV2_EMU_PLANT_LAG // the emulation test's planted bug: this row's parts, not row i-1's
                merge_parts(parts[bi], k.W * k.C, (float)p.D, p.eps, &hi, &lo, &rs);
#else
                merge_parts(parts[bp], k.W * k.C, (float)p.D, p.eps, &hi, &lo, &rs);
#endif
                cx.output(sp, r - NG, hi, lo, rs, c == 0 && threadIdx.x == 0);
            }
        }
        sp = si;
        si = si + 1 == k.NS ? 0 : si + 1;
        sn = sn + 1 == k.NS ? 0 : sn + 1;
        bp = bi;
        bi = bi == 2 ? 0 : bi + 1;
    }
    if (!solo) { // the last row's output: its parts (buffer bp) after the last arrive
        if (k.C > 1) {
            cluster_wait();
        } else if (!k.NB) {
            mbar_wait(bar, (unsigned)((n - 1) & 1));
        } // NB 1: the last row's barrier was its loop's
        float hi, lo, rs;
        merge_parts(parts[bp], k.W * k.C, (float)p.D, p.eps, &hi, &lo, &rs);
        cx.output(sp, r - NG, hi, lo, rs, c == 0 && threadIdx.x == 0);
    }
}

#include "lnmod_fwd_v2_odd.cuh"
#include "lnmod_fwd_v2_chunk.cuh"

} // namespace fv2

#endif
