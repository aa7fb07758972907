// lnmod_fwd_v2_chunk.cuh -- the flat chunk kernel of dtile's forward v2 (class FV2_CHUNK of
// lnmod_fwd_v2_plan.h, its shape rule in lnmod_fwd_v2_chunk_plan.h; included inside namespace
// fv2 by lnmod_fwd_v2_kern.cuh; the bulk copies and row sums it shares with the fused residual
// op's chunk kernel are lnmod_chunk_ring.cuh's). 16-bit x and y at the same address mod 16,
// modulation per sample or per frame (fp32 or 16-bit), 64 <= D <= 16384; sm_90 (bulk copies).
// Measured in the experiment's round 5 (kernels/experiments/2026-12-05-fwd-odd3/): 93-98% of
// the copy at odd D on an H100, where the odd kernel (lnmod_fwd_v2_odd.cuh) ran 31-45%.
//
// Why: the odd kernel walks 16-byte windows whose contents move with the row's phase, so every
// element pays masks and shifts (~57 thread instructions an element for its register variant).
// Here nothing moves with the phase (~13-15 an element):
//   * a chunk is R consecutive rows = one contiguous byte range of x. Its 16-byte-aligned
//     superset comes into a shared-memory stage by ONE bulk copy (cp.async.bulk, the
//     mbarrier counting its bytes); NS stages make a ring, NS - 2 chunks loading while one
//     is computed and one is being stored. Persistent CTAs take the chunks in order from one
//     ticket counter (the kernel's `ticket`: two 64-bit words of the forward workspace, zero at the
//     launch and zeroed again by the last CTA to end): thread 0 claims a stage's chunk when it
//     refills the stage, and the next claim at once; the index goes beside the stage's mbarrier,
//     and a claim past the last chunk arrives there with no bytes (the CTA's end). A static walk
//     (chunks blockIdx.x + k gridDim.x) lets the CTAs drift apart and open many windows of x and
//     y at once (experiments/2026-12-06-stream-probe: 7.5 points of an H200's copy for a copy).
//     The static walk stays at T < FV2_CHUNK_TICKET_MIN_T (CTAs of 64 and 128 threads, whose
//     many small chunks lost to the claims; fv2_plan::ticket 0, `ticket` null): the
//     claims are blockIdx.x, + gridDim.x, ... (compile-time: ck_claim).
//     Per frame, where a CTA's claims would land in another frame nearly every time, a ticket
//     names a group of 2^lg consecutive chunks (chunk_kernel<..., int>, launched where
//     fv2_chunk_group > 1: fp32 modulation, the plan's rule), so that the CTA reloads the
//     frame's modulation about once a group, not once a chunk. chunk_kernel<...> without that
//     parameter, every other launch, is the code before groups (ck_claim's overloads).
//   * thread t owns the columns t, t + T, ..., t + (K - 1) T of every row: its (1 + scale) and
//     shift stay in 2K fp32 registers for the whole modulation run. Element (i, c) of the
//     chunk sits at byte soff + 2 (i D + c) of the stage (soff: the chunk's start mod 16), so a
//     warp reads 32 consecutive 16-bit elements: one conflict-free wavefront, no shift, no mask
//     but the row's end (K = ceil(D / T): only the last step has one, and a warp without a
//     column there skips it).
//   * statistics in one pass over the R K values a thread keeps in registers (fp32 d = x -
//     pivot, the pivot the row's first element: a constant row gives 0 exactly): the sums of
//     d and d^2 of R rows (2R values) reduced over the CTA -- a reduce-scatter in the warp
//     (2R - 1 + log2(32 / 2RP) shuffles, not 10 R), one barrier, then every warp sums the
//     warps' parts alike (lane l: value l mod 2RP) and the row lanes compute lo = sum d / D,
//     M2 = sum d^2 - lo sum d, rstd = rsqrt(M2 / D + eps), broadcast (2R shuffles). When a
//     row's pivot is far from its mean (n lo^2 > 0.888 sum d^2: M2 would lose more than 8x
//     to cancellation -- a pivot on an outlier), the whole chunk takes a second pass around
//     the mean, as the reference's two passes (uniform: every warp sees the same sums): d
//     rebased on mu = pivot + lo (x reloaded from the stage), its sums again, so that the
//     mean (mu + sum d / D) and y carry no error of the far pivot's large sums.
//   * y is written in place into the stage (each thread over the elements it read), fenced
//     for the async proxy; after the next chunk's barrier warp 0 stores it: lane 0 bulk-stores
//     the chunk's aligned 16-byte interior, lanes 16..31 the <= 7 + 7 edge elements whose
//     16-byte words the neighbouring chunks share (a bulk store of the whole word would
//     overwrite them).
//
// Per chunk k (barrier A_k; everything else in flight):
//   top      thread 0: cp.async.bulk.wait_group.read 0 (chunk k-2's store has read its
//            stage), then the bulk load of chunk k + NS - 2 into that stage;
//            every thread: wait for chunk k's stage (mbarrier parity);
//   pass     d into registers, the rows' sums of d and d^2, reduce-scatter -> parts P[k & 1];
//   A_k      __syncthreads: P[k & 1] complete; chunk k-1's y complete (written, fenced) ->
//            warp 0 stores it (lane 0's bulk store committed, the edges, __syncwarp);
//   stats    every warp: the rows' lo, M2 (rarely a second pass: P2, barrier B_k), rstd;
//            mean/rstd of the rows (warp 0);
//   output   y = (d rstd - lo rstd) (1 + scale) + shift into the stage; fence.proxy.async.
// Why it is ordered: the parts alternate between two buffers, so P[k & 1] is rewritten (for
// chunk k + 2) only after A_{k+1}, which every reader of chunk k's parts has passed (they
// read them before their output); P2 likewise is rewritten only after a later A. A stage is
// refilled at the top of chunk k + 2 of its use k: its x was read before A_k, its y written
// before A_{k+1}, its edges read by warp 0 itself before the __syncwarp that precedes thread
// 0's next iteration, and its bulk store (issued after A_{k+1}) has read it by the
// wait_group.read 0 (the only group then in flight). The last chunk's store follows one more
// barrier; thread 0 waits for all stores before it exits (its stages go with the CTA).
// Barriers: __syncthreads (hardware barrier 0) and mbarriers only -- no named barrier
// (ci/kernel_barriers.sh).
// Reads: the superset of the tensor's first and last chunk reaches up to 15 bytes before x
// and after its end, always inside x's own outer 16-byte words (never a fault; the emulation
// checks every bulk load stays there).
// FV2_EMU_PLANT_CHUNKEDGE / _CHUNKRING / _CHUNKBAR / _CHUNKFAR / _CHUNKMEAN: the emulation
// test's planted bugs (the whole 16-byte superset stored in bulk; a stage refilled without
// waiting for its store's read; chunk k-1 stored before the barrier that completes its y; no
// second pass; the second pass of round 5's first version: M2 around lo, neither d nor lo
// rebased on the mean -- the pivot-outlier fault the H100 found); _CHUNKTICK: CTA 1 drops every
// other ticket claim (caught only where the CTAs' claims interleave); _CHUNKGROUP: a grouped
// ticket's first chunk one group on (a group never computed). Never defined in a build.

// Kernel arguments besides the descriptor's: ring stages, bytes a stage, chunks of the problem;
// then, a parameter of its own, the ticket counter (two 64-bit words: the claims, the CTAs ended;
// 0 at the launch, left 0; null: the static walk), so that the static kernels' parameters and
// code stay what they were before the ticket order (the same PTX but the unused pointer).
struct chunk_args {
    int NS, stage, nchunks;
};
struct ck_args : chunk_args { // inside the kernel: both
    unsigned long long *ticket;
};
struct ck_gargs : ck_args { // the grouped kernel's: a ticket names 2^lg consecutive chunks
    int lg;
};
template <typename... G> struct ck_args_of { // the kernel's: ck_args, or ck_gargs with its lg
    using type = ck_args;
};
template <> struct ck_args_of<int> {
    using type = ck_gargs;
};

// ---- modulation and chunk geometry ----------------------------------------------------------
// (1 + scale) and shift of the thread's K columns for the modulation run in registers.
template <typename TM, int T, int K> struct ck_mod {
    float g[K], b[K];
    int64_t end; // first row past the run (-1: nothing loaded yet)
    __device__ __forceinline__ void load(const lnmod_kparams &p, int64_t r, int t)
    {
        int64_t m;
        lnmod_mod_run(p, r, &m, &end);
        const TM *sc = static_cast<const TM *>(p.scale) + m * p.scale_stride;
        const TM *sh = static_cast<const TM *>(p.shift) + m * p.shift_stride;
#pragma unroll
        for (int q = 0; q < K; q++) {
            const int64_t c = t + (int64_t)q * T;
            const bool in = c < p.D;
            g[q] = in ? 1.0f + dt<TM>::to_f(__ldg(sc + c)) : 1.0f;
            b[q] = in ? dt<TM>::to_f(__ldg(sh + c)) : 0.0f;
        }
    }
};

// A chunk: rows r0 .. r0 + nr - 1, bytes [off, off + nr rowb) of x and of y (the same offsets:
// rows are contiguous), sitting at [soff, nb) of their 16-byte superset.
struct ck_geo {
    int64_t r0, off;
    int nr, soff, nb;
    __device__ __forceinline__ ck_geo(const lnmod_kparams &p, int R, int64_t r0_, int64_t off_) : r0(r0_), off(off_)
    {
        nr = p.rows - r0 < R ? (int)(p.rows - r0) : R;
        soff = (int)(((uintptr_t)p.x + (uintptr_t)off) & 15u);
        nb = soff + 2 * nr * (int)p.D;
    }
};

// Thread 0: chunk g's superset into a stage, its bytes counted on the stage's mbarrier.
__device__ __forceinline__ void ck_issue(const lnmod_kparams &p, const ck_geo &g, unsigned char *stage, uint64_t *bar);

// Thread 0: the claim after chunk `cur` (-1: the CTA's first) -- the counter's next ticket
// (TICKET), or the static walk's next chunk. A compile-time choice (T >= FV2_CHUNK_TICKET_MIN_T),
// so the static kernels carry none of the claim's code: with a run-time branch ptxas spilled
// 12 bytes at K 7 (T 64, 128) and those widths ran 1.7-3.1% slower (round 2).
template <bool TICKET> __device__ __forceinline__ int64_t ck_claim(const ck_args &c, int64_t cur)
{
    if constexpr (TICKET) return ck_ticket(c.ticket);
    else return cur < 0 ? (int64_t)blockIdx.x : cur + (int64_t)gridDim.x;
}
// Grouped (always the ticket order): the group's next chunk, else the first chunk of the group
// the next ticket names -- a mask and a shift, no division.
template <bool TICKET> __device__ __forceinline__ int64_t ck_claim(const ck_gargs &c, int64_t cur)
{
    static_assert(TICKET, "groups are of the ticket order");
    const int64_t mask = ((int64_t)1 << c.lg) - 1;
    if (cur >= 0 && ((cur + 1) & mask) != 0) return cur + 1;
#ifdef FV2_EMU_PLANT_CHUNKGROUP
    return (ck_ticket(c.ticket) + 1) << c.lg;
#else
    return ck_ticket(c.ticket) << c.lg;
#endif
}

// Thread 0: stage `stage` gets chunk `next` (its index into *tk, then its bytes; past the last
// chunk an arrival with no bytes), and `next` the following claim. Returns whether this was the end.
template <bool TICKET, typename A>
__device__ __forceinline__ bool ck_fill(const lnmod_kparams &p, int R, int64_t &next, const A &c,
                                       unsigned char *stage, uint64_t *bar, int *tk)
{
    if (next >= c.nchunks) {
        *tk = c.nchunks;
        ck_expect_tx(bar, 0);
        return true;
    }
    *tk = (int)next;
    ck_issue(p, ck_geo(p, R, next * R, next * R * 2 * p.D), stage, bar);
    next = ck_claim<TICKET>(c, next);
#ifdef FV2_EMU_PLANT_CHUNKTICK
    if (blockIdx.x == 1) next = ck_claim<TICKET>(c, next); // CTA 1 drops every other claim
#endif
    return false;
}

__device__ __forceinline__ void ck_issue(const lnmod_kparams &p, const ck_geo &g, unsigned char *stage, uint64_t *bar)
{
    const unsigned n = (unsigned)((g.nb + 15) & ~15);
    ck_expect_tx(bar, n);
    ck_bulk_load(stage, static_cast<const unsigned char *>(p.x) + g.off - g.soff, n, bar);
}

// Chunk g's y (in its stage) to global memory, by warp 0: lane 0 bulk-stores the aligned
// interior [a, b) of the superset (y has x's address mod 16), lanes 16..23 the head elements
// before a, lanes 24..31 the tail elements from b (the 16-byte words shared with the
// neighbouring chunks). The __syncwarp orders the lanes' reads of the stage before lane 0's
// refill of it (at the top of the chunk after next).
__device__ __forceinline__ void ck_store(const lnmod_kparams &p, const ck_geo &g, const unsigned char *stage, int lane)
{
    unsigned char *y0 = static_cast<unsigned char *>(p.y) + g.off - g.soff;
    const int a = (g.soff + 15) & ~15, b = g.nb & ~15; // b > a: nb >= 128
    if (lane == 0) {
#ifdef FV2_EMU_PLANT_CHUNKEDGE
        ck_bulk_store(y0, stage, (unsigned)((g.nb + 15) & ~15));
#else
        ck_bulk_store(y0 + a, stage + a, (unsigned)(b - a));
#endif
        ck_bulk_commit();
    } else if (lane >= 16) {
        const int o = lane < 24 ? g.soff + 2 * (lane - 16) : b + 2 * (lane - 24);
        if (o < (lane < 24 ? a : g.nb))
            *reinterpret_cast<uint16_t *>(y0 + o) = *reinterpret_cast<const uint16_t *>(stage + o);
    }
    __syncwarp();
}

// The rare second pass (the pivot far from a row's mean): the chunk rebased on each row's mean
// mu = pivot + lo (fp32): d := x - mu, reloaded from the stage (their last step only where
// `last`), and the CTA's sums of d and d^2 again. Returns M2 = sum d^2 - c sum d of the lane's
// row (lane % RP) and sets lo_l = c = sum d / D (the mean - mu: small) and mo_l = mu - pivot
// (the old lo: the mean is then (pivot + mo_l) + lo_l, pivot + mo_l being mu exactly). Why
// rebase and not only M2 around lo (round 5's first version): with the pivot ~1e3 from the
// mean, lo = (fp32 sum of D values ~1e3) / D is off by ~1e-4, and y = d rstd - lo rstd then
// cancels two terms ~|lo| rstd = sqrt(D) (71 at D 5119): 1e-5 of absolute error in y, the
// verifier's atol (the H100's check: 1.29x its allowance at D 5119). A barrier inside: called
// by the whole CTA or none.
template <typename TX, int R, int K, int T, int RP, int NW>
__device__ __forceinline__ float ck_second_pass(float (&v)[R][K], const float (&piv)[R], const unsigned char *mine,
                                                int rowb, float invD, float &lo_l, float &mo_l, bool last, float *P2,
                                                int lane, int warp)
{
    float mu[R], b[2 * RP];
#pragma unroll
    for (int i = 0; i < R; i++) mu[i] = piv[i] + __shfl_sync(0xffffffffu, lo_l, i);
    mo_l = lo_l;
#pragma unroll
    for (int i = 0; i < 2 * RP; i++) b[i] = 0.0f;
#pragma unroll
    for (int q = 0; q < K; q++)
#pragma unroll
        for (int i = 0; i < R; i++)
            if (q < K - 1 || last) {
#ifdef FV2_EMU_PLANT_CHUNKMEAN // round 5's first second pass: M2 around lo, d and lo kept
                const float e = v[i][q] - (mu[i] - piv[i]);
                b[RP + i] = fmaf(e, e, b[RP + i]);
#else
                const float e = ck_ld<TX>(mine + i * rowb + 2 * q * T) - mu[i];
                v[i][q] = e;
                b[i] += e;
                b[RP + i] = fmaf(e, e, b[RP + i]);
#endif
            }
    ck_put<2 * RP>(P2, ck_warp_scatter<2 * RP>(b, lane), lane, warp);
    __syncthreads(); // B_k (rare): P2 is rewritten only after a later A, which follows every read
    const float sx = ck_gather<2 * RP, NW>(P2, lane), sy = __shfl_xor_sync(0xffffffffu, sx, RP);
    const float sd = (lane & RP) ? sy : sx, sq = (lane & RP) ? sx : sy;
#ifdef FV2_EMU_PLANT_CHUNKMEAN
    (void)mine;
    (void)rowb;
    (void)invD;
    lo_l = mo_l;
    mo_l = 0.0f;
    return sq + 0.0f * sd;
#else
    lo_l = sd * invD;
    return sq - sd * lo_l;
#endif
}

// Thread 0 at the kernel's start: the stages' mbarriers, then the first NS - 2 chunks -- claimed
// (TICKET) or the static walk's n chunks at rows r0 + k Rg, bytes off + k step.
template <bool TICKET, typename A>
__device__ __forceinline__ void ck_start(const lnmod_kparams &p, int R, const A &c, int n, int64_t Rg,
                                         int64_t step, int64_t r0, int64_t off, int64_t &next, bool &done,
                                         unsigned char *sm, uint64_t *full, int *tk)
{
    for (int s = 0; s < c.NS; s++) mbar_init(&full[s], 1);
    ck_fence_async(); // the initialised barriers, seen by the bulk copies
    if constexpr (TICKET) {
        next = ck_claim<TICKET>(c, -1);
        for (int s = 0; s < c.NS - 2 && !done; s++)
            done = ck_fill<TICKET>(p, R, next, c, sm + (int64_t)s * c.stage, &full[s], &tk[s]);
    } else {
        for (int s = 0; s < c.NS - 2 && s < n; s++)
            ck_issue(p, ck_geo(p, R, r0 + s * Rg, off + s * step), sm + (int64_t)s * c.stage, &full[s]);
    }
}

// Thread 0 before chunk k: stage s2 (chunk k - 2's, its store done reading it) gets the next chunk
// -- the next claim (TICKET) or the static walk's chunk k + NS - 2 (r0, off: chunk k's).
template <bool TICKET, typename A>
__device__ __forceinline__ void ck_refill(const lnmod_kparams &p, int R, const A &c, int s2, int64_t Rg,
                                          int64_t step, int64_t r0, int64_t off, int64_t &next, bool &done,
                                          unsigned char *sm, uint64_t *full, int *tk)
{
#ifndef FV2_EMU_PLANT_CHUNKRING
    ck_bulk_wait_read0();
#endif
    ck_fence_async();
    if constexpr (TICKET) {
        done = ck_fill<TICKET>(p, R, next, c, sm + (int64_t)s2 * c.stage, &full[s2], &tk[s2]);
    } else {
        const int64_t ahead = c.NS - 2;
        ck_issue(p, ck_geo(p, R, r0 + ahead * Rg, off + ahead * step), sm + (int64_t)s2 * c.stage, &full[s2]);
    }
}

// ---- the kernel -----------------------------------------------------------------------------
// K = ceil(D / T): steps 0 .. KF - 1 have a column for every thread, step KF for threads t < lim
// (1 <= lim <= T); a warp with none skips it (all but one warp, or none). TICKET: thread 0 claims
// each stage's chunk (ck_fill), every thread reads its index from tk; the static walk (!TICKET):
// n chunks, chunk k of this CTA at rows r0 + k Rg, bytes off + k step.
// G: empty -- the kernel's parameters and code are those before groups (every launch but the
// grouped ones) -- or one int, lg: a ticket names 2^lg consecutive chunks (fv2_chunk_group > 1;
// T >= 256 and fp32 modulation only: lnmod_fwd_v2_inst.cuh instantiates it there).
template <typename TX, typename TM, typename TY, int T, int K, int R, typename... G>
__global__ void __launch_bounds__(T, FV2_CHUNK_MINB(T)) chunk_kernel(lnmod_kparams p, chunk_args ca, unsigned long long *ticket, G... lg)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    static_assert(sizeof(TX) == 2 && sizeof(TY) == 2 && R >= 1 && R <= 8 && T % 64 == 0 && T <= 512, "shape");
    constexpr int NW = T / 32, RP = R > 4 ? 8 : R > 2 ? 4 : R; // rows padded to a power of 2
    constexpr bool TICKET = T >= FV2_CHUNK_TICKET_MIN_T; // the plan's fv2_plan::ticket
    const typename ck_args_of<G...>::type c{ca, ticket, lg...};
    unsigned char *sm = reinterpret_cast<unsigned char *>(fv2_smem);
    uint64_t *full = reinterpret_cast<uint64_t *>(sm + (int64_t)c.NS * c.stage);
    constexpr int PW = 2 * RP * NW; // floats of one chunk's parts (fv2_chunk_fixed_bytes)
    int *tk = reinterpret_cast<int *>(full + FV2_CHUNK_MAX_NS); // the chunk in each stage (TICKET)
    float *P = reinterpret_cast<float *>(TICKET ? (void *)(tk + FV2_CHUNK_MAX_NS) : (void *)tk), *P2 = P + 2 * PW;
    const int t = (int)threadIdx.x, lane = t & 31, warp = t >> 5, D = (int)p.D, rowb = 2 * D;
    const float invD = 1.0f / (float)D;
    constexpr int KF = K - 1;
    const int lim = D - KF * T;
    const bool last = t < lim, wlast = warp * 32 < lim;
    int64_t next = 0; // thread 0: the chunk of the next stage it fills (its claim)
    bool done = false; // thread 0: a stage has been given the end (every later claim is past it)
    const int n = TICKET || (int)blockIdx.x >= c.nchunks ? 0 : (c.nchunks - 1 - (int)blockIdx.x) / (int)gridDim.x + 1;
    const int64_t Rg = (int64_t)R * gridDim.x, step = Rg * rowb;
    int64_t r0 = (int64_t)blockIdx.x * R, off = r0 * rowb;
    if (t == 0) ck_start<TICKET>(p, R, c, n, Rg, step, r0, off, next, done, sm, full, tk);
    __syncthreads();
    ck_mod<TM, T, K> mod;
    mod.end = -1;
#pragma unroll
    for (int q = 0; q < K; q++) mod.g[q] = mod.b[q] = 0.0f; // loaded before the first row
    ck_geo prev(p, R, r0, off); // chunk k - 1 (its store follows barrier A_k)
    int s = 0; // stage of chunk k (k mod NS) and the parity of its use
    unsigned par = 0;
    int k = 0;
    for (; TICKET || k < n; k++) {
        if (t == 0 && (TICKET ? !done : k + c.NS - 2 < n)) // refill the stage of chunk k - 2
            ck_refill<TICKET>(p, R, c, s >= 2 ? s - 2 : s - 2 + c.NS, Rg, step, r0, off, next, done, sm, full, tk);
        mbar_wait(&full[s], par);
        if constexpr (TICKET) {
            const int ci = tk[s]; // uniform: written before the arrival the wait saw
            if (ci >= c.nchunks) break;
            r0 = (int64_t)ci * R;
            off = r0 * rowb;
        }
        const ck_geo g(p, R, r0, off);
        unsigned char *st = sm + (int64_t)s * c.stage + g.soff; // element (i, col): st + i rowb + 2 col
        unsigned char *mine = st + 2 * t;
        float v[R][K], a[2 * RP], piv[R];
        // one pass: d = x - pivot (the row's first element) into registers; sums of d and d^2
#pragma unroll
        for (int i = 0; i < R; i++) piv[i] = ck_ld<TX>(st + i * rowb);
#pragma unroll
        for (int i = 0; i < 2 * RP; i++) a[i] = 0.0f;
#pragma unroll
        for (int q = 0; q < KF; q++)
#pragma unroll
            for (int i = 0; i < R; i++) {
                v[i][q] = ck_ld<TX>(mine + i * rowb + 2 * q * T) - piv[i];
                a[i] = q ? a[i] + v[i][q] : v[i][q];
                a[RP + i] = q ? fmaf(v[i][q], v[i][q], a[RP + i]) : v[i][q] * v[i][q];
            }
        if (wlast) {
#pragma unroll
            for (int i = 0; i < R; i++) {
                v[i][KF] = last ? ck_ld<TX>(mine + i * rowb + 2 * KF * T) - piv[i] : 0.0f;
                a[i] += v[i][KF];
                a[RP + i] = fmaf(v[i][KF], v[i][KF], a[RP + i]);
            }
        } else {
#pragma unroll
            for (int i = 0; i < R; i++) v[i][KF] = 0.0f;
        }
        float *Pk = P + (k & 1) * PW; // the parts alternate: one barrier a chunk
        ck_put<2 * RP>(Pk, ck_warp_scatter<2 * RP>(a, lane), lane, warp);
#ifdef FV2_EMU_PLANT_CHUNKBAR
        if (k > 0 && warp == 0) ck_store(p, prev, sm + (int64_t)(s ? s - 1 : c.NS - 1) * c.stage, lane);
        __syncthreads();
#else
        __syncthreads(); // A_k: the parts of chunk k; the y of chunk k - 1
        if (k > 0 && warp == 0) ck_store(p, prev, sm + (int64_t)(s ? s - 1 : c.NS - 1) * c.stage, lane);
#endif
        // every warp sums the parts alike: lane l holds row l % RP's sum of d (l % 2RP < RP)
        // or of d^2, and its pair (lane l ^ RP) the other
        const float sx = ck_gather<2 * RP, NW>(Pk, lane), sy = __shfl_xor_sync(0xffffffffu, sx, RP);
        const float sd = (lane & RP) ? sy : sx, sq = (lane & RP) ? sx : sy;
        float lo_l = sd * invD, mo_l = 0.0f; // the row's mean - (pivot + mo_l): mo_l 0 but after
                                             // the second pass
        float m2 = sq - sd * lo_l;
        // Pivot far from the mean (M2 mostly the offset: > 8x cancellation, e.g. an outlier
        // pivot): M2 again around the mean, whole chunk (a uniform branch: every warp alike).
#ifdef FV2_EMU_PLANT_CHUNKFAR
        if (false)
#else
        if (__any_sync(0xffffffffu, (lane & (RP - 1)) < g.nr && sd * lo_l > 0.888f * sq))
#endif
            m2 = ck_second_pass<TX, R, K, T, RP, NW>(v, piv, mine, rowb, invD, lo_l, mo_l, last, P2, lane, warp);
        const float rs_l = rsqrtf(fmaxf(m2 * invD, 0.0f) + p.eps), nlr_l = -lo_l * rs_l;
        if (warp == 0 && lane < g.nr) {
            if (p.mean) p.mean[g.r0 + lane] = (ck_pivot_of<R>(piv, lane) + mo_l) + lo_l;
            if (p.rstd) p.rstd[g.r0 + lane] = rs_l;
        }
        // output: y in place of x, y = ((x - pivot) - lo) rstd (1 + scale) + shift (after the
        // second pass: ((x - mu) - lo) rstd (1 + scale) + shift)
        float rs[R], nlr[R];
#pragma unroll
        for (int i = 0; i < R; i++) {
            rs[i] = __shfl_sync(0xffffffffu, rs_l, i);
            nlr[i] = __shfl_sync(0xffffffffu, nlr_l, i);
        }
        if (g.r0 + g.nr <= mod.end) { // the chunk within the run in registers (uniform)
#pragma unroll
            for (int i = 0; i < R; i++)
#pragma unroll
                for (int q = 0; q < KF; q++)
                    ck_st<TY>(mine + i * rowb + 2 * q * T, fmaf(fmaf(v[i][q], rs[i], nlr[i]), mod.g[q], mod.b[q]));
            if (wlast) {
#pragma unroll
                for (int i = 0; i < R; i++)
                    if (last)
                        ck_st<TY>(mine + i * rowb + 2 * KF * T, fmaf(fmaf(v[i][KF], rs[i], nlr[i]), mod.g[KF], mod.b[KF]));
            }
        } else { // a row leaves the run: the modulation reloaded before it
#pragma unroll
            for (int i = 0; i < R; i++) {
                if (i < g.nr && g.r0 + i >= mod.end) mod.load(p, g.r0 + i, t);
#pragma unroll
                for (int q = 0; q < K; q++)
                    if (q < KF || last)
                        ck_st<TY>(mine + i * rowb + 2 * q * T, fmaf(fmaf(v[i][q], rs[i], nlr[i]), mod.g[q], mod.b[q]));
            }
        }
        ck_fence_async(); // this thread's y, seen by the bulk store after A_{k+1}
        prev = g;
        if constexpr (!TICKET) {
            r0 += Rg;
            off += step;
        }
        s = s + 1 == c.NS ? 0 : s + 1;
        par ^= s == 0 ? 1u : 0u;
    }
    if (TICKET ? k > 0 : n > 0) { // the last chunk's y (as before the ticket order where static)
        __syncthreads();
        if (warp == 0) ck_store(p, prev, sm + (int64_t)(s ? s - 1 : c.NS - 1) * c.stage, lane);
    }
    if (t == 0) {
        if constexpr (TICKET) ck_ticket_end(c.ticket); // thread 0 has made its last claim (done)
        ck_bulk_wait0();         // the stores have read the stages (which go with the CTA)
    }
#else // below sm_90: never launched (fv2_chunk_eligible)
    (void)p, (void)ca, (void)ticket, ((void)lg, ...);
    __trap();
#endif
}
