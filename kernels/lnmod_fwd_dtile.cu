// lnmod_fwd_dtile.cu -- variant "dtile": the D-tile coalesced fused forward (the paper's
// kernel), built to run at device-memory speed. Two versions: version 1 (this file) keeps its
// six specialized widths where fv2_v1_keeps says so (lnmod_fwd_v2_plan.h: D 1536 alone where
// the flat chunk kernel takes the problem, all six elsewhere); every other problem goes to
// version 2's rule (lnmod_fwd_v2.h: one configuration from D, the dtypes, the alignment and
// the device's facts for every width), and back to version 1's generic path only where no v2
// plan runs.
//
// Specialized path (D in {1536, 2048, 3072, 4096, 5120, 8192}, every pointer 16-byte
// aligned, modulation rows at 16-byte multiples):
//   * A row is split into 16-byte vectors (8 bf16/fp16 or 4 fp32). THREADS threads own a
//     row, VPT vectors each, THREADS*VPT*VEC == D exactly: no masked lane, every x/y access
//     a coalesced 128-bit access. Thread t owns vectors t, t+THREADS, ... (so a warp's
//     k-th load covers 512 contiguous bytes). 16-bit rows of D = 1536 are owned by ONE
//     warp (no block barrier at all).
//   * The row is widened to fp32 once; the statistics take one pass over registers around
//     a per-warp pivot (with a rare second pass when the pivot was far from the mean, see
//     dtile_row), warp butterflies, then ONE cross-warp merge through shared memory
//     (Chan's formula), double-buffered by row parity so one __syncthreads per row is
//     enough.
//   * Persistent grid (CTAs = occupancy * SMs); CTA b takes rows b, b+G, b+2G, ... and
//     keeps (1 + scale) and shift of the current modulation row in registers as fp32,
//     reloading only when m(r) changes (per-sample: about once per sample; per-frame: once
//     per frame; per-token: every row).
//   * Staged prefetch: x rows stream into a ring of NSTAGE row buffers in shared memory with
//     cp.async (16-byte, L2 only), NSTAGE-1 rows ahead of the row being computed, so each
//     CTA keeps several rows in flight without spending registers on them (a register
//     double buffer held only one row per CTA: 82% of copy bandwidth at D = 5120). Each
//     thread copies and reads back only its own 16-byte slots: no barrier for the ring.
//     y stores are plain 128-bit stores.
// Generic path (what v2 declines: pointers not aligned to their element size, or no plan
// fits; before v2, every other D and alignment): a persistent block per row
// with runtime D, 128-bit accesses when alignment allows and scalar ones otherwise, x
// re-read from L1/L2 for each of the three passes (rough mean with min/max, then c and
// sum d^2 around it; a constant part pivots on its own value), and the same merge.
//
// Bytes it moves: specialized: rows*D*(sizeof(x) + sizeof(y)) from/to device memory, plus
// modulation rows read once per CTA and run of rows sharing them (from L2 after the first
// CTA: ~ the floor, lnmod_fwd_min_bytes); generic: 3 * rows*D*sizeof(x) + rows*D*sizeof(y)
// + 2 * rows*D*sizeof(mod); + 8 * rows with mean/rstd.
// Against row_per_warp: the row is read once (registers, not re-reads), the modulation
// stays on chip across rows, and the next row's loads overlap the current row's math.
//
// LNMOD_SLOW_VARIANT=1 (test build for the regression detector) launches the work twice:
// same results, about twice the time.
#include "lnmod_common.cuh"
#include "lnmod_fwd_v2.h"
#include "lnmod_variants.cuh"

namespace {

using namespace lnmod_detail;

// Vectors per thread for each specialized D. fp32 rows (VEC 4): 3 at D = 1536/3072, 5 at
// 5120, else 4. 16-bit rows (VEC 8), measured on the H200 (kernels/NOTES.md, version 5):
// D = 1536 takes 6, so ONE warp owns a row (no block barrier: 85% -> 100% of copy), and
// D = 5120 takes 4 (160 threads: +0.6 points over 5). THREADS is a whole number of warps.
constexpr int dtile_vpt(int D, int VEC)
{
    if (VEC == 8 && D == 1536) return 6;
    if (VEC == 8 && D == 5120) return 4;
    return (D == 1536 || D == 3072) ? 3 : D == 5120 ? 5 : 4;
}

template <typename TX, int D> struct dtile_cfg {
    static constexpr int VEC = dt<TX>::VEC;
    static constexpr int VPT = dtile_vpt(D, VEC);
    static constexpr int THREADS = D / (VEC * VPT);
    static constexpr int NW = THREADS / 32;
    static constexpr int PER_WARP = 32 * VPT * VEC; // elements of a row one warp owns
    // Row buffers in the shared-memory ring: NSTAGE - 1 rows in flight per CTA (6 measured
    // no better than 4 on the H200; 3 was timed only with the modulation re-read from L1,
    // where it helped by leaving room for more CTAs).
    static constexpr int NSTAGE = 4;
    static constexpr int SMEM = NSTAGE * D * (int)sizeof(TX); // the ring of row buffers
    // Registers a thread needs: the row as fp32 (VPT*VEC), (1 + scale) and shift as fp32
    // (2*VPT*VEC), and 48-80 for addresses, loop state and temporaries. MIN_BLOCKS asks
    // ptxas to fit that many CTAs per SM (65536 registers, 2048 threads); 16-bit rows at
    // D = 3072 ask for 5 instead of 4 (94 registers, no spill: +1 point, measured).
    static constexpr int EST_REGS = 3 * VPT * VEC + (VPT * VEC > 40 ? 80 : 48);
    static constexpr int MB = 65536 / (EST_REGS * THREADS);
    static constexpr int MB_T = 2048 / THREADS;
    static constexpr int MB_FIT = MB < 1 ? 1 : (MB > MB_T ? MB_T : MB);
    static constexpr int MIN_BLOCKS = (VEC == 8 && D == 3072) ? 5 : MB_FIT;
    static_assert(THREADS * VPT * VEC == D, "exact fit");
    static_assert(THREADS % 32 == 0 && THREADS >= 32 && THREADS <= 512, "whole warps");
};

// Start copying row r of x into ring slot `slot` (this thread's VPT 16-byte vectors).
template <typename TX, int D>
__device__ __forceinline__ void dtile_issue_row(uint4 *ring, int slot, const TX *x, int64_t r)
{
    using C = dtile_cfg<TX, D>;
    const TX *xr = x + r * (int64_t)D + (int64_t)threadIdx.x * C::VEC;
    uint4 *dst = ring + (int64_t)slot * C::VPT * C::THREADS + threadIdx.x;
#pragma unroll
    for (int k = 0; k < C::VPT; k++) lnmod_cp_async16(dst + k * C::THREADS, xr + k * C::THREADS * C::VEC);
}

// One row: statistics, merge, output. xv: this thread's vectors of the row, read from its
// ring slot xsrc (still intact during the row: the slot is refilled only at the next row);
// sp: the parity buffer of this row.
template <typename TX, typename TM, typename TY, int D>
__device__ __forceinline__ void dtile_row(const uint4 (&xv)[dtile_cfg<TX, D>::VPT],
                                          const uint4 *xsrc, int64_t r, lnmod_part *sp,
                                          int64_t &m_end,
                                          float (&g)[dtile_cfg<TX, D>::VPT][dt<TX>::VEC],
                                          float (&b)[dtile_cfg<TX, D>::VPT][dt<TX>::VEC],
                                          const lnmod_kparams &p)
{
    using C = dtile_cfg<TX, D>;
    constexpr int VEC = C::VEC, VPT = C::VPT, NW = C::NW;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

    // Modulation: reload only when the row's modulation row changes (uniform in the CTA).
    // The loads are issued here and consumed only after the statistics, so their latency
    // hides behind the reductions. (Re-reading them from L1 at each row instead, to free
    // the registers, measured 8-25 points slower.)
    // m_end is the first row past the current modulation row's run, so the 64-bit
    // divisions of m(r) happen once per run, not once per row.
    if (r >= m_end) {
        int64_t m;
        lnmod_mod_run(p, r, &m, &m_end);
        const TM *sc = static_cast<const TM *>(p.scale) + m * p.scale_stride + tid * VEC;
        const TM *sh = static_cast<const TM *>(p.shift) + m * p.shift_stride + tid * VEC;
#pragma unroll
        for (int k = 0; k < VPT; k++) {
            lnmod_load_n<TM, VEC>(sc + k * C::THREADS * VEC, g[k]);
            lnmod_load_n<TM, VEC>(sh + k * C::THREADS * VEC, b[k]);
        }
#pragma unroll
        for (int k = 0; k < VPT; k++)
#pragma unroll
            for (int e = 0; e < VEC; e++) g[k][e] = 1.0f + g[k][e]; // folded once per m
    }

    // The warp's part of the statistics, one pass over registers around a pivot:
    //   hw = mean of one element per lane (a constant row gives hw = its value exactly:
    //   sums of equal values double exactly); d = x - hw (exact for x near hw);
    //   c = sum d, q = sum d^2; lo_w = c / n_w; M2_w = q - c * lo_w.
    // The subtraction loses about q / M2_w = 1 + n_w (mean - hw)^2 / M2_w ulps; when the
    // pivot is far from the warp's mean (n_w (mean - hw)^2 > ~8 M2_w: an outlier among the
    // 32 samples, or a large mean with a tiny spread; rare on real rows) the warp repeats
    // the pass from the ring around hw + lo_w, where the loss is ~1 ulp.
    // A constant row: d = 0, M2 = 0 exactly, at any magnitude.
    // (This replaced three passes -- rough mean, c, sum (d - lo)^2 -- with one: 2 operations
    // per element and one butterfly per row fewer, +1-3 points of copy bandwidth.)
    constexpr float inv_nw = 1.0f / (float)C::PER_WARP;
    float v[VPT][VEC];
#pragma unroll
    for (int k = 0; k < VPT; k++) dt<TX>::unpack(xv[k], v[k]);
    float hw = lnmod_warp_sum(v[0][0]) * (1.0f / 32.0f);
    float cs[4] = {0.0f, 0.0f, 0.0f, 0.0f}, qs[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int k = 0; k < VPT; k++) {
#pragma unroll
        for (int e = 0; e < VEC; e++) { // four accumulators: short dependency chains
            const float d = v[k][e] - hw;
            v[k][e] = d;
            cs[e & 3] += d;
            qs[e & 3] = fmaf(d, d, qs[e & 3]);
        }
    }
    float c = (cs[0] + cs[1]) + (cs[2] + cs[3]);
    float q = (qs[0] + qs[1]) + (qs[2] + qs[3]);
    lnmod_warp_sum2(c, q);
    float lw = c * inv_nw;
    if (c * lw > 0.888f * q) { // warp-uniform: n_w (mean - hw)^2 > ~7.9 M2_w
        const float h2 = hw + lw;
        float c2 = 0.0f, q2 = 0.0f;
#pragma unroll
        for (int k = 0; k < VPT; k++) {
            float w[VEC];
            dt<TX>::unpack(lnmod_lds16(xsrc + k * C::THREADS), w);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float d = w[e] - h2;
                v[k][e] = d;
                c2 += d;
                q2 = fmaf(d, d, q2);
            }
        }
        lnmod_warp_sum2(c2, q2);
        hw = h2;
        c = c2;
        q = q2;
        lw = c * inv_nw;
    }
    const float s2 = fmaxf(fmaf(-c, lw, q), 0.0f);
    const float nwf = (float)C::PER_WARP;
    if (lane == 0) {
        lnmod_part part;
        part.hi = hw;
        part.lo = lw;
        part.m2 = s2;
        sp[warp] = part;
    }
    // The one barrier of the row. The buffer alternates with row parity: a warp can only
    // overwrite this buffer two rows later, after every warp passed the next row's barrier,
    // i.e. after every warp finished reading it here.
    if constexpr (NW > 1)
        __syncthreads();
    else
        __syncwarp(); // one warp per row: the warp's own lanes are all that meet here

    // Chan's merge of NW equal-sized parts around warp 0's pivot.
    lnmod_part part[NW];
#pragma unroll
    for (int w = 0; w < NW; w++) part[w] = sp[w];
    const float hi = part[0].hi;
    float acc = 0.0f;
#pragma unroll
    for (int w = 0; w < NW; w++) acc += (part[w].hi - hi) + part[w].lo;
    const float lo = acc / (float)NW;
    float m2 = 0.0f, dev = 0.0f;
#pragma unroll
    for (int w = 0; w < NW; w++) {
        float e = ((part[w].hi - hi) + part[w].lo) - lo;
        m2 += part[w].m2;
        dev = fmaf(e, e, dev);
    }
    m2 = fmaf(nwf, dev, m2);
    const float rs = lnmod_rstd(m2, (float)D, p.eps);
    if (tid == 0) {
        if (p.mean) p.mean[r] = hi + lo;
        if (p.rstd) p.rstd[r] = rs;
    }

    // x - mean = d - L with L = (hi - hw) + lo (hi - hw is exact when both are near the
    // mean), and xhat = (d - L) * rs = fma(d, rs, -L * rs): two FMAs per element with g, b.
    const float nlr = -((hi - hw) + lo) * rs;
    TY *yr = static_cast<TY *>(p.y) + r * (int64_t)D + (int64_t)tid * VEC;
#pragma unroll
    for (int k = 0; k < VPT; k++) {
        float o[VEC];
#pragma unroll
        for (int e = 0; e < VEC; e++) o[e] = fmaf(fmaf(v[k][e], rs, nlr), g[k][e], b[k][e]);
        lnmod_store_n<TY, VEC>(yr + k * C::THREADS * VEC, o);
    }
}

template <typename TX, typename TM, typename TY, int D>
__global__ void __launch_bounds__(dtile_cfg<TX, D>::THREADS, dtile_cfg<TX, D>::MIN_BLOCKS)
    dtile_kernel(lnmod_kparams p)
{
    using C = dtile_cfg<TX, D>;
    constexpr int NS = C::NSTAGE;
    extern __shared__ uint4 dtile_ring[]; // [NS][VPT][THREADS]
    __shared__ lnmod_part sp[2][C::NW];
    const TX *x = static_cast<const TX *>(p.x);
    // Rows b, b+G, b+2G, ... (G = grid size): at any moment the whole grid streams one
    // contiguous region of x and y, as a copy does. Contiguous chunks per CTA (CTAs ~1 MB
    // apart) measured 2-6 points of copy bandwidth lower on the H200, most at 75,600 rows.
    // The modulation row still changes rarely: per-sample runs are S rows long.
    const int64_t r0 = blockIdx.x, r1 = p.rows, RS = gridDim.x;
    if (r0 >= r1) return; // uniform: the whole CTA has no rows

    // Prologue: rows r0 .. r0+NS-2 into slots 0 .. NS-2, one commit group per row (empty
    // groups past the chunk keep the group count, and so the wait below, uniform).
#pragma unroll
    for (int s = 0; s < NS - 1; s++) {
        if (r0 + s * RS < r1) dtile_issue_row<TX, D>(dtile_ring, s, x, r0 + s * RS);
        lnmod_cp_commit();
    }
    float g[C::VPT][C::VEC], b[C::VPT][C::VEC];
    int64_t m_end = r0; // forces the first modulation load
    int slot = 0;       // ring slot of row r: (r - r0) % NS
    for (int64_t r = r0, i = 0; r < r1; r += RS, i++) {
        lnmod_cp_wait<NS - 2>(); // row r's group has landed (NS-2 younger ones may fly)
        uint4 xv[C::VPT];
        const uint4 *src = dtile_ring + (int64_t)slot * C::VPT * C::THREADS + threadIdx.x;
#pragma unroll
        for (int k = 0; k < C::VPT; k++) xv[k] = src[k * C::THREADS];
        // Refill the slot row r-1 used (its values were consumed by row r-1's stores)
        // with row r+NS-1.
        const int prev = slot == 0 ? NS - 1 : slot - 1;
        if (r + (NS - 1) * RS < r1) dtile_issue_row<TX, D>(dtile_ring, prev, x, r + (NS - 1) * RS);
        lnmod_cp_commit();
        dtile_row<TX, TM, TY, D>(xv, src, r, sp[i & 1], m_end, g, b, p);
        slot = slot + 1 == NS ? 0 : slot + 1;
    }
}

// ---- generic path ------------------------------------------------------------------------
constexpr int GEN_MAX_THREADS = 512;
constexpr int GEN_MAX_WARPS = GEN_MAX_THREADS / 32;

// VEC elements per access: dt<TX>::VEC when alignment allows, else 1 (scalar).
template <typename TX, typename TM, typename TY, int VEC>
__global__ void __launch_bounds__(GEN_MAX_THREADS, 2) dtile_generic_kernel(lnmod_kparams p)
{
    __shared__ lnmod_part sp[2][GEN_MAX_WARPS];
    __shared__ float sn[GEN_MAX_WARPS];
    const TX *x = static_cast<const TX *>(p.x);
    const int T = blockDim.x, NW = T >> 5;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int64_t D = p.D, nv = D / VEC;
    int64_t r0, r1;
    lnmod_chunk(p.rows, blockIdx.x, gridDim.x, &r0, &r1);

    // Elements each warp owns: fixed for every row. Warp 0 always owns element 0, so its
    // count is >= 1 and its rough mean is a valid pivot; warps with none are skipped.
    int64_t mine = 0;
    for (int64_t v = tid; v < nv; v += T) mine += VEC;
    const int64_t nw_i = lnmod_warp_sum_i64(mine);
    if (lane == 0) sn[warp] = (float)nw_i;
    __syncthreads();
    const float nwf = (float)nw_i;
    const float n = (float)D;

    int par = 0;
    for (int64_t r = r0; r < r1; r++, par ^= 1) {
        const TX *xr = x + r * D;
        float s, mn, mx;
        lnmod_pass_sum<TX, VEC>(xr, tid, T, nv, &s, &mn, &mx);
        s = lnmod_warp_sum(s);
        mn = lnmod_warp_min(mn);
        mx = lnmod_warp_max(mx);
        // A constant part pivots on its value: d = 0, M2_w = 0 exactly at any magnitude.
        const float hw = nw_i <= 0 ? 0.0f : (mn == mx ? mn : s / nwf);
        float c, s2;
        lnmod_pass_dev<TX, VEC>(xr, tid, T, nv, hw, &c, &s2);
        c = lnmod_warp_sum(c);
        s2 = lnmod_warp_sum(s2);
        if (lane == 0) {
            lnmod_part q;
            q.hi = hw;
            q.lo = nw_i > 0 ? c / nwf : 0.0f;
            q.m2 = nw_i > 0 ? s2 - c * c / nwf : 0.0f;
            sp[par][warp] = q;
        }
        __syncthreads(); // one barrier per row; sp alternates with parity (see dtile_row)
        float hi, lo, m2;
        lnmod_merge_parts(sp[par], sn, NW, n, &hi, &lo, &m2);
        const float rs = lnmod_rstd(m2, n, p.eps);
        lnmod_row_out<TX, TM, TY, VEC>(p, r, tid == 0, tid, T, nv, hi, lo, rs);
    }
}

// Persistent grid size: resident CTAs per SM times SMs, never more than the rows.
template <typename K>
lnmod_status dtile_grid(K kernel, int threads, size_t smem, int64_t rows, int *grid)
{
    int sms = 1, per_sm = 0;
    lnmod_status st = lnmod_sm_count(&sms);
    if (st != LNMOD_OK) return st;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem) !=
        cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (per_sm < 1) per_sm = 1;
    int64_t g = (int64_t)per_sm * sms;
    if (g > rows) g = rows;
    *grid = (int)g;
    return LNMOD_OK;
}

#if defined(LNMOD_SLOW_VARIANT) && LNMOD_SLOW_VARIANT
constexpr int DTILE_REPEAT = 2; // test build: the same work twice
#else
constexpr int DTILE_REPEAT = 1;
#endif

template <typename TX, typename TM, typename TY, int D>
lnmod_status dtile_run(const lnmod_kparams &p, cudaStream_t stream)
{
    using C = dtile_cfg<TX, D>;
    int grid = 0;
    // The ring may exceed the 48 KB default of dynamic shared memory (fp32 rows, D = 8192).
    if (cudaFuncSetAttribute(dtile_kernel<TX, TM, TY, D>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    lnmod_status st = dtile_grid(dtile_kernel<TX, TM, TY, D>, C::THREADS, C::SMEM, p.rows, &grid);
    if (st != LNMOD_OK) return st;
    for (int i = 0; i < DTILE_REPEAT; i++) {
        dtile_kernel<TX, TM, TY, D><<<grid, C::THREADS, C::SMEM, stream>>>(p);
        st = lnmod_launch_status();
        if (st != LNMOD_OK) return st;
    }
    return LNMOD_OK;
}

template <typename TX, typename TM, typename TY, int VEC>
lnmod_status dtile_run_generic(const lnmod_kparams &p, cudaStream_t stream)
{
    // About 4 accesses per thread, whole warps, 32..512 threads.
    const int64_t nv = p.D / VEC;
    int64_t t = ((nv + 3) / 4 + 31) / 32 * 32;
    if (t < 32) t = 32;
    if (t > GEN_MAX_THREADS) t = GEN_MAX_THREADS;
    int grid = 0;
    lnmod_status st = dtile_grid(dtile_generic_kernel<TX, TM, TY, VEC>, (int)t, 0, p.rows, &grid);
    if (st != LNMOD_OK) return st;
    for (int i = 0; i < DTILE_REPEAT; i++) {
        dtile_generic_kernel<TX, TM, TY, VEC><<<grid, (unsigned)t, 0, stream>>>(p);
        st = lnmod_launch_status();
        if (st != LNMOD_OK) return st;
    }
    return LNMOD_OK;
}

// The forward v2 rule (lnmod_fwd_v2.h), and version 1 where it declines: at version 1's
// specialized widths with vector-aligned data where fv2_v1_keeps says so, and version 1's
// generic path where no v2 plan runs.
template <typename TX, typename TM, typename TY>
lnmod_status dtile_launch_t(const lnmod_desc *d, const lnmod_kparams &p, void *workspace, cudaStream_t stream)
{
    const lnmod_status st = fv2::forward(d, p, workspace, stream);
    if (st != LNMOD_ERR_UNSUPPORTED) return st;
    if (!lnmod_vector_ok<TX, TM, TY>(p)) return dtile_run_generic<TX, TM, TY, 1>(p, stream);
    switch (p.D) {
    case 1536: return dtile_run<TX, TM, TY, 1536>(p, stream);
    case 2048: return dtile_run<TX, TM, TY, 2048>(p, stream);
    case 3072: return dtile_run<TX, TM, TY, 3072>(p, stream);
    case 4096: return dtile_run<TX, TM, TY, 4096>(p, stream);
    case 5120: return dtile_run<TX, TM, TY, 5120>(p, stream);
    case 8192: return dtile_run<TX, TM, TY, 8192>(p, stream);
    default: return dtile_run_generic<TX, TM, TY, dt<TX>::VEC>(p, stream);
    }
}

} // namespace

lnmod_status lnmod_fwd_dtile_launch(const lnmod_desc *d, const void *x, const void *scale,
                                    const void *shift, void *y, float *mean, float *rstd,
                                    void *workspace, cudaStream_t stream)
{
    const lnmod_kparams p = lnmod_make_params(d, x, scale, shift, y, mean, rstd);
    return lnmod_dispatch_dtypes(d, [&](auto tx, auto tm, auto ty) {
        return dtile_launch_t<typename decltype(tx)::type, typename decltype(tm)::type,
                              typename decltype(ty)::type>(d, p, workspace, stream);
    });
}

// The chunk ring's ticket counter (lnmod_fwd_v2_chunk.cuh), asked for every descriptor so that
// a caller's workspace never depends on which kernel runs.
int64_t lnmod_fwd_dtile_workspace(const lnmod_desc *d)
{
    (void)d;
    return 16;
}

int lnmod_fwd_dtile_supports(const lnmod_desc *d) { return lnmod_desc_validate(d) == LNMOD_OK; }

int64_t lnmod_fwd_dtile_bytes(const lnmod_desc *d, int want_stats)
{
    // Assumes pointers aligned to their element size (the usual case): version 1's
    // specialized sizes and every plan of v2 read x once and write y once (the per-CTA
    // modulation reloads, and per frame v2's modulation streamed from L2, are not counted):
    // the floor. Version 1's generic path (no v2 plan: pointers not element-aligned) re-reads.
    return lnmod_fwd_min_bytes(d, want_stats);
}
