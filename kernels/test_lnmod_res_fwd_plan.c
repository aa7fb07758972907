/* test_lnmod_res_fwd_plan.c -- host test of lnmod_res_fwd_plan.h (the fused op's general dtile
 * forward's row shape). CTest runs it, and builds it with LNMOD_RES_FWD_PLANT_ROUND (test
 * lnmod_res_fwd_plan_planted_round, which must fail). Exit 0: all held. */
#include <stdio.h>
#include <string.h>

#include "lnmod_res_fwd_plan.h"

static int fails;
#define EXPECT(c, ...)                                                                                                 \
    do {                                                                                                               \
        if (!(c) && fails++ < 10) {                                                                                    \
            printf("test_lnmod_res_fwd_plan: FAIL line %d: ", __LINE__);                                              \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

/* Every D 0..12,000: taken exactly at the multiples of 8 up to 10,240; whole warps within the
 * limits; every unit of the row owned by exactly one (thread, slot) with the thread below T;
 * every warp with a unit in slot 0 (lane 0); no VPT with fewer idle slots; and D 1152 / 264 /
 * 1000 / 2056 as lnmod_res_fwd_dtile.cu's comment states. */
int main(void)
{
    static unsigned char owned[LNMOD_RES_FWD_GEN_MAXD / 8 + 1];
    for (int64_t D = 0; D <= 12000; D++) {
        int T = -1, V = -1;
        const int ok = lnmod_res_fwd_gen_shape(D, &T, &V);
        const int want = D >= 8 && D % 8 == 0 && D <= LNMOD_RES_FWD_GEN_MAXD;
        EXPECT(ok == want, "D %lld: taken %d", (long long)D, ok);
        if (!ok) continue;
        const int64_t U = D / 8;
        EXPECT(T % 32 == 0 && T >= 32 && T <= LNMOD_RES_FWD_GEN_MAXT, "D %lld: T %d", (long long)D, T);
        EXPECT(V >= 1 && V <= LNMOD_RES_FWD_GEN_MAXVPT, "D %lld: VPT %d", (long long)D, V);
        EXPECT((int64_t)T * V >= U, "D %lld: %d x %d slots for %lld units", (long long)D, T, V, (long long)U);
        memset(owned, 0, sizeof owned);
        for (int t = 0; t < T; t++)
            for (int k = 0; k < V; k++) {
                const int64_t u = t + (int64_t)k * T;
                if (u < U) owned[u]++;
            }
        int64_t bad = 0;
        for (int64_t u = 0; u < U; u++) bad += owned[u] != 1;
        EXPECT(bad == 0, "D %lld: %lld units not owned once", (long long)D, (long long)bad);
        for (int w = 0; w < T / 32; w++) EXPECT(32 * w < U, "D %lld: warp %d has no unit in slot 0", (long long)D, w);
        for (int v = 1; v <= LNMOD_RES_FWD_GEN_MAXVPT; v++) {
            const int64_t t = ((U + v - 1) / v + 31) / 32 * 32;
            if (t <= LNMOD_RES_FWD_GEN_MAXT)
                EXPECT(t * v - U >= (int64_t)T * V - U, "D %lld: VPT %d idles fewer slots than %d", (long long)D, v, V);
        }
    }
    const struct { int64_t D; int T, V; } c[] = {{1152, 32, 5}, {264, 32, 2}, {1000, 32, 4}, {2056, 96, 3},
                                               {2048, 64, 4}, {8192, 256, 4}, {10240, 256, 5}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        int T = 0, V = 0;
        EXPECT(lnmod_res_fwd_gen_shape(c[i].D, &T, &V) && T == c[i].T && V == c[i].V, "D %lld: T %d VPT %d (want %d x %d)",
               (long long)c[i].D, T, V, c[i].T, c[i].V);
    }
    if (fails) {
        printf("test_lnmod_res_fwd_plan: %d FAILED\n", fails);
        return 1;
    }
    printf("test_lnmod_res_fwd_plan: every width's shape held\n");
    return 0;
}
