// lnmod_bwd_naive.cu -- variant "naive", backward: the simplest correct one.
//
// Three kernels (lnmod_bwd_common.cuh has the shared ones):
//   1. one 256-thread block per row (grid-stride), scalar loads: the row sums
//      a = sum g, b = sum g*xhat (g = dy*(1 + scale), xhat = (x - mean)*rstd) through a
//      shared-memory tree, then dx = rstd*(g - a/D - xhat*b/D) in a second pass over the row;
//   2. bwd_col_kernel with scalar columns: dscale/dshift sums per chunk of the fixed chunk
//      plan, re-reading x and dy;
//   3. the finalize of the partials (when a group spans several chunks).
// Bytes it moves: lnmod_bwd_reread_bytes (x, dy and the modulation read three times in all).
#include "lnmod_bwd_common.cuh"
#include "lnmod_variants.cuh"

namespace {

using namespace lnmod_detail;

constexpr int NB_THREADS = 256;

template <typename TX, typename TM, typename TY>
__global__ void __launch_bounds__(NB_THREADS) naive_bwd_row_kernel(lnmod_bparams p)
{
    __shared__ float ba[NB_THREADS];
    __shared__ float bb[NB_THREADS];
    const float invd = 1.0f / (float)p.D;
    for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
        const float mu = p.mean[r], rs = p.rstd[r];
        float a, b;
        lnmod_bwd_rowsum<TX, TM, TY, 1>(p, r, threadIdx.x, NB_THREADS, p.D, mu, rs, &a, &b);
        ba[threadIdx.x] = a;
        bb[threadIdx.x] = b;
        __syncthreads();
        for (int k = NB_THREADS / 2; k > 0; k >>= 1) {
            if ((int)threadIdx.x < k) {
                ba[threadIdx.x] += ba[threadIdx.x + k];
                bb[threadIdx.x] += bb[threadIdx.x + k];
            }
            __syncthreads();
        }
        a = ba[0];
        b = bb[0];
        __syncthreads(); // the buffers are reused by the next row
        lnmod_bwd_rowdx<TX, TM, TY, 1>(p, r, threadIdx.x, NB_THREADS, p.D, mu, rs, a * invd,
                                       b * invd);
    }
}

template <typename TX, typename TM, typename TY>
lnmod_status naive_bwd_run(const lnmod_bparams &p, cudaStream_t stream)
{
    naive_bwd_row_kernel<TX, TM, TY><<<lnmod_grid_cap(p.rows), NB_THREADS, 0, stream>>>(p);
    lnmod_status st = lnmod_launch_status();
    return st != LNMOD_OK ? st : lnmod_bwd_columns<TX, TM, TY, 1>(p, stream);
}

} // namespace

lnmod_status lnmod_bwd_naive_launch(const lnmod_desc *d, const void *x, const void *scale,
                                    const void *dy, const float *mean, const float *rstd,
                                    void *dx, void *dscale, void *dshift, void *workspace,
                                    size_t workspace_bytes, cudaStream_t stream)
{
    (void)workspace_bytes;
    const lnmod_bparams p =
        lnmod_make_bparams(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace);
    return lnmod_dispatch_dtypes(d, [&](auto tx, auto tm, auto ty) {
        return naive_bwd_run<typename decltype(tx)::type, typename decltype(tm)::type,
                             typename decltype(ty)::type>(p, stream);
    });
}

int64_t lnmod_bwd_naive_workspace(const lnmod_desc *d)
{
    int64_t glen, cpg, ng;
    return lnmod_bwd_plan(d, &glen, &cpg, &ng);
}

int64_t lnmod_bwd_naive_bytes(const lnmod_desc *d) { return lnmod_bwd_reread_bytes(d); }
