/* bv2_plan_test.c -- host test of v2's index math (bv2_plan.h), no GPU: for every layout and
 * many sizes, the chunks' shares over G = 1..4, 6, 8 groups cover every row of every modulation
 * group exactly once, each group's rows in ascending order, shares differing by at most one
 * row, the modulation row of every row matching lnmod_mod_index; every chunk of a full-length
 * group holds at least R rows (v2 rounds the chunk count down: the 32,760-row per-frame plan
 * has 252 chunks, one wave of 2 x 132 CTAs); the
 * layout values agree with lnmod_desc.h; bv2_shape picks v1's shapes at the bar's D, and
 * round 2's 16-element shapes (96 threads at bf16 D1536) when asked for two vectors a thread.
 * Build and run: build.sh does, and checks that each planted bug fails it (-DBV2_PLANT_CEIL,
 * -DBV2_PLANT_SHARE, -DBV2_PLANT_MINV).
 * Exit 0 passed, 1 failed. */
#include <stdio.h>
#include <stdlib.h>

#include "bv2_plan.h"
#include "lnmod_desc.h"

#ifdef BV2_PLANT_SHARE
#define SHARE_Q(q) ((q) == 1 ? 0 : (q)) /* planted: group 1 walks group 0's rows */
#else
#define SHARE_Q(q) (q)
#endif

static int fails;

static void fail(const char *what, int64_t rows, int64_t S, int64_t L, int lay, int G)
{
    if (fails++ < 10)
        fprintf(stderr, "bv2_plan_test: %s (rows %lld S %lld L %lld layout %d G %d)\n", what,
                (long long)rows, (long long)S, (long long)L, lay, G);
}

static void check_plan(int64_t rows, int64_t S, int64_t L, int lay, int64_t target)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = rows;
    d.D = 8;
    d.rows_per_sample = S;
    d.frame_len = L;
    d.layout = (lnmod_layout)lay;
    d.scale_stride = d.shift_stride = 8;
    if (lnmod_desc_validate(&d) != LNMOD_OK) return;
    const bv2_plan p = bv2_make_plan(rows, S, L, lay, target);
    int64_t R = (rows + target - 1) / target;
    R = R < 32 ? 32 : R > 256 ? 256 : R;
    if (p.ngroups != lnmod_mod_rows(&d)) fail("ngroups", rows, S, L, lay, 0);
    if (p.cpg > 1 && p.cpg > p.glen / R) fail("cpg above floor(glen/R)", rows, S, L, lay, 0);
    unsigned char *seen = calloc((size_t)rows, 1);
    static const int Gs[] = {1, 2, 3, 4, 6, 8};
    for (size_t gi = 0; gi < sizeof Gs / sizeof Gs[0]; gi++) {
        const int G = Gs[gi];
        for (int64_t i = 0; i < rows; i++) seen[i] = 0;
        for (int64_t c = 0; c < p.nchunks; c++) {
            int64_t g, r0, n;
            bv2_chunk_rows(&p, c, &g, &r0, &n);
            int64_t gs, glen;
            bv2_group_rows(&p, g, &gs, &glen);
            if (G == 1 && p.cpg > 1 && glen == p.glen && n < R) fail("a full group's chunk under R rows", rows, S, L, lay, G);
            int32_t lo = INT32_MAX, hi = 0;
            for (int q = 0; q < G; q++) {
                int32_t first, step, cnt;
                bv2_share(&p, r0, n, SHARE_Q(q), G, &first, &step, &cnt);
                lo = cnt < lo ? cnt : lo;
                hi = cnt > hi ? cnt : hi;
                for (int32_t j = 0, r = first; j < cnt; j++, r += step) {
                    if (r < 0 || r >= rows) { fail("row out of range", rows, S, L, lay, G); continue; }
                    if (lnmod_mod_index(&d, r) != g) fail("row of another group", rows, S, L, lay, G);
                    if (seen[r]++) fail("row taken twice", rows, S, L, lay, G);
                }
            }
            if (hi - lo > 1) fail("shares differ by more than a row", rows, S, L, lay, G);
        }
        for (int64_t i = 0; i < rows; i++)
            if (!seen[i]) { fail("row not taken", rows, S, L, lay, G); break; }
    }
    free(seen);
}

static void check_one(int64_t rows, int64_t S, int64_t L, int lay)
{
    check_plan(rows, S, L, lay, BV2_TARGET_V1);
    check_plan(rows, S, L, lay, BV2_TARGET_FINE);
}

static void check_shapes(void)
{
    /* v1's shapes (bd_shape with 512 threads) at bf16 D 1536/3072/5120 and fp32 5120. */
    /* Round 2 (min_vpt 2, thread caps 768/G or 960/G): bf16 D1536 as 2 x 96 for G = 4, 6, 8,
     * D3072 as 2 x 192 for G = 4, D5120 as 2 x 320 for G = 2 and (960 threads) G = 3, none for
     * G = 3 at 768; fp32 D1536 with G = 8 as 4 x 96. */
    const struct { int64_t nv; int vec, maxt, minv, vpt, t; } c[] = {
        {192, 8, 512, 1, 1, 192}, {384, 8, 512, 1, 1, 384}, {640, 8, 512, 1, 2, 320}, {1280, 4, 512, 1, 4, 320},
        {384, 8, 384, 1, 1, 384}, {384, 8, 256, 1, 2, 192}, {640, 8, 256, 1, 0, 0},   {192, 8, 192, 1, 1, 192},
        {192, 8, 192, 2, 2, 96},  {192, 8, 128, 2, 2, 96},  {192, 8, 96, 2, 2, 96},   {384, 8, 192, 2, 2, 192},
        {640, 8, 384, 2, 2, 320}, {640, 8, 320, 2, 2, 320}, {640, 8, 256, 2, 0, 0},   {384, 4, 96, 2, 4, 96},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        int t = 0;
        const int vpt = bv2_shape(c[i].nv, c[i].vec, 16, c[i].maxt, c[i].minv, &t);
        if (vpt != c[i].vpt || (vpt && t != c[i].t)) {
            fails++;
            fprintf(stderr, "bv2_plan_test: bv2_shape(%lld, %d, 16, %d, %d) = %d x %d, want %d x %d\n",
                    (long long)c[i].nv, c[i].vec, c[i].maxt, c[i].minv, vpt, t, c[i].vpt, c[i].t);
        }
    }
}

int main(void)
{
    if ((int)BV2_SAMPLE != (int)LNMOD_PER_SAMPLE || (int)BV2_TOKEN != (int)LNMOD_PER_TOKEN ||
        (int)BV2_FRAME != (int)LNMOD_PER_FRAME)
        fail("layout values differ from lnmod_desc.h", 0, 0, 0, 0, 0);
    /* The bar's shapes: per frame 12 chunks a frame, 252 <= 264 (one wave of 2 x 132). */
    const bv2_plan f = bv2_make_plan(32760, 32760, 1560, BV2_FRAME, BV2_TARGET_V1);
    if (f.cpg != 12 || f.nchunks != 252) fail("per-frame Wan plan is not 12 x 21", 32760, 32760, 1560, 2, 0);
    const bv2_plan s = bv2_make_plan(32760, 32760, 1, BV2_SAMPLE, BV2_TARGET_V1);
    if (s.cpg != 255) fail("per-sample Wan plan is not 255 chunks", 32760, 32760, 1, 0, 0);
    const bv2_plan w = bv2_make_plan(75600, 75600, 1, BV2_SAMPLE, BV2_TARGET_FINE);
    if (w.cpg != 510) fail("fine 75,600-row plan is not 510 chunks", 75600, 75600, 1, 0, 0);
    check_one(32760, 32760, 1560, BV2_FRAME);
    check_one(32760, 32760, 1, BV2_SAMPLE);
    check_one(75600, 75600, 1, BV2_SAMPLE);
    check_one(3021, 1007, 500, BV2_FRAME);
    for (int64_t S = 1; S <= 70; S += 3)
        for (int64_t B = 1; B <= 3; B++) {
            check_one(B * S, S, 1, BV2_SAMPLE);
            check_one(B * S, S, 1, BV2_TOKEN);
            for (int64_t L = 1; L <= S; L += 4) check_one(B * S, S, L, BV2_FRAME);
        }
    for (int64_t S = 8190; S <= 8200; S += 5) check_one(4 * S, S, 7 + S / 3, BV2_FRAME);
    check_shapes();
    if (fails) {
        fprintf(stderr, "bv2_plan_test: %d failures\n", fails);
        return 1;
    }
    printf("bv2_plan_test: ok\n");
    return 0;
}
