// lnmod_chunk_ring.cuh -- what the flat chunk kernels share: dtile forward's
// (lnmod_fwd_v2_chunk.cuh, lnmod) and the fused residual op's (lnmod_res_fwd_chunk.cuh). A chunk
// is R consecutive rows, brought into a shared-memory stage of a ring by bulk copies
// (cp.async.bulk, counted on the stage's mbarrier) and stored back from it by bulk copies; the
// rows' sums are reduced over the CTA by a reduce-scatter in each warp, one barrier, and a
// gather every warp does alike. Here: the bulk-copy and mbarrier instructions (with the CPU
// emulation's hooks, FV2_EMU: kernels/experiments/2026-12-02-fwd-v2/fv2_emu.h, which the caller
// includes first), the reduce-scatter, the gather, and the pivot of a lane's row. The kernels'
// headers say how a chunk is ordered.
#ifndef ADALOAD_LNMOD_CHUNK_RING_CUH
#define ADALOAD_LNMOD_CHUNK_RING_CUH

#include <stdint.h>

#include "lnmod_common.cuh"
#ifndef FV2_EMU
#include "lnmod_bulk_ptx.cuh"
#endif

namespace lnmod_chunk {

// ---- bulk copies and mbarriers (sm_90 PTX; below sm_90 they trap: the rules never pick a
// chunk kernel on a device without bulk copies) ----------------------------------------------
#ifdef FV2_EMU
__device__ __forceinline__ void ck_expect_tx(uint64_t *bar, unsigned n) { emu::expect_tx(bar, n); }
__device__ __forceinline__ void ck_bulk_load(void *dst, const void *src, unsigned n, uint64_t *bar)
{
    emu::bulk_load(dst, src, n, bar);
}
__device__ __forceinline__ void ck_bulk_store(void *dst, const void *src, unsigned n) { emu::bulk_store(dst, src, n); }
__device__ __forceinline__ void ck_bulk_commit() { emu::bulk_commit(); }
__device__ __forceinline__ void ck_bulk_wait_read0() { emu::bulk_wait(0); }
__device__ __forceinline__ void ck_bulk_wait0() { emu::bulk_wait(0); }
__device__ __forceinline__ void ck_fence_async() {}
__device__ __forceinline__ void ck_mbar_init(uint64_t *bar, unsigned count) { emu::mbar_init(bar, count); }
__device__ __forceinline__ void ck_mbar_wait(uint64_t *bar, unsigned parity) { emu::mbar_wait(bar, parity); }
__device__ __forceinline__ int64_t ck_ticket(unsigned long long *c) { return emu::ticket(c); }
__device__ __forceinline__ void ck_ticket_end(unsigned long long *c) { emu::ticket_end(c, gridDim.x); }
#elif !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned ck_sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
// One arrival on bar (count 1: the issuing thread's) expecting n more bytes.
__device__ __forceinline__ void ck_expect_tx(uint64_t *bar, unsigned n)
{
    asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n\t}" ::"r"(ck_sa(bar)),
                 "r"(n)
                 : "memory");
}
__device__ __forceinline__ void ck_bulk_load(void *dst, const void *src, unsigned n, uint64_t *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(ck_sa(dst)),
                 "l"(src), "r"(n), "r"(ck_sa(bar))
                 : "memory");
}
__device__ __forceinline__ void ck_bulk_store(void *dst, const void *src, unsigned n)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(ck_sa(src)), "r"(n) : "memory");
}
__device__ __forceinline__ void ck_bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
__device__ __forceinline__ void ck_bulk_wait_read0() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
__device__ __forceinline__ void ck_bulk_wait0() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void ck_fence_async() { lnmod_bulk_ptx::bk_fence_proxy_async(); }
__device__ __forceinline__ void ck_mbar_init(uint64_t *bar, unsigned count) { lnmod_bulk_ptx::bk_mbar_init(bar, count); }
__device__ __forceinline__ void ck_mbar_wait(uint64_t *bar, unsigned parity) { lnmod_bulk_ptx::bk_mbar_wait(bar, parity); }
// The next ticket of a launch's counter (it ends at the chunks plus one claim a CTA: 64 bits).
__device__ __forceinline__ int64_t ck_ticket(unsigned long long *c) { return (int64_t)atomicAdd(c, 1ull); }
// Thread 0 of a CTA whose claims are over: its count on c[1], after a fence that orders its claims
// before it; the CTA that completes the grid's count zeroes c[0] and c[1] for the next launch on
// them (every claim of the launch came before its CTA's count, so none is lost or sees a reset).
__device__ __forceinline__ void ck_ticket_end(unsigned long long *c)
{
    __threadfence();
    if (atomicAdd(c + 1, 1ull) == (unsigned long long)gridDim.x - 1) {
        __threadfence();
        atomicExch(c, 0ull);
        atomicExch(c + 1, 0ull);
    }
}
#else
__device__ __forceinline__ void ck_expect_tx(uint64_t *, unsigned) { __trap(); }
__device__ __forceinline__ void ck_bulk_load(void *, const void *, unsigned, uint64_t *) { __trap(); }
__device__ __forceinline__ void ck_bulk_store(void *, const void *, unsigned) { __trap(); }
__device__ __forceinline__ void ck_bulk_commit() { __trap(); }
__device__ __forceinline__ void ck_bulk_wait_read0() { __trap(); }
__device__ __forceinline__ void ck_bulk_wait0() { __trap(); }
__device__ __forceinline__ void ck_fence_async() { __trap(); }
__device__ __forceinline__ void ck_mbar_init(uint64_t *, unsigned) { __trap(); }
__device__ __forceinline__ void ck_mbar_wait(uint64_t *, unsigned) { __trap(); }
__device__ __forceinline__ int64_t ck_ticket(unsigned long long *)
{
    __trap();
    return 0;
}
__device__ __forceinline__ void ck_ticket_end(unsigned long long *) { __trap(); }
#endif

// One 16-bit element of a stage as fp32, and back (round to nearest even).
template <typename T> __device__ __forceinline__ float ck_ld(const unsigned char *a)
{
    return lnmod_detail::dt<T>::to_f(*reinterpret_cast<const T *>(a));
}
template <typename T> __device__ __forceinline__ void ck_st(unsigned char *a, float v)
{
    *reinterpret_cast<T *>(a) = lnmod_detail::dt<T>::from_f(v);
}

// ---- the CTA's row sums ---------------------------------------------------------------------
// One halving step of the warp's reduce-scatter over L of RP values: lanes with bit O set keep
// the upper half and send the lower (and the partner the other way), so each half is summed
// over the pair; log2(RP) steps leave each lane one value, of row lane / (32 / RP).
template <int RP, int L> __device__ __forceinline__ void ck_halve(float (&v)[RP], int lane)
{
    if constexpr (L > 1) {
        constexpr int H = L / 2, O = 16 * L / RP;
        const bool up = (lane & O) != 0;
#pragma unroll
        for (int j = 0; j < H; j++) {
            const float send = up ? v[j] : v[j + H], keep = up ? v[j + H] : v[j];
            v[j] = keep + __shfl_xor_sync(0xffffffffu, send, O);
        }
        ck_halve<RP, H>(v, lane);
    }
}
// The warp's total of row lane / (32 / RP) (v: this lane's sums of RP rows, consumed).
template <int RP> __device__ __forceinline__ float ck_warp_scatter(float (&v)[RP], int lane)
{
    ck_halve<RP, RP>(v, lane);
    float s = v[0];
#pragma unroll
    for (int o = 16 / RP; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    return s;
}
// The warps' totals P[w RP + row] (after the barrier) summed: the CTA's total of row lane % RP.
template <int RP, int NW> __device__ __forceinline__ float ck_gather(const float *P, int lane)
{
    constexpr int E = RP * NW;
    float a = 0.0f;
#pragma unroll
    for (int e = 0; e < (E + 31) / 32; e++)
        if (E >= 32 * (e + 1) || lane + 32 * e < E) a += P[lane + 32 * e];
#pragma unroll
    for (int o = RP; o < 32; o <<= 1) a += __shfl_xor_sync(0xffffffffu, a, o);
    return a;
}
// Writes the warp's scattered total w of its row (one lane a row) into P, padded rows included.
template <int RP> __device__ __forceinline__ void ck_put(float *P, float w, int lane, int warp)
{
    if ((lane & (32 / RP - 1)) == 0) P[warp * RP + lane / (32 / RP)] = w;
}

// Row l's pivot (its first element) for lane l < R, from the pivots every thread holds: the
// mean's base, taken from registers and not from the stage, where thread 0 -- in warp 0, whose
// lanes write the means -- writes that element's y in place after the barrier (racecheck
// reported the stage read as an intra-warp hazard: the first sanitizer run over this kernel,
// 2026-12-05g).
template <int R> __device__ __forceinline__ float ck_pivot_of(const float (&piv)[R], int lane)
{
    float v = piv[0];
#pragma unroll
    for (int i = 1; i < R; i++) v = lane == i ? piv[i] : v;
    return v;
}

} // namespace lnmod_chunk

#endif
