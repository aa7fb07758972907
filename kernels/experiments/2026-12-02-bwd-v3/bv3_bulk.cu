// bv3_bulk.cu -- round 3's bulk candidates: the production's bulk kernel (kernels/
// lnmod_bwd_bulk.cu, version 2) with one change each, compiled three times by build.sh:
//   -DBV3_OPT_HALF=1 -DBV3_OPT_K2=0  "half":   the combine buffer halved (dscale's sums of the G
//                            groups first, then dshift's, through T*VPT*VEC floats);
//   -DBV3_OPT_HALF=0 -DBV3_OPT_K2=1  "k2":     two rows a step per group (one butterfly over four
//                            values, one named barrier, one exchange for both rows);
//   -DBV3_OPT_HALF=1 -DBV3_OPT_K2=1  "k2half": both.
// Everything else is the production's own source: build.sh cuts its namespace
// lnmod_bulk_detail (the ring, bk_row, bk_combine, the (1 + scale) loads, bk_occupancy, ...)
// out of kernels/lnmod_bwd_bulk.cu into build-bwdv3/gen/bk_prod.cuh, which this includes.
// The chunk plan, the shares, the row shape and the finalize are the production's, and so is
// every addition's order: dx, dscale and dshift keep the production's bits (bv3bench checks).
#include <type_traits>

#ifdef BV3_EMU // the host emulation (bv3_emu_test.cc): the test includes this file
#include "bv3_emu.h"
#endif
#include "lnmod_bwd_bulk_plan.h"
#include "lnmod_bwd_common.cuh"
#include "lnmod_variants.cuh"
// The production's namespace (generated; see above).
#include "bk_prod.cuh"
#include "bv3.h"
#include "bv3_plan.h"

#if !defined(BV3_OPT_HALF) || !defined(BV3_OPT_K2)
#error "build.sh defines BV3_OPT_HALF and BV3_OPT_K2"
#endif
#define BV3_CAT2(a, b, c) a##b##c
#define BV3_CAT(a, b, c) BV3_CAT2(a, b, c)
#define BV3_ENTRY BV3_CAT(bv3_bulk_h, BV3_OPT_HALF, BV3_CAT(k, BV3_OPT_K2, ))
// Each build's namespace carries its options: the three objects are linked into one binary,
// and a template with the same mangled name in all three (bv3_kernel<...>, bv3_stages<...>)
// is one weak symbol the linker keeps ONCE -- round 3's first run timed half's kernel under
// all three names (kernels/NOTES.md item 12; build.sh now checks the objects share none).
#ifndef bv3_bulk_detail
#define bv3_bulk_detail BV3_CAT(bv3_bulk_h, BV3_OPT_HALF, BV3_CAT(k, BV3_OPT_K2, _detail))
#endif

namespace bv3_bulk_detail {

using namespace lnmod_detail;
using namespace lnmod_bulk_detail;

constexpr bool HALF = BV3_OPT_HALF != 0, K2 = BV3_OPT_K2 != 0;

// One of the two column sums of the G groups added in the order 0, 1, .., G-1 into group
// 0's registers through a buffer of T*VPT*VEC floats (bk_combine's order for each).
template <int VEC, int G>
__device__ __forceinline__ void bv3_combine_one(float *cmb, int gq, int T, int tid, float (&v)[BK_VPT][VEC])
{
#pragma unroll 1
    for (int k = 1; k < G; k++) {
        __syncthreads(); // group 0 has read the previous group's sums
        if (gq == k) {
#pragma unroll
            for (int q = 0; q < BK_VPT; q++)
#pragma unroll
                for (int e = 0; e < VEC; e++) cmb[(q * VEC + e) * T + tid] = v[q][e];
        }
        __syncthreads();
        if (gq == 0) {
#pragma unroll
            for (int q = 0; q < BK_VPT; q++)
#pragma unroll
                for (int e = 0; e < VEC; e++) v[q][e] += cmb[(q * VEC + e) * T + tid];
        }
    }
}

// Two rows (walk rows w and w + 1 of the group, stages base0 and base1): both rows' sums,
// one butterfly over the four values, one barrier, one exchange, both rows' dx. The column
// sums add row 0 before row 1 for every element (the production's order).
template <typename TX, typename TY, int G, typename Mid>
__device__ __forceinline__ void bv3_row2(const bk_kp &k, const uint4 *base0, const uint4 *base1, float2 ms0,
                                         float2 ms1, int32_t r0, int32_t r1, int gq, int T, int tid,
                                         float4 (*red)[G][BK_MAX_NW], int par,
                                         const float (&sp)[BK_VPT][bk_cfg<TX, TY>::VEC], const float *sps,
                                         float (&as)[BK_VPT][bk_cfg<TX, TY>::VEC],
                                         float (&ah)[BK_VPT][bk_cfg<TX, TY>::VEC], Mid &&mid)
{
    constexpr int VEC = bk_cfg<TX, TY>::VEC;
    constexpr bool SPS = bk_cfg<TX, TY>::SPS;
    float a0 = 0.0f, b0 = 0.0f, a1 = 0.0f, b1 = 0.0f;
#pragma unroll
    for (int q = 0; q < BK_VPT; q++) {
        if (tid + q * T < k.nv) {
            float xf[VEC], gf[VEC], s[VEC];
            bk_scale_of<VEC, SPS>(sp, sps, q, tid + q * T, s);
            bk_read<TX, TY>(base0, q, T, tid, xf, gf);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float xh = (xf[e] - ms0.x) * ms0.y;
                const float g = gf[e] * s[e];
                a0 += g;
                b0 = fmaf(g, xh, b0);
                as[q][e] = fmaf(gf[e], xh, as[q][e]);
                ah[q][e] += gf[e];
            }
            bk_scale_of<VEC, SPS>(sp, sps, q, tid + q * T, s); // read again: fewer live registers
            bk_read<TX, TY>(base1, q, T, tid, xf, gf);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float xh = (xf[e] - ms1.x) * ms1.y;
                const float g = gf[e] * s[e];
                a1 += g;
                b1 = fmaf(g, xh, b1);
                as[q][e] = fmaf(gf[e], xh, as[q][e]);
                ah[q][e] += gf[e];
            }
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) { // lnmod_warp_sum2's order, for both rows at once
        a0 += __shfl_xor_sync(0xffffffffu, a0, o);
        b0 += __shfl_xor_sync(0xffffffffu, b0, o);
        a1 += __shfl_xor_sync(0xffffffffu, a1, o);
        b1 += __shfl_xor_sync(0xffffffffu, b1, o);
    }
    const int NW = T >> 5, lane = tid & 31, warp = tid >> 5;
    if (lane == 0) red[par][gq][warp] = make_float4(a0, b0, a1, b1);
    if (NW > 1)
        bk_group_sync(gq, T);
    else
        __syncwarp();
    mid();
    a0 = b0 = a1 = b1 = 0.0f;
    for (int w = 0; w < NW; w++) { // fixed order
        const float4 t = red[par][gq][w];
        a0 += t.x;
        b0 += t.y;
        a1 += t.z;
        b1 += t.w;
    }
    const float invd = 1.0f / (float)k.D;
    const float nca0 = -ms0.y * (a0 * invd), ncb0 = -ms0.y * (b0 * invd);
    const float nca1 = -ms1.y * (a1 * invd), ncb1 = -ms1.y * (b1 * invd);
    TX *dx0 = static_cast<TX *>(k.p.dx) + (int64_t)r0 * k.D;
    TX *dx1 = static_cast<TX *>(k.p.dx) + (int64_t)r1 * k.D;
#pragma unroll
    for (int q = 0; q < BK_VPT; q++) {
        const int v = tid + q * T;
        if (v < k.nv) {
            float xf[VEC], gf[VEC], s[VEC], o[VEC];
            bk_scale_of<VEC, SPS>(sp, sps, q, v, s);
            bk_read<TX, TY>(base0, q, T, tid, xf, gf);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float xh = (xf[e] - ms0.x) * ms0.y;
                o[e] = fmaf(xh, ncb0, fmaf(gf[e] * s[e], ms0.y, nca0));
            }
            lnmod_store_n<TX, VEC>(dx0 + v * VEC, o);
            bk_scale_of<VEC, SPS>(sp, sps, q, v, s);
            bk_read<TX, TY>(base1, q, T, tid, xf, gf);
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float xh = (xf[e] - ms1.x) * ms1.y;
                o[e] = fmaf(xh, ncb1, fmaf(gf[e] * s[e], ms1.y, nca1));
            }
            lnmod_store_n<TX, VEC>(dx1 + v * VEC, o);
        }
    }
}

// The production's bk_kernel with the change of this build (HALF: the combine; K2: the row
// loop). Everything not marked is the production's code.
template <typename TX, typename TM, typename TY, int NS, int G>
__global__ void __launch_bounds__(BK_MAXT, 1) bv3_kernel(bk_kp k)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    using C = bk_cfg<TX, TY>;
    constexpr int VEC = C::VEC;
    static_assert(NS >= (K2 ? bv3_k2_min_stages() : 2), "ring depth");
#ifdef BV3_EMU // per-CTA shared memory of the emulation: the static part in the same order
    uint4 *bv3_smem = emu::smem();
    char *st0 = reinterpret_cast<char *>(emu::static_smem());
    auto &red = *reinterpret_cast<float2(*)[2][G][BK_MAX_NW]>(st0);
    auto &red4 = *reinterpret_cast<float4(*)[2][G][BK_MAX_NW]>(st0 + sizeof(float2) * 2 * G * BK_MAX_NW);
    auto &full = *reinterpret_cast<uint64_t(*)[G * NS]>(st0 + sizeof(float2) * 2 * G * BK_MAX_NW +
                                                         sizeof(float4) * 2 * G * BK_MAX_NW);
#else
    extern __shared__ uint4 bv3_smem[];
    __shared__ float2 red[2][G][BK_MAX_NW];
    __shared__ float4 red4[K2 ? 2 : 1][K2 ? G : 1][K2 ? BK_MAX_NW : 1]; // K2: the pair steps' exchange
    __shared__ uint64_t full[G * NS];
    cudaTriggerProgrammaticLaunchCompletion();
#endif
    const int T = (int)blockDim.x / G, gq = (int)threadIdx.x / T, tid = (int)threadIdx.x - gq * T;
    uint4 *ring = bv3_smem + gq * NS * C::SLOTS * T;
    float2 *stats0 = reinterpret_cast<float2 *>(bv3_smem + G * NS * C::SLOTS * T);
    float2 *stats = stats0 + gq * NS;
    float *cmb = reinterpret_cast<float *>(stats0 + bk_stat_slots(G, NS));
    float *sps = cmb + (HALF ? 1 : 2) * BK_VPT * VEC * T; // HALF: half the combine buffer
    uint64_t *bar = full + gq * NS;
    if (threadIdx.x == 0) {
        for (int i = 0; i < G * NS; i++) bk_mbar_init(&full[i], 2);
        bk_fence_proxy_async();
    }
    __syncthreads();
    const lnmod_bulk_plan &pl = k.pl;
    bk_cur pre;
    pre.c = (int32_t)blockIdx.x;
    pre.ok = false;
    if (tid == 0) bk_seek(pl, pre, gq, G);
    for (int j = 0; j < NS - 1; j++) {
        if (pre.ok) {
            bk_issue<TX, TY>(k, ring, stats, bar, j, pre.r, T);
            bk_next(pl, pre, gq, G);
        }
    }
    float as[BK_VPT][VEC], ah[BK_VPT][VEC], sp[BK_VPT][VEC];
#pragma unroll
    for (int q = 0; q < BK_VPT; q++)
#pragma unroll
        for (int e = 0; e < VEC; e++) as[q][e] = ah[q][e] = sp[q][e] = 0.0f;
    int64_t g_loaded = -1;
    int slot = 0, par = 0, owed = 1;
    uint32_t phase = 0;
    for (int32_t c = (int32_t)blockIdx.x; c < pl.nchunks; c += (int32_t)gridDim.x) {
        int64_t g, r0, n;
        lnmod_bulk_chunk_rows(&pl, c, &g, &r0, &n);
        if (n == 0) continue;
        int32_t r, step, cnt;
        lnmod_bulk_share(&pl, r0, n, gq, G, &r, &step, &cnt);
        if (g != g_loaded) {
            g_loaded = g;
            if constexpr (C::SPS)
                bk_load_scale_smem<TM>(k, g, sps);
            else
                bk_load_scale<TM, VEC>(k, g, T, tid, sp);
        }
        if constexpr (!K2) { // the production's row loop
            for (int32_t j = 0; j < cnt; j++, r += step) {
                const int s0 = slot == 0 ? NS - 1 : slot - 1;
                bk_mbar_wait(bar + slot, phase);
                const float2 ms = stats[slot];
                auto mid = [&]() {
                    if (pre.ok) {
                        bk_fence_proxy_async();
                        bk_issue<TX, TY>(k, ring, stats, bar, s0, pre.r, T);
                        bk_next(pl, pre, gq, G);
                    }
                };
                bk_row<TX, TY, G>(k, ring + slot * C::SLOTS * T + tid, ms, r, gq, T, tid, red, par, sp, sps, as,
                                  ah, mid);
                slot = slot + 1 == NS ? 0 : slot + 1;
                if (slot == 0) phase ^= 1u;
                par ^= 1;
            }
        } else { // K2: steps of two rows (bv3_plan.h)
            for (int32_t j = 0; j < cnt;) {
                const int m = bv3_k2_step(cnt - j);
                auto mid = [&]() { // the stages the previous step freed: walk rows w + NS - owed ..
                    int is = bv3_k2_issue_stage(slot, owed, NS); // .. w + NS - 1 (w: this step's first)
                    for (int i = 0; i < owed; i++) {
                        if (pre.ok) {
                            bk_fence_proxy_async();
                            bk_issue<TX, TY>(k, ring, stats, bar, is, pre.r, T);
                            is = is + 1 == NS ? 0 : is + 1;
                            bk_next(pl, pre, gq, G);
                        }
                    }
                    owed = bv3_k2_owed_after(m);
                };
                const int sl1 = slot + 1 == NS ? 0 : slot + 1;
                bk_mbar_wait(bar + slot, phase);
                if (m == 2) {
                    bk_mbar_wait(bar + sl1, sl1 == 0 ? phase ^ 1u : phase);
                    bv3_row2<TX, TY, G>(k, ring + slot * C::SLOTS * T + tid, ring + sl1 * C::SLOTS * T + tid,
                                        stats[slot], stats[sl1], r, r + step, gq, T, tid, red4, par, sp, sps, as,
                                        ah, mid);
                } else {
                    bk_row<TX, TY, G>(k, ring + slot * C::SLOTS * T + tid, stats[slot], r, gq, T, tid, red, par,
                                      sp, sps, as, ah, mid);
                }
                for (int i = 0; i < m; i++) {
                    slot = slot + 1 == NS ? 0 : slot + 1;
                    if (slot == 0) phase ^= 1u;
                }
                par ^= 1;
                j += m;
                r += m * step;
            }
        }
        if constexpr (HALF) {
            bv3_combine_one<VEC, G>(cmb, gq, T, tid, as);
            bv3_combine_one<VEC, G>(cmb, gq, T, tid, ah);
        } else {
            bk_combine<VEC, G>(cmb, gq, T, tid, as, ah);
        }
        if (gq == 0) {
#pragma unroll
            for (int q = 0; q < BK_VPT; q++) {
                const int v = tid + q * T;
                if (v < k.nv) lnmod_bwd_flush<TM, VEC, true>(k.p, c, g, (int64_t)v * VEC, as[q], ah[q]);
            }
        }
#pragma unroll
        for (int q = 0; q < BK_VPT; q++)
#pragma unroll
            for (int e = 0; e < VEC; e++) as[q][e] = ah[q][e] = 0.0f;
    }
#else
    (void)k;
    __trap();
#endif
}

#ifndef BV3_EMU
// ---- host side (the production's bk_go / bk_stages with this build's kernel) -------------
template <typename TX, typename TM, typename TY, int NS, int G>
lnmod_status bv3_go(const bk_kp &k, int T, size_t smem, int per_sm, cudaStream_t stream, bv3_info *info)
{
    int sms = 1;
    lnmod_status st = lnmod_sm_count(&sms);
    if (st != LNMOD_OK) return st;
    int64_t grid = (int64_t)per_sm * sms;
    if (grid > k.pl.nchunks) grid = k.pl.nchunks;
    bv3_kernel<TX, TM, TY, NS, G><<<(unsigned)grid, (unsigned)(G * T), smem, stream>>>(k);
    if (info) {
        info->stages = NS;
        info->grid = (int)grid;
        info->per_sm = per_sm;
        info->smem = (int)smem;
    }
    st = lnmod_launch_status();
    return st != LNMOD_OK ? st : lnmod_bwd_finalize<TM>(k.p, stream);
}

// Of the depths this build allows (k2: 4 only, bv3_plan.h; else 4, 3, 2) the one with the
// most CTAs per SM, the deeper on a tie (the production's rule).
template <typename TX, typename TM, typename TY, int G>
lnmod_status bv3_stages(const bk_kp &k, int T, cudaStream_t stream, bool *ran, bv3_info *info)
{
    using C = bk_cfg<TX, TY>;
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    size_t sm[5] = {0, 0, 0, 0, 0};
    int occ[5] = {0, 0, 0, 0, 0}, best = 0;
    const int lo = K2 ? 4 : 2;
    for (int ns = 4; ns >= lo; ns--) {
        // The model of bv3_plan.h must be the production's formula (checked on every call).
        if (bv3_bulk_smem(G, ns, T, C::SLOTS, C::VEC, k.D, C::SPS, 0) !=
            (int64_t)bk_smem_bytes(G, ns, T, C::SLOTS, C::VEC, k.D, C::SPS))
            return LNMOD_ERR_UNSUPPORTED;
        sm[ns] = (size_t)bv3_bulk_smem(G, ns, T, C::SLOTS, C::VEC, k.D, C::SPS, HALF);
    }
    lnmod_status st = LNMOD_OK;
    if (sm[4] <= (size_t)optin) st = bk_occupancy(bv3_kernel<TX, TM, TY, 4, G>, G * T, sm[4], &occ[4]);
    if constexpr (!K2) {
        if (st == LNMOD_OK && sm[3] <= (size_t)optin)
            st = bk_occupancy(bv3_kernel<TX, TM, TY, 3, G>, G * T, sm[3], &occ[3]);
        if (st == LNMOD_OK && sm[2] <= (size_t)optin)
            st = bk_occupancy(bv3_kernel<TX, TM, TY, 2, G>, G * T, sm[2], &occ[2]);
    }
    if (st != LNMOD_OK) return st;
    for (int ns = 4; ns >= lo; ns--)
        if (occ[ns] > occ[best]) best = ns;
    if (best == 0) return LNMOD_OK;
    *ran = true;
    if constexpr (K2) {
        return bv3_go<TX, TM, TY, 4, G>(k, T, sm[4], occ[4], stream, info);
    } else {
        switch (best) {
        case 4: return bv3_go<TX, TM, TY, 4, G>(k, T, sm[4], occ[4], stream, info);
        case 3: return bv3_go<TX, TM, TY, 3, G>(k, T, sm[3], occ[3], stream, info);
        default: return bv3_go<TX, TM, TY, 2, G>(k, T, sm[2], occ[2], stream, info);
        }
    }
}

// The dtype triples round 3 compiles (others run the built dtile).
template <typename TX, typename TM, typename TY> constexpr bool bv3_triple()
{
    using B = __nv_bfloat16;
    return (std::is_same_v<TX, B> && std::is_same_v<TM, float> && std::is_same_v<TY, B>) ||
           (std::is_same_v<TX, B> && std::is_same_v<TM, B> && std::is_same_v<TY, float>) ||
           (std::is_same_v<TX, __half> && std::is_same_v<TM, __half> && std::is_same_v<TY, __half>) ||
           (std::is_same_v<TX, float> && std::is_same_v<TM, float> && std::is_same_v<TY, float>);
}

template <typename TX, typename TM, typename TY>
lnmod_status bv3_typed(const bk_kp &k, int T, int G, cudaStream_t stream, bool *ran, bv3_info *info)
{
    if constexpr (!bv3_triple<TX, TM, TY>()) {
        return LNMOD_OK;
    } else {
        if (!lnmod_bwd_vector_ok<TX, TM, TY>(k.p)) return LNMOD_OK;
        return G == 4 ? bv3_stages<TX, TM, TY, 4>(k, T, stream, ran, info)
                      : bv3_stages<TX, TM, TY, 2>(k, T, stream, ran, info);
    }
}

#endif // !BV3_EMU
} // namespace bv3_bulk_detail

#ifndef BV3_EMU
using namespace bv3_bulk_detail;

// The production's lnmod_bwd_bulk_launch with this build's kernel.
lnmod_status BV3_ENTRY(const lnmod_desc *d, const void *x, const void *scale, const void *dy, const float *mean,
                       const float *rstd, void *dx, void *dscale, void *dshift, void *workspace,
                       cudaStream_t stream, bv3_info *info, int *ran)
{
    *ran = 0;
    int T = 0, G = 0, dev = 0, major = 0;
    if (!lnmod_bwd_bulk_takes(d, &T, &G)) return LNMOD_OK;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (major < 9) return LNMOD_OK;
    bk_kp k;
    k.p = lnmod_make_bparams(d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace);
    k.pl = lnmod_bulk_make_plan(d->rows, d->rows_per_sample, d->frame_len, (int)d->layout);
    k.p.cpg = k.pl.cpg;
    k.p.nchunks = k.pl.nchunks;
    k.p.ws = k.pl.cpg > 1 ? static_cast<float *>(workspace) : nullptr;
    k.D = (int32_t)d->D;
    k.nv = (int32_t)(d->D / (16 / (int64_t)lnmod_dtype_size(d->x_dtype)));
    if (info) {
        info->threads = T;
        info->groups = G;
        info->cpg = k.pl.cpg;
    }
    bool went = false;
    const lnmod_status st = lnmod_dispatch_dtypes(d, [&](auto tx, auto tm, auto ty) {
        return bv3_typed<typename decltype(tx)::type, typename decltype(tm)::type, typename decltype(ty)::type>(
            k, T, G, stream, &went, info);
    });
    *ran = went ? 1 : 0;
    return st;
}
#endif // !BV3_EMU
