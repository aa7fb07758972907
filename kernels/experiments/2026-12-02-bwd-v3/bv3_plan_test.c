/* bv3_plan_test.c -- host test of round 3's new index math (bv3_plan.h), no GPU:
 *   1. k2's walk: a simulation of one group's consumer steps and its issuing thread over
 *      share sequences (odd, even, single rows, empty chunks) at NS = 4..6: every row waited
 *      for has been issued (no deadlock), no stage is refilled before its row is consumed,
 *      the issuer's stage (bv3_k2_issue_stage) is the walk row's, no step crosses its share,
 *      every row consumed once and in order;
 *   2. tok's walk: over grids and group counts every row exactly once, each group's rows
 *      ascending;
 *   3. tok's stage: the three copies' slot ranges are disjoint and inside the stage, and the
 *      slots a thread reads (the production's bk_read formula and bt_read's) are the copies'
 *      bytes of its vectors;
 *   4. the shared-memory model and the depth the occupancy rule picks (227 KB a CTA, 228 KB
 *      an SM, 1 KB reserved a CTA, 80 registers a thread, 2048 threads an SM): the table the
 *      README quotes, asserted.
 * build.sh runs it and checks that each planted bug fails it: -DBV3_PLANT_STEP,
 * -DBV3_PLANT_NS3, -DBV3_PLANT_OWED, -DBV3_PLANT_TOK, -DBV3_PLANT_SCAT. Exit 0 passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bv3_plan.h"
#include "lnmod_bwd_bulk_plan.h"

static int fails;
static void fail(const char *what, long long a, long long b)
{
    if (fails++ < 12) fprintf(stderr, "bv3_plan_test: %s (%lld, %lld)\n", what, a, b);
}

/* 1. One group's walk over shares cnt[0..nc-1] with NS stages. */
static void k2_walk(const int *cnt, int nc, int NS)
{
    int total = 0;
    for (int c = 0; c < nc; c++) total += cnt[c];
    int *stage_of = malloc(sizeof(int) * (size_t)(NS > 0 ? NS : 1)); /* walk row held by each stage */
    for (int s = 0; s < NS; s++) stage_of[s] = -1;
    int issued = 0;
    for (int j = 0; j < NS - 1 && issued < total; j++) stage_of[issued % NS] = issued, issued++;
    int w = 0, slot = 0, owed = 1;
    for (int c = 0; c < nc; c++) {
        for (int j = 0; j < cnt[c];) {
            const int m = bv3_k2_step(cnt[c] - j);
            if (m < 1 || m > 2 || m > cnt[c] - j) fail("k2 step past its share", c, j);
            for (int i = 0; i < m; i++) { /* the waits */
                if (w + i >= issued) { fail("k2 waits for a row never issued (deadlock)", w + i, NS); goto out; }
                if (stage_of[(slot + i) % NS] != w + i) fail("k2 stage holds another row", w + i, NS);
            }
            /* mid: rows < w are consumed; the issuer issues `owed` rows */
            int is = bv3_k2_issue_stage(slot, owed, NS);
            for (int i = 0; i < owed && issued < total; i++) {
                if (is != issued % NS) fail("k2 issuer's stage is not the walk row's", issued, is);
                const int prev = stage_of[issued % NS];
                if (prev >= w) fail("k2 stage refilled while its row is read or unread", prev, issued);
                stage_of[issued % NS] = issued;
                issued++;
                is = is + 1 == NS ? 0 : is + 1;
            }
            owed = bv3_k2_owed_after(m);
            w += m;
            slot = (slot + m) % NS;
            j += m;
        }
    }
    if (w != total) fail("k2 walk did not consume every row", w, total);
out:
    free(stage_of);
}

static void test_k2(void)
{
    static const int a[] = {32, 32, 32}, b[] = {33, 31, 1, 0, 7}, c[] = {1, 1, 1, 1, 1, 2}, d[] = {3},
                     e[] = {0, 0, 5, 0, 2, 9, 128, 127};
    const int *seqs[] = {a, b, c, d, e};
    const int lens[] = {3, 5, 6, 1, 8};
    for (int NS = bv3_k2_min_stages(); NS <= 6; NS++) {
        for (int s = 0; s < 5; s++) k2_walk(seqs[s], lens[s], NS);
        unsigned x = 12345;
        for (int t = 0; t < 2000; t++) { /* random shares */
            int cnt[16];
            for (int i = 0; i < 16; i++) {
                x = x * 1103515245u + 12345u;
                cnt[i] = (int)((x >> 16) % 40u);
            }
            k2_walk(cnt, 1 + t % 16, NS);
        }
    }
}

/* 2. tok's walk. */
static void test_tok_walk(void)
{
    static const long long rows_l[] = {1, 2, 3, 5, 37, 1000, 4097, 32760};
    static const int Gs[] = {2, 4};
    for (size_t ri = 0; ri < sizeof rows_l / sizeof rows_l[0]; ri++) {
        const long long rows = rows_l[ri];
        unsigned char *seen = calloc((size_t)rows, 1);
        for (int gi = 0; gi < 2; gi++) {
            const int G = Gs[gi];
            const long long grids[] = {1, 3, 132, 264, (rows + G - 1) / G};
            for (int k = 0; k < 5; k++) {
                memset(seen, 0, (size_t)rows);
                for (long long b = 0; b < grids[k]; b++)
                    for (int q = 0; q < G; q++) {
                        long long last = -1;
                        for (long long r = bv3_tok_first(b, G, q); r < rows; r += bv3_tok_step(grids[k], G)) {
                            if (r <= last) fail("tok rows not ascending", r, last);
                            if (seen[r]++) fail("tok row taken twice", r, grids[k]);
                            last = r;
                        }
                    }
                for (long long r = 0; r < rows; r++)
                    if (!seen[r]) { fail("tok row not taken", r, grids[k]); break; }
            }
        }
        free(seen);
    }
}

/* 3. tok's stage layout: x at [0, nv), dy at [dy_at, + nv*DYW), scale at [sc_at, + nv*MSW). */
static void test_tok_stage(void)
{
    static const int xs[] = {2, 2, 2, 4, 2}, ms[] = {4, 2, 2, 4, 4}, ys[] = {2, 4, 2, 4, 4};
    for (int t = 0; t < 5; t++) {
        const int vec = 16 / xs[t], dyw = vec * ys[t] / 16, msw = vec * ms[t] / 16;
        const int slots = bv3_tok_slots(dyw, msw);
        for (int T = 32; T <= 384; T += 32)
            for (int nv = 2 * T - 63 > 2 ? 2 * T - 63 : 2; nv <= 2 * T; nv++) {
                int shape_T = 0, G = 0;
                if (!lnmod_bulk_shape(nv, &shape_T, &G) || shape_T != T) continue;
                const int n = slots * T;
                int *owner = calloc((size_t)n, sizeof(int));
                const int lo[3] = {0, bv3_tok_dy_at(T), bv3_tok_sc_at(T, dyw)}, len[3] = {nv, nv * dyw, nv * msw};
                for (int k = 0; k < 3; k++)
                    for (int i = lo[k]; i < lo[k] + len[k]; i++) {
                        if (i < 0 || i >= n) { fail("tok copy outside its stage", k, i); break; }
                        if (owner[i]) fail("tok copies overlap", k, i);
                        owner[i] = k + 1;
                    }
                /* what thread tid reads for vector q (v = tid + q*T < nv), piece w */
                for (int tid = 0; tid < T; tid++)
                    for (int q = 0; q < BV3_VPT; q++) {
                        const int v = tid + q * T;
                        if (v >= nv) continue;
                        if (tid + q * T != v || owner[v] != 1) fail("tok x slot", v, T);
                        for (int w = 0; w < dyw; w++) {
                            const int sl = tid + BV3_VPT * T + q * T * dyw + tid * (dyw - 1) + w; /* bk_read */
                            if (sl != lo[1] + v * dyw + w || owner[sl] != 2) fail("tok dy slot", v, w);
                        }
                        for (int w = 0; w < msw; w++) {
                            const int sl = tid + bv3_tok_sc_at(T, dyw) + q * T * msw + tid * (msw - 1) + w; /* bt_read */
                            if (sl != lo[2] + v * msw + w || owner[sl] != 3) fail("tok scale slot", v, w);
                        }
                    }
                free(owner);
            }
    }
}

/* 4. The depth of the occupancy rule in the model: CTAs per SM for a CTA of `threads` with
 * dynamic + static shared memory; 0 when it does not fit. */
static int per_sm(int64_t dyn, int64_t stat, int threads)
{
    const int64_t optin = 227 * 1024, sm = 228 * 1024, reserved = 1024;
    if (dyn + stat > optin) return 0;
    int by_smem = (int)(sm / (dyn + stat + reserved)), by_regs = 65536 / (80 * threads),
        by_thr = 2048 / threads;
    int n = by_smem < by_regs ? by_smem : by_regs;
    return n < by_thr ? n : by_thr;
}

/* kind: 0 production, 1 half, 2 k2, 3 k2half, 4 tok; bf16 x/dy, fp32 modulation. */
static void depth(int kind, int64_t D, int *ns_out, int *occ_out, int64_t *smem_out)
{
    int T = 0, G = 0;
    (void)lnmod_bulk_shape(D / 8, &T, &G);
    const int k2 = kind == 2 || kind == 3, half = kind == 1 || kind == 3;
    int best = 0, occ[5] = {0, 0, 0, 0, 0};
    int64_t sm[5] = {0, 0, 0, 0, 0};
    for (int ns = 4; ns >= (k2 ? bv3_k2_min_stages() : 2); ns--) {
        sm[ns] = kind == 4 ? bv3_tok_smem(G, ns, T, bv3_tok_slots(1, 2))
                           : bv3_bulk_smem(G, ns, T, 4, 8, D, 1, half);
        occ[ns] = per_sm(sm[ns], bv3_static_smem(G, ns, k2), G * T);
    }
    for (int ns = 4; ns >= 2; ns--)
        if (occ[ns] > occ[best]) best = ns;
    *ns_out = best;
    *occ_out = occ[best];
    *smem_out = sm[best];
}

static void test_depths(void)
{
    static const char *names[] = {"dtile (v2)", "half", "k2", "k2half", "tok"};
    static const int64_t Ds[] = {1536, 3072, 5120};
    /* the expected depth / CTAs per SM (README "Shared memory and depth") */
    static const int want[5][3][2] = {{{3, 2}, {3, 1}, {4, 1}}, {{4, 2}, {4, 1}, {4, 1}},
                                      {{4, 1}, {0, 0}, {4, 1}}, {{4, 2}, {4, 1}, {4, 1}},
                                      {{2, 2}, {2, 1}, {2, 1}}};
    printf("bf16 x/dy, fp32 modulation: stages / CTAs per SM / dynamic shared memory a CTA\n");
    for (int k = 0; k < 5; k++) {
        printf("  %-10s", names[k]);
        for (int i = 0; i < 3; i++) {
            int ns, occ;
            int64_t smem;
            depth(k, Ds[i], &ns, &occ, &smem);
            printf("  D%lld: %d st x %d/SM (%lld B)", (long long)Ds[i], ns, occ, (long long)(ns ? smem : 0));
            if (ns != want[k][i][0] || occ != want[k][i][1]) fail("depth model differs from the README", k, Ds[i]);
        }
        printf("\n");
    }
}

int main(void)
{
    test_k2();
    test_tok_walk();
    test_tok_stage();
    test_depths();
    printf("bv3_plan_test: %s (%d failures)\n", fails ? "FAILED" : "passed", fails);
    return fails ? 1 : 0;
}
