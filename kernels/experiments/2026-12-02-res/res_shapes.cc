// res_shapes.cc -- resbench's shapes: the bar's (timed) first, then the check-only ones.
#include "res_bench.h"

namespace {
const lnmod_dtype BF = LNMOD_BF16, F32 = LNMOD_F32, H = LNMOD_F16;
const lnmod_layout SAM = LNMOD_PER_SAMPLE, TOK = LNMOD_PER_TOKEN, FRM = LNMOD_PER_FRAME;
} // namespace

// {name, site, layout, res, branch, mod, out, D, rows, S, L, dh, inplace, misalign, timed}
const res_shape RES_SHAPES[] = {
    // The bar: bf16 branch, fp32 residual, per-sample fp32 modulation, 32,760 rows.
    {"site3 sample D1536", 3, SAM, F32, BF, F32, BF, 1536, 32760, 32760, 1, true, false, false, true},
    {"site3 sample D3072", 3, SAM, F32, BF, F32, BF, 3072, 32760, 32760, 1, true, false, false, true},
    {"site3 sample D5120", 3, SAM, F32, BF, F32, BF, 5120, 32760, 32760, 1, true, false, false, true},
    {"site1 affine D5120", 1, SAM, F32, BF, F32, BF, 5120, 32760, 32760, 1, true, false, false, true},
    {"site2 nogate D5120", 2, SAM, F32, BF, F32, BF, 5120, 32760, 32760, 1, true, false, false, true},
    // Check only: sites x layouts x residual dtypes, odd and small D, in place, misaligned.
    {"site3 frame res-f32 D1536 short last frame", 3, FRM, F32, BF, F32, BF, 1536, 3021, 1007, 500, true, false, false, false},
    {"site3 frame res-bf16 D1536", 3, FRM, BF, BF, F32, BF, 1536, 3120, 1560, 390, true, false, false, false},
    {"site3 token res-f32 D1024", 3, TOK, F32, BF, F32, BF, 1024, 300, 300, 1, true, false, false, false},
    {"site3 token res-bf16 D1024", 3, TOK, BF, BF, F32, BF, 1024, 300, 300, 1, true, false, false, false},
    {"site3 sample res-bf16 B2 D3072", 3, SAM, BF, BF, F32, BF, 3072, 4000, 2000, 1, true, false, false, false},
    {"site3 sample res-f32 mod-bf16 D2048", 3, SAM, F32, BF, BF, BF, 2048, 2048, 1024, 1, true, false, false, false},
    {"site1 affine res-f32 B2 D1536", 1, SAM, F32, BF, F32, BF, 1536, 4096, 2048, 1, true, false, false, false},
    {"site1 affine res-bf16 frame D1536", 1, FRM, BF, BF, F32, BF, 1536, 3000, 1500, 500, true, false, false, false},
    {"site1 affine res-f32 token D1000", 1, TOK, F32, BF, F32, BF, 1000, 200, 200, 1, false, false, false, false},
    {"site2 nogate res-f32 frame D1536", 2, FRM, F32, BF, F32, BF, 1536, 3021, 1007, 500, true, false, false, false},
    {"site2 nogate res-bf16 sample D5120", 2, SAM, BF, BF, F32, BF, 5120, 2000, 1000, 1, true, false, false, false},
    {"site2 nogate res-f32 token D1536", 2, TOK, F32, BF, F32, BF, 1536, 257, 257, 1, false, false, false, false},
    {"site3 sample f16 D1000 (odd D)", 3, SAM, H, H, H, H, 1000, 2000, 1000, 1, true, false, false, false},
    {"site3 sample all-f32 D4 S5", 3, SAM, F32, F32, F32, F32, 4, 10, 5, 1, true, false, false, false},
    {"site1 affine f32-bf16 D8 token", 1, TOK, F32, BF, F32, F32, 8, 37, 37, 1, true, false, false, false},
    {"site2 nogate D1 rows3", 2, SAM, F32, BF, F32, BF, 1, 3, 3, 1, true, false, false, false},
    {"site3 sample D1536 in place", 3, SAM, F32, BF, F32, BF, 1536, 2048, 1024, 1, true, true, false, false},
    {"site3 frame res-bf16 D1536 in place", 3, FRM, BF, BF, F32, BF, 1536, 3000, 1500, 500, true, true, false, false},
    {"site3 sample D1536 misaligned", 3, SAM, F32, BF, F32, BF, 1536, 2000, 1000, 1, true, false, true, false},
    {"site3 token res-f32 D5120 (dtile path)", 3, TOK, F32, BF, F32, BF, 5120, 64, 64, 1, true, false, false, false},
    {"site1 affine res-f32 frame D3072 (dtile path)", 1, FRM, F32, BF, F32, BF, 3072, 2000, 1000, 300, true, false, false, false},
    {"site2 nogate res-f32 sample B3 D5120 in place", 2, SAM, F32, BF, F32, BF, 5120, 1500, 500, 1, true, true, false, false},
    {"site3 sample D8192", 3, SAM, F32, BF, F32, BF, 8192, 4096, 4096, 1, true, false, false, false},
    {"site3 sample D5120 r2048 (fp32 branch)", 3, SAM, F32, F32, F32, F32, 5120, 2048, 2048, 1, true, false, false, false},
};
const int RES_NSHAPES = (int)(sizeof RES_SHAPES / sizeof RES_SHAPES[0]);

lnmod_res_desc res_desc_of(const res_shape &s)
{
    lnmod_res_desc d = lnmod_res_desc_default();
    d.rows = s.rows;
    d.D = s.D;
    d.rows_per_sample = s.S;
    d.frame_len = s.L;
    d.layout = s.lay;
    d.gate = s.site == 2 ? LNMOD_RES_GATE_NONE : LNMOD_RES_GATE;
    d.norm = s.site == 1 ? LNMOD_RES_AFFINE : LNMOD_RES_MODULATE;
    d.res_dtype = s.rt;
    d.branch_dtype = s.bt;
    d.mod_dtype = s.mt;
    d.out_dtype = s.ot;
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * s.D + (s.misalign ? 1 : 0);
    return d;
}
