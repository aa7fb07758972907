// lnmod_fwd_row_per_warp.cu -- variant "row_per_warp": one warp per row.
//
// 256-thread blocks hold 8 warps, each warp owns one row at a time (grid-stride over rows).
// The statistics are warp-shuffle butterflies: no shared memory, no barrier. x is re-read
// from global memory for each of the three passes (the row is at most a few tens of KB, so
// passes 2 and 3 mostly hit L1/L2; holding it in registers is what dtile adds). When every
// pointer is 16-byte aligned and D is a multiple of the vector width, loads and stores are
// 128-bit (8 bf16/fp16 or 4 fp32 per lane); otherwise scalar, still coalesced.
//   pass 1  sum, min, max of x        -> hi = rough fp32 mean (the value itself for a
//                                        constant row, so its M2 is exactly 0)
//   pass 2  d = x - hi: sum d, sum d^2 -> lo = c/D, M2 = sum d^2 - c^2/D
//   pass 3  y = ((x - hi) - lo) * rstd * (1 + scale) + shift (one FMA, one rounding)
// The modulation row is re-read for every token row (from L1/L2 in the per-sample layout).
// Bytes it moves (counting re-reads): 3 * rows*D*sizeof(x) + rows*D*sizeof(y)
//                                     + 2 * rows*D*sizeof(mod) (+ 8 * rows with stats).
// Against naive: a warp instead of a block per row (no shared-memory trees, no barriers),
// 128-bit accesses.
#include "lnmod_common.cuh"
#include "lnmod_variants.cuh"

namespace {

using namespace lnmod_detail;

constexpr int RPW_WARPS = 8;
constexpr int RPW_THREADS = RPW_WARPS * 32;

// VEC: elements per access (the 16-byte width of x, or 1 for the scalar fallback).
template <typename TX, typename TM, typename TY, int VEC>
__global__ void __launch_bounds__(RPW_THREADS) rpw_kernel(lnmod_kparams p)
{
    const TX *x = static_cast<const TX *>(p.x);
    const int lane = threadIdx.x & 31;
    const int64_t D = p.D;
    const int64_t nv = D / VEC; // VEC divides D (checked by the launcher when VEC > 1)
    const float n = (float)D;
    const int64_t stride = (int64_t)gridDim.x * RPW_WARPS;
    for (int64_t r = (int64_t)blockIdx.x * RPW_WARPS + (threadIdx.x >> 5); r < p.rows;
         r += stride) {
        const TX *xr = x + r * D;
        float s, mn, mx;
        lnmod_pass_sum<TX, VEC>(xr, lane, 32, nv, &s, &mn, &mx);
        s = lnmod_warp_sum(s);
        mn = lnmod_warp_min(mn);
        mx = lnmod_warp_max(mx);
        // A constant row takes its value as the pivot: d = 0 and M2 = 0 exactly, where
        // sum d^2 - c^2/D would leave rounding noise (large at |x| ~ 1e15).
        const float hi = mn == mx ? mn : s / n;

        float c, s2;
        lnmod_pass_dev<TX, VEC>(xr, lane, 32, nv, hi, &c, &s2);
        c = lnmod_warp_sum(c);
        s2 = lnmod_warp_sum(s2);
        const float lo = c / n;
        const float rs = lnmod_rstd(s2 - c * c / n, n, p.eps);
        lnmod_row_out<TX, TM, TY, VEC>(p, r, lane == 0, lane, 32, nv, hi, lo, rs);
    }
}

template <typename TX, typename TM, typename TY>
lnmod_status rpw_launch(const lnmod_kparams &p, cudaStream_t stream)
{
    int64_t blocks = (p.rows + RPW_WARPS - 1) / RPW_WARPS;
    if (blocks > (1 << 20)) blocks = 1 << 20; // grid-stride covers the rest
    if (lnmod_vector_ok<TX, TM, TY>(p))
        rpw_kernel<TX, TM, TY, dt<TX>::VEC><<<(unsigned)blocks, RPW_THREADS, 0, stream>>>(p);
    else
        rpw_kernel<TX, TM, TY, 1><<<(unsigned)blocks, RPW_THREADS, 0, stream>>>(p);
    return lnmod_launch_status();
}

} // namespace

lnmod_status lnmod_fwd_row_per_warp_launch(const lnmod_desc *d, const void *x,
                                           const void *scale, const void *shift, void *y,
                                           float *mean, float *rstd, void *workspace, cudaStream_t stream)
{
    (void)workspace; // none needed
    const lnmod_kparams p = lnmod_make_params(d, x, scale, shift, y, mean, rstd);
    return lnmod_dispatch_dtypes(d, [&](auto tx, auto tm, auto ty) {
        return rpw_launch<typename decltype(tx)::type, typename decltype(tm)::type,
                          typename decltype(ty)::type>(p, stream);
    });
}

int lnmod_fwd_row_per_warp_supports(const lnmod_desc *d)
{
    return lnmod_desc_validate(d) == LNMOD_OK;
}

int64_t lnmod_fwd_row_per_warp_bytes(const lnmod_desc *d, int want_stats)
{
    return lnmod_fwd_reread_bytes(d, want_stats);
}

int64_t lnmod_fwd_row_per_warp_workspace(const lnmod_desc *d)
{
    (void)d;
    return 0;
}
