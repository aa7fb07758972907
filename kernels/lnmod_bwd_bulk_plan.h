/* lnmod_bwd_bulk_plan.h -- the index math of dtile backward's bulk path (lnmod_bwd_bulk.cu),
 * host and device, pure C so that a host test (test_lnmod_bwd_bulk_plan.c) checks it.
 *
 * The bulk path keeps the backward's deterministic column sums (lnmod_bwd_common.cuh: a
 * group's chunks hold rows s + k, s + k + cpg, ...; partials added by the finalize in a
 * fixed order) and changes three things, all functions of the descriptor alone:
 *   * chunks per group: cpg = max(1, floor(glen / R)), R = clamp(ceil(rows / target), 32,
 *     256) (the common plan rounds up: per frame at 32,760 rows that gave 13 x 21 = 273
 *     chunks, one more wave than 2 CTAs x 132 SMs; this gives 12 x 21 = 252);
 *     target = 256 chunks, 512 above 65,536 rows (where R = 256 would leave e.g. 295
 *     chunks at 75,600 rows: 3 waves of 132 CTAs, 74% full; 510 take 4, 97% full);
 *   * the row shape: exactly two 16-byte vectors a thread (16 bf16 elements), T threads a
 *     group = ceil(nv / 2) rounded up to whole warps, for 32 <= T <= 384 (else the
 *     common dtile path runs);
 *   * G warp groups per CTA share a chunk (lnmod_bulk_fill; per token lnmod_bulk_shape's
 *     G = 4 when T <= 192, else 2): of G in {2, 3, 4} (at most 768 threads a CTA) the one
 *     whose rings hold the most rows ahead on an SM -- CTAs an SM x G x (stages - 1) by
 *     sm_90's register file and shared memory, constants here, never asked of the GPU --
 *     the old G on a tie, then the smaller. Two CTAs of 3 x 128 threads and one of 3 x 224
 *     or 3 x 256 use 24 and 21-24 of the 24 warps an SM holds (at 80 registers) where one CTA
 *     of 4 x 128 or 2 x 224/256 used 16 or 14-16. Group q takes the
 *     chunk's rows number q, q + G, ... (rows r0 + i*cpg, i = q + j*G) into its own column
 *     sums; the G sums are added at the chunk's end in the order 0, 1, .., G-1.
 * So the bits of dscale/dshift depend on the descriptor only, never on the grid or the GPU.
 * Rows and chunks fit 32 bits on this path (lnmod_bulk_plan_ok). */
#ifndef ADALOAD_LNMOD_BWD_BULK_PLAN_H
#define ADALOAD_LNMOD_BWD_BULK_PLAN_H

#include <stdint.h>

#ifdef __CUDACC__
#define LNMOD_BULK_HD __host__ __device__ __forceinline__
#else
#define LNMOD_BULK_HD static inline
#endif

/* The layout values of lnmod_desc.h (kept equal; the host test checks it). */
enum { LNMOD_BULK_SAMPLE = 0, LNMOD_BULK_TOKEN = 1, LNMOD_BULK_FRAME = 2 };

typedef struct {
    int64_t rows, S, L, F; /* rows, rows per sample, frame length, frames per sample */
    int layout;
    int64_t glen, cpg, ngroups, nchunks;
} lnmod_bulk_plan;

/* About this many chunks in all (see above). */
LNMOD_BULK_HD int64_t lnmod_bulk_target(int64_t rows)
{
    return rows > 65536 ? 512 : 256;
}

/* The plan of a descriptor's sizes (S, L: 1 when unused). */
LNMOD_BULK_HD lnmod_bulk_plan lnmod_bulk_make_plan(int64_t rows, int64_t S, int64_t L, int layout)
{
    lnmod_bulk_plan p;
    const int64_t target = lnmod_bulk_target(rows);
    p.rows = rows;
    p.S = S > 0 ? S : 1;
    p.L = L > 0 ? L : 1;
    p.layout = layout;
    p.F = layout == LNMOD_BULK_FRAME ? (p.S + p.L - 1) / p.L : 1;
    p.glen = layout == LNMOD_BULK_TOKEN ? 1 : layout == LNMOD_BULK_FRAME ? p.L : p.S;
    int64_t R = (rows + target - 1) / target;
    if (R < 32) R = 32;
    if (R > 256) R = 256;
#ifdef LNMOD_BULK_PLANT_CEIL
    p.cpg = (p.glen + R - 1) / R; /* planted bug (host test): the common plan's rounding */
#else
    p.cpg = p.glen / R;
#endif
    if (p.cpg < 1) p.cpg = 1;
    p.ngroups = layout == LNMOD_BULK_TOKEN   ? rows
                : layout == LNMOD_BULK_FRAME ? (rows / p.S) * p.F
                                             : rows / p.S;
    p.nchunks = p.ngroups * p.cpg;
    return p;
}

/* Can the 32-bit walk take it: rows below 2^31 and chunks below 2^30. */
LNMOD_BULK_HD int lnmod_bulk_plan_ok(const lnmod_bulk_plan *p)
{
    return p->rows < ((int64_t)1 << 31) && p->nchunks < ((int64_t)1 << 30);
}

/* First row and length of modulation group g. */
LNMOD_BULK_HD void lnmod_bulk_group_rows(const lnmod_bulk_plan *p, int64_t g, int64_t *start, int64_t *len)
{
    if (p->layout == LNMOD_BULK_TOKEN) {
        *start = g;
        *len = 1;
    } else if (p->layout == LNMOD_BULK_FRAME) {
        const int64_t b = g / p->F, j = g - b * p->F;
        const int64_t rest = p->S - j * p->L;
        *start = b * p->S + j * p->L;
        *len = rest < p->L ? rest : p->L;
    } else {
        *start = g * p->S;
        *len = p->S;
    }
}

/* Chunk c: its group, first row and row count (rows r0, r0 + cpg, ...). */
LNMOD_BULK_HD void lnmod_bulk_chunk_rows(const lnmod_bulk_plan *p, int64_t c, int64_t *g, int64_t *r0, int64_t *n)
{
    const int64_t gg = c / p->cpg, k = c - gg * p->cpg;
    int64_t s, len;
    lnmod_bulk_group_rows(p, gg, &s, &len);
    *g = gg;
    *r0 = s + k;
    *n = len > k ? (len - k + p->cpg - 1) / p->cpg : 0;
}

/* The share of warp group q of G in a chunk of n rows from r0: its first row, the step
 * between its rows and how many it has (0 when n <= q). */
LNMOD_BULK_HD void lnmod_bulk_share(const lnmod_bulk_plan *p, int64_t r0, int64_t n, int q, int G, int32_t *first,
                                    int32_t *step, int32_t *count)
{
#ifdef LNMOD_BULK_PLANT_SHARE
    q = q == 1 ? 0 : q; /* planted bug (host test): group 1 walks group 0's rows */
#endif
    *first = (int32_t)(r0 + (int64_t)q * p->cpg);
    *step = (int32_t)(p->cpg * G);
    *count = n > q ? (int32_t)((n - q + G - 1) / G) : 0;
}

/* The row shape for nv 16-byte vectors: threads a group (two vectors each) and groups a
 * CTA. Returns 0 (and sets nothing) where the bulk path does not take the width. */
LNMOD_BULK_HD int lnmod_bulk_shape(int64_t nv, int *threads, int *groups)
{
    const int64_t t = ((nv + 1) / 2 + 31) / 32 * 32;
    if (nv < 2 || t > 384) return 0;
#ifdef LNMOD_BULK_PLANT_GROUPS
    *groups = t <= 256 ? 4 : 2; /* planted bug (host test): a CTA of 4 x 256 threads */
#else
    *groups = t <= 192 ? 4 : 2;
#endif
    *threads = (int)t;
    return 1;
}

/* sm_90's figures the per-sample/frame row shape is planned for (fixed here: the shape, so
 * the bits, are the descriptor's; where the planned shape fits no ring, version 1 runs). */
enum {
    LNMOD_BULK_MAXT = 768,          /* threads a CTA: __launch_bounds__(768, 1), 80 registers */
    LNMOD_BULK_SM_WARPS = 24,       /* warps an SM holds at 80 registers (6 a quarter) */
    LNMOD_BULK_SM_SMEM = 233472,    /* shared memory an SM (228 KB) */
    LNMOD_BULK_OPTIN = 232448,      /* a CTA's opt-in shared memory (227 KB) */
    LNMOD_BULK_CTA_RESERVED = 1024, /* the runtime's shared memory a CTA */
    LNMOD_BULK_MAX_NW = 12          /* warps a group (the kernel's exchange array) */
};

/* float2 statistics slots of a CTA (one per group and stage), rounded up to an even count so
 * that the combine buffer after them is float4-aligned. */
LNMOD_BULK_HD int lnmod_bulk_stat_slots(int G, int NS)
{
    return (G * NS + 1) / 2 * 2;
}

/* Dynamic shared memory of a per-sample/frame CTA (lnmod_bwd_bulk.cu): G rings of NS stages
 * of T x slots 16-byte slots, their statistics, the combine buffer (one float an element of
 * a thread's two vectors) and (sps) the row of (1 + scale), D floats. */
LNMOD_BULK_HD int64_t lnmod_bulk_smem(int G, int NS, int T, int slots, int vec, int64_t D, int sps)
{
    return (int64_t)G * NS * T * 16 * slots + (int64_t)lnmod_bulk_stat_slots(G, NS) * 8 +
           (int64_t)T * 2 * vec * 4 + (sps ? D * 4 : 0);
}

/* ... and its static shared memory: the exchange red[2][G][12] (float2), G x NS mbarriers. */
LNMOD_BULK_HD int64_t lnmod_bulk_smem_static(int G, int NS)
{
    return (int64_t)2 * G * LNMOD_BULK_MAX_NW * 8 + (int64_t)G * NS * 8;
}

/* A per-sample/frame row shape: T threads a group (two vectors each), G groups a CTA (the
 * bits depend on these two), and what sm_90 gives it: NS of {4, 3, 2} with the most CTAs an
 * SM, the deeper on a tie (the launcher's rule; it asks the occupancy API again, the depth
 * changes no result), and the rows in flight an SM, ctas x G x (NS - 1). */
typedef struct {
    int threads, groups, stages, ctas, ahead;
} lnmod_bulk_fit;

/* The fit of G groups of T threads for nv vectors of vec elements (dyw: 16-byte pieces of a
 * dy vector); ctas 0 where no depth fits. Slots and the (1 + scale) row as bk_cfg's. */
LNMOD_BULK_HD lnmod_bulk_fit lnmod_bulk_occupy(int64_t nv, int vec, int dyw, int T, int G)
{
    lnmod_bulk_fit f;
    const int slots = 2 * (1 + dyw), sps = 2 * vec >= 16;
    const int by_regs = LNMOD_BULK_SM_WARPS / (G * T / 32);
    f.threads = T;
    f.groups = G;
    f.stages = f.ctas = f.ahead = 0;
    for (int ns = 4; ns >= 2; ns--) {
        const int64_t sm = lnmod_bulk_smem(G, ns, T, slots, vec, nv * vec, sps) + lnmod_bulk_smem_static(G, ns);
        if (sm > LNMOD_BULK_OPTIN) continue;
        int64_t c = LNMOD_BULK_SM_SMEM / (sm + LNMOD_BULK_CTA_RESERVED);
        if (c > by_regs) c = by_regs;
        if (c > f.ctas) {
            f.ctas = (int)c;
            f.stages = ns;
        }
    }
    f.ahead = f.ctas * G * (f.stages - 1);
    return f;
}

/* The per-sample/frame row shape (lnmod_bwd_bulk.cu): T as lnmod_bulk_shape's, G of
 * {2, 3, 4} with G x T <= 768 holding the most rows ahead, lnmod_bulk_shape's G on a tie,
 * then the smaller G (fewer rounds of the chunk's combine).
 * Returns 0 (and sets nothing) where the bulk path does not take the width or nothing fits. */
LNMOD_BULK_HD int lnmod_bulk_fill(int64_t nv, int vec, int dyw, lnmod_bulk_fit *out)
{
    int T = 0, G0 = 0;
    if (!lnmod_bulk_shape(nv, &T, &G0)) return 0;
#ifdef LNMOD_BULK_PLANT_FILL
    T = (int)((nv / 2 + 31) / 32 * 32); /* planted off-by-one (host test): floor(nv / 2) */
#endif
    lnmod_bulk_fit best = lnmod_bulk_occupy(nv, vec, dyw, T, G0);
    for (int G = 2; G <= 4; G++) {
        if (G == G0 || G * T > LNMOD_BULK_MAXT) continue;
        const lnmod_bulk_fit f = lnmod_bulk_occupy(nv, vec, dyw, T, G);
        if (f.ahead > best.ahead) best = f;
    }
    if (best.ctas < 1) return 0;
    *out = best;
    return 1;
}

/* Per token (lnmod_bwd_bulk_tok.cu): no chunks; group gq of CTA b (G groups a CTA, grid
 * CTAs) takes the rows (b + k * grid) * G + gq, k = 0, 1, ..., whole rows. A ring stage
 * holds, per thread of the group's T, the row of x (VPT slots of 16 bytes), of dy (VPT * dyw:
 * a vector of dy is dyw 16-byte pieces) and of scale (VPT * msw) -- dsh = dy's first slot,
 * sc = scale's. Rows below 2^31 (the walk is 64-bit, the launch checks rows anyway). */
LNMOD_BULK_HD int64_t lnmod_bulk_tok_first(int64_t b, int G, int gq)
{
    return b * G + gq;
}

LNMOD_BULK_HD int64_t lnmod_bulk_tok_step(int64_t grid, int G)
{
#ifdef LNMOD_BULK_PLANT_TOK
    (void)G;
    return grid; /* planted bug (host test): the CTAs' walks overlap */
#else
    return grid * G;
#endif
}

/* 16-byte slots a thread and stage: x, dy, scale. */
LNMOD_BULK_HD int lnmod_bulk_tok_slots(int dyw, int msw)
{
    return 2 * (1 + dyw + msw);
}

/* First slot (of a stage of T threads) of dy's row and of the scale row. */
LNMOD_BULK_HD int lnmod_bulk_tok_dy_at(int T)
{
    return 2 * T;
}

LNMOD_BULK_HD int lnmod_bulk_tok_sc_at(int T, int dyw)
{
#ifdef LNMOD_BULK_PLANT_SCAT
    (void)dyw;
    return 2 * T * 2 - 1; /* planted bug (host test): the scale row overlaps dy's */
#else
    return 2 * T * (1 + dyw);
#endif
}

/* Dynamic shared memory of a per-token CTA: G rings of NS stages and their float2
 * statistics (G * NS of them, rounded up to an even count as the bulk kernel's). */
LNMOD_BULK_HD int64_t lnmod_bulk_tok_smem(int G, int NS, int T, int slots)
{
    return (int64_t)G * NS * T * 16 * slots + (int64_t)(G * NS + 1) / 2 * 2 * 8;
}

#endif
