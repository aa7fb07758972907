// bv2.cu -- dtile backward v2 (experiment): the entry points (bv2.h) and round 1's
// configurations -- G = 1..4 warp groups per CTA with v1's shape rule, a per-thread cp.async
// ring (bv2_kernel.cuh). Round 2's configurations are compiled in bv2_r2.cu.
#include "bv2_kernel.cuh"
#include "bv2_r2.h"

namespace {

template <typename TX, typename TM, typename TY, int G, bool HOLD>
lnmod_status bv2_vpt(const bv2_kp &k, int vpt, int T, cudaStream_t stream, bv2_info *info, bool *ran)
{
    constexpr int VEC = dt<TX>::VEC;
    switch (vpt) {
    case 1: return bv2_stages<TX, TM, TY, 1, G, HOLD>(k, T, stream, info, ran);
    case 2:
        if constexpr (2 * VEC <= BV2_MAX_E) return bv2_stages<TX, TM, TY, 2, G, HOLD>(k, T, stream, info, ran);
        break;
    case 3:
        if constexpr (3 * VEC <= BV2_MAX_E) return bv2_stages<TX, TM, TY, 3, G, HOLD>(k, T, stream, info, ran);
        break;
    case 4:
        if constexpr (4 * VEC <= BV2_MAX_E) return bv2_stages<TX, TM, TY, 4, G, HOLD>(k, T, stream, info, ran);
        break;
    default: break;
    }
    return LNMOD_OK;
}

template <typename TX, typename TM, typename TY>
lnmod_status bv2_typed(int G, bool hold, const bv2_kp &k, cudaStream_t stream, bv2_info *info, bool *ran)
{
    constexpr bool ok = (std::is_same<TX, __nv_bfloat16>::value && std::is_same<TY, __nv_bfloat16>::value &&
                         std::is_same<TM, float>::value) ||
                        (std::is_same<TX, float>::value) ||
                        (std::is_same<TX, __nv_bfloat16>::value && std::is_same<TM, __nv_bfloat16>::value &&
                         std::is_same<TY, float>::value) ||
                        (std::is_same<TX, __half>::value && std::is_same<TM, __half>::value &&
                         std::is_same<TY, __half>::value);
    if constexpr (ok) {
        if (!lnmod_bwd_vector_ok<TX, TM, TY>(k.p)) return LNMOD_OK;
        constexpr int VEC = dt<TX>::VEC;
        int T = 0;
        const int vpt = bv2_shape(k.nv, VEC, BV2_MAX_E, G == 1 ? 512 : 768 / G, 1, &T);
        if (vpt == 0) return LNMOD_OK;
        switch (G) {
        case 1: return bv2_vpt<TX, TM, TY, 1, false>(k, vpt, T, stream, info, ran);
        case 2:
            return hold ? bv2_vpt<TX, TM, TY, 2, true>(k, vpt, T, stream, info, ran)
                        : bv2_vpt<TX, TM, TY, 2, false>(k, vpt, T, stream, info, ran);
        case 3: return bv2_vpt<TX, TM, TY, 3, false>(k, vpt, T, stream, info, ran);
        case 4: return bv2_vpt<TX, TM, TY, 4, false>(k, vpt, T, stream, info, ran);
        default: break;
        }
    }
    return LNMOD_OK;
}

bool bv2_round1(const bv2_config *c)
{
    return !c->bulk && !c->no_fence && !c->fixed_t && c->min_vpt == 1 && c->cta_max == 768 && c->G >= 1 && c->G <= 4 &&
           (!c->hold || c->G == 2);
}

bool bv2_round2(const bv2_config *c)
{
    return (c->bulk || c->min_vpt == 2 || c->cta_max == 960) && !c->hold && (c->bulk || !c->no_fence) &&
           c->min_vpt >= 1 && c->min_vpt <= 2 &&
           (c->cta_max == 768 || c->cta_max == 960) && (c->G == 2 || c->G == 3 || c->G == 4 || c->G == 6 || c->G == 8);
}

} // namespace

extern "C" int64_t bv2_workspace(const lnmod_desc *d)
{
    if (lnmod_desc_validate(d) != LNMOD_OK) return -1;
    size_t v1 = 0;
    if (lnmod_backward_workspace("dtile", d, &v1) != LNMOD_OK) return -1;
    int64_t need = (int64_t)v1;
    for (int64_t target : {(int64_t)BV2_TARGET_V1, (int64_t)BV2_TARGET_FINE}) {
        const bv2_plan pl = bv2_make_plan(d->rows, d->rows_per_sample, d->frame_len, (int)d->layout, target);
        if (pl.cpg <= 1) continue;
        if (pl.nchunks > INT64_MAX / 8 / d->D) return -1;
        need = pl.nchunks * 8 * d->D > need ? pl.nchunks * 8 * d->D : need;
    }
    return need;
}

extern "C" lnmod_status bv2_backward_cfg(const bv2_config *c, const lnmod_desc *d, const void *x, const void *scale,
                                         const void *dy, const float *mean, const float *rstd, void *dx,
                                         void *dscale, void *dshift, void *workspace, size_t workspace_bytes,
                                         cudaStream_t stream, bv2_info *info)
{
    if (!c) return LNMOD_ERR_NULL_POINTER;
    if ((!bv2_round1(c) && !bv2_round2(c)) || (c->target != BV2_TARGET_V1 && c->target != BV2_TARGET_FINE))
        return LNMOD_ERR_UNSUPPORTED;
    if (info) *info = bv2_info{1, 0, 0, 0, 0, 0, 0, 0};
    lnmod_status st = d ? lnmod_desc_validate(d) : LNMOD_ERR_NULL_POINTER;
    if (st != LNMOD_OK) return st;
    if (!x || !scale || !dy || !mean || !rstd || !dx || !dscale || !dshift)
        return LNMOD_ERR_NULL_POINTER;
    const int64_t need = bv2_workspace(d);
    if (need < 0) return LNMOD_ERR_OVERFLOW;
    if (need > 0 && (!workspace || (uint64_t)workspace_bytes < (uint64_t)need ||
                     ((uintptr_t)workspace & 15u) != 0))
        return LNMOD_ERR_WORKSPACE;
    bool ran = false;
    if (bv2_round2(c)) {
        st = bv2_r2_backward(c, d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace, stream, info, &ran);
        if (st != LNMOD_OK || ran) return st;
    } else {
        bv2_kp k;
        if (bv2_make_kp(d, c->target, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace, &k)) {
            st = lnmod_dispatch_dtypes(d, [&](auto tx, auto tm, auto ty) {
                return bv2_typed<typename decltype(tx)::type, typename decltype(tm)::type,
                                 typename decltype(ty)::type>(c->G, c->hold != 0, k, stream, info, &ran);
            });
            if (st != LNMOD_OK || ran) return st;
        }
    }
    return lnmod_backward("dtile", d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace,
                          workspace_bytes, stream);
}

extern "C" lnmod_status bv2_backward(int G, int target, const lnmod_desc *d, const void *x, const void *scale,
                                     const void *dy, const float *mean, const float *rstd,
                                     void *dx, void *dscale, void *dshift, void *workspace,
                                     size_t workspace_bytes, cudaStream_t stream, bv2_info *info)
{
    const bool hold = G == BV2_G2_HOLD;
    const bv2_config c = {hold ? 2 : G, target, hold ? 1 : 0, 0, 1, 768, 0, 0};
    return bv2_backward_cfg(&c, d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace, workspace_bytes,
                            stream, info);
}
