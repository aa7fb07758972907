/* lnmod_bwd_v1_shape.h -- the row shape of dtile backward's version 1 fused path
 * (lnmod_bwd_dtile.cu), pure C so that a host test (verify/test_verify_cover.c) knows which
 * sets of the verify grids take it.
 *
 * A CTA of T threads owns a row; thread t owns the 16-byte vectors t, t + T, ... (VPT of
 * them, VPT x VEC elements, VEC = 16 / sizeof x), the same columns for every row of a chunk,
 * its column sums in registers. The shape: VPT x VEC <= 16 (LNMOD_BV1_MAX_E) and T a whole
 * number of warps <= 512, the fewest idle lanes, then the smaller VPT -- so D <= 8192. Above,
 * 16-bit x not per token may take the wide shape: VPT 3 (24 elements, LNMOD_BV1_WIDE_E, D
 * <= 12288) with (1 + scale) in this thread's slots of shared memory instead of registers
 * (ptxas: 120-127 registers at 512 threads, no spills), one CTA an SM and a ring of 4, 3 or 2
 * stages beside those slots in the per-CTA opt-in (lnmod_bv1_wide_stages); above 12288, VPT 4
 * (32 elements, D <= 16384; 128 registers, no spills), its ring of 2 fitting with 16-bit dy only. */
#ifndef ADALOAD_LNMOD_BWD_V1_SHAPE_H
#define ADALOAD_LNMOD_BWD_V1_SHAPE_H

#include <stddef.h>
#include <stdint.h>

enum {
    LNMOD_BV1_MAX_T = 512, /* threads per CTA at most (640 measured slower at D = 5120) */
    LNMOD_BV1_MAX_E = 16,  /* elements per thread at most (register budget) */
    LNMOD_BV1_WIDE_E = 24, /* the wide shape's elements per thread (16-bit x only) */
    LNMOD_BV1_WIDER_E = 32, /* ... and where 24 do not reach (D > 12288) */
};

/* The best VPT from vpt0 up with VPT x vec <= max_e (0: none), its T in *threads. */
static inline int lnmod_bv1_shape_upto(int64_t nv, int vec, int vpt0, int max_e, int *threads)
{
    int best = 0;
    int64_t best_waste = INT64_MAX;
    for (int vpt = vpt0; vpt * vec <= max_e; vpt++) {
        const int64_t t = ((nv + vpt - 1) / vpt + 31) / 32 * 32;
        if (t > LNMOD_BV1_MAX_T) continue;
        const int64_t waste = t * vpt - nv;
        if (waste < best_waste) {
            best = vpt;
            best_waste = waste;
            *threads = (int)t;
        }
    }
    return best;
}

/* VPT and T for nv vectors of vec elements (a function of D and the dtypes only); tok: per
 * token (no wide shape there: its ring holds the scale rows too). 0 when no shape fits. */
static inline int lnmod_bv1_shape(int64_t nv, int vec, int tok, int *threads)
{
    int best = lnmod_bv1_shape_upto(nv, vec, 1, LNMOD_BV1_MAX_E, threads);
    if (best > 0 || vec != 8 || tok) return best;
    best = lnmod_bv1_shape_upto(nv, vec, 3, LNMOD_BV1_WIDE_E, threads);
    return best > 0 ? best : lnmod_bv1_shape_upto(nv, vec, 4, LNMOD_BV1_WIDER_E, threads);
}

/* The wide shape's ring depth: 4, 3 or 2 stages of stage bytes beside the sps bytes of
 * (1 + scale) in the per-CTA opt-in (less 1 KB for the kernel's static shared memory); 0 when
 * none fits. */
static inline int lnmod_bv1_wide_stages(size_t stage, size_t sps, size_t optin)
{
    for (int ns = 4; ns >= 2; ns--)
        if ((size_t)ns * stage + sps + 1024 <= optin) return ns;
    return 0;
}

/* The wide shape's depth for D with x and y of xsize and ysize bytes (per sample or frame),
 * on a device of optin bytes a CTA: 0 when D takes the narrow shape, no shape, or no ring
 * fits. A stage is T x (16 x VPT x (1 + dy's 16-byte pieces a vector) + 8 for mean/rstd). */
static inline int lnmod_bv1_wide_ns(int64_t D, int xsize, int ysize, int tok, size_t optin)
{
    const int vec = 16 / xsize;
    int T = 0;
    const int vpt = D % vec == 0 ? lnmod_bv1_shape(D / vec, vec, tok, &T) : 0;
    if (vpt * vec <= LNMOD_BV1_MAX_E) return 0;
    const int dyw = vec * ysize / 16;
    const size_t stage = (size_t)T * (size_t)(16 * vpt * (1 + dyw) + 8);
    return lnmod_bv1_wide_stages(stage, (size_t)T * (size_t)(vpt * vec) * sizeof(float), optin);
}

#endif
