// fv2_odd3_inst.cu -- the flat chunk kernel of the built kernels (kernels/lnmod_fwd_v2_chunk.cuh,
// round 5's kernel, dtile's chunk class since its landing) for ONE 16-bit x dtype (compiled once
// per FV2_XT: 2 bf16, 1 fp16), at every shape of FV2_CHUNK_SHAPES and both modulation dtypes
// (fp32, x's), y = x's dtype; and its launch with the harness's caches: ring depth from the
// kernel's real registers (fv2_chunk_finish), the grid from the occupancy API (resident CTAs x
// SMs, at most the chunks). The harness's rule (v2) where it picks the chunk class (fv2.cu).
#include "fv2_int.h"
#include "lnmod_fwd_v2_kern.cuh"

#if !defined(FV2_XT) || (FV2_XT != 1 && FV2_XT != 2)
#error "compile with -DFV2_XT=1 (fp16 x) or 2 (bf16 x)"
#endif

namespace fv2 {
namespace {

using namespace lnmod_detail;

// A kernel's attributes, its shared-memory limit and its occupancy at the last size, queried
// once (per process: the harness uses one device), so a timed launch makes no query.
struct ck_fn {
    bool have = false;
    cudaFuncAttributes fa;
    int64_t smem_set = -1, occ_smem = -1;
    int per_sm = 0;
    unsigned long long *ticket = nullptr; // T >= FV2_CHUNK_TICKET_MIN_T: the ticket counter (never freed: the harness's life)
};

template <typename TX, typename TM, typename TY, int T, int K>
lnmod_status ck_one(fv2_plan *pl, const fv2_dev *dev, int ns_cap, const lnmod_kparams &kp, cudaStream_t st,
                    fv2_info *info)
{
    static ck_fn f;
    auto kern = chunk_kernel<TX, TM, TY, T, K, FV2_CHUNK_R(K)>;
    if (!f.have) {
        if (cudaFuncGetAttributes(&f.fa, kern) != cudaSuccess) return LNMOD_ERR_CUDA;
        // all of the unified L1 / shared memory as shared memory, where that fits more CTAs
        if (cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 (int)cudaSharedmemCarveoutMaxShared) != cudaSuccess)
            return LNMOD_ERR_CUDA;
        f.have = true;
    }
    if (fv2_chunk_finish(pl, dev, f.fa.numRegs, (int)f.fa.sharedSizeBytes, ns_cap) != 0) return LNMOD_ERR_UNSUPPORTED;
    if (f.smem_set < pl->smem_bytes) {
        if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)pl->smem_bytes) != cudaSuccess)
            return LNMOD_ERR_CUDA;
        f.smem_set = pl->smem_bytes;
    }
    if (f.occ_smem != pl->smem_bytes) {
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&f.per_sm, kern, T, (size_t)pl->smem_bytes) != cudaSuccess)
            return LNMOD_ERR_CUDA;
        f.occ_smem = pl->smem_bytes;
    }
    if (f.per_sm < 1) return LNMOD_ERR_UNSUPPORTED;
    if (T >= FV2_CHUNK_TICKET_MIN_T && !f.ticket) { // the ticket order's counter (zero, left zero)
        if (cudaMalloc(&f.ticket, 16) != cudaSuccess || cudaMemset(f.ticket, 0, 16) != cudaSuccess)
            return LNMOD_ERR_CUDA;
    }
    int64_t grid = (int64_t)f.per_sm * dev->sms;
    if (grid > pl->nchunks) grid = pl->nchunks;
    info->regs = f.fa.numRegs;
    info->local_bytes = (int)f.fa.localSizeBytes;
    info->grid = (int)grid;
    pl->ctas_sm = f.per_sm; // what the occupancy API says (fv2_chunk_finish estimated it)
    const chunk_args c = {pl->nstage, (int)pl->slot_bytes, (int)pl->nchunks};
    kern<<<(unsigned)grid, T, (size_t)pl->smem_bytes, st>>>(kp, c, f.ticket);
    return lnmod_launch_status();
}

template <typename TX, typename TM, typename TY>
lnmod_status ck_shape(fv2_plan *pl, const fv2_dev *dev, int ns_cap, const lnmod_kparams &kp, cudaStream_t st,
                      fv2_info *info)
{
#define FV2_CK_CASE(T_, K_)                           \
    if (pl->threads == T_ && pl->vpt == K_) \
        return ck_one<TX, TM, TY, T_, K_>(pl, dev, ns_cap, kp, st, info);
    FV2_CHUNK_SHAPES(FV2_CK_CASE)
#undef FV2_CK_CASE
    return LNMOD_ERR_UNSUPPORTED;
}

#if FV2_XT == 1
using XT = __half;
#else
using XT = __nv_bfloat16;
#endif

} // namespace

#if FV2_XT == 1
#define FV2_CK_ENTRY launch_chunk_f16
#else
#define FV2_CK_ENTRY launch_chunk_bf16
#endif

lnmod_status FV2_CK_ENTRY(const lnmod_desc *d, fv2_plan *pl, const fv2_dev *dev, int ns_cap, const lnmod_kparams &kp,
                          cudaStream_t st, fv2_info *info)
{
    if (pl->cls != FV2_CHUNK || d->y_dtype != d->x_dtype) return LNMOD_ERR_UNSUPPORTED;
    if (d->mod_dtype == LNMOD_F32) return ck_shape<XT, float, XT>(pl, dev, ns_cap, kp, st, info);
    return ck_shape<XT, XT, XT>(pl, dev, ns_cap, kp, st, info);
}

} // namespace fv2
