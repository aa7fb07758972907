/* test_run_history.c -- Criterion tests of the one regression verdict (run_history.h) on
 * histories built to fool it: an unchanged-kernel run on a slower lease (drift, not a
 * regression), a real 30% slowdown of one shape (flagged), a 3-repetition run against
 * 9-repetition runs (not comparable: said so), a history of one run (the pair rule, said so)
 * and of none, a code change that restarts the band, a noisy benchmark inside its own band. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "run_history.h"
#include "test_tmpdir.h"

static void mk(void) { test_tmp_make("hist"); }
TestSuite(history, .init = mk, .fini = test_tmp_remove);

enum { NB = 4 };
static const char *const names[NB] = {"copy/bytes402567168", "lnmod_fwd/naive/bf16-f32-bf16/sample/D1536/rows32760",
                                      "lnmod_fwd/row_per_warp/bf16-f32-bf16/sample/D3072/rows32760",
                                      "lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760"};
static const double base[NB] = {200, 66.1, 126.7, 57.0};

/* A run of set `set` with `reps` repetitions of each benchmark at us[k] (+-0.4%), kernel
 * hash `code` on GPU `uuid`, loaded into *b and *m. */
static void run(const char *set, int reps, const double *us, const char *code, const char *uuid, ada_bench_set *b,
                ada_run_meta *m)
{
    static int seq;
    char rel[64], text[1 << 15], err[512];
    size_t n = (size_t)snprintf(text, sizeof text,
                                "{\"context\": {\"adaload_set\": \"%s\", \"adaload_repetitions\": \"%d\"}, \"benchmarks\": [", set, reps);
    for (int k = 0; k < NB; k++)
        for (int i = 0; i < reps; i++)
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "%s{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", \"real_time\": %.6f, "
                                  "\"time_unit\": \"us\", \"bytes_per_second\": 1e12}",
                                  k || i ? "," : "", names[k], names[k], us[k] * (1 + 0.001 * (i - reps / 2)));
    snprintf(text + n, sizeof text - n, "]}\n");
    snprintf(rel, sizeof rel, "r%d/bench.json", ++seq);
    test_tmp_put(rel, text);
    char p[256];
    snprintf(p, sizeof p, "%s/%s", test_tmpdir, rel);
    memset(b, 0, sizeof *b);
    cr_assert_eq(ada_bench_load_file(p, b, err, sizeof err), 0, "%s", err);
    snprintf(text, sizeof text,
             "{\"testbed\": \"nvidia-h200\", \"kernel_hash_v1\": \"%s\", \"kernel_hash_v2\": \"%s\", \"fingerprint\": "
             "{\"gpu\": \"NVIDIA H200\", \"gpu_uuid\": \"%s\", \"driver\": \"550.54.15\"}}",
             code, code, uuid);
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    cr_assert_eq(ada_run_meta_from_json(o, m), 0);
    json_decref(o);
}

/* Adds n runs of set wan, 9 repetitions, code k1 on GPU-1, each within 0.5% of base. */
static void nights(ada_history *h, int n, const char *code)
{
    static const double wobble[] = {1.0, 1.003, 0.998, 1.002, 0.999, 1.001};
    for (int i = 0; i < n; i++) {
        double us[NB];
        for (int k = 0; k < NB; k++) us[k] = base[k] * wobble[(i + k) % 6];
        ada_bench_set b;
        ada_run_meta m;
        run("wan", 9, us, code, "GPU-1", &b, &m);
        cr_assert_eq(ada_history_add(h, &b, &m, i, "night"), 0);
    }
}

static const ada_cmp_row *row(const ada_hist_verdict *v, const char *variant)
{
    for (int64_t i = 0; i < v->cmp.n; i++)
        if (strstr(v->cmp.row[i].name, variant)) return &v->cmp.row[i];
    cr_assert_fail("no row for %s", variant);
    return NULL;
}

/* The run judged: its rows point into its set, which done() frees with the verdict. */
static ada_bench_set judged;

static void judge(ada_history *h, const char *set, int reps, const double *us, const char *code, const char *uuid,
                  ada_hist_verdict *v)
{
    ada_run_meta m;
    char err[256];
    run(set, reps, us, code, uuid, &judged, &m);
    ada_cmp_opts o = {.skip_peers = 1};
    cr_assert_eq(ada_history_judge(h, &judged, &m, &o, v, err, sizeof err), 0, "%s", err);
    ada_run_meta_free(&m);
}

static void done(ada_hist_verdict *v)
{
    ada_hist_verdict_free(v);
    ada_bench_set_free(&judged);
}

/* Byte-identical kernel sources on another lease: naive 8.6% and row_per_warp 5.2% slower,
 * dtile and the copy within 1.2% (issue 17's night): drift, no regression. */
Test(history, unchanged_kernels_on_a_slower_lease_is_drift)
{
    ada_history *h = ada_history_new();
    nights(h, 5, "k1");
    const double us[NB] = {base[0] * 1.007, base[1] * 1.086, base[2] * 1.052, base[3] * 1.012};
    ada_hist_verdict v;
    judge(h, "wan", 9, us, "k1", "GPU-2", &v);
    cr_assert(v.judged);
    cr_expect_eq(v.band_runs, 5);
    cr_expect_eq(v.cmp.slower, 0, "the code did not change: never a regression");
    cr_expect_eq(v.cmp.drift, 2);
    cr_expect_eq(row(&v, "naive/")->v, ADA_DRIFT);
    cr_expect_eq(row(&v, "row_per_warp/")->v, ADA_DRIFT);
    cr_expect_eq(row(&v, "dtile/")->v, ADA_SAME, "inside its own band");
    cr_expect(v.cmp.other_machine);
    cr_expect(strstr(v.cmp.machine, "GPU-1 -> GPU-2") != NULL, "%s", v.cmp.machine);
    done(&v);
    ada_history_free(h);
}

/* New kernel code, one shape 30% slower: flagged, and only it. */
Test(history, real_slowdown_of_one_shape_is_flagged)
{
    ada_history *h = ada_history_new();
    nights(h, 5, "k1");
    const double us[NB] = {base[0], base[1] * 1.001, base[2], base[3] * 1.30};
    ada_hist_verdict v;
    judge(h, "wan", 9, us, "k2", "GPU-1", &v);
    cr_assert(v.judged);
    cr_expect_eq(v.cmp.slower, 1);
    const ada_cmp_row *r = row(&v, "dtile/");
    cr_expect_eq(r->v, ADA_SLOWER);
    cr_expect(r->banded);
    cr_expect_float_eq(r->ratio, 1.30, 0.01);
    cr_expect_eq(v.cmp.drift, 0);
    done(&v);
    /* The same slowdown on another lease is still the code's: flagged. */
    judge(h, "wan", 9, us, "k2", "GPU-2", &v);
    cr_expect_eq(v.cmp.slower, 1);
    done(&v);
    ada_history_free(h);
}

/* A quick-style run of 3 repetitions against 9-repetition runs: not comparable, and it says
 * so -- never judged (3 against 9 could reach p = 0.009 and call noise a change). */
Test(history, three_repetitions_against_nine_is_not_comparable)
{
    ada_history *h = ada_history_new();
    nights(h, 4, "k1");
    const double us[NB] = {base[0], base[1], base[2], base[3] * 3};
    ada_hist_verdict v;
    judge(h, "wan", 3, us, "k2", "GPU-1", &v);
    cr_expect(!v.judged);
    cr_expect_eq(v.cmp.n, 0);
    cr_expect_eq(v.unlike, 4);
    cr_expect(strstr(v.why, "no earlier run of set wan with 3 repetitions") != NULL, "%s", v.why);
    cr_expect(strstr(v.why, "9 (4 runs)") != NULL, "%s", v.why);
    done(&v);
    /* And a 3-repetition quick run: another set as well. */
    judge(h, "quick", 3, us, "k2", "GPU-1", &v);
    cr_expect(!v.judged);
    cr_expect(strstr(v.why, "set quick") != NULL, "%s", v.why);
    done(&v);
    /* The pair rule refuses the same pair outright. */
    ada_bench_set a, b;
    ada_run_meta ma, mb;
    run("wan", 9, base, "k1", "GPU-1", &a, &ma);
    run("wan", 3, us, "k1", "GPU-1", &b, &mb);
    ada_cmp c;
    char err[512];
    ada_cmp_opts o = {0};
    cr_expect_eq(ada_compare_runs(&a, &b, &ma, &mb, &o, &c, err, sizeof err), -1);
    cr_expect(strstr(err, "9 repetitions against 3") != NULL, "%s", err);
    ada_cmp_free(&c);
    ada_bench_set_free(&a);
    ada_bench_set_free(&b);
    ada_run_meta_free(&ma);
    ada_run_meta_free(&mb);
    ada_history_free(h);
}

/* A history of one run has no spread to make a band of: the pair rule decides and says so
 * (band_runs 0, rows not banded): a 30% slowdown is flagged, a 3% one is not (threshold 5%,
 * where a band made of one point would have called it). No earlier run: nothing judged. */
Test(history, history_of_one_run)
{
    ada_history *h = ada_history_new();
    ada_hist_verdict v;
    judge(h, "wan", 9, base, "k1", "GPU-1", &v);
    cr_expect(!v.judged);
    cr_expect(strstr(v.why, "nothing to judge against") != NULL, "%s", v.why);
    done(&v);
    nights(h, 1, "k1");
    const double slow[NB] = {base[0], base[1], base[2], base[3] * 1.30}, bit[NB] = {base[0], base[1], base[2], base[3] * 1.03};
    judge(h, "wan", 9, slow, "k2", "GPU-1", &v);
    cr_assert(v.judged);
    cr_expect_eq(v.band_runs, 0);
    cr_expect_eq(v.cmp.slower, 1);
    cr_expect(!row(&v, "dtile/")->banded);
    done(&v);
    judge(h, "wan", 9, bit, "k2", "GPU-1", &v);
    cr_expect_eq(v.cmp.slower, 0);
    done(&v);
    ada_history_free(h);
}

/* The band is of the baseline's code: after a code change the old code's runs no longer
 * count (one run of k2: the pair rule), and three runs of k2 make a band again. Runs of
 * another set in between change nothing. */
Test(history, band_of_the_baselines_code)
{
    ada_history *h = ada_history_new();
    nights(h, 5, "k1");
    ada_bench_set s;
    ada_run_meta m;
    run("sweep", 9, base, "k1", "GPU-1", &s, &m);
    cr_assert_eq(ada_history_add(h, &s, &m, 99, "sweep"), 0);
    nights(h, 1, "k2");
    ada_hist_verdict v;
    judge(h, "wan", 9, base, "k2", "GPU-1", &v);
    cr_expect_eq(v.band_runs, 0);
    cr_expect_eq(v.baseline_id, 0);
    done(&v);
    nights(h, 2, "k2");
    judge(h, "wan", 9, base, "k2", "GPU-1", &v);
    cr_expect_eq(v.band_runs, 3);
    cr_expect_str_eq(v.baseline, "night");
    done(&v);
    ada_history_free(h);
}

/* A researcher's run with a plug-in (bench --plugin) is its own history: the next nightly
 * of adaload's kernels is judged against the last run without plug-ins, and the plug-in's
 * next run against the plug-in's. */
Test(history, plugin_runs_are_their_own_history)
{
    ada_history *h = ada_history_new();
    nights(h, 3, "k1");
    ada_bench_set b;
    ada_run_meta m;
    const double slow[NB] = {base[0], base[1] * 1.5, base[2] * 1.5, base[3] * 1.5};
    run("wan", 9, slow, "k1", "GPU-1", &b, &m);
    json_t *o = json_pack("{s:[{s:s, s:s, s:[s]}]}", "plugins", "path", "my.so", "file_sha256", "abc123",
                          "variants", "plugin:mine");
    ada_run_meta pm;
    cr_assert_eq(ada_run_meta_from_json(o, &pm), 0);
    json_decref(o);
    free(m.plugin_hashes);
    m.plugin_hashes = pm.plugin_hashes;
    pm.plugin_hashes = NULL;
    ada_run_meta_free(&pm);
    cr_assert_eq(ada_history_add(h, &b, &m, 99, "plugin run"), 0);
    ada_hist_verdict v;
    judge(h, "wan", 9, base, "k1", "GPU-1", &v);
    cr_assert(v.judged);
    cr_expect_neq(v.baseline_id, 99, "the plug-in run is no baseline of adaload's nightly");
    cr_expect_str_eq(v.baseline, "night");
    done(&v);
    ada_history_free(h);
}
