/* test_compare.c -- Criterion tests of `adaload compare` (cmd_compare.c, called directly
 * from adaload_cli) on synthetic Google Benchmark JSON files: same -> exit 0, 2x slower ->
 * exit 1, output free of NaN, unreadable input -> exit 2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <jansson.h>

#include "cli.h"
#include "commands.h"
#include "test_tmpdir.h"

/* Synthetic Google Benchmark JSON: one benchmark, n repetitions at base*(1 + i/100) us. */
static void write_gbench(const char *path, const char *name, double base, int n)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"context\": {\"date\": \"x\"}, \"benchmarks\": [\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                   "\"repetitions\": %d, \"repetition_index\": %d, \"iterations\": 10, "
                   "\"real_time\": %.6f, \"cpu_time\": 1.0, \"time_unit\": \"us\", "
                   "\"bytes_per_second\": 1e12}\n",
                i ? "," : "", name, name, n, i, base * (1 + i / 100.0));
    /* An aggregate the reader must ignore (it would skew the sample). */
    fprintf(f, ",{\"name\": \"%s_median\", \"run_name\": \"%s\", \"run_type\": \"aggregate\", "
               "\"aggregate_name\": \"median\", \"real_time\": 1e9, \"time_unit\": \"us\"}\n",
            name, name);
    fprintf(f, "]}\n");
    fclose(f);
}


TestSuite(compare_cmd, .fini = test_tmp_remove);

/* Everything the test printed so far (stdout redirected by Criterion). */
static char *captured(void)
{
    fflush(stdout);
    FILE *f = cr_get_redirected_stdout();
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    return buf;
}

static void assert_finite_text(const char *s)
{
    /* Numbers are printed after spaces; the paths in the header have none. */
    const char *bad[] = {" nan", " inf", "-nan", "-inf", "NaN", "Inf"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) cr_assert_null(strstr(s, bad[i]), "%s", s);
}

static int compare(const char *a, const char *b)
{
    char *argv[] = {"compare", (char *)a, (char *)b, NULL};
    return cmd_compare(3, argv);
}

Test(compare_cmd, same_is_exit_0, .init = cr_redirect_stdout)
{
    test_tmp_make("compare");
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.json", test_tmpdir);
    snprintf(b, sizeof b, "%s/b.json", test_tmpdir);
    write_gbench(a, "lnmod_fwd/dtile/x", 100, 9);
    write_gbench(b, "lnmod_fwd/dtile/x", 100, 9);
    cr_assert_eq(compare(a, b), ADA_EXIT_OK);
    char *out = captured();
    cr_assert_not_null(strstr(out, "lnmod_fwd/dtile/x"), "%s", out);
    cr_assert_not_null(strstr(out, "1.000"), "%s", out);
    cr_assert_not_null(strstr(out, "0 slower, 0 faster, 1 same"), "%s", out);
    assert_finite_text(out);
}

Test(compare_cmd, twice_slower_is_exit_1_and_finite, .init = cr_redirect_stdout)
{
    test_tmp_make("compare");
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.json", test_tmpdir);
    snprintf(b, sizeof b, "%s/b.json", test_tmpdir);
    write_gbench(a, "lnmod_fwd/dtile/x", 100, 9);
    write_gbench(b, "lnmod_fwd/dtile/x", 200, 9);
    cr_assert_eq(compare(a, b), ADA_EXIT_FAIL);
    /* Faster in the other direction: not a regression. */
    cr_assert_eq(compare(b, a), ADA_EXIT_OK);
    char *out = captured();
    cr_assert_not_null(strstr(out, "2.000"), "%s", out);
    cr_assert_not_null(strstr(out, "slower"), "%s", out);
    cr_assert_not_null(strstr(out, "1 slower, 0 faster"), "%s", out);
    cr_assert_not_null(strstr(out, "0 slower, 1 faster"), "%s", out);
    assert_finite_text(out);
}

Test(compare_cmd, bad_input_is_usage_error)
{
    test_tmp_make("compare");
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.json", test_tmpdir);
    snprintf(b, sizeof b, "%s/missing.json", test_tmpdir);
    write_gbench(a, "n", 100, 3);
    cr_assert_eq(compare(a, b), ADA_EXIT_USAGE);
    FILE *f = fopen(b, "w");
    fprintf(f, "{\"benchmarks\": [{\"name\": \"n\", \"real_time\": NaN}]}");
    fclose(f);
    cr_assert_eq(compare(a, b), ADA_EXIT_USAGE); /* strict JSON: NaN is not a number */
    char *argv[] = {"compare", a, NULL};
    cr_assert_eq(cmd_compare(2, argv), ADA_EXIT_USAGE);
}

/* n = m = 3 (the quick set) can never reach p < 0.05: a 3x slowdown is "too few repetitions"
 * (exit 4), not "same" (exit 0). */
Test(compare_cmd, too_few_repetitions_is_exit_4, .init = cr_redirect_stdout)
{
    test_tmp_make("compare");
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.json", test_tmpdir);
    snprintf(b, sizeof b, "%s/b.json", test_tmpdir);
    write_gbench(a, "lnmod_fwd/dtile/x", 100, 3);
    write_gbench(b, "lnmod_fwd/dtile/x", 300, 3);
    cr_assert_eq(compare(a, b), ADA_EXIT_UNDECIDED);
    char *out = captured();
    cr_assert_not_null(strstr(out, "too few repetitions\n"), "%s", out);
    cr_assert_not_null(strstr(out, "0 slower, 0 faster, 0 same, 1 too few repetitions"), "%s", out);
}

/* A run folder: bench.json of the given set with benchmarks name[i] at base[i] us (9
 * repetitions, +-0.4% spread), meta.json with kernel hash h and GPU UUID uuid. */
static void run_folder(const char *dir, const char *set, const char *h, const char *uuid, const char *const *name,
                       const double *base, int n)
{
    char p[512];
    snprintf(p, sizeof p, "mkdir -p '%s'", dir);
    cr_assert_eq(system(p), 0);
    snprintf(p, sizeof p, "%s/meta.json", dir);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"git_sha\": \"abc\", \"testbed\": \"nvidia-h200\", \"kernel_hash_v1\": \"%s\", \"kernel_hash_v2\": \"%s\","
               " \"fingerprint\": {\"gpu\": \"NVIDIA H200\", \"gpu_uuid\": \"%s\", \"driver\": \"550.54.15\"}}\n",
            h, h, uuid);
    fclose(f);
    snprintf(p, sizeof p, "%s/bench.json", dir);
    f = fopen(p, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"context\": {\"adaload_set\": \"%s\", \"adaload_repetitions\": \"9\"}, \"benchmarks\": [\n", set);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < 9; i++)
            fprintf(f, "%s{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", \"real_time\": %.6f, "
                       "\"time_unit\": \"us\", \"bytes_per_second\": %g}\n",
                    k || i ? "," : "", name[k], name[k], base[k] * (1 + (i - 4) / 1000.0),
                    strncmp(name[k], "copy/", 5) ? 1e12 : 3.9e12 * (1 - (base[k] - 200) / 200.0));
    fprintf(f, "]}\n");
    fclose(f);
}

static const char *const aa_names[] = {"copy/bytes402567168", "lnmod_fwd/naive/bf16-f32-bf16/sample/D1536/rows32760",
                                       "lnmod_fwd/row_per_warp/bf16-f32-bf16/sample/D3072/rows32760",
                                       "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760"};

/* Two leases of one GPU model, byte-identical kernel sources: naive and row_per_warp 5-9%
 * slower, dtile and the copy within 1.2%. Other GPUs (fingerprint) and the same code: drift,
 * exit 0 (on the same GPU too: the code did not change). With other kernel sources the same
 * shifts are slower: exit 1. */
Test(compare_cmd, aa_pair_of_two_leases_is_drift, .init = cr_redirect_stdout)
{
    test_tmp_make("compare");
    char a[256], b[256], c[256], d[256];
    snprintf(a, sizeof a, "%s/lease1", test_tmpdir);
    snprintf(b, sizeof b, "%s/lease2", test_tmpdir);
    snprintf(c, sizeof c, "%s/same-gpu", test_tmpdir);
    snprintf(d, sizeof d, "%s/new-code", test_tmpdir);
    const double before[] = {200, 66.1, 126.7, 57.0}, after[] = {201.5, 71.8, 133.3, 57.6};
    run_folder(a, "wan", "k1", "GPU-1111", aa_names, before, 4);
    run_folder(b, "wan", "k1", "GPU-2222", aa_names, after, 4);
    run_folder(c, "wan", "k1", "GPU-1111", aa_names, after, 4);
    run_folder(d, "wan", "k2", "GPU-2222", aa_names, after, 4);
    cr_assert_eq(compare(a, b), ADA_EXIT_OK);
    char *out = captured();
    cr_assert_not_null(strstr(out, "0 slower, 0 faster, 2 same, 0 too few repetitions, 2 environment drift"), "%s", out);
    cr_assert_not_null(strstr(out, "66.10 us      71.80 us    1.086   4.1e-05  environment drift"), "%s", out);
    cr_assert_not_null(strstr(out, "machine: GPU UUID GPU-1111 -> GPU-2222"), "%s", out);
    cr_assert_eq(compare(a, c), ADA_EXIT_OK, "the same code on the same GPU: drift of its state, not a regression");
    cr_assert_not_null(strstr(captured(), "same machine as far as both runs record, with the same kernel code"));
    cr_assert_eq(compare(a, d), ADA_EXIT_FAIL, "other kernel sources on another GPU: a regression");
}

/* A run folder's meta.json with the build's compile flags (sysinfo.build.cuda_flags) set. */
static void with_cuda_flags(const char *dir, const char *flags)
{
    char p[512];
    snprintf(p, sizeof p, "%s/meta.json", dir);
    json_t *meta = json_load_file(p, 0, NULL);
    cr_assert_not_null(meta);
    cr_assert_eq(json_object_set_new(meta, "sysinfo", json_pack("{s:{s:s}}", "build", "cuda_flags", flags)), 0);
    cr_assert_eq(json_dump_file(meta, p, 0), 0);
    json_decref(meta);
}

/* An explore build: the same kernel sources built with a -D switch is other code -- its moves
 * are "slower"/"faster", never "environment drift" (2026-12-06: a 12% gain of a group switch was
 * labelled drift). */
Test(compare_cmd, explore_build_flags_are_other_code, .init = cr_redirect_stdout)
{
    test_tmp_make("compare");
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/base", test_tmpdir);
    snprintf(b, sizeof b, "%s/g1", test_tmpdir);
    const double before[] = {200, 66.1, 126.7, 57.0}, after[] = {200, 66.1, 126.7, 64.0};
    run_folder(a, "wan", "k1", "GPU-1111", aa_names, before, 4);
    run_folder(b, "wan", "k1", "GPU-1111", aa_names, after, 4);
    with_cuda_flags(a, "");
    with_cuda_flags(b, "-DADALOAD_EXPLORE_GROUP=1");
    cr_assert_eq(compare(a, b), ADA_EXIT_FAIL);
    char *out = captured();
    cr_assert_not_null(strstr(out, "1 slower, 0 faster, 3 same, 0 too few repetitions, 0 environment drift"), "%s", out);
    with_cuda_flags(b, ""); /* the same flags: the same code, the move is drift */
    cr_assert_eq(compare(a, b), ADA_EXIT_OK);
    cr_assert_not_null(strstr(captured(), "1 environment drift"));
}

/* Runs of different sets or testbeds are not compared (the dashboard once judged a wan run
 * against a sweep run). */
Test(compare_cmd, like_with_like_only)
{
    test_tmp_make("compare");
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/wan", test_tmpdir);
    snprintf(b, sizeof b, "%s/sweep", test_tmpdir);
    const double t[] = {200, 66, 126, 57};
    run_folder(a, "wan", "k1", "GPU-1", aa_names, t, 4);
    run_folder(b, "sweep", "k1", "GPU-1", aa_names, t, 4);
    cr_assert_eq(compare(a, b), ADA_EXIT_USAGE);
}

/* A planted 3% slowdown of dtile on the same machine: flagged at a 2% threshold (the
 * dashboard's history rule flags it at the default through dtile's own narrow band). */
Test(compare_cmd, planted_three_percent, .init = cr_redirect_stdout)
{
    test_tmp_make("compare");
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/a", test_tmpdir);
    snprintf(b, sizeof b, "%s/b", test_tmpdir);
    const double t[] = {200, 66, 126, 57}, slow[] = {200, 66, 126, 57 * 1.03};
    run_folder(a, "wan", "k1", "GPU-1", aa_names, t, 4);
    run_folder(b, "wan", "k2", "GPU-1", aa_names, slow, 4);
    char *argv[] = {"compare", a, b, "--threshold", "2", NULL};
    cr_assert_eq(cmd_compare(5, argv), ADA_EXIT_FAIL);
    cr_assert_not_null(strstr(captured(), "dtile/bf16-f32-bf16/sample/D1536/rows32760"));
}

/* The project's slowed build (committed: -DADALOAD_SLOW_VARIANT=ON, same sources, same
 * machine) is still flagged; the normal build against itself is not. */
Test(compare_cmd, committed_slowed_build_is_flagged, .init = cr_redirect_stdout)
{
    char n[4200], s[4200], n2[4200];
    const char *r = "results/nvidia-h200/regression-check/2026-11-29T234848Z";
    snprintf(n, sizeof n, "%s/%s/normal", ada_source_dir(), r);
    snprintf(s, sizeof s, "%s/%s/slowed", ada_source_dir(), r);
    snprintf(n2, sizeof n2, "%s/%s/normal-again", ada_source_dir(), r);
    cr_assert_eq(compare(n, s), ADA_EXIT_FAIL);
    cr_assert_not_null(strstr(captured(), "3 slower, 0 faster, 3 same"));
    cr_assert_eq(compare(n, n2), ADA_EXIT_OK);
}
