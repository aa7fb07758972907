/* test_catalog.c -- the results catalog on small synthetic trees: layout rules, the index
 * (write, check, append), filters and the pruning policy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "catalog.h"
#include "test_tmpdir.h"

static char err[1024];


static void tree_make(void) { test_tmp_make("catalog"); }
TestSuite(catalog, .init = tree_make, .fini = test_tmp_remove);

static void meta(const char *run, const char *sha, const char *dirty, const char *hash)
{
    char rel[400], text[1024];
    snprintf(rel, sizeof rel, "%s/meta.json", run);
    snprintf(text, sizeof text,
             "{\"schema\": \"adaload.meta/1\", \"git_sha\": \"%s\", \"git_dirty\": %s, "
             "\"command_line\": \"adaload x\", \"kernel_source_hash\": \"%s\"}\n",
             sha, dirty, hash);
    test_tmp_put(rel, text);
}

static void verify(const char *run, const char *hash, const char *grid, int ok)
{
    meta(run, "1111111aaaa", "false", hash);
    char rel[400], text[1024];
    snprintf(rel, sizeof rel, "%s/verify.json", run);
    /* A full record as the verifier writes it: what passes is the gate's to say (gate.h). */
    snprintf(text, sizeof text,
             "{\"schema\": \"adaload.verify/1\", \"kernel_hash_v2\": \"%s\", \"grid\": \"%s\", \"backend\": \"cuda\","
             " \"cases\": [{\"pass\": true}, {\"pass\": true}, {\"pass\": true}, {\"pass\": %s}],"
             " \"summary\": {\"cases\": 4, \"passed\": %d},"
             " \"all_passed\": %s, \"sanitizers\": {\"memcheck\": \"clean\", \"racecheck\": "
             "\"clean\", \"initcheck\": \"clean\", \"synccheck\": \"clean\"}}\n",
             hash, grid, ok ? "true" : "false", ok ? 4 : 3, ok ? "true" : "false");
    test_tmp_put(rel, text);
}

static void bench(const char *run, const char *sha, const char *dirty)
{
    meta(run, sha, dirty, "h1");
    char rel[400];
    snprintf(rel, sizeof rel, "%s/bench.json", run);
    test_tmp_put(rel, "{\"context\": {\"adaload_set\": \"wan\", \"adaload_repetitions\": \"2\"}, \"benchmarks\": ["
             "{\"name\": \"a\", \"run_name\": \"a\", \"run_type\": \"iteration\", \"real_time\": 1},"
             "{\"name\": \"a\", \"run_name\": \"a\", \"run_type\": \"iteration\", \"real_time\": 1},"
             "{\"name\": \"a_median\", \"run_name\": \"a\", \"run_type\": \"aggregate\"},"
             "{\"name\": \"b\", \"run_name\": \"b\", \"run_type\": \"iteration\", \"real_time\": 2}]}\n");
}

static void sample_tree(void)
{
    verify("r/gpu/verify/2026-01-02T000000Z_bbbbbbb", "h1", "full", 1);
    verify("r/gpu/verify/2026-01-01T000000Z_aaaaaaa", "h0", "full", 1);
    verify("r/gpu/verify/2026-01-03T000000Z_ccccccc", "h1", "quick", 1);
    bench("r/gpu/bench/2026-01-02T010000Z_bbbbbbb", "bbbbbbb000", "false");
    test_tmp_put("r/gpu/README.md", "notes are allowed\n");
    test_tmp_put("r/README.md", "notes\n");
}

static char path[512];
static const char *at(const char *rel)
{
    snprintf(path, sizeof path, "%s/%s", test_tmpdir, rel);
    return path;
}

Test(catalog, scan_sorts_by_time_and_measures)
{
    sample_tree();
    cat_catalog c;
    cr_assert_eq(cat_scan(at("r"), &c, err, sizeof err), CAT_OK, "%s", err);
    cr_assert_eq(c.n, 4);
    cr_assert_str_eq(c.run[0].path, "gpu/verify/2026-01-01T000000Z_aaaaaaa");
    cr_assert_str_eq(c.run[1].path, "gpu/verify/2026-01-02T000000Z_bbbbbbb");
    cr_assert_str_eq(c.run[2].path, "gpu/bench/2026-01-02T010000Z_bbbbbbb");
    cr_assert_str_eq(c.run[2].time, "2026-01-02T01:00:00Z");
    cr_assert_str_eq(c.run[2].measured, "set wan, 2 benchmarks x 2 repetitions");
    cr_assert_str_eq(c.run[1].measured, "grid full, 4/4 cases passed, sanitizers clean");
    cr_assert_eq(c.run[1].verify_passed, 0, "4 cases are not the full grid's: the gate's rule (gate.h) says no");
    cr_assert_eq(c.run[0].git_dirty, 0);
    char *line = cat_run_line(&c.run[2]);
    cr_assert_str_eq(line,
                     "{\"path\":\"gpu/bench/2026-01-02T010000Z_bbbbbbb\",\"testbed\":\"gpu\",\"kind\":"
                     "\"bench\",\"run\":\"2026-01-02T010000Z_bbbbbbb\",\"time\":\"2026-01-02T01:00:00Z\","
                     "\"git_sha\":\"bbbbbbb000\",\"git_dirty\":false,\"kernel_hash_v1\":\"h1\","
                     "\"kernel_hash_v2\":null,\"command\":\"adaload x\","
                     "\"measured\":\"set wan, 2 benchmarks x 2 repetitions\"}");
    free(line);
    cat_free(&c);
}

Test(catalog, missing_root_is_empty)
{
    cat_catalog c;
    cr_assert_eq(cat_scan(at("nothing"), &c, err, sizeof err), CAT_OK);
    cr_assert_eq(c.n, 0);
    cat_free(&c);
}

Test(catalog, layout_violations_are_named)
{
    cat_catalog c;
    bench("r1/gpu/benchmarks/2026-01-02T010000Z_b", "b", "false");
    cr_assert_eq(cat_scan(at("r1"), &c, err, sizeof err), CAT_BAD_TREE);
    cr_assert(strstr(err, "benchmarks"), "%s", err);

    bench("r2/gpu/bench/latest", "b", "false");
    cr_assert_eq(cat_scan(at("r2"), &c, err, sizeof err), CAT_BAD_TREE);
    cr_assert(strstr(err, "latest") && strstr(err, "UTC time"), "%s", err);

    test_tmp_put("r3/gpu/bench/2026-01-02T010000Z_b/bench.json", "{}");
    cr_assert_eq(cat_scan(at("r3"), &c, err, sizeof err), CAT_BAD_TREE);
    cr_assert(strstr(err, "meta.json"), "%s", err);

    meta("r4/gpu/verify/2026-01-02T010000Z_b", "b", "false", "h");
    cr_assert_eq(cat_scan(at("r4"), &c, err, sizeof err), CAT_BAD_TREE);
    cr_assert(strstr(err, "verify.json"), "%s", err);

    /* The old layout (a run straight under its testbed) is not a kind. */
    bench("r5/gpu/2026-01-02T010000Z_b", "b", "false");
    cr_assert_eq(cat_scan(at("r5"), &c, err, sizeof err), CAT_BAD_TREE);
}

Test(catalog, multi_run_folders_read_their_first_meta)
{
    bench("r/gpu/regression-check/2026-01-05T000000Z/normal", "ddddddd", "false");
    bench("r/gpu/regression-check/2026-01-05T000000Z/slowed", "eeeeeee", "false");
    test_tmp_put("r/gpu/regression-check/2026-01-05T000000Z/compare-same.txt",
        "x\n0 slower, 0 faster, 6 same, 0 with errors (threshold 5%)\n");
    test_tmp_put("r/gpu/regression-check/2026-01-05T000000Z/compare-slowed.txt",
        "3 slower, 0 faster, 3 same, 0 with errors (threshold 5%)\n");
    cat_catalog c;
    cr_assert_eq(cat_scan(at("r"), &c, err, sizeof err), CAT_OK, "%s", err);
    cr_assert_eq(c.n, 1);
    cr_assert_str_eq(c.run[0].git_sha, "ddddddd");
    cr_assert_str_eq(c.run[0].measured,
                     "same: 0 slower, 0 faster, 6 same, 0 with errors; slowed: 3 slower, 0 faster, "
                     "3 same, 0 with errors");
    cat_free(&c);
}

Test(catalog, index_write_check_append)
{
    sample_tree();
    cat_catalog c;
    char *rep = NULL;
    cr_assert_eq(cat_check(at("r"), &rep, err, sizeof err), CAT_MISMATCH);
    cr_assert(strstr(rep, "not in the index: gpu/bench/2026-01-02T010000Z_bbbbbbb"), "%s", rep);
    free(rep);
    cr_assert_eq(cat_scan(at("r"), &c, err, sizeof err), CAT_OK);
    cr_assert_eq(cat_write_index(at("r"), &c, err, sizeof err), CAT_OK, "%s", err);
    cat_free(&c);
    cr_assert_eq(cat_check(at("r"), &rep, err, sizeof err), CAT_OK, "%s", rep ? rep : "");
    free(rep);

    /* A new run: not indexed until appended; appending twice is refused. */
    bench("r/gpu/bench/2026-01-04T000000Z_fffffff", "fffffff", "false");
    cr_assert_eq(cat_check(at("r"), &rep, err, sizeof err), CAT_MISMATCH);
    free(rep);
    cr_assert_eq(cat_append(at("r"), "gpu/bench/2026-01-04T000000Z_fffffff", err, sizeof err), CAT_OK,
                 "%s", err);
    cr_assert_eq(cat_check(at("r"), &rep, err, sizeof err), CAT_OK, "%s", rep ? rep : "");
    free(rep);
    cr_assert_eq(cat_append(at("r"), "gpu/bench/2026-01-04T000000Z_fffffff", err, sizeof err),
                 CAT_BAD_ARG);
    cr_assert(strstr(err, "already"), "%s", err);
    json_t *lines;
    cr_assert_eq(cat_read_index(at("r"), &lines, err, sizeof err), CAT_OK);
    cr_assert_eq(json_array_size(lines), 5);
    json_decref(lines);

    /* An edited run (its meta changed) makes its line stale; a removed run leaves one behind. */
    meta("r/gpu/bench/2026-01-04T000000Z_fffffff", "0000000", "false", "h1");
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -r '%s/r/gpu/verify/2026-01-01T000000Z_aaaaaaa'", test_tmpdir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(cat_check(at("r"), &rep, err, sizeof err), CAT_MISMATCH);
    cr_assert(strstr(rep, "stale line for gpu/bench/2026-01-04T000000Z_fffffff: field git_sha"), "%s", rep);
    cr_assert(strstr(rep, "in the index but not in the tree: gpu/verify/2026-01-01T000000Z_aaaaaaa"),
              "%s", rep);
    free(rep);
}

Test(catalog, check_catches_duplicates_and_bad_lines)
{
    sample_tree();
    cat_catalog c;
    cr_assert_eq(cat_scan(at("r"), &c, err, sizeof err), CAT_OK);
    char *l = cat_run_line(&c.run[0]);
    char text[4096];
    snprintf(text, sizeof text, "%s\n%s\n", l, l);
    free(l);
    cat_free(&c);
    test_tmp_put("r/index.jsonl", text);
    char *rep = NULL;
    cr_assert_eq(cat_check(at("r"), &rep, err, sizeof err), CAT_MISMATCH);
    cr_assert(strstr(rep, "gpu/verify/2026-01-01T000000Z_aaaaaaa listed twice"), "%s", rep);
    free(rep);
    test_tmp_put("r/index.jsonl", "{\"path\": \"x\"}\nnot json\n");
    cr_assert_eq(cat_check(at("r"), &rep, err, sizeof err), CAT_BAD_INDEX);
    cr_assert(strstr(err, "index.jsonl:2"), "%s", err);
}

Test(catalog, relpath_accepts_only_runs_under_root)
{
    sample_tree();
    char out[256], root[512];
    snprintf(root, sizeof root, "%s", at("r"));
    cr_assert_eq(cat_relpath(root, at("r/gpu/bench/2026-01-02T010000Z_bbbbbbb"), out, sizeof out), CAT_OK);
    cr_assert_str_eq(out, "gpu/bench/2026-01-02T010000Z_bbbbbbb");
    cr_assert_eq(cat_relpath(root, at("r/gpu/bench"), out, sizeof out), CAT_BAD_ARG);
    cr_assert_eq(cat_relpath(root, at("elsewhere"), out, sizeof out), CAT_BAD_ARG);
}

Test(catalog, filters)
{
    sample_tree();
    cat_catalog c;
    cr_assert_eq(cat_scan(at("r"), &c, err, sizeof err), CAT_OK);
    cat_filter f = {.kind = "verify"};
    int64_t n = 0;
    for (int64_t i = 0; i < c.n; i++) n += cat_match(&c.run[i], &f);
    cr_assert_eq(n, 3);
    cat_filter g = {.since = "2026-01-02", .until = "2026-01-02T00"};
    n = 0;
    for (int64_t i = 0; i < c.n; i++) n += cat_match(&c.run[i], &g);
    cr_assert_eq(n, 1, "only the verify run at 2026-01-02T00:00:00Z");
    cat_filter h = {.sha = "bbbb", .testbed = "gpu"};
    n = 0;
    for (int64_t i = 0; i < c.n; i++) n += cat_match(&c.run[i], &h);
    cr_assert_eq(n, 1);
    cat_free(&c);
}

static int main_line(const char *sha, void *ctx)
{
    (void)ctx;
    if (!strncmp(sha, "bad", 3)) return 0;
    if (!strncmp(sha, "unk", 3)) return -1;
    return 1;
}

Test(catalog, prune_policy)
{
    sample_tree();
    verify("r/gpu/verify/2026-01-00T000000Z_old", "h1", "full", 1);   /* older, same hash */
    verify("r/gpu/verify/2026-01-04T000000Z_new", "h2", "full", 0);   /* newer, other hash */
    verify("r/cpu/verify/2025-12-01T000000Z_x", "h9", "full", 1);     /* other testbed */
    bench("r/gpu/bench/2026-01-05T000000Z_dirty", "ddd", "true");
    bench("r/gpu/bench/2026-01-06T000000Z_side", "badbad", "false");
    bench("r/gpu/planner/2026-01-07T000000Z_unk", "unkunk", "false");
    cat_catalog c;
    cr_assert_eq(cat_scan(at("r"), &c, err, sizeof err), CAT_OK, "%s", err);
    cat_decision d[16];
    cr_assert_leq(c.n, 16);
    cat_prune_opts o = {.hash_v1 = "h1", .on_main = main_line};
    cr_assert_eq(cat_prune_plan(&c, &o, d), CAT_OK);
    const char *want[][2] = {
        {"cpu/verify/2025-12-01T000000Z_x", "0"},      {"gpu/verify/2026-01-00T000000Z_old", "1"},
        {"gpu/verify/2026-01-01T000000Z_aaaaaaa", "1"}, {"gpu/verify/2026-01-02T000000Z_bbbbbbb", "0"},
        {"gpu/bench/2026-01-02T010000Z_bbbbbbb", "0"}, {"gpu/verify/2026-01-03T000000Z_ccccccc", "0"},
        {"gpu/verify/2026-01-04T000000Z_new", "0"},     {"gpu/bench/2026-01-05T000000Z_dirty", "0"},
        {"gpu/bench/2026-01-06T000000Z_side", "1"},     {"gpu/planner/2026-01-07T000000Z_unk", "0"},
    };
    cr_assert_eq(c.n, 10);
    for (int i = 0; i < 10; i++) {
        cr_assert_str_eq(c.run[i].path, want[i][0]);
        cr_assert_eq(d[i].prune, want[i][1][0] == '1', "%s: %s", c.run[i].path, d[i].reason);
    }
    cr_assert(strstr(d[1].reason, "2026-01-02T000000Z_bbbbbbb"), "%s", d[1].reason);
    cr_assert(strstr(d[2].reason, "superseded"), "%s", d[2].reason);

    cr_assert_eq(cat_remove_run(at("r"), c.run[1].path, err, sizeof err), CAT_OK, "%s", err);
    struct stat st;
    cr_assert_neq(stat(at("r/gpu/verify/2026-01-00T000000Z_old"), &st), 0);
    cr_assert_eq(cat_remove_run(at("r"), "gpu/../../x", err, sizeof err), CAT_BAD_ARG);
    cat_free(&c);
}

/* A full-grid record that checked a plug-in (a researcher's library) is no gate record: it
 * neither supersedes adaload's own record nor is superseded (gate_record_has_plugins). */
Test(catalog, prune_keeps_records_around_plugin_runs)
{
    verify("r/gpu/verify/2026-01-01T000000Z_own", "h1", "full", 1);
    meta("r/gpu/verify/2026-01-02T000000Z_plug", "1111111aaaa", "false", "h1");
    test_tmp_put("r/gpu/verify/2026-01-02T000000Z_plug/verify.json",
                 "{\"schema\": \"adaload.verify/1\", \"kernel_hash_v2\": \"h1\", \"grid\": \"full\", "
                 "\"backend\": \"cuda\", \"variants\": [\"dtile\", \"plugin:mine\"], \"plugins\": [{\"path\": "
                 "\"my.so\", \"file_sha256\": \"00\"}], \"cases\": [{\"pass\": true}], \"summary\": {\"cases\": 1, "
                 "\"passed\": 1}, \"all_passed\": true, \"sanitizers\": {\"memcheck\": \"clean\", "
                 "\"racecheck\": \"clean\", \"initcheck\": \"clean\", \"synccheck\": \"clean\"}}\n");
    cat_catalog c;
    cr_assert_eq(cat_scan(at("r"), &c, err, sizeof err), CAT_OK, "%s", err);
    cr_assert_eq(c.n, 2);
    cr_assert_eq(c.run[1].verify_plugins, 1);
    cr_assert(strstr(c.run[1].measured, "with plug-ins"), "%s", c.run[1].measured);
    cat_decision d[2];
    cat_prune_opts o = {.hash_v1 = "h1", .on_main = main_line};
    cr_assert_eq(cat_prune_plan(&c, &o, d), CAT_OK);
    cr_assert_eq(d[0].prune, 0, "%s", d[0].reason);
    cr_assert(strstr(d[0].reason, "newest gate record"), "%s", d[0].reason);
    cr_assert_eq(d[1].prune, 0, "%s", d[1].reason);
    cr_assert(strstr(d[1].reason, "plug-ins"), "%s", d[1].reason);
    cat_free(&c);
}

/* Shards of one grid are parts, not versions: a newer shard supersedes only the same shard
 * (same count); a newer whole record supersedes any of them. */
static void shard_verify(const char *run, const char *hash, int k, int nk)
{
    char rel[256], text[640];
    meta(run, "1111111aaaa", "false", hash);
    snprintf(rel, sizeof rel, "%s/verify.json", run);
    snprintf(text, sizeof text,
             "{\"schema\": \"adaload.verify/1\", \"kernel_hash_v2\": \"%s\", \"grid\": \"full\", "
             "\"backend\": \"cuda\", \"shard\": {\"index\": %d, \"count\": %d}, \"cases\": [{\"pass\": true}], "
             "\"summary\": {\"cases\": 1, \"passed\": 1}, \"all_passed\": true, \"sanitizers\": {}}\n",
             hash, k, nk);
    test_tmp_put(rel, text);
}

Test(catalog, prune_keeps_every_shard)
{
    shard_verify("r/gpu/verify/2026-01-01T000000Z_s1", "h1", 1, 3);
    shard_verify("r/gpu/verify/2026-01-02T000000Z_s2", "h1", 2, 3);
    shard_verify("r/gpu/verify/2026-01-03T000000Z_s1again", "h1", 1, 3);
    shard_verify("r/gpu/verify/2026-01-04T000000Z_s3", "h1", 3, 3);
    cat_catalog c;
    cr_assert_eq(cat_scan(at("r"), &c, err, sizeof err), CAT_OK, "%s", err);
    cr_assert_eq(c.n, 4);
    cr_assert(strstr(c.run[1].measured, "shard 2/3"), "%s", c.run[1].measured);
    cat_decision d[4];
    cat_prune_opts o = {.hash_v1 = "h1", .hash_v2 = "h1", .on_main = main_line};
    cr_assert_eq(cat_prune_plan(&c, &o, d), CAT_OK);
    cr_assert_eq(d[0].prune, 1, "shard 1 again, newer: %s", d[0].reason);
    cr_assert(strstr(d[0].reason, "2026-01-03T000000Z_s1again"), "%s", d[0].reason);
    for (int i = 1; i < 4; i++) cr_assert_eq(d[i].prune, 0, "%s: %s", c.run[i].path, d[i].reason);
    cat_free(&c);
}

/* A record made after a comment-only kernel edit: its scheme-1 hash is not the tree's, its
 * scheme-2 hash is; it is the tree's record, and an older one with neither is superseded. */
Test(catalog, prune_matches_scheme_2)
{
    verify("r/gpu/verify/2026-01-01T000000Z_old", "h0", "full", 1);
    verify("r/gpu/verify/2026-01-02T000000Z_v2", "h-before-comment-edit", "full", 1);
    test_tmp_put("r/gpu/verify/2026-01-02T000000Z_v2/meta.json",
        "{\"git_sha\": \"2222222\", \"git_dirty\": false, \"command_line\": \"v\", \"kernel_source_hash\": "
        "\"h-before-comment-edit\", \"kernel_source_hash_v2\": \"v2-of-tree\"}\n");
    verify("r/gpu/verify/2026-01-03T000000Z_other", "h9", "full", 1);
    cat_catalog c;
    cr_assert_eq(cat_scan(at("r"), &c, err, sizeof err), CAT_OK, "%s", err);
    cr_assert_eq(c.n, 3);
    cr_assert_str_eq(c.run[1].kernel_hash_v2, "v2-of-tree");
    cat_decision d[3];
    cat_prune_opts o = {.hash_v1 = "h-tree", .hash_v2 = "v2-of-tree", .on_main = main_line};
    cr_assert_eq(cat_prune_plan(&c, &o, d), CAT_OK);
    cr_assert_eq(d[0].prune, 1, "%s", d[0].reason);
    cr_assert_eq(d[1].prune, 0, "the tree's record by scheme 2: %s", d[1].reason);
    cr_assert(strstr(d[1].reason, "this tree"), "%s", d[1].reason);
    cr_assert_eq(d[2].prune, 0, "the newest record: %s", d[2].reason);
    char *line = cat_run_line(&c.run[1]);
    cr_assert(strstr(line, "\"kernel_hash_v2\":\"v2-of-tree\""), "%s", line);
    free(line);
    cat_free(&c);
}

/* Nightly history thinned to the newest N per set; a run the docs cite stays. */
Test(catalog, prune_keep_bench_and_cited)
{
    bench("r/gpu/bench/2026-01-01T000000Z_a", "aaaaaaa", "false");
    bench("r/gpu/bench/2026-01-02T000000Z_b", "bbbbbbb", "false");
    bench("r/gpu/bench/2026-01-03T000000Z_c", "ccccccc", "false");
    bench("r/gpu/bench/2026-01-04T000000Z_d", "ddddddd", "false");
    test_tmp_put("r/gpu/bench/2026-01-04T000000Z_d/bench.json",
        "{\"context\": {\"adaload_set\": \"sweep\", \"adaload_repetitions\": \"9\"}, \"benchmarks\": []}\n");
    bench("r/gpu/planner/2026-01-01T000000Z_p", "ppppppp", "false");
    cat_catalog c;
    cr_assert_eq(cat_scan(at("r"), &c, err, sizeof err), CAT_OK, "%s", err);
    cr_assert_eq(c.n, 5);
    cat_decision d[5];
    cat_prune_opts o = {.on_main = main_line, .keep_bench = 1, .cited = "see run 2026-01-01T000000Z_a in the notes"};
    cr_assert_eq(cat_prune_plan(&c, &o, d), CAT_OK);
    const char *want[][2] = {{"gpu/bench/2026-01-01T000000Z_a", "0"}, {"gpu/planner/2026-01-01T000000Z_p", "0"},
                             {"gpu/bench/2026-01-02T000000Z_b", "1"}, {"gpu/bench/2026-01-03T000000Z_c", "0"},
                             {"gpu/bench/2026-01-04T000000Z_d", "0"}};
    for (int i = 0; i < 5; i++) {
        cr_assert_str_eq(c.run[i].path, want[i][0]);
        cr_assert_eq(d[i].prune, want[i][1][0] == '1', "%s: %s", c.run[i].path, d[i].reason);
    }
    cr_assert(strstr(d[0].reason, "cited"), "%s", d[0].reason);
    cr_assert(strstr(d[2].reason, "newest 1 bench runs of set 'wan'"), "%s", d[2].reason);
    o.keep_bench = 0;
    cr_assert_eq(cat_prune_plan(&c, &o, d), CAT_OK);
    for (int i = 0; i < 5; i++) cr_assert_eq(d[i].prune, 0, "keep_bench 0 keeps main-line runs: %s", c.run[i].path);
    cat_free(&c);
}
