/* test_lnmod_res_bwd_bulk_plan.c -- host test of lnmod_res_bwd_bulk_plan.h (the fused residual
 * op's bulk backward's index math). CTest runs it, and builds it with each
 * LNMOD_RES_BULK_PLANT_* (tests lnmod_res_bwd_bulk_plan_planted_*, which must fail). Exit 0: all
 * held. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lnmod_res_bwd_bulk_plan.h"

static int fails;
#define EXPECT(c, ...)                                                                                                 \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            if (fails++ < 10) {                                                                                        \
                printf("test_lnmod_res_bwd_bulk_plan: FAIL line %d: ", __LINE__);                                                \
                printf(__VA_ARGS__);                                                                                   \
                printf("\n");                                                                                          \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

/* Shapes: every D a multiple of 8 up to 6,400: every quad owned by exactly one thread of a group;
 * whole warps; G x T within the CTA's limit; the Wan widths' shapes as the README states. */
static void test_shape(void)
{
    for (int64_t D = 0; D <= 6400; D++) {
        int T = -1, G = -1;
        const int ok = lnmod_res_bulk_shape(D, &T, &G);
        if (!ok) {
            EXPECT(D < 16 || D % 8 || D > 6144, "D %lld refused", (long long)D);
            continue;
        }
        EXPECT(D % 8 == 0 && D >= 16 && D <= 6144, "D %lld taken", (long long)D);
        EXPECT(T % 32 == 0 && T >= 32 && T <= LNMOD_RES_BULK_MAXT, "D %lld T %d", (long long)D, T);
        EXPECT(G >= 1 && G <= 4 && G * T <= LNMOD_RES_BULK_MAXT, "D %lld G %d T %d", (long long)D, G, T);
        const int64_t nq = D / 4;
        EXPECT((int64_t)T * LNMOD_RES_BULK_QPT >= nq && (int64_t)(T - 32) * LNMOD_RES_BULK_QPT < nq, "D %lld T %d not tight",
               (long long)D, T);
    }
    const int64_t wd[3] = {1536, 3072, 5120};
    const int wt[3] = {96, 192, 320}, wg[3] = {4, 2, 1};
    for (int i = 0; i < 3; i++) {
        int T = 0, G = 0;
        EXPECT(lnmod_res_bulk_shape(wd[i], &T, &G) && T == wt[i] && G == wg[i], "D %lld: T %d G %d", (long long)wd[i], T,
               G);
    }
}

/* Shares: for chunks of n rows (0..300) from r0 spaced cpg (1..7), G in {1, 2, 4}: the groups'
 * rows are the chunk's rows, each exactly once, and group q holds the chunk's rows q, q + G, ... */
static void test_share(void)
{
    static unsigned char seen[4096];
    const int gs[3] = {1, 2, 4};
    for (int gi = 0; gi < 3; gi++)
        for (int64_t cpg = 1; cpg <= 7; cpg++)
            for (int64_t n = 0; n <= 300; n++) {
                const int G = gs[gi];
                const int64_t r0 = 5 + cpg / 2;
                memset(seen, 0, sizeof seen);
                int64_t total = 0;
                for (int q = 0; q < G; q++) {
                    int64_t f, st, cnt;
                    lnmod_res_bulk_share(r0, n, cpg, q, G, &f, &st, &cnt);
                    total += cnt;
                    for (int64_t j = 0; j < cnt; j++) {
                        const int64_t r = f + j * st, i = (r - r0) / cpg;
                        EXPECT((r - r0) % cpg == 0 && i >= 0 && i < n, "G %d cpg %lld n %lld: row %lld not the chunk's",
                               G, (long long)cpg, (long long)n, (long long)r);
                        if (i < 0 || i >= n || r >= 4096) continue;
                        EXPECT(i % G == q, "row %lld of the chunk in group %d of %d", (long long)i, q, G);
                        EXPECT(!seen[r], "row %lld twice", (long long)r);
                        seen[r] = 1;
                    }
                }
                EXPECT(total == n, "G %d cpg %lld n %lld: %lld rows", G, (long long)cpg, (long long)n,
                       (long long)total);
            }
}

/* The chunk plan: with lnmod_res_bulk_cpg's chunks (lnmod_bulk_chunk_rows) split by the
 * groups' shares, every row of every modulation group is walked exactly once, at G 1, 2, 4;
 * and the wave fill at the Wan shapes (132 CTAs, one an SM): >= 95% at one sample of 75,600
 * rows (510 chunks; the common plan's 296 fill 75%), 32,760 rows and two samples of 32,760. */
static void test_plan(void)
{
    static unsigned char seen[75600];
    const struct { int64_t rows, S, L; int layout; int64_t want; } c[] = {
        {75600, 75600, 1, LNMOD_BULK_SAMPLE, 510}, {32760, 32760, 1, LNMOD_BULK_SAMPLE, 255},
        {65520, 32760, 1, LNMOD_BULK_SAMPLE, 254}, {32760, 32760, 1560, LNMOD_BULK_FRAME, 252},
        {160, 80, 32, LNMOD_BULK_FRAME, -1},       {1560, 780, 312, LNMOD_BULK_SAMPLE, -1},
        {70000, 35000, 1, LNMOD_BULK_SAMPLE, -1},  {7, 7, 1, LNMOD_BULK_TOKEN, 7}};
    const int gs[3] = {1, 2, 4};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        lnmod_bulk_plan p = lnmod_bulk_make_plan(c[i].rows, c[i].S, c[i].L, c[i].layout);
        p.cpg = lnmod_res_bulk_cpg(c[i].rows, c[i].S, c[i].L, c[i].layout);
        p.nchunks = p.ngroups * p.cpg;
        if (c[i].want >= 0) EXPECT(p.nchunks == c[i].want, "rows %lld: %lld chunks", (long long)c[i].rows, (long long)p.nchunks);
        if (c[i].rows >= 32760) {
            const int64_t waves = (p.nchunks + 131) / 132;
            EXPECT(p.nchunks * 100 >= waves * 132 * 95, "rows %lld: %lld chunks fill %lld waves of 132 under 95%%",
                   (long long)c[i].rows, (long long)p.nchunks, (long long)waves);
        }
        for (int gi = 0; gi < 3; gi++) {
            memset(seen, 0, sizeof seen);
            for (int64_t k = 0; k < p.nchunks; k++) {
                int64_t g, r0, n;
                lnmod_bulk_chunk_rows(&p, k, &g, &r0, &n);
                for (int q = 0; q < gs[gi]; q++) {
                    int64_t f, st, cnt;
                    lnmod_res_bulk_share(r0, n, p.cpg, q, gs[gi], &f, &st, &cnt);
                    for (int64_t j = 0; j < cnt; j++) {
                        const int64_t r = f + j * st;
                        EXPECT(r >= 0 && r < c[i].rows && !seen[r], "rows %lld G %d: row %lld", (long long)c[i].rows, gs[gi],
                               (long long)r);
                        if (r >= 0 && r < c[i].rows) seen[r]++;
                    }
                }
            }
            int64_t miss = 0;
            for (int64_t r = 0; r < c[i].rows; r++) miss += !seen[r];
            EXPECT(miss == 0, "rows %lld G %d: %lld rows never walked", (long long)c[i].rows, gs[gi], (long long)miss);
        }
    }
}

/* lnmod_res_bulk_chunks_full against a scan of every chunk of the plan (a chunk of no rows
 * exists exactly when it says 0), over samples and frames of many lengths, including a short
 * last frame of 5 rows (Wan's 1,560-row frames) that leaves chunks empty; per token with
 * several chunks a group cannot happen (one row a group), one chunk a group is always full. */
static void test_full(void)
{
    const struct { int64_t S, L; int layout; int64_t B; } c[] = {
        {32765, 1560, LNMOD_BULK_FRAME, 1}, {32760, 1560, LNMOD_BULK_FRAME, 1}, {32765, 1560, LNMOD_BULK_FRAME, 2},
        {80, 32, LNMOD_BULK_FRAME, 2},      {780, 312, LNMOD_BULK_FRAME, 2},    {75600, 1, LNMOD_BULK_SAMPLE, 1},
        {65601, 1, LNMOD_BULK_SAMPLE, 1},   {3, 1, LNMOD_BULK_SAMPLE, 1},       {160, 1, LNMOD_BULK_TOKEN, 1},
        {9000, 8999, LNMOD_BULK_FRAME, 4},  {9000, 4500, LNMOD_BULK_FRAME, 4},  {1000, 7, LNMOD_BULK_FRAME, 70}};
    int saw_empty = 0, saw_full = 0;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const int64_t rows = c[i].S * c[i].B;
        lnmod_bulk_plan p = lnmod_bulk_make_plan(rows, c[i].S, c[i].L, c[i].layout);
        p.cpg = lnmod_res_bulk_cpg(rows, c[i].S, c[i].L, c[i].layout);
        p.nchunks = p.ngroups * p.cpg;
        int empty = 0;
        for (int64_t k = 0; k < p.nchunks && !empty; k++) {
            int64_t g, r0, n;
            lnmod_bulk_chunk_rows(&p, k, &g, &r0, &n);
            empty = n == 0;
        }
        const int full = lnmod_res_bulk_chunks_full(c[i].S, c[i].L, c[i].layout, p.cpg);
        EXPECT(full == !empty, "S %lld L %lld layout %d B %lld (cpg %lld): says %d, a chunk is %s", (long long)c[i].S,
               (long long)c[i].L, c[i].layout, (long long)c[i].B, (long long)p.cpg, full, empty ? "empty" : "never empty");
        saw_empty += empty;
        saw_full += !empty;
    }
    EXPECT(saw_empty > 0 && saw_full > 0, "the cases hold %d plans with an empty chunk and %d without", saw_empty, saw_full);
    EXPECT(!lnmod_res_bulk_chunks_full(1, 1, LNMOD_BULK_TOKEN, 2), "per token with 2 chunks a group taken");
}

/* Stages: the four rows disjoint, in order, 16-byte aligned, within the stage; the ring fits
 * the H200's 227 KB at the Wan widths (3 stages at D5120, 2 at 3072, 3 at 1536 with a gate and dh). */
static void test_stage(void)
{
    for (int64_t D = 8; D <= 6144; D += 8)
        for (int dh = 0; dh < 2; dh++)
            for (int g = 0; g < 2; g++) {
                const lnmod_res_bulk_stage s = lnmod_res_bulk_stage_of(D, dh, g);
                const int64_t end[4] = {s.h + 4 * D, s.dout + 2 * D, s.dh + (dh ? 4 * D : 0), s.y + (g ? 2 * D : 0)};
                const int64_t beg[4] = {s.h, s.dout, s.dh, s.y};
                for (int k = 0; k < 4; k++) {
                    EXPECT(beg[k] % 16 == 0 && end[k] <= s.bytes, "D %lld part %d", (long long)D, k);
                    if (k) EXPECT(beg[k] >= end[k - 1], "D %lld part %d overlaps", (long long)D, k);
                }
                EXPECT(s.bytes == D * (6 + 4 * dh + 2 * g), "D %lld: stage %lld bytes", (long long)D,
                       (long long)s.bytes);
            }
    const int64_t avail = 232448 - 1024; /* optin minus the static part (< 1 KB) */
    const int64_t wd[3] = {1536, 3072, 5120};
    const int wns[3] = {3, 2, 3};
    for (int i = 0; i < 3; i++) {
        int T = 0, G = 0;
        (void)lnmod_res_bulk_shape(wd[i], &T, &G);
        const int ns = lnmod_res_bulk_stages(G, T, lnmod_res_bulk_stage_of(wd[i], 1, 1).bytes, avail);
        EXPECT(ns == wns[i], "D %lld: %d stages", (long long)wd[i], ns);
    }
}

int main(void)
{
    test_shape();
    test_share();
    test_plan();
    test_full();
    test_stage();
    if (fails) {
        printf("test_lnmod_res_bwd_bulk_plan: %d FAILED\n", fails);
        return 1;
    }
    printf("test_lnmod_res_bwd_bulk_plan: shapes, shares, the chunk plan, full chunks, stages: all held\n");
    return 0;
}
