/* test_gate_lib.c -- the gate's rule on both record formats and both hash schemes, the
 * compact record made from a full one, the content check (a record's cases must be exactly
 * the grid's, lnmod's and the fused residual op's -- test_gate_res.c has the latter's own --, its
 * sanitizers run over their grids), and the scan of results/<testbed>/verify/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "gate.h"
#include "lnmod_desc.h"
#include "test_tmpdir.h"
#include "verify.h"

#include "test_gate_records.h"

Test(gate, schemes_pick_the_hash)
{
    json_t *r = full_record("h1-of-this-tree", 0, 1, "full", "clean");
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS, "no scheme field: scheme 1");
    json_object_set_new(r, "hash_scheme", json_integer(1));
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS);
    json_object_set_new(r, "hash_scheme", json_integer(2));
    cr_assert_eq(judge(r, GATE_OK), GATE_OTHER_SOURCES, "a scheme-1 hash named as scheme 2");
    json_object_set_new(r, "kernel_source_hash", json_string("h2-of-this-tree"));
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS);
    json_object_set_new(r, "hash_scheme", json_integer(3));
    judge(r, GATE_MALFORMED);
    json_decref(r);
}

/* New records name scheme 2 kernel_hash_v2 (kernel_hash_v1 beside it); the rule alone
 * (gate_record_passes, what the catalog lists) ignores whose sources they are. */
Test(gate, unified_hash_names_and_the_rule_alone)
{
    json_t *r = full_record("unused", 0, 1, "full", "clean");
    json_object_del(r, "kernel_source_hash");
    json_object_set_new(r, "kernel_hash_v1", json_string("h2-of-this-tree")); /* not the scheme read */
    json_object_set_new(r, "kernel_hash_v2", json_string("h2-of-this-tree"));
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS);
    json_object_set_new(r, "kernel_hash_v2", json_string("h2-of-other-sources"));
    cr_assert_eq(judge(r, GATE_OK), GATE_OTHER_SOURCES);
    int passes = 0;
    char msg[600];
    cr_assert_eq(gate_record_passes(r, &passes, msg, sizeof msg), GATE_OK);
    cr_assert_eq(passes, 1, "other sources, but it passes the rule");
    json_object_set_new(r, "grid", json_string("quick"));
    cr_assert_eq(gate_record_passes(r, &passes, msg, sizeof msg), GATE_OK);
    cr_assert_eq(passes, 0, "a quick grid never passes the rule");
    json_decref(r);
}

/* A record that checked a plug-in's variants is never the gate's, even with every case of
 * the grid passing (the plug-in's cases beside them would fail the case check anyway; a
 * "plugins" array alone is enough). */
Test(gate, plugin_records_never_count)
{
    json_t *r = full_record("h1-of-this-tree", 0, 1, "full", "clean");
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS);
    cr_assert_eq(gate_record_has_plugins(r), 0);
    json_object_set_new(r, "plugins", json_pack("[{s:s, s:s}]", "path", "my.so", "file_sha256", "ab"));
    cr_assert_eq(gate_record_has_plugins(r), 1);
    char msg[600];
    gate_verdict v;
    cr_assert_eq(gate_judge(r, &tree, &v, msg, sizeof msg), GATE_OK);
    cr_assert_eq(v, GATE_NOT_COUNTED);
    cr_assert(strstr(msg, "plug-in variants"), "%s", msg);
    int passes = 1;
    cr_assert_eq(gate_record_passes(r, &passes, msg, sizeof msg), GATE_OK);
    cr_assert_eq(passes, 0);
    json_t *c = gate_summary(r);
    cr_assert_eq(judge(c, GATE_OK), GATE_NOT_COUNTED, "the compact record keeps the plug-ins");
    json_decref(c);
    json_object_set_new(r, "plugins", json_array());
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS, "an empty list is no plug-in");
    json_object_set_new(r, "variants", json_pack("[s, s]", "dtile", "plugin:mine"));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "a plugin: variant alone");
    json_decref(r);
}

Test(gate, failures_do_not_count)
{
    json_t *r = full_record("h1-of-this-tree", 0, 0, "full", "clean");
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED);
    json_decref(r);
    r = full_record("h1-of-this-tree", 0, 1, "quick", "clean");
    cr_assert_eq(judge(r, GATE_OK), GATE_SANITIZERS, "a quick record with clean sanitizers: only the part of a join");
    json_decref(r);
    r = full_record("h1-of-this-tree", 0, 1, "quick", "errors");
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED);
    json_decref(r);
    r = full_record("h1-of-this-tree", 0, 1, "full", "errors");
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED);
    json_decref(r);
    r = full_record("other", 0, 0, "full", "clean");
    cr_assert_eq(judge(r, GATE_OK), GATE_OTHER_SOURCES);
    json_object_del(json_array_get(json_object_get(r, "cases"), 1), "pass");
    judge(r, GATE_MALFORMED);
    json_decref(r);
}

Test(gate, compact_record)
{
    json_t *full = full_record("h2-of-this-tree", 2, 1, "full", "clean");
    json_t *c = gate_summary(full);
    cr_assert_not_null(c);
    cr_assert_str_eq(json_string_value(json_object_get(c, "schema")), "adaload.verify-summary/1");
    cr_assert_null(json_object_get(c, "cases"));
    json_t *g = json_object_get(c, "groups");
    int nreg, nbwd = 0;
    const char *const *reg = verify_registry_variants(&nreg);
    for (int v = 0; v < nreg; v++) nbwd += verify_registry_has_backward(reg[v]);
    cr_assert_eq((int)json_array_size(g),
                 (nreg + nbwd) * verify_ncombos() * LNMOD_LAYOUT_COUNT +
                     2 * nres_variants() * verify_res_ncombos() * LNMOD_LAYOUT_COUNT * VERIFY_RES_NSITES,
                 "a group per variant x dtypes x layout x direction (and site, for the fused op's)");
    json_t *g0 = json_array_get(g, 0);
    cr_assert_str_eq(json_string_value(json_object_get(g0, "dtypes")), "f32-f32-f32");
    cr_assert_str_eq(json_string_value(json_object_get(g0, "direction")), "fwd");
    /* 16 D x 4 rows, and verify_grid.c's long fp32 samples (D 640, and D 2560 on the lag path) */
    cr_assert_eq(json_integer_value(json_object_get(g0, "cases")), 66, "16 D x 4 rows + 2");
    cr_assert_eq(json_array_size(json_object_get(g0, "shapes")), 66);
    cr_assert_eq(json_integer_value(json_object_get(g0, "passed")), 66);
    cr_assert_float_eq(json_number_value(json_object_get(g0, "worst_ratio")), 0.5, 1e-12);
    cr_assert_eq(judge(c, GATE_OK), GATE_PASS);
    /* A shape changed in the compact record: not the grid's cases any more. */
    json_t *sh = json_array_get(json_object_get(g0, "shapes"), 3);
    json_array_set_new(sh, 0, json_integer(4097));
    cr_assert_eq(judge(c, GATE_OK), GATE_NOT_COUNTED);
    json_object_del(g0, "shapes");
    cr_assert_eq(judge(c, GATE_OK), GATE_NOT_COUNTED, "a compact record without shapes");
    json_decref(c);
    json_decref(full);

    full = full_record("h2-of-this-tree", 2, 0, "full", "clean");
    c = gate_summary(full);
    json_t *f = json_object_get(c, "failures");
    cr_assert_eq(json_array_size(f), 1);
    size_t gi;
    json_t *gr;
    int seen = 0;
    json_array_foreach(json_object_get(c, "groups"), gi, gr) {
        if (json_integer_value(json_object_get(gr, "failed")) != 1) continue;
        seen++;
        cr_assert_float_eq(json_number_value(json_object_get(gr, "worst_ratio")), 3.0, 1e-12);
    }
    cr_assert_eq(seen, 1);
    cr_assert_eq(judge(c, GATE_OK), GATE_NOT_COUNTED);
    /* A compact record whose groups do not add up is malformed. */
    json_object_set_new(json_object_get(c, "summary"), "cases", json_integer(5));
    judge(c, GATE_MALFORMED);
    json_decref(c);
    json_decref(full);
    json_t *summaryless = full_record("x", 0, 1, "full", "clean");
    cr_assert_null(gate_summary(json_object_get(summaryless, "summary")));
    json_decref(summaryless);
}

/* The 300-byte record of issue 17: one group of 5 cases, grid full, sanitizers clean, this
 * tree's hash. It must not pass, with or without sanitizer runs that look right. */
Test(gate, hand_written_summary_fails)
{
    json_t *r = json_loads("{\"schema\": \"adaload.verify-summary/1\", \"hash_scheme\": 2, \"kernel_source_hash\": "
                           "\"h2-of-this-tree\", \"backend\": \"cuda\", \"grid\": \"full\", \"all_passed\": true, "
                           "\"sanitizers\": {\"memcheck\": \"clean\", \"racecheck\": \"clean\", \"initcheck\": "
                           "\"clean\", \"synccheck\": \"clean\"}, \"summary\": {\"cases\": 5}, \"groups\": "
                           "[{\"variant\": \"dtile\", \"dtypes\": \"bf16-f32-bf16\", \"layout\": \"sample\", "
                           "\"direction\": \"fwd\", \"cases\": 5, \"passed\": 5}], \"failures\": []}",
                           0, NULL);
    cr_assert_not_null(r);
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED);
    json_object_set_new(r, "sanitizer_runs", sanitizer_runs("quick", "sanitizer"));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED);
    json_t *g = json_array_get(json_object_get(r, "groups"), 0);
    json_object_set_new(g, "shapes", json_pack("[[i,i],[i,i],[i,i],[i,i],[i,i]]", 4096, 1, 4096, 3, 4096, 1560,
                                                5120, 1, 5120, 3));
    gate_verdict v;
    char msg[600];
    cr_assert_eq(gate_judge(r, &tree, &v, msg, sizeof msg), GATE_OK);
    cr_assert_eq(v, GATE_NOT_COUNTED);
    cr_assert(strstr(msg, "its 5 cases are not the "), "%s", msg);
    json_decref(r);
}

/* Count and identity per variant x dtypes x layout x direction x shape. */
Test(gate, cases_must_be_the_grids)
{
    json_t *r = full_record("h2-of-this-tree", 2, 1, "full", "clean");
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS);
    json_t *cases = json_object_get(r, "cases");
    size_t li = 0; /* the last lnmod case (the fused op's follow) */
    while (li + 1 < json_array_size(cases) && !json_object_get(json_array_get(cases, li + 1), "op")) li++;
    json_t *last = json_incref(json_array_get(cases, li));
    json_array_remove(cases, li);
    json_object_set_new(json_object_get(r, "summary"), "cases", json_integer((json_int_t)json_array_size(cases)));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "one case missing");
    json_array_insert(cases, li, json_array_get(cases, 0));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "one case twice instead");
    json_array_set(cases, li, last);
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS, "restored");
    const char *fields[] = {"variant", "layout", "x", "direction"};
    const char *dir = json_string_value(json_object_get(last, "direction"));
    const char *other[] = {"dtile2", "token2", "f64", dir && !strcmp(dir, "bwd") ? "fwd" : "bwd"};
    for (int f = 0; f < 4; f++) {
        json_t *saved = json_incref(json_object_get(last, fields[f]));
        json_object_set_new(last, fields[f], json_string(other[f]));
        cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "%s changed", fields[f]);
        json_object_set_new(last, fields[f], saved);
    }
    json_object_set_new(last, "rows", json_integer(7));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "rows changed");
    json_decref(last);
    json_decref(r);
    /* The smoke grid's cases under a "full" label. */
    r = grid_record("h2-of-this-tree", 2, "full", "smoke", -1, "clean");
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED);
    json_decref(r);
}

Test(gate, sanitizers_must_run_over_their_grid)
{
    json_t *r = full_record("h2-of-this-tree", 2, 1, "full", "clean");
    json_t *mc = json_object_get(json_object_get(r, "sanitizer_runs"), "memcheck");
    json_object_set_new(mc, "grid", json_string("smoke"));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "memcheck over the smoke grid");
    json_object_set_new(mc, "grid", json_string("quick"));
    json_object_set_new(mc, "cases", json_integer(5));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "memcheck over 5 cases");
    json_object_del(json_object_get(r, "sanitizer_runs"), "memcheck");
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "a scheme-2 record must say what memcheck ran");
    /* Records of scheme 1 were made before sanitizer runs said their grid: verdicts count. */
    json_object_set_new(r, "kernel_source_hash", json_string("h1-of-this-tree"));
    json_object_del(r, "hash_scheme");
    json_object_del(r, "sanitizer_runs");
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS);
    json_object_set_new(json_object_get(r, "sanitizers"), "synccheck", json_string("errors"));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED);
    json_decref(r);
}

/* Nothing the gate says may start a line of its own: a record string with a newline and an
 * "ok" line after it comes out escaped, in one note line. */
Test(gate, control_bytes_are_escaped, .fini = test_tmp_remove)
{
    test_tmp_make("gate");
    json_t *r = full_record("h2-of-this-tree", 2, 0, "full", "clean");
    json_t *c = json_array_get(json_object_get(r, "cases"), 7);
    json_object_set_new(c, "variant", json_string("dtile\nadaload gate: ok: \x1b[32mall fine"));
    gate_verdict v;
    char msg[600];
    cr_assert_eq(gate_judge(r, &tree, &v, msg, sizeof msg), GATE_OK);
    for (const char *p = msg; *p; p++) cr_assert((unsigned char)*p >= 0x20 && *p != 0x7f, "%s", msg);
    cr_assert(strstr(msg, "dtile\\x0aadaload gate: ok: \\x1b[32m"), "%s", msg);
    char p[512];
    test_tmp_prepare("results/gpu/verify/2026-01-01T000000Z_a\nadaload gate: ok: x/verify.json", p, sizeof p);
    cr_assert_eq(json_dump_file(r, p, 0), 0);
    json_decref(r);
    char root[128];
    snprintf(root, sizeof root, "%s/results", test_tmpdir);
    gate_scan_result g;
    cr_assert_eq(gate_scan(root, &tree, &g), GATE_OK);
    cr_assert_eq(g.matching, 1);
    cr_assert_not_null(g.notes);
    const char *nl = strchr(g.notes, '\n');
    cr_assert(nl && nl[1] == '\0', "one note line: %s", g.notes);
    cr_assert(!strstr(g.notes, "\nadaload"), "%s", g.notes);
    gate_scan_free(&g);
}

static void write_rec(const char *rel, json_t *rec)
{
    char p[512];
    test_tmp_prepare(rel, p, sizeof p);
    cr_assert_eq(json_dump_file(rec, p, JSON_ENCODE_ANY), 0);
    json_decref(rec);
}

Test(gate, scan, .fini = test_tmp_remove)
{
    test_tmp_make("gate");
    char root[128];
    snprintf(root, sizeof root, "%s/results", test_tmpdir);
    gate_scan_result r;
    cr_assert_eq(gate_scan(root, &tree, &r), GATE_OK);
    cr_assert_eq(r.records, 0);
    gate_scan_free(&r);

    write_rec("results/gpu/verify/2026-01-01T000000Z_a/verify.json", full_record("old", 0, 1, "full", "clean"));
    write_rec("results/gpu/verify/2026-01-02T000000Z_b/verify.json",
              full_record("h1-of-this-tree", 0, 0, "full", "clean"));
    cr_assert_eq(gate_scan(root, &tree, &r), GATE_OK);
    cr_assert_eq(r.records, 2);
    cr_assert_eq(r.matching, 1);
    cr_assert_eq(r.passed, 0);
    cr_assert(strstr(r.notes, "2026-01-02T000000Z_b/verify.json: same kernel sources, not counted"), "%s", r.notes);
    gate_scan_free(&r);

    /* The compact record beside a full one is what counts. */
    json_t *full = full_record("h2-of-this-tree", 2, 1, "full", "clean");
    write_rec("results/gpu/verify/2026-01-03T000000Z_c/verify-summary.json", gate_summary(full));
    json_object_set_new(full, "all_passed", json_false());
    write_rec("results/gpu/verify/2026-01-03T000000Z_c/verify.json", full);
    cr_assert_eq(gate_scan(root, &tree, &r), GATE_OK);
    cr_assert_eq(r.passed, 1);
    cr_assert(strstr(r.pass_path, "2026-01-03T000000Z_c/verify-summary.json"), "%s", r.pass_path);
    gate_scan_free(&r);

    /* A broken record anywhere is counted as malformed. */
    write_rec("results/other/verify/2026-01-04T000000Z_d/verify.json", json_string("not an object"));
    cr_assert_eq(gate_scan(root, &tree, &r), GATE_OK);
    cr_assert_eq(r.malformed, 1);
    gate_scan_free(&r);
}

static void move_run(const char *from, const char *to)
{
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/%s", test_tmpdir, from);
    test_tmp_prepare(to, b, sizeof b);
    cr_assert_eq(rename(a, b), 0, "%s -> %s", a, b);
}

static int scan_passes(const char *root, int *joined)
{
    gate_scan_result r;
    cr_assert_eq(gate_scan(root, &tree, &r), GATE_OK);
    const int p = r.passed > 0;
    *joined = r.joined;
    gate_scan_free(&r);
    return p;
}

/* Shards of one grid join into a pass only complete, of one count, each with its own cases,
 * all passed, with a sanitizer record of these sources. */
Test(gate, shards_join, .fini = test_tmp_remove)
{
    test_tmp_make("gate");
    char root[128];
    int joined = 0;
    snprintf(root, sizeof root, "%s/results", test_tmpdir);
    json_t *r = shard_record("h2-of-this-tree", 2, 3, -1);
    cr_assert_eq(judge(r, GATE_OK), GATE_PART);
    json_object_set_new(json_object_get(r, "shard"), "index", json_integer(1));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "shard 2's cases claimed as shard 1's");
    json_object_set_new(json_object_get(r, "shard"), "index", json_integer(4));
    judge(r, GATE_MALFORMED);
    json_object_set_new(json_object_get(r, "shard"), "index", json_integer(2));
    json_object_set_new(r, "plugins", json_pack("[s]", "x.so"));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "a shard with plug-ins");
    json_decref(r);

    write_rec("results/gpu/verify/2026-02-01T000000Z_a/verify.json", shard_record("h2-of-this-tree", 1, 3, -1));
    write_rec("results/gpu/verify/2026-02-01T000001Z_c/verify.json", shard_record("h2-of-this-tree", 3, 3, -1));
    write_rec("results/gpu/verify/2026-02-01T000002Z_s/verify.json", full_record("h2-of-this-tree", 2, 1, "quick", "clean"));
    cr_assert(!scan_passes(root, &joined), "shard 2 of 3 missing");
    write_rec("results/gpu/verify/2026-02-01T000003Z_x/verify.json", shard_record("h2-of-this-tree", 2, 2, -1));
    cr_assert(!scan_passes(root, &joined), "a shard of another count does not fill the gap");
    write_rec("results/gpu/verify/2026-02-01T000004Z_b/verify.json", shard_record("h2-of-this-tree", 2, 3, 5));
    cr_assert(!scan_passes(root, &joined), "shard 2 has a failed case");
    write_rec("results/gpu/verify/2026-02-01T000004Z_b/verify.json", shard_record("other-sources", 2, 3, -1));
    cr_assert(!scan_passes(root, &joined), "shard 2 is of other sources");
    write_rec("results/gpu/verify/2026-02-01T000004Z_b/verify.json", shard_record("h2-of-this-tree", 2, 3, -1));
    cr_assert(scan_passes(root, &joined), "1, 2 and 3 of 3 and the sanitizer record");
    cr_assert_eq(joined, 3);
    /* The sanitizer record must be of these sources and clean. */
    write_rec("results/gpu/verify/2026-02-01T000002Z_s/verify.json", full_record("other", 2, 1, "quick", "clean"));
    cr_assert(!scan_passes(root, &joined), "no sanitizer record of these sources");
    write_rec("results/gpu/verify/2026-02-01T000002Z_s/verify.json", full_record("h2-of-this-tree", 2, 1, "quick", "errors"));
    cr_assert(!scan_passes(root, &joined), "the sanitizers found errors");
    /* Shard 2 on another testbed: no join of one machine's full grid. */
    move_run("results/gpu/verify/2026-02-01T000004Z_b", "results/gpu2/verify/2026-02-01T000004Z_b");
    write_rec("results/gpu/verify/2026-02-01T000002Z_s/verify.json", full_record("h2-of-this-tree", 2, 1, "quick", "clean"));
    cr_assert(!scan_passes(root, &joined), "shards of two testbeds");
    move_run("results/gpu2/verify/2026-02-01T000004Z_b", "results/gpu/verify/2026-02-01T000004Z_b");
    cr_assert(scan_passes(root, &joined), "back on one testbed");
    /* A shard that ran the sanitizers itself is its own sanitizer record. */
    json_t *s3 = shard_grid_record("h2-of-this-tree", 2, "full", "full", 3, 3, -1, "clean");
    write_rec("results/gpu/verify/2026-02-01T000001Z_c/verify.json", s3);
    cr_assert(scan_passes(root, &joined), "shard 3 carries the sanitizer runs");
}
