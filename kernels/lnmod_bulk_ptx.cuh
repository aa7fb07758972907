// lnmod_bulk_ptx.cuh -- the sm_90 PTX helpers of a bulk-copy ring (an mbarrier ring filled by
// cp.async.bulk), shared by dtile backward's bulk ring (lnmod_bwd_bulk_ring.cuh) and the fused
// residual op's (lnmod_res_bwd_bulk.cu).
// Only kernels compiled for compute capability 9.0 or later call them (below it the kernels'
// bodies are traps and the host never launches them). A named namespace: helpers unreferenced
// below sm_90 draw no unused-function warnings.
#ifndef ADALOAD_LNMOD_BULK_PTX_CUH
#define ADALOAD_LNMOD_BULK_PTX_CUH

#include <cstdint>

namespace lnmod_bulk_ptx {

__device__ __forceinline__ unsigned bk_sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void bk_mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bk_sa(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void bk_fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Waits until the phase of parity `parity` of the mbarrier has completed.
__device__ __forceinline__ void bk_mbar_wait(uint64_t *bar, uint32_t parity)
{
    const unsigned a = bk_sa(bar);
    uint32_t done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(a), "r"(parity)
                     : "memory");
    } while (!done);
}

// Named barrier gq + 1 over the T threads of warp group gq (barrier 0 is __syncthreads').
__device__ __forceinline__ void bk_group_sync(int gq, int T)
{
    asm volatile("bar.sync %0, %1;" ::"r"(gq + 1), "r"(T) : "memory");
}

} // namespace lnmod_bulk_ptx

#endif
