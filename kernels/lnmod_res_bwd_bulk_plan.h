/* lnmod_res_bwd_bulk_plan.h -- the index math of the fused residual op's bulk backward
 * (lnmod_res_bwd_bulk.cu), host and device, pure C so that a host test
 * (test_lnmod_res_bwd_bulk_plan.c, also built with each planted bug, which must fail it) checks it.
 *   * the row shape: D a multiple of 8 (a bf16 row of 16-byte pieces), nq = D/4 quads of 4
 *     columns; thread t of a group owns quads t, t + T, t + 2T, t + 3T (4 a thread: h/dh one
 *     16-byte shared load a quad, d_out/y one 8-byte load, conflict-free); T = ceil(nq/4)
 *     rounded up to whole warps, 32 <= T <= 384; G groups a CTA: 4 when T <= 96, 2 when
 *     T <= 192, else 1 (G x T <= 384: ~168 registers a thread at one CTA an SM);
 *   * the chunks are lnmod's bulk plan's (lnmod_bwd_bulk_plan.h, via res_bulk_walk: rows r0,
 *     r0 + cpg, ..., n of them):
 *     group q takes the chunk's rows number q, q + G, ... (first r0 + q cpg, step G cpg);
 *   * a ring stage holds the row's h (4 B an element), d_out (2), dh (4, when given) and y (2,
 *     with a gate), in that order, each a 16-byte multiple; the row's mean/rstd beside it.
 * The bits of dr, dy, dscale, dshift, dgate are a function of the descriptor and G only. */
#ifndef ADALOAD_LNMOD_RES_BULK_PLAN_H
#define ADALOAD_LNMOD_RES_BULK_PLAN_H

#include <stdint.h>

#include "lnmod_bwd_bulk_plan.h"

#ifdef __CUDACC__
#define LNMOD_RES_BULK_HD __host__ __device__ __forceinline__
#else
#define LNMOD_RES_BULK_HD static inline
#endif

#define LNMOD_RES_BULK_QPT 4   /* quads (4 columns) a thread */
#define LNMOD_RES_BULK_MAXT 384 /* threads a CTA at most */

/* Threads a group and groups a CTA for width D; 0 (nothing set) where the bulk backward does not take D. */
LNMOD_RES_BULK_HD int lnmod_res_bulk_shape(int64_t D, int *threads, int *groups)
{
    if (D < 16 || D % 8 != 0) return 0;
    const int64_t nq = D / 4, t = ((nq + LNMOD_RES_BULK_QPT - 1) / LNMOD_RES_BULK_QPT + 31) / 32 * 32;
    if (t > LNMOD_RES_BULK_MAXT) return 0;
#ifdef LNMOD_RES_BULK_PLANT_GROUPS
    *groups = t <= 128 ? 4 : t <= 192 ? 2 : 1; /* planted bug: 4 x 128 threads */
#else
    *groups = t <= 96 ? 4 : t <= 192 ? 2 : 1;
#endif
    *threads = (int)t;
    return 1;
}

/* Chunks per modulation group of the bulk backward for a plan's rows, rows per sample S, frame
 * length L and layout (lnmod_desc's values): lnmod's bulk rule (lnmod_bulk_make_plan: rounded
 * down, ~512 chunks in all above 65,536 rows), so one sample of 75,600 rows makes 510 chunks --
 * 4 waves of 132 one-CTA-an-SM CTAs, 97% full -- where the common plan's 296 made 3 waves, the
 * last 24% full (the fused op's backward at 80.6-83.1% of copy there, 2026-12-04). */
LNMOD_RES_BULK_HD int64_t lnmod_res_bulk_cpg(int64_t rows, int64_t S, int64_t L, int layout)
{
#ifdef LNMOD_RES_BULK_PLANT_PLAN
    /* planted bug: the common plan (lnmod_bwd_plan: 256-chunk target, rounded up) */
    const int64_t g = layout == LNMOD_BULK_TOKEN ? 1 : layout == LNMOD_BULK_FRAME ? L : S;
    int64_t R = (rows + 255) / 256;
    R = R < 32 ? 32 : R > 256 ? 256 : R;
    return (g + R - 1) / R;
#else
    return lnmod_bulk_make_plan(rows, S, L, layout).cpg;
#endif
}

/* 1 when every chunk of the bulk plan of (S, L, layout) with cpg chunks a group holds at
 * least one row: every group is at least cpg rows long (per frame the short last frame of a
 * sample is the one to check). The affine norm's column sums (LNMOD_RES_AFFINE: dweight, dbias
 * over all rows) are added over every chunk of the walk, so the bulk backward takes an affine
 * descriptor only where this holds (a chunk without rows would leave its partials unwritten). */
LNMOD_RES_BULK_HD int lnmod_res_bulk_chunks_full(int64_t S, int64_t L, int layout, int64_t cpg)
{
    if (cpg <= 1) return 1;
    if (layout == LNMOD_BULK_TOKEN) return 0;
    S = S > 0 ? S : 1;
    if (layout != LNMOD_BULK_FRAME) return S >= cpg;
    L = L > 0 ? L : 1;
#ifdef LNMOD_RES_BULK_PLANT_FULL
    const int64_t last = L; /* planted bug: the short last frame forgotten */
#else
    const int64_t last = S % L == 0 ? L : S % L;
#endif
    return (L < last ? L : last) >= cpg;
}

/* Group q of G in a chunk of n rows from r0, cpg apart: first row, step, count (0 when n <= q). */
LNMOD_RES_BULK_HD void lnmod_res_bulk_share(int64_t r0, int64_t n, int64_t cpg, int q, int G, int64_t *first, int64_t *step,
                                int64_t *count)
{
#ifdef LNMOD_RES_BULK_PLANT_SHARE
    *first = r0 + (int64_t)q; /* planted bug: the rows' spacing forgotten */
#else
    *first = r0 + (int64_t)q * cpg;
#endif
    *step = cpg * G;
    *count = n > q ? (n - q + G - 1) / G : 0;
}

/* Byte offsets in a stage of the row's h, d_out, dh, y, and the stage's size (16-byte multiples). */
typedef struct {
    int64_t h, dout, dh, y, bytes;
} lnmod_res_bulk_stage;

LNMOD_RES_BULK_HD lnmod_res_bulk_stage lnmod_res_bulk_stage_of(int64_t D, int has_dh, int has_gate)
{
    lnmod_res_bulk_stage s;
    s.h = 0;
    s.dout = 4 * D;
    s.dh = 6 * D;
#ifdef LNMOD_RES_BULK_PLANT_STAGE
    s.y = 6 * D + (has_dh ? 2 * D : 0); /* planted bug: dh taken as 2 bytes an element */
#else
    s.y = 6 * D + (has_dh ? 4 * D : 0);
#endif
    s.bytes = s.y + (has_gate ? 2 * D : 0);
    return s;
}

/* Dynamic shared memory of a CTA: G rings of NS stages, then (G > 1) the combine buffer of one
 * column sum (LNMOD_RES_BULK_QPT x 4 floats a thread). */
LNMOD_RES_BULK_HD int64_t lnmod_res_bulk_smem(int G, int NS, int T, int64_t stage_bytes)
{
    return (int64_t)G * NS * stage_bytes + (G > 1 ? (int64_t)T * LNMOD_RES_BULK_QPT * 4 * 4 : 0);
}

/* The deepest ring of 3 or 2 stages whose CTA fits `avail` bytes of shared memory (dynamic,
 * after the kernel's static part); 0 when none. */
LNMOD_RES_BULK_HD int lnmod_res_bulk_stages(int G, int T, int64_t stage_bytes, int64_t avail)
{
    for (int ns = 3; ns >= 2; ns--)
        if (lnmod_res_bulk_smem(G, ns, T, stage_bytes) <= avail) return ns;
    return 0;
}

#endif
