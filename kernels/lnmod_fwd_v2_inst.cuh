// lnmod_fwd_v2_inst.cuh -- the forward v2 kernels of ONE x dtype and their launch: included by
// lnmod_fwd_v2_bf16.cu (FV2_XT 2), _f16.cu (1) and _f32.cu (0), so the three compile in
// parallel. Every modulation/y dtype of that x, the tile kernel at VPT 1..8 with the modulation
// in registers or streamed, the odd kernel, and for 16-bit x the flat chunk kernel at every
// shape of FV2_CHUNK_SHAPES (y of x's dtype, modulation fp32 or x's); the ring depth from the
// chosen kernel's real registers, the grid from the occupancy API
// (cudaOccupancyMaxActiveClusters for clusters).
#include "lnmod_fwd_v2.h"
#include "lnmod_fwd_v2_kern.cuh"

#include <type_traits>

#ifndef FV2_XT
#error "define FV2_XT: 0 (fp32 x), 1 (fp16 x) or 2 (bf16 x)"
#endif

// LNMOD_SLOW_VARIANT=1 (the regression detector's test build): the work twice, as version 1.
#if defined(LNMOD_SLOW_VARIANT) && LNMOD_SLOW_VARIANT
#define FV2_REPEAT 2
#else
#define FV2_REPEAT 1
#endif

namespace fv2 {
namespace {

using namespace lnmod_detail;

struct go_args {
    fv2_plan *p;
    const fv2_dev *dev;
    const lnmod_kparams &kp;
    void *ws; // the forward workspace: the chunk ring's ticket counter (zero on entry, left zero)
    cudaStream_t st;
};

// Ring depth from the kernel's real registers and the shared-memory limit, then the grid:
// resident CTAs (or clusters) x SMs, at most what the rows need.
template <typename K> lnmod_status launch(K kern, const go_args &a)
{
    fv2_plan *p = a.p;
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, kern) != cudaSuccess) return LNMOD_ERR_CUDA;
    fv2_dev dev = *a.dev; // the opt-in limit counts the kernel's static shared memory too
    dev.smem_block -= (int)fa.sharedSizeBytes;
    if (fv2_finish(p, &dev, fa.numRegs) != 0) return LNMOD_ERR_UNSUPPORTED;
    // The kernel's dynamic shared-memory limit: the device's whole opt-in, not this plan's
    // size, so that a launch on another host thread with a larger plan of the same kernel
    // cannot lower it between this call and this launch.
    if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, dev.smem_block) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    const bool clustered = p->cls == FV2_TILE && p->warps * p->cluster > 1;
    cudaLaunchAttribute at;
    at.id = cudaLaunchAttributeClusterDimension;
    at.val.clusterDim.x = (unsigned)p->cluster;
    at.val.clusterDim.y = at.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3((unsigned)p->threads);
    cfg.dynamicSmemBytes = (size_t)p->smem_bytes;
    cfg.stream = a.st;
    cfg.attrs = clustered ? &at : nullptr;
    cfg.numAttrs = clustered ? 1 : 0;
    int64_t grid;
    if (clustered) {
        cfg.gridDim = dim3((unsigned)p->cluster);
        int nc = 0;
        if (cudaOccupancyMaxActiveClusters(&nc, kern, &cfg) != cudaSuccess) return LNMOD_ERR_CUDA;
        if (nc < 1) return LNMOD_ERR_UNSUPPORTED;
        grid = (nc < a.kp.rows ? nc : a.kp.rows) * p->cluster;
    } else {
        int per_sm = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, (int)cfg.blockDim.x, cfg.dynamicSmemBytes) !=
            cudaSuccess)
            return LNMOD_ERR_CUDA;
        if (per_sm < 1) return LNMOD_ERR_UNSUPPORTED;
        const int64_t need = (a.kp.rows + p->groups - 1) / p->groups;
        grid = (int64_t)per_sm * a.dev->sms;
        if (grid > need) grid = need;
    }
    cfg.gridDim = dim3((unsigned)grid);
    kcfg k;
    k.nv = p->nv;
    k.nvc = p->nvc;
    k.W = p->warps;
    k.C = p->cluster;
    k.G = p->groups;
    k.NS = p->nstage;
    k.vpt = p->vpt;
    k.NB = p->nbar;
    for (int i = 0; i < FV2_REPEAT; i++) {
        if (cudaLaunchKernelEx(&cfg, kern, a.kp, k) != cudaSuccess) return LNMOD_ERR_CUDA;
        const lnmod_status st = lnmod_launch_status();
        if (st != LNMOD_OK) return st;
    }
    return LNMOD_OK;
}

// The grouped chunk kernel (fv2_chunk_group > 1: a ticket names 2^lg consecutive chunks) on the
// plan launch_chunk made for the ungrouped one. Where the grouped kernel would fit fewer CTAs a
// SM than that plan's grid assumed (its registers or static shared memory), the ungrouped kernel
// runs instead (group 1): the grid stays the one the rule judged.
template <typename TX, typename TM, typename TY, int T, int K>
lnmod_status launch_grouped(const go_args &a, const chunk_args &c, unsigned long long *ticket, int64_t grid, int per_sm)
{
    fv2_plan *p = a.p;
    auto kern = chunk_kernel<TX, TM, TY, T, K, FV2_CHUNK_R(K), int>;
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, kern) != cudaSuccess ||
        cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                             (int)cudaSharedmemCarveoutMaxShared) != cudaSuccess ||
        cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             a.dev->smem_block - (int)fa.sharedSizeBytes) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    int per_sm_g = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_g, kern, T, (size_t)p->smem_bytes) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    int lg = 0;
    while ((2 << lg) <= p->group) lg++;
    if (per_sm_g < per_sm) lg = 0, p->group = 1;
    for (int i = 0; i < FV2_REPEAT; i++) {
        if (lg > 0)
            kern<<<(unsigned)grid, T, (size_t)p->smem_bytes, a.st>>>(a.kp, c, ticket, lg);
        else
            chunk_kernel<TX, TM, TY, T, K, FV2_CHUNK_R(K)><<<(unsigned)grid, T, (size_t)p->smem_bytes, a.st>>>(a.kp, c, ticket);
        const lnmod_status st = lnmod_launch_status();
        if (st != LNMOD_OK) return st;
    }
    return LNMOD_OK;
}

// The flat chunk kernel at shape (T, K): its ring depth from the kernel's real registers and
// static shared memory (fv2_chunk_finish), all of the unified L1 / shared memory as shared
// memory where that fits more CTAs (the carveout the experiment measured), the grid from the
// occupancy API (resident CTAs x SMs, at most the chunks).
template <typename TX, typename TM, typename TY, int T, int K> lnmod_status launch_chunk(const go_args &a)
{
    fv2_plan *p = a.p;
    auto kern = chunk_kernel<TX, TM, TY, T, K, FV2_CHUNK_R(K)>;
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, kern) != cudaSuccess) return LNMOD_ERR_CUDA;
    if (fv2_chunk_finish(p, a.dev, fa.numRegs, (int)fa.sharedSizeBytes, 0) != 0) return LNMOD_ERR_UNSUPPORTED;
    // The device's whole opt-in as the limit (see launch): another host thread's larger plan of
    // the same kernel cannot lower it between this call and this launch.
    if (cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                             (int)cudaSharedmemCarveoutMaxShared) != cudaSuccess ||
        cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             a.dev->smem_block - (int)fa.sharedSizeBytes) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, T, (size_t)p->smem_bytes) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (per_sm < 1) return LNMOD_ERR_UNSUPPORTED;
    p->ctas_sm = per_sm;
    int64_t grid = (int64_t)per_sm * a.dev->sms;
    if (grid > p->nchunks) grid = p->nchunks;
    if (p->ticket && !a.ws) return LNMOD_ERR_UNSUPPORTED; // no ticket counter: the other classes
    // The ticket order where the plan takes it (FV2_CHUNK_TICKET_MIN_T), else the static walk (no counter).
    const chunk_args c = {p->nstage, (int)p->slot_bytes, (int)p->nchunks};
    unsigned long long *ticket = p->ticket ? static_cast<unsigned long long *>(a.ws) : nullptr;
    p->group = fv2_chunk_group(p, grid);
    if constexpr (T >= FV2_CHUNK_TICKET_MIN_T && std::is_same<TM, float>::value) {
        if (p->group > 1) return launch_grouped<TX, TM, TY, T, K>(a, c, ticket, grid, per_sm);
    }
    p->group = 1; // (fv2_chunk_group gives more only where the grouped kernel exists)
    for (int i = 0; i < FV2_REPEAT; i++) {
        kern<<<(unsigned)grid, T, (size_t)p->smem_bytes, a.st>>>(a.kp, c, ticket);
        const lnmod_status st = lnmod_launch_status();
        if (st != LNMOD_OK) return st;
    }
    return LNMOD_OK;
}

// A chunk plan's shape (T, K) among the instantiated ones (16-bit x, y of x's dtype).
template <typename TX, typename TM, typename TY> lnmod_status chunk_shape(const go_args &a)
{
    if constexpr (sizeof(TX) == 2 && std::is_same<TX, TY>::value) {
#define FV2_CHUNK_CASE(T_, K_) \
    if (a.p->threads == T_ && a.p->vpt == K_) return launch_chunk<TX, TM, TY, T_, K_>(a);
        FV2_CHUNK_SHAPES(FV2_CHUNK_CASE)
#undef FV2_CHUNK_CASE
    }
    (void)a;
    return LNMOD_ERR_UNSUPPORTED;
}

template <typename TX, typename TM, typename TY, bool R> lnmod_status tile_vpt(const go_args &a)
{
    switch (a.p->vpt) {
    case 1: return launch(tile_kernel<TX, TM, TY, 1, R>, a);
    case 2: return launch(tile_kernel<TX, TM, TY, 2, R>, a);
    case 3: return launch(tile_kernel<TX, TM, TY, 3, R>, a);
    case 4: return launch(tile_kernel<TX, TM, TY, 4, R>, a);
    case 5: return launch(tile_kernel<TX, TM, TY, 5, R>, a);
    case 6: return launch(tile_kernel<TX, TM, TY, 6, R>, a);
    case 7: return launch(tile_kernel<TX, TM, TY, 7, R>, a);
    case 8: return launch(tile_kernel<TX, TM, TY, 8, R>, a);
    default: return LNMOD_ERR_UNSUPPORTED;
    }
}

template <typename TX, typename TM, typename TY> lnmod_status go(const go_args &a)
{
    if (a.p->cls == FV2_TILE)
        return a.p->mode == FV2_MOD_RING ? tile_vpt<TX, TM, TY, true>(a) : tile_vpt<TX, TM, TY, false>(a);
    if (a.p->cls == FV2_CHUNK) return chunk_shape<TX, TM, TY>(a);
    return launch(odd_kernel<TX, TM, TY>, a);
}

#if FV2_XT == 0
using XT = float;
#elif FV2_XT == 1
using XT = __half;
#else
using XT = __nv_bfloat16;
#endif

lnmod_status go_x(const lnmod_desc *d, const go_args &a)
{
#if FV2_XT == 0
    (void)d;
    return go<float, float, float>(a);
#else
    const bool mf = d->mod_dtype == LNMOD_F32, yf = d->y_dtype == LNMOD_F32;
    if (mf && yf) return go<XT, float, float>(a);
    if (mf) return go<XT, float, XT>(a);
    if (yf) return go<XT, XT, float>(a);
    return go<XT, XT, XT>(a);
#endif
}

} // namespace

#if FV2_XT == 0
#define FV2_ENTRY launch_x_f32
#elif FV2_XT == 1
#define FV2_ENTRY launch_x_f16
#else
#define FV2_ENTRY launch_x_bf16
#endif

lnmod_status FV2_ENTRY(const lnmod_desc *d, fv2_plan *p, const fv2_dev *dev, const lnmod_kparams &kp, void *ws,
                       cudaStream_t st)
{
    const go_args a = {p, dev, kp, ws, st};
    return go_x(d, a);
}

} // namespace fv2
