// bv2.cu -- dtile backward v2 (experiment): G warp groups per CTA share a chunk, a 32-bit
// row walk, v2's chunk plan (bv2_plan.h). The contract and what falls back: bv2.h.
//
// Per group (T threads, thread t owns vectors t, t + T, ...: v1's row shape):
//   * its own cp.async ring of NS stages (x, dy, mean/rstd of one row per stage; each thread
//     copies and reads back only its own slots, as in v1), NS - 1 rows ahead;
//   * per row: a = sum g, b = sum g*xhat (g = dy*(1 + scale)), a warp butterfly, one
//     exchange through shared memory with a named barrier of the group's T threads (ids
//     1..G; none when T = 32), then dx = fma(xhat, -rs*b/D, fma(g, rs, -rs*a/D)), one
//     rounding; the column sums dy*xhat and dy of its rows in registers;
//   * at a chunk's end the G groups' column sums meet in shared memory in the order
//     0 + 1 + .. + (G-1) (2(G-1) CTA barriers per chunk), and group 0 writes them (final
//     values when the group is one chunk, else the partials lnmod_bwd_finalize adds).
// The walk per thread is (chunk, share) with 32-bit rows; 64-bit only in addresses.
#include "bv2.h"

#include "bv2_plan.h"
#include "lnmod_bwd_common.cuh"

namespace {

using namespace lnmod_detail;

constexpr int BV2_MAX_E = 16;    // elements per thread at most (v1's register budget)
constexpr int BV2_MAX_NW = 16;   // warps per group at most (T <= 512)

// CTA threads at most: __launch_bounds__ and the per-group thread cap 768 / G (G >= 2), so
// that ptxas keeps a CTA of G groups within the register file (80 registers a thread).
template <int G> constexpr int bv2_max_threads() { return G == 1 ? 512 : 768; }

template <typename TX, typename TY, int VPT> struct bv2_cfg {
    static constexpr int VEC = dt<TX>::VEC;
    static constexpr int DYW = VEC * (int)sizeof(TY) / 16; // 16-byte pieces of a dy vector
    static constexpr int SLOTS = VPT * (1 + DYW);          // per thread and stage
    static_assert(VPT * VEC <= BV2_MAX_E, "register budget");
};

struct bv2_kp {
    lnmod_bparams p;
    bv2_plan pl;
    int32_t D, nv;
};

// The prefetcher's walk over one group's rows: chunks blockIdx.x, + gridDim.x, ... whose
// share for this group is not empty, each share in row order.
struct bv2_cur {
    int32_t c, r, step, left;
    bool ok;
};

__device__ __forceinline__ void bv2_seek(const bv2_plan &pl, bv2_cur &q, int gq, int G)
{
    for (; q.c < pl.nchunks; q.c += (int32_t)gridDim.x) {
        int64_t g, r0, n;
        bv2_chunk_rows(&pl, q.c, &g, &r0, &n);
        int32_t cnt;
        bv2_share(&pl, r0, n, gq, G, &q.r, &q.step, &cnt);
        if (cnt > 0) {
            q.left = cnt;
            q.ok = true;
            return;
        }
    }
    q.ok = false;
}

__device__ __forceinline__ void bv2_next(const bv2_plan &pl, bv2_cur &q, int gq, int G)
{
    if (--q.left > 0) {
        q.r += q.step;
    } else {
        q.c += (int32_t)gridDim.x;
        bv2_seek(pl, q, gq, G);
    }
}

// Row r into stage s of this group's ring ([SLOTS][T] uint4 per stage; statistics in
// float2 [NS][T] after the group's stages).
template <typename TX, typename TY, int VPT>
__device__ __forceinline__ void bv2_issue(const bv2_kp &k, uint4 *ring, float2 *stats, int s,
                                          int32_t r, int T, int tid)
{
    using C = bv2_cfg<TX, TY, VPT>;
    uint4 *base = ring + s * C::SLOTS * T + tid;
    const TX *xr = static_cast<const TX *>(k.p.x) + (int64_t)r * k.D;
    const char *yr = reinterpret_cast<const char *>(static_cast<const TY *>(k.p.dy) + (int64_t)r * k.D);
#pragma unroll
    for (int q = 0; q < VPT; q++) {
        const int v = tid + q * T;
        if (v < k.nv) {
            lnmod_cp_async16(base + q * T, xr + v * C::VEC);
#pragma unroll
            for (int w = 0; w < C::DYW; w++)
                lnmod_cp_async16(base + (VPT + q * C::DYW + w) * T,
                                 yr + (v * C::VEC) * (int)sizeof(TY) + 16 * w);
        }
    }
    float2 *st = stats + s * T + tid;
    const unsigned sa = (unsigned)__cvta_generic_to_shared(&st->x);
    const unsigned sb = (unsigned)__cvta_generic_to_shared(&st->y);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(sa), "l"(k.p.mean + r) : "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(sb), "l"(k.p.rstd + r) : "memory");
}

template <typename TX, typename TY, int VPT>
__device__ __forceinline__ void bv2_read(const uint4 *base, int q, int T, float *xf, float *gf)
{
    using C = bv2_cfg<TX, TY, VPT>;
    dt<TX>::unpack(lnmod_lds16(base + q * T), xf);
#pragma unroll
    for (int w = 0; w < C::DYW; w++)
        dt<TY>::unpack(lnmod_lds16(base + (VPT + q * C::DYW + w) * T), gf + w * (16 / (int)sizeof(TY)));
}

// HOLD: the same, also keeping the 16-byte words in registers (h: C::SLOTS / VPT words of
// vector q) so that the second pass over the row unpacks them again instead of reading the
// ring: half the shared-memory reads, (1 + DYW) * 4 more registers a vector.
template <typename TX, typename TY, int VPT>
__device__ __forceinline__ void bv2_read_keep(const uint4 *base, int q, int T, float *xf, float *gf,
                                              uint4 *h)
{
    using C = bv2_cfg<TX, TY, VPT>;
    h[0] = lnmod_lds16(base + q * T);
    dt<TX>::unpack(h[0], xf);
#pragma unroll
    for (int w = 0; w < C::DYW; w++) {
        h[1 + w] = lnmod_lds16(base + (VPT + q * C::DYW + w) * T);
        dt<TY>::unpack(h[1 + w], gf + w * (16 / (int)sizeof(TY)));
    }
}

template <typename TX, typename TY>
__device__ __forceinline__ void bv2_unpack_kept(const uint4 *h, int dyw, float *xf, float *gf)
{
    dt<TX>::unpack(h[0], xf);
    for (int w = 0; w < dyw; w++) dt<TY>::unpack(h[1 + w], gf + w * (16 / (int)sizeof(TY)));
}

__device__ __forceinline__ void bv2_group_sync(int gq, int T)
{
    asm volatile("bar.sync %0, %1;" ::"r"(gq + 1), "r"(T) : "memory");
}

// The G groups' column sums added in the order 0, 1, .., G-1 into group 0's registers.
template <int VPT, int VEC, int G>
__device__ __forceinline__ void bv2_combine(float *cmb, int gq, int T, int tid,
                                            float (&as)[VPT][VEC], float (&ah)[VPT][VEC])
{
#pragma unroll 1
    for (int k = 1; k < G; k++) {
        __syncthreads(); // group 0 has read the previous group's sums (and all reached here)
        if (gq == k) {
#pragma unroll
            for (int q = 0; q < VPT; q++)
#pragma unroll
                for (int e = 0; e < VEC; e++) {
                    cmb[((q * VEC + e) * 2) * T + tid] = as[q][e];
                    cmb[((q * VEC + e) * 2 + 1) * T + tid] = ah[q][e];
                }
        }
        __syncthreads();
        if (gq == 0) {
#pragma unroll
            for (int q = 0; q < VPT; q++)
#pragma unroll
                for (int e = 0; e < VEC; e++) {
                    as[q][e] += cmb[((q * VEC + e) * 2) * T + tid];
                    ah[q][e] += cmb[((q * VEC + e) * 2 + 1) * T + tid];
                }
        }
    }
}

// (1 + scale) of modulation row g, this thread's vectors, fp32.
template <typename TM, int VEC, int VPT>
__device__ __forceinline__ void bv2_load_scale(const bv2_kp &k, int64_t g, int T, int tid,
                                               float (&sp)[VPT][VEC])
{
    const TM *sc = static_cast<const TM *>(k.p.scale) + g * k.p.scale_stride;
#pragma unroll
    for (int q = 0; q < VPT; q++) {
        const int v = tid + q * T;
        if (v < k.nv) {
            lnmod_load_n<TM, VEC>(sc + (int64_t)v * VEC, sp[q]);
#pragma unroll
            for (int e = 0; e < VEC; e++) sp[q][e] = 1.0f + sp[q][e];
        }
    }
}

// (1 + scale) of modulation row g for the whole CTA into shared memory (SPS: at 16
// elements a thread with G > 1 the registers would not hold it beside the column sums).
template <typename TM>
__device__ __forceinline__ void bv2_load_scale_smem(const bv2_kp &k, int64_t g, float *sps)
{
    const TM *sc = static_cast<const TM *>(k.p.scale) + g * k.p.scale_stride;
    __syncthreads(); // nobody reads the previous group's row any more
    constexpr int E = 16 / (int)sizeof(TM); // one 16-byte load (D is a multiple of E here)
    for (int i = (int)threadIdx.x; i < k.D / E; i += (int)blockDim.x) {
        float f[E];
        lnmod_load_n<TM, E>(sc + E * i, f);
#pragma unroll
        for (int e = 0; e < E; e++) sps[E * i + e] = 1.0f + f[e];
    }
    __syncthreads();
}

template <int VPT, int VEC, bool SPS>
__device__ __forceinline__ void bv2_scale_of(const float (&sp)[VPT][VEC], const float *sps, int q,
                                             int v, float *s)
{
    if constexpr (SPS) {
#pragma unroll
        for (int w = 0; w < VEC / 4; w++) {
            const float4 t = reinterpret_cast<const float4 *>(sps + v * VEC)[w];
            s[4 * w] = t.x;
            s[4 * w + 1] = t.y;
            s[4 * w + 2] = t.z;
            s[4 * w + 3] = t.w;
        }
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++) s[e] = sp[q][e];
    }
}

// One row from ring stage `base`: the row sums (a, b) reduced over the group, the column
// sums added, dx written. par: the exchange buffer of this row's parity.
template <typename TX, typename TY, int VPT, int G, bool SPS, bool HOLD>
__device__ __forceinline__ void bv2_row(const bv2_kp &k, const uint4 *base, float2 ms, int32_t r,
                                        int gq, int T, int tid, float2 (*red)[G][BV2_MAX_NW],
                                        int par, const float (&sp)[VPT][bv2_cfg<TX, TY, VPT>::VEC],
                                        const float *sps,
                                        float (&as)[VPT][bv2_cfg<TX, TY, VPT>::VEC],
                                        float (&ah)[VPT][bv2_cfg<TX, TY, VPT>::VEC])
{
    constexpr int VEC = bv2_cfg<TX, TY, VPT>::VEC, DYW = bv2_cfg<TX, TY, VPT>::DYW;
    const float mu = ms.x, rs = ms.y;
    float a = 0.0f, b = 0.0f;
    uint4 kept[HOLD ? VPT : 1][1 + DYW];
#pragma unroll
    for (int q = 0; q < VPT; q++) {
        if (tid + q * T < k.nv) {
            float xf[VEC], gf[VEC], s[VEC];
            if constexpr (HOLD)
                bv2_read_keep<TX, TY, VPT>(base, q, T, xf, gf, kept[q]);
            else
                bv2_read<TX, TY, VPT>(base, q, T, xf, gf);
            bv2_scale_of<VPT, VEC, SPS>(sp, sps, q, tid + q * T, s);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float xh = (xf[e] - mu) * rs;
                const float g = gf[e] * s[e];
                a += g;
                b = fmaf(g, xh, b);
                as[q][e] = fmaf(gf[e], xh, as[q][e]);
                ah[q][e] += gf[e];
            }
        }
    }
    lnmod_warp_sum2(a, b);
    const int NW = T >> 5, lane = tid & 31, warp = tid >> 5;
    if (lane == 0) red[par][gq][warp] = make_float2(a, b);
    if (NW > 1)
        bv2_group_sync(gq, T);
    else
        __syncwarp();
    a = b = 0.0f;
    for (int w = 0; w < NW; w++) { // fixed order
        const float2 t = red[par][gq][w];
        a += t.x;
        b += t.y;
    }
    const float invd = 1.0f / (float)k.D;
    const float nca = -rs * (a * invd), ncb = -rs * (b * invd);
    TX *dxr = static_cast<TX *>(k.p.dx) + (int64_t)r * k.D;
#pragma unroll
    for (int q = 0; q < VPT; q++) {
        const int v = tid + q * T;
        if (v < k.nv) {
            float xf[VEC], gf[VEC], s[VEC], o[VEC];
            if constexpr (HOLD)
                bv2_unpack_kept<TX, TY>(kept[q], DYW, xf, gf);
            else
                bv2_read<TX, TY, VPT>(base, q, T, xf, gf);
            bv2_scale_of<VPT, VEC, SPS>(sp, sps, q, v, s);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float xh = (xf[e] - mu) * rs;
                o[e] = fmaf(xh, ncb, fmaf(gf[e] * s[e], rs, nca));
            }
            lnmod_store_n<TX, VEC>(dxr + v * VEC, o);
        }
    }
}

template <typename TX, typename TM, typename TY, int VPT, int NS, int G, bool HOLD>
__global__ void __launch_bounds__(bv2_max_threads<G>(), 1) bv2_kernel(bv2_kp k)
{
    using C = bv2_cfg<TX, TY, VPT>;
    constexpr int VEC = C::VEC;
    constexpr bool SPS = G > 1 && VPT * VEC >= 16;
    extern __shared__ uint4 bv2_smem[];
    __shared__ float2 red[2][G][BV2_MAX_NW];
    const int T = (int)blockDim.x / G, gq = (int)threadIdx.x / T, tid = (int)threadIdx.x - gq * T;
    uint4 *ring = bv2_smem + gq * NS * C::SLOTS * T;
    float2 *stats = reinterpret_cast<float2 *>(bv2_smem + G * NS * C::SLOTS * T) + gq * NS * T;
    float *cmb = reinterpret_cast<float *>(reinterpret_cast<float2 *>(bv2_smem + G * NS * C::SLOTS * T) + G * NS * T);
    float *sps = cmb + (G > 1 ? T * VPT * VEC * 2 : 0); // SPS: (1 + scale), D floats
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion(); // the finalize may be scheduled from now on
#endif
    const bv2_plan &pl = k.pl;
    bv2_cur pre;
    pre.c = (int32_t)blockIdx.x;
    bv2_seek(pl, pre, gq, G);
    for (int j = 0; j < NS - 1; j++) { // prologue: one commit group per stage, empty or not
        if (pre.ok) {
            bv2_issue<TX, TY, VPT>(k, ring, stats, j, pre.r, T, tid);
            bv2_next(pl, pre, gq, G);
        }
        lnmod_cp_commit();
    }
    float as[VPT][VEC], ah[VPT][VEC], sp[VPT][VEC];
#pragma unroll
    for (int q = 0; q < VPT; q++)
#pragma unroll
        for (int e = 0; e < VEC; e++) as[q][e] = ah[q][e] = sp[q][e] = 0.0f;
    int64_t g_loaded = -1;
    int slot = 0, par = 0;
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
            lnmod_cp_wait<NS - 2>(); // this row's stage has landed
            { // refill the stage the previous row used with the row NS - 1 ahead
                const int s0 = slot == 0 ? NS - 1 : slot - 1;
                if (pre.ok) {
                    bv2_issue<TX, TY, VPT>(k, ring, stats, s0, pre.r, T, tid);
                    bv2_next(pl, pre, gq, G);
                }
                lnmod_cp_commit();
            }
            const float2 ms = stats[slot * T + tid];
            bv2_row<TX, TY, VPT, G, SPS, HOLD>(k, ring + slot * C::SLOTS * T + tid, ms, r, gq, T, tid,
                                        red, par, sp, sps, as, ah);
            slot = slot + 1 == NS ? 0 : slot + 1;
            par ^= 1;
        }
        if constexpr (G > 1) bv2_combine<VPT, VEC, G>(cmb, gq, T, tid, as, ah);
        if (gq == 0) {
#pragma unroll
            for (int q = 0; q < VPT; q++) {
                const int v = tid + q * T;
                if (v < k.nv) lnmod_bwd_flush<TM, VEC, true>(k.p, c, g, (int64_t)v * VEC, as[q], ah[q]);
            }
        }
#pragma unroll
        for (int q = 0; q < VPT; q++)
#pragma unroll
            for (int e = 0; e < VEC; e++) as[q][e] = ah[q][e] = 0.0f;
    }
}

// ---- host side ------------------------------------------------------------------------
// Shared memory of a CTA: G rings of NS stages, their statistics, the combine buffer.
static size_t bv2_smem_bytes(int G, int NS, int T, int slots, int vpt, int vec, int D)
{
    const bool sps = G > 1 && vpt * vec >= 16; // as bv2_kernel's SPS
    return (size_t)G * NS * T * (16 * slots + 8) + (G > 1 ? (size_t)T * vpt * vec * 8 : 0) +
           (sps ? (size_t)D * 4 : 0);
}

template <typename TX, typename TM, typename TY, int VPT, int NS, int G, bool HOLD>
lnmod_status bv2_go(const bv2_kp &k, int T, size_t smem, cudaStream_t stream, bv2_info *info,
                    bool *ran)
{
    auto kern = bv2_kernel<TX, TM, TY, VPT, NS, G, HOLD>;
    int sms = 1, per_sm = 0;
    // All of the unified L1/shared memory as shared memory where it helps a second CTA fit
    // (v1 left the carveout to the driver; ncu saw 2 CTAs/SM limited by shared memory).
    if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) !=
            cudaSuccess ||
        cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                             (int)cudaSharedmemCarveoutMaxShared) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    lnmod_status st = lnmod_sm_count(&sms);
    if (st != LNMOD_OK) return st;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, G * T, smem) != cudaSuccess)
        return LNMOD_ERR_CUDA;
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
    }
    st = lnmod_launch_status();
    return st != LNMOD_OK ? st : lnmod_bwd_finalize<TM>(k.p, stream);
}

// Ring depth: G = 1 as v1 (8 stages where they fit 110 KB, else 4); G > 1: 4, else 3, in
// the device's shared memory for one CTA.
template <typename TX, typename TM, typename TY, int VPT, int G, bool HOLD>
lnmod_status bv2_stages(const bv2_kp &k, int T, cudaStream_t stream, bv2_info *info, bool *ran)
{
    using C = bv2_cfg<TX, TY, VPT>;
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    const size_t cap = (size_t)optin - 2048; // room for the static exchange buffer
    const size_t s8 = bv2_smem_bytes(G, 8, T, C::SLOTS, VPT, C::VEC, k.D);
    const size_t s4 = bv2_smem_bytes(G, 4, T, C::SLOTS, VPT, C::VEC, k.D);
    const size_t s3 = bv2_smem_bytes(G, 3, T, C::SLOTS, VPT, C::VEC, k.D);
    if constexpr (G == 1) {
        if (s8 <= 110 * 1024 && s8 <= cap) return bv2_go<TX, TM, TY, VPT, 8, G, HOLD>(k, T, s8, stream, info, ran);
        if (s4 <= cap) return bv2_go<TX, TM, TY, VPT, 4, G, HOLD>(k, T, s4, stream, info, ran);
    } else {
        if (s4 <= cap) return bv2_go<TX, TM, TY, VPT, 4, G, HOLD>(k, T, s4, stream, info, ran);
        if (s3 <= cap) return bv2_go<TX, TM, TY, VPT, 3, G, HOLD>(k, T, s3, stream, info, ran);
    }
    return LNMOD_OK;
}

template <typename TX, typename TM, typename TY, int G, bool HOLD>
lnmod_status bv2_vpt(const bv2_kp &k, int vpt, int T, cudaStream_t stream, bv2_info *info, bool *ran)
{
    constexpr int VEC = dt<TX>::VEC;
    switch (vpt) {
    case 1: return bv2_stages<TX, TM, TY, 1, G, HOLD>(k, T, stream, info, ran);
    case 2:
        if constexpr (2 * VEC <= BV2_MAX_E) return bv2_stages<TX, TM, TY, 2, G, HOLD>(k, T, stream, info, ran);
        break;
    case 3:
        if constexpr (3 * VEC <= BV2_MAX_E) return bv2_stages<TX, TM, TY, 3, G, HOLD>(k, T, stream, info, ran);
        break;
    case 4:
        if constexpr (4 * VEC <= BV2_MAX_E) return bv2_stages<TX, TM, TY, 4, G, HOLD>(k, T, stream, info, ran);
        break;
    default: break;
    }
    return LNMOD_OK;
}

template <typename TX, typename TM, typename TY>
lnmod_status bv2_typed(int G, bool hold, const bv2_kp &k, cudaStream_t stream, bv2_info *info, bool *ran)
{
    constexpr bool ok = (std::is_same<TX, __nv_bfloat16>::value && std::is_same<TY, __nv_bfloat16>::value &&
                         std::is_same<TM, float>::value) ||
                        (std::is_same<TX, float>::value) ||
                        (std::is_same<TX, __nv_bfloat16>::value && std::is_same<TM, __nv_bfloat16>::value &&
                         std::is_same<TY, float>::value) ||
                        (std::is_same<TX, __half>::value && std::is_same<TM, __half>::value &&
                         std::is_same<TY, __half>::value);
    if constexpr (ok) {
        if (!lnmod_bwd_vector_ok<TX, TM, TY>(k.p)) return LNMOD_OK;
        constexpr int VEC = dt<TX>::VEC;
        int T = 0;
        const int vpt = bv2_shape(k.nv, VEC, BV2_MAX_E, G == 1 ? 512 : 768 / G, &T);
        if (vpt == 0) return LNMOD_OK;
        switch (G) {
        case 1: return bv2_vpt<TX, TM, TY, 1, false>(k, vpt, T, stream, info, ran);
        case 2:
            return hold ? bv2_vpt<TX, TM, TY, 2, true>(k, vpt, T, stream, info, ran)
                        : bv2_vpt<TX, TM, TY, 2, false>(k, vpt, T, stream, info, ran);
        case 3: return bv2_vpt<TX, TM, TY, 3, false>(k, vpt, T, stream, info, ran);
        case 4: return bv2_vpt<TX, TM, TY, 4, false>(k, vpt, T, stream, info, ran);
        default: break;
        }
    }
    return LNMOD_OK;
}

} // namespace

extern "C" int64_t bv2_workspace(const lnmod_desc *d)
{
    if (lnmod_desc_validate(d) != LNMOD_OK) return -1;
    size_t v1 = 0;
    if (lnmod_backward_workspace("dtile", d, &v1) != LNMOD_OK) return -1;
    int64_t need = (int64_t)v1;
    for (int64_t target : {(int64_t)BV2_TARGET_V1, (int64_t)BV2_TARGET_FINE}) {
        const bv2_plan pl = bv2_make_plan(d->rows, d->rows_per_sample, d->frame_len, (int)d->layout, target);
        if (pl.cpg <= 1) continue;
        if (pl.nchunks > INT64_MAX / 8 / d->D) return -1;
        need = pl.nchunks * 8 * d->D > need ? pl.nchunks * 8 * d->D : need;
    }
    return need;
}

extern "C" lnmod_status bv2_backward(int G, int target, const lnmod_desc *d, const void *x, const void *scale,
                                     const void *dy, const float *mean, const float *rstd,
                                     void *dx, void *dscale, void *dshift, void *workspace,
                                     size_t workspace_bytes, cudaStream_t stream, bv2_info *info)
{
    const bool hold = G == BV2_G2_HOLD;
    if (hold) G = 2;
    if (G < 1 || G > 4 || (target != BV2_TARGET_V1 && target != BV2_TARGET_FINE))
        return LNMOD_ERR_UNSUPPORTED;
    if (info) *info = bv2_info{1, 0, 0, 0, 0, 0};
    lnmod_status st = d ? lnmod_desc_validate(d) : LNMOD_ERR_NULL_POINTER;
    if (st != LNMOD_OK) return st;
    if (!x || !scale || !dy || !mean || !rstd || !dx || !dscale || !dshift)
        return LNMOD_ERR_NULL_POINTER;
    const int64_t need = bv2_workspace(d);
    if (need < 0) return LNMOD_ERR_OVERFLOW;
    if (need > 0 && (!workspace || (uint64_t)workspace_bytes < (uint64_t)need ||
                     ((uintptr_t)workspace & 15u) != 0))
        return LNMOD_ERR_WORKSPACE;
    bv2_kp k;
    k.p = lnmod_make_bparams(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace);
    k.pl = bv2_make_plan(d->rows, d->rows_per_sample, d->frame_len, (int)d->layout, target);
    k.p.cpg = k.pl.cpg;
    k.p.nchunks = k.pl.nchunks;
    k.p.ws = k.pl.cpg > 1 ? static_cast<float *>(workspace) : nullptr;
    bool ran = false;
    const int vec = 16 / (int)lnmod_dtype_size(d->x_dtype);
    if (d->layout != LNMOD_PER_TOKEN && bv2_plan_ok(&k.pl) && k.pl.nchunks < (1 << 30) &&
        d->D <= 8192 && d->D % vec == 0) {
        k.D = (int32_t)d->D;
        k.nv = (int32_t)(d->D / vec);
        st = lnmod_dispatch_dtypes(d, [&](auto tx, auto tm, auto ty) {
            return bv2_typed<typename decltype(tx)::type, typename decltype(tm)::type,
                             typename decltype(ty)::type>(G, hold, k, stream, info, &ran);
        });
        if (st != LNMOD_OK || ran) return st;
    }
    return lnmod_backward("dtile", d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace,
                          workspace_bytes, stream);
}
