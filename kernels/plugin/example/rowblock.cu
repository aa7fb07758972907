// rowblock.cu -- the example plug-in of adaload's plug-in ABI (../adaload_variant.h): one
// variant, "rowblock", a deliberately simple LayerNorm-Modulate forward that a researcher
// can copy and change. Built by CMake as a shared module (kernels/plugin/CMakeLists.txt);
// built with ROWBLOCK_IGNORE_EPS=1 it is the planted bug that verify must catch (eps left
// out of the variance: a constant row gets rstd = inf and y = NaN instead of y = shift).
//
// The forward: one 256-thread block per row (grid-stride over rows), scalar loads of any dtype:
//   pass 1  sum, min and max of the row; pivot p = the value of a constant row, else sum/D
//   pass 2  c = sum (x - p), s2 = sum (x - p)^2  ->  mean = p + c/D, var = s2/D - (c/D)^2
//   pass 3  y = ((x - p) - c/D) * rstd * (1 + scale[m]) + shift[m]
// The pivot keeps the large-mean rows exact (x - p has no cancellation), and a constant
// row's deviations are exactly 0.
// The backward (the ABI's optional entry points; no workspace), from the forward's mean/rstd:
//   dx      one block per row: g = dy*(1 + scale[m]), xhat = (x - mean)*rstd; the row means
//           of g and g*xhat in a tree, then dx = rstd*(g - mean(g) - xhat*mean(g*xhat))
//   dscale, dshift  one thread per (modulation row, column), summing its rows in order:
//           deterministic (no atomics), simple, and slow for long samples (one thread walks
//           all S rows of a sample) -- a researcher's first version, not a fast one.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "adaload_variant.h"

namespace {

constexpr int THREADS = 256;

__device__ float load(const void *p, int64_t i, int dt)
{
    if (dt == LNMOD_F32) return static_cast<const float *>(p)[i];
    if (dt == LNMOD_F16) return __half2float(static_cast<const __half *>(p)[i]);
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
}

__device__ void store(void *p, int64_t i, int dt, float v)
{
    if (dt == LNMOD_F32) static_cast<float *>(p)[i] = v;
    else if (dt == LNMOD_F16) static_cast<__half *>(p)[i] = __float2half_rn(v);
    else static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
}

// The modulation row of token row r (lnmod_desc.h's m(r)).
__device__ int64_t mod_row(const lnmod_desc &d, int64_t r)
{
    if (d.layout == LNMOD_PER_TOKEN) return r;
    if (d.layout == LNMOD_PER_FRAME) {
        const int64_t S = d.rows_per_sample, L = d.frame_len;
        return (r / S) * ((S + L - 1) / L) + (r % S) / L;
    }
    return r / d.rows_per_sample;
}

// Block-wide sums of a and b (every thread gets them); sh holds 2 * THREADS floats.
__device__ void block_sum2(float *sh, float *a, float *b)
{
    sh[threadIdx.x] = *a;
    sh[THREADS + threadIdx.x] = *b;
    __syncthreads();
    for (int k = THREADS / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k) {
            sh[threadIdx.x] += sh[threadIdx.x + k];
            sh[THREADS + threadIdx.x] += sh[THREADS + threadIdx.x + k];
        }
        __syncthreads();
    }
    *a = sh[0];
    *b = sh[THREADS];
    __syncthreads();
}

__global__ void __launch_bounds__(THREADS)
rowblock_kernel(lnmod_desc d, const void *x, const void *scale, const void *shift, void *y, float *mean, float *rstd)
{
    __shared__ float sh[2 * THREADS];
    __shared__ float lo[THREADS], hi[THREADS];
    const int64_t D = d.D;
    for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
        const int64_t base = r * D;
        float s = 0.0f, mn = INFINITY, mx = -INFINITY;
        for (int64_t i = threadIdx.x; i < D; i += THREADS) {
            const float v = load(x, base + i, d.x_dtype);
            s += v;
            mn = fminf(mn, v);
            mx = fmaxf(mx, v);
        }
        lo[threadIdx.x] = mn;
        hi[threadIdx.x] = mx;
        float unused = 0.0f;
        block_sum2(sh, &s, &unused); // its barriers also publish lo/hi
        for (int k = THREADS / 2; k > 0; k >>= 1) {
            if ((int)threadIdx.x < k) {
                lo[threadIdx.x] = fminf(lo[threadIdx.x], lo[threadIdx.x + k]);
                hi[threadIdx.x] = fmaxf(hi[threadIdx.x], hi[threadIdx.x + k]);
            }
            __syncthreads();
        }
        const float p = lo[0] == hi[0] ? lo[0] : s / (float)D;
        __syncthreads();

        float c = 0.0f, s2 = 0.0f;
        for (int64_t i = threadIdx.x; i < D; i += THREADS) {
            const float e = load(x, base + i, d.x_dtype) - p;
            c += e;
            s2 = fmaf(e, e, s2);
        }
        block_sum2(sh, &c, &s2);
        const float cm = c / (float)D;
        const float var = fmaxf(s2 / (float)D - cm * cm, 0.0f);
#if ROWBLOCK_IGNORE_EPS
        const float rs = 1.0f / sqrtf(var); // the planted bug: eps left out
#else
        const float rs = 1.0f / sqrtf(var + (float)d.eps);
#endif
        if (threadIdx.x == 0 && mean) mean[r] = p + cm;
        if (threadIdx.x == 0 && rstd) rstd[r] = rs;

        const int64_t m = mod_row(d, r);
        for (int64_t i = threadIdx.x; i < D; i += THREADS) {
            const float xh = ((load(x, base + i, d.x_dtype) - p) - cm) * rs;
            const float sc = load(scale, m * d.scale_stride + i, d.mod_dtype);
            const float sf = load(shift, m * d.shift_stride + i, d.mod_dtype);
            store(y, base + i, d.y_dtype, fmaf(xh, 1.0f + sc, sf));
        }
    }
}

// The token rows [r0, r1) of modulation row m (lnmod_desc.h's m(r), inverted).
__device__ void rows_of(const lnmod_desc &d, int64_t m, int64_t *r0, int64_t *r1)
{
    const int64_t S = d.rows_per_sample;
    if (d.layout == LNMOD_PER_TOKEN) {
        *r0 = m;
        *r1 = m + 1;
    } else if (d.layout == LNMOD_PER_FRAME) {
        const int64_t L = d.frame_len, F = (S + L - 1) / L, b = m / F, f = m % F;
        *r0 = b * S + f * L;
        *r1 = b * S + ((f + 1) * L < S ? (f + 1) * L : S);
    } else {
        *r0 = m * S;
        *r1 = (m + 1) * S;
    }
}

__global__ void __launch_bounds__(THREADS)
rowblock_dx_kernel(lnmod_desc d, const void *x, const void *scale, const void *dy, const float *mean,
                   const float *rstd, void *dx)
{
    __shared__ float sh[2 * THREADS];
    const int64_t D = d.D;
    for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
        const int64_t base = r * D, m = mod_row(d, r);
        const float mu = mean[r], rs = rstd[r];
        float a = 0.0f, b = 0.0f;
        for (int64_t i = threadIdx.x; i < D; i += THREADS) {
            const float xh = (load(x, base + i, d.x_dtype) - mu) * rs;
            const float g = load(dy, base + i, d.y_dtype) * (1.0f + load(scale, m * d.scale_stride + i, d.mod_dtype));
            a += g;
            b = fmaf(g, xh, b);
        }
        block_sum2(sh, &a, &b);
        const float mg = a / (float)D, mgx = b / (float)D;
        for (int64_t i = threadIdx.x; i < D; i += THREADS) {
            const float xh = (load(x, base + i, d.x_dtype) - mu) * rs;
            const float g = load(dy, base + i, d.y_dtype) * (1.0f + load(scale, m * d.scale_stride + i, d.mod_dtype));
            store(dx, base + i, d.x_dtype, rs * ((g - mg) - xh * mgx));
        }
    }
}

__global__ void __launch_bounds__(THREADS)
rowblock_colsum_kernel(lnmod_desc d, int64_t nmod, const void *x, const void *dy, const float *mean,
                       const float *rstd, void *dscale, void *dshift)
{
    const int64_t D = d.D;
    for (int64_t t = (int64_t)blockIdx.x * THREADS + threadIdx.x; t < nmod * D; t += (int64_t)gridDim.x * THREADS) {
        const int64_t m = t / D, c = t % D;
        int64_t r0, r1;
        rows_of(d, m, &r0, &r1);
        float ss = 0.0f, sf = 0.0f;
        for (int64_t r = r0; r < r1; r++) {
            const float g = load(dy, r * D + c, d.y_dtype);
            ss = fmaf(g, (load(x, r * D + c, d.x_dtype) - mean[r]) * rstd[r], ss);
            sf += g;
        }
        store(dscale, m * d.scale_stride + c, d.mod_dtype, ss);
        store(dshift, m * d.shift_stride + c, d.mod_dtype, sf);
    }
}

lnmod_status rowblock_forward(const char *variant, const lnmod_desc *d, const void *x, const void *scale,
                              const void *shift, void *y, float *mean, float *rstd, cudaStream_t stream)
{
    (void)variant;
    const int64_t blocks = d->rows < (1 << 20) ? d->rows : (1 << 20);
    rowblock_kernel<<<(unsigned)blocks, THREADS, 0, stream>>>(*d, x, scale, shift, y, mean, rstd);
    return cudaGetLastError() == cudaSuccess ? LNMOD_OK : LNMOD_ERR_CUDA;
}

lnmod_status rowblock_workspace(const char *variant, const lnmod_desc *d, size_t *bytes)
{
    (void)variant, (void)d;
    *bytes = 0;
    return LNMOD_OK;
}

lnmod_status rowblock_backward(const char *variant, const lnmod_desc *d, const void *x, const void *scale,
                               const void *dy, const float *mean, const float *rstd, void *dx, void *dscale,
                               void *dshift, void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)variant, (void)workspace, (void)workspace_bytes;
    const int64_t S = d->rows_per_sample;
    const int64_t nmod = d->layout == LNMOD_PER_TOKEN   ? d->rows
                         : d->layout == LNMOD_PER_FRAME ? (d->rows / S) * ((S + d->frame_len - 1) / d->frame_len)
                                                        : d->rows / S;
    const int64_t rb = d->rows < (1 << 20) ? d->rows : (1 << 20);
    const int64_t cols = (nmod * d->D + THREADS - 1) / THREADS;
    const int64_t cb = cols < (1 << 20) ? cols : (1 << 20);
    rowblock_dx_kernel<<<(unsigned)rb, THREADS, 0, stream>>>(*d, x, scale, dy, mean, rstd, dx);
    if (cudaGetLastError() != cudaSuccess) return LNMOD_ERR_CUDA;
    rowblock_colsum_kernel<<<(unsigned)cb, THREADS, 0, stream>>>(*d, nmod, x, dy, mean, rstd, dscale, dshift);
    return cudaGetLastError() == cudaSuccess ? LNMOD_OK : LNMOD_ERR_CUDA;
}

const adaload_variant variants[] = {
    {"rowblock",
#if ROWBLOCK_IGNORE_EPS
     "example plug-in WITH A PLANTED BUG (eps ignored): one block per row, scalar loads, 3 passes",
#else
     "example plug-in: one block per row, scalar loads of any dtype, pivot two-pass statistics, 3 passes; "
     "backward: dx per row, column sums one thread per column",
#endif
     nullptr, rowblock_forward, rowblock_workspace, rowblock_backward},
};

const adaload_plugin table = {ADALOAD_VARIANT_ABI_VERSION, sizeof(adaload_variant), sizeof(lnmod_desc),
                              "adaload example (kernels/plugin/example/rowblock.cu)", 1, variants};

} // namespace

ADALOAD_PLUGIN_EXPORT const adaload_plugin *adaload_plugin_query(uint32_t host_abi)
{
    return host_abi == ADALOAD_VARIANT_ABI_VERSION ? &table : nullptr;
}
