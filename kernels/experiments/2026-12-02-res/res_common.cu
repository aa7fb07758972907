// res_common.cu -- host half of res_common.cuh: parameters, plans, workspace, finalize.
#include "res_common.cuh"

namespace res_detail {

res_params res_make_params(const lnmod_res_desc *d)
{
    res_params p = {};
    p.rows = d->rows;
    p.D = d->D;
    p.S = d->rows_per_sample > 0 ? d->rows_per_sample : 1;
    p.L = d->frame_len > 0 ? d->frame_len : 1;
    const lnmod_desc g = lnmod_res_map_desc(d);
    p.F = (d->layout == LNMOD_PER_FRAME) ? lnmod_frames_per_sample(&g) : 1;
    p.gate_stride = d->gate_stride;
    p.scale_stride = d->scale_stride;
    p.shift_stride = d->shift_stride;
    p.layout = (int)d->layout;
    p.has_gate = d->gate == LNMOD_RES_GATE;
    p.affine = d->norm == LNMOD_RES_AFFINE;
    if (p.affine) { // weight and bias: one contiguous row, whatever the map
        p.scale_stride = 0;
        p.shift_stride = 0;
    }
    if (!p.has_gate && p.affine) p.layout = LNMOD_PER_TOKEN; // the map is not used
    p.rt = (int)d->res_dtype;
    p.bt = (int)d->branch_dtype;
    p.mt = (int)d->mod_dtype;
    p.ot = (int)d->out_dtype;
    p.eps = (float)d->eps;
    return p;
}

static lnmod_desc plan_desc(const lnmod_res_desc *d, lnmod_layout lay, int64_t S, int64_t L, int64_t s1,
                            int64_t s2)
{
    lnmod_desc g = lnmod_desc_default();
    g.rows = d->rows;
    g.D = d->D;
    g.layout = lay;
    g.rows_per_sample = S;
    g.frame_len = L;
    g.x_dtype = g.y_dtype = g.mod_dtype = LNMOD_F32;
    g.scale_stride = s1;
    g.shift_stride = s2;
    g.eps = d->eps;
    return g;
}

lnmod_desc res_norm_plan_desc(const lnmod_res_desc *d)
{
    if (d->norm == LNMOD_RES_AFFINE) return plan_desc(d, LNMOD_PER_SAMPLE, d->rows, 1, d->D, d->D);
    return plan_desc(d, d->layout, d->rows_per_sample, d->frame_len, d->scale_stride, d->shift_stride);
}

lnmod_desc res_gate_plan_desc(const lnmod_res_desc *d)
{
    return plan_desc(d, d->layout, d->rows_per_sample, d->frame_len, d->gate_stride, d->gate_stride);
}

static int64_t al16(int64_t b) { return (b + 15) / 16 * 16; }

res_ws_layout res_ws_of(const lnmod_res_desc *d)
{
    res_ws_layout w = {0, 0, 0, 0};
    int64_t glen, cpg, ng;
    const lnmod_desc n = res_norm_plan_desc(d);
    const int64_t nb = lnmod_bwd_plan(&n, &glen, &cpg, &ng); // nchunks * 2 * D * 4, or 0
    int64_t gb = 0;
    if (d->gate == LNMOD_RES_GATE) {
        const lnmod_desc g = res_gate_plan_desc(d);
        gb = lnmod_bwd_plan(&g, &glen, &cpg, &ng);
        if (gb > 0) gb /= 2; // one partial row a chunk
    }
    if (nb < 0 || gb < 0 || d->rows > INT64_MAX / 64) {
        w.total = -1;
        return w;
    }
    w.rowsum = 0;
    w.norm = al16(d->rows * 8);
    w.gate = w.norm + al16(nb);
    w.total = w.gate + al16(gb);
    if (w.total < w.gate) w.total = -1;
    return w;
}

template <typename TM, int NS>
__global__ void __launch_bounds__(BWD_FIN_WARPS * 32) res_fin_kernel(lnmod_bparams p, const float *ws, res_fin_out o)
{
    __shared__ float part[NS][BWD_FIN_WARPS][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t tiles = (p.D + 31) / 32;
    const int64_t items = p.ngroups * tiles;
    for (int64_t it = blockIdx.x; it < items; it += gridDim.x) {
        const int64_t g = it / tiles, col = (it - g * tiles) * 32 + lane;
        int64_t s, len;
        lnmod_group_rows(p, g, &s, &len);
        const int64_t nk = len < p.cpg ? len : p.cpg;
        float a[NS];
#pragma unroll
        for (int q = 0; q < NS; q++) a[q] = 0.0f;
        if (col < p.D) {
            const float *w = ws + (g * p.cpg) * NS * p.D + col;
            for (int64_t k = warp; k < nk; k += BWD_FIN_WARPS)
#pragma unroll
                for (int q = 0; q < NS; q++) a[q] += w[(k * NS + q) * p.D];
        }
        #pragma unroll
        for (int q = 0; q < NS; q++) part[q][warp][lane] = a[q];
        __syncthreads();
        if (warp == 0 && col < p.D) {
#pragma unroll
            for (int q = 0; q < NS; q++) {
                float t = 0.0f;
#pragma unroll
                for (int w = 0; w < BWD_FIN_WARPS; w++) t += part[q][w][lane];
                static_cast<TM *>(o.out[q])[g * o.stride[q] + col] = dt<TM>::from_f(t);
            }
        }
        __syncthreads();
    }
}

lnmod_status res_finalize(const lnmod_bparams &p, int ns, const float *ws, const res_fin_out &o, int mt,
                          cudaStream_t stream)
{
    if (p.cpg <= 1) return LNMOD_OK;
    const unsigned grid = lnmod_grid_cap(p.ngroups * ((p.D + 31) / 32));
    const dim3 b(BWD_FIN_WARPS * 32);
    if (ns == 2) {
        if (mt == LNMOD_F32) res_fin_kernel<float, 2><<<grid, b, 0, stream>>>(p, ws, o);
        else if (mt == LNMOD_BF16) res_fin_kernel<__nv_bfloat16, 2><<<grid, b, 0, stream>>>(p, ws, o);
        else res_fin_kernel<__half, 2><<<grid, b, 0, stream>>>(p, ws, o);
    } else {
        if (mt == LNMOD_F32) res_fin_kernel<float, 1><<<grid, b, 0, stream>>>(p, ws, o);
        else if (mt == LNMOD_BF16) res_fin_kernel<__nv_bfloat16, 1><<<grid, b, 0, stream>>>(p, ws, o);
        else res_fin_kernel<__half, 1><<<grid, b, 0, stream>>>(p, ws, o);
    }
    return lnmod_launch_status();
}

} // namespace res_detail
