/* lastcta_test.c -- host test of explore-lastcta.patch's counter protocol (the last CTAs
 * finish the groups inside bk_kernel, no second kernel), no GPU. Needs the patch applied
 * (it uses the functions it adds to kernels/lnmod_bwd_bulk_plan.h); lastcta_test.sh builds
 * and runs it and its planted bugs.
 *
 * A simulation of bk_kernel's CTAs at the granularity of their counter operations, under a
 * random interleaving and a limited number of resident CTAs (slots; the hardware admits a
 * CTA only when one has left):
 *   * CTA b takes chunks b, b + grid, ... (chunks without rows skipped, as bk_kernel does);
 *     per chunk: started += 1 (thread 0 at the chunk's start), the partials written, then
 *     arrived += 1 (after the fence and the barrier);
 *   * with no chunk left, its exit (bk_tail), in rounds: lnmod_bulk_tail_action of every
 *     group on the counters, the first group in lnmod_bulk_tail_group's order from the group
 *     of its last chunk (as bk_kernel computes it) with tiles to claim is claimed (claimed += nb, nb = nwc / W where two
 *     or more batches of W warps fit, else 1; the tiles below `tiles` are summed as
 *     bk_fin_tiles sums them, with the CTA's own warp count), else, if a group is to be
 *     waited for, the round is retried later, else the CTA leaves.
 * Checked, for per-sample, two-sample and per-frame plans (with short last frames), grids of
 * one and several waves, slots from 1 to the grid, several seeds:
 *   1. no deadlock: never are all resident CTAs waiting while a CTA that could make progress
 *      is not resident (a wait only ever waits for chunks a resident CTA holds);
 *   2. a CTA only waits for a group whose chunks have all started, and only sums a tile
 *      after all of its group's chunks arrived;
 *   3. every (group, tile) summed exactly once;
 *   4. the sums bit-equal bwd_fin_kernel's (transcribed here from lnmod_bwd_common.cuh: W =
 *      clamp(ceil(cpg / 8), 8, 32) warps, warp w adds chunks w, w + W, ... < min(len, cpg),
 *      then warp 0 adds the W sums in order), whatever the CTA's warp count, on partials of
 *      mixed magnitudes (so that any other order changes bits);
 *   5. lnmod_bulk_fin_warps equals that W for cpg 1..5000; the counters fit after the
 *      partials (16-byte multiple, 3 words a group).
 *   6. which plans take the path: the bar's per-sample ones and long frames do, the bar's
 *      per-frame plans (12 and 24 chunks a group) and more than 64 groups do not.
 * Planted bugs that must fail it: -DLNMOD_BULK_PLANT_LASTWAIT (wait for a group with a chunk
 * not started: deadlocks with few slots), -DLNMOD_BULK_PLANT_LASTORDER (a tile's chunks
 * added backwards: other bits), -DLNMOD_BULK_PLANT_LASTALL (per frame at the bar's sizes
 * takes the path). Exit 0 passed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lnmod_bwd_bulk_plan.h"

static int fails, deadlocks;
static long long n_waits, n_batches, n_multi; /* wait rounds, tile batches summed, of them nb > 1 */
static void fail(const char *what, long long a, long long b)
{
    if (fails++ < 12) fprintf(stderr, "lastcta_test: %s (%lld, %lld)\n", what, a, b);
}

static uint64_t rng_s;
static uint64_t rnd(void)
{
    rng_s ^= rng_s << 13;
    rng_s ^= rng_s >> 7;
    rng_s ^= rng_s << 17;
    return rng_s;
}

/* bwd_fin_kernel's warps, transcribed (lnmod_bwd_common.cuh's lnmod_bwd_fin_warps). */
static int ref_fin_warps(int64_t cpg)
{
    const int64_t w = (cpg + 7) / 8;
    return w < 8 ? 8 : (w > 32 ? 32 : (int)w);
}

/* bwd_fin_kernel's sum of one column (lane = column; warp w's loop, then warp 0's). */
static void ref_fin_col(const float *ws, int64_t D, int64_t cpg, int64_t g, int64_t nk, int64_t col, float *sa,
                        float *sb)
{
    const int nw = ref_fin_warps(cpg);
    float pa[32], pb[32];
    const float *w = ws + (g * cpg) * 2 * D + col;
    for (int wp = 0; wp < nw; wp++) {
        float a = 0.0f, b = 0.0f;
        for (int64_t k = wp; k < nk; k += nw) {
            a += w[k * 2 * D];
            b += w[k * 2 * D + D];
        }
        pa[wp] = a;
        pb[wp] = b;
    }
    float x = 0.0f, y = 0.0f;
    for (int wp = 0; wp < nw; wp++) {
        x += pa[wp];
        y += pb[wp];
    }
    *sa = x;
    *sb = y;
}

/* bk_fin_tiles of a CTA of nwc warps: tiles t0 .. t0 + nb - 1 (the kernel's loops; part as
 * its shared memory). */
static void lc_fin_tiles(const float *ws, int64_t D, int64_t cpg, int W, int nwc, int64_t g, int64_t nk, int64_t t0,
                         int nb, int64_t tiles, float *dsc, float *dsh)
{
    float part[2][32][32];
    for (int warp = 0; warp < nwc; warp++)
        for (int u = warp; u < nb * W; u += nwc) {
            const int sub = u / W, v = u - sub * W;
            for (int lane = 0; lane < 32; lane++) {
                const int64_t col = (t0 + sub) * 32 + lane;
                float a = 0.0f, b = 0.0f;
                if (t0 + sub < tiles && col < D) {
                    const float *w = ws + (g * cpg) * 2 * D + col;
                    const int64_t cnt = lnmod_bulk_fin_count(nk, v, W);
                    for (int64_t i = 0; i < cnt; i++) {
                        const int64_t kk = lnmod_bulk_fin_chunk(v, i, W, cnt);
                        a += w[kk * 2 * D];
                        b += w[kk * 2 * D + D];
                    }
                }
                part[0][u][lane] = a;
                part[1][u][lane] = b;
            }
        }
    for (int warp = 0; warp < nb; warp++)
        for (int lane = 0; lane < 32; lane++) {
            const int64_t col = (t0 + warp) * 32 + lane;
            if (t0 + warp >= tiles || col >= D) continue;
            float sa = 0.0f, sb = 0.0f;
            for (int v = 0; v < W; v++) {
                sa += part[0][warp * W + v][lane];
                sb += part[1][warp * W + v][lane];
            }
            dsc[g * D + col] = sa;
            dsh[g * D + col] = sb;
        }
}

enum { ST_OUT, ST_CHUNK, ST_TAIL, ST_DONE };

typedef struct {
    int st;
    int64_t c;    /* current chunk (ST_CHUNK) */
    int sub;      /* 0: start, 1: arrive */
    int64_t glast; /* exit scan's first group */
    int waiting;
} cta;

/* After a run: every group's chunks arrived, every tile summed once, and the bits of dscale
 * and dshift equal bwd_fin_kernel's order (ref_fin_col). */
static void check_run(const lnmod_bulk_plan *pl, const float *ws, int64_t D, int64_t tiles, const int64_t *t_arrived,
                      const int *done, const float *dsc, const float *dsh)
{
    for (int64_t g = 0; g < pl->ngroups && fails < 12; g++) {
        const int64_t nk = lnmod_bulk_group_chunks(pl, g);
        if (t_arrived[g] != nk) fail("arrivals of a group (group, arrived)", g, t_arrived[g]);
        for (int64_t t = 0; t < tiles; t++)
            if (done[g * tiles + t] != 1) fail("a tile not summed once (group, times)", g, done[g * tiles + t]);
        for (int64_t col = 0; col < D; col++) {
            float ra, rb;
            ref_fin_col(ws, D, pl->cpg, g, nk, col, &ra, &rb);
            if (memcmp(&ra, &dsc[g * D + col], 4) || memcmp(&rb, &dsh[g * D + col], 4)) {
                fail("bits differ from bwd_fin_kernel's (group, column)", g, col);
                break;
            }
        }
    }
}

/* One run: plan of (rows, S, L, layout), D columns, grid CTAs, slots resident at once, nwc
 * warps a CTA. */
static void run(int64_t rows, int64_t S, int64_t L, int layout, int64_t D, int64_t grid, int64_t slots, int nwc,
                uint64_t seed)
{
    const lnmod_bulk_plan pl = lnmod_bulk_make_plan(rows, S, L, layout);
    if (!lnmod_bulk_last_takes(&pl)) {
        fail("shape not taken by the last-CTA path", rows, pl.cpg);
        return;
    }
    if (grid > pl.nchunks) grid = pl.nchunks;
    rng_s = seed * 0x9E3779B97F4A7C15ull + 1;
    const int64_t ng = pl.ngroups, tiles = (D + 31) / 32, W = lnmod_bulk_fin_warps(pl.cpg);
    float *ws = malloc((size_t)(pl.nchunks * 2 * D) * sizeof(float));
    float *dsc = malloc((size_t)(ng * D) * sizeof(float)), *dsh = malloc((size_t)(ng * D) * sizeof(float));
    int64_t *ctr = calloc((size_t)(ng * LNMOD_BULK_LAST_CTR), sizeof(int64_t));
    int64_t *t_started = calloc((size_t)ng, sizeof(int64_t)), *t_arrived = calloc((size_t)ng, sizeof(int64_t));
    int *done = calloc((size_t)(ng * tiles), sizeof(int));
    cta *ct = calloc((size_t)grid, sizeof(cta));
    if (!ws || !dsc || !dsh || !ctr || !t_started || !t_arrived || !done || !ct) {
        fprintf(stderr, "lastcta_test: out of memory\n");
        exit(2);
    }
    /* partials of mixed magnitudes and signs; outputs poisoned */
    for (int64_t i = 0; i < pl.nchunks * 2 * D; i++) {
        const double m = (double)((int64_t)(rnd() % 2000001) - 1000000) / 1000000.0;
        ws[i] = (float)(m * (double)(1u << (rnd() % 24)));
    }
    memset(dsc, 0xFF, (size_t)(ng * D) * sizeof(float));
    memset(dsh, 0xFF, (size_t)(ng * D) * sizeof(float));
    int64_t resident = 0, next_in = 0, left = grid;
    for (int64_t b = 0; b < grid; b++) ct[b].st = ST_OUT;
    int64_t *res = malloc((size_t)grid * sizeof(int64_t));
    for (long long step = 0; left > 0; step++) {
        while (resident < slots && next_in < grid) { /* the hardware admits CTAs in order */
            cta *x = &ct[next_in];
            x->st = ST_CHUNK;
            x->c = next_in;
            x->sub = 0;
            res[resident++] = next_in++;
        }
        /* deadlock: every resident CTA would wait (its round re-evaluated on the counters now) */
        int64_t nwait = 0;
        for (int64_t i = 0; i < resident; i++) {
            const cta *y = &ct[res[i]];
            if (y->st != ST_TAIL || !y->waiting) continue;
            int w = 0;
            for (int64_t j = 0; j < ng; j++) {
                const int64_t g = lnmod_bulk_tail_group(j, y->glast, ng);
                const int64_t *c = ctr + g * LNMOD_BULK_LAST_CTR;
                const int a = lnmod_bulk_tail_action(c[0], c[1], c[2], lnmod_bulk_group_chunks(&pl, g), tiles);
                if (a == LNMOD_BULK_TAIL_CLAIM) {
                    w = 0;
                    break;
                }
                w |= a == LNMOD_BULK_TAIL_WAIT;
            }
            nwait += w;
        }
        if (nwait == resident) {
            deadlocks++;
            fail("deadlock: every resident CTA waits (resident, CTAs not yet admitted)", resident, grid - next_in);
            break;
        }
        const int64_t pick = (int64_t)(rnd() % (uint64_t)resident);
        cta *x = &ct[res[pick]];
        if (x->st == ST_CHUNK) {
            if (x->c >= pl.nchunks) {
                x->st = ST_TAIL;
                x->waiting = 0;
                { /* bk_kernel's start of the scan: the group of the CTA's last chunk */
                    const int64_t b = res[pick], cl = b + (pl.nchunks - 1 - b) / grid * grid;
                    x->glast = cl / pl.cpg;
                }
                continue;
            }
            int64_t g, r0, n;
            lnmod_bulk_chunk_rows(&pl, x->c, &g, &r0, &n);
            if (n == 0) { /* no row: skipped, no counter */
                x->c += grid;
                continue;
            }
            if (x->sub == 0) {
                ctr[g * LNMOD_BULK_LAST_CTR + 1]++;
                t_started[g]++;
                x->sub = 1;
            } else {
                ctr[g * LNMOD_BULK_LAST_CTR + 0]++;
                t_arrived[g]++;
                x->sub = 0;
                x->c += grid;
            }
        } else if (x->st == ST_TAIL) {
            /* one round of bk_tail: every group's action; the first (from glast) to claim, else
             * to wait for, else leave */
            int64_t pick_g = -1;
            int pick_a = LNMOD_BULK_TAIL_SKIP;
            for (int64_t i = 0; i < ng; i++) {
                const int64_t g = lnmod_bulk_tail_group(i, x->glast, ng);
                const int64_t *c = ctr + g * LNMOD_BULK_LAST_CTR;
                const int64_t nk = lnmod_bulk_group_chunks(&pl, g);
                const int a = lnmod_bulk_tail_action(c[0], c[1], c[2], nk, tiles);
                if (a == LNMOD_BULK_TAIL_WAIT && t_started[g] < nk)
                    fail("would wait for a group with a chunk not started (group, started)", g, t_started[g]);
                if (a == LNMOD_BULK_TAIL_CLAIM) {
                    pick_g = g;
                    pick_a = a;
                    break;
                }
                if (a == LNMOD_BULK_TAIL_WAIT && pick_a == LNMOD_BULK_TAIL_SKIP) {
                    pick_g = g;
                    pick_a = a;
                }
            }
            x->waiting = pick_a == LNMOD_BULK_TAIL_WAIT;
            n_waits += x->waiting;
            if (pick_a == LNMOD_BULK_TAIL_SKIP) {
                x->st = ST_DONE;
                res[pick] = res[--resident];
                left--;
            } else if (pick_a == LNMOD_BULK_TAIL_CLAIM) {
                const int64_t g = pick_g, nk = lnmod_bulk_group_chunks(&pl, g);
                const int nb = nwc >= 2 * W ? nwc / (int)W : 1;
                const int64_t t0 = ctr[g * LNMOD_BULK_LAST_CTR + 2];
                ctr[g * LNMOD_BULK_LAST_CTR + 2] += nb;
                if (t0 < tiles) {
                    if (t_arrived[g] != nk) fail("sums a tile before every chunk arrived (group, arrived)", g, t_arrived[g]);
                    for (int64_t t = t0; t < t0 + nb && t < tiles; t++)
                        if (done[g * tiles + t]++) fail("a tile summed twice (group, tile)", g, t);
                    lc_fin_tiles(ws, D, pl.cpg, (int)W, nwc, g, nk, t0, nb, tiles, dsc, dsh);
                    n_batches++;
                    n_multi += nb > 1;
                }
            }
        }
    }
    check_run(&pl, ws, D, tiles, t_arrived, done, dsc, dsh);
    free(res);
    free(ct);
    free(done);
    free(t_arrived);
    free(t_started);
    free(ctr);
    free(dsh);
    free(dsc);
    free(ws);
}

int main(void)
{
    /* 5. the warps and the counters' bytes */
    for (int64_t cpg = 1; cpg <= 5000; cpg++)
        if (lnmod_bulk_fin_warps(cpg) != ref_fin_warps(cpg)) fail("fin warps differ (cpg, W)", cpg, lnmod_bulk_fin_warps(cpg));
    for (int64_t ng = 1; ng <= 2048; ng++) {
        lnmod_bulk_plan p;
        memset(&p, 0, sizeof p);
        p.ngroups = ng;
        const int64_t b = lnmod_bulk_last_ctr_bytes(&p);
        if (b % 16 || b < ng * LNMOD_BULK_LAST_CTR * 4 || b >= ng * LNMOD_BULK_LAST_CTR * 4 + 16)
            fail("counter bytes (groups, bytes)", ng, b);
    }
    /* 1-4. the protocol, at the bar's plans and a few others */
    static const struct {
        int64_t rows, S, L;
        int layout;
        int64_t grid;
    } sh[] = {
        {32760, 32760, 1, LNMOD_BULK_SAMPLE, 264},      /* 255 chunks, one group, one wave */
        {32760, 32760, 1, LNMOD_BULK_SAMPLE, 132},      /* one CTA an SM (D3072/D5120): two waves */
        {75600, 75600, 1, LNMOD_BULK_SAMPLE, 264},      /* 510 chunks, one group, two waves */
        {75600, 75600, 1, LNMOD_BULK_SAMPLE, 132},      /* four waves */
        {65520, 32760, 1, LNMOD_BULK_SAMPLE, 264},      /* two samples of 127 chunks */
        {32040, 8010, 8000, LNMOD_BULK_FRAME, 264},     /* long frames, short last ones: 10 rows, cpg 63 */
        {131040, 32760, 16380, LNMOD_BULK_FRAME, 264},  /* 8 long frames, two waves */
        {40000, 10000, 1, LNMOD_BULK_SAMPLE, 100},      /* 4 samples of 63 chunks */
        {393216, 8192, 1, LNMOD_BULK_SAMPLE, 264},      /* 48 samples of 32 chunks, six waves */
    };
    /* the bar's per-frame plans (12 and 24 chunks a group) and many groups keep two kernels */
    static const int64_t not_taken[][4] = {{32760, 32760, 1560, LNMOD_BULK_FRAME},
                                           {75600, 75600, 3600, LNMOD_BULK_FRAME},
                                           {20000, 500, 1, LNMOD_BULK_SAMPLE},
                                           {1048576, 8192, 1, LNMOD_BULK_SAMPLE}};
    for (size_t i = 0; i < sizeof not_taken / sizeof not_taken[0]; i++) {
        const lnmod_bulk_plan p = lnmod_bulk_make_plan(not_taken[i][0], not_taken[i][1], not_taken[i][2], (int)not_taken[i][3]);
        if (lnmod_bulk_last_takes(&p)) fail("the last-CTA path takes a plan it must leave to two kernels (rows, cpg)", not_taken[i][0], p.cpg);
    }
    static const int nwcs[] = {12, 8, 20, 24, 6};
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        const int64_t slot_list[] = {sh[i].grid, sh[i].grid / 2 + 1, 17, 3, 1};
        for (size_t si = 0; si < sizeof slot_list / sizeof slot_list[0]; si++)
            for (uint64_t seed = 1; seed <= 3; seed++) {
                const int64_t D = seed == 1 ? 72 : seed == 2 ? 64 : 40; /* partial last tile at 72 and 40 */
                run(sh[i].rows, sh[i].S, sh[i].L, sh[i].layout, D, sh[i].grid, slot_list[si], nwcs[(i + seed) % 5],
                    seed * 131 + i * 7 + si);
            }
    }
    if (fails) {
        fprintf(stderr, "lastcta_test: %d failure(s), %d of them deadlocks\n", fails, deadlocks);
        return 1;
    }
    if (!n_waits || !n_multi) {
        fprintf(stderr, "lastcta_test: the runs never waited (%lld) or never summed batches (%lld)\n", n_waits, n_multi);
        return 1;
    }
    printf("lastcta_test: passed (%lld wait rounds, %lld tile batches, %lld of them of 2-3 tiles)\n", n_waits,
           n_batches, n_multi);
    return 0;
}
