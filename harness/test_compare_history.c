/* test_compare_history.c -- `adaload compare --history RUN` (cmd_compare.c over
 * runfiles/run_history.h, what ci/nightly.sh runs) on results trees built to fool it: an
 * unchanged-kernel run on a slower lease (drift, exit 0), a real 30% slowdown of one shape
 * (exit 1), a 3-repetition run against 9-repetition runs (not comparable: exit 4, said so),
 * a history of one run (nothing to judge, exit 4; one earlier run: the pair rule, said so),
 * the nightly's wan/sweep interleaving, bad usage. */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include "cli.h"
#include "commands.h"
#include "test_tmpdir.h"

static void mk(void) { test_tmp_make("cmphist"); }
TestSuite(compare_history, .init = mk, .fini = test_tmp_remove);

enum { NB = 4 };
static const char *const names[NB] = {"copy/bytes402567168", "lnmod_fwd/naive/bf16-f32-bf16/sample/D1536/rows32760",
                                      "lnmod_fwd/row_per_warp/bf16-f32-bf16/sample/D3072/rows32760",
                                      "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760"};
static const double base[NB] = {200, 66.1, 126.7, 57.0};

/* results/nvidia-h200/bench/2026-01-<day>T000000Z_<code>/ (hour: 01 for a second run of the
 * day): set, reps repetitions at base[k] * f[k] (+-0.4%), kernel hash code, GPU uuid. */
static void night(int day, int hour, const char *set, int reps, const double *f, const char *code, const char *uuid,
                  char *dir, size_t dn)
{
    char rel[256], text[1 << 15];
    snprintf(rel, sizeof rel, "results/nvidia-h200/bench/2026-01-%02dT%02d0000Z_%s", day, hour, code);
    snprintf(dir, dn, "%s/%s", test_tmpdir, rel);
    char p[300];
    snprintf(p, sizeof p, "%s/meta.json", rel);
    snprintf(text, sizeof text,
             "{\"git_sha\": \"%s\", \"git_dirty\": false, \"testbed\": \"nvidia-h200\", \"kind\": \"bench\", "
             "\"kernel_hash_v1\": \"%s\", \"kernel_hash_v2\": \"%s\", \"command_line\": \"adaload bench\", "
             "\"fingerprint\": {\"gpu\": \"NVIDIA H200\", \"gpu_uuid\": \"%s\", \"driver\": \"550.54.15\"}}",
             code, code, code, uuid);
    test_tmp_put(p, text);
    size_t n = (size_t)snprintf(text, sizeof text,
                                "{\"context\": {\"adaload_set\": \"%s\", \"adaload_repetitions\": \"%d\"}, \"benchmarks\": [", set, reps);
    for (int k = 0; k < NB; k++)
        for (int i = 0; i < reps; i++)
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "%s{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", \"real_time\": %.6f, "
                                  "\"time_unit\": \"us\", \"bytes_per_second\": 1e12}",
                                  k || i ? "," : "", names[k], names[k], base[k] * f[k] * (1 + 0.001 * (i - reps / 2)));
    snprintf(text + n, sizeof text - n, "]}\n");
    snprintf(p, sizeof p, "%s/bench.json", rel);
    test_tmp_put(p, text);
}

static const double same[NB] = {1, 1, 1, 1};

/* Four nights of code k1 on lease GPU-1, each with a sweep run after it. */
static void four_nights(void)
{
    static const double w[4][NB] = {{1, 1, 1, 1}, {1.002, 0.998, 1.003, 0.999}, {0.999, 1.003, 0.998, 1.001}, {1.001, 1, 1.002, 1}};
    char d[512];
    for (int i = 0; i < 4; i++) {
        night(i + 1, 0, "wan", 9, w[i], "k1", "GPU-1", d, sizeof d);
        night(i + 1, 1, "sweep", 9, same, "k1", "GPU-1", d, sizeof d);
    }
}

static char *captured(void)
{
    fflush(stdout);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, cr_get_redirected_stdout());
    buf[n] = '\0';
    return buf;
}

static int history(const char *dir)
{
    char *argv[] = {"compare", "--history", (char *)dir, NULL};
    return cmd_compare(3, argv);
}

/* Byte-identical kernels on a slower lease: naive 8.6% and row_per_warp 5.2% slower. */
Test(compare_history, unchanged_kernels_on_a_slower_lease_is_drift_exit_0, .init = cr_redirect_stdout)
{
    four_nights();
    char d[512];
    const double f[NB] = {1.007, 1.086, 1.052, 1.012};
    night(5, 0, "wan", 9, f, "k1", "GPU-2", d, sizeof d);
    cr_assert_eq(history(d), ADA_EXIT_OK);
    char *out = captured();
    cr_assert(strstr(out, "A: nvidia-h200/bench/2026-01-04T000000Z_k1\n"), "the previous wan run, not the sweep: %s", out);
    cr_assert(strstr(out, "noise band over the 4 newest runs of A's kernel code"), "%s", out);
    cr_assert(strstr(out, "0 slower, 0 faster, 2 same, 0 too few repetitions, 2 environment drift"), "%s", out);
    cr_assert(strstr(out, "machine: GPU UUID GPU-1 -> GPU-2"), "%s", out);
}

/* New code, one shape 30% slower: flagged against its own band, exit 1. */
Test(compare_history, real_slowdown_of_one_shape_exit_1, .init = cr_redirect_stdout)
{
    four_nights();
    char d[512];
    const double f[NB] = {1, 1.001, 0.999, 1.30};
    night(5, 0, "wan", 9, f, "k2", "GPU-1", d, sizeof d);
    cr_assert_eq(history(d), ADA_EXIT_FAIL);
    char *out = captured();
    cr_assert(strstr(out, "1 slower, 0 faster, 3 same"), "%s", out);
    const char *r = strstr(out, "lnmod_fwd/dtile/");
    cr_assert(r && strstr(r, "band") && strstr(r, "slower"), "%s", out);
}

/* A 3-repetition run against 9-repetition nights: not comparable, nothing judged (exit 4). */
Test(compare_history, three_against_nine_is_not_comparable_exit_4, .init = cr_redirect_stdout)
{
    four_nights();
    char d[512];
    const double f[NB] = {1, 1, 1, 3};
    night(5, 0, "wan", 3, f, "k2", "GPU-1", d, sizeof d);
    cr_assert_eq(history(d), ADA_EXIT_UNDECIDED);
    char *out = captured();
    cr_assert(strstr(out, "no earlier run of set wan with 3 repetitions: nothing to judge against"), "%s", out);
    cr_assert(strstr(out, "other repetition counts are not comparable: 9 (4 runs)"), "%s", out);
    cr_assert_null(strstr(out, "slower"), "%s", out);
}

/* Only the run itself: nothing to judge (exit 4). One earlier run: the pair rule, said so;
 * a 30% slowdown is flagged by it. */
Test(compare_history, history_of_one_run, .init = cr_redirect_stdout)
{
    char a[512], b[512];
    night(1, 0, "wan", 9, same, "k1", "GPU-1", a, sizeof a);
    cr_assert_eq(history(a), ADA_EXIT_UNDECIDED);
    const double f[NB] = {1, 1, 1, 1.30};
    night(2, 0, "wan", 9, f, "k2", "GPU-1", b, sizeof b);
    cr_assert_eq(history(b), ADA_EXIT_FAIL);
    char *out = captured();
    cr_assert(strstr(out, "nvidia-h200/bench/2026-01-01T000000Z_k1: no earlier run of set wan with 9 repetitions"), "%s", out);
    cr_assert(strstr(out, "fewer than 3 runs of A's kernel code: the pair rule (threshold)"), "%s", out);
    cr_assert(strstr(out, "1 slower"), "%s", out);
}

Test(compare_history, bad_usage)
{
    four_nights();
    char d[512], e[600];
    night(5, 0, "wan", 9, same, "k1", "GPU-1", d, sizeof d);
    char *two[] = {"compare", "--history", d, d, NULL};
    cr_expect_eq(cmd_compare(4, two), ADA_EXIT_USAGE, "--history takes one run");
    char *res[] = {"compare", d, d, "--results", test_tmpdir, NULL};
    cr_expect_eq(cmd_compare(5, res), ADA_EXIT_USAGE, "--results without --history");
    snprintf(e, sizeof e, "%s/nope", test_tmpdir);
    cr_expect_eq(history(e), ADA_EXIT_USAGE);
    test_tmp_put("elsewhere/bench.json", "{\"benchmarks\": []}");
    snprintf(e, sizeof e, "%s/elsewhere", test_tmpdir);
    cr_expect_eq(history(e), ADA_EXIT_USAGE, "not a run folder of a results tree");
}
