/* test_verify_cover.c -- do the verify grids reach every path of dtile's forward?
 *
 * A record vouches only for the code its cases ran. dtile's forward picks its path at run time
 * (kernels/lnmod_fwd_v2_plan.h): version 1 at its six widths with vector-aligned data where
 * fv2_v1_keeps says so (D 1536 alone where the chunk kernel takes the problem), else the
 * forward v2 rule's plan where dtile runs it (fv2_runs: the flat chunk kernel first -- 16-bit
 * x and y at the same address mod 16, per sample or per frame --, a warp a row -- G row groups
 * a CTA -- or several warps of one CTA (the lag path), both with the modulation in registers,
 * and the odd kernel), else version 1's generic path (the plans v2 leaves to it: the lag path
 * at few warps a SM, clusters, the streamed modulation).
 * Each set's descriptor and pointer offsets are a function of the set alone (verify_set_desc),
 * so the path each set takes on a device is known here: this test plans every set of the full
 * and quick grids on an H200's description (the device the records are made on) and requires
 *   - the full grid (the record the gate asks for) to reach every path above and each of
 *     version 1's widths;
 *   - the quick grid (what runs under compute-sanitizer: memcheck, racecheck, initcheck,
 *     synccheck) to reach the odd kernel, the chunk kernel (its bulk copies and mbarrier
 *     ring), the tile kernel a warp a row and on several warps, and version 1's generic
 *     path, where a race or a stale ring slot would show.
 * It also prints the count of sets per path. The same for dtile backward's wide shape (16-bit x
 * above D 8192, kernels/lnmod_bwd_v1_shape.h; below it the bulk path and version 1's narrow
 * shape, reached by the product's Wan widths): the full grid must run it with each of its ring
 * depths (4, 3 and 2 stages on an H200), the quick grid at least once. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lnmod_bwd_v1_shape.h"
#include "lnmod_fwd_v2_plan.h"
#include "verify_internal.h"

enum { P_V1, P_V1_GENERIC, P_SOLO_REG, P_LAG_REG, P_ODD, P_CHUNK, P_NONE, NP };
static const char *const PNAME[NP] = {"v1", "v1 generic (v2 leaves the plan)", "warp/row reg", "several warps reg (lag, one CTA)",
                                      "odd", "chunk", "no v2 plan"};

/* The H200's facts as fv2_read_dev reads them (132 SMs, 228 KB shared memory a SM, clusters,
 * 4.8 TB/s from its memory clock and bus width): the same description as the rule's own test. */
static const fv2_dev H200 = {132, 2048, 1024, 233472, 232448, 65536, 32, 8, 4.8e12};

/* The path of dtile's forward for set sp on the H200, as lnmod_fwd_dtile.cu and lnmod_fwd_v2.cu
 * choose it (pointers: 256-byte aligned buffers + VERIFY_GUARD + the set's element offsets). */
static int path_of(const verify_set *sp, int64_t *v1_width)
{
    lnmod_desc d;
    verify_geom g;
    verify_set_desc(sp, &d, &g);
    cr_assert_eq(VERIFY_GUARD % 16, 0);
    const int64_t sx = (int64_t)lnmod_dtype_size(d.x_dtype), sy = (int64_t)lnmod_dtype_size(d.y_dtype);
    const fv2_problem q = fv2_problem_of(&d, !g.off.x && !g.off.y && !g.off.scale && !g.off.shift,
                                         (g.off.x * sx - g.off.y * sy) % 16 == 0);
    if (fv2_v1_keeps(&q, &H200)) {
        *v1_width = q.D;
        return P_V1;
    }
    fv2_plan p;
    if (fv2_make_plan(&q, &H200, &p) != 0) return P_NONE;
    if (!fv2_runs(&p)) return P_V1_GENERIC;
    return p.cls == FV2_ODD ? P_ODD : p.cls == FV2_CHUNK ? P_CHUNK : p.warps == 1 ? P_SOLO_REG : P_LAG_REG;
}

static void count_grid(const char *grid, int64_t n[NP], int v1_seen[6])
{
    static const int64_t widths[6] = {1536, 2048, 3072, 4096, 5120, 8192};
    verify_set *sets = NULL;
    int ns = 0;
    cr_assert_eq(verify_grid_sets(grid, &sets, &ns), VERIFY_OK);
    memset(n, 0, NP * sizeof n[0]);
    memset(v1_seen, 0, 6 * sizeof v1_seen[0]);
    for (int i = 0; i < ns; i++) {
        int64_t w = 0;
        const int k = path_of(&sets[i], &w);
        n[k]++;
        for (int j = 0; j < 6; j++)
            if (k == P_V1 && w == widths[j]) v1_seen[j] = 1;
    }
    free(sets);
    printf("verify grid %s, dtile forward's paths on an H200 (%d sets):", grid, ns);
    for (int k = 0; k < NP; k++) printf(" %s %lld;", PNAME[k], (long long)n[k]);
    printf("\n");
}

Test(cover, full_grid_reaches_every_forward_path)
{
    int64_t n[NP];
    int v1[6];
    count_grid("full", n, v1);
    for (int k = 0; k < P_NONE; k++) cr_expect(n[k] > 0, "the full grid never runs dtile's forward path '%s'", PNAME[k]);
    cr_expect_eq(n[P_NONE], 0, "sets with no v2 plan (version 1's generic path) on the H200");
    /* the product's 2 (fp32 x: its 16-bit sets go to the chunk kernel) and verify_grid.c's 6
     * long samples */
    cr_expect(n[P_SOLO_REG] >= 8, "%lld sets of the full grid take a warp a row (want >= 8)", (long long)n[P_SOLO_REG]);
    /* the product's 2 and verify_grid.c's 9 */
    cr_expect(n[P_LAG_REG] >= 11, "%lld sets of the full grid take the lag path (want >= 11)", (long long)n[P_LAG_REG]);
    for (int j = 0; j < 6; j++) cr_expect(v1[j], "version 1's width %d is never run with aligned data", j);
}

Test(cover, quick_grid_reaches_the_ring_paths)
{
    int64_t n[NP];
    int v1[6];
    count_grid("quick", n, v1);
    cr_expect(n[P_ODD] > 0, "the sanitizers never see the odd kernel");
    cr_expect(n[P_CHUNK] > 0, "the sanitizers never see the chunk kernel (bulk copies, its mbarrier ring)");
    cr_expect(n[P_SOLO_REG] >= 2, "%lld sets of the quick grid take a warp a row (want verify_grid.c's 2)",
              (long long)n[P_SOLO_REG]);
    cr_expect(n[P_LAG_REG] > 0, "the sanitizers never see the lag path (several warps of one CTA: its mbarrier)");
    cr_expect(n[P_V1_GENERIC] > 0, "the sanitizers never see version 1's generic path");
}

/* The wide shape's ring depth for set sp's backward on the H200 (0: another path): 16-byte
 * vectors everywhere (lnmod_bwd_vector_ok: no element offsets, 16-byte modulation strides). */
static int bwd_wide_ns(const verify_set *sp)
{
    lnmod_desc d;
    verify_geom g;
    verify_set_desc(sp, &d, &g);
    const int64_t ms = (int64_t)lnmod_dtype_size(d.mod_dtype);
    if (g.off.x || g.off.y || g.off.scale || g.off.shift || (d.scale_stride * ms) % 16 || (d.shift_stride * ms) % 16)
        return 0;
    const int ns = lnmod_bv1_wide_ns(d.D, (int)lnmod_dtype_size(d.x_dtype), (int)lnmod_dtype_size(d.y_dtype),
                                     d.layout == LNMOD_PER_TOKEN, (size_t)H200.smem_block);
    return ns > 0 && d.D > 12288 ? 4 + ns : ns; /* 32 elements a thread: 6 (ring 2), 7 (ring 3) */
}

static void count_wide(const char *grid, int64_t by_ns[9])
{
    verify_set *sets = NULL;
    int ns = 0;
    cr_assert_eq(verify_grid_sets(grid, &sets, &ns), VERIFY_OK);
    memset(by_ns, 0, 9 * sizeof by_ns[0]);
    for (int i = 0; i < ns; i++) by_ns[bwd_wide_ns(&sets[i])]++;
    free(sets);
    printf("verify grid %s, dtile backward's wide shapes on an H200: 24 elements a thread with a ring of 4 %lld, 3 "
           "%lld, 2 %lld sets; 32 with a ring of 3 %lld, 2 %lld\n",
           grid, (long long)by_ns[4], (long long)by_ns[3], (long long)by_ns[2], (long long)by_ns[7], (long long)by_ns[6]);
}

Test(cover, grids_reach_the_backward_wide_shape)
{
    int64_t n[9];
    count_wide("full", n);
    for (int k = 2; k <= 4; k++) cr_expect(n[k] > 0, "the full grid never runs the backward's wide shape with a ring of %d", k);
    for (int k = 2; k <= 3; k++)
        cr_expect(n[4 + k] > 0, "the full grid never runs the backward's 32-element shape with a ring of %d", k);
    count_wide("quick", n);
    cr_expect(n[2] + n[3] + n[4] > 0, "the sanitizers never see the backward's wide shape");
    cr_expect(n[6] + n[7] > 0, "the sanitizers never see the backward's 32-element shape");
}
