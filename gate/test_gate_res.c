/* test_gate_res.c -- the gate and the fused residual op's cases ("op": "lnmod_res"): a record
 * missing one, or with one failed or changed, does not pass; the compact record's res groups;
 * the sanitizer runs over its grid; records made before it judged as before; shards that cover
 * the grid with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "gate.h"
#include "test_gate_records.h"
#include "verify.h"
#include "verify_res.h"

/* ---- the fused residual op's cases ("op": "lnmod_res") --------------------------------- */

/* Index of the first case of op lnmod_res in r's cases. */
static size_t first_res(const json_t *r)
{
    const json_t *cases = json_object_get(r, "cases");
    for (size_t i = 0; i < json_array_size(cases); i++) {
        const char *op = json_string_value(json_object_get(json_array_get(cases, i), "op"));
        if (op && !strcmp(op, "lnmod_res")) return i;
    }
    cr_assert_fail("no lnmod_res case");
    return 0;
}

/* A full record missing one fused-op case, or with one failed, or with one whose identity
 * changed, does not pass. */
Test(gate_res, a_missing_or_failed_res_case_fails)
{
    cr_assert_gt(nres_variants(), 0, "the registry has variants with the fused op");
    json_t *r = full_record("h2-of-this-tree", 2, 1, "full", "clean");
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS);
    json_t *cases = json_object_get(r, "cases");
    const size_t i = first_res(r) + 5;
    json_t *c = json_incref(json_array_get(cases, i));
    json_array_remove(cases, i);
    json_object_set_new(json_object_get(r, "summary"), "cases", json_integer((json_int_t)json_array_size(cases)));
    gate_verdict v;
    char msg[600];
    cr_assert_eq(gate_judge(r, &tree, &v, msg, sizeof msg), GATE_OK);
    cr_assert_eq(v, GATE_NOT_COUNTED, "one lnmod_res case missing");
    cr_assert(strstr(msg, "1 missing (first: lnmod_res "), "%s", msg);
    json_array_insert(cases, i, c);
    json_object_set_new(json_object_get(r, "summary"), "cases", json_integer((json_int_t)json_array_size(cases)));
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS, "restored");
    json_object_set_new(c, "pass", json_false());
    json_object_set_new(r, "all_passed", json_false());
    cr_assert_eq(gate_judge(r, &tree, &v, msg, sizeof msg), GATE_OK);
    cr_assert_eq(v, GATE_NOT_COUNTED, "one lnmod_res case failed");
    cr_assert(strstr(msg, "lnmod_res "), "the failed case is named: %s", msg);
    json_t *full = json_deep_copy(r);
    json_t *compact = gate_summary(full);
    cr_assert_eq(judge(compact, GATE_OK), GATE_NOT_COUNTED, "its compact record");
    json_decref(compact);
    json_decref(full);
    json_object_set_new(c, "pass", json_true());
    json_object_set_new(r, "all_passed", json_true());
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS);
    const char *fields[] = {"site", "dtypes", "layout", "variant"};
    for (int f = 0; f < 4; f++) {
        json_t *saved = json_incref(json_object_get(c, fields[f]));
        json_object_set_new(c, fields[f], json_string("other"));
        cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "%s changed", fields[f]);
        json_object_set_new(c, fields[f], saved);
    }
    json_object_set_new(c, "inplace", json_boolean(!json_is_true(json_object_get(c, "inplace"))));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "inplace changed");
    json_object_set_new(c, "inplace", json_false());
    json_object_del(c, "dh");
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "a case without an identity");
    json_decref(c);
    json_decref(r);
}

/* The compact record keeps the fused op's cases as groups with "op" and "site" and shapes
 * [D, rows, inplace, dh]; it passes, and a changed shape does not. */
Test(gate_res, compact_record_holds_res_groups)
{
    json_t *full = full_record("h2-of-this-tree", 2, 1, "full", "clean");
    json_t *c = gate_summary(full);
    cr_assert_eq(judge(c, GATE_OK), GATE_PASS);
    size_t i;
    json_t *g, *res = NULL;
    json_array_foreach(json_object_get(c, "groups"), i, g) {
        const char *op = json_string_value(json_object_get(g, "op"));
        cr_assert_not_null(op);
        if (!res && !strcmp(op, "lnmod_res")) res = g;
    }
    cr_assert_not_null(res);
    cr_assert_not_null(json_object_get(res, "site"));
    json_t *sh = json_array_get(json_object_get(res, "shapes"), 0);
    cr_assert_eq(json_array_size(sh), 4);
    json_array_set_new(sh, 2, json_true());
    cr_assert_eq(judge(c, GATE_OK), GATE_NOT_COUNTED, "a shape made in-place");
    json_object_set_new(res, "op", json_string("lnmod_nope"));
    cr_assert_eq(judge(c, GATE_OK), GATE_NOT_COUNTED, "an unknown op");
    json_decref(c);
    json_decref(full);
}

/* The sanitizer runs must have covered the fused op's sanitizer grid and its cases. */
Test(gate_res, sanitizers_cover_the_res_grid)
{
    json_t *r = full_record("h2-of-this-tree", 2, 1, "full", "clean");
    json_t *mc = json_object_get(json_object_get(r, "sanitizer_runs"), "memcheck");
    json_object_set_new(mc, "res_grid", json_string("quick"));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "memcheck over the fused op's quick grid");
    json_object_del(mc, "res_grid");
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "memcheck without the fused op");
    json_object_set_new(mc, "res_grid", json_string("sanitizer"));
    cr_assert_eq(judge(r, GATE_OK), GATE_PASS);
    json_object_set_new(mc, "cases", json_integer(json_integer_value(json_object_get(mc, "cases")) - 1));
    cr_assert_eq(judge(r, GATE_OK), GATE_NOT_COUNTED, "one case fewer");
    json_decref(r);
}

/* A record as verify wrote them before the fused op was verified: lnmod's cases alone, no
 * "ops", sanitizer runs of lnmod's quick grid alone. */
static json_t *pre_res_record(const char *hash)
{
    json_t *r = full_record(hash, 2, 1, "full", "clean");
    json_t *cases = json_object_get(r, "cases");
    const size_t f = first_res(r);
    while (json_array_size(cases) > f) json_array_remove(cases, f);
    json_object_set_new(json_object_get(r, "summary"), "cases", json_integer((json_int_t)f));
    json_object_del(r, "ops");
    json_object_set_new(r, "sanitizer_runs", sanitizer_runs("quick", "sanitizer"));
    json_t *runs = json_object_get(r, "sanitizer_runs");
    verify_case_id *ids;
    int64_t n;
    cr_assert_eq(verify_grid_registry_cases("quick", &ids, &n), VERIFY_OK);
    free(ids);
    for (int t = 0; t < 4; t++) {
        json_t *d = json_object_get(runs, verify_sanitizer_tools[t]);
        json_object_del(d, "res_grid");
        json_object_set_new(d, "cases", json_integer((json_int_t)n));
    }
    return r;
}

/* Old records of other sources are judged as before (the catalog's "passed"); a record of
 * these sources must hold the fused op's cases, "ops" or not. */
Test(gate_res, old_records_judge_as_before)
{
    json_t *r = pre_res_record("h2-of-old-sources");
    cr_assert_eq(judge(r, GATE_OK), GATE_OTHER_SOURCES);
    int passes = 0;
    char msg[600];
    cr_assert_eq(gate_record_passes(r, &passes, msg, sizeof msg), GATE_OK);
    cr_assert_eq(passes, 1, "an old record passes the rule it was made under: %s", msg);
    json_t *c = gate_summary(r);
    cr_assert_eq(gate_record_passes(c, &passes, msg, sizeof msg), GATE_OK);
    cr_assert_eq(passes, 1, "its compact record too: %s", msg);
    json_decref(c);
    json_object_set_new(r, "ops", json_pack("[s]", "lnmod"));
    cr_assert_eq(gate_record_passes(r, &passes, msg, sizeof msg), GATE_OK);
    cr_assert_eq(passes, 0, "a record that lists its ops is judged by today's grid");
    json_decref(r);
    r = pre_res_record("h2-of-this-tree");
    gate_verdict v;
    cr_assert_eq(gate_judge(r, &tree, &v, msg, sizeof msg), GATE_OK);
    cr_assert_eq(v, GATE_NOT_COUNTED, "these sources need the fused op's cases");
    json_decref(r);
}

/* The shards' keys together are the whole grid's, the fused op's included, each once. */
Test(gate_res, shards_cover_the_grid_with_res)
{
    int nreg;
    const char *const *reg = verify_registry_variants(&nreg);
    char **all;
    int64_t nall;
    cr_assert_eq(verify_grid_keys("full", reg, nreg, &all, &nall), VERIFY_OK);
    int64_t nres = 0, nlnmod = 0;
    for (int64_t i = 0; i < nall; i++) nres += !strncmp(all[i], "lnmod_res ", 10);
    verify_res_set *rs;
    int nrs;
    cr_assert_eq(verify_res_grid_sets("full", &rs, &nrs), VERIFY_OK);
    free(rs);
    cr_assert_eq(nres, 2 * (int64_t)nrs * nres_variants());
    char **lk;
    cr_assert_eq(verify_grid_keys_ops("full", reg, nreg, VERIFY_OP_LNMOD, 0, 0, &lk, &nlnmod), VERIFY_OK);
    free(lk);
    cr_assert_eq(nlnmod + nres, nall);
    for (int nk = 2; nk <= 5; nk += 3) {
        int64_t total = 0, found = 0;
        for (int k = 1; k <= nk; k++) {
            char **keys;
            int64_t n;
            cr_assert_eq(verify_grid_keys_shard("full", reg, nreg, k, nk, &keys, &n), VERIFY_OK);
            int64_t r = 0;
            for (int64_t i = 0; i < n; i++) {
                r += !strncmp(keys[i], "lnmod_res ", 10);
                /* each key of the shard is one of the grid's */
                int64_t lo = 0, hi = nall;
                while (lo < hi) {
                    int64_t mid = (lo + hi) / 2;
                    if (strcmp(all[mid], keys[i]) < 0) lo = mid + 1;
                    else hi = mid;
                }
                found += lo < nall && !strcmp(all[lo], keys[i]);
            }
            cr_assert_gt(r, 0, "shard %d of %d has fused-op cases", k, nk);
            total += n;
            free(keys);
        }
        cr_assert_eq(total, nall, "%d shards", nk);
        cr_assert_eq(found, nall);
    }
    free(all);
}
