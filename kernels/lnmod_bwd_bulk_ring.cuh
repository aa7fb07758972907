// lnmod_bwd_bulk_ring.cuh -- the ring of dtile backward's bulk kernels, shared by
// lnmod_bwd_bulk.cu (per sample / frame) and lnmod_bwd_bulk_tok.cu (per token): the
// configuration of a thread's two 16-byte vectors, the issuing thread's walk over chunk
// shares, the mbarrier / bulk-copy / proxy-fence PTX (sm_90; the kernels are traps below
// sm_90 and the host never launches them there), the read of a thread's vectors from a stage,
// the group's named barrier, and the host's occupancy query. lnmod_bwd_bulk.cu's header
// comment describes the ring.
#ifndef ADALOAD_LNMOD_BWD_BULK_RING_CUH
#define ADALOAD_LNMOD_BWD_BULK_RING_CUH

#include "lnmod_bwd_bulk_plan.h"
#include "lnmod_bulk_ptx.cuh"
#include "lnmod_bwd_common.cuh"

// A named namespace (not an anonymous one): below sm_90 the kernel bodies are traps and these
// device helpers go unreferenced, which an anonymous namespace would turn into warnings.
namespace lnmod_bulk_detail {

using namespace lnmod_detail;
using namespace lnmod_bulk_ptx; // bk_sa, bk_mbar_init, bk_fence_proxy_async, bk_mbar_wait, bk_group_sync

constexpr int BK_VPT = 2;      // 16-byte vectors a thread
constexpr int BK_MAX_NW = 12;  // warps a group at most (T <= 384)
constexpr int BK_MAXT = 768;   // threads a CTA at most (__launch_bounds__: 80 registers)

template <typename TX, typename TY> struct bk_cfg {
    static constexpr int VEC = dt<TX>::VEC;
    static constexpr int DYW = VEC * (int)sizeof(TY) / 16; // 16-byte pieces of a dy vector
    static constexpr int SLOTS = BK_VPT * (1 + DYW);       // 16-byte slots a thread and stage
    static constexpr bool SPS = BK_VPT * VEC >= 16;        // (1 + scale) in shared memory
};

struct bk_kp {
    lnmod_bparams p;
    lnmod_bulk_plan pl;
    int32_t D, nv;
};

// The issuing thread's walk over its group's rows: chunks blockIdx.x, + gridDim.x, ...
// whose share for this group is not empty, each share in row order.
struct bk_cur {
    int32_t c, r, step, left;
    bool ok;
};

__device__ __forceinline__ void bk_seek(const lnmod_bulk_plan &pl, bk_cur &q, int gq, int G)
{
    for (; q.c < pl.nchunks; q.c += (int32_t)gridDim.x) {
        int64_t g, r0, n;
        lnmod_bulk_chunk_rows(&pl, q.c, &g, &r0, &n);
        int32_t cnt;
        lnmod_bulk_share(&pl, r0, n, gq, G, &q.r, &q.step, &cnt);
        if (cnt > 0) {
            q.left = cnt;
            q.ok = true;
            return;
        }
    }
    q.ok = false;
}

__device__ __forceinline__ void bk_next(const lnmod_bulk_plan &pl, bk_cur &q, int gq, int G)
{
    if (--q.left > 0) {
        q.r += q.step;
    } else {
        q.c += (int32_t)gridDim.x;
        bk_seek(pl, q, gq, G);
    }
}

// ---- the bulk ring (sm_90 PTX from lnmod_bulk_ptx.cuh; the kernel is a trap below sm_90, the host
// never launches it there) ----------------------------------------------------------------
// Row r into stage s of a group's ring (ring: the group's first stage; stats: its NS
// float2; bar: its NS mbarriers). Issued by the group's thread 0 only.
template <typename TX, typename TY>
__device__ __forceinline__ void bk_issue(const bk_kp &k, uint4 *ring, float2 *stats, uint64_t *bar, int s,
                                         int32_t r, int T)
{
    using C = bk_cfg<TX, TY>;
    uint4 *st = ring + s * C::SLOTS * T;
    const unsigned xb = (unsigned)k.nv * 16u, yb = xb * (unsigned)C::DYW, mb = bk_sa(bar + s);
    const TX *xr = static_cast<const TX *>(k.p.x) + (int64_t)r * k.D;
    const TY *yr = static_cast<const TY *>(k.p.dy) + (int64_t)r * k.D;
    asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n\t}" ::"r"(mb),
                 "r"(xb + yb)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     bk_sa(st)),
                 "l"(xr), "r"(xb), "r"(mb)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     bk_sa(st + BK_VPT * T)),
                 "l"(yr), "r"(yb), "r"(mb)
                 : "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(bk_sa(&stats[s].x)), "l"(k.p.mean + r) : "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(bk_sa(&stats[s].y)), "l"(k.p.rstd + r) : "memory");
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(mb) : "memory");
}

// Vector q of this thread from a stage (base = stage + tid): x's row in vector order, dy's
// row in its own byte order (piece w of vector v at slot VPT*T + v*DYW + w).
template <typename TX, typename TY>
__device__ __forceinline__ void bk_read(const uint4 *base, int q, int T, int tid, float *xf, float *gf)
{
    using C = bk_cfg<TX, TY>;
    dt<TX>::unpack(lnmod_lds16(base + q * T), xf);
#pragma unroll
    for (int w = 0; w < C::DYW; w++)
        dt<TY>::unpack(lnmod_lds16(base + BK_VPT * T + q * T * C::DYW + tid * (C::DYW - 1) + w),
                       gf + w * (16 / (int)sizeof(TY)));
}

// The kernel's CTAs per SM with `smem` bytes of dynamic shared memory (0: it does not fit);
// sets the kernel's attributes only when it fits, so that no failed call leaves an error.
template <typename K> static lnmod_status bk_occupancy(K kern, int threads, size_t smem, int *per_sm)
{
    *per_sm = 0;
    cudaFuncAttributes fa;
    int dev = 0, optin = 0;
    if (cudaFuncGetAttributes(&fa, kern) != cudaSuccess || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (smem + fa.sharedSizeBytes > (size_t)optin || threads > fa.maxThreadsPerBlock) return LNMOD_OK;
    // All of the unified L1/shared memory as shared memory where it lets a second CTA fit.
    if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess ||
        cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                             (int)cudaSharedmemCarveoutMaxShared) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kern, threads, smem) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    return LNMOD_OK;
}

} // namespace lnmod_bulk_detail

#endif
