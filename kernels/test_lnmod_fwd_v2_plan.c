/* test_lnmod_fwd_v2_plan.c -- host test of dtile's forward v2 rule (lnmod_fwd_v2_plan.h), no GPU.
 *
 * For every D from 1 to 16384, the nine dtype triples, aligned and unaligned pointers, the
 * per-sample, per-token, 4-row and 1,560-row frame layouts, and four device descriptions (an H200, an
 * H100 PCIe, an A100: no clusters, less shared memory; a B200: more SMs, 8 TB/s), fv2_make_plan
 * must give a plan that
 *   - exists, and is of the tile class exactly when the pointers are aligned and D is a
 *     multiple of the vector;
 *   - covers the row: tile: every vector of the row owned exactly once over the cluster's
 *     CTAs, threads and steps (through fv2_tile_vec, the kernel's own index math); odd: the
 *     windows of a row at every phase fit the threads' windows and the ring slot;
 *   - fits the device: threads, shared memory, registers (estimate) per CTA and per SM, the
 *     cluster size (1 without clusters), W*C parts, the ring depth; lag iff W*C > 1;
 *   - is the fast class intended (16-bit and fp32 x, aligned, per sample, D a multiple of
 *     the vector from 256 on, the H200), where dtile runs the plan: tile class, >= 8 warps
 *     per SM (and two CTAs on several warps), the rows in flight at least 3/4 of the
 *     rule's target, a warp a row masking at most a quarter of the vector slots (half below
 *     D = 1024), several warps no whole warp's slots;
 * and that dtile runs (fv2_runs) the warp-a-row plans and the one-CTA several-warp plans (the
 * lag path) at two or more CTAs a SM, both with the modulation in registers, and the odd
 * class, and leaves the lag path at one CTA a SM, clusters and the streamed modulation to
 * version 1 (the fast-class checks above apply to the plans dtile runs; a several-warp plan
 * leaves no whole warp's slots masked).
 * ctest runs it, and the same test built with each of -DFV2_PLANT_VPT, -DFV2_PLANT_ODDWIN and
 * -DFV2_PLANT_CLUSTER (a bug planted in the rule), which must fail it. Exit 0 passed, 1 failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lnmod_fwd_v2_plan.h"
#include "lnmod_desc.h"

static int fails;
static long checked, covered, demoted;

static void fail(const char *what, const fv2_problem *q, const char *dev, const fv2_plan *p)
{
    fails++;
    if (getenv("FV2_ALL") || fails < 12)
        fprintf(stderr,
                "test_lnmod_fwd_v2_plan: %s (D %lld rows %lld sx %d sm %d sy %d aligned %d layout %d, %s: "
                "cls %d vpt %d W %d C %d G %d ns %d)\n",
                what, (long long)q->D, (long long)q->rows, q->sx, q->sm, q->sy, q->aligned, q->layout,
                dev, p->cls, p->vpt, p->warps, p->cluster, p->groups, p->nstage);
}

static const fv2_dev DEVS[4] = {
    {132, 2048, 1024, 233472, 232448, 65536, 32, 8, 4.8e12},  /* H200 */
    {114, 2048, 1024, 233472, 232448, 65536, 32, 8, 2.0e12},  /* H100 PCIe */
    {108, 2048, 1024, 167936, 166912, 65536, 32, 1, 2.04e12}, /* A100: no clusters */
    {148, 2048, 1024, 233472, 232448, 65536, 32, 8, 8.0e12},  /* B200: more SMs, 8 TB/s */
};
static const char *DEVNAME[4] = {"H200", "H100-PCIe", "A100", "B200"};

/* Coverage of the tile class, memoized per (nv, vpt, W, C) for the current D. */
static unsigned char *seen;
static int64_t memo[16][4];
static int nmemo;

static int tile_covers(const fv2_plan *p)
{
    for (int i = 0; i < nmemo; i++)
        if (memo[i][0] == p->nv && memo[i][1] == p->vpt && memo[i][2] == p->warps && memo[i][3] == p->cluster)
            return 1;
    memset(seen, 0, (size_t)p->nv);
    int ok = 1;
    for (int c = 0; c < p->cluster; c++)
        for (int t = 0; t < 32 * p->warps; t++)
            for (int k = 0; k < p->vpt; k++) {
                const int64_t v = fv2_tile_vec(p, c, t, k);
                if (v < 0) continue;
                if (v >= p->nv || seen[v]++) ok = 0;
            }
    for (int64_t v = 0; v < p->nv; v++) ok &= seen[v] == 1;
    covered++;
    if (ok && nmemo < 16) {
        memo[nmemo][0] = p->nv;
        memo[nmemo][1] = p->vpt;
        memo[nmemo][2] = p->warps;
        memo[nmemo][3] = p->cluster;
        nmemo++;
    }
    return ok;
}

static int odd_covers(const fv2_plan *p, int64_t D)
{
    for (int64_t phase = 0; phase < p->vec; phase++) {
        const int64_t nw = fv2_odd_windows(D, p->vec, phase);
        if (nw > p->nv || nw > (int64_t)p->vpt * p->threads) return 0;
        /* the first and last element of the row land in windows 0 and nw - 1 */
        if (fv2_odd_elem(p->vec, phase, 0, (int)phase) != 0) return 0;
        const int64_t wl = (D - 1 + phase) / p->vec;
        if (wl != nw - 1 || fv2_odd_elem(p->vec, phase, wl, (int)((D - 1 + phase) % p->vec)) != D - 1) return 0;
    }
    return 1;
}

static void check_limits(const fv2_problem *q, const fv2_dev *d, const char *dn, const fv2_plan *p)
{
    if (p->threads > d->threads_block || p->threads > d->threads_sm || p->threads % 32)
        fail("threads per CTA", q, dn, p);
    if (p->smem_bytes > d->smem_block) fail("shared memory per CTA", q, dn, p);
    if (p->regs > 255 || (int64_t)p->regs * p->threads > d->regs_sm) fail("registers", q, dn, p);
    if (p->cluster < 1 || p->cluster > d->cluster_max || p->cluster > FV2_MAX_CLUSTER) fail("cluster size", q, dn, p);
    if (p->warps * p->cluster > FV2_MAX_PARTS) fail("parts", q, dn, p);
    if (p->nstage < FV2_MIN_NS + p->lag || p->nstage > FV2_MAX_NS) fail("ring depth", q, dn, p);
    if (p->ctas_sm < 1) fail("no CTA fits an SM", q, dn, p);
    if (p->lag != (p->cls == FV2_TILE && p->warps * p->cluster > 1)) fail("lag", q, dn, p);
    if (p->groups > 1 && (p->warps > 1 || p->cluster > 1)) fail("groups with W*C > 1", q, dn, p);
    /* the CTA barrier a row (the lag path on one CTA): the CTA must be exactly the row's W
     * warps (one group), never on a cluster (the barrier is one CTA's) nor without the lag */
    if (p->nbar && (!p->lag || p->cluster != 1 || p->groups != 1 || p->threads != 32 * p->warps))
        fail("CTA barrier a row", q, dn, p);
    if (p->lag && p->cluster == 1 && !p->nbar) fail("mbarrier on one CTA", q, dn, p);
    if (p->threads != 32 * p->warps * p->groups) fail("threads != 32 W G", q, dn, p);
    if (p->vpt < 1 || (p->cls == FV2_TILE && p->vpt > 8)) fail("VPT outside the instantiated 1..8", q, dn, p);
    /* the kernels' __launch_bounds__: 256 threads (tile), 512 (odd) */
    if (p->threads > (p->cls == FV2_TILE ? 256 : 512)) fail("threads above the kernel's launch bound", q, dn, p);
    /* the slot holds what a group copies: T*VPT vectors of x, and 2*mv words each in RING */
    const int64_t need = (int64_t)p->vpt * 32 * p->warps * 16 * (1 + 2 * p->mv);
    const int64_t parts = p->lag ? 3 * FV2_MAX_PARTS * 16 : 0;
    if (p->slot_bytes < need || p->smem_bytes < (int64_t)p->groups * p->nstage * need + parts)
        fail("ring slot or parts too small", q, dn, p);
    if (p->mode == FV2_MOD_RING && p->mv * 16 != p->vec * q->sm) fail("modulation words", q, dn, p);
}

static void check_fast(const fv2_problem *q, const fv2_plan *p)
{
    const char *dn = DEVNAME[0];
    if (p->cls != FV2_TILE) {
        fail("not the tile class", q, dn, p);
        return;
    }
    if (!fv2_runs(p)) return; /* left to version 1's generic path: not v2's to be fast */
    if (p->ctas_sm * p->threads / 32 < 8) fail("fewer than 8 warps per SM", q, dn, p);
    if (p->warps > 1 && p->ctas_sm < 2) fail("one CTA a SM on the lag path", q, dn, p);
    if (4 * p->inflight_sm < 3 * p->target_sm) fail("rows in flight below 3/4 of the target", q, dn, p);
    const int64_t slots = (int64_t)32 * p->warps * p->cluster * p->vpt;
    if (p->warps == 1) {
        /* below D = 1024 a warp per row masks up to half of its lanes (no sub-warp rows yet) */
        if ((q->D >= 1024 ? 4 : 2) * (slots - p->nv) > slots) fail("too many vector slots masked", q, dn, p);
    } else if (slots - p->nv >= 32 * p->vpt) {
        fail("a whole warp's vector slots masked (several warps)", q, dn, p);
    }
}

static const int SIZES[9][3] = {{4, 4, 4}, {2, 4, 2}, {2, 4, 4}, {2, 2, 2}, {2, 2, 4},
                                {2, 4, 2}, {2, 4, 4}, {2, 2, 2}, {2, 2, 4}}; /* bf16 then fp16 */

int main(void)
{
    if ((int)FV2_SAMPLE != (int)LNMOD_PER_SAMPLE || (int)FV2_TOKEN != (int)LNMOD_PER_TOKEN ||
        (int)FV2_FRAME != (int)LNMOD_PER_FRAME) {
        fprintf(stderr, "test_lnmod_fwd_v2_plan: layout values differ from lnmod_desc.h\n");
        return 1;
    }
    seen = malloc(16384);
    if (!seen) return 1;
    /* layout and run (rows sharing a modulation row): per sample, per token, 4- and
     * 1,560-row frames */
    const int layouts[4][2] = {{FV2_SAMPLE, 32760}, {FV2_TOKEN, 1}, {FV2_FRAME, 4}, {FV2_FRAME, 1560}};
    for (int64_t D = 1; D <= 16384; D++) {
        nmemo = 0;
        for (int di = 0; di < 4; di++)
            for (int s = 0; s < 9; s++)
                for (int al = 0; al <= 1; al++)
                    for (int li = 0; li < 4; li++) {
                        fv2_problem q = {D, 32760, layouts[li][1], layouts[li][0], SIZES[s][0], SIZES[s][1],
                                         SIZES[s][2], al};
                        if (di == 2 && li == 0 && s == 1) q.rows = 64; /* few rows */
                        fv2_plan p;
                        checked++;
                        if (fv2_make_plan(&q, &DEVS[di], &p) != 0) {
                            fail("no plan", &q, DEVNAME[di], &p);
                            continue;
                        }
                        const int tile = al && D % (16 / q.sx) == 0;
                        /* a tile problem whose ring does not fit goes to the odd class */
                        if (p.cls == FV2_TILE && !tile) fail("tile class for an odd problem", &q, DEVNAME[di], &p);
                        if (tile && p.cls != FV2_TILE) demoted++;
                        if (p.cls == FV2_TILE ? !tile_covers(&p) : !odd_covers(&p, D))
                            fail("the row is not covered exactly once", &q, DEVNAME[di], &p);
                        check_limits(&q, &DEVS[di], DEVNAME[di], &p);
                        if (di == 0 && al && li == 0 && D >= 256 && D % (16 / q.sx) == 0 && q.rows >= 32760)
                            check_fast(&q, &p);
                    }
    }
    free(seen);
    /* What dtile runs of the rule's plans (fv2_runs) on the H200, bf16 x / fp32 modulation:
     * a warp a row or the lag path at two or more CTAs a SM (W 2-6) with the modulation in
     * registers, and the odd class; not W 7-8 (one CTA a SM), clusters or the streamed
     * modulation (version 1's generic path runs those). */
    static const struct {
        int64_t D, run;
        int layout, runs;
    } want[] = {{256, 32760, FV2_SAMPLE, 1},    {1152, 32760, FV2_SAMPLE, 1}, {2048, 32760, FV2_SAMPLE, 1},
                {1537, 32760, FV2_SAMPLE, 1},   {5119, 1, FV2_TOKEN, 1},      {2304, 32760, FV2_SAMPLE, 1},
                {3840, 32760, FV2_SAMPLE, 1},   {4608, 32760, FV2_SAMPLE, 1}, {7296, 32760, FV2_SAMPLE, 1},
                {6144, 32760, FV2_SAMPLE, 1},   {8064, 32760, FV2_SAMPLE, 0}, {10240, 32760, FV2_SAMPLE, 0},
                {2304, 1, FV2_TOKEN, 0},        {512, 1, FV2_TOKEN, 0}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        fv2_problem q = {want[i].D, 32760, want[i].run, want[i].layout, 2, 4, 2, 1};
        fv2_plan p;
        if (fv2_make_plan(&q, &DEVS[0], &p) != 0 || fv2_runs(&p) != want[i].runs)
            fail(want[i].runs ? "dtile does not run this v2 plan" : "dtile runs a v2 plan it leaves to version 1", &q,
                 DEVNAME[0], &p);
    }
    /* The rule's picks at widths of the bar (bf16 x, fp32 modulation, per sample), per device. */
    const int64_t show[] = {256, 1024, 1152, 1536, 1920, 2048, 2304, 3072, 3840, 4096, 5120, 6144, 8192, 10240, 16384, 1537, 5119};
    for (int di = 0; di < 4; di++)
        for (size_t i = 0; i < sizeof show / sizeof show[0]; i++) {
            fv2_problem q = {show[i], 32760, 32760, FV2_SAMPLE, 2, 4, 2, 1};
            fv2_plan p;
            if (fv2_make_plan(&q, &DEVS[di], &p) == 0)
                printf("  %-9s D %5lld: %s VPT %d W %d C %d G %d NS %d threads %d, ~%d regs, %d CTAs/SM, %lld KB in flight/SM (target %lld)%s\n",
                       DEVNAME[di], (long long)q.D,
                       p.cls == FV2_TILE ? (p.mode == FV2_MOD_REG ? "tile/reg " : "tile/ring") : "odd      ", p.vpt,
                       p.warps, p.cluster, p.groups, p.nstage, p.threads, p.regs, p.ctas_sm,
                       (long long)(p.inflight_sm >> 10), (long long)(p.target_sm >> 10),
                       fv2_runs(&p) ? "" : "; dtile: version 1");
        }
    if (fails) {
        fprintf(stderr, "test_lnmod_fwd_v2_plan: %d failures in %ld plans\n", fails, checked);
        return 1;
    }
    printf("test_lnmod_fwd_v2_plan: ok (%ld plans, %ld coverage walks; %ld tile problems on the odd class, none of them\n"
           "  per-sample 16-bit/fp32 x on the H200 at D >= 256)\n", checked, covered, demoted);
    return 0;
}
