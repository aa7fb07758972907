/* test_dashboard.c -- the dashboard's data on a synthetic results tree (a planted 20%
 * regression is flagged, the runs before it are not), and the site folder rules. The
 * page itself is tested in a real browser (dashboard/test_browser.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "dashboard.h"
#include "test_tmpdir.h"

static void mk_tmp(void) { test_tmp_make("dash"); }
TestSuite(dashboard, .init = mk_tmp, .fini = test_tmp_remove);

static void bench_run2(const char *run, const char *sha, double dtile_us, double naive_us, const char *code);

/* A bench run: dtile at dtile_us, naive at 110 us (9 repetitions each, +-0.4%). */
static void bench_run(const char *run, const char *sha, double dtile_us) { bench_run2(run, sha, dtile_us, 110.0, NULL); }

/* code: its kernel hash (NULL: "k<sha>", each commit its own kernel sources, so a slowdown
 * between them is the code's). */
static void bench_run2(const char *run, const char *sha, double dtile_us, double naive_us, const char *code)
{
    char rel[300], text[16384], hash[64];
    snprintf(rel, sizeof rel, "results/gpu/bench/%s/meta.json", run);
    snprintf(hash, sizeof hash, "k%s", code ? code : sha);
    snprintf(text, sizeof text, "{\"git_sha\": \"%s\", \"git_dirty\": false, \"kernel_source_hash\": \"%s\", \"command_line\": \"adaload bench\"}", sha, hash);
    test_tmp_put(rel, text);
    size_t n = (size_t)snprintf(text, sizeof text, "{\"context\": {\"adaload_set\": \"wan\"}, \"benchmarks\": [");
    const char *names[2] = {"lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760",
                            "lnmod_fwd/naive/bf16-f32-bf16/sample/D1536/rows32760"};
    for (int v = 0; v < 2; v++)
        for (int k = 0; k < 9; k++)
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "%s{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                                  "\"repetitions\": 9, \"repetition_index\": %d, \"iterations\": 1, "
                                  "\"real_time\": %.3f, \"time_unit\": \"us\", \"pct_copy_bw\": %.3f}",
                                  v || k ? "," : "", names[v], names[v], k,
                                  (v ? naive_us : dtile_us) * (1 + 0.001 * (k - 4)), 5500.0 / (v ? naive_us : dtile_us));
    snprintf(text + n, sizeof text - n, "]}\n");
    snprintf(rel, sizeof rel, "results/gpu/bench/%s/bench.json", run);
    test_tmp_put(rel, text);
}

static char root[128];

Test(dashboard, planted_regression_is_flagged)
{
    bench_run("2026-01-01T000000Z_aaaaaaa", "aaaaaaa", 55.0);
    bench_run("2026-01-02T000000Z_bbbbbbb", "bbbbbbb", 55.1);
    bench_run("2026-01-03T000000Z_ccccccc", "ccccccc", 66.0); /* dtile 20% slower */
    snprintf(root, sizeof root, "%s/results", test_tmpdir);
    json_t *d = NULL;
    char err[512];
    dash_opts o = {.hash_v1 = "k"};
    cr_assert_eq(dash_collect(root, &o, &d, err, sizeof err), DASH_OK, "%s", err);
    json_t *tb = json_array_get(json_object_get(d, "testbeds"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(tb, "name")), "gpu");
    cr_assert_eq(json_array_size(json_object_get(tb, "bench_runs")), 3);
    cr_assert_eq(json_integer_value(json_object_get(tb, "latest")), 2);
    json_t *regs = json_object_get(tb, "regressions");
    cr_assert_eq(json_array_size(regs), 1, "only dtile in the last run is slower");
    json_t *r = json_array_get(regs, 0);
    cr_assert_str_eq(json_string_value(json_object_get(r, "name")), "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760");
    cr_assert_eq(json_integer_value(json_object_get(r, "run")), 2);
    cr_assert_float_eq(json_number_value(json_object_get(r, "ratio")), 1.2, 0.01);
    json_t *ser = json_object_get(json_object_get(tb, "series"), "lnmod_fwd/naive/bf16-f32-bf16/sample/D1536/rows32760");
    cr_assert_eq(json_array_size(ser), 3);
    cr_assert_float_eq(json_number_value(json_array_get(json_array_get(ser, 0), 1)), 110.0, 1e-6);
    json_t *cmp = json_object_get(tb, "compares");
    cr_assert_eq(json_array_size(cmp), 2);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(cmp, 0), "slower")), 0);

    char site[200];
    snprintf(site, sizeof site, "%s/site", test_tmpdir);
    cr_assert_eq(dash_write_site(site, d, err, sizeof err), DASH_OK, "%s", err);
    cr_assert_eq(dash_write_site(site, d, err, sizeof err), DASH_OK, "a site of ours is replaced: %s", err);
    struct stat st;
    const char *files[] = {"index.html", "app.js", "style.css", "data.js"};
    for (int i = 0; i < 4; i++) {
        char p[300];
        snprintf(p, sizeof p, "%s/%s", site, files[i]);
        cr_assert_eq(stat(p, &st), 0, "%s", p);
        cr_assert_gt(st.st_size, 100);
    }
    json_decref(d);
}

Test(dashboard, site_never_replaces_what_is_not_ours)
{
    json_t *d = json_pack("{s:[]}", "testbeds");
    char err[512], site[200];
    snprintf(site, sizeof site, "%s/mine", test_tmpdir);
    test_tmp_put("mine/index.html", "<html>someone's page</html>\n");
    cr_assert_eq(dash_write_site(site, d, err, sizeof err), DASH_BAD_OUTPUT);
    cr_assert(strstr(err, "not a page of adaload dashboard"), "%s", err);
    struct stat st;
    char p[300];
    snprintf(p, sizeof p, "%s/app.js", site);
    cr_assert_neq(stat(p, &st), 0, "nothing written");
    snprintf(site, sizeof site, "%s/d", test_tmpdir);
    test_tmp_put("d/app.js/x", "a folder where a file goes\n");
    cr_assert_eq(dash_write_site(site, d, err, sizeof err), DASH_BAD_OUTPUT);
    test_tmp_put("afile", "x");
    snprintf(site, sizeof site, "%s/afile", test_tmpdir);
    cr_assert_eq(dash_write_site(site, d, err, sizeof err), DASH_BAD_OUTPUT);
    json_decref(d);
}

Test(dashboard, bad_tree_is_bad_input)
{
    test_tmp_put("results/gpu/nosuchkind/2026-01-01T000000Z_a/meta.json", "{}");
    snprintf(root, sizeof root, "%s/results", test_tmpdir);
    json_t *d = NULL;
    char err[512];
    dash_opts o = {0};
    cr_assert_eq(dash_collect(root, &o, &d, err, sizeof err), DASH_BAD_INPUT);
    cr_assert(strstr(err, "nosuchkind"), "%s", err);
}

/* Across the nights each benchmark is judged against its own run-to-run spread over the
 * nights of the same kernel code (run_history.h): five nights of one code, naive wandering
 * 4% from lease to lease, dtile steady within 0.4%; then new code with dtile 3% slower --
 * flagged (the fixed 5% would miss it) -- and naive 7% slower -- not (inside its own band).
 * The wandering nights of the same code are never regressions. */
Test(dashboard, history_noise_band)
{
    const double dtile[6] = {55.0, 55.2, 54.9, 55.1, 55.0, 55.0 * 1.03};
    const double naive[6] = {110.0, 114.5, 106.0, 113.0, 108.0, 110.0 * 1.07};
    for (int i = 0; i < 6; i++) {
        char run[64], sha[16];
        snprintf(sha, sizeof sha, "%07d", i);
        snprintf(run, sizeof run, "2026-01-0%dT000000Z_%s", i + 1, sha);
        bench_run2(run, sha, dtile[i], naive[i], i < 5 ? "old" : "new");
    }
    snprintf(root, sizeof root, "%s/results", test_tmpdir);
    json_t *d = NULL;
    char err[512];
    dash_opts o = {.hash_v1 = "k"};
    cr_assert_eq(dash_collect(root, &o, &d, err, sizeof err), DASH_OK, "%s", err);
    json_t *tb = json_array_get(json_object_get(d, "testbeds"), 0);
    json_t *regs = json_object_get(tb, "regressions");
    cr_assert_eq(json_array_size(regs), 1, "only the 3%% dtile slowdown: %s", json_dumps(regs, 0));
    json_t *r = json_array_get(regs, 0);
    cr_assert_str_eq(json_string_value(json_object_get(r, "name")), "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760");
    cr_assert_eq(json_integer_value(json_object_get(r, "run")), 5);
    cr_assert(json_is_true(json_object_get(r, "banded")));
    cr_assert_float_eq(json_number_value(json_object_get(r, "ratio")), 1.03, 0.005);
    json_decref(d);
}

/* Each run is compared with the previous run of its own set: a wan run is never judged
 * against a sweep run in between (the nightly runs wan, then sweep, every night). */
Test(dashboard, previous_run_of_the_same_set)
{
    bench_run("2026-01-01T000000Z_aaaaaaa", "aaaaaaa", 800.0);
    test_tmp_put("results/gpu/bench/2026-01-01T010000Z_aaaaaaa/meta.json", "{\"git_sha\": \"aaaaaaa\"}");
    test_tmp_put("results/gpu/bench/2026-01-01T010000Z_aaaaaaa/bench.json",
                 "{\"context\": {\"adaload_set\": \"sweep\"}, \"benchmarks\": [{\"name\": \"copy/bytes1\", "
                 "\"run_type\": \"iteration\", \"real_time\": 1, \"time_unit\": \"us\"}]}");
    bench_run("2026-01-02T000000Z_bbbbbbb", "bbbbbbb", 1040.0);
    snprintf(root, sizeof root, "%s/results", test_tmpdir);
    json_t *d = NULL;
    char err[512];
    dash_opts o = {.hash_v1 = "k"};
    cr_assert_eq(dash_collect(root, &o, &d, err, sizeof err), DASH_OK, "%s", err);
    json_t *tb = json_array_get(json_object_get(d, "testbeds"), 0);
    json_t *regs = json_object_get(tb, "regressions");
    cr_assert_eq(json_array_size(regs), 1, "%s", json_dumps(regs, 0));
    json_t *r = json_array_get(regs, 0);
    cr_assert_eq(json_integer_value(json_object_get(r, "run")), 2);
    cr_assert_eq(json_integer_value(json_object_get(r, "prev")), 0, "judged against the wan run, not the sweep");
    json_t *cmp = json_object_get(tb, "compares");
    cr_assert_eq(json_array_size(cmp), 1, "the sweep run has no earlier sweep run");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(cmp, 0), "set")), "wan");
    json_decref(d);
}
