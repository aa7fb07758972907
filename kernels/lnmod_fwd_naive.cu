// lnmod_fwd_naive.cu -- variant "naive": the simplest correct LayerNorm-Modulate forward.
//
// One 256-thread block per row (grid-stride over rows, so any row count works), scalar
// loads and stores, three passes that each re-read x from global memory:
//   pass 1  sum, min, max of x -> shared-memory tree -> hi = rough fp32 mean (the value
//           itself for a constant row, whose M2 is then exactly 0)
//   pass 2  d = x - hi: sum d, sum d^2 -> tree       -> lo = c/D, M2 = sum d^2 - c^2/D
//   pass 3  y = ((x - hi) - lo) * rstd * (1 + scale) + shift (one FMA, one rounding)
// The modulation row is re-read for every token row.
// Bytes it moves: 3 * rows*D*sizeof(x) + rows*D*sizeof(y) + 2 * rows*D*sizeof(mod)
//                 (+ 8 * rows with mean/rstd).  Floor: lnmod_fwd_min_bytes().
// It is the baseline of the benchmark; row_per_warp and dtile improve on it.
#include "lnmod_common.cuh"
#include "lnmod_variants.cuh"

namespace {

using namespace lnmod_detail;

constexpr int NAIVE_THREADS = 256;

template <typename TX, typename TM, typename TY>
__global__ void __launch_bounds__(NAIVE_THREADS) naive_kernel(lnmod_kparams p)
{
    __shared__ float buf[NAIVE_THREADS];
    __shared__ float buf2[NAIVE_THREADS];
    __shared__ float buf3[NAIVE_THREADS];
    const TX *x = static_cast<const TX *>(p.x);
    const int64_t D = p.D;
    const float n = (float)D;
    for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
        const TX *xr = x + r * D;
        float s, mn, mx;
        lnmod_pass_sum<TX, 1>(xr, threadIdx.x, NAIVE_THREADS, D, &s, &mn, &mx);
        // Sum, min and max in one tree (min/max: a constant row takes its value as the
        // pivot, so d = 0 and M2 = 0 exactly at any magnitude).
        buf[threadIdx.x] = s;
        buf2[threadIdx.x] = mn;
        buf3[threadIdx.x] = mx;
        __syncthreads();
        for (int k = NAIVE_THREADS / 2; k > 0; k >>= 1) {
            if ((int)threadIdx.x < k) {
                buf[threadIdx.x] += buf[threadIdx.x + k];
                buf2[threadIdx.x] = fminf(buf2[threadIdx.x], buf2[threadIdx.x + k]);
                buf3[threadIdx.x] = fmaxf(buf3[threadIdx.x], buf3[threadIdx.x + k]);
            }
            __syncthreads();
        }
        s = buf[0];
        mn = buf2[0];
        mx = buf3[0];
        __syncthreads(); // the buffers are reused by the next reduction
        const float hi = mn == mx ? mn : s / n;

        float c, s2;
        lnmod_pass_dev<TX, 1>(xr, threadIdx.x, NAIVE_THREADS, D, hi, &c, &s2);
        // Two sums through two buffers: one tree, one set of barriers.
        buf[threadIdx.x] = c;
        buf2[threadIdx.x] = s2;
        __syncthreads();
        for (int k = NAIVE_THREADS / 2; k > 0; k >>= 1) {
            if ((int)threadIdx.x < k) {
                buf[threadIdx.x] += buf[threadIdx.x + k];
                buf2[threadIdx.x] += buf2[threadIdx.x + k];
            }
            __syncthreads();
        }
        c = buf[0];
        s2 = buf2[0];
        __syncthreads(); // the buffers are reused by the next row's first reduction
        const float lo = c / n;
        const float rs = lnmod_rstd(s2 - c * c / n, n, p.eps);
        lnmod_row_out<TX, TM, TY, 1>(p, r, threadIdx.x == 0, threadIdx.x, NAIVE_THREADS, D, hi,
                                     lo, rs);
    }
}

} // namespace

lnmod_status lnmod_fwd_naive_launch(const lnmod_desc *d, const void *x, const void *scale,
                                    const void *shift, void *y, float *mean, float *rstd, void *workspace,
                                    cudaStream_t stream)
{
    (void)workspace; // none needed
    const lnmod_kparams p = lnmod_make_params(d, x, scale, shift, y, mean, rstd);
    // Grid-stride: 2^20 blocks saturate any GPU; more rows loop.
    const int64_t grid = d->rows < (1 << 20) ? d->rows : (1 << 20);
    return lnmod_dispatch_dtypes(d, [&](auto tx, auto tm, auto ty) {
        using TX = typename decltype(tx)::type;
        using TM = typename decltype(tm)::type;
        using TY = typename decltype(ty)::type;
        naive_kernel<TX, TM, TY><<<(unsigned)grid, NAIVE_THREADS, 0, stream>>>(p);
        return lnmod_launch_status();
    });
}

int lnmod_fwd_naive_supports(const lnmod_desc *d) { return lnmod_desc_validate(d) == LNMOD_OK; }

int64_t lnmod_fwd_naive_bytes(const lnmod_desc *d, int want_stats)
{
    return lnmod_fwd_reread_bytes(d, want_stats);
}

int64_t lnmod_fwd_naive_workspace(const lnmod_desc *d)
{
    (void)d;
    return 0;
}
