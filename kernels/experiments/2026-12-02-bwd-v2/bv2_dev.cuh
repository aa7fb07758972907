// bv2_dev.cuh -- device pieces of dtile backward v2 (experiment), shared by bv2.cu (round 1's
// kernels) and bv2_r2.cu (round 2's): the configuration traits, the group's row walk, the two
// ways of filling a group's ring (per-thread cp.async, or the bulk copy engine), the row, the
// combine of the groups' column sums and the (1 + scale) loads. The kernel: bv2_kernel.cuh.
//
// Bulk ring (round 2): one elected thread per group (the group's thread 0) fills a stage with
// two 1-D bulk copies (cp.async.bulk ... mbarrier::complete_tx::bytes, sm_90: the row of x and
// the row of dy, each nv*16 bytes from a 16-byte aligned address -- bv2_typed's vector check)
// and two 4-byte cp.async of mean[r] and rstd[r]; the stage's mbarrier (count 2) completes
// when the elected thread's arrive.expect_tx has arrived, the copies' bytes have landed and
// cp.async.mbarrier.arrive.noinc fired after the two statistics copies. The group's threads
// wait with mbarrier.try_wait.parity and read their 16-byte slots as with cp.async.
// Reuse of a stage: the refill of the previous row's stage is issued after the current row's
// group barrier (bv2_row's mid hook), so every thread of the group has finished its reads of
// that stage (both passes of the previous row) before the copy engine may write it; the
// issuing thread adds fence.proxy.async.shared::cta between the barrier and the copy, so that
// the generic-proxy reads the barrier ordered before it are ordered before the async-proxy
// writes too (one instruction per row per group; CUTLASS's TMA pipelines order this write
// after read by an mbarrier alone, the fence is the conservative reading of the PTX rule
// that accesses of one location through two proxies need a proxy fence).
#ifndef ADALOAD_BV2_DEV_CUH
#define ADALOAD_BV2_DEV_CUH

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
    int32_t alias; // 1: (1 + scale) shares the combine buffer (reloaded after each combine)
    int32_t fence; // bulk ring: 1 = fence.proxy.async before a copy reuses a stage
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

// ---- the bulk ring (sm_90 PTX) -----------------------------------------------------------
__device__ __forceinline__ unsigned bv2_sa(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void bv2_mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bv2_sa(bar)), "r"(count) : "memory");
}

// Generic-proxy accesses of this thread (and those a barrier ordered before them) before its
// later async-proxy ones: after the mbarrier inits, and before a bulk copy reuses a stage.
__device__ __forceinline__ void bv2_fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Waits until the phase of parity `parity` of the mbarrier has completed (acquire, CTA).
__device__ __forceinline__ void bv2_mbar_wait(uint64_t *bar, uint32_t parity)
{
    const unsigned a = bv2_sa(bar);
    uint32_t done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(a), "r"(parity)
                     : "memory");
    } while (!done);
}

// Row r into stage s of a group's bulk ring (ring: the group's first stage; stats: the
// group's NS float2; bar: the group's NS mbarriers). Issued by the group's thread 0 only.
template <typename TX, typename TY, int VPT>
__device__ __forceinline__ void bv2_bulk_issue(const bv2_kp &k, uint4 *ring, float2 *stats, uint64_t *bar,
                                               int s, int32_t r, int T)
{
    using C = bv2_cfg<TX, TY, VPT>;
    uint4 *st = ring + s * C::SLOTS * T;
    const unsigned xb = (unsigned)k.nv * 16u, yb = xb * (unsigned)C::DYW, mb = bv2_sa(bar + s);
    const TX *xr = static_cast<const TX *>(k.p.x) + (int64_t)r * k.D;
    const TY *yr = static_cast<const TY *>(k.p.dy) + (int64_t)r * k.D;
    asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n\t}" ::"r"(mb),
                 "r"(xb + yb)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     bv2_sa(st)),
                 "l"(xr), "r"(xb), "r"(mb)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     bv2_sa(st + VPT * T)),
                 "l"(yr), "r"(yb), "r"(mb)
                 : "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(bv2_sa(&stats[s].x)), "l"(k.p.mean + r) : "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(bv2_sa(&stats[s].y)), "l"(k.p.rstd + r) : "memory");
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(mb) : "memory");
}

// Vector q of this thread from a stage (base = stage + tid). The x row is in vector order
// (vector v at v) either way; dy's 16-byte pieces: cp.async ring [VPT + q*DYW + w][T] (each
// thread's own slots), bulk ring in the row's own byte order (piece w of vector v at
// VPT*T + v*DYW + w), the same slots when DYW = 1.
template <typename TX, typename TY, int VPT, bool BULK = false>
__device__ __forceinline__ void bv2_read(const uint4 *base, int q, int T, int tid, float *xf, float *gf)
{
    using C = bv2_cfg<TX, TY, VPT>;
    dt<TX>::unpack(lnmod_lds16(base + q * T), xf);
#pragma unroll
    for (int w = 0; w < C::DYW; w++) {
        const int at = BULK ? VPT * T + q * T * C::DYW + tid * (C::DYW - 1) + w : (VPT + q * C::DYW + w) * T;
        dt<TY>::unpack(lnmod_lds16(base + at), gf + w * (16 / (int)sizeof(TY)));
    }
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
// mid() runs once the group has passed the row's barrier: every thread of the group has
// finished the previous row (the bulk ring refills that row's stage there).
// FULL: T x VPT vectors cover the row exactly (no per-vector guard; T a compile-time constant).
template <typename TX, typename TY, int VPT, int G, bool SPS, bool HOLD, bool BULK, bool FULL, typename Mid>
__device__ __forceinline__ void bv2_row(const bv2_kp &k, const uint4 *base, float2 ms, int32_t r,
                                        int gq, int T, int tid, float2 (*red)[G][BV2_MAX_NW],
                                        int par, const float (&sp)[VPT][bv2_cfg<TX, TY, VPT>::VEC],
                                        const float *sps,
                                        float (&as)[VPT][bv2_cfg<TX, TY, VPT>::VEC],
                                        float (&ah)[VPT][bv2_cfg<TX, TY, VPT>::VEC], Mid &&mid)
{
    constexpr int VEC = bv2_cfg<TX, TY, VPT>::VEC, DYW = bv2_cfg<TX, TY, VPT>::DYW;
    const float mu = ms.x, rs = ms.y;
    float a = 0.0f, b = 0.0f;
    uint4 kept[HOLD ? VPT : 1][1 + DYW];
#pragma unroll
    for (int q = 0; q < VPT; q++) {
        if (FULL || tid + q * T < k.nv) {
            float xf[VEC], gf[VEC], s[VEC];
            if constexpr (HOLD)
                bv2_read_keep<TX, TY, VPT>(base, q, T, xf, gf, kept[q]);
            else
                bv2_read<TX, TY, VPT, BULK>(base, q, T, tid, xf, gf);
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
    mid();
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
        if (FULL || v < k.nv) {
            float xf[VEC], gf[VEC], s[VEC], o[VEC];
            if constexpr (HOLD)
                bv2_unpack_kept<TX, TY>(kept[q], DYW, xf, gf);
            else
                bv2_read<TX, TY, VPT, BULK>(base, q, T, tid, xf, gf);
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

// The launch parameters of v2's plan for d (validated by the caller), and whether the fused
// v2 path can take the descriptor at all (not per token, 32-bit walk, D <= 8192 a multiple
// of the vector); the dtype triple and the alignment are checked per configuration.
static inline bool bv2_make_kp(const lnmod_desc *d, int target, const void *x, const void *scale,
                               const void *dy, const float *mean, const float *rstd, void *dx,
                               void *dscale, void *dshift, void *workspace, bv2_kp *k)
{
    k->p = lnmod_make_bparams(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace);
    k->pl = bv2_make_plan(d->rows, d->rows_per_sample, d->frame_len, (int)d->layout, target);
    k->p.cpg = k->pl.cpg;
    k->p.nchunks = k->pl.nchunks;
    k->p.ws = k->pl.cpg > 1 ? static_cast<float *>(workspace) : nullptr;
    k->alias = 0;
    k->fence = 1;
    const int vec = 16 / (int)lnmod_dtype_size(d->x_dtype);
    if (d->layout == LNMOD_PER_TOKEN || !bv2_plan_ok(&k->pl) || k->pl.nchunks >= (1 << 30) || d->D > 8192 ||
        d->D % vec != 0)
        return false;
    k->D = (int32_t)d->D;
    k->nv = (int32_t)(d->D / vec);
    return true;
}

} // namespace

#endif
