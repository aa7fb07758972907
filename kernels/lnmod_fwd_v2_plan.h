/* lnmod_fwd_v2_plan.h -- the configuration rule of dtile's forward ("forward v2", issue 21;
 * pure C, host and device). dtile runs version 1 (lnmod_fwd_dtile.cu: six widths compiled as
 * templates) where fv2_v1_keeps (below) says so, and this rule everywhere else
 * (lnmod_fwd_v2.cu launches its plans, lnmod_fwd_v2_kern.cuh / _odd.cuh / _chunk.cuh are the
 * kernels).
 * Its measurements and what was tried: kernels/NOTES.md and kernels/experiments/2026-12-02-fwd-v2/.
 *
 * From the problem (D, rows, layout, element sizes, alignment) and facts read from the device
 * at run time (fv2_dev: SMs, threads, shared memory and registers per SM and per CTA, the
 * largest cluster, the memory bandwidth from the memory clock and bus width), fv2_make_plan
 * picks one configuration (fv2_plan). Nothing here assumes an H200 number.
 *
 * Three classes:
 *   FV2_TILE  D a multiple of the 16-byte vector (VEC = 16 / sizeof(x) elements) and every
 *             pointer and modulation stride 16-byte aligned. A row of nv = D/VEC vectors is
 *             owned by C CTAs (a thread-block cluster) of W warps; CTA c owns the slice
 *             [c*nvc, min(nv, (c+1)*nvc)), nvc = ceil(nv/C), thread t of it the vectors
 *             c*nvc + t + k*T (T = 32W, k < VPT, VPT a compile-time template value), those
 *             past the slice masked. W = C = 1 (a warp per row, no barrier at all) when the row
 *             fits one warp at <= 64 elements a thread (32 for fp32 x); then G warps of a CTA
 *             each own their own rows. Otherwise the row's parts meet through a split
 *             barrier (arrive / wait), with the statistics one row ahead ("lag 1"): on one
 *             CTA one __syncthreads a row (every warp writes its part of row i, syncs, then
 *             merges row i-1; no named barrier: a kernel naming one reserves barriers for
 *             every launch, the warp-a-row plans' too), the cluster barrier on C > 1.
 *             Modulation: REG (fp32 (1+scale) and shift in registers, reloaded when the
 *             modulation row changes) or RING (streamed beside x through the ring) when the
 *             run of rows sharing a modulation row is short: under FV2_RING_RUN_MIN rows (per
 *             token), or under FV2_RING_RUN_GROUPS x the row groups of the grid -- the grid
 *             walks rows NG apart (NG groups), so REG would reload at about NG/run of the rows
 *             (per frame: 1,560-row frames against ~1,450 groups at D1536: nearly every row)
 *             with the load's latency in the row's path. RING falls back to REG when its
 *             ring does not fit.
 *   FV2_ODD   anything else (odd D, D not a multiple of VEC, unaligned pointers or strides,
 *             or a tile ring that does not fit): a CTA of W warps per row reads the row as the
 *             aligned 16-byte windows of x that cover it (absolute addresses: a row starting
 *             mid-window is shifted, its edge elements masked; windows that stick out of the
 *             tensor are read element by element), modulation through the read-only cache one
 *             element at a time, y by 16-byte stores where a window is whole and aligned.
 *   FV2_CHUNK first, wherever the flat chunk kernel is eligible (16-bit x and y at the same
 *             address mod 16, per sample or per frame, 64 <= D <= 16384, a device with bulk
 *             copies): chunks of R rows, each one bulk copy into a stage of a ring, T threads
 *             owning fixed columns of every row, the modulation in registers
 *             (lnmod_fwd_v2_chunk_plan.h, lnmod_fwd_v2_chunk.cuh). The tile and odd classes
 *             above take the rest (fp32 x or y, per token, x and y apart, D < 64, no bulk
 *             copies).
 * The tile and odd classes stream x through a ring of NS slots per row group in shared memory
 * (cp.async), NS chosen so that the bytes in flight per SM cover FV2_LATENCY_NS at the memory
 * bandwidth; the chunk class takes the most stages (<= 8) its CTAs a SM leave room for.
 *
 * Planted bugs for the host test (test_lnmod_fwd_v2_plan.c must fail with each; ctest builds
 * one test binary per bug, expected to fail):
 *   -DFV2_PLANT_VPT      VPT rounded down instead of up (vectors left unowned)
 *   -DFV2_PLANT_ODDWIN   the odd class forgets the window a shifted row straddles
 *   -DFV2_PLANT_CLUSTER  clusters used on a device that has none (cluster_max 1)
 * and those of the chunk class (lnmod_fwd_v2_chunk_plan.h): -DFV2_PLANT_CHUNKXY, _CHUNKSTAGE.
 */
#ifndef ADALOAD_LNMOD_FWD_V2_PLAN_H
#define ADALOAD_LNMOD_FWD_V2_PLAN_H

#include <stdint.h>
#include <string.h>

#include "lnmod_desc.h"

#ifdef __CUDACC__
#define FV2_HD __host__ __device__ __forceinline__
#else
#define FV2_HD static inline
#endif

/* Layout values of lnmod_desc.h (checked equal by the host test). */
enum { FV2_SAMPLE = 0, FV2_TOKEN = 1, FV2_FRAME = 2 };
enum { FV2_TILE = 1, FV2_ODD = 2, FV2_CHUNK = 3 };
enum { FV2_MOD_REG = 1, FV2_MOD_RING = 2, FV2_MOD_LDG = 3 };

/* Rule constants (not device facts). */
#define FV2_LATENCY_NS 1500.0   /* loaded DRAM latency the bytes in flight must cover */
#define FV2_RING_RUN_MIN 16     /* runs shorter than this stream their modulation */
#define FV2_RING_RUN_GROUPS 4   /* ... and runs shorter than this many times the row groups */
#define FV2_MAX_WARPS 8         /* warps of one CTA on a row (W) before a cluster splits it */
#define FV2_MAX_CLUSTER 4       /* CTAs on one row */
#define FV2_MAX_PARTS 32        /* W * C: the parts of a row's statistics */
#define FV2_MIN_WARPS_SM 12     /* warps per SM a several-warp row shape should leave resident */
#define FV2_MIN_NS 2
#define FV2_MAX_NS 8
#define FV2_REG_BASE 72         /* REG: registers besides the modulation (+2 a VPT) */
#define FV2_RING_BASE 80        /* RING: registers (+4 a VPT) */
#define FV2_ODD_REGS 72

typedef struct {
    int sms, threads_sm, threads_block, smem_sm, smem_block, regs_sm, blocks_sm;
    int cluster_max; /* 1: no thread-block clusters (before sm_90) */
    double mem_bw;   /* bytes/s: 2 x memory clock x bus width / 8 */
} fv2_dev;

typedef struct {
    int64_t D, rows;
    int64_t run; /* rows sharing a modulation row: 1 per token, min(L, S) per frame, S per sample */
    int layout;
    int sx, sm, sy; /* element sizes of x, scale/shift, y */
    int aligned;    /* x, y, scale, shift 16-byte aligned and both strides*sm multiples of 16 */
    int xy16;       /* x and y at the same address mod 16 (the chunk class's condition) */
} fv2_problem;

typedef struct {
    int cls, mode;
    int vec;           /* elements of x per 16-byte vector / window */
    int64_t nv;        /* vectors of a row (tile) or most windows a row can touch (odd) */
    int64_t nvc;       /* vectors of one CTA's slice (tile; nv for odd) */
    int vpt;           /* vectors (windows) a thread, per CTA slice */
    int warps;         /* W */
    int cluster;       /* C */
    int groups;        /* G: row groups (warps) of one CTA; > 1 only when W = C = 1 */
    int threads;       /* CTA threads = 32 * W * G */
    int lag;           /* 1: statistics one row ahead of the output (tile, W*C > 1) */
    int nbar;          /* lag on one CTA: 1 one __syncthreads a row (the rule), 0 a CTA-scope
                          mbarrier (the experiment's comparison) */
    int mv;            /* 16-byte words of scale (and of shift) a vector of x needs (RING) */
    int nstage;        /* ring slots per group */
    int64_t slot_bytes;   /* one ring slot of one group */
    int64_t smem_bytes;   /* dynamic shared memory of a CTA */
    int64_t row_bytes;    /* bytes a group reads through the ring per row (its slice) */
    int regs;             /* registers a thread (estimate, or the real count in fv2_finish) */
    int ctas_sm;          /* resident CTAs per SM (estimate from the limits) */
    int64_t inflight_sm;  /* bytes in flight per SM with that */
    int64_t target_sm;    /* what the rule aims at */
    int rows_chunk;       /* chunk class: R, rows a chunk (threads T, vpt K, slot_bytes a stage) */
    int64_t nchunks;      /* chunk class: ceil(rows / R) */
    int ticket;           /* chunk class: chunks claimed in order from the workspace's counter (1) or
                           * walked statically, blockIdx + k gridDim (0): FV2_CHUNK_TICKET_MIN_T */
    int64_t run;          /* chunk class: rows sharing a modulation row (the problem's run) */
    int msize;            /* chunk class: bytes of a modulation element (the problem's sm) */
    int group;            /* chunk class, ticket order: consecutive chunks a claim takes (fv2_chunk_group;
                           * 1 until the launcher knows its grid) */
} fv2_plan;

static inline int fv2_vpt_set(int i) { return i + 1; } /* VPT 1..8 (lnmod_fwd_v2_inst.cuh instantiates each) */

/* Registers a thread is expected to need: (1 + scale) and shift of its elements as fp32 in
 * REG mode, plus addresses, loop state and temporaries (fitted within ~5 to ptxas -v of
 * lnmod_fwd_v2_inst.cuh at sm_90, __launch_bounds__(256, 1): bf16 REG VPT 1/3/4/6/8 -> 93/122/141/183/218,
 * fp32 REG VPT 1/4/8 -> 85/110/152, RING 80-120, odd 52-72; the launcher then uses the
 * kernel's real count). */
FV2_HD int fv2_est_regs(int cls, int mode, int vpt, int vec)
{
    if (cls == FV2_ODD) return FV2_ODD_REGS;
    if (cls == FV2_CHUNK) return 128; /* FV2_CHUNK_REGS: the kernel's launch bound */
    return mode == FV2_MOD_REG ? 2 * vpt * vec + FV2_REG_BASE + 2 * vpt : FV2_RING_BASE + 4 * vpt;
}

/* ---- index math shared by the kernels and the test -------------------------------- */
/* Tile: the vector of row slice c that thread t handles at step k, or -1 when masked. */
FV2_HD int64_t fv2_tile_vec(const fv2_plan *p, int c, int t, int k)
{
    const int64_t v = (int64_t)c * p->nvc + t + (int64_t)k * (32 * p->warps);
    const int64_t end = (int64_t)(c + 1) * p->nvc < p->nv ? (int64_t)(c + 1) * p->nvc : p->nv;
    return v < end ? v : -1;
}
/* Odd: windows of a row whose first element sits `phase` elements into its window. */
FV2_HD int64_t fv2_odd_windows(int64_t D, int vec, int64_t phase) { return (phase + D + vec - 1) / vec; }
/* Odd: element j of the row held at lane e of window w (j = w*vec + e - phase; valid when
 * 0 <= j < D). */
FV2_HD int64_t fv2_odd_elem(int vec, int64_t phase, int64_t w, int e) { return w * vec + e - phase; }

/* The problem of a valid descriptor d whose x, y, scale and shift pointers are all 16-byte
 * aligned (ptrs16 = 1) or not (0), and whose x and y sit at the same address mod 16 (xy16 = 1)
 * or not: the one place a problem is made (the launcher, and the verify grids' coverage test,
 * verify/test_verify_cover.c). */
static inline fv2_problem fv2_problem_of(const lnmod_desc *d, int ptrs16, int xy16)
{
    fv2_problem q;
    q.D = d->D;
    q.rows = d->rows;
    const int64_t S = d->rows_per_sample > 0 ? d->rows_per_sample : 1;
    q.run = d->layout == LNMOD_PER_TOKEN ? 1 : d->layout == LNMOD_PER_FRAME ? (d->frame_len < S ? d->frame_len : S) : S;
    q.layout = (int)d->layout;
    q.sx = (int)lnmod_dtype_size(d->x_dtype);
    q.sm = (int)lnmod_dtype_size(d->mod_dtype);
    q.sy = (int)lnmod_dtype_size(d->y_dtype);
    q.aligned = ptrs16 && (d->scale_stride * q.sm) % 16 == 0 && (d->shift_stride * q.sm) % 16 == 0;
    q.xy16 = xy16 || ptrs16;
    return q;
}

/* ---- where dtile keeps version 1 ------------------------------------------------------ */
/* Version 1's specialized widths (lnmod_fwd_dtile.cu compiles a kernel for each; measured at
 * 84-100% of the copy, kernels/NOTES.md). */
FV2_HD int fv2_v1_width(int64_t D)
{
    return D == 1536 || D == 2048 || D == 3072 || D == 4096 || D == 5120 || D == 8192;
}
/* The plans v2 runs: a warp a row with the modulation in registers (no barrier); several
 * warps of one CTA with the modulation in registers (the lag path, C = 1) where at least two
 * of its CTAs are resident per SM (while one waits at its barrier, the other's loads keep the
 * SM's bytes in flight); and the odd class. The lag path at one CTA a SM, clusters and the
 * streamed modulation (RING) stay with version 1's generic path: on the H200 (2026-12-05, the
 * experiment's rounds 1-2, kernels/NOTES.md; version 1's generic path at 51-59% of the copy,
 * bf16 per sample) the lag path at VPT 5 ran 53-85% with two or more CTAs a SM (W 2-6) and
 * 42% with one (W 7), clusters 37-58%, and RING per token 42-62% where the same kernel with
 * the modulation in registers ran 75-93%. dtile's launcher (and the verify grids' coverage
 * test) ask this. */
static inline int fv2_runs(const fv2_plan *p)
{
    if (p->cls == FV2_ODD || p->cls == FV2_CHUNK) return 1;
    if (p->mode != FV2_MOD_REG || p->cluster != 1) return 0;
    return p->warps == 1 || p->ctas_sm >= 2;
}

/* ---- the rule ---------------------------------------------------------------------- */
static inline int64_t fv2_ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* CTAs per SM from the limits (threads, registers rounded to 8 a thread, shared memory with
 * 1 KB a CTA reserved, CTA slots). */
static inline int fv2_ctas_sm(const fv2_dev *d, int threads, int regs, int64_t smem)
{
    int64_t a = d->threads_sm / threads;
    const int64_t regs_cta = (int64_t)threads * ((regs + 7) / 8 * 8);
    const int64_t b = regs_cta > 0 ? d->regs_sm / regs_cta : a;
    const int64_t c = d->smem_sm / (smem + 1024);
    if (b < a) a = b;
    if (c < a) a = c;
    if (d->blocks_sm < a) a = d->blocks_sm;
    return (int)(a < 0 ? 0 : a);
}

/* Dynamic shared memory of a CTA with ns ring slots per group: the rings, and after them the
 * statistics' parts of three rows (16 bytes each) and an mbarrier (8 bytes, 16 kept) on the
 * lag path. */
static inline int64_t fv2_smem_bytes(const fv2_plan *p, int ns)
{
    return (int64_t)p->groups * ns * p->slot_bytes + (p->lag ? 3 * FV2_MAX_PARTS * 16 + 16 : 0);
}

/* Ring depth and occupancy from a register count: the smallest NS whose bytes in flight per
 * SM reach the target, else the NS with the most in flight. Fills nstage, smem_bytes,
 * ctas_sm, inflight_sm. Returns 0, or -1 when not even the fewest slots fit one CTA. */
static inline int fv2_finish(fv2_plan *p, const fv2_dev *d, int regs)
{
    p->regs = regs;
    p->target_sm = (int64_t)(d->mem_bw * FV2_LATENCY_NS * 1e-9 / (d->sms > 0 ? d->sms : 1));
    if (p->target_sm <= 0) p->target_sm = INT64_MAX; /* no bandwidth known: the most in flight */
    int best_ns = 0, best_ctas = 0;
    int64_t best_if = -1;
    for (int ns = FV2_MIN_NS + p->lag; ns <= FV2_MAX_NS; ns++) {
        const int64_t smem = fv2_smem_bytes(p, ns);
        if (smem > d->smem_block) break;
        const int ctas = fv2_ctas_sm(d, p->threads, regs, smem);
        if (ctas < 1) break;
        const int64_t inflight = (int64_t)ctas * p->groups * (ns - 1 - p->lag) * p->row_bytes;
        if (inflight > best_if) {
            best_if = inflight;
            best_ns = ns;
            best_ctas = ctas;
        }
        if (inflight >= p->target_sm) break;
    }
    if (best_ns == 0) return -1;
    p->nstage = best_ns;
    p->ctas_sm = best_ctas;
    p->inflight_sm = best_if;
    p->smem_bytes = fv2_smem_bytes(p, best_ns);
    return 0;
}

/* Few rows: split a several-warp row over more CTAs while that still leaves SMs idle. */
static inline void fv2_split_few_rows(fv2_plan *p, const fv2_problem *q, const fv2_dev *d)
{
    const int cmax = d->cluster_max < FV2_MAX_CLUSTER ? d->cluster_max : FV2_MAX_CLUSTER;
    while (q->rows * p->cluster < d->sms && p->cluster * 2 <= cmax && p->warps >= 2 &&
           p->warps * p->cluster * 2 <= FV2_MAX_PARTS) {
        p->cluster *= 2;
        p->warps = (p->warps + 1) / 2;
    }
}

/* Tile class: VPT, W, C for nv vectors (see the header comment). */
static inline void fv2_tile_shape(fv2_plan *p, const fv2_problem *q, const fv2_dev *d)
{
    const int64_t nv = p->nv;
    const int emax1 = q->sx == 4 ? 32 : 64; /* elements a thread when one warp owns a row */
    const int cmax = d->cluster_max < FV2_MAX_CLUSTER ? d->cluster_max : FV2_MAX_CLUSTER;
    (void)cmax; /* unused when FV2_PLANT_CLUSTER plants its bug */
    p->warps = p->cluster = 1;
    /* a warp per row up to emax1 elements a thread; streamed modulation: up to VPT 2 (its
     * slots are 3-5 times larger, so one warp's ring would leave few warps per SM) */
    const int64_t vmax1 = p->mode == FV2_MOD_RING ? 2 : emax1 / p->vec;
    if (nv <= 32 * vmax1) {
        int i = 0;
#ifdef FV2_PLANT_VPT
        while (fv2_vpt_set(i) < nv / 32 && i < 7) i++;
#else
        while (32 * (int64_t)fv2_vpt_set(i) < nv && i < 7) i++;
#endif
        p->vpt = fv2_vpt_set(i);
        return;
    }
    /* Several warps, modulation in registers: 40 elements a thread for 16-bit x (VPT 5), 32
     * for fp32 (VPT 8), on W = ceil(nv / 32 VPT) warps of one CTA while W <= FV2_MAX_WARPS.
     * Measured (H200, kernels/NOTES.md, the experiment's round 2): the lag path's speed
     * follows the elements a thread -- VPT 5 at 12 warps a SM 67-86% of the copy, VPT 3-4
     * 50-68% (more warps on a row, each with less to hide the barrier behind), VPT 6-7 33-54%
     * (181-198 registers) -- not the padding the key below minimizes. */
    if (p->mode == FV2_MOD_REG) {
        const int vpt = q->sx == 4 ? 8 : 5;
        const int64_t w = fv2_ceil(nv, 32 * (int64_t)vpt);
        const int regs = fv2_est_regs(FV2_TILE, p->mode, vpt, p->vec);
        if (w <= FV2_MAX_WARPS && w * 32 <= d->threads_block && w * 32 * (int64_t)regs <= d->regs_sm) {
            p->vpt = vpt;
            p->warps = (int)w;
            fv2_split_few_rows(p, q, d);
            return;
        }
    }
    /* Else (streamed modulation, or a row too wide for one CTA): about 32 elements a thread
     * (16-bit x: VPT 3..6; fp32: 5..8; streamed modulation: VPT 2..4, whose slots are 3-5
     * times larger) and C CTAs of W <= FV2_MAX_WARPS warps. Key, in order: at least
     * FV2_MIN_WARPS_SM warps resident per SM (from the estimated registers), the least
     * padding (in sixteenths of the row), the smaller cluster, the smaller VPT (more warps). */
    const int ring = p->mode == FV2_MOD_RING; /* few registers, large slots: thinner threads */
    const int lo = ring ? 2 : q->sx == 4 ? 5 : 3, hi = ring ? 4 : q->sx == 4 ? 8 : 6;
    int64_t best_key = INT64_MAX;
    for (int vpt = lo; vpt <= hi; vpt++) {
        const int64_t wt = fv2_ceil(nv, 32 * (int64_t)vpt);
        for (int64_t c = 1; c <= FV2_MAX_CLUSTER; c *= 2) {
#ifndef FV2_PLANT_CLUSTER
            if (c > cmax) break;
#endif
            const int64_t w = fv2_ceil(wt, c);
            if (w > FV2_MAX_WARPS || w * c > FV2_MAX_PARTS || w * 32 > d->threads_block) continue;
            const int regs = fv2_est_regs(FV2_TILE, p->mode, vpt, p->vec);
            if (w * 32 * (int64_t)regs > d->regs_sm) continue;
            const int64_t waste = 32 * w * c * vpt - nv;
            /* resident warps with the fewest slots (2, 3 on the lag path): registers and rings */
            const int64_t slot = (int64_t)vpt * 32 * w * 16 * (1 + 2 * p->mv);
            const int ns_min = FV2_MIN_NS + (w * c > 1);
            const int warps_sm = fv2_ctas_sm(d, (int)(32 * w), regs, ns_min * slot) * (int)w;
            const int64_t key = (warps_sm < FV2_MIN_WARPS_SM) * 100000 + fv2_ceil(16 * waste, nv) * 1000 + c * 10 + vpt;
            if (key < best_key) {
                best_key = key;
                p->vpt = vpt;
                p->warps = (int)w;
                p->cluster = (int)c;
            }
        }
    }
    if (best_key == INT64_MAX) { /* no tile shape (a wide row without clusters): odd class */
        p->vpt = 0;
        return;
    }
    fv2_split_few_rows(p, q, d);
}

/* The odd class: windows of 16 bytes, W warps (about 4 windows a thread, at most 16 warps). */
static inline void fv2_odd_shape(fv2_plan *p, const fv2_problem *q)
{
    p->cls = FV2_ODD;
    p->mode = FV2_MOD_LDG;
    p->mv = 0;
    p->lag = 0;
    p->nbar = 0;
    p->groups = 1;
#ifdef FV2_PLANT_ODDWIN
    p->nv = fv2_ceil(q->D, p->vec);
#else
    p->nv = fv2_odd_windows(q->D, p->vec, p->vec - 1);
#endif
    p->nvc = p->nv;
    int64_t w = fv2_ceil(p->nv, 32 * 4);
    if (w > 16) w = 16;
    p->warps = (int)w;
    p->cluster = 1;
    p->vpt = (int)fv2_ceil(p->nv, 32 * w);
    p->threads = 32 * p->warps;
    p->slot_bytes = (int64_t)p->vpt * p->threads * 16;
    p->row_bytes = p->nv * 16;
    p->rows_chunk = 0;
    p->nchunks = 0;
    p->ticket = 0;
}

#include "lnmod_fwd_v2_chunk_plan.h"

/* Where a plan goes when its kernel cannot run here (the launcher: not resident with the
 * kernel's real registers, or a tile plan needing clusters on a device without them): a tile
 * plan to the chunk class where it is eligible, else to the odd class; a chunk plan to the odd
 * class. Makes p that plan's shape (the launcher finishes it with the kernel's registers).
 * Returns 0, or -1 for an odd plan (nothing further: version 1 runs the problem). */
static inline int fv2_fallback(fv2_plan *p, const fv2_problem *q, const fv2_dev *d)
{
    if (p->cls == FV2_ODD) return -1;
    if (p->cls == FV2_TILE && fv2_chunk_eligible(q, d)) {
        fv2_chunk_shape(p, q);
        return 0;
    }
    fv2_odd_shape(p, q);
    return 0;
}

/* The fields of a tile plan that follow from nv, mode/mv, VPT, W and C (the experiment's
 * harness builds its alternative configurations with it too). */
static inline void fv2_tile_set(fv2_plan *p)
{
    p->cls = FV2_TILE;
    p->nvc = fv2_ceil(p->nv, p->cluster);
    p->lag = p->warps * p->cluster > 1;
    p->nbar = p->lag && p->cluster == 1;
    if (p->warps > 1 || p->cluster > 1 || p->groups < 1) p->groups = 1;
    p->threads = 32 * p->warps * p->groups;
    p->slot_bytes = (int64_t)p->vpt * 32 * p->warps * 16 * (1 + 2 * p->mv);
    p->row_bytes = p->nvc * 16 * (1 + 2 * p->mv);
}

/* The tile class in a modulation mode. */
static inline void fv2_tile_plan(fv2_plan *p, const fv2_problem *q, const fv2_dev *d, int mode)
{
    p->cls = FV2_TILE;
    p->nv = q->D / p->vec;
    p->mode = mode;
    p->mv = mode == FV2_MOD_RING ? (p->vec * q->sm) / 16 : 0;
    fv2_tile_shape(p, q, d);
    if (!p->vpt) return;
    fv2_tile_set(p);
    if (p->warps == 1 && p->cluster == 1) { /* warps a CTA: the most resident (registers, CTA
                                               slots), ties to the larger CTA */
        const int regs = fv2_est_regs(FV2_TILE, mode, p->vpt, p->vec);
        int best = 0;
        for (int g = 1; g <= 8; g *= 2) {
            const int w = fv2_ctas_sm(d, 32 * g, regs, 0) * g;
            if (w >= best) {
                best = w;
                p->groups = g;
            }
        }
        p->threads = 32 * p->groups;
    }
}

/* The rule without the chunk class: the tile class when it applies and its ring fits
 * (streamed modulation first where the layout asks for it, else or then REG), else the odd
 * class. fv2_make_plan's second step; the experiment's harness and CPU emulation reach the tile
 * kernels at 16-bit widths through it. Returns 0, or -1 when nothing fits. */
static inline int fv2_tile_odd_plan(const fv2_problem *q, const fv2_dev *d, fv2_plan *p)
{
    memset(p, 0, sizeof *p);
    p->vec = 16 / q->sx;
    if (q->aligned && q->D % p->vec == 0) {
        if (q->run < FV2_RING_RUN_MIN) {
            fv2_tile_plan(p, q, d, FV2_MOD_RING);
            if (p->vpt && fv2_finish(p, d, fv2_est_regs(p->cls, p->mode, p->vpt, p->vec)) == 0) return 0;
        }
        fv2_tile_plan(p, q, d, FV2_MOD_REG);
        if (p->vpt && fv2_finish(p, d, fv2_est_regs(p->cls, p->mode, p->vpt, p->vec)) == 0) {
            const int64_t ng = (int64_t)p->ctas_sm * d->sms * p->groups / p->cluster; /* row groups */
            if (q->run < FV2_RING_RUN_MIN || q->run >= FV2_RING_RUN_GROUPS * ng) return 0;
            const fv2_plan reg = *p; /* short runs: stream the modulation when its ring fits */
            fv2_tile_plan(p, q, d, FV2_MOD_RING);
            if (p->vpt && fv2_finish(p, d, fv2_est_regs(p->cls, p->mode, p->vpt, p->vec)) == 0) return 0;
            *p = reg;
            return 0;
        }
    }
    fv2_odd_shape(p, q);
    return fv2_finish(p, d, fv2_est_regs(p->cls, p->mode, p->vpt, p->vec));
}

/* Where the tile class keeps a problem the chunk class could take: aligned D 512. The one
 * width of the sweep where the chunk kernel lost more than the bar's 1% against the tile plan
 * it replaced: H100, same lease, A/B/A (2026-12-05g, the fwd-odd3 experiment's landing try 1),
 * graph-timed, 28.69 -> 29.34 us (B/A 1.023; A-A2 1.001); round 5c had it 106.2 vs 108.7% of
 * copy. Its neighbours went the other way (384 0.961, 640 0.947, 1024 0.934). */
static inline int fv2_tile_keeps(const fv2_problem *q) { return q->aligned && q->D == 512; }

/* The plan of problem q on device d: the chunk class where it is eligible and fits (every
 * 16-bit problem per sample or per frame with x and y at the same address mod 16, D 64..16384,
 * on a device with bulk copies), else fv2_tile_odd_plan. The chunk class comes first because
 * it measured fastest at nearly every width: on an H100 (2026-12-05f, kernels/NOTES.md; bf16
 * per sample, 32,760 rows, one process) 91-106% of the copy at all 90 widths timed from 256
 * to 16384, where the tile class's plans ran 49-109% (ahead of it by more than a point only at
 * 512 (graph-timed), 7040 and 7424; the same-lease A/B/A of the landing kept 512 alone,
 * fv2_tile_keeps). Returns 0, or -1 when nothing fits (the caller falls back to version 1's
 * generic path). */
static inline int fv2_make_plan(const fv2_problem *q, const fv2_dev *d, fv2_plan *p)
{
    const int chunk = fv2_chunk_eligible(q, d);
    if (chunk && fv2_tile_keeps(q) && fv2_tile_odd_plan(q, d, p) == 0 && p->cls == FV2_TILE) return 0;
    memset(p, 0, sizeof *p);
    if (chunk) {
        fv2_chunk_shape(p, q);
        if (fv2_chunk_finish(p, d, FV2_CHUNK_REGS, 0, 0) == 0) return 0;
    }
    return fv2_tile_odd_plan(q, d, p);
}

/* Where dtile runs version 1 instead of this rule: its six widths with every pointer and
 * stride vector-aligned (the bar of issue 21: the widths fast today lose nothing), except where
 * the chunk class takes the problem -- there version 1 keeps D 1536 alone. Same process on an
 * H100 (2026-12-05f): version 1 / the chunk kernel 100.1 / 96.7% of the copy at 1536, 88.2 /
 * 94.0 at 2048, 94.1 / 94.2 at 3072, 94.5 / 93.9 at 4096, 95.9 / 95.6 at 5120, 94.4 / 94.9 at
 * 8192 (on the H200 version 1 ran 83.9 / 91.1 / 88.4 / 92.2 / 88.3 at the last five). */
static inline int fv2_v1_keeps(const fv2_problem *q, const fv2_dev *d)
{
    if (!q->aligned || q->D % (16 / q->sx) != 0 || !fv2_v1_width(q->D)) return 0;
    return q->D == 1536 || !fv2_chunk_eligible(q, d);
}

#endif
