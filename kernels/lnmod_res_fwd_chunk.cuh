// lnmod_res_fwd_chunk.cuh -- dtile's fused residual forward on the flat chunk ring (its plan and
// where it runs: lnmod_res_fwd_chunk_plan.h; launched by lnmod_res_fwd_dtile.cu). lnmod's chunk
// kernel (lnmod_fwd_v2_chunk.cuh: its header explains the ring and the row sums, shared through
// lnmod_chunk_ring.cuh) with two streams in and two out:
//   * the CTAs take chunks in order from one ticket counter (rc_args::ticket, 0 at the launch,
//     zeroed again by the last CTA to end, so a launch leaves it as it found it):
//     thread 0 claims the chunk of a stage when it refills it, and the next claim while the CTA
//     computes, so the grid's loads stay in one moving window of r and y however the CTAs drift
//     (a static walk, chunks blockIdx.x + k gridDim.x, opened one window a CTA as they drifted
//     apart: 8 points of an H100's copy in experiments/2026-12-06-stream-probe); a stage's chunk
//     index goes beside its mbarrier, and a claim past the last chunk arrives on the stage's
//     mbarrier with no bytes: the CTA's end;
//   * chunk k of the CTA (rows r0 .. r0 + nr - 1) comes in by two bulk copies into one stage: r's 16-byte superset (fp32) into r's slot, y's (16-bit)
//     into y's slot, one mbarrier counting both; NS stages make the ring;
//   * thread t owns the columns t + q T (q < K) of every row; its gate, 1 + scale and shift of
//     them stay in 3K registers while the rows are in one run of the map (scale and shift the
//     weight and bias under AFFINE; no gate: 1, so that fmaf(1, y, r) is r + y exactly);
//   * pass: h = fmaf(g, y, r) (fp32, Wan's residual add rounded once) kept in R K registers --
//     h itself, not h - pivot, because h is an output: it must leave exactly -- and the rows'
//     sums of d = h - pivot and d^2, the pivot each row's first residual element (every thread
//     reads it from the stage before barrier A_k; after it, from registers only); reduce-scatter,
//     A_k, gather, lo, M2, rstd as lnmod's; a second pass around the mean from the registers
//     when the pivot was far off (no reload: h is exact in registers);
//   * output after A_k: h over r in r's slot (fp32: a warp's 32 consecutive words) and out =
//     ((h - base) rstd - lo rstd)(1 + scale) + shift over y in y's slot, fenced for the async
//     proxy; after A_{k+1} warp 0 stores both: lane 0 bulk-stores the aligned interiors of r's
//     and y's slots to h and out (one bulk group), lanes 8..15 the <= 3 + 3 fp32 edge elements
//     and lanes 16..31 the <= 7 + 7 16-bit ones whose 16-byte words the neighbouring chunks share.
// The order of barriers, refills and stores is lnmod's (its header's "Why it is ordered"): a
// stage is refilled at the top of chunk k + 2 of its use k, after thread 0's
// cp.async.bulk.wait_group.read 0 (the one store group then in flight has read it).
// Reads: the supersets of the tensors' first and last chunks reach up to 15 bytes before r or y
// and after their ends, inside their own outer 16-byte words (the emulation checks it).
// FV2_EMU_PLANT_RC*: the emulation test's planted bugs (RCEDGE: h's whole superset stored in bulk;
// RCRING: a stage refilled without waiting for its store's read; RCBAR: chunk k-1 stored before
// the barrier that completes it; RCRUN: a chunk crossing a run of the map takes its first row's
// modulation for every row; RCTICK: CTA 1 drops every other claim -- caught only where the
// CTAs' claims interleave; RCRESET (in fv2_emu.h): the last CTA leaves the counter as it is).
// Never defined in a build.
#ifndef ADALOAD_LNMOD_RES_FWD_CHUNK_CUH
#define ADALOAD_LNMOD_RES_FWD_CHUNK_CUH

#include "lnmod_chunk_ring.cuh"
#include "lnmod_res_common.cuh"
#include "lnmod_res_fwd_chunk_plan.h"

namespace lnmod_res_detail {

using namespace lnmod_chunk;

#ifdef FV2_EMU
#define RC_SMEM (emu::smem())
#else
extern __shared__ uint4 rc_smem[];
#define RC_SMEM rc_smem
#endif

// Kernel arguments besides res_params: ring stages, bytes of r's slot and of a stage, chunks,
// the ticket counter: two 64-bit words, 0 at the launch and left 0 (the claims, the CTAs ended).
struct rc_args {
    int NS, slot_r, stage, nchunks;
    unsigned long long *ticket;
};

// The thread's K columns of gate, (1 + scale) or weight, shift or bias for map row m; rows
// [r, end) are in its run.
template <int T, int K> struct rc_mod {
    float g[K], a[K], b[K];
    int64_t m, r, end;
    __device__ __forceinline__ void load(const res_params &p, int64_t row, int t)
    {
        if (!p.has_gate && p.affine) { // nothing depends on the row
            m = 0;
            end = p.rows;
        } else {
            lnmod_mod_run(p, row, &m, &end);
        }
        r = row;
        const float *gr = p.has_gate ? static_cast<const float *>(p.gate) + m * p.gate_stride : nullptr;
        const float *sc = static_cast<const float *>(p.scale) + m * p.scale_stride;
        const float *sh = static_cast<const float *>(p.shift) + m * p.shift_stride;
#pragma unroll
        for (int q = 0; q < K; q++) {
            const int64_t c = t + (int64_t)q * T;
            const bool in = c < p.D;
            g[q] = in && p.has_gate ? __ldg(gr + c) : 1.0f;
            a[q] = in ? (p.affine ? __ldg(sc + c) : 1.0f + __ldg(sc + c)) : 1.0f;
            b[q] = in ? __ldg(sh + c) : 0.0f;
        }
    }
    // The run of `row` in registers (a chunk crossing runs: once a row).
    __device__ __forceinline__ void at(const res_params &p, int64_t row, int t)
    {
        if (row < r || row >= end) load(p, row, t);
    }
};

// A chunk: rows r0 .. r0 + nr - 1; r's bytes start sr into their 16-byte word and span nbr
// bytes of the superset from it, y's sy and nby.
struct rc_geo {
    int64_t r0;
    int nr, sr, sy, nbr, nby;
    __device__ __forceinline__ rc_geo(const res_params &p, int R, int64_t r0_) : r0(r0_)
    {
        nr = p.rows - r0 < R ? (int)(p.rows - r0) : R;
        sr = (int)(((uintptr_t)p.r + (uintptr_t)(r0 * p.D * 4)) & 15u);
        sy = (int)(((uintptr_t)p.y + (uintptr_t)(r0 * p.D * 2)) & 15u);
        nbr = sr + 4 * nr * (int)p.D;
        nby = sy + 2 * nr * (int)p.D;
    }
};

// Thread 0: chunk g's two supersets into a stage, their bytes counted on its mbarrier.
__device__ __forceinline__ void rc_issue(const res_params &p, const rc_geo &g, unsigned char *stage, int slot_r,
                                         uint64_t *bar)
{
    const unsigned nr = (unsigned)((g.nbr + 15) & ~15), ny = (unsigned)((g.nby + 15) & ~15);
    ck_expect_tx(bar, nr + ny);
    ck_bulk_load(stage, static_cast<const unsigned char *>(p.r) + g.r0 * p.D * 4 - g.sr, nr, bar);
    ck_bulk_load(stage + slot_r, static_cast<const unsigned char *>(p.y) + g.r0 * p.D * 2 - g.sy, ny, bar);
}

// Thread 0: stage `stage` gets chunk `next` (its index into *tk, then its bytes; past the last
// chunk an arrival with no bytes), and `next` the following claim. Returns whether this was the end.
__device__ __forceinline__ bool rc_fill(const res_params &p, int R, int64_t &next, const rc_args &c,
                                        unsigned char *stage, uint64_t *bar, int *tk)
{
    if (next >= c.nchunks) {
        *tk = c.nchunks;
        ck_expect_tx(bar, 0);
        return true;
    }
    *tk = (int)next;
    rc_issue(p, rc_geo(p, R, next * R), stage, c.slot_r, bar);
    next = ck_ticket(c.ticket);
#ifdef FV2_EMU_PLANT_RCTICK
    if (blockIdx.x == 1) next = ck_ticket(c.ticket); // CTA 1 drops every other claim
#endif
    return false;
}

// Chunk g's h and out (in its stage) to global memory, by warp 0 (above). The __syncwarp orders
// the lanes' reads of the stage before lane 0's refill of it.
__device__ __forceinline__ void rc_store(const res_params &p, const rc_geo &g, const unsigned char *stage, int slot_r,
                                         int lane)
{
    unsigned char *h0 = static_cast<unsigned char *>(p.h) + g.r0 * p.D * 4 - g.sr;
    unsigned char *o0 = static_cast<unsigned char *>(p.out) + g.r0 * p.D * 2 - g.sy;
    const unsigned char *ys = stage + slot_r;
    const int ar = (g.sr + 15) & ~15, br = g.nbr & ~15, ay = (g.sy + 15) & ~15, by = g.nby & ~15;
    if (lane == 0) {
#ifdef FV2_EMU_PLANT_RCEDGE
        ck_bulk_store(h0, stage, (unsigned)((g.nbr + 15) & ~15));
#else
        ck_bulk_store(h0 + ar, stage + ar, (unsigned)(br - ar));
#endif
        ck_bulk_store(o0 + ay, ys + ay, (unsigned)(by - ay));
        ck_bulk_commit();
    } else if (lane >= 8 && lane < 16) { // h's edges: lanes 8..11 the head, 12..15 the tail
        const int o = lane < 12 ? g.sr + 4 * (lane - 8) : br + 4 * (lane - 12);
        if (o < (lane < 12 ? ar : g.nbr))
            *reinterpret_cast<uint32_t *>(h0 + o) = *reinterpret_cast<const uint32_t *>(stage + o);
    } else if (lane >= 16) { // out's edges: lanes 16..23 the head, 24..31 the tail
        const int o = lane < 24 ? g.sy + 2 * (lane - 16) : by + 2 * (lane - 24);
        if (o < (lane < 24 ? ay : g.nby))
            *reinterpret_cast<uint16_t *>(o0 + o) = *reinterpret_cast<const uint16_t *>(ys + o);
    }
    __syncwarp();
}

// The row sums of the chunk around base[i] (the pivot, or after the rare second pass the mean):
// lane l's scattered total of row l % RP's sum of d (l % 2RP < RP) or d^2 into P, padded rows 0.
template <int R, int K, int RP>
__device__ __forceinline__ void rc_sums(const float (&v)[R][K], const float (&base)[R], bool last, float *P, int lane,
                                        int warp)
{
    float a[2 * RP];
#pragma unroll
    for (int i = 0; i < 2 * RP; i++) a[i] = 0.0f;
#pragma unroll
    for (int q = 0; q < K; q++)
#pragma unroll
        for (int i = 0; i < R; i++)
            if (q < K - 1 || last) {
                const float d = v[i][q] - base[i];
                a[i] += d;
                a[RP + i] = fmaf(d, d, a[RP + i]);
            }
    ck_put<2 * RP>(P, ck_warp_scatter<2 * RP>(a, lane), lane, warp);
}

// h = fmaf(g, y, r) of row i's K columns into v[i] (the last step only where `last`; 0 past D).
template <typename TB, int R, int K, int T>
__device__ __forceinline__ void rc_row_in(float (&v)[R][K], int i, const rc_mod<T, K> &mod, const unsigned char *rs,
                                          const unsigned char *ys, bool last)
{
#pragma unroll
    for (int q = 0; q < K; q++)
        v[i][q] = q < K - 1 || last ? fmaf(mod.g[q], ck_ld<TB>(ys + 2 * q * T), *reinterpret_cast<const float *>(rs + 4 * q * T))
                                    : 0.0f;
}

// Row i's h over r (fp32) and out over y (TB) in the stage.
template <typename TB, int R, int K, int T>
__device__ __forceinline__ void rc_row_out(const float (&v)[R][K], int i, float base, float rs, float nlr,
                                           const rc_mod<T, K> &mod, unsigned char *rp, unsigned char *yp, bool last)
{
#pragma unroll
    for (int q = 0; q < K; q++)
        if (q < K - 1 || last) {
            *reinterpret_cast<float *>(rp + 4 * q * T) = v[i][q];
            ck_st<TB>(yp + 2 * q * T, fmaf(fmaf(v[i][q] - base, rs, nlr), mod.a[q], mod.b[q]));
        }
}

// ---- the kernel -----------------------------------------------------------------------------
template <typename TB, int T, int K, int R>
__global__ void __launch_bounds__(T, LNMOD_RES_CHUNK_MINB(T)) rc_fwd_kernel(res_params p, rc_args c)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    static_assert(sizeof(TB) == 2 && R >= 1 && R <= 4 && T % 64 == 0 && T <= 512, "shape");
    constexpr int NW = T / 32, RP = R > 2 ? 4 : R, PW = 2 * RP * NW; // PW: floats of a chunk's parts
    unsigned char *sm = reinterpret_cast<unsigned char *>(RC_SMEM);
    uint64_t *full = reinterpret_cast<uint64_t *>(sm + (int64_t)c.NS * c.stage);
    int *tk = reinterpret_cast<int *>(full + LNMOD_RES_CHUNK_MAX_NS); // the chunk in each stage
    float *P = reinterpret_cast<float *>(tk + LNMOD_RES_CHUNK_MAX_NS), *P2 = P + 2 * PW;
    const int t = (int)threadIdx.x, lane = t & 31, warp = t >> 5, D = (int)p.D;
    const float invD = 1.0f / (float)D;
    const bool last = t < D - (K - 1) * T; // step K - 1 has a column for this thread
    // Thread 0's claims: `next`, the chunk of the next stage it fills; `done` once it has given a
    // stage the end (a claim >= nchunks: every later claim is too).
    int64_t next = 0;
    bool done = false;
    if (t == 0) {
        for (int s = 0; s < c.NS; s++) ck_mbar_init(&full[s], 1);
        ck_fence_async(); // the initialised barriers, seen by the bulk copies
        next = ck_ticket(c.ticket);
        for (int s = 0; s < c.NS - 2 && !done; s++)
            done = rc_fill(p, R, next, c, sm + (int64_t)s * c.stage, &full[s], &tk[s]);
    }
    __syncthreads();
    rc_mod<T, K> mod;
    mod.r = mod.end = -1; // loaded before the first row
#pragma unroll
    for (int q = 0; q < K; q++) mod.g[q] = mod.a[q] = mod.b[q] = 0.0f;
    rc_geo prev(p, R, 0); // chunk k - 1 (its store follows barrier A_k)
    int s = 0;            // stage of chunk k (k mod NS) and the parity of its use
    unsigned par = 0;
    int k = 0;
    for (;; k++) {
        if (t == 0 && !done) { // refill the stage of chunk k - 2
            const int s2 = s >= 2 ? s - 2 : s - 2 + c.NS;
#ifndef FV2_EMU_PLANT_RCRING
            ck_bulk_wait_read0();
#endif
            ck_fence_async();
            done = rc_fill(p, R, next, c, sm + (int64_t)s2 * c.stage, &full[s2], &tk[s2]);
        }
        ck_mbar_wait(&full[s], par);
        const int ci = tk[s]; // uniform: written before the arrival the wait saw
        if (ci >= c.nchunks) break;
        const rc_geo g(p, R, (int64_t)ci * R);
        unsigned char *rs = sm + (int64_t)s * c.stage + g.sr, *ys = sm + (int64_t)s * c.stage + c.slot_r + g.sy;
        unsigned char *rt = rs + 4 * t, *yt = ys + 2 * t; // element (i, col): rs + 4 (i D + col)
        float v[R][K], base[R];
#pragma unroll
        for (int i = 0; i < R; i++) base[i] = *reinterpret_cast<const float *>(rs + 4 * i * D); // the pivots
        const bool within = g.r0 >= mod.r && g.r0 + g.nr <= mod.end; // uniform
        if (within) {
#pragma unroll
            for (int i = 0; i < R; i++) rc_row_in<TB, R, K, T>(v, i, mod, rt + 4 * i * D, yt + 2 * i * D, last);
        } else { // a row leaves the run: its modulation first
#pragma unroll
            for (int i = 0; i < R; i++) {
#ifdef FV2_EMU_PLANT_RCRUN
                if (i == 0) mod.at(p, g.r0, t);
#else
                if (i < g.nr) mod.at(p, g.r0 + i, t);
#endif
                rc_row_in<TB, R, K, T>(v, i, mod, rt + 4 * i * D, yt + 2 * i * D, last);
            }
        }
        float *Pk = P + (k & 1) * PW; // the parts alternate: one barrier a chunk
        rc_sums<R, K, RP>(v, base, last, Pk, lane, warp);
#ifdef FV2_EMU_PLANT_RCBAR
        if (k > 0 && warp == 0) rc_store(p, prev, sm + (int64_t)(s ? s - 1 : c.NS - 1) * c.stage, c.slot_r, lane);
        __syncthreads();
#else
        __syncthreads(); // A_k: the parts of chunk k; the h and out of chunk k - 1
        if (k > 0 && warp == 0) rc_store(p, prev, sm + (int64_t)(s ? s - 1 : c.NS - 1) * c.stage, c.slot_r, lane);
#endif
        // lane l: row l % RP's sum of d (l % 2RP < RP) or of d^2, its pair (lane l ^ RP) the other
        float sx = ck_gather<2 * RP, NW>(Pk, lane), sy = __shfl_xor_sync(0xffffffffu, sx, RP);
        float sd = (lane & RP) ? sy : sx, sq = (lane & RP) ? sx : sy;
        // The pivot far from a row's mean (M2 would lose more than 8x to cancellation): the
        // sums again around mu = pivot + lo, from the registers (uniform: every warp sees them).
        if (__any_sync(0xffffffffu, (lane & (RP - 1)) < g.nr && sd * (sd * invD) > 0.888f * sq)) {
#pragma unroll
            for (int i = 0; i < R; i++) base[i] += __shfl_sync(0xffffffffu, sd * invD, i);
            rc_sums<R, K, RP>(v, base, last, P2, lane, warp);
            __syncthreads(); // B_k (rare): P2 is rewritten only after a later A, after every read
            sx = ck_gather<2 * RP, NW>(P2, lane);
            sy = __shfl_xor_sync(0xffffffffu, sx, RP);
            sd = (lane & RP) ? sy : sx;
            sq = (lane & RP) ? sx : sy;
        }
        const float lo_l = sd * invD, rs_l = rsqrtf(fmaxf((sq - sd * lo_l) * invD, 0.0f) + p.eps);
        if (warp == 0 && lane < g.nr) {
            if (p.mean) p.mean[g.r0 + lane] = ck_pivot_of<R>(base, lane) + lo_l;
            if (p.rstd) p.rstd[g.r0 + lane] = rs_l;
        }
        const float nlr_l = -lo_l * rs_l;
        if (g.r0 + g.nr <= mod.end && g.r0 >= mod.r) { // uniform
#pragma unroll
            for (int i = 0; i < R; i++)
                rc_row_out<TB, R, K, T>(v, i, base[i], __shfl_sync(0xffffffffu, rs_l, i), __shfl_sync(0xffffffffu, nlr_l, i),
                                        mod, rt + 4 * i * D, yt + 2 * i * D, last);
        } else {
#pragma unroll
            for (int i = 0; i < R; i++) {
                const float rsi = __shfl_sync(0xffffffffu, rs_l, i), nlri = __shfl_sync(0xffffffffu, nlr_l, i);
                if (i < g.nr) mod.at(p, g.r0 + i, t);
                rc_row_out<TB, R, K, T>(v, i, base[i], rsi, nlri, mod, rt + 4 * i * D, yt + 2 * i * D, last);
            }
        }
        ck_fence_async(); // this thread's h and out, seen by the bulk stores after A_{k+1}
        prev = g;
        s = s + 1 == c.NS ? 0 : s + 1;
        par ^= s == 0 ? 1u : 0u;
    }
    if (k > 0) { // the last chunk's h and out
        __syncthreads();
        if (warp == 0) rc_store(p, prev, sm + (int64_t)(s ? s - 1 : c.NS - 1) * c.stage, c.slot_r, lane);
    }
    if (t == 0) {
        ck_ticket_end(c.ticket); // thread 0 has made its last claim (done)
        ck_bulk_wait0();         // the stores have read the stages (which go with the CTA)
    }
#else // below sm_90: never launched (lnmod_res_chunk_takes)
    (void)p;
    (void)c;
    __trap();
#endif
}

} // namespace lnmod_res_detail

#endif
