/* cmd_verify_res.c -- see cmd_verify_res.h. */
#include "cmd_verify_res.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ada_cuda.h"
#include "cli.h"
#include "verify.h"
#include "verify_model_res.h"
#include "verify_res.h"

#if ADALOAD_HAVE_CUDA
#include "lnmod.h"
#endif

#define CMD "verify"

/* One line a case record of verify_res_run_cpu. */
static void print_case(const json_t *c)
{
    const char *fail = "";
    const json_t *f = json_object_get(c, "fails");
    const char *key;
    json_t *v;
    char why[256] = "";
    size_t used = 0;
    json_object_foreach((json_t *)f, key, v) {
        int w = snprintf(why + used, sizeof why - used, "%s%s %" JSON_INTEGER_FORMAT, used ? ", " : "", key,
                         json_integer_value(v));
        if (w < 0 || (size_t)w >= sizeof why - used) break;
        used += (size_t)w;
    }
    if (used) fail = why;
    printf("%-16s %-3s %-5s %-19s %-6s %6" JSON_INTEGER_FORMAT " %6" JSON_INTEGER_FORMAT " %-3s %-3s %10.3g  %s%s%s\n",
           json_string_value(json_object_get(c, "variant")), json_string_value(json_object_get(c, "direction")),
           json_string_value(json_object_get(c, "site")), json_string_value(json_object_get(c, "dtypes")),
           json_string_value(json_object_get(c, "layout")), json_integer_value(json_object_get(c, "D")),
           json_integer_value(json_object_get(c, "rows")), json_is_true(json_object_get(c, "inplace")) ? "yes" : "no",
           json_is_true(json_object_get(c, "dh")) ? "yes" : "no", json_real_value(json_object_get(c, "worst_ratio")),
           json_is_true(json_object_get(c, "pass")) ? "ok" : "FAIL", used ? ": " : "", fail);
}

/* Every set of the grid on each runner; the exit code. */
static int run_grid(const char *grid, verify_res_runner *runners, int nrunners, int directions, uint64_t seed,
                    int threads, const char *backend)
{
    verify_res_set *sets = NULL;
    int nsets = 0;
    if (verify_res_grid_sets(grid, &sets, &nsets) != VERIFY_OK) {
        ada_msg(CMD, "out of memory");
        return ADA_EXIT_INTERNAL;
    }
    const int full = !strcmp(grid, "full");
    printf("adaload verify: op lnmod_res, grid %s, %d input sets x %d variant(s), seed %" PRIu64
           " (reproduce with --seed %" PRIu64 "), %d CPU threads, backend %s\n",
           grid, nsets, nrunners, seed, seed, threads, backend);
    if (!full)
        printf("%-16s %-3s %-5s %-19s %-6s %6s %6s %-3s %-3s %10s  %s\n", "variant", "dir", "site", "res-br-mod-out",
               "layout", "D", "rows", "inp", "dh", "worst", "verdict");
    fflush(stdout);
    int64_t passed = 0, failed = 0, ignored = 0;
    int rc = ADA_EXIT_OK;
    for (int m = 0; m < nrunners && rc == ADA_EXIT_OK; m++)
        for (int i = 0; i < nsets; i++) {
            json_t *cases = json_array();
            int64_t f = 0;
            char err[256] = "out of memory";
            if (!cases || verify_res_run(&runners[m], &sets[i], seed + (uint64_t)i, threads, cases, &f, err,
                                         sizeof err) != 0) {
                json_decref(cases);
                ada_msg(CMD, "%s, set %d: %s", runners[m].name, i, err);
                rc = ADA_EXIT_INTERNAL;
                break;
            }
            size_t k;
            json_t *c;
            json_array_foreach(cases, k, c) {
                const int dir = !strcmp(json_string_value(json_object_get(c, "direction")), "fwd") ? VERIFY_DIR_FWD
                                                                                                    : VERIFY_DIR_BWD;
                if (!(directions & dir)) {
                    ignored++;
                    continue;
                }
                if (!full) print_case(c);
                if (json_is_true(json_object_get(c, "pass"))) passed++;
                else failed++;
            }
            fflush(stdout);
            json_decref(cases);
        }
    free(sets);
    printf("adaload verify: op lnmod_res: %" PRId64 " passed, %" PRId64 " failed (%" PRId64
           " cases of the other direction not counted)\n",
           passed, failed, ignored);
    if (rc != ADA_EXIT_OK) return rc;
    return failed ? ADA_EXIT_FAIL : ADA_EXIT_OK;
}

int cmd_verify_res_cpu(const char *grid, const char *const *models, int nmodels, int directions, uint64_t seed,
                       int threads)
{
    static const char *const dflt[] = {"res_model"};
    if (nmodels == 0) models = dflt, nmodels = 1;
    if (nmodels > VERIFY_MAX_VARIANTS) return ada_usage_error(CMD, "too many --variant");
    verify_res_runner rn[VERIFY_MAX_VARIANTS];
    for (int m = 0; m < nmodels; m++)
        if (verify_res_cpu_runner(verify_res_model_find(models[m]), threads, &rn[m]) != 0)
            return ada_usage_error(CMD, "unknown model '%s' for --op lnmod_res (adaload verify --list)", models[m]);
    return run_grid(grid, rn, nmodels, directions, seed, threads, "cpu-model");
}

int cmd_verify_res_gpu(const char *grid, const char *const *variants, int nvariants, int directions, uint64_t seed,
                       int threads)
{
#if ADALOAD_HAVE_CUDA
    const char *names[VERIFY_MAX_VARIANTS];
    int n = 0;
    if (nvariants > VERIFY_MAX_VARIANTS) return ada_usage_error(CMD, "too many --variant");
    for (int i = 0; i < nvariants; i++) {
        const lnmod_variant *v = lnmod_find_variant(variants[i]);
        if (!v || !v->res_forward)
            return ada_usage_error(CMD, "'%s' is no variant with the fused op (adaload verify --list)", variants[i]);
        names[n++] = variants[i];
    }
    for (const lnmod_variant *v = lnmod_variants; nvariants == 0 && v->name && n < VERIFY_MAX_VARIANTS; v++)
        if (v->res_forward) names[n++] = v->name;
    if (ada_cuda_device_count() == 0) {
        ada_msg(CMD, "no CUDA device here: nothing to verify (skipped)");
        return ADA_EXIT_SKIP;
    }
    verify_res_runner rn[VERIFY_MAX_VARIANTS];
    verify_backend bk = {.model = 0, .threads = threads};
    verify_res_gpu_pool pool = {.bk = &bk};
    for (int i = 0; i < n; i++) {
        verify_res_gpu_runner(names[i], &pool, &rn[i]);
        rn[i].threads = threads;
    }
    const int rc = run_grid(grid, rn, n, directions, seed, threads, "cuda");
    verify_res_gpu_pool_free(&pool);
    return rc;
#else
    (void)grid, (void)variants, (void)nvariants, (void)directions, (void)seed, (void)threads;
    ada_msg(CMD, "this build has no CUDA: --op lnmod_res needs --cpu-model here (skipped)");
    return ADA_EXIT_SKIP;
#endif
}
