// lnmod_res_naive.cu -- variant "naive" of the fused gated residual + LN-modulate op (issue 22;
// lnmod_res.h), forward and backward, and the fallback of dtile's for the shapes its fused
// kernels do not take: correct first, simple, slow. Scalar loads with the dtypes chosen at run time (one
// instantiation covers every dtype quadruple of lnmod_res_desc.h).
//
// Forward: one 256-thread block per row (grid-stride). Pass 1 forms h = fmaf(g, y, r) in fp32
// (g = 1 without a gate: r + y), rounds it to res_dtype, stores it and keeps the sum, min and
// max of the ROUNDED values; passes 2 and 3 re-read the stored h (each thread its own
// elements, so h = r in place is safe): the deviations around the pivot (the row's value for
// a constant row, so M2 = 0 exactly), then out = fmaf(xhat, a, b) with a = 1 + scale (or the
// weight) and b = shift (or the bias), one rounding. Statistics as kernels/lnmod_fwd_naive.cu.
//
// Backward, four kernels, in an order that keeps dr = dh in place safe (dh is read by every
// kernel before the last one writes dr over it):
//   1. rows: mg = mean(gm), mgx = mean(gm * xhat) into the workspace (gm = dout * a);
//   2. norm columns: dscale = sum dout*xhat, dshift = sum dout per chunk of the norm plan;
//   3. gate columns (with a gate): dgate = sum t*y per chunk of the gate plan, t formed in fp32
//      exactly as kernel 4 forms it;
//   4. rows: t = dh + rstd*(gm - mg - xhat*mgx), dr = t, dy = g*t, each rounded once;
// then the finalize of each plan's partials (res_finalize). The chunk plans are
// lnmod_bwd_plan's, functions of the descriptor alone: deterministic on any grid.
#include "lnmod_res_common.cuh"
#include "lnmod_res_variants.cuh"

namespace lnmod_res_detail {
namespace {

constexpr int NT = 256;

__device__ __forceinline__ int64_t gate_row(const res_params &p, int64_t r) { return lnmod_mod_row(p, r); }

// Sum of NS values across the block (buffers of NT floats each); every thread gets the sums.
template <int NS> __device__ __forceinline__ void block_sum(float (*buf)[NT], float *v)
{
#pragma unroll
    for (int q = 0; q < NS; q++) buf[q][threadIdx.x] = v[q];
    __syncthreads();
    for (int k = NT / 2; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k)
#pragma unroll
            for (int q = 0; q < NS; q++) buf[q][threadIdx.x] += buf[q][threadIdx.x + k];
        __syncthreads();
    }
#pragma unroll
    for (int q = 0; q < NS; q++) v[q] = buf[q][0];
    __syncthreads();
}

__global__ void __launch_bounds__(NT) fwd_kernel(res_params p)
{
    __shared__ float buf[3][NT];
    const int64_t D = p.D;
    const float n = (float)D;
    for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
        const int64_t m = (p.has_gate || !p.affine) ? lnmod_mod_row(p, r) : 0;
        float s = 0.0f, mn = INFINITY, mx = -INFINITY;
        for (int64_t j = threadIdx.x; j < D; j += NT) {
            const float g = p.has_gate ? ldf(p.gate, p.mt, m * p.gate_stride + j) : 1.0f;
            const float hv = roundf_to(p.rt, fmaf(g, ldf(p.y, p.bt, r * D + j), ldf(p.r, p.rt, r * D + j)));
            stf(p.h, p.rt, r * D + j, hv);
            s += hv;
            mn = fminf(mn, hv);
            mx = fmaxf(mx, hv);
        }
        float v[3] = {s, -mn, mx};
        // min and max through the sum tree would be wrong: reduce them separately.
        buf[0][threadIdx.x] = v[0];
        buf[1][threadIdx.x] = v[1];
        buf[2][threadIdx.x] = v[2];
        __syncthreads();
        for (int k = NT / 2; k > 0; k >>= 1) {
            if ((int)threadIdx.x < k) {
                buf[0][threadIdx.x] += buf[0][threadIdx.x + k];
                buf[1][threadIdx.x] = fmaxf(buf[1][threadIdx.x], buf[1][threadIdx.x + k]);
                buf[2][threadIdx.x] = fmaxf(buf[2][threadIdx.x], buf[2][threadIdx.x + k]);
            }
            __syncthreads();
        }
        s = buf[0][0];
        mn = -buf[1][0];
        mx = buf[2][0];
        __syncthreads();
        const float hi = mn == mx ? mn : s / n;
        float cs[2] = {0.0f, 0.0f};
        for (int64_t j = threadIdx.x; j < D; j += NT) {
            const float dv = ldf(p.h, p.rt, r * D + j) - hi;
            cs[0] += dv;
            cs[1] = fmaf(dv, dv, cs[1]);
        }
        block_sum<2>(buf, cs);
        const float lo = cs[0] / n;
        const float rs = lnmod_rstd(cs[1] - cs[0] * cs[0] / n, n, p.eps);
        if (threadIdx.x == 0) {
            if (p.mean) p.mean[r] = hi + lo;
            if (p.rstd) p.rstd[r] = rs;
        }
        const int64_t k = p.affine ? 0 : m;
        for (int64_t j = threadIdx.x; j < D; j += NT) {
            const float sc = ldf(p.scale, p.mt, k * p.scale_stride + j);
            const float a = p.affine ? sc : 1.0f + sc;
            const float b = ldf(p.shift, p.mt, k * p.shift_stride + j);
            const float xh = ((ldf(p.h, p.rt, r * D + j) - hi) - lo) * rs;
            stf(p.out, p.ot, r * D + j, fmaf(xh, a, b));
        }
    }
}

// gm = dout * a at (r, j), with a = 1 + scale[norm row] or the weight.
__device__ __forceinline__ float gm_at(const res_params &p, int64_t r, int64_t k, int64_t j)
{
    const float sc = ldf(p.scale, p.mt, k * p.scale_stride + j);
    return ldf(p.dout, p.ot, r * p.D + j) * (p.affine ? sc : 1.0f + sc);
}

// t of element (r, j) in fp32 from the row sums: the one formula kernels 3 and 4 share.
__device__ __forceinline__ float t_at(const res_params &p, int64_t r, int64_t k, int64_t j, float mu, float rs,
                                      float ca, float cb)
{
    const float xh = (ldf(p.hin, p.rt, r * p.D + j) - mu) * rs;
    const float dh = p.dh ? ldf(p.dh, p.rt, r * p.D + j) : 0.0f;
    return fmaf(rs, gm_at(p, r, k, j) - ca - xh * cb, dh);
}

__global__ void __launch_bounds__(NT) bwd_rowsum_kernel(res_params p)
{
    __shared__ float buf[2][NT];
    const float invd = 1.0f / (float)p.D;
    for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
        const int64_t k = p.affine ? 0 : lnmod_mod_row(p, r);
        const float mu = p.mean_in[r], rs = p.rstd_in[r];
        float v[2] = {0.0f, 0.0f};
        for (int64_t j = threadIdx.x; j < p.D; j += NT) {
            const float g = gm_at(p, r, k, j);
            v[0] += g;
            v[1] = fmaf(g, (ldf(p.hin, p.rt, r * p.D + j) - mu) * rs, v[1]);
        }
        block_sum<2>(buf, v);
        if (threadIdx.x == 0) {
            p.rowsum[2 * r] = v[0] * invd;
            p.rowsum[2 * r + 1] = v[1] * invd;
        }
    }
}

__global__ void __launch_bounds__(NT) bwd_rowout_kernel(res_params p)
{
    for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
        const int64_t k = p.affine ? 0 : lnmod_mod_row(p, r);
        const int64_t m = p.has_gate ? gate_row(p, r) : 0;
        const float mu = p.mean_in[r], rs = p.rstd_in[r], ca = p.rowsum[2 * r], cb = p.rowsum[2 * r + 1];
        for (int64_t j = threadIdx.x; j < p.D; j += NT) {
            const float t = t_at(p, r, k, j, mu, rs, ca, cb);
            const float g = p.has_gate ? ldf(p.gate, p.mt, m * p.gate_stride + j) : 1.0f;
            stf(p.dr, p.rt, r * p.D + j, t);
            stf(p.dy, p.bt, r * p.D + j, g * t);
        }
    }
}

// Column sums of one plan: thread = (chunk, column); the chunk's rows in row order. which 0:
// the norm's (dout*xhat, dout); 1: the gate's (t*y). Final values when cpg == 1, else the
// partials ws[chunk][ns][D].
__global__ void __launch_bounds__(NT) bwd_col_kernel_res(res_params p, lnmod_bparams q, int which, float *ws,
                                                         res_fin_out o)
{
    const int64_t tiles = (p.D + NT - 1) / NT;
    const int64_t items = q.nchunks * tiles;
    const int ns = which == 0 ? 2 : 1;
    for (int64_t it = blockIdx.x; it < items; it += gridDim.x) {
        const int64_t c = it / tiles, j = (it - c * tiles) * NT + threadIdx.x;
        int64_t g, r0, n;
        lnmod_chunk_rows(q, c, &g, &r0, &n);
        if (j >= p.D || n == 0) continue;
        float a = 0.0f, b = 0.0f;
        for (int64_t i = 0, r = r0; i < n; i++, r += q.cpg) {
            const float mu = p.mean_in[r], rs = p.rstd_in[r];
            if (which == 0) {
                const float go = ldf(p.dout, p.ot, r * p.D + j);
                a = fmaf(go, (ldf(p.hin, p.rt, r * p.D + j) - mu) * rs, a);
                b += go;
            } else {
                const int64_t k = p.affine ? 0 : lnmod_mod_row(p, r);
                const float t = t_at(p, r, k, j, mu, rs, p.rowsum[2 * r], p.rowsum[2 * r + 1]);
                a = fmaf(t, ldf(p.y, p.bt, r * p.D + j), a);
            }
        }
        if (q.cpg == 1) {
            stf(o.out[0], p.mt, g * o.stride[0] + j, a);
            if (ns == 2) stf(o.out[1], p.mt, g * o.stride[1] + j, b);
        } else {
            float *w = ws + c * ns * p.D + j;
            w[0] = a;
            if (ns == 2) w[p.D] = b;
        }
    }
}

unsigned grid_rows(int64_t rows) { return lnmod_grid_cap(rows); }

} // namespace

lnmod_status res_fwd_naive(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out,
                           cudaStream_t stream)
{
    res_params p = res_make_params(d);
    p.r = in->r;
    p.y = in->y;
    p.gate = in->gate;
    p.scale = in->scale;
    p.shift = in->shift;
    p.h = out->h;
    p.out = out->out;
    p.mean = out->mean;
    p.rstd = out->rstd;
    fwd_kernel<<<grid_rows(d->rows), NT, 0, stream>>>(p);
    return lnmod_launch_status();
}

lnmod_status res_bwd_naive(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out,
                           void *workspace, cudaStream_t stream)
{
    res_params p = res_make_params(d);
    p.hin = in->h;
    p.y = in->y;
    p.gate = in->gate;
    p.scale = in->scale;
    p.dout = in->dout;
    p.dh = in->dh;
    p.mean_in = in->mean;
    p.rstd_in = in->rstd;
    p.dr = out->dr;
    p.dy = out->dy;
    const res_ws_layout w = res_ws_of(d);
    char *ws = static_cast<char *>(workspace);
    p.rowsum = reinterpret_cast<float *>(ws + w.rowsum);
    bwd_rowsum_kernel<<<grid_rows(d->rows), NT, 0, stream>>>(p);
    lnmod_status st = lnmod_launch_status();
    if (st != LNMOD_OK) return st;
    // The norm's sums.
    const lnmod_desc nd = res_norm_plan_desc(d);
    const lnmod_bparams qn = lnmod_make_bparams(&nd, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                nullptr, nullptr, nullptr);
    res_fin_out on = {{out->dscale, out->dshift, nullptr}, {p.scale_stride, p.shift_stride, 0}};
    float *wn = reinterpret_cast<float *>(ws + w.norm);
    const int64_t tiles = (d->D + NT - 1) / NT;
    bwd_col_kernel_res<<<lnmod_grid_cap(qn.nchunks * tiles), NT, 0, stream>>>(p, qn, 0, wn, on);
    if ((st = lnmod_launch_status()) != LNMOD_OK) return st;
    if ((st = res_finalize(qn, 2, wn, on, p.mt, stream)) != LNMOD_OK) return st;
    if (p.has_gate) {
        const lnmod_desc gd = res_gate_plan_desc(d);
        const lnmod_bparams qg = lnmod_make_bparams(&gd, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                    nullptr, nullptr, nullptr);
        res_fin_out og = {{out->dgate, nullptr, nullptr}, {d->gate_stride, 0, 0}};
        float *wg = reinterpret_cast<float *>(ws + w.gate);
        bwd_col_kernel_res<<<lnmod_grid_cap(qg.nchunks * tiles), NT, 0, stream>>>(p, qg, 1, wg, og);
        if ((st = lnmod_launch_status()) != LNMOD_OK) return st;
        if ((st = res_finalize(qg, 1, wg, og, p.mt, stream)) != LNMOD_OK) return st;
    }
    bwd_rowout_kernel<<<grid_rows(d->rows), NT, 0, stream>>>(p);
    return lnmod_launch_status();
}

} // namespace lnmod_res_detail

lnmod_status lnmod_res_fwd_naive_launch(const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                                        const lnmod_res_fwd_out *out, void *workspace, cudaStream_t stream)
{
    (void)workspace; // naive needs none
    return lnmod_res_detail::res_fwd_naive(d, in, out, stream);
}

lnmod_status lnmod_res_bwd_naive_launch(const lnmod_res_desc *d, const lnmod_res_bwd_in *in,
                                        const lnmod_res_bwd_out *out, void *workspace,
                                        size_t workspace_bytes, cudaStream_t stream)
{
    (void)workspace_bytes; // checked by lnmod_res_backward
    return lnmod_res_detail::res_bwd_naive(d, in, out, workspace, stream);
}
