/* bv2_plan.h -- the chunk plan and row walk of dtile backward v2 (experiment; host and device).
 *
 * v2 keeps v1's kind of deterministic column sums (lnmod_bwd_common.cuh) and changes two
 * things that are pure index math, so they live here where a host test can check them:
 *   * chunks per group: cpg = max(1, floor(glen / R)) with v1's R = clamp(ceil(rows/256),
 *     32, 256) (v1 rounds up). So a plan never has more than rows/R <= 256 chunks plus one
 *     per group: per frame (1,560-row frames at 32,760 rows) 12 chunks of 130 rows a frame,
 *     252 in all, instead of 13 of 120 = 273, one more than a grid of 2 CTAs x 132 SMs holds
 *     (v1's second wave, kernels/NOTES.md: 34.5% / 46.8% of copy per frame).
 *   * G warp groups per CTA share a chunk: group q of G takes the chunk's rows number
 *     q, q + G, q + 2G, ... (rows r0 + i*cpg, i = q + j*G), adds them in that order into its
 *     own column sums, and the G sums are added at the chunk's end in the order 0, 1, ..,
 *     G-1. So the bits depend on (descriptor, G, the CTA shape), never on the grid.
 * Everything is in rows/chunks that fit 32 bits (bv2_plan_ok): the per-row cursor is 32-bit.
 */
#ifndef ADALOAD_BV2_PLAN_H
#define ADALOAD_BV2_PLAN_H

#include <stdint.h>

#ifdef __CUDACC__
#define BV2_HD __host__ __device__ __forceinline__
#else
#define BV2_HD static inline
#endif

/* The layout values of lnmod_desc.h (kept numerically equal; checked by the host test). */
enum { BV2_SAMPLE = 0, BV2_TOKEN = 1, BV2_FRAME = 2 };

typedef struct {
    int64_t rows, S, L, F; /* rows, rows per sample, frame length, frames per sample */
    int layout;
    int64_t glen, cpg, ngroups, nchunks;
} bv2_plan;

/* The chunk targets the harness times (bv2_backward's `target`). */
enum { BV2_TARGET_V1 = 256, BV2_TARGET_FINE = 512 };

/* The plan of a descriptor's sizes (S, L: 1 when unused) for about `target` chunks in all
 * (v1: 256; the harness also tries 512, which evens out the waves of a grid of 132 CTAs at
 * 75,600 rows: 295 chunks take 3 waves of 132 CTAs, 74% full; 510 take 4, 97%).
 * R = clamp(ceil(rows/target), 32, 256). The planted bug of the host test
 * (-DBV2_PLANT_CEIL) rounds cpg up as v1 does, which the wave test catches. */
BV2_HD bv2_plan bv2_make_plan(int64_t rows, int64_t S, int64_t L, int layout, int64_t target)
{
    bv2_plan p;
    p.rows = rows;
    p.S = S > 0 ? S : 1;
    p.L = L > 0 ? L : 1;
    p.layout = layout;
    p.F = layout == BV2_FRAME ? (p.S + p.L - 1) / p.L : 1;
    p.glen = layout == BV2_TOKEN ? 1 : layout == BV2_FRAME ? p.L : p.S;
    int64_t R = (rows + target - 1) / target;
    if (R < 32) R = 32;
    if (R > 256) R = 256;
#ifdef BV2_PLANT_CEIL
    p.cpg = (p.glen + R - 1) / R;
#else
    p.cpg = p.glen / R;
#endif
    if (p.cpg < 1) p.cpg = 1;
    p.ngroups = layout == BV2_TOKEN ? rows : layout == BV2_FRAME ? (rows / p.S) * p.F : rows / p.S;
    p.nchunks = p.ngroups * p.cpg;
    return p;
}

/* Can the 32-bit walk take it: rows and chunks below 2^31. */
BV2_HD int bv2_plan_ok(const bv2_plan *p)
{
    return p->rows < ((int64_t)1 << 31) && p->nchunks < ((int64_t)1 << 31);
}

/* First row and length of modulation group g. */
BV2_HD void bv2_group_rows(const bv2_plan *p, int64_t g, int64_t *start, int64_t *len)
{
    if (p->layout == BV2_TOKEN) {
        *start = g;
        *len = 1;
    } else if (p->layout == BV2_FRAME) {
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
BV2_HD void bv2_chunk_rows(const bv2_plan *p, int64_t c, int64_t *g, int64_t *r0, int64_t *n)
{
    const int64_t gg = c / p->cpg, k = c - gg * p->cpg;
    int64_t s, len;
    bv2_group_rows(p, gg, &s, &len);
    *g = gg;
    *r0 = s + k;
    *n = len > k ? (len - k + p->cpg - 1) / p->cpg : 0;
}

/* The share of warp group q of G in a chunk of n rows from r0: its first row, the step
 * between its rows and how many it has (0 when n <= q). */
BV2_HD void bv2_share(const bv2_plan *p, int64_t r0, int64_t n, int q, int G, int32_t *first,
                      int32_t *step, int32_t *count)
{
    *first = (int32_t)(r0 + (int64_t)q * p->cpg);
    *step = (int32_t)(p->cpg * G);
    *count = n > q ? (int32_t)((n - q + G - 1) / G) : 0;
}

/* Vectors per thread and threads per group for nv vectors of VEC elements: at least min_vpt
 * vectors and at most max_e elements a thread, at most max_t threads (a whole number of
 * warps); the fewest idle lanes, then the smaller VPT (v1's rule, bd_shape, with the thread
 * cap and the floor parameters; round 1 used min_vpt 1). 0: none fits. */
static inline int bv2_shape(int64_t nv, int VEC, int max_e, int max_t, int min_vpt, int *threads)
{
    int best = 0;
    int64_t best_waste = INT64_MAX;
#ifdef BV2_PLANT_MINV
    (void)min_vpt; /* planted: the floor ignored, round 1's rule for every configuration */
    for (int vpt = 1; vpt * VEC <= max_e; vpt++) {
#else
    for (int vpt = min_vpt > 1 ? min_vpt : 1; vpt * VEC <= max_e; vpt++) {
#endif
        const int64_t t = ((nv + vpt - 1) / vpt + 31) / 32 * 32;
        if (t > max_t) continue;
        const int64_t waste = t * vpt - nv;
        if (waste < best_waste) {
            best = vpt;
            best_waste = waste;
            *threads = (int)t;
        }
    }
    return best;
}

#endif
