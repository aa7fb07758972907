// lnmod_bwd_dtile.cu -- variant "dtile", backward: one pass over x and dy at memory speed.
//
// First choice: the bulk path (lnmod_bwd_bulk.cu, version 2: the copy engine fills each
// group's ring; two vectors a thread, G groups a CTA; compute capability 9.0+, not per
// token, bf16/fp16 D <= 6144 or fp32 D <= 3072, aligned); per token, the same ring with
// the scale row in each stage and dscale/dshift written directly (lnmod_bwd_bulk_tok.cu, no
// workspace). What they do not take runs version 1, below.
//
// Version 1's fused path (every pointer 16-byte aligned, D a multiple of the vector width, D up to
// 8192 -- 16384 for 16-bit x not per token -- the ring fits the device's shared memory):
//   * A CTA of T threads owns a row: thread t owns the 16-byte vectors t, t + T, ... (VPT of
//     them, VPT*VEC <= 16 elements; the wide shape above D 8192: 24, or 32 above D 12288,
//     with (1 + scale) in the thread's own shared-memory slots), the same columns for every
//     row, so the dscale/dshift column sums of a chunk stay in that thread's registers across
//     the chunk's rows.
//     VPT and T come from D and the dtype alone (bd_shape): the fewest idle lanes, then the
//     smaller VPT.
//   * CTAs take whole chunks of the fixed chunk plan (lnmod_bwd_common.cuh; chunk b, b + G,
//     ... for CTA b), the rows of a chunk in row order; at a chunk's end the thread writes
//     its sums (dscale/dshift when a group is one chunk, else fp32 partials that the
//     finalize adds in a fixed order): deterministic on any grid.
//   * x, dy, mean/rstd (and, per token, the scale row) stream through a cp.async ring of
//     4 or 8 stages in shared memory, 3 or 7 rows ahead of the row being computed; each
//     thread copies and reads back only its own slots (no barrier for the ring).
//   * Per row: a = sum g and b = sum g*xhat (g = dy*(1 + scale), xhat = (x - mean)*rstd)
//     from the ring, a warp butterfly, ONE cross-warp exchange through shared memory
//     (double-buffered by row parity; none when one warp owns the row), then
//     dx = rstd*(g - a/D - xhat*b/D) with one rounding; (1 + scale) of the chunk's group in
//     registers (reloaded when the group changes).
// Everything else (unaligned data, odd D, D past the shapes above): the re-reading path of row_per_warp.
// Bytes it moves: lnmod_bwd_min_bytes + the partials (8*D bytes per chunk written, then
// read by the finalize) + the modulation row once per chunk (mostly from L2).
#include "lnmod_bwd_common.cuh"
#include "lnmod_bwd_v1_shape.h"
#include "lnmod_variants.cuh"

namespace {

using namespace lnmod_detail;

constexpr int BD_MAX_T = LNMOD_BV1_MAX_T; // the row shape: lnmod_bwd_v1_shape.h
constexpr int BD_MAX_E = LNMOD_BV1_MAX_E;
constexpr int BD_WIDE_E = LNMOD_BV1_WIDER_E; // 16-bit x above D 8192: bd_cfg::SPS

template <typename TX, typename TM, typename TY, int VPT, bool TOK> struct bd_cfg {
    static constexpr int VEC = dt<TX>::VEC;
    static constexpr int DYW = VEC * (int)sizeof(TY) / 16; // 16-byte pieces of a dy vector
    static constexpr int SCW = VEC * (int)sizeof(TM) / 16; // of a scale vector
    static constexpr int SLOTS = VPT * (1 + DYW + (TOK ? SCW : 0)); // per thread and stage
    static constexpr bool SPS = VPT * VEC > BD_MAX_E; // (1 + scale) in shared memory
    static_assert(VPT * VEC <= (VEC == 8 && !TOK ? BD_WIDE_E : BD_MAX_E), "register budget");
};

__device__ __forceinline__ void bd_cp_async4(void *smem, const void *gmem)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(s), "l"(gmem) : "memory");
}

// A CTA's walk over its rows: chunks b, b + G, ... that hold rows, each in row order.
struct bd_cursor {
    int64_t c, g, r, left; // chunk, its group, current row, rows left in the chunk (>= 1)
    bool ok;
};

__device__ __forceinline__ void bd_next_chunk(const lnmod_bparams &p, bd_cursor &q)
{
    for (q.c += gridDim.x; q.c < p.nchunks; q.c += gridDim.x) {
        int64_t n;
        lnmod_chunk_rows(p, q.c, &q.g, &q.r, &n);
        if (n > 0) {
            q.left = n;
            q.ok = true;
            return;
        }
    }
    q.ok = false;
}

__device__ __forceinline__ void bd_advance(const lnmod_bparams &p, bd_cursor &q)
{
    if (--q.left > 0)
        q.r += p.cpg;
    else
        bd_next_chunk(p, q);
}

// Stage s of the ring: [SLOTS][T] uint4, then the statistics: float2 [NS][T] after all stages.
template <typename TX, typename TM, typename TY, int VPT, bool TOK>
__device__ __forceinline__ void bd_issue(const lnmod_bparams &p, uint4 *ring, float2 *stats,
                                         int s, int64_t r, int64_t nv)
{
    using C = bd_cfg<TX, TM, TY, VPT, TOK>;
    const int T = blockDim.x, tid = threadIdx.x;
    uint4 *base = ring + (int64_t)s * C::SLOTS * T + tid;
#pragma unroll
    for (int k = 0; k < VPT; k++) {
        const int64_t v = tid + (int64_t)k * T;
        if (v < nv) {
            const int64_t e = r * p.D + v * C::VEC;
            lnmod_cp_async16(base + k * T, static_cast<const TX *>(p.x) + e);
            const char *gy = reinterpret_cast<const char *>(static_cast<const TY *>(p.dy) + e);
#pragma unroll
            for (int w = 0; w < C::DYW; w++)
                lnmod_cp_async16(base + (VPT + k * C::DYW + w) * T, gy + 16 * w);
            if constexpr (TOK) {
                const char *gs = reinterpret_cast<const char *>(
                    static_cast<const TM *>(p.scale) + r * p.scale_stride + v * C::VEC);
#pragma unroll
                for (int w = 0; w < C::SCW; w++)
                    lnmod_cp_async16(base + (VPT * (1 + C::DYW) + k * C::SCW + w) * T,
                                     gs + 16 * w);
            }
        }
    }
    float2 *st = stats + (int64_t)s * T + tid;
    bd_cp_async4(&st->x, p.mean + r);
    bd_cp_async4(&st->y, p.rstd + r);
}

// This thread's vector k of a ring stage, widened: x, dy and (per token) 1 + scale.
template <typename TX, typename TM, typename TY, int VPT, bool TOK>
__device__ __forceinline__ void bd_read(const uint4 *base, int k, int T, float *xf, float *gf,
                                        float *sf)
{
    using C = bd_cfg<TX, TM, TY, VPT, TOK>;
    constexpr int VEC = C::VEC;
    dt<TX>::unpack(lnmod_lds16(base + k * T), xf);
#pragma unroll
    for (int w = 0; w < C::DYW; w++)
        dt<TY>::unpack(lnmod_lds16(base + (VPT + k * C::DYW + w) * T), gf + w * (16 / sizeof(TY)));
    if constexpr (TOK) {
#pragma unroll
        for (int w = 0; w < C::SCW; w++)
            dt<TM>::unpack(lnmod_lds16(base + (VPT * (1 + C::DYW) + k * C::SCW + w) * T),
                           sf + w * (16 / sizeof(TM)));
#pragma unroll
        for (int e = 0; e < VEC; e++) sf[e] = 1.0f + sf[e];
    }
}

// The rows of one step of a CTA: up to K consecutive rows of its walk, all of one chunk
// (per token, where a chunk is one row, of K chunks), so that a step never mixes groups.
// The consumer and the prefetcher cut the walk with this same function, so step j's rows
// always sit in ring stages j*K .. j*K+K-1 (mod NS), empty ones included.
template <int K, bool TOK> struct bd_step {
    int64_t r[K], c[K], g[K];
    bool last[K], v[K];
};

template <int K, bool TOK>
__device__ __forceinline__ void bd_gather(const lnmod_bparams &p, bd_cursor &q,
                                          bd_step<K, TOK> &st)
{
#pragma unroll
    for (int k = 0; k < K; k++) {
        st.v[k] = q.ok && (k == 0 || TOK || q.c == st.c[0]);
        if (st.v[k]) {
            st.r[k] = q.r;
            st.c[k] = q.c;
            st.g[k] = q.g;
            st.last[k] = q.left == 1;
            bd_advance(p, q);
        } else {
            st.r[k] = st.c[k] = st.g[k] = 0;
            st.last[k] = false;
        }
    }
}

// (1 + scale) of modulation row g as fp32 into this thread's slots of shared memory,
// sps[(k * VEC + e) * T + tid] (the wide shape, SPS): written and read by this thread alone
// (no barrier), in program order.
template <typename TM, int VEC, int VPT>
__device__ __forceinline__ void bd_store_scale(const lnmod_bparams &p, int64_t g, int64_t nv,
                                               float *sps)
{
    const TM *sc = static_cast<const TM *>(p.scale) + g * p.scale_stride;
    const int T = blockDim.x;
#pragma unroll
    for (int k = 0; k < VPT; k++) {
        const int64_t v = threadIdx.x + (int64_t)k * T;
        if (v < nv) {
            float f[VEC];
            lnmod_load_n<TM, VEC>(sc + v * VEC, f);
#pragma unroll
            for (int e = 0; e < VEC; e++) sps[(k * VEC + e) * T + threadIdx.x] = 1.0f + f[e];
        }
    }
}

// (1 + scale) of modulation row g as fp32, this thread's vectors: in registers, or (SPS) in
// shared memory (bd_store_scale).
template <typename TM, int VEC, int VPT, bool SPS>
__device__ __forceinline__ void bd_load_scale(const lnmod_bparams &p, int64_t g, int64_t nv,
                                              float (&sp)[SPS ? 1 : VPT][VEC], float *sps)
{
    if constexpr (SPS) {
        bd_store_scale<TM, VEC, VPT>(p, g, nv, sps);
    } else {
        const TM *sc = static_cast<const TM *>(p.scale) + g * p.scale_stride;
#pragma unroll
        for (int k = 0; k < VPT; k++) {
            const int64_t v = threadIdx.x + (int64_t)k * blockDim.x;
            if (v < nv) {
                lnmod_load_n<TM, VEC>(sc + v * VEC, sp[k]);
#pragma unroll
                for (int e = 0; e < VEC; e++) sp[k][e] = 1.0f + sp[k][e];
            }
        }
    }
}

// Element e of this thread's vector q of (1 + scale): registers or shared memory (SPS).
template <bool SPS, int VPT, int VEC>
__device__ __forceinline__ float bd_sp(const float (&sp)[SPS ? 1 : VPT][VEC], const float *sps,
                                       int q, int e)
{
    if constexpr (SPS)
        return sps[(q * VEC + e) * (int)blockDim.x + (int)threadIdx.x];
    else
        return sp[q][e];
}

// K rows per step share one cross-warp exchange (one barrier) and interleave their
// instruction streams. ncu of version 1 (K = 1) at bf16 D = 1536: 5.8 cycles per issued
// instruction, 18% occupancy (2 CTAs of 6 warps per SM: registers and the 256 chunks),
// DRAM at 44%: the CTAs are latency-bound on ~300 instructions per row for 8 elements a
// thread. K = 2 or 4 did not change that per sample (the per-row work dominates), and
// gained 5-7% per token.
template <typename TX, typename TM, typename TY, int VPT, bool TOK, int NS, int K>
__global__ void __launch_bounds__(BD_MAX_T) bd_kernel(lnmod_bparams p)
{
    using C = bd_cfg<TX, TM, TY, VPT, TOK>;
    constexpr int VEC = C::VEC;
    static_assert(NS % K == 0 && NS / K >= 2, "ring of whole steps");
    extern __shared__ uint4 bd_ring[];
    __shared__ float2 red[2][BD_MAX_T / 32][K];
    const int T = blockDim.x, NW = T >> 5, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    float2 *stats = reinterpret_cast<float2 *>(bd_ring + (int64_t)NS * C::SLOTS * T);
    float *sps = reinterpret_cast<float *>(stats + (int64_t)NS * T); // SPS only
    const int64_t nv = p.D / VEC;
    const float invd = 1.0f / (float)p.D;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion(); // the finalize may be scheduled from now on
#endif

    bd_cursor cur;
    cur.c = (int64_t)blockIdx.x - gridDim.x;
    bd_next_chunk(p, cur);
    if (!cur.ok) return; // uniform: this CTA has no rows
    bd_cursor pre = cur;
    // Prologue: the first NS/K - 1 steps, one commit group per stage (empty stages keep the
    // group count, and so the wait below, uniform).
    for (int j = 0; j < NS / K - 1; j++) {
        bd_step<K, TOK> ps;
        bd_gather<K, TOK>(p, pre, ps);
#pragma unroll
        for (int k = 0; k < K; k++) {
            if (ps.v[k]) bd_issue<TX, TM, TY, VPT, TOK>(p, bd_ring, stats, j * K + k, ps.r[k], nv);
            lnmod_cp_commit();
        }
    }

    float as[VPT][VEC], ah[VPT][VEC], sp[C::SPS ? 1 : VPT][VEC];
#pragma unroll
    for (int k = 0; k < VPT; k++)
#pragma unroll
        for (int e = 0; e < VEC; e++) as[k][e] = ah[k][e] = sp[C::SPS ? 0 : k][e] = 0.0f;
    int64_t g_loaded = -1;
    int slot = 0, par = 0; // slot: the stage of this step's first row
    while (cur.ok) {
        bd_step<K, TOK> st;
        bd_gather<K, TOK>(p, cur, st);
        if (!TOK && st.g[0] != g_loaded) { // (1 + scale) of the step's group, fp32
            g_loaded = st.g[0];
            bd_load_scale<TM, VEC, VPT, C::SPS>(p, st.g[0], nv, sp, sps);
        }
        lnmod_cp_wait<NS - 2 * K>(); // this step's K stages have landed
        { // refill the previous step's stages (consumed) with the step NS/K - 1 ahead
            bd_step<K, TOK> ps;
            bd_gather<K, TOK>(p, pre, ps);
            const int s0 = slot == 0 ? NS - K : slot - K;
#pragma unroll
            for (int k = 0; k < K; k++) {
                if (ps.v[k]) bd_issue<TX, TM, TY, VPT, TOK>(p, bd_ring, stats, s0 + k, ps.r[k], nv);
                lnmod_cp_commit();
            }
        }

        float a[K], b[K], mu[K], rs[K];
#pragma unroll
        for (int k = 0; k < K; k++) {
            a[k] = b[k] = 0.0f;
            const float2 ms = stats[(int64_t)(slot + k) * T + tid];
            mu[k] = ms.x;
            rs[k] = ms.y;
        }
#pragma unroll
        for (int k = 0; k < K; k++) {
            if (!st.v[k]) continue; // uniform
            const uint4 *base = bd_ring + (int64_t)(slot + k) * C::SLOTS * T + tid;
#pragma unroll
            for (int q = 0; q < VPT; q++) {
                if (tid + (int64_t)q * T < nv) {
                    float xf[VEC], gf[VEC], sf[VEC];
                    bd_read<TX, TM, TY, VPT, TOK>(base, q, T, xf, gf, sf);
#pragma unroll
                    for (int e = 0; e < VEC; e++) {
                        const float xh = (xf[e] - mu[k]) * rs[k];
                        const float g =
                            gf[e] * (TOK ? sf[e] : bd_sp<C::SPS, VPT, VEC>(sp, sps, q, e));
                        a[k] += g;
                        b[k] = fmaf(g, xh, b[k]);
                        as[q][e] = fmaf(gf[e], xh, as[q][e]);
                        ah[q][e] += gf[e];
                    }
                }
            }
            if (st.last[k]) { // the chunk's last row: its column sums leave the registers
#pragma unroll
                for (int q = 0; q < VPT; q++) {
                    const int64_t v = tid + (int64_t)q * T;
                    if (v < nv)
                        lnmod_bwd_flush<TM, VEC, true>(p, st.c[k], st.g[k], v * VEC, as[q], ah[q]);
#pragma unroll
                    for (int e = 0; e < VEC; e++) as[q][e] = ah[q][e] = 0.0f;
                }
            }
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) { // K butterflies side by side
#pragma unroll
            for (int k = 0; k < K; k++) {
                a[k] += __shfl_xor_sync(0xffffffffu, a[k], o);
                b[k] += __shfl_xor_sync(0xffffffffu, b[k], o);
            }
        }
        if (lane == 0) {
#pragma unroll
            for (int k = 0; k < K; k++) red[par][warp][k] = make_float2(a[k], b[k]);
        }
        if (NW > 1) // uniform; the buffer alternates with step parity (as in the forward)
            __syncthreads();
        else
            __syncwarp();
#pragma unroll
        for (int k = 0; k < K; k++) a[k] = b[k] = 0.0f;
        for (int w = 0; w < NW; w++) { // fixed order: the same bits on any grid
#pragma unroll
            for (int k = 0; k < K; k++) {
                const float2 t = red[par][w][k];
                a[k] += t.x;
                b[k] += t.y;
            }
        }
#pragma unroll
        for (int k = 0; k < K; k++) {
            if (!st.v[k]) continue;
            const float ca = a[k] * invd, cb = b[k] * invd;
            const uint4 *base = bd_ring + (int64_t)(slot + k) * C::SLOTS * T + tid;
            TX *dxr = static_cast<TX *>(p.dx) + st.r[k] * p.D;
#pragma unroll
            for (int q = 0; q < VPT; q++) {
                const int64_t v = tid + (int64_t)q * T;
                if (v < nv) {
                    float xf[VEC], gf[VEC], sf[VEC], o[VEC];
                    bd_read<TX, TM, TY, VPT, TOK>(base, q, T, xf, gf, sf);
#pragma unroll
                    for (int e = 0; e < VEC; e++) {
                        const float xh = (xf[e] - mu[k]) * rs[k];
                        const float g =
                            gf[e] * (TOK ? sf[e] : bd_sp<C::SPS, VPT, VEC>(sp, sps, q, e));
                        o[e] = rs[k] * ((g - ca) - xh * cb);
                    }
                    lnmod_store_n<TX, VEC>(dxr + v * VEC, o);
                }
            }
        }
        slot = slot + K == NS ? 0 : slot + K;
        par ^= 1;
    }
}

// Vectors per thread and threads per CTA for D (a function of D and the dtype only; the
// wide shape above D 8192 for 16-bit x not per token): lnmod_bwd_v1_shape.h.
static int bd_shape(int64_t nv, int VEC, bool tok, int *threads)
{
    return lnmod_bv1_shape(nv, VEC, tok ? 1 : 0, threads);
}

// Rows per step: 2 per token (measured 5-7% faster there), 1 otherwise (2 and 4 measured no
// faster, up to 3% slower; kernels/NOTES.md).
template <bool TOK> constexpr int bd_rows_per_step() { return TOK ? 2 : 1; }

template <typename TX, typename TM, typename TY, int VPT, bool TOK, int NS>
lnmod_status bd_launch(const lnmod_bparams &p, int T, size_t smem, cudaStream_t stream)
{
    auto kern = bd_kernel<TX, TM, TY, VPT, TOK, NS, bd_rows_per_step<TOK>()>;
    int sms = 1, per_sm = 0;
    if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) !=
        cudaSuccess)
        return LNMOD_ERR_CUDA;
    lnmod_status st = lnmod_sm_count(&sms);
    if (st != LNMOD_OK) return st;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, T, smem) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (per_sm < 1) per_sm = 1;
    int64_t grid = (int64_t)per_sm * sms;
    if (grid > p.nchunks) grid = p.nchunks;
    kern<<<(unsigned)grid, (unsigned)T, smem, stream>>>(p);
    st = lnmod_launch_status();
    return st != LNMOD_OK ? st : lnmod_bwd_finalize<TM>(p, stream);
}

// Ring depth: a CTA works through its chunk's rows one after another, so the rows it keeps
// in flight (NS - 1) are what hides the memory latency; 8 stages where they fit in
// BD_RING_BUDGET bytes (two CTAs per SM on the H100/H200), else 4. The depth changes no
// result, only the speed.
constexpr size_t BD_RING_BUDGET = 110 * 1024;

template <typename TX, typename TM, typename TY, int VPT, bool TOK>
lnmod_status bd_run(const lnmod_bparams &p, int T, bool *fits, cudaStream_t stream)
{
    using C = bd_cfg<TX, TM, TY, VPT, TOK>;
    const size_t stage = (size_t)T * (16 * C::SLOTS + 8);
    const size_t sps = C::SPS ? (size_t)T * VPT * C::VEC * sizeof(float) : 0;
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
            cudaSuccess)
        return LNMOD_ERR_CUDA;
    *fits = true;
    if constexpr (C::SPS) { // the wide shape: one CTA an SM, the deepest ring that fits
        const int ns = lnmod_bv1_wide_stages(stage, sps, (size_t)optin);
        if (ns == 4) return bd_launch<TX, TM, TY, VPT, TOK, 4>(p, T, 4 * stage + sps, stream);
        if (ns == 3) return bd_launch<TX, TM, TY, VPT, TOK, 3>(p, T, 3 * stage + sps, stream);
        if (ns == 2) return bd_launch<TX, TM, TY, VPT, TOK, 2>(p, T, 2 * stage + sps, stream);
    } else {
        if (8 * stage <= BD_RING_BUDGET && 8 * stage <= (size_t)optin)
            return bd_launch<TX, TM, TY, VPT, TOK, 8>(p, T, 8 * stage, stream);
        if (4 * stage <= (size_t)optin) return bd_launch<TX, TM, TY, VPT, TOK, 4>(p, T, 4 * stage, stream);
    }
    *fits = false; // this GPU's shared memory cannot hold the ring
    return LNMOD_OK;
}

template <typename TX, typename TM, typename TY, bool TOK>
lnmod_status bd_pick(const lnmod_bparams &p, int vpt, int T, bool *fits, cudaStream_t stream)
{
    constexpr int VEC = dt<TX>::VEC;
    switch (vpt) {
    case 1: return bd_run<TX, TM, TY, 1, TOK>(p, T, fits, stream);
    case 2: return bd_run<TX, TM, TY, 2, TOK>(p, T, fits, stream);
    case 3:
        if constexpr (3 * VEC <= BD_MAX_E || (VEC == 8 && !TOK))
            return bd_run<TX, TM, TY, 3, TOK>(p, T, fits, stream);
        break;
    case 4:
        if constexpr (4 * VEC <= BD_MAX_E || (VEC == 8 && !TOK))
            return bd_run<TX, TM, TY, 4, TOK>(p, T, fits, stream);
        break;
    default: break;
    }
    *fits = false;
    return LNMOD_OK;
}

template <typename TX, typename TM, typename TY>
lnmod_status bd_launch_t(const lnmod_bparams &p, cudaStream_t stream)
{
    int T = 0;
    const bool tok = p.layout == LNMOD_PER_TOKEN;
    const int vpt =
        lnmod_bwd_vector_ok<TX, TM, TY>(p) ? bd_shape(p.D / dt<TX>::VEC, dt<TX>::VEC, tok, &T) : 0;
    if (vpt > 0) {
        bool fits = false;
        lnmod_status st = tok ? bd_pick<TX, TM, TY, true>(p, vpt, T, &fits, stream)
                              : bd_pick<TX, TM, TY, false>(p, vpt, T, &fits, stream);
        if (st != LNMOD_OK || fits) return st;
    }
    return lnmod_bwd_reread_run<TX, TM, TY>(p, stream);
}

// Does the fused path take d (on a GPU of sm_90's 227 KB opt-in)? The wide shape only where
// its ring fits (bd_run), else the re-reading path runs.
bool bd_fused(const lnmod_desc *d)
{
    const int64_t vec = 16 / (int64_t)lnmod_dtype_size(d->x_dtype);
    const int tok = d->layout == LNMOD_PER_TOKEN;
    int T = 0;
    const int vpt = d->D % vec == 0 ? bd_shape(d->D / vec, (int)vec, tok, &T) : 0;
    if (vpt * vec <= BD_MAX_E) return vpt > 0;
    return lnmod_bv1_wide_ns(d->D, (int)lnmod_dtype_size(d->x_dtype),
                             (int)lnmod_dtype_size(d->y_dtype), tok, 232448) > 0;
}

} // namespace

lnmod_status lnmod_bwd_dtile_launch(const lnmod_desc *d, const void *x, const void *scale,
                                    const void *dy, const float *mean, const float *rstd,
                                    void *dx, void *dscale, void *dshift, void *workspace,
                                    size_t workspace_bytes, cudaStream_t stream)
{
    (void)workspace_bytes;
    int ran = 0;
    const lnmod_status ts = lnmod_bwd_bulk_tok_launch(d, x, scale, dy, mean, rstd, dx, dscale, dshift, stream, &ran);
    if (ts != LNMOD_OK || ran) return ts;
    const lnmod_status bs =
        lnmod_bwd_bulk_launch(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace, stream, &ran);
    if (bs != LNMOD_OK || ran) return bs;
    const lnmod_bparams p =
        lnmod_make_bparams(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace);
    return lnmod_dispatch_dtypes(d, [&](auto tx, auto tm, auto ty) {
        return bd_launch_t<typename decltype(tx)::type, typename decltype(tm)::type,
                           typename decltype(ty)::type>(p, stream);
    });
}

// The larger of the plans' workspaces: which path runs depends on the pointers and the
// device too, the workspace on the descriptor alone (the per-token bulk path needs none:
// version 1 may still run there).
int64_t lnmod_bwd_dtile_workspace(const lnmod_desc *d)
{
    int64_t glen, cpg, ng;
    const int64_t v1 = lnmod_bwd_plan(d, &glen, &cpg, &ng), v2 = lnmod_bwd_bulk_workspace(d);
    return v1 < 0 || v2 < 0 ? -1 : v1 > v2 ? v1 : v2;
}

int64_t lnmod_bwd_dtile_bytes(const lnmod_desc *d)
{
    // Assumes aligned pointers (the usual case) and a GPU of compute capability 9.0 or later
    // whose shared memory holds the ring.
    int T = 0, G = 0;
    if (lnmod_bwd_bulk_tok_takes(d, &T, &G)) return lnmod_bwd_min_bytes(d); // per token: no partials
    const bool bulk = lnmod_bwd_bulk_takes(d, &T, &G) != 0;
    if (!bulk && !bd_fused(d)) return lnmod_bwd_reread_bytes(d);
    int64_t glen, cpg, ng;
    const int64_t ws = bulk ? lnmod_bwd_bulk_workspace(d) : lnmod_bwd_plan(d, &glen, &cpg, &ng);
    const int64_t chunks = bulk ? lnmod_bwd_bulk_chunks(d) : ng * cpg;
    const double b = (double)lnmod_bwd_min_bytes(d) + 2.0 * (double)(ws > 0 ? ws : 0) +
                     (double)chunks * (double)d->D * (double)lnmod_dtype_size(d->mod_dtype);
    return b >= 9.2e18 ? INT64_MAX : (int64_t)b;
}
