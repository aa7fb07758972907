/* test_lnmod_bwd_bulk_plan.c -- Criterion tests of the index math of dtile backward's bulk
 * path (lnmod_bwd_bulk_plan.h), CPU only: for every layout and many sizes, the chunks' shares
 * over G = 2 and 4 groups cover every row of every modulation group exactly once, shares
 * differ by at most one row, each row's modulation row is lnmod_mod_index's; a full-length
 * group's chunks hold at least R rows (the plan rounds the chunk count down: 252 chunks per
 * frame at 32,760 rows, 255 per sample; 510 at 75,600 rows); the row shape at the Wan
 * widths; the layout values agree with lnmod_desc.h; the per-sample/frame row shape
 * (lnmod_bulk_fill) at every multiple of 8 up to D 16384 for each x/dy dtype pair: every
 * element in exactly one thread's vectors, the ring inside sm_90's limits, never fewer rows in
 * flight than the old shape. Also built with a planted bug each (LNMOD_BULK_PLANT_CEIL,
 * _SHARE, _GROUPS, _FILL), which CMake expects to fail.
 *
 *   ctest --test-dir build -R lnmod_bwd_bulk_plan
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lnmod_bwd_bulk_plan.h"
#include "lnmod_desc.h"

/* Checks the plan of one descriptor shape; returns the number of faults (first one logged). */
static int check_plan(int64_t rows, int64_t S, int64_t L, int lay)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = rows;
    d.D = 8;
    d.rows_per_sample = S;
    d.frame_len = L;
    d.layout = (lnmod_layout)lay;
    d.scale_stride = d.shift_stride = 8;
    if (lnmod_desc_validate(&d) != LNMOD_OK) return 0;
    const lnmod_bulk_plan p = lnmod_bulk_make_plan(rows, S, L, lay);
    const int64_t target = rows > 65536 ? 512 : 256;
    int64_t R = (rows + target - 1) / target;
    R = R < 32 ? 32 : R > 256 ? 256 : R;
    int faults = 0;
#define FAULT(what)                                                                                      \
    do {                                                                                                 \
        if (faults++ == 0)                                                                               \
            cr_log_error("%s (rows %lld S %lld L %lld layout %d)", what, (long long)rows, (long long)S, \
                         (long long)L, lay);                                                             \
    } while (0)
    if (p.ngroups != lnmod_mod_rows(&d)) FAULT("ngroups differs from lnmod_mod_rows");
    if (p.cpg > 1 && p.cpg > p.glen / R) FAULT("cpg above floor(glen / R)");
    unsigned char *seen = calloc((size_t)rows, 1);
    cr_assert_not_null(seen);
    static const int Gs[] = {2, 3, 4}; /* lnmod_bulk_fill's group counts */
    for (size_t gi = 0; gi < sizeof Gs / sizeof Gs[0]; gi++) {
        const int G = Gs[gi];
        for (int64_t i = 0; i < rows; i++) seen[i] = 0;
        for (int64_t c = 0; c < p.nchunks; c++) {
            int64_t g, r0, n, gs, glen;
            lnmod_bulk_chunk_rows(&p, c, &g, &r0, &n);
            lnmod_bulk_group_rows(&p, g, &gs, &glen);
            if (p.cpg > 1 && glen == p.glen && n < R) FAULT("a full group's chunk under R rows");
            int32_t lo = INT32_MAX, hi = 0;
            for (int q = 0; q < G; q++) {
                int32_t first, step, cnt;
                lnmod_bulk_share(&p, r0, n, q, G, &first, &step, &cnt);
                lo = cnt < lo ? cnt : lo;
                hi = cnt > hi ? cnt : hi;
                for (int32_t j = 0, r = first; j < cnt; j++, r += step) {
                    if (r < 0 || r >= rows) {
                        FAULT("row out of range");
                        continue;
                    }
                    if (lnmod_mod_index(&d, r) != g) FAULT("row of another modulation row");
                    if (seen[r]++) FAULT("row taken twice");
                }
            }
            if (hi - lo > 1) FAULT("shares differ by more than a row");
        }
        for (int64_t i = 0; i < rows; i++)
            if (!seen[i]) {
                FAULT("row not taken");
                break;
            }
    }
#undef FAULT
    free(seen);
    return faults;
}

Test(lnmod_bwd_bulk_plan, layout_values_agree)
{
    cr_expect_eq((int)LNMOD_BULK_SAMPLE, (int)LNMOD_PER_SAMPLE);
    cr_expect_eq((int)LNMOD_BULK_TOKEN, (int)LNMOD_PER_TOKEN);
    cr_expect_eq((int)LNMOD_BULK_FRAME, (int)LNMOD_PER_FRAME);
}

Test(lnmod_bwd_bulk_plan, wan_plans_fill_the_waves)
{
    const lnmod_bulk_plan f = lnmod_bulk_make_plan(32760, 32760, 1560, LNMOD_BULK_FRAME);
    cr_expect_eq(f.cpg, 12, "per frame: %lld chunks a frame, want 12", (long long)f.cpg);
    cr_expect_eq(f.nchunks, 252);
    cr_expect_eq(lnmod_bulk_make_plan(32760, 32760, 1, LNMOD_BULK_SAMPLE).nchunks, 255);
    cr_expect_eq(lnmod_bulk_make_plan(65520, 32760, 1, LNMOD_BULK_SAMPLE).nchunks, 254);
    cr_expect_eq(lnmod_bulk_make_plan(75600, 75600, 1, LNMOD_BULK_SAMPLE).nchunks, 510);
}

Test(lnmod_bwd_bulk_plan, shares_cover_every_row_once)
{
    int faults = 0;
    faults += check_plan(32760, 32760, 1560, LNMOD_BULK_FRAME);
    faults += check_plan(32760, 32760, 1, LNMOD_BULK_SAMPLE);
    faults += check_plan(75600, 75600, 1, LNMOD_BULK_SAMPLE);
    faults += check_plan(3021, 1007, 500, LNMOD_BULK_FRAME);
    for (int64_t S = 1; S <= 70; S += 3)
        for (int64_t B = 1; B <= 3; B++) {
            faults += check_plan(B * S, S, 1, LNMOD_BULK_SAMPLE);
            faults += check_plan(B * S, S, 1, LNMOD_BULK_TOKEN);
            for (int64_t L = 1; L <= S; L += 4) faults += check_plan(B * S, S, L, LNMOD_BULK_FRAME);
        }
    for (int64_t S = 8190; S <= 8200; S += 5) faults += check_plan(4 * S, S, 7 + S / 3, LNMOD_BULK_FRAME);
    cr_expect_eq(faults, 0, "%d faults (the first is logged)", faults);
}

Test(lnmod_bwd_bulk_plan, row_shapes)
{
    /* nv 16-byte vectors -> T threads a group, G groups; 0 where the path does not take it. */
    static const struct {
        int64_t nv;
        int takes, t, g;
    } c[] = {
        {192, 1, 96, 4},  /* bf16 D1536 */
        {384, 1, 192, 4}, /* bf16 D3072, fp32 D1536 */
        {640, 1, 320, 2}, /* bf16 D5120 */
        {768, 1, 384, 2}, /* bf16 D6144 */
        {769, 0, 0, 0},   /* 385 threads: version 1 */
        {1024, 0, 0, 0},  /* bf16 D8192 */
        {1, 0, 0, 0},     /* D8 bf16 */
        {2, 1, 32, 4},    /* D16 bf16 */
        {125, 1, 64, 4},  /* D1000 bf16 */
        {386, 1, 224, 2}, /* 193 threads rounded to 224: 4 x 224 > 768 */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        int t = 0, g = 0;
        const int takes = lnmod_bulk_shape(c[i].nv, &t, &g);
        cr_expect_eq(takes, c[i].takes, "nv %lld: takes %d", (long long)c[i].nv, takes);
        if (takes && c[i].takes) {
            cr_expect_eq(t, c[i].t, "nv %lld: T %d, want %d", (long long)c[i].nv, t, c[i].t);
            cr_expect_eq(g, c[i].g, "nv %lld: G %d, want %d", (long long)c[i].nv, g, c[i].g);
            cr_expect(g * t <= 768, "nv %lld: a CTA of %d threads", (long long)c[i].nv, g * t);
            cr_expect(2 * t >= c[i].nv, "nv %lld: two vectors of %d threads miss some", (long long)c[i].nv, t);
        }
    }
}

/* Per token (lnmod_bwd_bulk_tok.cu): over grids and group counts every row is taken exactly
 * once, each group's rows ascending. The two per-token tests are also built with a planted
 * bug each (LNMOD_BULK_PLANT_TOK, _SCAT; kernels/CMakeLists.txt), which must fail them. */
Test(lnmod_bwd_bulk_plan, tok_walk_takes_every_row_once)
{
    static const int64_t rows_l[] = {1, 2, 3, 5, 37, 1000, 4097, 32760};
    static const int Gs[] = {2, 4};
    int faults = 0;
    for (size_t ri = 0; ri < sizeof rows_l / sizeof rows_l[0]; ri++) {
        const int64_t rows = rows_l[ri];
        unsigned char *seen = calloc((size_t)rows, 1);
        cr_assert_not_null(seen);
        for (int gi = 0; gi < 2; gi++) {
            const int G = Gs[gi];
            const int64_t grids[] = {1, 3, 132, 264, (rows + G - 1) / G};
            for (int k = 0; k < 5; k++) {
                for (int64_t r = 0; r < rows; r++) seen[r] = 0;
                for (int64_t b = 0; b < grids[k]; b++)
                    for (int q = 0; q < G; q++) {
                        int64_t last = -1;
                        const int64_t step = lnmod_bulk_tok_step(grids[k], G);
                        for (int64_t r = lnmod_bulk_tok_first(b, G, q); r < rows; r += step) {
                            if (r <= last || seen[r]++) faults++;
                            last = r;
                        }
                    }
                for (int64_t r = 0; r < rows; r++)
                    if (!seen[r]) faults++;
            }
        }
        free(seen);
    }
    cr_expect_eq(faults, 0, "tok walk: %d faults", faults);
}

/* Per token: a stage's three copies (x at [0, nv), dy at [dy_at, + nv*dyw), scale at
 * [sc_at, + nv*msw)) are disjoint and inside the stage, and the slots a thread reads
 * (bk_read's formula for dy, bt_read's for scale) are the copies' bytes of its vectors, for
 * every row shape and dtype triple (planted: LNMOD_BULK_PLANT_SCAT). */
Test(lnmod_bwd_bulk_plan, tok_stage_slots)
{
    /* x, modulation, dy element sizes: the triples lnmod_dispatch_dtypes runs */
    static const int xs[] = {2, 2, 2, 2, 4}, ms[] = {2, 4, 2, 4, 4}, ys[] = {2, 2, 4, 4, 4};
    int faults = 0;
    for (int t = 0; t < 5; t++) {
        const int vec = 16 / xs[t], dyw = vec * ys[t] / 16, msw = vec * ms[t] / 16;
        const int slots = lnmod_bulk_tok_slots(dyw, msw);
        for (int T = 32; T <= 384; T += 32)
            for (int nv = 2 * T - 63 > 2 ? 2 * T - 63 : 2; nv <= 2 * T; nv++) {
                int shape_T = 0, G = 0;
                if (!lnmod_bulk_shape(nv, &shape_T, &G) || shape_T != T) continue;
                const int n = slots * T;
                int *owner = calloc((size_t)n, sizeof(int));
                cr_assert_not_null(owner);
                const int lo[3] = {0, lnmod_bulk_tok_dy_at(T), lnmod_bulk_tok_sc_at(T, dyw)};
                const int len[3] = {nv, nv * dyw, nv * msw};
                for (int k = 0; k < 3; k++)
                    for (int i = lo[k]; i < lo[k] + len[k]; i++) {
                        if (i < 0 || i >= n || owner[i]) {
                            faults++;
                            break;
                        }
                        owner[i] = k + 1;
                    }
                for (int tid = 0; tid < T; tid++)
                    for (int q = 0; q < 2; q++) {
                        const int v = tid + q * T;
                        if (v >= nv) continue;
                        if (owner[v] != 1) faults++;
                        for (int w = 0; w < dyw; w++) {
                            const int sl = tid + 2 * T + q * T * dyw + tid * (dyw - 1) + w; /* bk_read */
                            if (sl != lo[1] + v * dyw + w || owner[sl] != 2) faults++;
                        }
                        for (int w = 0; w < msw; w++) { /* bt_read */
                            const int sl = tid + lnmod_bulk_tok_sc_at(T, dyw) + q * T * msw + tid * (msw - 1) + w;
                            if (sl != lo[2] + v * msw + w || owner[sl] != 3) faults++;
                        }
                    }
                free(owner);
            }
    }
    cr_expect_eq(faults, 0, "tok stage: %d faults", faults);
    /* bf16 x/dy, fp32 modulation, D1536 (T 96, G 4), 2 stages: round 3's table, 98,368 B */
    cr_expect_eq(lnmod_bulk_tok_smem(4, 2, 96, lnmod_bulk_tok_slots(1, 2)), 98368);
    cr_expect_eq(lnmod_bulk_tok_smem(2, 2, 320, lnmod_bulk_tok_slots(1, 2)), 163872);
}

/* The per-sample/frame row shape (lnmod_bulk_fill) at every multiple of 8 in 1..16384, for
 * each x/dy element-size pair the kernel runs (bf16/fp16 x with its own or fp32 dy, fp32
 * x and dy; the modulation's dtype does not enter): taken exactly where lnmod_bulk_shape
 * takes the width; T whole warps (32..384), G of {2, 3, 4}, G x T <= 768; every element of
 * the row in exactly one (thread, vector) of the group, and the slots the thread reads
 * (bk_issue's copies, bk_read's dy formula) that element's bytes; the ring at its depth inside
 * the opt-in shared memory, its CTAs inside the SM's shared memory and 24 warps; never fewer
 * rows in flight an SM than the old G (planted: LNMOD_BULK_PLANT_FILL). */
Test(lnmod_bwd_bulk_plan, fill_covers_every_width_once)
{
    static const int xs[] = {2, 2, 4}, ys[] = {2, 4, 4};
    int faults = 0, widths = 0;
    char first[160] = "";
#define FILL_FAULT(...)                                                    \
    do {                                                                   \
        if (faults++ == 0) snprintf(first, sizeof first, __VA_ARGS__);     \
    } while (0)
    for (int t = 0; t < 3; t++) {
        const int vec = 16 / xs[t], dyw = vec * ys[t] / 16, slots = 2 * (1 + dyw);
        for (int64_t D = 8; D <= 16384; D += 8) {
            const int64_t nv = D / vec;
            int T0 = 0, G0 = 0;
            const int old = lnmod_bulk_shape(nv, &T0, &G0);
            lnmod_bulk_fit f;
            const int takes = lnmod_bulk_fill(nv, vec, dyw, &f);
            if (takes != old) FILL_FAULT("D %lld x%d y%d: takes %d, lnmod_bulk_shape %d", (long long)D, xs[t], ys[t], takes, old);
            if (!takes) continue;
            widths++;
            const int T = f.threads, G = f.groups, NS = f.stages;
            if (T % 32 || T < 32 || T > 384 || T / 32 > LNMOD_BULK_MAX_NW)
                FILL_FAULT("D %lld: T %d not 32..384 whole warps", (long long)D, T);
            if (G < 2 || G > 4 || G * T > LNMOD_BULK_MAXT)
                FILL_FAULT("D %lld: G %d of T %d", (long long)D, G, T);
            /* every element once: thread tid owns vectors tid + q*T (q < 2) below nv */
            unsigned char *seen = calloc((size_t)D, 1);
            cr_assert_not_null(seen);
            for (int tid = 0; tid < T; tid++)
                for (int q = 0; q < 2; q++) {
                    const int64_t v = tid + (int64_t)q * T;
                    if (v >= nv) continue;
                    for (int e = 0; e < vec; e++) seen[v * vec + e]++;
                    /* the slots read: x at v, dy's pieces at 2T + v*dyw + w, inside the stage */
                    for (int w = 0; w < dyw; w++) {
                        const int64_t sl = tid + 2 * (int64_t)T + q * (int64_t)T * dyw + tid * (int64_t)(dyw - 1) + w;
                        if (sl != 2 * (int64_t)T + v * dyw + w || sl >= (int64_t)slots * T)
                            FILL_FAULT("D %lld: dy slot %lld of vector %lld", (long long)D, (long long)sl, (long long)v);
                    }
                }
            for (int64_t e = 0; e < D; e++)
                if (seen[e] != 1) {
                    FILL_FAULT("D %lld x%d y%d (T %d): element %lld in %d vectors", (long long)D, xs[t], ys[t], T,
                               (long long)e, seen[e]);
                    break;
                }
            free(seen);
            if (nv > 2 * (int64_t)T || nv * dyw > (int64_t)T * (slots - 2))
                FILL_FAULT("D %lld: a row's copies overflow the stage", (long long)D);
            /* the limits at the planned depth */
            const int64_t sm = lnmod_bulk_smem(G, NS, T, slots, vec, D, 2 * vec >= 16) + lnmod_bulk_smem_static(G, NS);
            if (NS < 2 || NS > 4 || f.ctas < 1 || sm > LNMOD_BULK_OPTIN ||
                (int64_t)f.ctas * (sm + LNMOD_BULK_CTA_RESERVED) > LNMOD_BULK_SM_SMEM ||
                f.ctas * G * T / 32 > LNMOD_BULK_SM_WARPS || f.ahead != f.ctas * G * (NS - 1))
                FILL_FAULT("D %lld x%d y%d: G %d T %d NS %d ctas %d smem %lld past the limits", (long long)D, xs[t],
                           ys[t], G, T, NS, f.ctas, (long long)sm);
            const lnmod_bulk_fit o = lnmod_bulk_occupy(nv, vec, dyw, T0, G0);
            if (f.ahead < o.ahead) FILL_FAULT("D %lld: %d rows ahead, the old shape %d", (long long)D, f.ahead, o.ahead);
        }
    }
#undef FILL_FAULT
    cr_expect_eq(faults, 0, "%d faults; first: %s", faults, first);
    cr_expect_eq(widths, 767 + 767 + 384, "%d widths taken", widths);
}

/* The shapes the README's table gives (bf16 x and dy): T unchanged, G filling the SM's warps
 * where the old G left them idle; the Wan widths (1536, 3072, 5120) keep G and so their bits. */
Test(lnmod_bwd_bulk_plan, fill_shapes)
{
    static const struct {
        int64_t D;
        int t, g, ns, ctas;
    } c[] = {
        {1024, 64, 4, 4, 3},  {1536, 96, 4, 4, 2},  {1664, 128, 3, 4, 2}, {1792, 128, 3, 4, 2},
        {1920, 128, 3, 4, 2}, {2048, 128, 3, 4, 2}, {2560, 160, 4, 4, 1}, {3072, 192, 4, 4, 1},
        {3200, 224, 3, 4, 1}, {3584, 224, 3, 4, 1}, {3712, 256, 3, 4, 1}, {4096, 256, 3, 4, 1},
        {5120, 320, 2, 4, 1}, {6144, 384, 2, 3, 1},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        lnmod_bulk_fit f;
        cr_assert(lnmod_bulk_fill(c[i].D / 8, 8, 1, &f), "D %lld not taken", (long long)c[i].D);
        cr_expect(f.threads == c[i].t && f.groups == c[i].g && f.stages == c[i].ns && f.ctas == c[i].ctas,
                  "D %lld: T %d G %d NS %d ctas %d, want %d %d %d %d", (long long)c[i].D, f.threads, f.groups,
                  f.stages, f.ctas, c[i].t, c[i].g, c[i].ns, c[i].ctas);
    }
    /* bf16 D1536: the bulk kernel's shared memory of version 3's record (4 stages, 2 CTAs) */
    cr_expect_eq(lnmod_bulk_smem(4, 4, 96, 4, 8, 1536, 1), 110720);
}
