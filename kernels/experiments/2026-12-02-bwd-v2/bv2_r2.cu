// bv2_r2.cu -- round 2's configurations of dtile backward v2 (experiment; README "Round 2"),
// compiled for the bar's dtype triple bf16-f32-bf16 and for bf16-bf16-f32 (whose fp32 dy
// checks the bulk ring's two-piece dy layout); every other triple runs v1.
//   * 16 elements a thread (min_vpt 2) with G = 4, 6, 8 groups: bf16 D1536 as 96 threads a
//     group, CTAs of 384-768 threads (80 registers a thread);
//   * G = 3 with CTAs of up to 960 threads (64 registers a thread): bf16 D5120 as 3 x 320;
//   * the same and G = 2 with the ring filled by the bulk copy engine (bv2_dev.cuh);
//   * two vectors a thread with the group's thread count compiled in where the row is exactly
//     T x 2 vectors ("t"): G = 4 x 96 (bf16 D1536), 4 x 192 (D3072), 2 x 320 (D5120), with
//     either ring.
// The ring depth is the one with the most CTAs per SM (bv2_stages_occ), (1 + scale) sharing
// the combine buffer.
#include "bv2_kernel.cuh"
#include "bv2_r2.h"

namespace {

// The "t" kernels: G = 4 x 96 (bf16 D1536), 4 x 192 (D3072), 2 x 320 (D5120), two vectors a
// thread covering the row exactly, the group's thread count compiled in.
template <typename TX, typename TM, typename TY, bool BULK>
lnmod_status bv2_r2_fixed(const bv2_config &c, const bv2_kp &k, int vpt, int T, cudaStream_t stream, bv2_info *info,
                          bool *ran)
{
    if (c.cta_max != 768 || vpt != 2 || T * 2 != k.nv) return LNMOD_OK;
    if (c.G == 4 && T == 96) return bv2_stages_occ<TX, TM, TY, 2, 4, BULK, 768, 96>(k, T, stream, info, ran);
    if (c.G == 4 && T == 192) return bv2_stages_occ<TX, TM, TY, 2, 4, BULK, 768, 192>(k, T, stream, info, ran);
    if (c.G == 2 && T == 320) return bv2_stages_occ<TX, TM, TY, 2, 2, BULK, 768, 320>(k, T, stream, info, ran);
    return LNMOD_OK;
}

template <typename TX, typename TM, typename TY>
lnmod_status bv2_r2_typed(const bv2_config &c, const bv2_kp &k, cudaStream_t stream, bv2_info *info, bool *ran)
{
    constexpr bool ok = std::is_same<TX, __nv_bfloat16>::value &&
                        ((std::is_same<TM, float>::value && std::is_same<TY, __nv_bfloat16>::value) ||
                         (std::is_same<TM, __nv_bfloat16>::value && std::is_same<TY, float>::value));
    if constexpr (ok) {
        if (!lnmod_bwd_vector_ok<TX, TM, TY>(k.p)) return LNMOD_OK;
        constexpr int VEC = dt<TX>::VEC;
        int T = 0;
        const int vpt = bv2_shape(k.nv, VEC, BV2_MAX_E, c.cta_max / c.G, c.min_vpt, &T);
        const bool wide = c.cta_max == 960;
        if (vpt == 0) return LNMOD_OK;
        if (c.fixed_t) // compile-time T where two vectors a thread are the row exactly
            return c.bulk ? bv2_r2_fixed<TX, TM, TY, true>(c, k, vpt, T, stream, info, ran)
                          : bv2_r2_fixed<TX, TM, TY, false>(c, k, vpt, T, stream, info, ran);
        if (!c.bulk) {
            if (vpt != 2) return LNMOD_OK;
            if (wide) return c.G == 3 ? bv2_stages_occ<TX, TM, TY, 2, 3, false, 960>(k, T, stream, info, ran) : LNMOD_OK;
            switch (c.G) {
            case 4: return bv2_stages_occ<TX, TM, TY, 2, 4, false, 768>(k, T, stream, info, ran);
            case 6: return bv2_stages_occ<TX, TM, TY, 2, 6, false, 768>(k, T, stream, info, ran);
            case 8: return bv2_stages_occ<TX, TM, TY, 2, 8, false, 768>(k, T, stream, info, ran);
            default: return LNMOD_OK;
            }
        }
        if (wide) return c.G == 3 && vpt == 2 ? bv2_stages_occ<TX, TM, TY, 2, 3, true, 960>(k, T, stream, info, ran) : LNMOD_OK;
        if (vpt == 1) return c.G == 2 ? bv2_stages_occ<TX, TM, TY, 1, 2, true, 768>(k, T, stream, info, ran) : LNMOD_OK;
        switch (c.G) {
        case 2: return bv2_stages_occ<TX, TM, TY, 2, 2, true, 768>(k, T, stream, info, ran);
        case 4: return bv2_stages_occ<TX, TM, TY, 2, 4, true, 768>(k, T, stream, info, ran);
        case 6: return bv2_stages_occ<TX, TM, TY, 2, 6, true, 768>(k, T, stream, info, ran);
        case 8: return bv2_stages_occ<TX, TM, TY, 2, 8, true, 768>(k, T, stream, info, ran);
        default: return LNMOD_OK;
        }
    }
    return LNMOD_OK;
}

} // namespace

lnmod_status bv2_r2_backward(const bv2_config *c, const lnmod_desc *d, const void *x, const void *scale,
                             const void *dy, const float *mean, const float *rstd, void *dx, void *dscale,
                             void *dshift, void *workspace, cudaStream_t stream, bv2_info *info, bool *ran)
{
    bv2_kp k;
    if (!bv2_make_kp(d, c->target, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace, &k)) return LNMOD_OK;
    k.fence = c->no_fence ? 0 : 1;
    return lnmod_dispatch_dtypes(d, [&](auto tx, auto tm, auto ty) {
        return bv2_r2_typed<typename decltype(tx)::type, typename decltype(tm)::type, typename decltype(ty)::type>(
            *c, k, stream, info, ran);
    });
}
