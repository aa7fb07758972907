// lnmod_bwd_bulk.cu -- dtile backward's bulk path (version 2 of its fused kernel), tried first
// by lnmod_bwd_dtile_launch; the shapes it does not take run dtile's version-1 kernel.
//
// Takes: not per token, every pointer and modulation row 16-byte aligned, D a multiple of
// the vector, two vectors a thread in at most 384 threads (bf16/fp16 D <= 6144, fp32 D <=
// 3072), rows below 2^31, compute capability 9.0 or later (the bulk copy engine), a ring
// that fits the device's shared memory. The index math (chunk plan, shares, row shape) is
// in lnmod_bwd_bulk_plan.h, a function of the descriptor alone.
//
// A CTA holds G warp groups of T threads (G of 2, 3, 4 from D and the dtypes,
// lnmod_bulk_fill; G x T <= 768, 80 registers a thread); thread t of a group owns the
// vectors t and t + T of every row. Per group:
//   * a ring of NS stages in shared memory, each holding one row of x and of dy and its
//     mean/rstd, NS - 1 rows ahead. The group's thread 0 fills a stage: mbarrier
//     arrive.expect_tx with the row's bytes, two 1-D bulk copies (x's row and dy's row,
//     cp.async.bulk ... complete_tx), two 4-byte cp.async of mean[r] and rstd[r] and
//     cp.async.mbarrier.arrive.noinc (the barrier's second arrival). The group waits with
//     mbarrier.try_wait.parity (the parity flips when the ring wraps);
//   * per row: a = sum g, b = sum g*xhat (g = dy*(1 + scale)), a warp butterfly, one
//     exchange through shared memory behind a named barrier of the group's T threads, then
//     dx = fma(xhat, -rs*b/D, fma(g, rs, -rs*a/D)) with one rounding; the column sums
//     dy*xhat and dy of the group's rows in registers;
//   * a stage is refilled with the row NS - 1 ahead right after the group's barrier of the
//     next row: every thread of the group has then finished both passes over the stage. The
//     issuing thread puts fence.proxy.async between that barrier and the copy (generic-proxy
//     reads before async-proxy writes of the same bytes; measured free, kernels/NOTES.md);
//   * (1 + scale) of the chunk's modulation row: in registers at 8 elements a thread, else in
//     shared memory (loaded between two CTA barriers when the chunk's row changes);
//   * at a chunk's end the G groups' column sums meet in shared memory in the order
//     0 + 1 + .. + (G-1), the dscale sums first, then the dshift sums through the same
//     buffer (half the shared memory of both at once: 4 ring stages at bf16 D1536/D3072),
//     and group 0 writes them (final values when a group is one chunk, else the partials
//     lnmod_bwd_finalize adds in a fixed order).
// Measured (H200, kernels/experiments/2026-12-02-bwd-v2, round 2): 80-87% of the copy of the
// minimal bytes at the Wan shapes where version 1 reached 35-62%; the instruction count a
// byte was version 1's limit (per-thread cp.async address math and issue), which the copy
// engine takes over.
#include "lnmod_bwd_bulk_plan.h"
#include "lnmod_bwd_bulk_ring.cuh"
#include "lnmod_bwd_common.cuh"
#include "lnmod_variants.cuh"

// A named namespace (not an anonymous one): below sm_90 the kernel body is a trap and its
// device helpers go unreferenced, which an anonymous namespace would turn into warnings.
namespace lnmod_bulk_detail {

using namespace lnmod_detail;

// One of the two column sums of the G groups added in the order 0, 1, .., G-1 into group
// 0's registers, through a buffer of T x VPT x VEC floats. The chunk's end runs it for the
// dscale sums, then for the dshift sums: each sum keeps its order (the bits), and the buffer
// is half of one holding both (round 3's "half": at bf16 D1536 and D3072 a fourth ring
// stage fits again; 2(G-1) more CTA barriers a chunk).
template <int VEC, int G>
__device__ __forceinline__ void bk_combine(float *cmb, int gq, int T, int tid, float (&v)[BK_VPT][VEC])
{
#pragma unroll 1
    for (int k = 1; k < G; k++) {
        __syncthreads(); // group 0 has read the previous group's sums
        if (gq == k) {
#pragma unroll
            for (int q = 0; q < BK_VPT; q++)
#pragma unroll
                for (int e = 0; e < VEC; e++) cmb[(q * VEC + e) * T + tid] = v[q][e];
        }
        __syncthreads();
        if (gq == 0) {
#pragma unroll
            for (int q = 0; q < BK_VPT; q++)
#pragma unroll
                for (int e = 0; e < VEC; e++) v[q][e] += cmb[(q * VEC + e) * T + tid];
        }
    }
}

// (1 + scale) of modulation row g: this thread's vectors in registers (8 elements a
// thread), or the whole row in shared memory for the CTA (16: registers would not hold it
// beside the column sums).
template <typename TM, int VEC>
__device__ __forceinline__ void bk_load_scale(const bk_kp &k, int64_t g, int T, int tid, float (&sp)[BK_VPT][VEC])
{
    const TM *sc = static_cast<const TM *>(k.p.scale) + g * k.p.scale_stride;
#pragma unroll
    for (int q = 0; q < BK_VPT; q++) {
        const int v = tid + q * T;
        if (v < k.nv) {
            lnmod_load_n<TM, VEC>(sc + (int64_t)v * VEC, sp[q]);
#pragma unroll
            for (int e = 0; e < VEC; e++) sp[q][e] = 1.0f + sp[q][e];
        }
    }
}

template <typename TM>
__device__ __forceinline__ void bk_load_scale_smem(const bk_kp &k, int64_t g, float *sps)
{
    const TM *sc = static_cast<const TM *>(k.p.scale) + g * k.p.scale_stride;
    __syncthreads(); // nobody reads the previous row of (1 + scale) or the combine buffer
    constexpr int E = 16 / (int)sizeof(TM); // D is a multiple of E here
    for (int i = (int)threadIdx.x; i < k.D / E; i += (int)blockDim.x) {
        float f[E];
        lnmod_load_n<TM, E>(sc + E * i, f);
#pragma unroll
        for (int e = 0; e < E; e++) sps[E * i + e] = 1.0f + f[e];
    }
    __syncthreads();
}

template <int VEC, bool SPS>
__device__ __forceinline__ void bk_scale_of(const float (&sp)[BK_VPT][VEC], const float *sps, int q, int v, float *s)
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

// One row from ring stage `base`: the row sums reduced over the group, the column sums
// added, dx written. par: the exchange buffer of this row's parity. mid() runs once the
// group has passed the row's barrier (the refill of the previous row's stage).
template <typename TX, typename TY, int G, typename Mid>
__device__ __forceinline__ void bk_row(const bk_kp &k, const uint4 *base, float2 ms, int32_t r, int gq, int T,
                                       int tid, float2 (*red)[G][BK_MAX_NW], int par,
                                       const float (&sp)[BK_VPT][bk_cfg<TX, TY>::VEC], const float *sps,
                                       float (&as)[BK_VPT][bk_cfg<TX, TY>::VEC],
                                       float (&ah)[BK_VPT][bk_cfg<TX, TY>::VEC], Mid &&mid)
{
    constexpr int VEC = bk_cfg<TX, TY>::VEC;
    constexpr bool SPS = bk_cfg<TX, TY>::SPS;
    const float mu = ms.x, rs = ms.y;
    float a = 0.0f, b = 0.0f;
#pragma unroll
    for (int q = 0; q < BK_VPT; q++) {
        if (tid + q * T < k.nv) {
            float xf[VEC], gf[VEC], s[VEC];
            bk_read<TX, TY>(base, q, T, tid, xf, gf);
            bk_scale_of<VEC, SPS>(sp, sps, q, tid + q * T, s);
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
        bk_group_sync(gq, T);
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
    for (int q = 0; q < BK_VPT; q++) {
        const int v = tid + q * T;
        if (v < k.nv) {
            float xf[VEC], gf[VEC], s[VEC], o[VEC];
            bk_read<TX, TY>(base, q, T, tid, xf, gf);
            bk_scale_of<VEC, SPS>(sp, sps, q, v, s);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float xh = (xf[e] - mu) * rs;
                o[e] = fmaf(xh, ncb, fmaf(gf[e] * s[e], rs, nca));
            }
            lnmod_store_n<TX, VEC>(dxr + v * VEC, o);
        }
    }
}

// float2 statistics slots of a CTA (lnmod_bulk_stat_slots, host-tested), rounded up to 16
// bytes so that the combine buffer after them is float4-aligned.
__host__ __device__ constexpr int bk_stat_slots(int G, int NS) { return (G * NS + 1) / 2 * 2; }

template <typename TX, typename TM, typename TY, int NS, int G>
__global__ void __launch_bounds__(BK_MAXT, 1) bk_kernel(bk_kp k)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    using C = bk_cfg<TX, TY>;
    constexpr int VEC = C::VEC;
    static_assert(NS >= 2, "ring depth");
    extern __shared__ uint4 bk_smem[];
    __shared__ float2 red[2][G][BK_MAX_NW];
    __shared__ uint64_t full[G * NS]; // one mbarrier per group and stage
    const int T = (int)blockDim.x / G, gq = (int)threadIdx.x / T, tid = (int)threadIdx.x - gq * T;
    uint4 *ring = bk_smem + gq * NS * C::SLOTS * T;
    float2 *stats0 = reinterpret_cast<float2 *>(bk_smem + G * NS * C::SLOTS * T);
    float2 *stats = stats0 + gq * NS;
    float *cmb = reinterpret_cast<float *>(stats0 + bk_stat_slots(G, NS));
    float *sps = cmb + BK_VPT * VEC * T; // (1 + scale) of the chunk's row (SPS), after the combine buffer
    uint64_t *bar = full + gq * NS;
    cudaTriggerProgrammaticLaunchCompletion(); // the finalize may be scheduled from now on
    if (threadIdx.x == 0) {
        for (int i = 0; i < G * NS; i++) bk_mbar_init(&full[i], 2);
        bk_fence_proxy_async(); // the initialised barriers, seen by the copy engine
    }
    __syncthreads();
    const lnmod_bulk_plan &pl = k.pl;
    bk_cur pre;
    pre.c = (int32_t)blockIdx.x;
    pre.ok = false;
    if (tid == 0) bk_seek(pl, pre, gq, G); // only the issuer walks ahead
    for (int j = 0; j < NS - 1; j++) {
        if (pre.ok) {
            bk_issue<TX, TY>(k, ring, stats, bar, j, pre.r, T);
            bk_next(pl, pre, gq, G);
        }
    }
    float as[BK_VPT][VEC], ah[BK_VPT][VEC], sp[BK_VPT][VEC];
#pragma unroll
    for (int q = 0; q < BK_VPT; q++)
#pragma unroll
        for (int e = 0; e < VEC; e++) as[q][e] = ah[q][e] = sp[q][e] = 0.0f;
    int64_t g_loaded = -1;
    int slot = 0, par = 0;
    uint32_t phase = 0; // parity of the current use of stage `slot`
    for (int32_t c = (int32_t)blockIdx.x; c < pl.nchunks; c += (int32_t)gridDim.x) { // uniform
        int64_t g, r0, n;
        lnmod_bulk_chunk_rows(&pl, c, &g, &r0, &n);
        if (n == 0) continue; // uniform: no group has a row (no partial is read for it)
        int32_t r, step, cnt;
        lnmod_bulk_share(&pl, r0, n, gq, G, &r, &step, &cnt);
        if (g != g_loaded) {
            g_loaded = g;
            if constexpr (C::SPS)
                bk_load_scale_smem<TM>(k, g, sps);
            else
                bk_load_scale<TM, VEC>(k, g, T, tid, sp);
        }
        for (int32_t j = 0; j < cnt; j++, r += step) {
            const int s0 = slot == 0 ? NS - 1 : slot - 1; // the previous row's stage
            bk_mbar_wait(bar + slot, phase);              // this row's stage has landed
            const float2 ms = stats[slot];
            auto mid = [&]() {
                if (pre.ok) { // only the issuer's walk is ever ok
                    bk_fence_proxy_async();
                    bk_issue<TX, TY>(k, ring, stats, bar, s0, pre.r, T);
                    bk_next(pl, pre, gq, G);
                }
            };
            bk_row<TX, TY, G>(k, ring + slot * C::SLOTS * T + tid, ms, r, gq, T, tid, red, par, sp, sps, as, ah, mid);
            slot = slot + 1 == NS ? 0 : slot + 1;
            if (slot == 0) phase ^= 1u;
            par ^= 1;
        }
        // Every group passes its own barrier as often as group 0 (the largest share, one row
        // more than some): the CTA's barrier count then agrees between groups at each
        // CTA-wide barrier. On the H200 compute-sanitizer's racecheck reported hazards
        // between group 0's read of the combine buffer and another group's write one CTA
        // barrier later exactly in the chunks where the shares were uneven (kernels/NOTES.md
        // item 12); nothing else in the kernel depends on it.
        if (T > 32 && cnt < (int32_t)((n + G - 1) / G)) bk_group_sync(gq, T);
        bk_combine<VEC, G>(cmb, gq, T, tid, as); // dscale's sums, then dshift's
        bk_combine<VEC, G>(cmb, gq, T, tid, ah);
        if (gq == 0) {
#pragma unroll
            for (int q = 0; q < BK_VPT; q++) {
                const int v = tid + q * T;
                if (v < k.nv) lnmod_bwd_flush<TM, VEC, true>(k.p, c, g, (int64_t)v * VEC, as[q], ah[q]);
            }
        }
#pragma unroll
        for (int q = 0; q < BK_VPT; q++)
#pragma unroll
            for (int e = 0; e < VEC; e++) as[q][e] = ah[q][e] = 0.0f;
    }
#else
    (void)k;
    __trap(); // never launched below compute capability 9.0 (bk_launch checks)
#endif
}

// ---- host side ------------------------------------------------------------------------
// Shared memory of a CTA (lnmod_bulk_smem, host-tested): G rings of NS stages, their
// statistics, the combine buffer (one float an element: bk_combine takes one sum at a time)
// and (SPS) the row of (1 + scale). The experiment let (1 + scale) share the combine buffer
// (reloaded after each combine); compute-sanitizer's racecheck reported hazards between the
// two on the H200 (2026-12-02, kernels/NOTES.md), so they are apart.
static_assert(BK_VPT == 2 && BK_MAXT == LNMOD_BULK_MAXT && BK_MAX_NW == LNMOD_BULK_MAX_NW,
              "lnmod_bulk_fill plans two vectors a thread, 768 threads a CTA, 12 warps a group");
static size_t bk_smem_bytes(int G, int NS, int T, int slots, int vec, int64_t D, bool sps)
{
    return (size_t)lnmod_bulk_smem(G, NS, T, slots, vec, D, sps ? 1 : 0);
}

template <typename TX, typename TM, typename TY, int NS, int G>
lnmod_status bk_go(const bk_kp &k, int T, size_t smem, int per_sm, cudaStream_t stream)
{
    int sms = 1;
    lnmod_status st = lnmod_sm_count(&sms);
    if (st != LNMOD_OK) return st;
    int64_t grid = (int64_t)per_sm * sms;
    if (grid > k.pl.nchunks) grid = k.pl.nchunks;
    bk_kernel<TX, TM, TY, NS, G><<<(unsigned)grid, (unsigned)(G * T), smem, stream>>>(k);
    st = lnmod_launch_status();
    return st != LNMOD_OK ? st : lnmod_bwd_finalize<TM>(k.p, stream);
}

// Ring depth: of 4, 3 and 2 stages the one with the most CTAs per SM, the deeper on a tie
// (the depth changes no result, only the speed). *ran stays false when none fits.
template <typename TX, typename TM, typename TY, int G>
lnmod_status bk_stages(const bk_kp &k, int T, cudaStream_t stream, bool *ran)
{
    using C = bk_cfg<TX, TY>;
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    size_t sm[5] = {0, 0, 0, 0, 0};
    int occ[5] = {0, 0, 0, 0, 0}, best = 0;
    for (int ns = 4; ns >= 2; ns--) sm[ns] = bk_smem_bytes(G, ns, T, C::SLOTS, C::VEC, k.D, C::SPS);
    lnmod_status st = LNMOD_OK;
    if (sm[4] <= (size_t)optin) st = bk_occupancy(bk_kernel<TX, TM, TY, 4, G>, G * T, sm[4], &occ[4]);
    if (st == LNMOD_OK && sm[3] <= (size_t)optin)
        st = bk_occupancy(bk_kernel<TX, TM, TY, 3, G>, G * T, sm[3], &occ[3]);
    if (st == LNMOD_OK && sm[2] <= (size_t)optin)
        st = bk_occupancy(bk_kernel<TX, TM, TY, 2, G>, G * T, sm[2], &occ[2]);
    if (st != LNMOD_OK) return st;
    for (int ns = 4; ns >= 2; ns--)
        if (occ[ns] > occ[best]) best = ns;
    if (best == 0) return LNMOD_OK;
    *ran = true;
    switch (best) {
    case 4: return bk_go<TX, TM, TY, 4, G>(k, T, sm[4], occ[4], stream);
    case 3: return bk_go<TX, TM, TY, 3, G>(k, T, sm[3], occ[3], stream);
    default: return bk_go<TX, TM, TY, 2, G>(k, T, sm[2], occ[2], stream);
    }
}

template <typename TX, typename TM, typename TY>
lnmod_status bk_typed(const bk_kp &k, int T, int G, cudaStream_t stream, bool *ran)
{
    if (!lnmod_bwd_vector_ok<TX, TM, TY>(k.p)) return LNMOD_OK;
    switch (G) { // lnmod_bulk_fill's groups
    case 4: return bk_stages<TX, TM, TY, 4>(k, T, stream, ran);
    case 3: return bk_stages<TX, TM, TY, 3>(k, T, stream, ran);
    default: return bk_stages<TX, TM, TY, 2>(k, T, stream, ran);
    }
}

} // namespace lnmod_bulk_detail

using namespace lnmod_bulk_detail;

// The bulk path's whole configuration for a descriptor, in one place: the chunk plan (a
// function of the row layout only) and the row shape (T threads a group, G groups: of D and
// the x and dy dtypes, lnmod_bulk_fill). False where the bulk path does not take the
// descriptor (per token, D not a multiple of the vector, a plan or row shape past its limits).
static bool bk_config(const lnmod_desc *d, lnmod_bulk_plan *pl, int *threads, int *groups)
{
    const int64_t vec = 16 / (int64_t)lnmod_dtype_size(d->x_dtype);
    const int dyw = (int)(vec * (int64_t)lnmod_dtype_size(d->y_dtype) / 16); // bk_cfg's DYW
    if (d->layout == LNMOD_PER_TOKEN || d->D % vec != 0) return false;
    *pl = lnmod_bulk_make_plan(d->rows, d->rows_per_sample, d->frame_len, (int)d->layout);
    lnmod_bulk_fit f;
    if (!lnmod_bulk_plan_ok(pl) || !lnmod_bulk_fill(d->D / vec, (int)vec, dyw, &f)) return false;
    *threads = f.threads;
    *groups = f.groups;
    return true;
}

int lnmod_bwd_bulk_takes(const lnmod_desc *d, int *threads, int *groups)
{
    lnmod_bulk_plan pl;
    return bk_config(d, &pl, threads, groups) ? 1 : 0;
}

int64_t lnmod_bwd_bulk_workspace(const lnmod_desc *d)
{
    lnmod_bulk_plan pl;
    int T = 0, G = 0;
    if (!bk_config(d, &pl, &T, &G) || pl.cpg <= 1) return 0;
    if (pl.nchunks > INT64_MAX / 8 / d->D) return -1;
    return pl.nchunks * 8 * d->D;
}

int64_t lnmod_bwd_bulk_chunks(const lnmod_desc *d)
{
    lnmod_bulk_plan pl;
    int T = 0, G = 0;
    return bk_config(d, &pl, &T, &G) ? pl.nchunks : 0;
}

lnmod_status lnmod_bwd_bulk_launch(const lnmod_desc *d, const void *x, const void *scale, const void *dy,
                                   const float *mean, const float *rstd, void *dx, void *dscale, void *dshift,
                                   void *workspace, cudaStream_t stream, int *ran)
{
    *ran = 0;
    int T = 0, G = 0, dev = 0, major = 0;
    bk_kp k;
    if (!bk_config(d, &k.pl, &T, &G)) return LNMOD_OK;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (major < 9) return LNMOD_OK; // no bulk copy engine
    k.p = lnmod_make_bparams(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace);
    k.p.cpg = k.pl.cpg;
    k.p.nchunks = k.pl.nchunks;
    k.p.ws = k.pl.cpg > 1 ? static_cast<float *>(workspace) : nullptr;
    k.D = (int32_t)d->D;
    k.nv = (int32_t)(d->D / (16 / (int64_t)lnmod_dtype_size(d->x_dtype)));
    bool went = false;
    const lnmod_status st = lnmod_dispatch_dtypes(d, [&](auto tx, auto tm, auto ty) {
        return bk_typed<typename decltype(tx)::type, typename decltype(tm)::type, typename decltype(ty)::type>(
            k, T, G, stream, &went);
    });
    *ran = went ? 1 : 0;
    return st;
}
