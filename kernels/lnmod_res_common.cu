// lnmod_res_common.cu -- host half of lnmod_res_common.cuh: parameters, plans, workspace, finalize.
#include "lnmod_res_bwd_bulk_plan.h"
#include "lnmod_res_fwd_chunk_plan.h"
#include "lnmod_res_common.cuh"
#include "lnmod_res_variants.cuh"

namespace lnmod_res_detail {

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

static lnmod_bparams plan_of(const lnmod_desc *n)
{
    return lnmod_make_bparams(n, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
}

lnmod_bparams res_bulk_walk(const lnmod_res_desc *d)
{
    const lnmod_desc n = d->norm == LNMOD_RES_AFFINE ? res_gate_plan_desc(d) : res_norm_plan_desc(d);
    lnmod_bparams q = plan_of(&n);
    q.cpg = lnmod_res_bulk_cpg(n.rows, n.rows_per_sample, n.frame_len, (int)n.layout);
    q.nchunks = q.ngroups * q.cpg;
    return q;
}

lnmod_bparams res_bulk_norm_fin(const lnmod_res_desc *d, const lnmod_bparams &walk)
{
    if (d->norm != LNMOD_RES_AFFINE) return walk;
    const lnmod_desc n = res_norm_plan_desc(d); // one group of all rows
    lnmod_bparams q = plan_of(&n);
    q.cpg = q.nchunks = walk.nchunks;
    return q;
}

res_ws_layout res_ws_of(const lnmod_res_desc *d)
{
    res_ws_layout w = {0, 0, 0, 0};
    int64_t glen, cpg, ng;
    const lnmod_desc n = res_norm_plan_desc(d);
    int64_t nb = lnmod_bwd_plan(&n, &glen, &cpg, &ng); // nchunks * 2 * D * 4, or 0
    int64_t gb = 0;
    if (d->gate == LNMOD_RES_GATE) {
        const lnmod_desc g = res_gate_plan_desc(d);
        gb = lnmod_bwd_plan(&g, &glen, &cpg, &ng);
        if (gb > 0) gb /= 2; // one partial row a chunk
    }
    // The bulk backward's partials where it may run (res_bulk_walk): the larger of the layouts.
    // Norm partials a chunk whenever its finalize adds several (res_bulk_norm_fin), gate partials
    // when a gate row has several chunks.
    if (nb >= 0 && gb >= 0 && res_bwd_bulk_shape(d)) {
        const lnmod_bparams q = res_bulk_walk(d);
        if (q.nchunks > INT64_MAX / 8 / d->D) nb = -1;
        else {
            if (res_bulk_norm_fin(d, q).cpg > 1 && nb < q.nchunks * 8 * d->D) nb = q.nchunks * 8 * d->D;
            if (d->gate == LNMOD_RES_GATE && q.cpg > 1 && gb < q.nchunks * 4 * d->D) gb = q.nchunks * 4 * d->D;
        }
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

} // namespace lnmod_res_detail

// ---- the registry's workspace and byte counts (lnmod_res_variants.cuh) ------------------------

int64_t lnmod_res_bwd_workspace(const lnmod_res_desc *d) { return lnmod_res_detail::res_ws_of(d).total; }

// The forward's: naive none; dtile the chunk ring's ticket counter (lnmod_res_fwd_chunk.cuh),
// asked for every descriptor so that a caller's workspace never depends on which kernel runs.
int64_t lnmod_res_fwd_naive_workspace(const lnmod_res_desc *d)
{
    (void)d;
    return 0;
}
int64_t lnmod_res_fwd_dtile_workspace(const lnmod_res_desc *d)
{
    (void)d;
    return LNMOD_RES_CHUNK_TICKET;
}

namespace {

int64_t sat_mul(int64_t a, int64_t b) { return (a != 0 && b > INT64_MAX / a) ? INT64_MAX : a * b; }
int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

struct res_sizes {
    int64_t n, rows, D, rs, bs, ms, os, gate; // elements, element bytes, 1 with a gate
};

res_sizes sizes_of(const lnmod_res_desc *d)
{
    res_sizes z;
    z.n = sat_mul(d->rows, d->D);
    z.rows = d->rows;
    z.D = d->D;
    z.rs = (int64_t)lnmod_dtype_size(d->res_dtype);
    z.bs = (int64_t)lnmod_dtype_size(d->branch_dtype);
    z.ms = (int64_t)lnmod_dtype_size(d->mod_dtype);
    z.os = (int64_t)lnmod_dtype_size(d->out_dtype);
    z.gate = d->gate == LNMOD_RES_GATE;
    return z;
}

// The column sums' partials (both plans), written once and read once by the finalize.
int64_t partial_bytes(const lnmod_res_desc *d)
{
    const lnmod_res_detail::res_ws_layout w = lnmod_res_detail::res_ws_of(d);
    if (w.total < 0) return INT64_MAX;
    return sat_mul(2, w.total - w.norm);
}

// The column sums' outputs: dscale, dshift per norm row, dgate per gate row, written once.
int64_t colsum_out_bytes(const lnmod_res_desc *d, const res_sizes &z)
{
    const int64_t rows = sat_add(sat_mul(2, lnmod_res_norm_rows(d)), z.gate ? lnmod_res_mod_rows(d) : 0);
    return sat_mul(sat_mul(rows, z.D), z.ms);
}

} // namespace

// naive forward: pass 1 reads r, y (and the gate row per token row) and writes h; passes 2 and 3
// re-read h; pass 3 reads scale and shift per token row and writes out.
int64_t lnmod_res_fwd_naive_bytes(const lnmod_res_desc *d, int want_stats)
{
    const res_sizes z = sizes_of(d);
    const int64_t el = z.rs + z.bs + z.rs + 2 * z.rs + z.os + (z.gate + 2) * z.ms;
    return sat_add(sat_mul(z.n, el), want_stats ? sat_mul(8, z.rows) : 0);
}

// dtile forward on its fused path: r, y read and h, out written once, the modulation rows (gate,
// scale, shift) re-read per token row (from L1/L2); elsewhere naive's.
int64_t lnmod_res_fwd_dtile_bytes(const lnmod_res_desc *d, int want_stats)
{
    if (!lnmod_res_detail::res_fwd_dtile_shape(d)) return lnmod_res_fwd_naive_bytes(d, want_stats);
    const res_sizes z = sizes_of(d);
    const int64_t el = 2 * z.rs + z.bs + z.os + (z.gate + 2) * z.ms;
    return sat_add(sat_mul(z.n, el), want_stats ? sat_mul(8, z.rows) : 0);
}

// naive backward, four kernels: row sums (h, d_out, scale), the norm's columns (h, d_out), the
// gate's columns (h, d_out, scale, dh, y), the rows (h, d_out, scale, dh, gate; dr, dy written);
// mean/rstd by each (8 B a row), the row sums written once and read twice (8 B a row each).
int64_t lnmod_res_bwd_naive_bytes(const lnmod_res_desc *d, int has_dh)
{
    const res_sizes z = sizes_of(d);
    const int64_t dh = has_dh ? z.rs : 0;
    int64_t el = (z.os + z.ms + z.rs) + (z.os + z.rs) + (z.os + z.ms + z.rs + dh + z.rs + z.bs) + z.gate * z.ms;
    int64_t row = 8 + 8 + 8 + 16;
    if (z.gate) {
        el += z.os + z.ms + z.rs + dh + z.bs;
        row += 16;
    }
    int64_t b = sat_add(sat_mul(z.n, el), sat_mul(row, z.rows));
    return sat_add(sat_add(b, partial_bytes(d)), colsum_out_bytes(d, z));
}

// dtile backward on its fused paths (the bulk ring, version 1): h, d_out, dh (given), y (with a
// gate) read and dr, dy written once, mean/rstd once, the scale (weight) and gate rows once (each
// chunk re-reads its row from L2), the partials and the column sums; elsewhere naive's.
int64_t lnmod_res_bwd_dtile_bytes(const lnmod_res_desc *d, int has_dh)
{
    if (!lnmod_res_detail::res_bwd_bulk_shape(d) && !lnmod_res_detail::res_bwd_dtile_shape(d))
        return lnmod_res_bwd_naive_bytes(d, has_dh);
    const res_sizes z = sizes_of(d);
    const int64_t el = z.rs + z.os + (has_dh ? z.rs : 0) + z.gate * z.bs + z.rs + z.bs;
    int64_t b = sat_add(sat_mul(z.n, el), sat_mul(8, z.rows));
    const int64_t mrows = sat_add(lnmod_res_norm_rows(d), z.gate ? lnmod_res_mod_rows(d) : 0); // scale (weight), gate
    b = sat_add(b, sat_mul(sat_mul(mrows, z.D), z.ms));
    return sat_add(sat_add(b, partial_bytes(d)), colsum_out_bytes(d, z));
}
