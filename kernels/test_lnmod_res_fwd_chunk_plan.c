/* test_lnmod_res_fwd_chunk_plan.c -- host test of lnmod_res_fwd_chunk_plan.h (the plan of the
 * fused op's chunk forward). CTest runs it, and builds it with each planted bug of the header
 * (tests lnmod_res_fwd_chunk_plan_planted_*, which must fail). Exit 0: all held. */
#include <stdio.h>
#include <string.h>

#include "lnmod_res_fwd_chunk_plan.h"

static int fails;
#define EXPECT(c, ...)                                                                                                 \
    do {                                                                                                               \
        if (!(c) && fails++ < 10) {                                                                                    \
            printf("test_lnmod_res_fwd_chunk_plan: FAIL line %d: ", __LINE__);                                        \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

/* Is (T, K) one of LNMOD_RES_CHUNK_SHAPES? */
static int instantiated(int T, int K)
{
    int n = 0;
#define ONE(T_, K_) n += (T == T_ && K == K_);
    LNMOD_RES_CHUNK_SHAPES(ONE)
#undef ONE
    return n == 1;
}

/* Every D 0..12,000: taken exactly from 64 to 10,240; T the smallest of 64/128/256/512 with K <= 6,
 * else 512 with K <= 20; every column owned once; step K - 1 not empty; (T, K) instantiated; R
 * as the header's table; a stage within a third of a 224 KB SM; and the Wan widths as the header
 * states. */
static void shapes(void)
{
    for (int64_t D = 0; D <= 12000; D++) {
        int T = -1, K = -1, R = -1;
        const int ok = lnmod_res_chunk_shape(D, &T, &K, &R);
        EXPECT(ok == (D >= 64 && D <= 10240), "D %lld: taken %d", (long long)D, ok);
        if (!ok) continue;
        const int want_T = D <= 384 ? 64 : D <= 768 ? 128 : D <= 1536 ? 256 : 512;
        EXPECT(T == want_T && K == (int)((D + T - 1) / T), "D %lld: T %d K %d", (long long)D, T, K);
        EXPECT(K <= (D <= 3072 ? 6 : 20) && (int64_t)(K - 1) * T < D, "D %lld: T %d K %d", (long long)D, T, K);
        EXPECT(instantiated(T, K), "D %lld: T %d K %d not instantiated", (long long)D, T, K);
        EXPECT(R == (K <= 4 ? 4 : K <= 6 ? 3 : K <= 10 ? 2 : 1), "D %lld: R %d at K %d", (long long)D, R, K);
        EXPECT(3 * 6 * (int64_t)R * T * K <= 224 * 1024 || R == 1, "D %lld: R %d over the stage budget", (long long)D, R);
    }
    const struct { int64_t D; int T, K, R; } w[] = {{1536, 256, 6, 3}, {3072, 512, 6, 3}, {5120, 512, 10, 2},
                                                   {5121, 512, 11, 1}, {10240, 512, 20, 1}, {64, 64, 1, 4},
                                                   {1000, 256, 4, 4}, {385, 128, 4, 4}};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        int T = 0, K = 0, R = 0;
        EXPECT(lnmod_res_chunk_shape(w[i].D, &T, &K, &R) && T == w[i].T && K == w[i].K && R == w[i].R,
               "D %lld: T %d K %d R %d", (long long)w[i].D, T, K, R);
    }
}

/* The slots hold the largest superset of every chunk (R rows or fewer, any phase of r and y):
 * 16-byte multiples; the Wan widths' stages (at their R) as the header states. */
static void slots(void)
{
    for (int R = 1; R <= 4; R++)
        for (int64_t D = 64; D <= 10240; D += (D < 300 ? 1 : 37)) {
            int64_t sr = 0, sy = 0;
            lnmod_res_chunk_slots(R, D, &sr, &sy);
            EXPECT(sr % 16 == 0 && sy % 16 == 0, "R %d D %lld: slots %lld %lld", R, (long long)D, (long long)sr,
                   (long long)sy);
            for (int nr = 1; nr <= R; nr++) {
                for (int ph = 0; ph < 16; ph += 4)
                    EXPECT((ph + 4 * nr * D + 15) / 16 * 16 <= sr, "R %d D %lld: r phase %d", R, (long long)D, ph);
                for (int ph = 0; ph < 16; ph += 2)
                    EXPECT((ph + 2 * nr * D + 15) / 16 * 16 <= sy, "R %d D %lld: y phase %d", R, (long long)D, ph);
            }
        }
    const struct { int64_t D; int R; int64_t stage; } w[] = {{1536, 3, 27680}, {3072, 3, 55328}, {5120, 2, 61472}};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        int64_t sr = 0, sy = 0;
        lnmod_res_chunk_slots(w[i].R, w[i].D, &sr, &sy);
        EXPECT(sr + sy == w[i].stage, "D %lld: stage %lld", (long long)w[i].D, (long long)(sr + sy));
    }
}

/* Where it runs: Wan's dtypes, maps with a run of rows, the phases, the device. */
static void takes(void)
{
    lnmod_res_desc d = lnmod_res_desc_default();
    d.rows = 32760;
    d.D = 1536;
    d.rows_per_sample = 32760;
    d.frame_len = 1560;
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * 1536;
    const uintptr_t A = 0x10000;
    EXPECT(lnmod_res_chunk_takes(&d, A, A + 0x100000, A + 0x200000, A + 0x300000, 9), "Wan's call not taken");
    EXPECT(!lnmod_res_chunk_takes(&d, A, A, A, A, 8), "taken below compute capability 9");
    EXPECT(lnmod_res_chunk_takes(&d, A + 4, A + 6, A + 0x104, A + 0x206, 9), "phases matched but not taken");
    EXPECT(lnmod_res_chunk_takes(&d, A + 4, A + 6, A + 4, A + 6, 9), "in place not taken");
    EXPECT(!lnmod_res_chunk_takes(&d, A, A, A + 4, A, 9), "h at another phase than r taken");
    EXPECT(!lnmod_res_chunk_takes(&d, A, A, A, A + 2, 9), "out at another phase than y taken");
    EXPECT(!lnmod_res_chunk_takes(&d, A + 2, A, A + 2, A, 9), "r not 4-byte aligned taken");
    d.layout = LNMOD_PER_FRAME;
    EXPECT(lnmod_res_chunk_takes(&d, A, A, A, A, 9), "per frame not taken");
    d.layout = LNMOD_PER_TOKEN;
    EXPECT(!lnmod_res_chunk_takes(&d, A, A, A, A, 9), "per token with a gate taken");
    d.gate = LNMOD_RES_GATE_NONE;
    EXPECT(!lnmod_res_chunk_takes(&d, A, A, A, A, 9), "per token modulation taken");
    d.norm = LNMOD_RES_AFFINE;
    EXPECT(lnmod_res_chunk_takes(&d, A, A, A, A, 9), "no gate, affine (nothing a row) not taken");
    d = lnmod_res_desc_default();
    d.rows = 100;
    d.D = 1536;
    d.rows_per_sample = 100;
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * 1536;
    const lnmod_dtype o[4] = {LNMOD_F16, LNMOD_F32, LNMOD_BF16, LNMOD_F16};
    for (int k = 0; k < 4; k++) {
        lnmod_res_desc e = d;
        if (k == 0) e.res_dtype = o[k];
        if (k == 1) e.branch_dtype = o[k];
        if (k == 2) e.mod_dtype = o[k];
        if (k == 3) e.out_dtype = o[k];
        EXPECT(!lnmod_res_chunk_takes(&e, A, A, A, A, 9), "dtype %d changed: taken", k);
    }
    d.D = 63;
    EXPECT(!lnmod_res_chunk_takes(&d, A, A, A, A, 9), "D 63 taken");
    d.D = 64;
    d.rows = (int64_t)1 << 33; /* R 4: 2^31 chunks */
    EXPECT(!lnmod_res_chunk_takes(&d, A, A, A, A, 9), "2^31 chunks taken");
}

/* The ring on an H200's facts, on an SM of 164 KB (an A100's size) and on one of 100 KB: fits the SM and the CTA,
 * 3..8 stages, the CTAs within threads, registers and slots; at the Wan widths with 128
 * registers 16 warps a SM and the stages the header's arithmetic gives (D 1536: 2 CTAs x 4,
 * D 3072: 1 x 4, D 5120: 1 x 3 -- round 2's measured shapes). */
static void ring(void)
{
    const lnmod_res_chunk_dev devs[3] = {{233472, 232448, 65536, 2048, 32},
                                         {167936, 166912, 65536, 2048, 32},
                                         {102400, 101376, 65536, 1536, 16}};
    const int regs[4] = {72, 96, 107, 128};
    for (int v = 0; v < 3; v++)
        for (int g = 0; g < 4; g++)
            for (int64_t D = 64; D <= 10240; D += 13) {
                int T = 0, K = 0, R = 0, c = 0, ns = 0;
                int64_t smem = 0, sr, sy;
                (void)lnmod_res_chunk_shape(D, &T, &K, &R);
                lnmod_res_chunk_slots(R, D, &sr, &sy);
                if (lnmod_res_chunk_ring(&devs[v], T, R, D, regs[g], 0, &c, &ns, &smem) != 0) {
                    EXPECT(sr + sy + lnmod_res_chunk_fixed(T, R) > devs[v].smem_block / 3, "D %lld: no ring", (long long)D);
                    continue;
                }
                EXPECT(ns >= 3 && ns <= 8 && c >= 1, "D %lld: %d CTAs %d stages", (long long)D, c, ns);
                EXPECT(smem == ns * (sr + sy) + lnmod_res_chunk_fixed(T, R), "D %lld: smem %lld", (long long)D,
                       (long long)smem);
                EXPECT(c * (smem + LNMOD_RES_CHUNK_RESERVE) <= devs[v].smem_sm && smem <= devs[v].smem_block,
                       "D %lld: %d x %lld bytes", (long long)D, c, (long long)smem);
                EXPECT((int64_t)c * T <= devs[v].threads_sm && c <= devs[v].blocks_sm &&
                           (int64_t)c * T * ((regs[g] + 7) / 8 * 8) <= devs[v].regs_sm,
                       "D %lld: %d CTAs of %d threads", (long long)D, c, T);
            }
    const int64_t wan[3] = {1536, 3072, 5120};
    const int wan_ns[3] = {4, 4, 3};
    for (int i = 0; i < 3; i++) {
        int T = 0, K = 0, R = 0, c = 0, ns = 0;
        int64_t smem = 0;
        (void)lnmod_res_chunk_shape(wan[i], &T, &K, &R);
        EXPECT(lnmod_res_chunk_ring(&devs[0], T, R, wan[i], 128, 0, &c, &ns, &smem) == 0 && c * T == 512 &&
                   ns == wan_ns[i],
               "D %lld: %d CTAs of %d, %d stages", (long long)wan[i], c, T, ns);
    }
}

int main(void)
{
    shapes();
    slots();
    takes();
    ring();
    if (fails) {
        printf("test_lnmod_res_fwd_chunk_plan: %d FAILED\n", fails);
        return 1;
    }
    printf("test_lnmod_res_fwd_chunk_plan: ok\n");
    return 0;
}
