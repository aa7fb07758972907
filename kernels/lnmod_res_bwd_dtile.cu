// lnmod_res_bwd_dtile.cu -- variant "dtile" of the fused residual op, backward version 1 (run
// where the bulk ring of lnmod_res_bwd_bulk.cu does not: a device below compute capability
// 9.0, or a ring that does not fit): one CTA a chunk of the column-sum plan, the chunk's rows
// one after another with the row in registers (no ring: one row in flight a CTA; 59-76% of the
// copy on the H200, kernels/experiments/2026-12-02-res).
//
// Fused path: MODULATE (the norm's and the gate's plans are then the same chunks: one
// geometry, lnmod_bwd_plan), Wan's dtypes (res fp32, branch bf16, mod fp32, out bf16), D in
// {1536, 3072, 5120}, 16-byte aligned pointers, strides multiples of 4; else naive's.
//   * T = D/16 threads, 2 units of 8 columns each (thread t: units t and t + T).
//   * A chunk lies in one modulation row m: a = 1 + scale[m] and g = gate[m] are loaded once
//     a chunk into registers, and the column sums dscale, dshift, dgate of the chunk's rows
//     stay in registers (fp32, added in row order).
//   * A row: h, d_out, dh (plain loads: dr may be dh), y loaded; gm = d_out a, xhat = (h - mean)
//     rstd; the row sums of gm and gm xhat by warp butterflies and one exchange of the warp
//     sums through a parity buffer (one barrier a row; every thread adds the warps in order);
//     t = dh + rstd (gm - mg - xhat mgx) -- the expression naive's t_at computes -- then
//     dr = t, dy = g t, and the sums ds += d_out xhat, dsh += d_out, dg += t y.
//   * The chunk's end: final values (one chunk a group) or the partials in naive's workspace
//     layout, added by res_finalize in its fixed order: deterministic on any grid.
#include "lnmod_res_common.cuh"
#include "lnmod_res_variants.cuh"

namespace lnmod_res_detail {
namespace {

constexpr int UPT = 2; // units of 8 columns a thread

template <int D> struct rb_cfg {
    static constexpr int T = D / (8 * UPT);
    static constexpr int NW = T / 32;
    static_assert(T * UPT * 8 == D && T % 32 == 0, "exact fit, whole warps");
};

__device__ __forceinline__ void ld_plain8(const float *p, float *o)
{
    const uint4 a = reinterpret_cast<const uint4 *>(p)[0], b = reinterpret_cast<const uint4 *>(p)[1];
    dt<float>::unpack(a, o);
    dt<float>::unpack(b, o + 4);
}

template <int D>
__global__ void __launch_bounds__(rb_cfg<D>::T, 1) rb_kernel(res_params p, lnmod_bparams q, float *wn, float *wg,
                                                             res_fin_out on, res_fin_out og)
{
    using C = rb_cfg<D>;
    constexpr int T = C::T, NW = C::NW;
    __shared__ float red[2][2][NW];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const float invd = 1.0f / (float)D;
    int par = 0;
    for (int64_t c = blockIdx.x; c < q.nchunks; c += gridDim.x) {
        int64_t m, r0, n;
        lnmod_chunk_rows(q, c, &m, &r0, &n);
        if (n == 0) continue; // uniform in the CTA
        float a[UPT][8], g[UPT][8], ds[UPT][8], dsh[UPT][8], dg[UPT][8];
#pragma unroll
        for (int k = 0; k < UPT; k++) {
            const int64_t col = (int64_t)(tid + k * T) * 8;
            lnmod_load_n<float, 8>(static_cast<const float *>(p.scale) + m * p.scale_stride + col, a[k]);
            if (p.has_gate) lnmod_load_n<float, 8>(static_cast<const float *>(p.gate) + m * p.gate_stride + col, g[k]);
#pragma unroll
            for (int e = 0; e < 8; e++) {
                a[k][e] = 1.0f + a[k][e];
                if (!p.has_gate) g[k][e] = 1.0f;
                ds[k][e] = dsh[k][e] = dg[k][e] = 0.0f;
            }
        }
        for (int64_t i = 0, r = r0; i < n; i++, r += q.cpg, par ^= 1) {
            const float mu = p.mean_in[r], rs = p.rstd_in[r];
            float gm[UPT][8], xh[UPT][8], go[UPT][8];
            float sa = 0.0f, sb = 0.0f;
#pragma unroll
            for (int k = 0; k < UPT; k++) {
                const int64_t e0 = r * (int64_t)D + (int64_t)(tid + k * T) * 8;
                float hv[8];
                lnmod_load_n<float, 8>(static_cast<const float *>(p.hin) + e0, hv);
                lnmod_load_n<__nv_bfloat16, 8>(static_cast<const __nv_bfloat16 *>(p.dout) + e0, go[k]);
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    xh[k][e] = (hv[e] - mu) * rs;
                    gm[k][e] = go[k][e] * a[k][e];
                    sa += gm[k][e];
                    sb = fmaf(gm[k][e], xh[k][e], sb);
                }
            }
            lnmod_warp_sum2(sa, sb);
            if (lane == 0) {
                red[par][0][warp] = sa;
                red[par][1][warp] = sb;
            }
            __syncthreads();
            float ta = 0.0f, tb = 0.0f;
#pragma unroll
            for (int w = 0; w < NW; w++) {
                ta += red[par][0][w];
                tb += red[par][1][w];
            }
            const float ca = ta * invd, cb = tb * invd;
#pragma unroll
            for (int k = 0; k < UPT; k++) {
                const int64_t e0 = r * (int64_t)D + (int64_t)(tid + k * T) * 8;
                float dh[8], y[8], t[8], dy[8];
                if (p.dh) ld_plain8(static_cast<const float *>(p.dh) + e0, dh);
                else
#pragma unroll
                    for (int e = 0; e < 8; e++) dh[e] = 0.0f;
                if (p.has_gate) lnmod_load_n<__nv_bfloat16, 8>(static_cast<const __nv_bfloat16 *>(p.y) + e0, y);
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    t[e] = fmaf(rs, gm[k][e] - ca - xh[k][e] * cb, dh[e]);
                    dy[e] = g[k][e] * t[e];
                    ds[k][e] = fmaf(go[k][e], xh[k][e], ds[k][e]);
                    dsh[k][e] += go[k][e];
                    if (p.has_gate) dg[k][e] = fmaf(t[e], y[e], dg[k][e]);
                }
                lnmod_store_n<float, 8>(static_cast<float *>(p.dr) + e0, t);
                lnmod_store_n<__nv_bfloat16, 8>(static_cast<__nv_bfloat16 *>(p.dy) + e0, dy);
            }
        }
        // The chunk's sums: final values, or partials ws[chunk][ns][D] for res_finalize.
#pragma unroll
        for (int k = 0; k < UPT; k++) {
            const int64_t col = (int64_t)(tid + k * T) * 8;
            if (q.cpg == 1) {
                lnmod_store_n<float, 8>(static_cast<float *>(on.out[0]) + m * on.stride[0] + col, ds[k]);
                lnmod_store_n<float, 8>(static_cast<float *>(on.out[1]) + m * on.stride[1] + col, dsh[k]);
                if (p.has_gate) lnmod_store_n<float, 8>(static_cast<float *>(og.out[0]) + m * og.stride[0] + col, dg[k]);
            } else {
                lnmod_store_n<float, 8>(wn + c * 2 * D + col, ds[k]);
                lnmod_store_n<float, 8>(wn + c * 2 * D + D + col, dsh[k]);
                if (p.has_gate) lnmod_store_n<float, 8>(wg + c * D + col, dg[k]);
            }
        }
    }
}

bool al16(const void *x) { return ((uintptr_t)x & 15u) == 0; }

template <int D>
lnmod_status launch(const res_params &p, const lnmod_bparams &q, float *wn, float *wg, const res_fin_out &on,
                    const res_fin_out &og, cudaStream_t stream)
{
    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rb_kernel<D>, rb_cfg<D>::T, 0) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    const int64_t full = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
    const int64_t grid = q.nchunks < full ? q.nchunks : full;
    rb_kernel<D><<<(unsigned)grid, rb_cfg<D>::T, 0, stream>>>(p, q, wn, wg, on, og);
    return lnmod_launch_status();
}

} // namespace

int res_bwd_dtile_shape(const lnmod_res_desc *d)
{
    if (d->norm != LNMOD_RES_MODULATE || d->res_dtype != LNMOD_F32 || d->branch_dtype != LNMOD_BF16 ||
        d->mod_dtype != LNMOD_F32 || d->out_dtype != LNMOD_BF16)
        return 0;
    if (d->D != 1536 && d->D != 3072 && d->D != 5120) return 0;
    if (d->gate == LNMOD_RES_GATE && d->gate_stride % 4 != 0) return 0;
    return d->scale_stride % 4 == 0 && d->shift_stride % 4 == 0;
}

int res_bwd_dtile_takes(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out)
{
    if (!res_bwd_dtile_shape(d)) return 0;
    const bool gate = d->gate == LNMOD_RES_GATE;
    if (!al16(in->h) || !al16(in->scale) || !al16(in->dout) || (in->dh && !al16(in->dh)) || !al16(out->dr) ||
        !al16(out->dy) || !al16(out->dscale) || !al16(out->dshift))
        return 0;
    return !gate || (al16(in->y) && al16(in->gate) && al16(out->dgate));
}

lnmod_status res_bwd_dtile(const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out,
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
    // One plan for all three sums: under MODULATE the gate's geometry is the norm's.
    const lnmod_desc nd = res_norm_plan_desc(d);
    const lnmod_bparams q = lnmod_make_bparams(&nd, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                               nullptr, nullptr);
    const res_fin_out on = {{out->dscale, out->dshift, nullptr}, {d->scale_stride, d->shift_stride, 0}};
    const res_fin_out og = {{out->dgate, nullptr, nullptr}, {d->gate_stride, 0, 0}};
    float *wn = reinterpret_cast<float *>(ws + w.norm), *wg = reinterpret_cast<float *>(ws + w.gate);
    lnmod_status st = d->D == 1536   ? launch<1536>(p, q, wn, wg, on, og, stream)
                      : d->D == 3072 ? launch<3072>(p, q, wn, wg, on, og, stream)
                                     : launch<5120>(p, q, wn, wg, on, og, stream);
    if (st != LNMOD_OK) return st;
    if ((st = res_finalize(q, 2, wn, on, LNMOD_F32, stream)) != LNMOD_OK) return st;
    if (p.has_gate) return res_finalize(q, 1, wg, og, LNMOD_F32, stream);
    return LNMOD_OK;
}

} // namespace lnmod_res_detail

// dtile's backward: the bulk ring where it takes the shape and the device runs it, else version
// 1 where it takes the shape, else naive's (the same workspace layout for all three).
lnmod_status lnmod_res_bwd_dtile_launch(const lnmod_res_desc *d, const lnmod_res_bwd_in *in,
                                        const lnmod_res_bwd_out *out, void *workspace,
                                        size_t workspace_bytes, cudaStream_t stream)
{
    using namespace lnmod_res_detail;
    (void)workspace_bytes; // checked by lnmod_res_backward
    if (res_bwd_bulk_takes(d, in, out)) {
        int ran = 0;
        const lnmod_status st = res_bwd_bulk(d, in, out, workspace, stream, &ran);
        if (st != LNMOD_OK || ran) return st;
    }
    if (res_bwd_dtile_takes(d, in, out)) return res_bwd_dtile(d, in, out, workspace, stream);
    return res_bwd_naive(d, in, out, workspace, stream);
}
