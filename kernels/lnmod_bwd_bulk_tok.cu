// lnmod_bwd_bulk_tok.cu -- dtile backward per token on the bulk ring (round 3's "tok",
// kernels/experiments/2026-12-02-bwd-v3), tried first by lnmod_bwd_dtile_launch for a
// per-token descriptor; what it does not take runs dtile's version 1.
//
// Takes: per token, every pointer and modulation row 16-byte aligned, D a multiple of the
// vector, the bulk row shape (lnmod_bulk_shape: two 16-byte vectors a thread, T <= 384),
// rows below 2^31, compute capability 9.0 or later, a ring that fits.
//   * a CTA holds G warp groups of T threads (G = 4 when T <= 192, else 2); group gq of CTA
//     b takes the rows (b + k*grid)*G + gq (lnmod_bwd_bulk_plan.h, lnmod_bulk_tok_*), whole
//     rows: no chunks, no combine, no workspace;
//   * a ring stage holds the row of x, of dy AND of scale (three bulk copies, one mbarrier
//     for their bytes, plus mean/rstd by two 4-byte cp.async as in lnmod_bwd_bulk.cu);
//   * per row: pass 1 reads x, dy, scale from the stage, adds a = sum g, b = sum g*xhat
//     (g = dy*(1 + scale)) and writes the row's dscale = dy*xhat and dshift = dy directly
//     (modulation dtype, the descriptor's strides); the butterfly, the group's barrier, the
//     exchange, the refill of the previous row's stage, then dx as bk_row does.
// Deterministic: no sum crosses rows. Bytes: lnmod_bwd_min_bytes exactly (18 B an element
// at bf16 x/dy, fp32 modulation). Round 3 predicts it memory-bound (~90% of the copy of
// those bytes against version 1's 78-80%).
#include "lnmod_bwd_bulk_plan.h"
#include "lnmod_bwd_bulk_ring.cuh"
#include "lnmod_bwd_common.cuh"
#include "lnmod_variants.cuh"

namespace lnmod_bulk_tok_detail {

using namespace lnmod_detail;
using namespace lnmod_bulk_detail;

template <typename TX, typename TM, typename TY> struct bt_cfg {
    static constexpr int VEC = dt<TX>::VEC;
    static constexpr int DYW = VEC * (int)sizeof(TY) / 16; // 16-byte pieces of a dy vector
    static constexpr int MSW = VEC * (int)sizeof(TM) / 16; // ... of a scale vector
    static constexpr int SLOTS = 2 * (1 + DYW + MSW);        // lnmod_bulk_tok_slots (host-tested)
    static_assert(DYW >= 1 && MSW >= 1, "dy and scale vectors of whole 16-byte pieces");
};

struct bt_kp {
    lnmod_bparams p;
    int64_t rows;
    int32_t D, nv;
};

// Row r into stage s (the group's thread 0): x, dy and scale rows by the copy engine,
// mean/rstd by two 4-byte cp.async (the production's bk_issue with a third bulk copy).
template <typename TX, typename TM, typename TY>
__device__ __forceinline__ void bt_issue(const bt_kp &k, uint4 *ring, float2 *stats, uint64_t *bar, int s, int64_t r,
                                         int T)
{
    using C = bt_cfg<TX, TM, TY>;
    uint4 *st = ring + s * C::SLOTS * T;
    const unsigned xb = (unsigned)k.nv * 16u, yb = xb * (unsigned)C::DYW, sb = xb * (unsigned)C::MSW;
    const unsigned mb = bk_sa(bar + s);
    const TX *xr = static_cast<const TX *>(k.p.x) + r * k.D;
    const TY *yr = static_cast<const TY *>(k.p.dy) + r * k.D;
    const TM *sr = static_cast<const TM *>(k.p.scale) + r * k.p.scale_stride;
    asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n\t}" ::"r"(mb),
                 "r"(xb + yb + sb)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     bk_sa(st)),
                 "l"(xr), "r"(xb), "r"(mb)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     bk_sa(st + lnmod_bulk_tok_dy_at(T))),
                 "l"(yr), "r"(yb), "r"(mb)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     bk_sa(st + lnmod_bulk_tok_sc_at(T, C::DYW))),
                 "l"(sr), "r"(sb), "r"(mb)
                 : "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(bk_sa(&stats[s].x)), "l"(k.p.mean + r) : "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(bk_sa(&stats[s].y)), "l"(k.p.rstd + r) : "memory");
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(mb) : "memory");
}

// Vector q of this thread: x and dy (the production's bk_read) and (1 + scale).
template <typename TX, typename TM, typename TY>
__device__ __forceinline__ void bt_read(const uint4 *base, int q, int T, int tid, float *xf, float *gf, float *s)
{
    using C = bt_cfg<TX, TM, TY>;
    bk_read<TX, TY>(base, q, T, tid, xf, gf);
    const uint4 *sb = base + lnmod_bulk_tok_sc_at(T, C::DYW) + q * T * C::MSW + tid * (C::MSW - 1);
#pragma unroll
    for (int w = 0; w < C::MSW; w++) dt<TM>::unpack(lnmod_lds16(sb + w), s + w * (16 / (int)sizeof(TM)));
#pragma unroll
    for (int e = 0; e < C::VEC; e++) s[e] = 1.0f + s[e];
}

// One row from stage `base` (= stage + tid): dscale/dshift rows, the row sums over the group,
// dx. mid() runs once the group has passed the row's barrier.
template <typename TX, typename TM, typename TY, int G, typename Mid>
__device__ __forceinline__ void bt_row(const bt_kp &k, const uint4 *base, float2 ms, int64_t r, int gq, int T, int tid,
                                       float2 (*red)[G][BK_MAX_NW], int par, Mid &&mid)
{
    constexpr int VEC = bt_cfg<TX, TM, TY>::VEC;
    const float mu = ms.x, rs = ms.y;
    float a = 0.0f, b = 0.0f;
    TM *dsr = static_cast<TM *>(k.p.dscale) + r * k.p.scale_stride;
    TM *dhr = static_cast<TM *>(k.p.dshift) + r * k.p.shift_stride;
#pragma unroll
    for (int q = 0; q < BK_VPT; q++) {
        const int v = tid + q * T;
        if (v < k.nv) {
            float xf[VEC], gf[VEC], s[VEC], ds[VEC];
            bt_read<TX, TM, TY>(base, q, T, tid, xf, gf, s);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float xh = (xf[e] - mu) * rs;
                const float g = gf[e] * s[e];
                a += g;
                b = fmaf(g, xh, b);
                ds[e] = gf[e] * xh;
            }
            lnmod_store_n<TM, VEC>(dsr + v * VEC, ds);
            lnmod_store_n<TM, VEC>(dhr + v * VEC, gf);
        }
    }
    lnmod_warp_sum2(a, b);
    const int NW = T >> 5, lane = tid & 31, warp = tid >> 5;
    if (lane == 0) red[par][gq][warp] = make_float2(a, b);
    if (NW > 1)
        bk_group_sync(gq, T);
    else
        __syncwarp();
    mid();
    a = b = 0.0f;
    for (int w = 0; w < NW; w++) {
        const float2 t = red[par][gq][w];
        a += t.x;
        b += t.y;
    }
    const float invd = 1.0f / (float)k.D;
    const float nca = -rs * (a * invd), ncb = -rs * (b * invd);
    TX *dxr = static_cast<TX *>(k.p.dx) + r * k.D;
#pragma unroll
    for (int q = 0; q < BK_VPT; q++) {
        const int v = tid + q * T;
        if (v < k.nv) {
            float xf[VEC], gf[VEC], s[VEC], o[VEC];
            bt_read<TX, TM, TY>(base, q, T, tid, xf, gf, s);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float xh = (xf[e] - mu) * rs;
                o[e] = fmaf(xh, ncb, fmaf(gf[e] * s[e], rs, nca));
            }
            lnmod_store_n<TX, VEC>(dxr + v * VEC, o);
        }
    }
}

template <typename TX, typename TM, typename TY, int NS, int G>
__global__ void __launch_bounds__(BK_MAXT, 1) bt_kernel(bt_kp k)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    using C = bt_cfg<TX, TM, TY>;
    static_assert(NS >= 2, "ring depth");
    extern __shared__ uint4 bt_smem[];
    __shared__ float2 red[2][G][BK_MAX_NW];
    __shared__ uint64_t full[G * NS];
    const int T = (int)blockDim.x / G, gq = (int)threadIdx.x / T, tid = (int)threadIdx.x - gq * T;
    uint4 *ring = bt_smem + gq * NS * C::SLOTS * T;
    float2 *stats = reinterpret_cast<float2 *>(bt_smem + G * NS * C::SLOTS * T) + gq * NS;
    uint64_t *bar = full + gq * NS;
    if (threadIdx.x == 0) {
        for (int i = 0; i < G * NS; i++) bk_mbar_init(&full[i], 2);
        bk_fence_proxy_async();
    }
    __syncthreads();
    const int64_t first = lnmod_bulk_tok_first(blockIdx.x, G, gq), step = lnmod_bulk_tok_step(gridDim.x, G);
    int64_t pre = tid == 0 ? first : k.rows; // only the issuer walks ahead
    for (int j = 0; j < NS - 1; j++) {
        if (pre < k.rows) {
            bt_issue<TX, TM, TY>(k, ring, stats, bar, j, pre, T);
            pre += step;
        }
    }
    int slot = 0, par = 0;
    uint32_t phase = 0;
    for (int64_t r = first; r < k.rows; r += step) { // no CTA barrier in the loop
        const int s0 = slot == 0 ? NS - 1 : slot - 1;
        bk_mbar_wait(bar + slot, phase);
        const float2 ms = stats[slot];
        auto mid = [&]() {
            if (pre < k.rows) {
                bk_fence_proxy_async();
                bt_issue<TX, TM, TY>(k, ring, stats, bar, s0, pre, T);
                pre += step;
            }
        };
        bt_row<TX, TM, TY, G>(k, ring + slot * C::SLOTS * T + tid, ms, r, gq, T, tid, red, par, mid);
        slot = slot + 1 == NS ? 0 : slot + 1;
        if (slot == 0) phase ^= 1u;
        par ^= 1;
    }
#else
    (void)k;
    __trap();
#endif
}

template <typename TX, typename TM, typename TY, int NS, int G>
lnmod_status bt_go(const bt_kp &k, int T, size_t smem, int per_sm, cudaStream_t stream)
{
    int sms = 1;
    const lnmod_status st = lnmod_sm_count(&sms);
    if (st != LNMOD_OK) return st;
    int64_t grid = (int64_t)per_sm * sms;
    const int64_t need = (k.rows + G - 1) / G;
    if (grid > need) grid = need;
    bt_kernel<TX, TM, TY, NS, G><<<(unsigned)grid, (unsigned)(G * T), smem, stream>>>(k);
    return lnmod_launch_status();
}

// Ring depth: bk_stages' rule (of 4, 3, 2 stages the most CTAs per SM, the deeper on a
// tie). *ran stays false when none fits.
template <typename TX, typename TM, typename TY, int G>
lnmod_status bt_stages(const bt_kp &k, int T, cudaStream_t stream, bool *ran)
{
    using C = bt_cfg<TX, TM, TY>;
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    size_t sm[5] = {0, 0, 0, 0, 0};
    int occ[5] = {0, 0, 0, 0, 0}, best = 0;
    for (int ns = 4; ns >= 2; ns--) sm[ns] = (size_t)lnmod_bulk_tok_smem(G, ns, T, C::SLOTS);
    lnmod_status st = LNMOD_OK;
    if (sm[4] <= (size_t)optin) st = bk_occupancy(bt_kernel<TX, TM, TY, 4, G>, G * T, sm[4], &occ[4]);
    if (st == LNMOD_OK && sm[3] <= (size_t)optin)
        st = bk_occupancy(bt_kernel<TX, TM, TY, 3, G>, G * T, sm[3], &occ[3]);
    if (st == LNMOD_OK && sm[2] <= (size_t)optin)
        st = bk_occupancy(bt_kernel<TX, TM, TY, 2, G>, G * T, sm[2], &occ[2]);
    if (st != LNMOD_OK) return st;
    for (int ns = 4; ns >= 2; ns--)
        if (occ[ns] > occ[best]) best = ns;
    if (best == 0) return LNMOD_OK;
    *ran = true;
    switch (best) {
    case 4: return bt_go<TX, TM, TY, 4, G>(k, T, sm[4], occ[4], stream);
    case 3: return bt_go<TX, TM, TY, 3, G>(k, T, sm[3], occ[3], stream);
    default: return bt_go<TX, TM, TY, 2, G>(k, T, sm[2], occ[2], stream);
    }
}

template <typename TX, typename TM, typename TY>
lnmod_status bt_typed(const bt_kp &k, int T, int G, cudaStream_t stream, bool *ran)
{
    if (!lnmod_bwd_vector_ok<TX, TM, TY>(k.p)) return LNMOD_OK;
    return G == 4 ? bt_stages<TX, TM, TY, 4>(k, T, stream, ran) : bt_stages<TX, TM, TY, 2>(k, T, stream, ran);
}

} // namespace lnmod_bulk_tok_detail

using namespace lnmod_bulk_tok_detail;

int lnmod_bwd_bulk_tok_takes(const lnmod_desc *d, int *threads, int *groups)
{
    const int64_t vec = 16 / (int64_t)lnmod_dtype_size(d->x_dtype);
    if (d->layout != LNMOD_PER_TOKEN || d->D % vec != 0 || d->rows >= ((int64_t)1 << 31)) return 0;
    return lnmod_bulk_shape(d->D / vec, threads, groups);
}

lnmod_status lnmod_bwd_bulk_tok_launch(const lnmod_desc *d, const void *x, const void *scale, const void *dy,
                                       const float *mean, const float *rstd, void *dx, void *dscale,
                                       void *dshift, cudaStream_t stream, int *ran)
{
    *ran = 0;
    int T = 0, G = 0, dev = 0, major = 0;
    if (!lnmod_bwd_bulk_tok_takes(d, &T, &G)) return LNMOD_OK;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (major < 9) return LNMOD_OK; // no bulk copy engine
    bt_kp k;
    k.p = lnmod_make_bparams(d, x, scale, dy, mean, rstd, dx, dscale, dshift, nullptr);
    k.rows = d->rows;
    k.D = (int32_t)d->D;
    k.nv = (int32_t)(d->D / (16 / (int64_t)lnmod_dtype_size(d->x_dtype)));
    bool went = false;
    const lnmod_status st = lnmod_dispatch_dtypes(d, [&](auto tx, auto tm, auto ty) {
        return bt_typed<typename decltype(tx)::type, typename decltype(tm)::type, typename decltype(ty)::type>(
            k, T, G, stream, &went);
    });
    *ran = went ? 1 : 0;
    return st;
}
