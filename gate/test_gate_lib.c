/* test_gate_lib.c -- the gate's rule on both record formats and both hash schemes, the
 * compact record made from a full one, and the scan of results/<testbed>/verify/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "gate.h"
#include "test_tmpdir.h"

static const gate_hashes tree = {.v1 = "h1-of-this-tree", .v2 = "h2-of-this-tree"};

/* A full record: two cases; case 2 passes when ok; the hash as given (scheme 0 = no field). */
static json_t *full_record(const char *hash, int scheme, int ok, const char *grid, const char *memcheck)
{
    json_t *r = json_pack(
        "{s:s, s:s, s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:{s:f}, s:b},"
        "{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:b, s:s}],"
        " s:{s:s, s:s, s:s, s:s}, s:{s:i, s:i}, s:b}",
        "schema", "adaload.verify/1", "kernel_source_hash", hash, "backend", "cuda", "grid", grid,
        "cases", "variant", "dtile", "x", "bf16", "mod", "f32", "y", "bf16", "layout", "sample", "D", 5120,
        "rows", 3, "worst_ratio", 0.25, "mean", "worst_ratio", 0.5, "pass", 1, "variant", "dtile", "x",
        "bf16", "mod", "f32", "y", "bf16", "layout", "sample", "D", 7, "rows", 1560, "worst_ratio",
        ok ? 0.75 : 3.0, "pass", ok, "direction", "fwd", "sanitizers", "memcheck", memcheck, "racecheck",
        "clean", "initcheck", "clean", "synccheck", "clean", "summary", "cases", 2, "passed", ok ? 2 : 1,
        "all_passed", ok);
    cr_assert_not_null(r);
    if (scheme) json_object_set_new(r, "hash_scheme", json_integer(scheme));
    return r;
}

static gate_verdict judge(json_t *rec, gate_status want)
{
    gate_verdict v;
    char msg[600];
    cr_assert_eq(gate_judge(rec, &tree, &v, msg, sizeof msg), want, "%s", msg);
    return v;
}

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

Test(gate, failures_do_not_count)
{
    json_t *r = full_record("h1-of-this-tree", 0, 0, "full", "clean");
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED);
    json_decref(r);
    r = full_record("h1-of-this-tree", 0, 1, "quick", "clean");
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
    cr_assert_eq(json_array_size(g), 1);
    json_t *g0 = json_array_get(g, 0);
    cr_assert_str_eq(json_string_value(json_object_get(g0, "dtypes")), "bf16-f32-bf16");
    cr_assert_str_eq(json_string_value(json_object_get(g0, "direction")), "fwd");
    cr_assert_eq(json_integer_value(json_object_get(g0, "cases")), 2);
    cr_assert_eq(json_integer_value(json_object_get(g0, "passed")), 2);
    cr_assert_float_eq(json_number_value(json_object_get(g0, "worst_ratio")), 0.75, 1e-12);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(g0, "worst_case"), "D")), 7);
    cr_assert_eq(judge(c, GATE_OK), GATE_PASS);
    json_decref(c);
    json_decref(full);

    full = full_record("h2-of-this-tree", 2, 0, "full", "clean");
    c = gate_summary(full);
    json_t *f = json_object_get(c, "failures");
    cr_assert_eq(json_array_size(f), 1);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(f, 0), "D")), 7, "failures in full");
    cr_assert_float_eq(json_number_value(json_object_get(json_array_get(json_object_get(c, "groups"), 0), "worst_ratio")),
                       3.0, 1e-12);
    cr_assert_eq(judge(c, GATE_OK), GATE_NOT_COUNTED);
    /* A compact record whose groups do not add up is malformed. */
    json_object_set_new(json_object_get(c, "summary"), "cases", json_integer(5));
    judge(c, GATE_MALFORMED);
    json_decref(c);
    json_decref(full);
    cr_assert_null(gate_summary(json_object_get(full_record("x", 0, 1, "full", "clean"), "summary")));
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
