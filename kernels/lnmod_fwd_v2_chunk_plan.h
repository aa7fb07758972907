/* lnmod_fwd_v2_chunk_plan.h -- the flat chunk class of dtile's forward v2 rule (FV2_CHUNK; pure
 * C, host and device). Included by lnmod_fwd_v2_plan.h only, after the types and helpers it
 * uses; the kernel is lnmod_fwd_v2_chunk.cuh. Its design, counts and measurements: the
 * experiment's round 5 (kernels/experiments/2026-12-05-fwd-odd3/README.md; on an H100 93-98%
 * of the copy at odd D, where the odd class's kernel ran 31-45%).
 *
 * The kernel's shape: T threads a CTA (64..512), thread t owning the K = ceil(D / T) columns
 * t, t + T, ... of every row, and chunks of R consecutive rows (one contiguous byte range of
 * x: its 16-byte superset comes into a shared-memory stage by one bulk copy; NS stages make a
 * ring). T is the smallest of 64, 128, 256, 512 that leaves K <= 13, 13, 20, 32: few threads a
 * row, because the per-row reduction costs each warp about the same whatever D (~8
 * instructions a row and value of the reduce-scatter: ~8 T / D an element), and K exactly
 * ceil(D / T), so that every step but the last has a column for every thread. R (rows a
 * chunk): the per-chunk cost (~100 instructions a warp) is spread over R K elements a thread,
 * so R is the most that keeps R K values of x and 2K of modulation in 128 registers without
 * spills (ptxas, sm_90, CUDA 13.0: 16 warps a SM at every T) and leaves >= 4 stages to each of
 * the 512 / T CTAs a SM: R K <= ~52. lnmod_fwd_v2_inst.cuh instantiates every shape of
 * FV2_CHUNK_SHAPES for the four 16-bit dtype triples (x = y bf16 or fp16, modulation fp32 or
 * x's): 56 x 4 kernels.
 *
 * Where it runs (fv2_chunk_eligible): 16-bit x and y at the same address mod 16 (the stage
 * holds x's 16-byte superset and y leaves from the same bytes), 64 <= D <= 16384, modulation
 * per sample or per frame (per token would reload the registers every row), a device with
 * bulk copies (sm_90: its mark here is thread-block clusters, as for the lag path), fewer than
 * 2^31 chunks. The rule picks it first wherever it is eligible but aligned D 512 (fv2_tile_keeps;
 * on an H100 it ran 91-106% of
 * the copy at every width of the sweep, kernels/NOTES.md 2026-12-05f); the tile and odd classes
 * keep the rest (fp32 x or y, per token, x and y at different addresses mod 16, D < 64).
 *
 * Planted bugs for the host test (test_lnmod_fwd_v2_plan.c must fail with each):
 *   -DFV2_PLANT_CHUNKXY     the chunk class taken with x and y at different addresses mod 16
 *   -DFV2_PLANT_CHUNKSTAGE  the stage sized for the chunk's bytes, not for their 16-byte
 *                           superset (a chunk starting mid-word overruns it)
 *   -DFV2_PLANT_GROUPBYTES  fv2_chunk_group forgets the reloads' share of the bytes (groups at
 *                           3,600-row frames, as round 1 of the frame-group experiment did) */
#ifndef ADALOAD_LNMOD_FWD_V2_CHUNK_PLAN_H
#define ADALOAD_LNMOD_FWD_V2_CHUNK_PLAN_H

/* Rows a chunk for K columns a thread (the registers: (84 - 2K) / K, less at K 8-10, 1 where
 * ptxas spilled at R 2). */
#define FV2_CHUNK_R(K)                                                                                    \
    ((K) <= 6 ? 8 : (K) == 7 ? 7 : (K) == 8 ? 6 : (K) <= 10 ? 5 : (K) <= 13 ? 4 : (K) <= 15 ? 3 : (K) <= 21 ? 2 : 1)
/* The instantiated shapes, X(T, K). */
#define FV2_CHUNK_SHAPES(X)                                                                               \
    X(64, 1) X(64, 2) X(64, 3) X(64, 4) X(64, 5) X(64, 6) X(64, 7) X(64, 8) X(64, 9) X(64, 10) X(64, 11)  \
    X(64, 12) X(64, 13) X(128, 7) X(128, 8) X(128, 9) X(128, 10) X(128, 11) X(128, 12) X(128, 13)         \
    X(256, 7) X(256, 8) X(256, 9) X(256, 10) X(256, 11) X(256, 12) X(256, 13) X(256, 14) X(256, 15)       \
    X(256, 16) X(256, 17) X(256, 18) X(256, 19) X(256, 20) X(512, 11) X(512, 12) X(512, 13) X(512, 14)    \
    X(512, 15) X(512, 16) X(512, 17) X(512, 18) X(512, 19) X(512, 20) X(512, 21) X(512, 22) X(512, 23)    \
    X(512, 24) X(512, 25) X(512, 26) X(512, 27) X(512, 28) X(512, 29) X(512, 30) X(512, 31) X(512, 32)
/* CTAs a SM the kernel's __launch_bounds__ asks for: 16 warps (128 registers) at every T. */
#define FV2_CHUNK_MINB(T) (512 / (T))
/* Most columns a thread at each T (the T rule above). */
#define FV2_CHUNK_KMAX(T) ((T) <= 128 ? 13 : (T) == 256 ? 20 : 32)
#define FV2_CHUNK_MIN_D 64    /* a chunk then has >= 128 bytes: an aligned interior to bulk-store */
#define FV2_CHUNK_MAX_D 16384 /* 512 threads x K 32 */
#define FV2_CHUNK_MIN_NS 3    /* one stage computing, one storing, >= 1 loading */
#define FV2_CHUNK_MAX_NS 8    /* the kernel's mbarriers (fv2_chunk_fixed_bytes) */
/* The ticket order (chunks claimed in order from one counter, lnmod_fwd_v2_chunk.cuh) from this
 * many threads a CTA: measured on an H100 (2026-12-06, experiments/2026-12-06-lnmod-ticket
 * round 1) 0.94-1.006 of the static walk's time at every width with T 256 and 512 (chunks of
 * 23-80 KB), but 1.01-1.20 at T 64 and 128 (D <= 1664: chunks of 4-13 KB, 4-8 CTAs a SM,
 * claims 2-6x as frequent), where the static walk stays. */
#define FV2_CHUNK_TICKET_MIN_T 256
#define FV2_CHUNK_REGS 128    /* the estimate: the launch bound's cap; the launcher uses the real count */

/* Threads a CTA for D (0: none instantiated). */
static inline int fv2_chunk_threads(int64_t D)
{
    return D <= 13 * 64 ? 64 : D <= 13 * 128 ? 128 : D <= 20 * 256 ? 256 : D <= 32 * 512 ? 512 : 0;
}

/* The fixed part of a CTA's shared memory after the stages: FV2_CHUNK_MAX_NS mbarriers (64
 * bytes), in the ticket order (T >= FV2_CHUNK_TICKET_MIN_T) as many stage chunk indices (32),
 * the warps' partial sums of d and d^2 of RP (R padded to a power of 2) rows for two chunks,
 * and those of the rare second pass (around the rows' means): 64 (+ 32) + 4 NW (3 2RP) bytes.
 * The static walk's CTAs keep the layout (and so the plans) they had before the ticket order. */
static inline int64_t fv2_chunk_fixed_bytes(int T, int R)
{
    const int RP = R > 4 ? 8 : R > 2 ? 4 : R;
    return 64 + (T >= FV2_CHUNK_TICKET_MIN_T ? 32 : 0) + 4 * (int64_t)(T / 32) * (3 * 2 * RP);
}

/* Can the flat chunk kernel take problem q on device d? 1 eligible, 0 not. */
static inline int fv2_chunk_eligible(const fv2_problem *q, const fv2_dev *d)
{
#ifdef FV2_PLANT_CHUNKXY
    if (d->cluster_max < 2 || q->sx != 2 || q->sy != 2) return 0;
#else
    if (d->cluster_max < 2 || q->sx != 2 || q->sy != 2 || !q->xy16) return 0;
#endif
    if (q->D < FV2_CHUNK_MIN_D || q->D > FV2_CHUNK_MAX_D) return 0;
    if (q->layout != FV2_SAMPLE && q->layout != FV2_FRAME) return 0;
    const int T = fv2_chunk_threads(q->D);
    return fv2_ceil(q->rows, FV2_CHUNK_R(fv2_ceil(q->D, T))) < ((int64_t)1 << 31);
}

/* Makes p the chunk class's shape for q (T, K, R, the stage; unfinished: fv2_chunk_finish sets
 * the ring). Fields: threads T (warps T / 32, one group, no cluster), vpt K, rows_chunk R,
 * slot_bytes the stage (the largest superset of R rows: 2 R D bytes starting up to 15 bytes
 * into a 16-byte word), row_bytes 2 D, nchunks. Call only where fv2_chunk_eligible. */
static inline void fv2_chunk_shape(fv2_plan *p, const fv2_problem *q)
{
    p->cls = FV2_CHUNK;
    p->mode = FV2_MOD_REG; /* the modulation in registers for a run of rows */
    p->vec = 16 / q->sx;
    p->mv = p->lag = p->nbar = 0;
    p->groups = p->cluster = 1;
    p->threads = fv2_chunk_threads(q->D);
    p->warps = p->threads / 32;
    p->vpt = (int)fv2_ceil(q->D, p->threads);
    p->nv = p->nvc = p->vpt;
    p->rows_chunk = FV2_CHUNK_R(p->vpt);
#ifdef FV2_PLANT_CHUNKSTAGE
    p->slot_bytes = (2 * (int64_t)p->rows_chunk * q->D + 15) / 16 * 16;
#else
    p->slot_bytes = (2 * (int64_t)p->rows_chunk * q->D + 15 + 15) / 16 * 16;
#endif
    p->row_bytes = 2 * q->D;
    p->nchunks = fv2_ceil(q->rows, p->rows_chunk);
    p->ticket = p->threads >= FV2_CHUNK_TICKET_MIN_T;
    p->run = q->run;
    p->msize = q->sm;
    p->group = 1;
}

/* Consecutive chunks one ticket claims (the ticket order only). A CTA's successive claims are
 * about grid R rows apart, so where the problem has more than one modulation run (rows sharing a
 * (1 + scale) and shift row) about min(1, grid R / run) of a CTA's chunks start in another run
 * and reload its modulation: 2K loads and converts a thread beside R K elements of work, 2 D sm
 * bytes from L2 beside the chunk's 4 R D bytes of x and y (experiments/2026-12-05-fwd-odd3 round
 * 7). Groups where a quarter of the chunks or more change runs and those reloads are a quarter of
 * the chunks' bytes or more (2 sm min(grid R, run) >= R run), with fp32 modulation (the grouped
 * kernel is instantiated for it alone): then a ticket takes the largest power of 2 of chunks
 * up to a quarter of a run and FV2_CHUNK_MAX_GROUP, so that a CTA reloads about once a group;
 * the grid's concurrent reads stay within grid x group consecutive chunks. Measured on an H100
 * (experiments/2026-12-06-frame-group, round 1, 264 CTAs): where the reloads were a third of the
 * bytes (1,560-row frames, D 2048-5120) groups of 8 took 0.88-0.97 of the time; at a seventh (D
 * 3072, 3,600-row frames) 1.03 -- there the static order already ran at 99% of the copy. Else 1
 * (per sample: runs of >= 32,760 rows; per token: a run is a row). */
#define FV2_CHUNK_MAX_GROUP 8
static inline int fv2_chunk_group(const fv2_plan *p, int64_t grid)
{
    const int64_t R = p->rows_chunk;
    if (!p->ticket || p->msize != 4 || p->run <= 0 || p->run > (p->nchunks - 1) * R || grid * R * 4 < p->run)
        return 1;
#ifndef FV2_PLANT_GROUPBYTES
    const int64_t reach = grid * R < p->run ? grid * R : p->run; /* rows a CTA's claims span, at most a run */
    if (2 * (int64_t)p->msize * reach < R * p->run) return 1;
#endif
    int64_t q = p->run / (4 * R);
#ifdef ADALOAD_EXPLORE_GROUP /* an explore build's fixed group (ci/device_explore.sh) */
    q = ADALOAD_EXPLORE_GROUP;
#endif
    int g = 1;
    while (g < FV2_CHUNK_MAX_GROUP && 2 * (int64_t)g <= q) g *= 2;
    return g;
}

/* Occupancy and ring depth from the kernel's registers and static shared memory: CTAs a SM by
 * threads, registers (rounded to 8 a thread) and CTA slots; then the most stages (<= ns_cap
 * when > 0, else <= FV2_CHUNK_MAX_NS) that let that many CTAs share the SM's shared memory (1
 * KB reserved a CTA), one CTA fewer while fewer than 3 fit. Measured: the most stages (93-160
 * KB in flight a SM on an H200's plans, above the tile rule's target) ran 93-98% of the copy.
 * Fills nstage, smem_bytes, ctas_sm, regs, inflight_sm ((NS - 2) stages loading a CTA) and
 * target_sm (the tile rule's, for comparison). Returns 0, or -1 when not even one CTA with 3
 * stages fits. */
static inline int fv2_chunk_finish(fv2_plan *p, const fv2_dev *d, int regs, int static_smem, int ns_cap)
{
    p->regs = regs;
    p->target_sm = (int64_t)(d->mem_bw * FV2_LATENCY_NS * 1e-9 / (d->sms > 0 ? d->sms : 1));
    int64_t c = d->threads_sm / p->threads;
    const int64_t by_regs = d->regs_sm / ((int64_t)p->threads * ((regs + 7) / 8 * 8));
    if (by_regs < c) c = by_regs;
    if (d->blocks_sm < c) c = d->blocks_sm;
    const int cap = ns_cap > 0 && ns_cap < FV2_CHUNK_MAX_NS ? ns_cap : FV2_CHUNK_MAX_NS;
    const int64_t fixed = fv2_chunk_fixed_bytes(p->threads, p->rows_chunk);
    for (; c >= 1; c--) {
        int64_t room = d->smem_sm / c - 1024 - static_smem - fixed;
        const int64_t cta_room = d->smem_block - static_smem - fixed;
        if (cta_room < room) room = cta_room;
        int64_t ns = room / p->slot_bytes;
        if (ns > cap) ns = cap;
        if (ns >= FV2_CHUNK_MIN_NS) {
            p->nstage = (int)ns;
            p->ctas_sm = (int)c;
            p->smem_bytes = ns * p->slot_bytes + fixed;
            p->inflight_sm = c * (ns - 2) * p->slot_bytes;
            return 0;
        }
    }
    return -1;
}

#endif
