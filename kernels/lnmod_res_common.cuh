// lnmod_res_common.cuh -- what the fused residual + LN-modulate kernels share (issue 22; the op
// and its rules are lnmod_res_desc.h's): the launch
// parameters, scalar loads/stores with the dtype chosen at run time (the naive variant's
// way of covering every dtype quadruple with one instantiation), the column-sum chunk plans
// (kernels/lnmod_bwd_common.cuh's lnmod_bwd_plan, unchanged) and a finalize of NS partial
// rows per chunk in bwd_fin_kernel's fixed order. Every element offset is int64_t.
#ifndef ADALOAD_LNMOD_RES_COMMON_CUH
#define ADALOAD_LNMOD_RES_COMMON_CUH

#include "lnmod_bwd_common.cuh"
#include "lnmod_res_desc.h"

namespace lnmod_res_detail {

using namespace lnmod_detail;

struct res_params {
    // forward: r, y, gate, scale, shift -> h, out, mean, rstd
    // backward: h, y, gate, scale, dout, dh, mean, rstd -> dr, dy (+ column sums)
    const void *r, *y, *gate, *scale, *shift, *dout, *dh;
    const void *hin; // backward: the forward's h
    void *h, *out, *dr, *dy;
    const float *mean_in, *rstd_in;
    float *mean, *rstd;
    float *rowsum; // backward: [rows][2] = mean(gm), mean(gm*xhat)
    int64_t rows, D, S, L, F;
    int64_t gate_stride, scale_stride, shift_stride;
    int layout, has_gate, affine;
    int rt, bt, mt, ot; // res, branch, mod, out dtypes (lnmod_dtype)
    float eps;
};

res_params res_make_params(const lnmod_res_desc *d);

__device__ __forceinline__ float ldf(const void *p, int t, int64_t i)
{
    if (t == LNMOD_F32) return static_cast<const float *>(p)[i];
    if (t == LNMOD_BF16) return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    return __half2float(static_cast<const __half *>(p)[i]);
}

__device__ __forceinline__ void stf(void *p, int t, int64_t i, float v)
{
    if (t == LNMOD_F32) static_cast<float *>(p)[i] = v;
    else if (t == LNMOD_BF16) static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
    else static_cast<__half *>(p)[i] = __float2half_rn(v);
}

// v rounded to dtype t and widened back (what a store of v then a load gives).
__device__ __forceinline__ float roundf_to(int t, float v)
{
    if (t == LNMOD_BF16) return __bfloat162float(__float2bfloat16_rn(v));
    if (t == LNMOD_F16) return __half2float(__float2half_rn(v));
    return v;
}

// The column-sum plans: the norm's (dscale/dshift: the map's groups under MODULATE, one group
// of all rows under AFFINE) and the gate's (the map's groups). Each is lnmod_bwd_plan of an
// lnmod_desc, as the existing backward's; the output strides are those of the sums' outputs.
lnmod_desc res_norm_plan_desc(const lnmod_res_desc *d);
lnmod_desc res_gate_plan_desc(const lnmod_res_desc *d);

// The bulk backward's walk: the chunks its CTAs take, each a run of one modulation group's rows
// (the norm's groups under MODULATE; the gate's under AFFINE, whose norm sums run over all rows),
// with lnmod_bwd_bulk_plan.h's chunks per group, as lnmod's bulk path -- rounded down, about 512
// chunks in all above 65,536 rows (the common plan's 296 chunks at 75,600 rows are 3 waves of
// 132 one-CTA-an-SM CTAs, the last 24% full; 510 are 4 waves, 97% full). The plan the norm's
// finalize reads: the walk itself under MODULATE; under AFFINE one group of all the walk's chunks
// (dweight, dbias: the sum of every chunk's partials, in res_finalize's fixed order). Functions
// of the descriptor alone.
lnmod_bparams res_bulk_walk(const lnmod_res_desc *d);
lnmod_bparams res_bulk_norm_fin(const lnmod_res_desc *d, const lnmod_bparams &walk);

// Workspace layout of the backward (byte offsets, each 16-byte aligned): the row sums
// [rows][2] fp32, the norm partials [nchunks][2][D], the gate partials [nchunks][1][D].
struct res_ws_layout {
    int64_t rowsum, norm, gate, total; // -1 total: overflow
};
res_ws_layout res_ws_of(const lnmod_res_desc *d);

// Finalize of NS partial rows a chunk (ws[chunk][NS][D], written by a column kernel) into
// out[s] at out_stride[s] elements a group, dtype mt: the order of bwd_fin_kernel (warp w adds
// chunks w, w + 8, ..., then warp 0 the 8 warp sums in order). No-op when cpg == 1. ns: 1 or 2.
struct res_fin_out {
    void *out[3];
    int64_t stride[3];
};
lnmod_status res_finalize(const lnmod_bparams &p, int ns, const float *ws, const res_fin_out &o, int mt,
                          cudaStream_t stream);

} // namespace lnmod_res_detail

#endif
