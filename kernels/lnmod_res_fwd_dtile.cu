// lnmod_res_fwd_dtile.cu -- variant "dtile" of the fused residual op (lnmod_res.h), forward: the
// row held in registers, 16-byte vectors (its backward: lnmod_res_bwd_bulk.cu, else
// lnmod_res_bwd_dtile.cu). Measured (H200, kernels/experiments/2026-12-02-res): 90.4-91.4% of
// the in-run copy of lnmod_res_fwd_min_bytes at the Wan shapes (32,760 rows, D 1536-5120).
//
// First, on a device with bulk copies (sm_90), the chunk ring (lnmod_res_fwd_chunk.cuh, its plan
// and conditions lnmod_res_fwd_chunk_plan.h: Wan's dtypes, per sample or per frame, 64 <= D <=
// 10,240, any 4-byte phase of r with h at r's phase and out at y's; on an H100 its shapes ran
// ahead of the row kernels at every width timed, their specialized D 1536/3072/5120 included:
// experiments/2026-12-05-res-chunk, round 2). Else the row kernels here:
// Wan's dtypes (residual fp32, branch bf16, modulation fp32, out bf16), every
// pointer 16-byte aligned and every used stride a multiple of 4 elements, and D in {1536, 3072,
// 5120} (rd_fwd_kernel, below) or any other multiple of 8 up to 10,240 (rg_fwd_kernel: the same
// row in registers with masked units, lnmod_res_fwd_plan.h); anything else runs naive's forward
// (lnmod_res_fwd_dtile_launch).
//   * A row is split into units of 8 elements (one 16-byte bf16 vector of y, two of r and h,
//     one of out). T threads own a row, VPT units each (T*VPT*8 == D exactly; thread t owns
//     units t, t + T, ...: each warp access covers contiguous 512 / 1024 bytes): D 1536 ->
//     64 threads x 3, 3072 -> 128 x 3, 5120 -> 128 x 5.
//   * All of the row's r and y loads are issued first (3*VPT 16-byte loads in flight per
//     thread); r with plain loads (h may be r itself: each thread reads its own vectors
//     before writing them, and nothing else touches them), y, gate, scale and shift through
//     the read-only path (the modulation rows: from L1/L2 after the first row of a run).
//   * h = fmaf(g, y, r) (r + y without a gate) in fp32 is already the stored value (fp32
//     residual); written with 128-bit stores and kept in registers.
//   * Statistics as kernels/lnmod_fwd_dtile.cu: one pass over the registers around a
//     per-warp pivot (a second pass around the warp's mean when the pivot was far off),
//     warp butterflies, one Chan merge of the warps through shared memory (parity-buffered:
//     one barrier a row), so a constant row gives M2 = 0 and a large mean loses nothing.
//   * out = fmaf(fmaf(h - pivot, rstd, -(mean - pivot) * rstd), a, b), a = 1 + scale or the
//     weight, b = shift or the bias; one rounding to bf16; 128-bit stores.
//   * Grid-stride over rows: CTA b takes rows b, b + G, ... (the grid streams one contiguous
//     region at a time, as a copy does).
// Bytes: r, y read and h, out written once (~lnmod_res_fwd_min_bytes) plus the modulation
// rows from L2 per CTA and run.
#include "lnmod_res_common.cuh"
#include "lnmod_res_fwd_chunk.cuh"
#include "lnmod_res_fwd_gen.cuh"
#include "lnmod_res_variants.cuh"

namespace lnmod_res_detail {
namespace {

template <int D> struct rd_cfg {
    static constexpr int VPT = D == 5120 ? 5 : 3;
    static constexpr int T = D / (8 * VPT);
    static constexpr int NW = T / 32;
    static constexpr int PER_WARP = 32 * VPT * 8;
    static_assert(T * VPT * 8 == D && T % 32 == 0, "exact fit, whole warps");
};

template <int D>
__global__ void __launch_bounds__(rd_cfg<D>::T) rd_fwd_kernel(res_params p)
{
    using C = rd_cfg<D>;
    constexpr int VPT = C::VPT, T = C::T, NW = C::NW;
    __shared__ lnmod_part sp[2][NW];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const float *rg = static_cast<const float *>(p.r);
    const __nv_bfloat16 *yg = static_cast<const __nv_bfloat16 *>(p.y);
    int par = 0;
    for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x, par ^= 1) {
        const int64_t base = row * (int64_t)D + (int64_t)tid * 8;
        float h[VPT][8], y[VPT][8];
#pragma unroll
        for (int k = 0; k < VPT; k++) {
            ld_plain8(rg + base + k * T * 8, h[k]);
            lnmod_load_n<__nv_bfloat16, 8>(yg + base + k * T * 8, y[k]);
        }
        const int64_t m = (p.has_gate || !p.affine) ? lnmod_mod_row(p, row) : 0;
        if (p.has_gate) {
            const float *gr = static_cast<const float *>(p.gate) + m * p.gate_stride + tid * 8;
#pragma unroll
            for (int k = 0; k < VPT; k++) {
                float g[8];
                lnmod_load_n<float, 8>(gr + k * T * 8, g);
#pragma unroll
                for (int e = 0; e < 8; e++) h[k][e] = fmaf(g[e], y[k][e], h[k][e]);
            }
        } else {
#pragma unroll
            for (int k = 0; k < VPT; k++)
#pragma unroll
                for (int e = 0; e < 8; e++) h[k][e] += y[k][e];
        }
        float *hg = static_cast<float *>(p.h) + base;
#pragma unroll
        for (int k = 0; k < VPT; k++) lnmod_store_n<float, 8>(hg + k * T * 8, h[k]);

        // The warp's statistics around its pivot (kernels/lnmod_fwd_dtile.cu, dtile_row).
        constexpr float inv_nw = 1.0f / (float)C::PER_WARP;
        float hw = lnmod_warp_sum(h[0][0]) * (1.0f / 32.0f);
        float c = 0.0f, q = 0.0f;
#pragma unroll
        for (int k = 0; k < VPT; k++)
#pragma unroll
            for (int e = 0; e < 8; e++) {
                const float d = h[k][e] - hw;
                c += d;
                q = fmaf(d, d, q);
            }
        lnmod_warp_sum2(c, q);
        float lw = c * inv_nw;
        if (c * lw > 0.888f * q) { // warp-uniform: the pivot was far from the warp's mean
            hw += lw;
            c = 0.0f;
            q = 0.0f;
#pragma unroll
            for (int k = 0; k < VPT; k++)
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    const float d = h[k][e] - hw;
                    c += d;
                    q = fmaf(d, d, q);
                }
            lnmod_warp_sum2(c, q);
            lw = c * inv_nw;
        }
        if (lane == 0) sp[par][warp] = lnmod_part{hw, lw, fmaxf(fmaf(-c, lw, q), 0.0f)};
        if constexpr (NW > 1) __syncthreads();
        else __syncwarp();
        const float hi = sp[par][0].hi;
        float acc = 0.0f;
#pragma unroll
        for (int w = 0; w < NW; w++) acc += (sp[par][w].hi - hi) + sp[par][w].lo;
        const float lo = acc / (float)NW;
        float m2 = 0.0f, dev = 0.0f;
#pragma unroll
        for (int w = 0; w < NW; w++) {
            const float e = ((sp[par][w].hi - hi) + sp[par][w].lo) - lo;
            m2 += sp[par][w].m2;
            dev = fmaf(e, e, dev);
        }
        m2 = fmaf((float)C::PER_WARP, dev, m2);
        const float rs = lnmod_rstd(m2, (float)D, p.eps);
        if (tid == 0) {
            if (p.mean) p.mean[row] = hi + lo;
            if (p.rstd) p.rstd[row] = rs;
        }
        const float nlr = -((hi - hw) + lo) * rs;
        const int64_t k0 = p.affine ? 0 : m;
        const float *sc = static_cast<const float *>(p.scale) + k0 * p.scale_stride + tid * 8;
        const float *sh = static_cast<const float *>(p.shift) + k0 * p.shift_stride + tid * 8;
        __nv_bfloat16 *og = static_cast<__nv_bfloat16 *>(p.out) + base;
#pragma unroll
        for (int k = 0; k < VPT; k++) {
            float a[8], b[8], o[8];
            lnmod_load_n<float, 8>(sc + k * T * 8, a);
            lnmod_load_n<float, 8>(sh + k * T * 8, b);
#pragma unroll
            for (int e = 0; e < 8; e++)
                o[e] = fmaf(fmaf(h[k][e] - hw, rs, nlr), p.affine ? a[e] : 1.0f + a[e], b[e]);
            lnmod_store_n<__nv_bfloat16, 8>(og + k * T * 8, o);
        }
    }
}

template <int VPT> lnmod_status rg_launch(const res_params &p, int T, int U, cudaStream_t stream)
{
    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rg_fwd_kernel<VPT>, T, 0) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    const int64_t full = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
    const int64_t grid = p.rows < full ? p.rows : full;
    rg_fwd_kernel<VPT><<<(unsigned)grid, (unsigned)T, 0, stream>>>(p, U);
    return lnmod_launch_status();
}

bool al16(const void *q) { return ((uintptr_t)q & 15u) == 0; }

template <int D> lnmod_status launch(const res_params &p, cudaStream_t stream)
{
    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rd_fwd_kernel<D>, rd_cfg<D>::T, 0) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    const int64_t full = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
    const int64_t grid = p.rows < full ? p.rows : full;
    rd_fwd_kernel<D><<<(unsigned)grid, rd_cfg<D>::T, 0, stream>>>(p);
    return lnmod_launch_status();
}

// ---- the chunk ring (lnmod_res_fwd_chunk.cuh) ----------------------------------------------

// The device facts the ring is sized from, and the SMs and compute capability.
lnmod_status rc_device(lnmod_res_chunk_dev *v, int *sms, int *cc_major)
{
    int dev = 0, a[7];
    const cudaDeviceAttr at[7] = {cudaDevAttrMaxSharedMemoryPerMultiprocessor, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                  cudaDevAttrMaxRegistersPerMultiprocessor, cudaDevAttrMaxThreadsPerMultiProcessor,
                                  cudaDevAttrMaxBlocksPerMultiprocessor, cudaDevAttrMultiProcessorCount,
                                  cudaDevAttrComputeCapabilityMajor};
    if (cudaGetDevice(&dev) != cudaSuccess) return LNMOD_ERR_CUDA;
    for (int i = 0; i < 7; i++)
        if (cudaDeviceGetAttribute(&a[i], at[i], dev) != cudaSuccess) return LNMOD_ERR_CUDA;
    *v = lnmod_res_chunk_dev{a[0], a[1], a[2], a[3], a[4]};
    *sms = a[5] > 0 ? a[5] : 1;
    *cc_major = a[6];
    return LNMOD_OK;
}

// One shape's launch: the ring from the kernel's registers and the device; *taken 0 (nothing
// launched) where not even one CTA with the fewest stages fits.
template <int T, int K>
lnmod_status rc_go(const res_params &p, const lnmod_res_chunk_dev &v, int sms, void *workspace, cudaStream_t stream,
                   int *taken)
{
    constexpr int R = LNMOD_RES_CHUNK_R(K);
    void (*kern)(res_params, rc_args) = rc_fwd_kernel<__nv_bfloat16, T, K, R>;
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, kern) != cudaSuccess) return LNMOD_ERR_CUDA;
    int ctas = 0, ns = 0;
    int64_t smem = 0, slot_r = 0, slot_y = 0;
    *taken = lnmod_res_chunk_ring(&v, T, R, p.D, fa.numRegs, (int64_t)fa.sharedSizeBytes, &ctas, &ns, &smem) == 0;
    if (!*taken) return LNMOD_OK;
    lnmod_res_chunk_slots(R, p.D, &slot_r, &slot_y);
    if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess)
        return LNMOD_ERR_CUDA;
    const int64_t nchunks = (p.rows + R - 1) / R, full = (int64_t)ctas * sms;
    // The ticket counter: the caller's forward workspace (zero on entry, left zero by the launch).
    const rc_args c = {ns, (int)slot_r, (int)(slot_r + slot_y), (int)nchunks,
                       static_cast<unsigned long long *>(workspace)};
    kern<<<(unsigned)(nchunks < full ? nchunks : full), T, (size_t)smem, stream>>>(p, c);
    return lnmod_launch_status();
}

// The chunk ring where it takes the call (*taken 1), else nothing launched (*taken 0).
lnmod_status res_fwd_chunk(const lnmod_res_desc *d, const res_params &p, void *workspace, cudaStream_t stream,
                           int *taken)
{
    lnmod_res_chunk_dev v;
    int sms = 0, cc = 0, T = 0, K = 0, R = 0;
    *taken = 0;
    const lnmod_status st = rc_device(&v, &sms, &cc);
    if (st != LNMOD_OK) return st;
    if (!lnmod_res_chunk_takes(d, (uintptr_t)p.r, (uintptr_t)p.y, (uintptr_t)p.h, (uintptr_t)p.out, cc) ||
        !lnmod_res_chunk_shape(d->D, &T, &K, &R))
        return LNMOD_OK;
#define RC_SHAPE(T_, K_)                                                                                               \
    if (T == T_ && K == K_) return rc_go<T_, K_>(p, v, sms, workspace, stream, taken);
    LNMOD_RES_CHUNK_SHAPES(RC_SHAPE)
#undef RC_SHAPE
    return LNMOD_OK; // not instantiated (test_lnmod_res_fwd_chunk_plan checks every pick is)
}

} // namespace

int res_fwd_dtile_shape(const lnmod_res_desc *d)
{
    if (d->res_dtype != LNMOD_F32 || d->branch_dtype != LNMOD_BF16 || d->mod_dtype != LNMOD_F32 ||
        d->out_dtype != LNMOD_BF16)
        return 0;
    int T = 0, V = 0;
    if (d->D != 1536 && d->D != 3072 && d->D != 5120 && !lnmod_res_fwd_gen_shape(d->D, &T, &V)) return 0;
    if (d->gate == LNMOD_RES_GATE && d->gate_stride % 4 != 0) return 0;
    if (d->norm == LNMOD_RES_MODULATE && (d->scale_stride % 4 != 0 || d->shift_stride % 4 != 0)) return 0;
    return 1;
}

int res_fwd_dtile_takes(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out)
{
    if (!res_fwd_dtile_shape(d)) return 0;
    if (!al16(in->r) || !al16(in->y) || !al16(in->scale) || !al16(in->shift) || !al16(out->h) || !al16(out->out))
        return 0;
    return d->gate != LNMOD_RES_GATE || al16(in->gate);
}

// The forward's parameters of a call.
static res_params fwd_params(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out)
{
    res_params p = res_make_params(d);
    p.r = in->r;
    p.y = in->y;
    p.gate = in->gate;
    p.scale = in->scale;
    p.shift = in->shift;
    p.h = out->h;
    p.out = out->out;
    p.mean = out->mean;
    p.rstd = out->rstd;
    return p;
}

lnmod_status res_fwd_dtile(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out,
                           cudaStream_t stream)
{
    const res_params p = fwd_params(d, in, out);
    if (d->D == 1536) return launch<1536>(p, stream);
    if (d->D == 3072) return launch<3072>(p, stream);
    if (d->D == 5120) return launch<5120>(p, stream);
    int T = 0, V = 0;
    (void)lnmod_res_fwd_gen_shape(d->D, &T, &V); // res_fwd_dtile_shape took d
    const int U = (int)(d->D / 8);
    switch (V) {
    case 1: return rg_launch<1>(p, T, U, stream);
    case 2: return rg_launch<2>(p, T, U, stream);
    case 3: return rg_launch<3>(p, T, U, stream);
    case 4: return rg_launch<4>(p, T, U, stream);
    default: return rg_launch<5>(p, T, U, stream);
    }
}

} // namespace lnmod_res_detail

lnmod_status lnmod_res_fwd_dtile_launch(const lnmod_res_desc *d, const lnmod_res_fwd_in *in,
                                        const lnmod_res_fwd_out *out, void *workspace, cudaStream_t stream)
{
    using namespace lnmod_res_detail;
    const bool rows = res_fwd_dtile_takes(d, in, out) != 0;
    int taken = 0;
    const lnmod_status st = res_fwd_chunk(d, fwd_params(d, in, out), workspace, stream, &taken);
    if (st != LNMOD_OK || taken) return st;
    if (rows) return res_fwd_dtile(d, in, out, stream);
    return res_fwd_naive(d, in, out, stream);
}
