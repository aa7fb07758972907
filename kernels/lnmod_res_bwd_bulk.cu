// lnmod_res_bwd_bulk.cu -- the fused residual op's dtile backward on a bulk-copy ring (tried
// first by lnmod_res_bwd_dtile_launch), built like dtile backward's bulk path
// (lnmod_bwd_bulk.cu, version 2; kernels/NOTES.md backward items 8-10). Measured (H200,
// kernels/experiments/2026-12-02-res, as variant "dtile_bulk"): 85.9-90.7% of the in-run copy of
// lnmod_res_bwd_min_bytes at the Wan shapes. Fused path: Wan's dtypes (res fp32, branch bf16, mod
// fp32, out bf16), D a multiple of 8 in 16..6144, 16-byte aligned pointers, strides multiples of
// 4, compute capability 9.0, and either MODULATE or AFFINE with a gate per sample or per frame
// whose chunks all hold rows (Wan's site 1: x + y e[2], then norm3); else dtile's backward
// (MODULATE, D 1536/3072/5120) or naive's.
//   * The chunks are res_bulk_walk's (lnmod_bwd_bulk_plan.h's rule, chunks per group rounded
//     down, ~512 above 65,536 rows, over the modulation groups -- the gate's under AFFINE; the
//     workspace is the larger of it and the common plan, res_finalize reads the plan it is
//     given); G warp groups of T threads share a chunk (lnmod_res_bwd_bulk_plan.h: group q takes
//     the chunk's rows q, q + G, ...).
//   * Per group a ring of NS stages, each one row's h, d_out, dh and y (12 B an element; 10
//     without a gate) and its mean/rstd; the group's thread 0 fills a stage with one mbarrier
//     arrive.expect_tx, up to four 1-D bulk copies and two 4-byte cp.async (mean, rstd) +
//     cp.async.mbarrier.arrive.noinc, NS - 1 rows ahead, walking its group's rows across the
//     CTA's chunks; a stage is refilled after the group's barrier of the next row, behind
//     fence.proxy.async (the production's order).
//   * Thread t owns quads (4 columns) t, t + T, t + 2T, t + 3T: h and dh one 16-byte shared
//     load a quad, d_out and y one 8-byte load (conflict-free); 1 + scale (AFFINE: the weight)
//     and the gate of the chunk's modulation row in registers (32 floats), dscale, dshift, dgate
//     of the group's rows in registers (48 floats).
//   * A row: pass 1 sums gm = d_out (1 + scale) and gm xhat (butterflies, one exchange of the
//     warp sums behind the group's named barrier, parity-buffered) and adds d_out xhat, d_out to
//     the column sums; pass 2 re-reads the stage: t = fmaf(rs, gm - ca - xhat cb, dh) (dtile's
//     and naive's expression), dr = t, dy = g t (plain stores: dr may be dh, whose row is
//     already in shared memory), dgate += t y.
//   * Chunk end: the G groups' sums meet in shared memory, one sum at a time, in the order
//     0 + 1 + .. + (G-1); group 0 writes final values (one chunk a group; under AFFINE the norm's
//     only when the walk is one chunk) or the partials; under AFFINE res_finalize adds the norm's
//     partials of every chunk (res_bulk_norm_fin), so every chunk must hold a row
//     (lnmod_res_bulk_chunks_full, checked by res_bwd_bulk_shape).
// The PTX helpers (bk_sa, bk_mbar_init, bk_mbar_wait, bk_fence_proxy_async, bk_group_sync) are
// lnmod_bulk_ptx.cuh's, the statements of dtile backward's bulk path (lnmod_bwd_bulk.cu).
#include "lnmod_res_bwd_bulk_plan.h"
#include "lnmod_res_common.cuh"
#include "lnmod_res_variants.cuh"

#include "lnmod_bulk_ptx.cuh"

namespace lnmod_res_bulk_detail {

using namespace lnmod_res_detail;
using lnmod_bulk_ptx::bk_fence_proxy_async;
using lnmod_bulk_ptx::bk_group_sync;
using lnmod_bulk_ptx::bk_mbar_init;
using lnmod_bulk_ptx::bk_mbar_wait;
using lnmod_bulk_ptx::bk_sa;

constexpr int QPT = LNMOD_RES_BULK_QPT;
constexpr int MAXW = LNMOD_RES_BULK_MAXT / 32;

struct rk_kp {
    res_params p;
    lnmod_bparams q;
    float *wn, *wg;
    res_fin_out on, og;
    lnmod_res_bulk_stage sg;
    int32_t D, nq;
    int norm_final; // the norm's sums are final values at a chunk's end (see rk_flush)
};

// The issuing thread's walk over its group's rows: chunks blockIdx.x, + gridDim.x, ... whose
// share for this group is not empty, each share in row order.
struct rk_cur {
    int64_t c, r, step, left;
    bool ok;
};

__device__ __forceinline__ void rk_seek(const lnmod_bparams &q, rk_cur &u, int gq, int G)
{
    for (; u.c < q.nchunks; u.c += gridDim.x) {
        int64_t m, r0, n, cnt;
        lnmod_chunk_rows(q, u.c, &m, &r0, &n);
        lnmod_res_bulk_share(r0, n, q.cpg, gq, G, &u.r, &u.step, &cnt);
        if (cnt > 0) {
            u.left = cnt;
            u.ok = true;
            return;
        }
    }
    u.ok = false;
}

__device__ __forceinline__ void rk_next(const lnmod_bparams &q, rk_cur &u, int gq, int G)
{
    if (--u.left > 0) {
        u.r += u.step;
    } else {
        u.c += gridDim.x;
        rk_seek(q, u, gq, G);
    }
}

// The issue's four PTX statements.
__device__ __forceinline__ void rk_bulk(char *dst, const void *src, unsigned bytes, uint64_t *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     bk_sa(dst)),
                 "l"(src), "r"(bytes), "r"(bk_sa(bar))
                 : "memory");
}

__device__ __forceinline__ void rk_expect_tx(uint64_t *bar, unsigned bytes)
{
    asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n\t}" ::"r"(bk_sa(bar)),
                 "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void rk_cp4(float *dst, const float *src)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(bk_sa(dst)), "l"(src) : "memory");
}

__device__ __forceinline__ void rk_arrive_noinc(uint64_t *bar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bk_sa(bar)) : "memory");
}

// Row r into stage s of a group's ring (ring: its first stage; stats: its NS float2; bar: its
// NS mbarriers, each expecting two arrivals). Issued by the group's thread 0 only.
__device__ __forceinline__ void rk_issue(const rk_kp &k, char *ring, float2 *stats, uint64_t *bar, int s, int64_t r)
{
    char *st = ring + (int64_t)s * k.sg.bytes;
    uint64_t *mb = bar + s;
    const unsigned d4 = 4u * (unsigned)k.D, d2 = 2u * (unsigned)k.D;
    const int64_t e = r * k.D;
    rk_expect_tx(mb, (unsigned)k.sg.bytes);
    rk_bulk(st + k.sg.h, static_cast<const float *>(k.p.hin) + e, d4, mb);
    rk_bulk(st + k.sg.dout, static_cast<const __nv_bfloat16 *>(k.p.dout) + e, d2, mb);
    if (k.p.dh) rk_bulk(st + k.sg.dh, static_cast<const float *>(k.p.dh) + e, d4, mb);
    if (k.p.has_gate) rk_bulk(st + k.sg.y, static_cast<const __nv_bfloat16 *>(k.p.y) + e, d2, mb);
    rk_cp4(&stats[s].x, k.p.mean_in + r);
    rk_cp4(&stats[s].y, k.p.rstd_in + r);
    rk_arrive_noinc(mb);
}

__device__ __forceinline__ void rk_f4(const char *p, float *f)
{
    const uint4 u = lnmod_lds16(reinterpret_cast<const uint4 *>(p));
    f[0] = __uint_as_float(u.x);
    f[1] = __uint_as_float(u.y);
    f[2] = __uint_as_float(u.z);
    f[3] = __uint_as_float(u.w);
}

// Four bf16 from shared memory (8 bytes), widened.
__device__ __forceinline__ void rk_b4(const char *p, float *f)
{
    unsigned x, y;
    asm volatile("ld.shared.v2.u32 {%0,%1}, [%2];" : "=r"(x), "=r"(y) : "r"(bk_sa(p)));
    f[0] = __uint_as_float(x << 16);
    f[1] = __uint_as_float(x & 0xffff0000u);
    f[2] = __uint_as_float(y << 16);
    f[3] = __uint_as_float(y & 0xffff0000u);
}

__device__ __forceinline__ unsigned rk_pack2(float a, float b)
{
    return (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(a)) |
           ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(b)) << 16);
}

typedef float rk_q[QPT][4]; // a thread's 16 columns

// One row from ring stage `sg0` (its bytes): pass 1, the group's row sums, mid() (the refill of
// the previous row's stage), pass 2 with dr and dy stored. par: this row's exchange buffer.
template <int G, typename Mid>
__device__ __forceinline__ void rk_row(const rk_kp &k, const char *sg0, float2 ms, int64_t r, int gq, int T, int tid,
                                       float2 (*red)[G][MAXW], int par, const rk_q &a, const rk_q &g, rk_q &ds,
                                       rk_q &dsh, rk_q &dg, Mid &&mid)
{
    const float mu = ms.x, rs = ms.y;
    float sa = 0.0f, sb = 0.0f;
#pragma unroll
    for (int u = 0; u < QPT; u++) {
        const int qd = tid + u * T;
        if (qd < k.nq) {
            float hv[4], go[4];
            rk_f4(sg0 + k.sg.h + 16 * qd, hv);
            rk_b4(sg0 + k.sg.dout + 8 * qd, go);
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float xh = (hv[e] - mu) * rs, gm = go[e] * a[u][e];
                sa += gm;
                sb = fmaf(gm, xh, sb);
                ds[u][e] = fmaf(go[e], xh, ds[u][e]);
                dsh[u][e] += go[e];
            }
        }
    }
    lnmod_warp_sum2(sa, sb);
    const int NW = T >> 5, lane = tid & 31, warp = tid >> 5;
    if (lane == 0) red[par][gq][warp] = make_float2(sa, sb);
    if (NW > 1)
        bk_group_sync(gq, T);
    else
        __syncwarp();
    mid();
    float ta = 0.0f, tb = 0.0f;
    for (int w = 0; w < NW; w++) { // fixed order
        const float2 v = red[par][gq][w];
        ta += v.x;
        tb += v.y;
    }
    const float invd = 1.0f / (float)k.D, ca = ta * invd, cb = tb * invd;
    float *dr = static_cast<float *>(k.p.dr) + r * k.D;
    __nv_bfloat16 *dy = static_cast<__nv_bfloat16 *>(k.p.dy) + r * k.D;
#pragma unroll
    for (int u = 0; u < QPT; u++) {
        const int qd = tid + u * T;
        if (qd < k.nq) {
            float hv[4], go[4], dh[4] = {0.0f, 0.0f, 0.0f, 0.0f}, yv[4] = {0.0f, 0.0f, 0.0f, 0.0f}, t[4];
            rk_f4(sg0 + k.sg.h + 16 * qd, hv);
            rk_b4(sg0 + k.sg.dout + 8 * qd, go);
            if (k.p.dh) rk_f4(sg0 + k.sg.dh + 16 * qd, dh);
            if (k.p.has_gate) rk_b4(sg0 + k.sg.y + 8 * qd, yv);
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float xh = (hv[e] - mu) * rs, gm = go[e] * a[u][e];
                t[e] = fmaf(rs, gm - ca - xh * cb, dh[e]);
                dg[u][e] = fmaf(t[e], yv[e], dg[u][e]);
            }
            reinterpret_cast<float4 *>(dr)[qd] = make_float4(t[0], t[1], t[2], t[3]);
            reinterpret_cast<uint2 *>(dy)[qd] = make_uint2(rk_pack2(g[u][0] * t[0], g[u][1] * t[1]),
                                                           rk_pack2(g[u][2] * t[2], g[u][3] * t[3]));
        }
    }
}

// One column sum of the G groups added in the order 0, 1, .., G-1 into group 0's registers,
// through cmb (QPT x 4 floats a thread).
template <int G> __device__ __forceinline__ void rk_combine(float *cmb, int gq, int T, int tid, rk_q &x)
{
#pragma unroll 1
    for (int kk = 1; kk < G; kk++) {
        __syncthreads(); // group 0 has read the previous group's sums
        if (gq == kk)
#pragma unroll
            for (int u = 0; u < QPT; u++)
#pragma unroll
                for (int e = 0; e < 4; e++) cmb[(u * 4 + e) * T + tid] = x[u][e];
        __syncthreads();
        if (gq == 0)
#pragma unroll
            for (int u = 0; u < QPT; u++)
#pragma unroll
                for (int e = 0; e < 4; e++) x[u][e] += cmb[(u * 4 + e) * T + tid];
    }
}

__device__ __forceinline__ void rk_st4(float *p, const float *v)
{
    *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
}

// Group 0's sums of chunk c (modulation row m): final values (the gate's when cpg == 1; the
// norm's when its row has one chunk: cpg == 1 under MODULATE, a walk of one chunk under AFFINE,
// row 0) or the partials.
__device__ __forceinline__ void rk_flush(const rk_kp &k, int64_t c, int64_t m, int T, int tid, const rk_q &ds,
                                         const rk_q &dsh, const rk_q &dg)
{
    const int64_t D = k.D;
#pragma unroll
    for (int u = 0; u < QPT; u++) {
        const int qd = tid + u * T;
        if (qd >= k.nq) continue;
        const int64_t col = 4 * (int64_t)qd;
        if (k.norm_final) {
            const int64_t mn = k.p.affine ? 0 : m;
            rk_st4(static_cast<float *>(k.on.out[0]) + mn * k.on.stride[0] + col, ds[u]);
            rk_st4(static_cast<float *>(k.on.out[1]) + mn * k.on.stride[1] + col, dsh[u]);
        } else {
            rk_st4(k.wn + c * 2 * D + col, ds[u]);
            rk_st4(k.wn + c * 2 * D + D + col, dsh[u]);
        }
        if (k.p.has_gate) {
            if (k.q.cpg == 1) rk_st4(static_cast<float *>(k.og.out[0]) + m * k.og.stride[0] + col, dg[u]);
            else rk_st4(k.wg + c * D + col, dg[u]);
        }
    }
}

// 1 + scale (AFFINE: the weight, whose stride is 0) and the gate (1 without one) of modulation
// row m, this thread's quads.
__device__ __forceinline__ void rk_mod(const rk_kp &k, int64_t m, int T, int tid, rk_q &a, rk_q &g)
{
#pragma unroll
    for (int u = 0; u < QPT; u++) {
        const int qd = tid + u * T;
        float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f), h = make_float4(1.0f, 1.0f, 1.0f, 1.0f);
        if (qd < k.nq) {
            s = reinterpret_cast<const float4 *>(static_cast<const float *>(k.p.scale) + m * k.p.scale_stride)[qd];
            if (k.p.has_gate)
                h = reinterpret_cast<const float4 *>(static_cast<const float *>(k.p.gate) + m * k.p.gate_stride)[qd];
        }
        const float one = k.p.affine ? 0.0f : 1.0f;
        a[u][0] = one + s.x, a[u][1] = one + s.y, a[u][2] = one + s.z, a[u][3] = one + s.w;
        g[u][0] = h.x, g[u][1] = h.y, g[u][2] = h.z, g[u][3] = h.w;
    }
}

template <int NS, int G>
__global__ void __launch_bounds__(LNMOD_RES_BULK_MAXT, 1) rk_kernel(rk_kp k)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    static_assert(NS >= 2, "ring depth");
    extern __shared__ uint4 rk_smem[];
    __shared__ float2 red[2][G][MAXW];
    __shared__ float2 stats0[G * NS];
    __shared__ uint64_t full[G * NS]; // one mbarrier per group and stage
    const int T = (int)blockDim.x / G, gq = (int)threadIdx.x / T, tid = (int)threadIdx.x - gq * T;
    char *ring = reinterpret_cast<char *>(rk_smem) + (int64_t)gq * NS * k.sg.bytes;
    float *cmb = reinterpret_cast<float *>(reinterpret_cast<char *>(rk_smem) + (int64_t)G * NS * k.sg.bytes);
    float2 *stats = stats0 + gq * NS;
    uint64_t *bar = full + gq * NS;
    if (threadIdx.x == 0) {
        for (int i = 0; i < G * NS; i++) bk_mbar_init(&full[i], 2);
        bk_fence_proxy_async(); // the initialised barriers, seen by the copy engine
    }
    __syncthreads();
    rk_cur pre;
    pre.c = (int64_t)blockIdx.x;
    pre.ok = false;
    if (tid == 0) rk_seek(k.q, pre, gq, G); // only the issuer walks ahead
    for (int j = 0; j < NS - 1; j++) {
        if (pre.ok) {
            rk_issue(k, ring, stats, bar, j, pre.r);
            rk_next(k.q, pre, gq, G);
        }
    }
    rk_q a, g, ds, dsh, dg;
    int slot = 0, par = 0;
    uint32_t phase = 0; // parity of the current use of stage `slot`
    for (int64_t c = (int64_t)blockIdx.x; c < k.q.nchunks; c += gridDim.x) { // uniform in the CTA
        int64_t m, r0, n, r, step, cnt;
        lnmod_chunk_rows(k.q, c, &m, &r0, &n);
        if (n == 0) continue; // uniform: no group has a row (no partial is read for it)
        lnmod_res_bulk_share(r0, n, k.q.cpg, gq, G, &r, &step, &cnt);
        rk_mod(k, m, T, tid, a, g);
#pragma unroll
        for (int u = 0; u < QPT; u++)
#pragma unroll
            for (int e = 0; e < 4; e++) ds[u][e] = dsh[u][e] = dg[u][e] = 0.0f;
        for (int64_t j = 0; j < cnt; j++, r += step) {
            const int s0 = slot == 0 ? NS - 1 : slot - 1; // the previous row's stage
            bk_mbar_wait(bar + slot, phase);              // this row's stage has landed
            const float2 ms = stats[slot];
            auto mid = [&]() {
                if (pre.ok) { // only the issuer's walk is ever ok
                    bk_fence_proxy_async();
                    rk_issue(k, ring, stats, bar, s0, pre.r);
                    rk_next(k.q, pre, gq, G);
                }
            };
            rk_row<G>(k, ring + (int64_t)slot * k.sg.bytes, ms, r, gq, T, tid, red, par, a, g, ds, dsh, dg, mid);
            slot = slot + 1 == NS ? 0 : slot + 1;
            if (slot == 0) phase ^= 1u;
            par ^= 1;
        }
        if constexpr (G > 1) {
            // Every group passes its own barrier as often as group 0 (the largest share, one
            // row more than some), as lnmod_bwd_bulk.cu's groups do (kernels/NOTES.md item 12):
            // without it compute-sanitizer's racecheck reported hazards between group 0's read
            // of cmb and another group's write one CTA barrier later (H200, D1536, 160 rows).
            if (T > 32 && cnt < (n + G - 1) / G) bk_group_sync(gq, T);
            rk_combine<G>(cmb, gq, T, tid, ds);
            rk_combine<G>(cmb, gq, T, tid, dsh);
            if (k.p.has_gate) rk_combine<G>(cmb, gq, T, tid, dg); // uniform
        }
        if (gq == 0) rk_flush(k, c, m, T, tid, ds, dsh, dg);
    }
#else
    (void)k;
    __trap(); // never launched below compute capability 9.0 (res_bwd_bulk checks)
#endif
}

bool al16(const void *x) { return ((uintptr_t)x & 15u) == 0; }

// Launches the NS-stage kernel with `smem` dynamic bytes; *ran stays false when it does not fit.
template <int NS, int G> lnmod_status rk_go(const rk_kp &k, int T, size_t smem, cudaStream_t stream, bool *ran)
{
    int per_sm = 0, sms = 1;
    if (cudaFuncSetAttribute(rk_kernel<NS, G>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess ||
        cudaFuncSetAttribute(rk_kernel<NS, G>, cudaFuncAttributePreferredSharedMemoryCarveout,
                             (int)cudaSharedmemCarveoutMaxShared) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rk_kernel<NS, G>, G * T, smem) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (per_sm < 1) return LNMOD_OK;
    const lnmod_status st = lnmod_sm_count(&sms);
    if (st != LNMOD_OK) return st;
    int64_t grid = (int64_t)per_sm * sms;
    if (grid > k.q.nchunks) grid = k.q.nchunks;
    *ran = true;
    rk_kernel<NS, G><<<(unsigned)grid, (unsigned)(G * T), smem, stream>>>(k);
    return lnmod_launch_status();
}

// Ring depth: 3 stages where they fit the device's shared memory, else 2 (the depth changes
// no result, only the speed).
template <int G> lnmod_status rk_stages(const rk_kp &k, int T, cudaStream_t stream, bool *ran)
{
    cudaFuncAttributes fa;
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
        cudaFuncGetAttributes(&fa, rk_kernel<3, G>) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    const int ns = lnmod_res_bulk_stages(G, T, k.sg.bytes, (int64_t)optin - (int64_t)fa.sharedSizeBytes);
    if (ns == 0) return LNMOD_OK;
    const size_t smem = (size_t)lnmod_res_bulk_smem(G, ns, T, k.sg.bytes);
    return ns == 3 ? rk_go<3, G>(k, T, smem, stream, ran) : rk_go<2, G>(k, T, smem, stream, ran);
}

} // namespace lnmod_res_bulk_detail

namespace lnmod_res_detail {

using namespace lnmod_res_bulk_detail;

int res_bwd_bulk_shape(const lnmod_res_desc *d)
{
    int T = 0, G = 0;
    if (d->res_dtype != LNMOD_F32 || d->branch_dtype != LNMOD_BF16 || d->mod_dtype != LNMOD_F32 ||
        d->out_dtype != LNMOD_BF16 || !lnmod_res_bulk_shape(d->D, &T, &G))
        return 0;
    if (d->gate == LNMOD_RES_GATE && d->gate_stride % 4 != 0) return 0;
    if (d->norm == LNMOD_RES_AFFINE) { // weight and bias contiguous; the walk is the gate's
        if (d->gate != LNMOD_RES_GATE || d->layout == LNMOD_PER_TOKEN) return 0;
        return lnmod_res_bulk_chunks_full(d->rows_per_sample, d->frame_len, (int)d->layout, res_bulk_walk(d).cpg);
    }
    return d->scale_stride % 4 == 0 && d->shift_stride % 4 == 0;
}

int res_bwd_bulk_takes(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out)
{
    if (!res_bwd_bulk_shape(d)) return 0;
    const bool gate = d->gate == LNMOD_RES_GATE;
    if (!al16(in->h) || !al16(in->scale) || !al16(in->dout) || (in->dh && !al16(in->dh)) || !al16(out->dr) ||
        !al16(out->dy) || !al16(out->dscale) || !al16(out->dshift))
        return 0;
    return !gate || (al16(in->y) && al16(in->gate) && al16(out->dgate));
}

lnmod_status res_bwd_bulk(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out,
                          void *workspace, cudaStream_t stream, int *ran)
{
    *ran = 0;
    int T = 0, G = 0, dev = 0, major = 0;
    if (!lnmod_res_bulk_shape(d->D, &T, &G)) return LNMOD_OK;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (major < 9) return LNMOD_OK; // no bulk copy engine
    rk_kp k;
    k.p = res_make_params(d);
    k.p.hin = in->h;
    k.p.y = in->y;
    k.p.gate = in->gate;
    k.p.scale = in->scale;
    k.p.dout = in->dout;
    k.p.dh = in->dh;
    k.p.mean_in = in->mean;
    k.p.rstd_in = in->rstd;
    k.p.dr = out->dr;
    k.p.dy = out->dy;
    const res_ws_layout w = res_ws_of(d);
    char *ws = static_cast<char *>(workspace);
    // One walk for all three sums: under MODULATE the gate's geometry is the norm's; under AFFINE
    // the walk is the gate's and the norm's finalize adds every chunk.
    k.q = res_bulk_walk(d);
    const lnmod_bparams qn = res_bulk_norm_fin(d, k.q);
    k.norm_final = qn.cpg == 1;
    k.on = {{out->dscale, out->dshift, nullptr}, {d->scale_stride, d->shift_stride, 0}};
    k.og = {{out->dgate, nullptr, nullptr}, {d->gate_stride, 0, 0}};
    k.wn = reinterpret_cast<float *>(ws + w.norm);
    k.wg = reinterpret_cast<float *>(ws + w.gate);
    k.sg = lnmod_res_bulk_stage_of(d->D, in->dh != nullptr, k.p.has_gate);
    k.D = (int32_t)d->D;
    k.nq = (int32_t)(d->D / 4);
    bool went = false;
    lnmod_status st = G == 4 ? rk_stages<4>(k, T, stream, &went)
                      : G == 2 ? rk_stages<2>(k, T, stream, &went)
                               : rk_stages<1>(k, T, stream, &went);
    if (st != LNMOD_OK || !went) return st;
    *ran = 1;
    if ((st = res_finalize(qn, 2, k.wn, k.on, LNMOD_F32, stream)) != LNMOD_OK) return st;
    if (k.p.has_gate) return res_finalize(k.q, 1, k.wg, k.og, LNMOD_F32, stream);
    return LNMOD_OK;
}

} // namespace lnmod_res_detail
