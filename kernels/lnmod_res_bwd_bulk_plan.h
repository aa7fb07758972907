/* lnmod_res_bwd_bulk_plan.h -- the index math of the fused residual op's bulk backward
 * (lnmod_res_bwd_bulk.cu), host and device, pure C so that a host test
 * (test_lnmod_res_bwd_bulk_plan.c, also built with each planted bug, which must fail it) checks it.
 *   * the row shape: D a multiple of 8 (a bf16 row of 16-byte pieces), nq = D/4 quads of 4
 *     columns; thread t of a group owns quads t, t + T, t + 2T, t + 3T (4 a thread: h/dh one
 *     16-byte shared load a quad, d_out/y one 8-byte load, conflict-free); T = ceil(nq/4)
 *     rounded up to whole warps, 32 <= T <= 384; G groups a CTA: 4 when T <= 96, 2 when
 *     T <= 192, else 1 (G x T <= 384: ~168 registers a thread at one CTA an SM);
 *   * the chunks are the existing plan's (lnmod_bwd_plan: rows r0, r0 + cpg, ..., n of them):
 *     group q takes the chunk's rows number q, q + G, ... (first r0 + q cpg, step G cpg);
 *   * a ring stage holds the row's h (4 B an element), d_out (2), dh (4, when given) and y (2,
 *     with a gate), in that order, each a 16-byte multiple; the row's mean/rstd beside it.
 * The bits of dr, dy, dscale, dshift, dgate are a function of the descriptor and G only. */
#ifndef ADALOAD_LNMOD_RES_BULK_PLAN_H
#define ADALOAD_LNMOD_RES_BULK_PLAN_H

#include <stdint.h>

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
