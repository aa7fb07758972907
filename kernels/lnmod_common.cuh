// lnmod_common.cuh -- device helpers shared by the LayerNorm-Modulate forward variants.
//
// Private to kernels/*.cu (C++/CUDA only, never included from C). It holds:
//   * lnmod_kparams: the launch parameters every kernel receives (pointers + the descriptor's
//     sizes, already checked by lnmod_forward), lnmod_mod_row(): the modulation row m(r),
//     and lnmod_mod_run(): m(r) with the end of its run of rows (host-callable too);
//   * dtype traits: scalar load/store of f32/f16/bf16 as fp32 with round-to-nearest-even
//     stores, and 16-byte vector unpack/pack (8 bf16/fp16 or 4 fp32 per uint4);
//   * memory instructions: cp.async 16-byte copies into shared memory (dtile's row ring),
//     read-only cached loads, 16-byte stores for y, re-reads of a thread's ring slot;
//   * warp butterfly sums, and the corrected two-pass statistics with Chan's merge;
//   * the three passes over a row re-read from memory (lnmod_pass_sum/_dev/_out) and the
//     end of such a row (lnmod_row_out: mean/rstd, then pass 3);
//   * lnmod_dispatch_dtypes(): maps the runtime dtype triple to template types;
//   * lnmod_chunk(): the contiguous row range of one CTA of a persistent grid.
// Every element offset is int64_t: rows*D exceeds 2^31 at real sizes.
#ifndef ADALOAD_LNMOD_COMMON_CUH
#define ADALOAD_LNMOD_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "lnmod.h"

namespace lnmod_detail {

// ---- launch parameters -------------------------------------------------------------------
struct lnmod_kparams {
    const void *x;
    const void *scale;
    const void *shift;
    void *y;
    float *mean; // optional, [rows]
    float *rstd; // optional, [rows]
    int64_t rows;
    int64_t D;
    int64_t S; // rows_per_sample (1 when unused)
    int64_t L; // frame_len (1 when unused)
    int64_t F; // frames per sample
    int64_t scale_stride;
    int64_t shift_stride;
    int layout;
    float eps;
};

static inline lnmod_kparams lnmod_make_params(const lnmod_desc *d, const void *x,
                                              const void *scale, const void *shift, void *y,
                                              float *mean, float *rstd)
{
    lnmod_kparams p;
    p.x = x;
    p.scale = scale;
    p.shift = shift;
    p.y = y;
    p.mean = mean;
    p.rstd = rstd;
    p.rows = d->rows;
    p.D = d->D;
    p.S = d->rows_per_sample > 0 ? d->rows_per_sample : 1;
    p.L = d->frame_len > 0 ? d->frame_len : 1;
    p.F = lnmod_frames_per_sample(d);
    p.scale_stride = d->scale_stride;
    p.shift_stride = d->shift_stride;
    p.layout = (int)d->layout;
    p.eps = (float)d->eps;
    return p;
}

// m(r): the modulation row of token row r (same map as lnmod_mod_index in lnmod_desc.h), for
// the forward's and the backward's parameters alike.
template <typename P>
__host__ __device__ __forceinline__ int64_t lnmod_mod_row(const P &p, int64_t r)
{
    if (p.layout == LNMOD_PER_TOKEN) return r;
    if (p.layout == LNMOD_PER_FRAME) return (r / p.S) * p.F + (r % p.S) / p.L;
    return r / p.S;
}

// The modulation row of token row r and the end of its run: rows r .. *end-1 all use
// modulation row *m (per-token: one row; per-sample: to the end of the sample; per-frame:
// to the end of the frame, or of the sample for its last, shorter frame). P: lnmod_kparams, or
// any parameters with its layout, S and L (the fused residual op's).
template <typename P>
__host__ __device__ __forceinline__ void lnmod_mod_run(const P &p, int64_t r, int64_t *m, int64_t *end)
{
    if (p.layout == LNMOD_PER_TOKEN) {
        *m = r;
        *end = r + 1;
        return;
    }
    const int64_t s = r / p.S, i = r - s * p.S;
    if (p.layout == LNMOD_PER_FRAME) {
        const int64_t j = i / p.L;
        const int64_t fe = (j + 1) * p.L;
        *m = s * p.F + j;
        *end = s * p.S + (fe < p.S ? fe : p.S);
        return;
    }
    *m = s;
    *end = (s + 1) * p.S;
}

// Rows [*r0, *r1) of CTA b out of G: contiguous chunks whose sizes differ by at most one
// (so a CTA stays inside one sample for long and keeps its modulation row on chip).
// Written without b*rows, which could overflow for huge row counts.
__host__ __device__ __forceinline__ void lnmod_chunk(int64_t rows, int64_t b, int64_t G,
                                                     int64_t *r0, int64_t *r1)
{
    int64_t q = rows / G, rem = rows % G;
    *r0 = b * q + (b < rem ? b : rem);
    *r1 = *r0 + q + (b < rem ? 1 : 0);
}

// ---- dtype traits ------------------------------------------------------------------------
template <typename T> struct dt;

template <> struct dt<float> {
    static constexpr int VEC = 4; // elements per 16-byte vector
    __device__ __forceinline__ static float to_f(float v) { return v; }
    __device__ __forceinline__ static float from_f(float v) { return v; }
    __device__ __forceinline__ static void unpack(uint4 u, float *o)
    {
        o[0] = __uint_as_float(u.x);
        o[1] = __uint_as_float(u.y);
        o[2] = __uint_as_float(u.z);
        o[3] = __uint_as_float(u.w);
    }
    __device__ __forceinline__ static uint4 pack(const float *v)
    {
        return make_uint4(__float_as_uint(v[0]), __float_as_uint(v[1]), __float_as_uint(v[2]),
                          __float_as_uint(v[3]));
    }
};

// bf16 -> fp32 is exact: the 16 bits are the top half of the fp32 pattern.
__device__ __forceinline__ float lnmod_bf16lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float lnmod_bf16hi(uint32_t w)
{
    return __uint_as_float(w & 0xffff0000u);
}
__device__ __forceinline__ uint32_t lnmod_pack_bf16x2(float lo, float hi)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi); // .x = lo (low half), .y = hi
    return *reinterpret_cast<uint32_t *>(&h);
}
__device__ __forceinline__ uint32_t lnmod_pack_f16x2(float lo, float hi)
{
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
}
__device__ __forceinline__ float2 lnmod_f16x2(uint32_t w)
{
    return __half22float2(*reinterpret_cast<const __half2 *>(&w));
}

template <> struct dt<__nv_bfloat16> {
    static constexpr int VEC = 8;
    __device__ __forceinline__ static float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
    __device__ __forceinline__ static __nv_bfloat16 from_f(float v)
    {
        return __float2bfloat16_rn(v);
    }
    __device__ __forceinline__ static void unpack(uint4 u, float *o)
    {
        o[0] = lnmod_bf16lo(u.x);
        o[1] = lnmod_bf16hi(u.x);
        o[2] = lnmod_bf16lo(u.y);
        o[3] = lnmod_bf16hi(u.y);
        o[4] = lnmod_bf16lo(u.z);
        o[5] = lnmod_bf16hi(u.z);
        o[6] = lnmod_bf16lo(u.w);
        o[7] = lnmod_bf16hi(u.w);
    }
    __device__ __forceinline__ static uint4 pack(const float *v)
    {
        return make_uint4(lnmod_pack_bf16x2(v[0], v[1]), lnmod_pack_bf16x2(v[2], v[3]),
                          lnmod_pack_bf16x2(v[4], v[5]), lnmod_pack_bf16x2(v[6], v[7]));
    }
};

template <> struct dt<__half> {
    static constexpr int VEC = 8;
    __device__ __forceinline__ static float to_f(__half v) { return __half2float(v); }
    __device__ __forceinline__ static __half from_f(float v) { return __float2half_rn(v); }
    __device__ __forceinline__ static void unpack(uint4 u, float *o)
    {
        float2 a = lnmod_f16x2(u.x), b = lnmod_f16x2(u.y), c = lnmod_f16x2(u.z),
               e = lnmod_f16x2(u.w);
        o[0] = a.x;
        o[1] = a.y;
        o[2] = b.x;
        o[3] = b.y;
        o[4] = c.x;
        o[5] = c.y;
        o[6] = e.x;
        o[7] = e.y;
    }
    __device__ __forceinline__ static uint4 pack(const float *v)
    {
        return make_uint4(lnmod_pack_f16x2(v[0], v[1]), lnmod_pack_f16x2(v[2], v[3]),
                          lnmod_pack_f16x2(v[4], v[5]), lnmod_pack_f16x2(v[6], v[7]));
    }
};

// ---- memory instructions -----------------------------------------------------------------
// Asynchronous 16-byte global -> shared copies (cp.async.cg: through L2 only, not L1), for
// the staged row prefetch of dtile. Each thread copies and later reads back only its own
// 16-byte slots, so cp.async.wait_group alone makes the data visible: no barrier needed.
__device__ __forceinline__ void lnmod_cp_async16(void *smem, const void *gmem)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void lnmod_cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most N of this thread's committed copy groups are still in flight.
template <int N> __device__ __forceinline__ void lnmod_cp_wait()
{
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
// Modulation (and re-read x in the generic paths): read-only data cache.
__device__ __forceinline__ uint4 lnmod_ld_cached(const void *p)
{
    return __ldg(reinterpret_cast<const uint4 *>(p));
}
// y: a plain 16-byte store (write-back through L2). st.global.cs (evict-first) measured up
// to 1.5 points of copy bandwidth slower for dtile on the H200 (kernels/NOTES.md).
__device__ __forceinline__ void lnmod_st_vec(void *p, uint4 v)
{
    *reinterpret_cast<uint4 *>(p) = v;
}
// This thread's 16 bytes at shared-memory address p, read again (volatile: the compiler
// may not reuse an earlier read of the same slot, which would keep it live in registers).
__device__ __forceinline__ uint4 lnmod_lds16(const uint4 *p)
{
    uint4 u;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
                 : "r"((unsigned)__cvta_generic_to_shared(p)));
    return u;
}

// N consecutive elements of T at p (N*sizeof(T) a multiple of 16 and p 16-byte aligned, or
// N == 1) widened to fp32, through the read-only data cache.
template <typename T, int N>
__device__ __forceinline__ void lnmod_load_n(const T *p, float *o)
{
    if constexpr (N == 1) {
        o[0] = dt<T>::to_f(p[0]);
    } else {
        static_assert((N * sizeof(T)) % 16 == 0, "vector width");
        constexpr int W = (int)(N * sizeof(T) / 16);
        constexpr int E = 16 / (int)sizeof(T);
#pragma unroll
        for (int w = 0; w < W; w++) {
            const uint4 *q = reinterpret_cast<const uint4 *>(p) + w;
            uint4 u = lnmod_ld_cached(q);
            dt<T>::unpack(u, o + w * E);
        }
    }
}

// Stores N fp32 values as T at p (same alignment rules), rounding to nearest even once.
template <typename T, int N>
__device__ __forceinline__ void lnmod_store_n(T *p, const float *v)
{
    if constexpr (N == 1) {
        p[0] = dt<T>::from_f(v[0]);
    } else {
        static_assert((N * sizeof(T)) % 16 == 0, "vector width");
        constexpr int W = (int)(N * sizeof(T) / 16);
        constexpr int E = 16 / (int)sizeof(T);
#pragma unroll
        for (int w = 0; w < W; w++)
            lnmod_st_vec(reinterpret_cast<uint4 *>(p) + w, dt<T>::pack(v + w * E));
    }
}

// ---- reductions --------------------------------------------------------------------------
// Sum of N values as a pairwise tree: short dependency chains, smaller rounding error.
template <int N> __device__ __forceinline__ float lnmod_sum_n(const float *v)
{
    if constexpr (N == 1) {
        return v[0];
    } else {
        return lnmod_sum_n<N / 2>(v) + lnmod_sum_n<N - N / 2>(v + N / 2);
    }
}
__device__ __forceinline__ float lnmod_warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ float lnmod_warp_min(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fminf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ float lnmod_warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// Two independent warp sums in one butterfly (their shuffles overlap).
__device__ __forceinline__ void lnmod_warp_sum2(float &a, float &b)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_xor_sync(0xffffffffu, a, o);
        b += __shfl_xor_sync(0xffffffffu, b, o);
    }
}
__device__ __forceinline__ int64_t lnmod_warp_sum_i64(int64_t v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Statistics of one part of a row (a warp's share) around a pivot hi:
//   d = x - hi (exact when x is near hi); c = sum d; lo = c / n; M2 = sum d^2 - c^2 / n.
//   dtile (row in registers) takes hi = the mean of 32 of the part's elements and repeats
//   the pass around hi + lo when hi was far from the mean; the paths that re-read the row
//   from memory take hi = a rough mean from a first pass, or the value itself for a
//   constant part, so that M2 is exactly 0 there. The part's mean is hi + lo, kept as the
//   pair.
struct lnmod_part {
    float hi;
    float lo;
    float m2;
};

// rstd from the merged M2 of n elements: biased variance, clamped at 0 (rounding can make
// a constant row's M2 a hair negative), one IEEE sqrt and one IEEE division.
__device__ __forceinline__ float lnmod_rstd(float m2, float n, float eps)
{
    float var = fmaxf(m2 / n, 0.0f);
    return 1.0f / sqrtf(var + eps);
}

// Chan's merge of NW parts with counts n[w] (n[0] > 0) around the pivot hi = part[0].hi:
//   delta_w = (hi_w - hi) + lo_w;  lo = sum n_w delta_w / n;
//   M2 = sum M2_w + sum n_w (delta_w - lo)^2.
// hi_w - hi is exact for rows with a large mean (both near it), so the mean stays the pair
// (hi, lo) and xhat = ((x - hi) - lo) * rstd loses nothing to the magnitude of the mean.
// Parts with n_w = 0 (a warp with no element of a tiny row) are skipped.
__device__ __forceinline__ void lnmod_merge_parts(const lnmod_part *part, const float *n,
                                                  int nw, float ntot, float *hi, float *lo,
                                                  float *m2)
{
    float pivot = part[0].hi;
    float acc = 0.0f;
    for (int w = 0; w < nw; w++) {
        if (n[w] > 0.0f) acc = fmaf(n[w], (part[w].hi - pivot) + part[w].lo, acc);
    }
    float l = acc / ntot;
    float m = 0.0f;
    for (int w = 0; w < nw; w++) {
        if (n[w] > 0.0f) {
            float e = ((part[w].hi - pivot) + part[w].lo) - l;
            m += part[w].m2 + n[w] * e * e;
        }
    }
    *hi = pivot;
    *lo = l;
    *m2 = m;
}

// ---- dispatch ----------------------------------------------------------------------------
template <typename T> struct lnmod_tag {
    using type = T;
};

// Calls fn(tag<TX>, tag<TM>, tag<TY>) for the descriptor's (validated) dtype triple.
template <typename Fn> lnmod_status lnmod_dispatch_dtypes(const lnmod_desc *d, Fn &&fn)
{
    const bool mf = d->mod_dtype == LNMOD_F32, yf = d->y_dtype == LNMOD_F32;
    switch (d->x_dtype) {
    case LNMOD_F32:
        return fn(lnmod_tag<float>(), lnmod_tag<float>(), lnmod_tag<float>());
    case LNMOD_BF16: {
        using B = __nv_bfloat16;
        if (mf && yf) return fn(lnmod_tag<B>(), lnmod_tag<float>(), lnmod_tag<float>());
        if (mf) return fn(lnmod_tag<B>(), lnmod_tag<float>(), lnmod_tag<B>());
        if (yf) return fn(lnmod_tag<B>(), lnmod_tag<B>(), lnmod_tag<float>());
        return fn(lnmod_tag<B>(), lnmod_tag<B>(), lnmod_tag<B>());
    }
    case LNMOD_F16: {
        using H = __half;
        if (mf && yf) return fn(lnmod_tag<H>(), lnmod_tag<float>(), lnmod_tag<float>());
        if (mf) return fn(lnmod_tag<H>(), lnmod_tag<float>(), lnmod_tag<H>());
        if (yf) return fn(lnmod_tag<H>(), lnmod_tag<H>(), lnmod_tag<float>());
        return fn(lnmod_tag<H>(), lnmod_tag<H>(), lnmod_tag<H>());
    }
    default: return LNMOD_ERR_DTYPE;
    }
}

// Launch status: LNMOD_ERR_CUDA when the launch (or an earlier call) left an error.
static inline lnmod_status lnmod_launch_status(void)
{
    return cudaGetLastError() == cudaSuccess ? LNMOD_OK : LNMOD_ERR_CUDA;
}

// ---- passes over a row re-read from memory -----------------------------------------------
// The three passes of the paths that do not hold the row on chip (naive, row_per_warp,
// dtile's generic path). The calling thread walks vectors v = v0, v0 + step, ... < nv of VEC
// elements of row xr (VEC = 1: scalar), and the caller reduces the partial results.

// Pass 1: sum, min and max (min == max over the whole row marks a constant row, which then
// pivots on its own value so that d = 0 and M2 = 0 exactly at any magnitude).
template <typename TX, int VEC>
__device__ __forceinline__ void lnmod_pass_sum(const TX *xr, int64_t v0, int64_t step,
                                               int64_t nv, float *s, float *mn, float *mx)
{
    float f[VEC], a = 0.0f, lo = INFINITY, hi = -INFINITY;
    for (int64_t v = v0; v < nv; v += step) {
        lnmod_load_n<TX, VEC>(xr + v * VEC, f);
        a += lnmod_sum_n<VEC>(f);
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            lo = fminf(lo, f[e]);
            hi = fmaxf(hi, f[e]);
        }
    }
    *s = a;
    *mn = lo;
    *mx = hi;
}

// Pass 2: c = sum d and s2 = sum d^2 with d = x - pivot (exact for x near the pivot).
template <typename TX, int VEC>
__device__ __forceinline__ void lnmod_pass_dev(const TX *xr, int64_t v0, int64_t step,
                                               int64_t nv, float pivot, float *c, float *s2)
{
    float f[VEC], a = 0.0f, q = 0.0f;
    for (int64_t v = v0; v < nv; v += step) {
        lnmod_load_n<TX, VEC>(xr + v * VEC, f);
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            float d = f[e] - pivot;
            a += d;
            q = fmaf(d, d, q);
        }
    }
    *c = a;
    *s2 = q;
}

// Pass 3: y = ((x - hi) - lo) * rs * (1 + scale) + shift for one row (sc, sh: its
// modulation row), one rounding at the store.
template <typename TX, typename TM, typename TY, int VEC>
__device__ __forceinline__ void lnmod_pass_out(const TX *xr, const TM *sc, const TM *sh, TY *yr,
                                               int64_t v0, int64_t step, int64_t nv, float hi,
                                               float lo, float rs)
{
    for (int64_t v = v0; v < nv; v += step) {
        float f[VEC], g[VEC], b[VEC], o[VEC];
        lnmod_load_n<TX, VEC>(xr + v * VEC, f);
        lnmod_load_n<TM, VEC>(sc + v * VEC, g);
        lnmod_load_n<TM, VEC>(sh + v * VEC, b);
#pragma unroll
        for (int e = 0; e < VEC; e++) o[e] = fmaf(((f[e] - hi) - lo) * rs, 1.0f + g[e], b[e]);
        lnmod_store_n<TY, VEC>(yr + v * VEC, o);
    }
}

// The end of row r for the paths that re-read it: mean and rstd stored by the one thread
// for which `writer` holds (when the caller asked for them), then pass 3 with the row's
// modulation row m(r).
template <typename TX, typename TM, typename TY, int VEC>
__device__ __forceinline__ void lnmod_row_out(const lnmod_kparams &p, int64_t r, bool writer,
                                              int64_t v0, int64_t step, int64_t nv, float hi,
                                              float lo, float rs)
{
    if (writer) {
        if (p.mean) p.mean[r] = hi + lo;
        if (p.rstd) p.rstd[r] = rs;
    }
    const int64_t m = lnmod_mod_row(p, r);
    lnmod_pass_out<TX, TM, TY, VEC>(static_cast<const TX *>(p.x) + r * p.D,
                                    static_cast<const TM *>(p.scale) + m * p.scale_stride,
                                    static_cast<const TM *>(p.shift) + m * p.shift_stride,
                                    static_cast<TY *>(p.y) + r * p.D, v0, step, nv, hi, lo, rs);
}

// SMs of the current device (queried per call: cheap, thread-safe, no global state).
static inline lnmod_status lnmod_sm_count(int *sms)
{
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return LNMOD_ERR_CUDA;
    if (cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    if (*sms < 1) *sms = 1;
    return LNMOD_OK;
}

// Is p aligned to 16 bytes?
static inline bool lnmod_al16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

// Can every x/y/scale/shift access of a row use 16-byte vectors of VEC (= 16/sizeof(TX))
// elements? Needs D % VEC == 0, 16-byte aligned bases, and modulation row starts at
// 16-byte multiples (y and modulation may be wider than x: VEC fp32 is 16 or 32 bytes).
template <typename TX, typename TM, typename TY>
static inline bool lnmod_vector_ok(const lnmod_kparams &p)
{
    constexpr int VEC = dt<TX>::VEC;
    return p.D % VEC == 0 && lnmod_al16(p.x) && lnmod_al16(p.y) && lnmod_al16(p.scale) &&
           lnmod_al16(p.shift) && (p.scale_stride * (int64_t)sizeof(TM)) % 16 == 0 &&
           (p.shift_stride * (int64_t)sizeof(TM)) % 16 == 0;
}

} // namespace lnmod_detail

#endif
