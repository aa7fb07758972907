// bv2_kernel.cuh -- the dtile backward v2 kernel (experiment) and its launch templates, for
// bv2.cu (round 1's configurations) and bv2_r2.cu (round 2's). Device pieces: bv2_dev.cuh.
//
// Per group (T threads, thread t owns vectors t, t + T, ...: v1's row shape):
//   * its own ring of NS stages (x, dy, mean/rstd of one row per stage), NS - 1 rows ahead,
//     filled either by each thread's cp.async of its own slots (BULK false, round 1) or by
//     the bulk copy engine on the elected thread's request (BULK true, bv2_dev.cuh);
//   * per row: a = sum g, b = sum g*xhat (g = dy*(1 + scale)), a warp butterfly, one
//     exchange through shared memory with a named barrier of the group's T threads (ids
//     1..G; none when T = 32), then dx = fma(xhat, -rs*b/D, fma(g, rs, -rs*a/D)), one
//     rounding; the column sums dy*xhat and dy of its rows in registers;
//   * at a chunk's end the G groups' column sums meet in shared memory in the order
//     0 + 1 + .. + (G-1) (2(G-1) CTA barriers per chunk), and group 0 writes them (final
//     values when the group is one chunk, else the partials lnmod_bwd_finalize adds).
// The walk per thread is (chunk, share) with 32-bit rows; 64-bit only in addresses.
// MAXT: the CTA's thread cap for __launch_bounds__(MAXT, 1): 768 gives 80 registers a thread,
// 960 gives 64. TC (round 2's "t" kernels): the group's thread count as a compile-time
// constant, launched only where TC x VPT vectors are exactly the row (no per-vector guards,
// slot addresses and the exchange's warp loop folded by the compiler); 0: run-time T.
#ifndef ADALOAD_BV2_KERNEL_CUH
#define ADALOAD_BV2_KERNEL_CUH

#include "bv2_dev.cuh"

namespace {

// float2 statistics slots of a CTA: per thread and stage (cp.async) or per group and stage
// (bulk), rounded up to 16 bytes so that the combine buffer after them is float4-aligned.
__host__ __device__ constexpr int bv2_stat_slots(int G, int NS, int T, bool bulk)
{
    return bulk ? (G * NS + 1) / 2 * 2 : G * NS * T;
}

template <typename TX, typename TM, typename TY, int VPT, int NS, int G, bool HOLD, bool BULK, int MAXT, int TC = 0>
__global__ void __launch_bounds__(MAXT, 1) bv2_kernel(bv2_kp k)
{
    using C = bv2_cfg<TX, TY, VPT>;
    constexpr int VEC = C::VEC;
    constexpr bool SPS = G > 1 && VPT * VEC >= 16;
    static_assert(!(HOLD && BULK), "HOLD reads the cp.async ring's layout");
    static_assert(NS >= 2, "ring depth");
    extern __shared__ uint4 bv2_smem[];
    __shared__ float2 red[2][G][BV2_MAX_NW];
    __shared__ uint64_t full[BULK ? G * NS : 1]; // bulk: one mbarrier per group and stage
    constexpr bool FULL = TC != 0;
    const int T = TC ? TC : (int)blockDim.x / G, gq = (int)threadIdx.x / T, tid = (int)threadIdx.x - gq * T;
    uint4 *ring = bv2_smem + gq * NS * C::SLOTS * T;
    float2 *stats0 = reinterpret_cast<float2 *>(bv2_smem + G * NS * C::SLOTS * T);
    float2 *stats = stats0 + gq * NS * (BULK ? 1 : T);
    float *cmb = reinterpret_cast<float *>(stats0 + bv2_stat_slots(G, NS, T, BULK));
    float *sps = k.alias ? cmb : cmb + (G > 1 ? T * VPT * VEC * 2 : 0); // SPS: (1 + scale), D floats
    uint64_t *bar = full + (BULK ? gq * NS : 0);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion(); // the finalize may be scheduled from now on
#endif
    if constexpr (BULK) {
        if (threadIdx.x == 0) {
            for (int i = 0; i < G * NS; i++) bv2_mbar_init(&full[i], 2);
            bv2_fence_proxy_async(); // the initialised barriers, seen by the copy engine
        }
        __syncthreads();
    }
    const bv2_plan &pl = k.pl;
    const bool issuer = !BULK || tid == 0; // who fills the group's ring
    bv2_cur pre;
    pre.c = (int32_t)blockIdx.x;
    pre.ok = false;
    if (issuer) bv2_seek(pl, pre, gq, G);
    for (int j = 0; j < NS - 1; j++) { // prologue (cp.async: one commit group per stage, empty or not)
        if (pre.ok) {
            if constexpr (BULK)
                bv2_bulk_issue<TX, TY, VPT>(k, ring, stats, bar, j, pre.r, T);
            else
                bv2_issue<TX, TY, VPT>(k, ring, stats, j, pre.r, T, tid);
            bv2_next(pl, pre, gq, G);
        }
        if constexpr (!BULK) lnmod_cp_commit();
    }
    float as[VPT][VEC], ah[VPT][VEC], sp[VPT][VEC];
#pragma unroll
    for (int q = 0; q < VPT; q++)
#pragma unroll
        for (int e = 0; e < VEC; e++) as[q][e] = ah[q][e] = sp[q][e] = 0.0f;
    int64_t g_loaded = -1;
    int slot = 0, par = 0;
    uint32_t phase = 0; // bulk: parity of the current use of stage `slot`
    for (int32_t c = (int32_t)blockIdx.x; c < pl.nchunks; c += (int32_t)gridDim.x) { // uniform
        int64_t g, r0, n;
        bv2_chunk_rows(&pl, c, &g, &r0, &n);
        if (n == 0) continue; // uniform: no group has a row (no partial is read for it)
        int32_t r, step, cnt;
        bv2_share(&pl, r0, n, gq, G, &r, &step, &cnt);
        if (g != g_loaded) {
            g_loaded = g;
            if constexpr (SPS)
                bv2_load_scale_smem<TM>(k, g, sps);
            else
                bv2_load_scale<TM, VEC, VPT>(k, g, T, tid, sp);
        }
        for (int32_t j = 0; j < cnt; j++, r += step) {
            const int s0 = slot == 0 ? NS - 1 : slot - 1; // the previous row's stage
            if constexpr (BULK) {
                bv2_mbar_wait(bar + slot, phase); // this row's stage has landed
            } else {
                lnmod_cp_wait<NS - 2>(); // this row's stage has landed
                if (pre.ok) { // refill the previous row's stage with the row NS - 1 ahead
                    bv2_issue<TX, TY, VPT>(k, ring, stats, s0, pre.r, T, tid);
                    bv2_next(pl, pre, gq, G);
                }
                lnmod_cp_commit();
            }
            const float2 ms = BULK ? stats[slot] : stats[slot * T + tid];
            auto mid = [&]() {
                if constexpr (BULK) {
                    if (pre.ok) { // only the issuer's walk is ever ok
                        if (k.fence) bv2_fence_proxy_async();
                        bv2_bulk_issue<TX, TY, VPT>(k, ring, stats, bar, s0, pre.r, T);
                        bv2_next(pl, pre, gq, G);
                    }
                }
            };
            bv2_row<TX, TY, VPT, G, SPS, HOLD, BULK, FULL>(k, ring + slot * C::SLOTS * T + tid, ms, r, gq, T, tid, red,
                                                     par, sp, sps, as, ah, mid);
            slot = slot + 1 == NS ? 0 : slot + 1;
            if (slot == 0) phase ^= 1u;
            par ^= 1;
        }
        if constexpr (G > 1) {
            bv2_combine<VPT, VEC, G>(cmb, gq, T, tid, as, ah);
            if (k.alias) g_loaded = -1; // the combine overwrote (1 + scale)
        }
        if (gq == 0) {
#pragma unroll
            for (int q = 0; q < VPT; q++) {
                const int v = tid + q * T;
                if (FULL || v < k.nv) lnmod_bwd_flush<TM, VEC, true>(k.p, c, g, (int64_t)v * VEC, as[q], ah[q]);
            }
        }
#pragma unroll
        for (int q = 0; q < VPT; q++)
#pragma unroll
            for (int e = 0; e < VEC; e++) as[q][e] = ah[q][e] = 0.0f;
    }
}

// ---- host side ------------------------------------------------------------------------
// Shared memory of a CTA: G rings of NS stages, their statistics, the combine buffer and
// (SPS) the (1 + scale) row, which shares the combine buffer when alias is set.
static size_t bv2_smem_bytes(int G, int NS, int T, int slots, int vpt, int vec, int D, bool bulk, bool alias)
{
    const bool sps = G > 1 && vpt * vec >= 16; // as bv2_kernel's SPS
    const size_t cmb = G > 1 ? (size_t)T * vpt * vec * 8 : 0, spb = sps ? (size_t)D * 4 : 0;
    return (size_t)G * NS * T * 16 * slots + (size_t)bv2_stat_slots(G, NS, T, bulk) * 8 +
           (alias && sps ? (cmb > spb ? cmb : spb) : cmb + spb);
}

// The kernel's CTAs per SM with `smem` bytes of dynamic shared memory (0: it does not fit,
// its static shared memory included, or the CTA exceeds what its registers allow); sets the
// kernel's shared-memory attributes only when it fits, so that no failed call leaves an error
// for the launch check to find.
template <typename K> static lnmod_status bv2_occupancy(K kern, int threads, size_t smem, int *per_sm)
{
    *per_sm = 0;
    cudaFuncAttributes fa;
    int dev = 0, optin = 0;
    if (cudaFuncGetAttributes(&fa, kern) != cudaSuccess || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (smem + fa.sharedSizeBytes > (size_t)optin || threads > fa.maxThreadsPerBlock) return LNMOD_OK;
    // All of the unified L1/shared memory as shared memory where it helps a second CTA fit
    // (v1 left the carveout to the driver; ncu saw 2 CTAs/SM limited by shared memory).
    if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess ||
        cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                             (int)cudaSharedmemCarveoutMaxShared) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kern, threads, smem) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    return LNMOD_OK;
}

template <typename TX, typename TM, typename TY, int VPT, int NS, int G, bool HOLD, bool BULK, int MAXT, int TC = 0>
lnmod_status bv2_go(const bv2_kp &k, int T, size_t smem, cudaStream_t stream, bv2_info *info, bool *ran)
{
    auto kern = bv2_kernel<TX, TM, TY, VPT, NS, G, HOLD, BULK, MAXT, TC>;
    if (TC && (T != TC || TC * VPT != k.nv)) return LNMOD_OK; // the fixed shape does not fit
    int sms = 1, per_sm = 0;
    lnmod_status st = bv2_occupancy(kern, G * T, smem, &per_sm);
    if (st != LNMOD_OK) return st;
    st = lnmod_sm_count(&sms);
    if (st != LNMOD_OK) return st;
    if (per_sm < 1) return LNMOD_OK; // *ran stays false: v1 takes it
    int64_t grid = (int64_t)per_sm * sms;
    if (grid > k.pl.nchunks) grid = k.pl.nchunks;
    kern<<<(unsigned)grid, (unsigned)(G * T), smem, stream>>>(k);
    *ran = true;
    if (info) {
        info->path = 2;
        info->threads = T;
        info->vpt = VPT;
        info->stages = NS;
        info->grid = (int)grid;
        info->cpg = k.pl.cpg;
        info->per_sm = per_sm;
        info->smem = (int)smem;
    }
    st = lnmod_launch_status();
    return st != LNMOD_OK ? st : lnmod_bwd_finalize<TM>(k.p, stream);
}

static lnmod_status bv2_smem_cap(size_t *cap)
{
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    *cap = (size_t)optin - 2048; // room for the static exchange buffer and the mbarriers
    return LNMOD_OK;
}

// Round 1's ring depth: G = 1 as v1 (8 stages where they fit 110 KB, else 4); G > 1: 4, else
// 3, in the device's shared memory for one CTA.
template <typename TX, typename TM, typename TY, int VPT, int G, bool HOLD>
lnmod_status bv2_stages(const bv2_kp &k, int T, cudaStream_t stream, bv2_info *info, bool *ran)
{
    using C = bv2_cfg<TX, TY, VPT>;
    constexpr int M = bv2_max_threads<G>();
    size_t cap = 0;
    lnmod_status st = bv2_smem_cap(&cap);
    if (st != LNMOD_OK) return st;
    const size_t s8 = bv2_smem_bytes(G, 8, T, C::SLOTS, VPT, C::VEC, k.D, false, false);
    const size_t s4 = bv2_smem_bytes(G, 4, T, C::SLOTS, VPT, C::VEC, k.D, false, false);
    const size_t s3 = bv2_smem_bytes(G, 3, T, C::SLOTS, VPT, C::VEC, k.D, false, false);
    if constexpr (G == 1) {
        if (s8 <= 110 * 1024 && s8 <= cap) return bv2_go<TX, TM, TY, VPT, 8, G, HOLD, false, M>(k, T, s8, stream, info, ran);
        if (s4 <= cap) return bv2_go<TX, TM, TY, VPT, 4, G, HOLD, false, M>(k, T, s4, stream, info, ran);
    } else {
        if (s4 <= cap) return bv2_go<TX, TM, TY, VPT, 4, G, HOLD, false, M>(k, T, s4, stream, info, ran);
        if (s3 <= cap) return bv2_go<TX, TM, TY, VPT, 3, G, HOLD, false, M>(k, T, s3, stream, info, ran);
    }
    return LNMOD_OK;
}

// Round 2's ring depth: of NS = 4, 3, 2 (the (1 + scale) row sharing the combine buffer),
// the one with the most CTAs per SM, the deeper on a tie (G = 4 at 96 threads x 16 elements:
// 3 stages give 2 CTAs of 12 warps where 4 give one).
template <typename TX, typename TM, typename TY, int VPT, int G, bool BULK, int MAXT, int TC = 0>
lnmod_status bv2_stages_occ(bv2_kp k, int T, cudaStream_t stream, bv2_info *info, bool *ran)
{
    using C = bv2_cfg<TX, TY, VPT>;
    size_t cap = 0;
    lnmod_status st = bv2_smem_cap(&cap);
    if (st != LNMOD_OK) return st;
    if (G * T > MAXT || (TC && (T != TC || TC * VPT != k.nv))) return LNMOD_OK;
    k.alias = G > 1 && VPT * C::VEC >= 16;
    size_t sm[5] = {0, 0, 0, 0, 0};
    int occ[5] = {0, 0, 0, 0, 0}, best = 0;
    for (int ns = 4; ns >= 2; ns--) sm[ns] = bv2_smem_bytes(G, ns, T, C::SLOTS, VPT, C::VEC, k.D, BULK, k.alias != 0);
    if (sm[4] <= cap) st = bv2_occupancy(bv2_kernel<TX, TM, TY, VPT, 4, G, false, BULK, MAXT, TC>, G * T, sm[4], &occ[4]);
    if (st == LNMOD_OK && sm[3] <= cap)
        st = bv2_occupancy(bv2_kernel<TX, TM, TY, VPT, 3, G, false, BULK, MAXT, TC>, G * T, sm[3], &occ[3]);
    if (st == LNMOD_OK && sm[2] <= cap)
        st = bv2_occupancy(bv2_kernel<TX, TM, TY, VPT, 2, G, false, BULK, MAXT, TC>, G * T, sm[2], &occ[2]);
    if (st != LNMOD_OK) return st;
    for (int ns = 4; ns >= 2; ns--)
        if (occ[ns] > occ[best]) best = ns;
    switch (best) {
    case 4: return bv2_go<TX, TM, TY, VPT, 4, G, false, BULK, MAXT, TC>(k, T, sm[4], stream, info, ran);
    case 3: return bv2_go<TX, TM, TY, VPT, 3, G, false, BULK, MAXT, TC>(k, T, sm[3], stream, info, ran);
    case 2: return bv2_go<TX, TM, TY, VPT, 2, G, false, BULK, MAXT, TC>(k, T, sm[2], stream, info, ran);
    default: return LNMOD_OK;
    }
}

// Are 16-byte vectors possible for this dtype triple, and the bulk copies' 16-byte
// alignment of every row of x and dy (D a multiple of VEC and the vector check)?
template <typename TX, typename TM, typename TY>
static inline bool bv2_vectors_ok(const bv2_kp &k)
{
    return lnmod_bwd_vector_ok<TX, TM, TY>(k.p);
}

} // namespace

#endif
